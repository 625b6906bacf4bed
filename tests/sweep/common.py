"""What the sweep modules share: the table of cases and their random inputs.

A case is a plain user function of float arguments (everything else -- axes, modes,
integer arguments -- is written into its body, as users write it) and the arguments to
differentiate it at. ``tests/test_autograd_sweep.py`` runs every case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Case:
    """One function of the sweep.

    Attributes:
        name: The test id (``module.function``).
        fun: The user function.
        args: Its arguments (every one a float or a float array, or a list of them).
        fwd: Whether forward mode is checked too.
        symmetric: Positions of arguments read as symmetric matrices (perturbed
            symmetrically, as autograd's tests do for ``eigh`` and ``cholesky``).
    """

    name: str
    fun: Callable[..., Any]
    args: tuple[Any, ...]
    fwd: bool = True
    symmetric: tuple[int, ...] = ()


class Table:
    """The cases of one module, with a seeded random source for their inputs."""

    def __init__(self, module: str, seed: int) -> None:
        self.module = module
        self.cases: list[Case] = []
        self._rng = np.random.default_rng(seed)

    def add(self, fun: Callable[..., Any], *args: Any, **options: Any) -> None:
        """Register ``fun`` at ``args`` (``options`` as in :class:`Case`)."""
        name = f"{self.module}.{fun.__name__.removeprefix('f_')}"
        if any(c.name == name for c in self.cases):
            name += f"_{sum(c.name.startswith(name) for c in self.cases)}"
        self.cases.append(Case(name, fun, args, **options))

    def r(self, *shape: int) -> Any:
        """Standard normal entries (a Python float for no shape)."""
        if not shape:
            return float(self._rng.standard_normal())
        return self._rng.standard_normal(shape)

    def u(self, lo: float, hi: float, *shape: int) -> Any:
        """Uniform entries in ``[lo, hi]`` (a Python float for no shape)."""
        if not shape:
            return float(self._rng.uniform(lo, hi))
        return self._rng.uniform(lo, hi, shape)

    def psd(self, n: int) -> np.ndarray:
        """A well-conditioned symmetric positive definite matrix."""
        m = self._rng.standard_normal((n, n))
        return m @ m.T + n * np.eye(n)
