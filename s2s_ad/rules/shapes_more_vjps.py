"""Helpers of the rules in :mod:`.shapes_more` (``np.cross``, ``np.rollaxis``,
``np.partition``), reached as ``_ad.<name>``.

Plain NumPy, so that the transformer can differentiate them from their source for higher
derivatives (``FROM_SOURCE``); ``partition_index`` computes indices only (no gradient).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import is_zero, unbroadcast
from .registry import nondiff

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "cross_vjp_a",
    "cross_vjp_b",
    "rollaxis_vjp",
    "partition_index",
    "sliding_window_view_vjp",
    "sliding_window_view_jvp",
]
FROM_SOURCE = (
    "cross_vjp_a",
    "cross_vjp_b",
    "rollaxis_vjp",
    "sliding_window_view_vjp",
    "sliding_window_view_jvp",
)


def _vectors3(x: Any, ax: int) -> Any:
    """``x`` with its vector axis last and two-component vectors given a zero third one."""
    moved = np.moveaxis(np.asarray(x), ax, -1)
    if np.shape(moved)[-1] == 3:
        return moved
    return np.concatenate([moved, np.zeros(np.shape(moved)[:-1] + (1,))], -1)


def _cross_cotangent(g: Any, a: Any, b: Any, axisa: int, axisb: int, axisc: int) -> Any:
    """``g`` as 3-vectors along the last axis: the third component alone when both inputs
    are 2-vectors (``np.cross`` then returns that component only)."""
    if np.shape(a)[axisa] == 2 and np.shape(b)[axisb] == 2:
        zero = np.zeros(np.shape(g) + (1,))
        return np.concatenate([zero, zero, np.expand_dims(g, -1)], -1)
    return np.moveaxis(g, axisc, -1)


def _cross_part(d3: Any, x: Any, ax: int) -> Any:
    """A 3-vector cotangent brought back to ``x``: its components, its axis, its shape."""
    moved = np.moveaxis(np.asarray(x), ax, -1)
    part = d3[..., : np.shape(moved)[-1]]
    return np.moveaxis(unbroadcast(part, moved), -1, ax)


def cross_vjp_a(
    g: Any, a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None
) -> Any:
    """VJP of ``np.cross(a, b, axisa, axisb, axisc, axis)`` in ``a``: ``b x g`` (on
    3-vectors; 2-vectors are the first two components), summed over broadcast axes."""
    if axis is not None:
        axisa, axisb, axisc = axis, axis, axis
    if is_zero(g):
        return np.zeros(np.shape(a))
    g3 = _cross_cotangent(g, a, b, axisa, axisb, axisc)
    return _cross_part(np.cross(_vectors3(b, axisb), g3), a, axisa)


def cross_vjp_b(
    g: Any, a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None
) -> Any:
    """VJP of ``np.cross(a, b, ...)`` in ``b``: ``g x a``, as :func:`cross_vjp_a`."""
    if axis is not None:
        axisa, axisb, axisc = axis, axis, axis
    if is_zero(g):
        return np.zeros(np.shape(b))
    g3 = _cross_cotangent(g, a, b, axisa, axisb, axisc)
    return _cross_part(np.cross(g3, _vectors3(a, axisa)), b, axisb)


def rollaxis_vjp(g: Any, a: Any, axis: int, start: int) -> Any:
    """VJP of ``np.rollaxis(a, axis, start)``: the axis moved back from where it landed."""
    nd = np.ndim(a)
    axis = axis % nd
    if start < 0:
        start = start + nd
    dest = start - 1 if start > axis else start
    if is_zero(g):
        return np.zeros(np.shape(a))
    return np.moveaxis(g, dest, axis)


def _window_axes(nd: int, window_shape: Any, axis: Any) -> tuple[Any, Any]:
    """The window's extents and the axes of an ``nd``-dimensional array they slide along
    (as NumPy pairs them)."""
    one = (int, np.integer)
    window = (window_shape,) if isinstance(window_shape, one) else tuple(window_shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(a % nd for a in ((axis,) if isinstance(axis, one) else axis))
    if len(set(axes)) != len(axes):
        raise TransformError("sliding_window_view with a window sliding twice along one axis")
    return window, axes


def sliding_window_view_vjp(g: Any, x: Any, window_shape: Any, axis: Any = None) -> Any:
    """VJP of ``sliding_window_view(x, window_shape, axis)``: every window's cotangent
    added back to the entries of ``x`` it views (one padded slice per offset in the
    window)."""
    shape = np.shape(x)
    window, axes = _window_axes(len(shape), window_shape, axis)
    out = np.zeros(shape)
    if is_zero(g):
        return out
    inner = np.shape(g)[: len(shape)]
    for offset in np.ndindex(*window):
        widths = [(0, 0)] * len(shape)
        for ax, start in zip(axes, offset):
            widths[ax] = (start, shape[ax] - inner[ax] - start)
        out = out + np.pad(g[(Ellipsis, *offset)], widths)
    return out


def sliding_window_view_jvp(t: Any, window_shape: Any, axis: Any = None) -> Any:
    """JVP of ``sliding_window_view``: the tangent's windows (a copy, so that tangents
    can be accumulated into)."""
    return np.array(np.lib.stride_tricks.sliding_window_view(t, window_shape, axis))


def partition_index(a: Any, kth: Any, axis: Any, kind: str, ans: Any) -> Any:
    """The indices that arrange ``a`` as ``np.partition`` did (``ans``): those of
    ``np.argpartition``, checked against ``ans`` (equal entries may trade places)."""
    index = np.argpartition(a, kth, axis=axis, kind=kind)
    taken = np.take_along_axis(np.asarray(a), index, axis)
    if not np.array_equal(taken, np.asarray(ans), equal_nan=True):
        raise TransformError(
            "np.partition: np.argpartition arranged the entries differently",
            hint="use np.sort (its gradient is exact)",
        )
    return index


nondiff("index computations", [partition_index])
