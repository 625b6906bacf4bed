"""A corpus of plain Python + NumPy functions, each described as data by a :class:`Case`.

Every theme module (``scalars``, ``vectors`` ...) defines ordinary functions and a
``CASES`` list saying how to call them: which argument to differentiate (``wrt``) and at
which points. A point is either a tuple of fixed arguments or a factory
``rng -> tuple`` drawn from a generator seeded by the case name and the point label, so
every run sees the same numbers. ``tests/test_corpus.py`` checks each case at each point
against central finite differences.

Argument factories below draw float64 values inside each function's domain.
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

Factory = Callable[[np.random.Generator], Any]
Point = tuple[Any, ...] | Callable[[np.random.Generator], tuple[Any, ...]]

MODULES = (
    "scalars",
    "vectors",
    "reductions",
    "matrices",
    "shapes",
    "calls",
    "controlflow",
    "mutation",
    "hygiene",
    "extras",
)


@dataclass(frozen=True)
class Case:
    """One corpus function and how to check it.

    Attributes:
        fun: The function handed to ``s2s_ad.grad``.
        points: Label -> fixed argument tuple, or factory ``rng -> argument tuple``.
        wrt: Passed to ``s2s_ad.grad`` unchanged (int, str or tuple of them).
        rtol, atol: Tolerances of the comparison with finite differences.
        name: Display name (defaults to ``fun.__name__``; needed for lambdas).
        expected: Analytic gradient ``expected(*args)`` used instead of finite
            differences, for functions whose true derivative is not the wanted one
            (``stop_gradient``).
        module: Short module name, filled in by :func:`collect`.
    """

    fun: Callable[..., Any]
    points: Mapping[str, Point]
    wrt: Any = 0
    rtol: float = 1e-5
    atol: float = 1e-7
    name: str | None = None
    expected: Callable[..., Any] | None = None
    module: str = ""

    @property
    def label(self) -> str:
        return f"{self.module}.{self.name or self.fun.__name__}"

    def args(self, point: str) -> tuple[Any, ...]:
        """Fresh arguments for one point (a deep copy: tests may compare before/after)."""
        spec = self.points[point]
        if callable(spec):
            seed = zlib.crc32(f"{self.label}[{point}]".encode())
            return tuple(spec(np.random.default_rng(seed)))
        return copy.deepcopy(tuple(spec))


def case(
    fun: Callable[..., Any],
    *factories: Factory,
    n: int = 2,
    draw: Callable[[np.random.Generator], tuple[Any, ...]] | None = None,
    points: Mapping[str, Point] | None = None,
    **options: Any,
) -> Case:
    """A case whose arguments are drawn by ``factories`` (one per argument) at ``n`` points.

    ``draw`` instead draws all arguments at once (when they depend on each other);
    ``points`` adds fixed points (label -> argument tuple) to the random ones.
    """
    table: dict[str, Point] = {}
    if factories or draw:
        for k in range(n):
            table[f"r{k}"] = draw or _joint(factories)
    table.update(points or {})
    return Case(fun, table, **options)


def _joint(factories: tuple[Factory, ...]) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    return lambda rng: tuple(f(rng) for f in factories)


# --- argument factories ---------------------------------------------------------------------


def fl(lo: float, hi: float) -> Factory:
    """A Python float in ``[lo, hi)``."""
    return lambda rng: float(rng.uniform(lo, hi))


def uni(lo: float, hi: float, *shape: int, dtype: Any = np.float64) -> Factory:
    """An array of the given shape, uniform in ``[lo, hi)``."""
    return lambda rng: rng.uniform(lo, hi, size=shape).astype(dtype)


def normal(*shape: int, scale: float = 1.0, dtype: Any = np.float64) -> Factory:
    """A standard normal array (times ``scale``)."""
    return lambda rng: (scale * rng.standard_normal(shape)).astype(dtype)


def away(lo: float, hi: float, *shape: int) -> Factory:
    """Random sign times a magnitude in ``[lo, hi)``: keeps clear of the kink at zero."""

    def draw(rng: np.random.Generator) -> Any:
        mag = rng.uniform(lo, hi, size=shape)
        sign = rng.choice([-1.0, 1.0], size=shape)
        out = sign * mag
        return float(out) if not shape else out

    return draw


def wellcond(n: int, *, batch: tuple[int, ...] = ()) -> Factory:
    """A diagonally dominant ``n x n`` matrix: condition number of a few units."""

    def draw(rng: np.random.Generator) -> Any:
        return 0.4 * rng.standard_normal(batch + (n, n)) + 2.0 * np.eye(n)

    return draw


def spd(n: int) -> Factory:
    """A symmetric positive definite matrix with eigenvalues roughly in ``[1, 3]``."""

    def draw(rng: np.random.Generator) -> Any:
        a = 0.3 * rng.standard_normal((n, n))
        return a @ a.T + np.eye(n)

    return draw


def const(value: Any) -> Factory:
    """The same (non-differentiated) value at every point."""
    return lambda rng: copy.deepcopy(value)


def pair_apart(*shape: int, gap: float = 0.3) -> Callable[[np.random.Generator], tuple[Any, Any]]:
    """Two arrays that differ by at least ``gap`` elementwise (for max/min/where kinks)."""

    def draw(rng: np.random.Generator) -> tuple[Any, Any]:
        x = rng.standard_normal(shape)
        y = x + away(gap, gap + 1.0, *shape)(rng)
        return x, y

    return draw


# --- collection -------------------------------------------------------------------------------


def collect() -> list[Case]:
    """Every case of every theme module, with ``module`` filled in."""
    import dataclasses
    import importlib

    out = []
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        for c in mod.CASES:
            out.append(dataclasses.replace(c, module=name))
    return out


def resized(args: tuple[Any, ...], rng: np.random.Generator) -> tuple[Any, ...]:
    """Arguments of the same shape class as ``args`` (``s2s_ad.shape_facts.shape_key``)
    with other sizes: each symbolic dimension gets a new size of at least 2, distinct
    from the others; the values are drawn from the original ones, so they stay in the
    function's domain."""
    from s2s_ad.shape_facts import shape_key

    key = shape_key(args)
    symbols = sorted({d for e in key if isinstance(e, tuple) for d in e[1] if isinstance(d, str)})
    sizes = rng.choice(np.arange(2, 9), size=len(symbols), replace=False)
    new = dict(zip(symbols, (int(s) for s in sizes)))
    out = []
    for value, entry in zip(args, key):
        if not isinstance(entry, tuple):
            out.append(copy.deepcopy(value))
            continue
        shape = tuple(new[d] if isinstance(d, str) else d for d in entry[1])
        pool = value.ravel() if value.size else np.zeros(1, dtype=value.dtype)
        out.append(rng.choice(pool, size=shape).astype(value.dtype))
    return tuple(out)
