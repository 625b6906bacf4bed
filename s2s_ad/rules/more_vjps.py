"""Helpers of the rules in :mod:`.more` (``np.correlate``, ``np.block``, ``np.choose``,
``np.diagflat``, ``np.ediff1d``, ``np.broadcast_arrays``, reshapes in Fortran or memory
order), reached as ``_ad.<name>``.

Plain NumPy, so that the transformer can differentiate them from their source for higher
derivatives (``FROM_SOURCE``), but for ``block_vjp`` (a rule in :mod:`.more`: it is linear
in the cotangent); ``read_order`` computes an order string only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..runtime import is_zero, unbroadcast, zeros_like
from .registry import nondiff
from .shape_vjps import convolve_vjp

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "correlate_vjp_a",
    "correlate_vjp_v",
    "block_vjp",
    "choose_vjp",
    "diagflat_vjp",
    "ediff1d_vjp",
    "ediff1d_jvp",
    "broadcast_arrays_vjp",
    "broadcast_arrays_jvp",
    "read_order",
    "reorder_vjp",
    "reorder_jvp",
]
FROM_SOURCE = (
    "correlate_vjp_a",
    "correlate_vjp_v",
    "choose_vjp",
    "diagflat_vjp",
    "ediff1d_vjp",
    "ediff1d_jvp",
    "broadcast_arrays_vjp",
    "broadcast_arrays_jvp",
    "reorder_vjp",
    "reorder_jvp",
)


# --- np.correlate: a convolution with v reversed --------------------------------------------


def correlate_vjp_a(g: Any, a: Any, v: Any, mode: str) -> Any:
    """VJP of ``np.correlate(a, v, mode)`` in ``a``: ``correlate(a, v) ==
    convolve(a, v[::-1])`` for real inputs, in every mode and length order."""
    return convolve_vjp(g, a, np.asarray(v)[::-1], mode)


def correlate_vjp_v(g: Any, a: Any, v: Any, mode: str) -> Any:
    """VJP of ``np.correlate(a, v, mode)`` in ``v``."""
    if is_zero(g):
        return np.zeros(np.shape(v))
    return convolve_vjp(g, np.asarray(v)[::-1], a, mode)[::-1]


# --- np.block ----------------------------------------------------------------------------------


def _leaves(arrays: Any, out: list[Any]) -> None:
    if isinstance(arrays, list):
        for item in arrays:
            _leaves(item, out)
    else:
        out.append(arrays)


def _numbered(arrays: Any, start: list[int]) -> Any:
    """The nesting of ``arrays`` with each leaf replaced by the positions of its entries."""
    if isinstance(arrays, list):
        return [_numbered(item, start) for item in arrays]
    n = int(np.size(arrays))
    ids = np.arange(start[0], start[0] + n).reshape(np.shape(arrays))
    start[0] = start[0] + n
    return ids


def _rebuild(arrays: Any, parts: list[Any], at: list[int]) -> Any:
    if isinstance(arrays, list):
        return [_rebuild(item, parts, at) for item in arrays]
    part = parts[at[0]]
    at[0] = at[0] + 1
    return part


def block_vjp(g: Any, arrays: Any) -> Any:
    """VJP of ``np.block(arrays)``: every entry of the output comes from one entry of one
    block; the blocks, numbered, are assembled the same way to find which."""
    if is_zero(g):
        return zeros_like(arrays)
    where = np.ravel(np.block(_numbered(arrays, [0])))
    flat = np.zeros(where.size)
    flat[where] = np.ravel(g)
    leaves: list[Any] = []
    _leaves(arrays, leaves)
    parts, start = [], 0
    for leaf in leaves:
        n = int(np.size(leaf))
        parts.append(np.reshape(flat[start : start + n], np.shape(leaf)))
        start = start + n
    return _rebuild(arrays, parts, [0])


# --- np.choose, np.diagflat, np.ediff1d, np.broadcast_arrays -----------------------------------


def choose_vjp(g: Any, a: Any, choices: Any) -> Any:
    """VJP of ``np.choose(a, choices)`` in the choices: ``g`` where ``a`` picks choice
    ``i``, summed back to the shape of that choice (``a`` and the choices broadcast)."""
    if is_zero(g):
        return zeros_like(choices)
    parts = []
    for i in range(len(choices)):
        parts.append(unbroadcast(np.where(np.asarray(a) == i, g, 0.0), choices[i]))
    return tuple(parts) if isinstance(choices, tuple) else parts


def diagflat_vjp(g: Any, v: Any, k: int) -> Any:
    """VJP of ``np.diagflat(v, k)``: diagonal ``k`` of ``g``, shaped like ``v``."""
    if is_zero(g):
        return np.zeros(np.shape(v))
    return np.reshape(np.diagonal(g, k), np.shape(v))


def _ediff1d_parts(to_end: Any, to_begin: Any) -> tuple[int, int]:
    head = 0 if to_begin is None else int(np.size(to_begin))
    tail = 0 if to_end is None else int(np.size(to_end))
    return head, tail


def ediff1d_vjp(g: Any, ary: Any, to_end: Any, to_begin: Any, which: str) -> Any:
    """VJP of ``np.ediff1d(ary, to_end, to_begin)`` in ``which`` (``'ary'``, ``'to_end'``
    or ``'to_begin'``): the output is ``to_begin``, the differences of the flattened
    ``ary``, then ``to_end``."""
    if is_zero(g):
        like = to_begin if which == "to_begin" else to_end if which == "to_end" else ary
        return np.zeros(np.shape(like))
    head, tail = _ediff1d_parts(to_end, to_begin)
    if which == "to_begin":
        return np.reshape(np.asarray(g)[:head], np.shape(to_begin))
    n = np.size(g)
    if which == "to_end":
        return np.reshape(np.asarray(g)[n - tail :], np.shape(to_end))
    mid = np.asarray(g)[head : n - tail]
    grad = np.concatenate([[0.0], mid]) - np.concatenate([mid, [0.0]])
    return np.reshape(grad, np.shape(ary))


def ediff1d_jvp(t: Any, ary: Any, to_end: Any, to_begin: Any, which: str) -> Any:
    """The output tangent of ``np.ediff1d`` for a tangent ``t`` of ``which``."""
    head, tail = _ediff1d_parts(to_end, to_begin)
    n = int(np.size(ary)) - 1 if np.size(ary) else 0
    begin, mid, end = np.zeros(head), np.zeros(n), np.zeros(tail)
    if which == "to_begin":
        begin = np.ravel(t)
    elif which == "to_end":
        end = np.ravel(t)
    else:
        mid = np.diff(np.ravel(t))
    return np.concatenate([begin, mid, end])


def broadcast_arrays_vjp(g: Any, args: Any) -> tuple[Any, ...]:
    """VJP of ``np.broadcast_arrays(*args)``: each cotangent summed back to its input."""
    parts = []
    for i in range(len(args)):
        gi = 0.0 if is_zero(g) else g[i]
        parts.append(np.zeros(np.shape(args[i])) if is_zero(gi) else unbroadcast(gi, args[i]))
    return tuple(parts)


def broadcast_arrays_jvp(t: Any, args: Any, ans: Any) -> Any:
    """The output tangents of ``np.broadcast_arrays(*args)`` (zeros where ``t`` is)."""
    parts = []
    for i in range(len(args)):
        ti = 0.0 if is_zero(t) else t[i]
        parts.append(np.broadcast_to(np.zeros(()) if is_zero(ti) else ti, np.shape(ans[i])))
    return tuple(parts) if isinstance(ans, tuple) else parts


# --- reshapes in Fortran and memory order ------------------------------------------------------


def read_order(a: Any, order: Any) -> str:
    """The order a reshape reads ``a`` in: ``'A'`` is ``'F'`` for a Fortran-contiguous
    array and ``'C'`` otherwise; ``'K'`` (``ravel`` only) is the memory order."""
    if order is None or order == "C":
        return "C"
    if order == "A":
        return "F" if np.isfortran(np.asarray(a)) else "C"
    return str(order)


def _positions(a: Any, order: str) -> Any:
    """For each entry of ``np.ravel(a, order)``, its C-order position in ``a``."""
    ids = np.empty_like(np.asarray(a), dtype=np.intp)
    ids[...] = np.arange(ids.size).reshape(ids.shape)
    return np.ravel(ids, order=order)


def reorder_vjp(g: Any, a: Any, order: Any) -> Any:
    """VJP of ``np.reshape(a, shape, order)`` (``ravel``, ``flatten``) in any order."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    how = read_order(a, order)
    flat = np.zeros(int(np.size(a)))
    flat[_positions(a, how)] = np.ravel(g, order="F" if how == "F" else "C")
    return np.reshape(flat, np.shape(a))


def reorder_jvp(t: Any, a: Any, shape: Any, order: Any) -> Any:
    """The output tangent of ``np.reshape(a, shape, order)`` for a tangent ``t`` of ``a``."""
    how = read_order(a, order)
    flat = np.ravel(np.broadcast_to(t, np.shape(a)))[_positions(a, how)]
    return np.reshape(flat, shape, order="F" if how == "F" else "C")


nondiff("order of a reshape", [read_order])
