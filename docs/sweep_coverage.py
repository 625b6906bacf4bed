"""docs/coverage.md: how the sweep of other libraries' test lists (``tests/sweep``) stands,
written by ``python docs/generate.py`` from the sweep's cases and its record of refusals
(``tests/sweep/status.py``). ``tests/test_autograd_sweep.py`` checks every case not listed
as refused against finite differences (both modes) and autograd or JAX, so the table says
what the tests prove."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).parent.parent / "tests"

INTRO = """# Coverage of other libraries' gradient tests

autograd's and JAX's own test suites list the NumPy and SciPy functions, and the argument
patterns, they differentiate. The sweep in `tests/sweep` writes each pattern as a plain user
function and `tests/test_autograd_sweep.py` runs it: reverse mode (`value_and_grad`, or
`vjp` with a random cotangent) against central finite differences and against autograd
(or, where autograd cannot run it, JAX in float64), and forward mode (`jvp`) against finite
differences. A case the library refuses is recorded with the reason; it is a strict
expected failure, so the table below changes (and this page must be regenerated) the day it
is supported. This page is written by `python docs/generate.py`; a test checks it is
current. [Supported functions](functions.md) lists every rule.

| source | cases | differentiated | refused (`TransformError`) | forward mode refused |
| --- | --- | --- | --- | --- |
"""

_SOURCES = (
    ("numpy_funcs", "autograd `test_numpy.py`, `test_systematic.py`: NumPy"),
    ("shape_funcs", "autograd: shapes, indexing, joining"),
    ("linalg_funcs", "autograd `test_linalg.py`, `test_scipy.py`: linear algebra"),
    ("scipy_funcs", "autograd `test_scipy.py`: scipy.special, scipy.stats"),
    ("extra_funcs", "autograd: scalars, named results, keyword forms"),
    ("jax_funcs", "JAX `lax_numpy_test.py`, `linalg_test.py`, special functions"),
    ("stats_funcs", "scipy.stats likelihoods and priors (JAX `scipy_stats_test.py`)"),
    ("keyword_funcs", "keyword forms (`axis=`, `keepdims=`, `ord=`) and batch dimensions"),
    ("open_funcs", "user code: running extrema, `statistics`, `copy`, fits and Toeplitz maps"),
)


def render() -> str:
    """The page."""
    sys.path.insert(0, str(TESTS))
    import importlib

    from sweep.status import FWD_REFUSED, REFUSED

    rows = []
    totals = [0, 0, 0, 0]
    for module, label in _SOURCES:
        cases = importlib.import_module(f"sweep.{module}").T.cases
        refused = sum(c.name in REFUSED for c in cases)
        fwd = sum(c.name in FWD_REFUSED for c in cases)
        counts = [len(cases), len(cases) - refused, refused, fwd]
        totals = [a + b for a, b in zip(totals, counts)]
        rows.append(f"| {label} | " + " | ".join(map(str, counts)) + " |\n")
    rows.append("| **all** | " + " | ".join(f"**{n}**" for n in totals) + " |\n")
    parts = [INTRO, *rows, "\n## Refused cases\n\n| case | why |\n| --- | --- |\n"]
    parts += [f"| `{name}` | {why} |\n" for name, why in sorted(REFUSED.items())]
    parts.append("\n## Forward mode refused\n\n| case | why |\n| --- | --- |\n")
    parts += [f"| `{name}` | {why} |\n" for name, why in sorted(FWD_REFUSED.items())]
    return "".join(parts)
