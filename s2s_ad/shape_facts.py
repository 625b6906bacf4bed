"""Shape facts and shape classes: what is known about a value for every call of a class.

A *shape class* describes the arguments of a call without their sizes: each NumPy array
by its dtype and its shape with every dimension replaced by a symbol, dimensions of equal
size sharing one symbol across all arguments (sizes 0 and 1 stay literal: they decide
broadcasting). Shapes ``(128, 784)`` and ``(784, 256)`` give ``(a, b)`` and ``(b, c)``;
every batch size gives the same class unless it happens to equal another size. Inside a
class, distinct symbols stand for distinct sizes of at least 2, so two symbolic shapes are
equal for every call of the class exactly when they are equal as tuples.

A value is described by an :class:`Arr` (an ``ndarray`` of known dtype and symbolic
shape), a :class:`Scalar` (a Python or NumPy scalar of known type; an ``int`` may carry a
size), a :class:`Tup` (``x.shape``) or nothing (unknown). :func:`probe` finds the facts
of an operation's result from NumPy itself: the operation runs twice on small dummy
arguments of the right types and dtypes, the symbols bound to different sizes in each
run; a result dimension that equals a symbol's size in both runs is that symbol. It is
only asked about operations whose result type, dtype and shape depend on the arguments'
types, dtypes and shapes alone (``shape_analysis`` keeps the list).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Dim = int | str | None  # 0 or 1 (literal), a symbol, or unknown


@dataclass(frozen=True)
class Arr:
    """A NumPy array (exactly ``np.ndarray``) of this dtype and symbolic shape."""

    shape: tuple[Dim, ...]
    dtype: np.dtype

    @property
    def known(self) -> bool:
        """Whether every dimension is known."""
        return None not in self.shape


@dataclass(frozen=True)
class Scalar:
    """A Python or NumPy scalar of exactly this type (``size``: an int's value, when it is
    a dimension)."""

    type: type
    size: Dim = None


@dataclass(frozen=True)
class Tup:
    """A tuple of values with these facts (``x.shape``)."""

    items: tuple[Any, ...]


Fact = Arr | Scalar | Tup | None  # None: unknown
#: ``Scalar(FLOAT)``: a Python ``float`` or an ``np.float64`` (a loop variable that starts
#: as ``0.0`` and becomes ``s * np.cos(x[i])``): a double-precision scalar either way.
FLOAT = np.floating
_DOUBLES = (float, np.float64, FLOAT)
BOTTOM = Scalar(type(...))  # no value yet (a loop's first pass): joins to the other side


def join(a: Fact, b: Fact) -> Fact:
    """The facts true of both ``a`` and ``b``."""
    if a is BOTTOM:
        return b
    if b is BOTTOM or a == b:
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar) and a.type is b.type:
        return Scalar(a.type)
    if isinstance(a, Scalar) and isinstance(b, Scalar) and {a.type, b.type} <= set(_DOUBLES):
        return Scalar(FLOAT)
    if isinstance(a, Arr) and isinstance(b, Arr) and a.dtype == b.dtype:
        if len(a.shape) == len(b.shape):
            return Arr(tuple(x if x == y else None for x, y in zip(a.shape, b.shape)), a.dtype)
    return None


# --- shape classes ----------------------------------------------------------------------

_SYMBOLS = "abcdefghijklmnopqrstuvwxyz"


def shape_key(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The shape class of a call's arguments: per argument its type, or for an array
    ``(dtype, symbolic shape)``."""
    sizes: dict[int, str] = {}
    out: list[Any] = []
    for v in values:
        if type(v) is np.ndarray:
            dims = []
            for n in v.shape:
                if n < 2:
                    dims.append(n)
                else:
                    sym = sizes.get(n)
                    if sym is None:
                        k = len(sizes)
                        sym = sizes[n] = _SYMBOLS[k] if k < 26 else f"d{k}"
                    dims.append(sym)
            out.append((v.dtype, tuple(dims)))
        else:
            out.append(type(v))
    return tuple(out)


SCALAR_TYPES = (float, int, bool, np.generic)


def param_facts(params: list[str], key: tuple[Any, ...]) -> dict[str, Fact]:
    """Facts of the parameters for a shape class (``key`` from :func:`shape_key`)."""
    out: dict[str, Fact] = {}
    for name, entry in zip(params, key):
        if isinstance(entry, tuple):
            out[name] = Arr(entry[1], entry[0])
        elif isinstance(entry, type) and issubclass(entry, SCALAR_TYPES):
            out[name] = Scalar(entry)
    return out


# --- facts of operations: NumPy on dummies -------------------------------------------------

_PRIMES = ((2, 3, 5, 7, 11, 13, 17, 19, 23, 29), (31, 37, 41, 43, 47, 53, 59, 61, 67, 71))
_UNKNOWN_SIZE = (79, 83)  # an unknown dimension (never mapped back to a symbol)


