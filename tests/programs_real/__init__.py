"""Realistic user programs (MLPs, RNNs, GPs, filters, ODEs, physics...) in the styles people
write for autograd/JAX, checked by ``tests/test_programs_real.py``.

Each theme module lists its programs in ``PROGRAMS``. A program names a function of the
module, its arguments, the positions to differentiate, and which derivative checks apply.
The autograd oracle is the same module source loaded a second time with its NumPy/SciPy
imports pointing at ``autograd.numpy``/``autograd.scipy`` (see :func:`autograd_twin`), so
the two oracles run the very code s2s_ad differentiates.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MODULES = (
    "mlp",
    "sequence",
    "bayes",
    "dynamics",
    "physics",
    "piecewise",
    "structures",
    "idioms",
    "packed",
    "functional",
    "autograd_examples",
    "from_scratch",
    "simulations",
)

# Checks a program can ask for:
#   grad      s2s_ad.grad against finite differences (and autograd when the twin runs)
#   vg        value_and_grad: value equals a plain call, gradient equals grad's
#   fwd       the tangent program (jvp) along a random direction of the wrt arguments
#   hvp       hvp(fun, pos)(*args, v) against differences of the gradient along v (pos: the
#             first wrt position)
#   gradgrad  grad(grad(fun)) for a function of one float
CHECKS = ("grad", "vg", "fwd", "hvp", "gradgrad")


@dataclass
class Program:
    """One program of the corpus.

    Attributes:
        name: The function's name in its module.
        args: Positional arguments of the call (fixed values, built with a seeded RandomState).
        wrt: Position(s) to differentiate.
        checks: The derivative checks that apply (see ``CHECKS``).
        autograd: Whether the autograd twin can run it (False for in-place array writes,
            which autograd does not support, or functions autograd has no gradient for).
        rtol: Relative tolerance of the comparisons.
        atol: Absolute tolerance of the comparisons.
        xfail: Check name -> one-line diagnosis of a known failure of s2s_ad.
        tag: Tells apart programs of the same function at different points.
        module: Set by :func:`collect`.
    """

    name: str
    args: tuple[Any, ...]
    wrt: int | tuple[int, ...] = 0
    checks: tuple[str, ...] = ("grad", "vg")
    autograd: bool = True
    rtol: float = 1e-5
    atol: float = 1e-7
    xfail: dict[str, str] = field(default_factory=dict)
    tag: str = ""
    module: str = ""

    @property
    def label(self) -> str:
        return f"{self.module}.{self.name}" + (f"[{self.tag}]" if self.tag else "")

    def fun(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(f"programs_real.{self.module}"), self.name)

    def twin(self) -> Callable[..., Any]:
        return getattr(autograd_twin(self.module), self.name)


def collect() -> list[Program]:
    """Every program of every theme module, with ``module`` filled in."""
    out = []
    for name in MODULES:
        mod = importlib.import_module(f"programs_real.{name}")
        for prog in mod.PROGRAMS:
            prog.module = name
            out.append(prog)
    return out


_IMPORTS = (
    (r"^import numpy as np$", "import autograd.numpy as np"),
    (r"^import scipy\.linalg$", "import autograd.scipy.linalg\nimport scipy"),
    (r"^import scipy\.stats$", "import autograd.scipy.stats\nimport scipy"),
    (r"^import scipy\.special$", "import autograd.scipy.special\nimport scipy"),
    (r"^from scipy\.special import ", "from autograd.scipy.special import "),
    (r"^from scipy\.stats import ", "from autograd.scipy.stats import "),
    (r"^from scipy\.linalg import ", "from autograd.scipy.linalg import "),
    (r"^from s2s_ad import ", "from autograd import "),
)

_TWINS: dict[str, types.ModuleType] = {}


def autograd_twin(module: str) -> types.ModuleType:
    """The theme module ``module`` executed again with autograd's NumPy and SciPy.

    ``import scipy.stats`` becomes ``import autograd.scipy.stats`` with the name ``scipy``
    bound to ``autograd.scipy``, so ``scipy.stats.norm.logpdf(...)`` resolves to autograd's.
    """
    if module in _TWINS:
        return _TWINS[module]
    path = Path(__file__).with_name(f"{module}.py")
    text = path.read_text()
    for pattern, repl in _IMPORTS:
        text = re.sub(pattern, repl, text, flags=re.MULTILINE)
    text = text.replace("\nimport scipy\n", "\nimport autograd.scipy as scipy\n")
    twin = types.ModuleType(f"programs_real_autograd_{module}")
    twin.__file__ = str(path)
    sys.modules[twin.__name__] = twin
    exec(compile(text, f"<autograd twin of {path.name}>", "exec"), twin.__dict__)
    _TWINS[module] = twin
    return twin
