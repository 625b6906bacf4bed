"""A long generated primal for the transform-time benchmark (``bench/run.py --overhead``).

``write_module(n_lines)`` writes a module holding ``long_loss(w, x, b)``: straight-line
NumPy arithmetic, ``if``/``else`` on data, ``for`` loops accumulating into a scalar and
calls of a small helper, in the proportions of a model written by hand. The text is
deterministic (a seeded generator), so every run transforms the same function.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import tempfile
from pathlib import Path
from types import ModuleType

_HEADER = """\
import numpy as np


def helper(u, v):
    return np.tanh(u) * v + u * u


def long_loss(w, x, b):
    h0 = x @ w + b
    s0 = np.sum(h0 * h0)
"""

_UNARY = ["np.tanh", "np.sin", "np.cos", "np.exp", "np.log1p", "np.sqrt"]


def _statements(n_lines: int, rng: random.Random) -> list[str]:
    lines: list[str] = []
    arrays = ["h0"]
    scalars = ["s0"]
    k = 0
    while len(lines) < n_lines:
        k += 1
        a, b = rng.choice(arrays), rng.choice(arrays)
        s = rng.choice(scalars)
        pick = rng.random()
        if pick < 0.45:
            f = rng.choice(_UNARY)
            arg = f"np.abs({a})" if f in ("np.log1p", "np.sqrt") else a
            lines.append(f"    h{k} = {f}({arg}) * {rng.uniform(0.5, 1.5):.3f} + {b} * 0.1")
            arrays.append(f"h{k}")
        elif pick < 0.65:
            lines.append(f"    s{k} = np.sum({a} * {b}) * 0.01 + {s} * 0.5")
            scalars.append(f"s{k}")
        elif pick < 0.75:
            lines.append(f"    h{k} = helper({a}, {s})")
            arrays.append(f"h{k}")
        elif pick < 0.88:
            lines += [
                f"    if {s} > 0.0:",
                f"        s{k} = {s} * 1.5 + np.mean({a})",
                "    else:",
                f"        s{k} = {s} - np.mean({a} * {a})",
            ]
            scalars.append(f"s{k}")
        else:
            lines += [
                f"    s{k} = 0.0",
                "    for i in range(3):",
                f"        s{k} = s{k} + np.sum({a} * (i + 1.0)) * 0.1",
            ]
            scalars.append(f"s{k}")
    total = " + ".join(scalars[-8:])
    lines.append(f"    return {total} + np.sum({arrays[-1]} * {arrays[-2]})")
    return lines


def source(n_lines: int = 300, seed: int = 0) -> str:
    """The module text, with a body of about ``n_lines`` lines."""
    body = _statements(n_lines, random.Random(seed))
    return _HEADER + "\n".join(body) + "\n"


def write_module(n_lines: int = 300, seed: int = 0, name: str = "bench_long") -> ModuleType:
    """Write the module to a temporary directory and import it (a fresh module each call)."""
    folder = Path(tempfile.mkdtemp(prefix="s2s_bench_"))
    path = folder / f"{name}.py"
    path.write_text(source(n_lines, seed))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