class _Probe:
    """Dummy values for one run: symbols bound to the sizes of run ``k``."""

    def __init__(self, k: int, symbols: list[str]) -> None:
        self.k = k
        self.size = {s: _PRIMES[k][i] for i, s in enumerate(symbols)}

    def dim(self, d: Dim) -> int:
        if d is None:
            return _UNKNOWN_SIZE[self.k]
        return d if isinstance(d, int) else self.size[d]

    def dummy(self, fact: Fact, const: Any) -> Any:
        if const is not NO_CONST:
            return const
        if isinstance(fact, Arr):
            shape = tuple(self.dim(d) for d in fact.shape)
            if fact.dtype.kind not in "fc":
                return np.ones(shape, dtype=fact.dtype)
            out = np.full(shape, 0.25, dtype=fact.dtype)
            if len(shape) >= 2 and shape[-1] == shape[-2]:
                out += np.eye(shape[-1], dtype=fact.dtype)  # square: invertible
            return out
        if isinstance(fact, Tup):
            return tuple(self.dummy(f, NO_CONST) for f in fact.items)
        assert isinstance(fact, Scalar)
        if fact.type is type(None):
            return None
        if fact.type is slice:
            return slice(None)
        if fact.type is int and fact.size is not None:
            return self.dim(fact.size)
        if fact.type is bool or fact.type is np.bool_:
            return fact.type(self.k == 0)
        if fact.type is int:
            return self.k  # 0 / 1: an index
        return fact.type(0.5 / (self.k + 1))  # inside every elementary function's domain


NO_CONST = object()


def _symbols(facts: list[Fact]) -> list[str]:
    out: list[str] = []

    def walk(f: Fact) -> None:
        if isinstance(f, Arr):
            out.extend(d for d in f.shape if isinstance(d, str) and d not in out)
        elif isinstance(f, Tup):
            for item in f.items:
                walk(item)
        elif isinstance(f, Scalar) and isinstance(f.size, str) and f.size not in out:
            out.append(f.size)

    for f in facts:
        walk(f)
    return out


def _fact_of(r1: Any, r2: Any, p1: _Probe, p2: _Probe) -> Fact:
    """Facts of a result, from its values in the two runs."""
    t = type(r1)
    if t is not type(r2):
        return None
    if t is np.ndarray:
        if r1.dtype != r2.dtype or r1.ndim != r2.ndim:
            return None
        return Arr(tuple(_dim(a, b, p1, p2) for a, b in zip(r1.shape, r2.shape)), r1.dtype)
    if t is tuple:
        if len(r1) != len(r2):
            return None
        return Tup(tuple(_fact_of(a, b, p1, p2) for a, b in zip(r1, r2)))
    if t is int:
        return Scalar(int, _dim(r1, r2, p1, p2))
    if issubclass(t, SCALAR_TYPES) or r1 is None:
        return Scalar(t)
    return None


def _dim(a: int, b: int, p1: _Probe, p2: _Probe) -> Dim:
    if a == b and a in (0, 1):
        return a
    for sym, size in p1.size.items():
        if size == a and p2.size[sym] == b:
            return sym
    return None


_CACHE: dict[Any, Fact] = {}


def probe(fn: Callable[..., Any], args: list[tuple[Fact, Any]], kwargs: dict[str, Any]) -> Fact:
    """Facts of ``fn(*args, **kwargs)``: ``args`` are (fact, constant) pairs (the constant,
    when the argument is a literal, else ``NO_CONST``); ``kwargs`` holds constants."""
    facts = [f for f, c in args if c is NO_CONST]  # a literal needs no facts
    if any(f is None for f in facts):
        return None
    if any(f is BOTTOM for f in facts):
        return BOTTOM
    if Scalar(FLOAT) in facts:  # what holds for a float and for an np.float64
        out = BOTTOM
        for kind in (float, np.float64):
            one = [(Scalar(kind) if f == Scalar(FLOAT) else f, c) for f, c in args]
            out = join(out, probe(fn, one, kwargs))
        return out
    try:
        key = (fn, tuple(args), tuple(sorted(kwargs.items())))
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    symbols = _symbols(facts)
    if len(symbols) > len(_PRIMES[0]):
        return None
    runs = [_Probe(0, symbols), _Probe(1, symbols)]
    results = []
    try:
        with np.errstate(all="ignore"):
            for p in runs:
                dummies = [p.dummy(f, c) for f, c in args]
                results.append(fn(*dummies, **kwargs))
    except Exception:  # noqa: BLE001 (an error for these types and shapes: unknown)
        out: Fact = None
    else:
        out = _fact_of(results[0], results[1], *runs)
    if key is not None:
        if len(_CACHE) > 20000:  # a long session with many classes: start again
            _CACHE.clear()
        _CACHE[key] = out
    return out
