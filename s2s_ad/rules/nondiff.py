"""Callables whose output carries no gradient.

Integer and boolean results (rounding, comparisons, index searches, casts to ``int``),
shape queries, random draws and side effects (``print``). A differentiated value
passed to one of these gives zeros through ``grad`` and ``None`` through the tape.
(``len`` and ``stop_gradient`` are registered by :mod:`s2s_ad.custom`; NumPy
constructors by :mod:`.arrays`.) Only callables whose result cannot depend smoothly on
a float argument belong here: ``np.random.normal(loc, scale)`` or ``np.logspace`` stay
unregistered, so a differentiated argument is refused instead of silently cut. Random
draws are in :mod:`.numpy_random` (loaded once ``numpy.random`` is imported).
"""

from __future__ import annotations

import builtins
import math
from types import ModuleType
from typing import Any

import numpy as np

from .registry import nondiff


def _names(module: ModuleType, names: str) -> list[Any]:
    """The attributes ``names`` (space separated) of ``module``, each object once."""
    out: list[Any] = []
    for name in names.split():
        func = getattr(module, name)
        if all(func is not seen for seen in out):  # drop aliases: np.intp is np.int64
            out.append(func)
    return out


rounding = nondiff(
    "rounding",
    _names(np, "round around floor ceil trunc rint fix sign heaviside")
    + _names(math, "floor ceil trunc")
    + [builtins.round],
)
# The argument of a real number is 0 or pi (complex values are refused by every transform).
angle = nondiff("np.angle of real values", _names(np, "angle"))
integer_casts = nondiff(
    "integer casts",
    _names(np, "int8 int16 int32 int64 intp uint8 uint16 uint32 uint64 bool_")
    + [builtins.int, builtins.bool],
)
comparisons = nondiff(
    "comparisons",
    _names(np, "greater greater_equal less less_equal equal not_equal isclose allclose")
    + _names(np, "array_equal isnan isinf isfinite isreal signbit")
    + _names(math, "isnan isinf isfinite isclose"),
)
logical = nondiff(
    "logical", _names(np, "logical_and logical_or logical_not logical_xor any all count_nonzero")
)
indices = nondiff(
    "index searches",
    _names(np, "argmax argmin argsort argwhere nonzero flatnonzero searchsorted digitize")
    + _names(np, "unravel_index ravel_multi_index"),
)
shapes = nondiff(
    "shape queries",
    _names(np, "shape ndim size iinfo finfo dtype result_type issubdtype broadcast_shapes"),
)
python = nondiff(
    "Python builtins without gradient",
    _names(builtins, "range isinstance print type id hash callable hasattr str repr")
    + _names(math, "factorial comb gcd"),
)
