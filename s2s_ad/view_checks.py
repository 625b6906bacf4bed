"""The run-time test behind in-place writes through views (see :mod:`norm_views`).

``v = h[1:]; v *= 1.5`` is lowered as a write of ``h`` when ``v`` is, when the write runs,
exactly the array that the view's steps make of ``h`` (same memory, shape, strides and
dtype): a basic index, ``.T``, ``.transpose(...)``, a ``reshape`` or ``ravel`` that
NumPy made as a view. Anything else (``reshape`` that copied, an integer index that
gave a scalar, a list's slice, a name bound since) keeps the statement as written.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def view_of(v: Any, base: Any, steps: tuple[tuple[Any, ...], ...]) -> bool:
    """Whether ``v`` is the view that ``steps`` make of ``base`` (each step is
    ``("[]", index)``, ``("T",)``, ``("transpose", axes)``, ``("reshape", shape)`` or
    ``("ravel",)``); ``False`` when the steps fail or give a copy."""
    if not isinstance(v, np.ndarray) or not isinstance(base, np.ndarray):
        return False
    made: Any = base
    try:
        for step in steps:
            made = _apply(made, step)
    except (IndexError, TypeError, ValueError):
        return False
    return (
        isinstance(made, np.ndarray)
        and made.shape == v.shape
        and made.strides == v.strides
        and made.dtype == v.dtype
        and made.__array_interface__["data"][0] == v.__array_interface__["data"][0]
        and (made.size == 0 or np.shares_memory(made, base))
    )


def _apply(a: np.ndarray, step: tuple[Any, ...]) -> Any:
    kind = step[0]
    if kind == "[]":
        return a[step[1]]
    if kind == "T":
        return a.T
    if kind == "transpose":
        return a.transpose(step[1])
    if kind == "reshape":
        return a.reshape(step[1])
    if kind == "ravel":
        return a.ravel()
    raise ValueError(f"unknown view step {kind!r}")
