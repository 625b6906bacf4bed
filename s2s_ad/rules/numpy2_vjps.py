"""Helpers of the rules in :mod:`.numpy2` (``np.cumulative_sum``, ``np.cumulative_prod``,
``np.quantile``, ``np.percentile``), reached as ``_ad.<name>``.

Plain NumPy, so that the transformer differentiates them from their source for higher
derivatives (``FROM_SOURCE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import is_zero
from .registry import nondiff
from .shape_vjps import cumprod_jvp, cumprod_vjp

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "cumulative_vjp",
    "cumulative_prod_jvp",
    "quantile_weights",
    "quantile_vjp",
    "quantile_jvp",
]
FROM_SOURCE = (
    "cumulative_vjp",
    "cumulative_prod_jvp",
    "quantile_vjp",
    "quantile_jvp",
)


def cumulative_vjp(g: Any, x: Any, axis: Any, include_initial: bool, prod: bool) -> Any:
    """VJP of ``np.cumulative_sum`` (``prod=False``) or ``np.cumulative_prod``: the VJP of
    ``cumsum``/``cumprod`` of the cotangent without its initial entry (the initial value
    0 or 1 is a constant)."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    ax = 0 if axis is None else axis
    rest = np.moveaxis(np.moveaxis(g, ax, 0)[1:], 0, ax) if include_initial else g
    if prod:
        return cumprod_vjp(rest, x, ax)
    return np.flip(np.cumsum(np.flip(rest, ax), ax), ax)


def cumulative_prod_jvp(t: Any, x: Any, axis: Any, include_initial: bool) -> Any:
    """JVP of ``np.cumulative_prod``: that of ``cumprod``, after a zero initial tangent."""
    ax = 0 if axis is None else axis
    out = cumprod_jvp(t, x, ax)
    if include_initial:
        shape = list(np.shape(out))
        shape[ax] = 1
        out = np.concatenate([np.zeros(shape), out], axis=ax)
    return out


def quantile_weights(a: Any, q: Any, axis: Any, method: str) -> tuple[Any, Any, Any]:
    """For ``np.quantile(a, q, axis, method='linear')``: the shape of ``a`` with ``axis``
    moved last (flattened when ``axis`` is None), the order that sorts it along that axis, and the
    ``(len(q), n)`` interpolation weights of the sorted entries (``len(q)`` is 1 for a
    scalar ``q``)."""
    if method != "linear":
        raise TransformError(
            f"np.quantile/np.percentile with method={method!r}",
            hint="differentiate the default method='linear'",
        )
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise TransformError(
            "np.quantile/np.percentile over a tuple of axes",
            hint="reshape the axes into one first",
        )
    a = np.asarray(a)
    moved = np.ravel(a) if axis is None else np.moveaxis(a, axis, -1)
    n = moved.shape[-1]
    virtual = np.ravel(np.asarray(q, dtype=float)) * (n - 1)
    lo = np.clip(np.floor(virtual).astype(int), 0, n - 1)
    hi = np.minimum(lo + 1, n - 1)
    frac = virtual - lo
    weights = np.zeros((virtual.size, n))
    rows = np.arange(virtual.size)
    np.add.at(weights, (rows, lo), 1.0 - frac)
    np.add.at(weights, (rows, hi), frac)
    return moved.shape, np.argsort(moved, axis=-1, kind="stable"), weights


def _q_first(value: Any, q: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    """An output-shaped ``value`` as ``(len(q), *rest)`` (the kept axis removed)."""
    value = np.asarray(value)
    if keepdims:
        lead = np.ndim(q)  # q's dims come first, then a's
        axes = tuple(range(lead, lead + a.ndim)) if axis is None else (lead + axis % a.ndim,)
        value = np.squeeze(value, axes)
    return np.reshape(value, (-1,) + tuple(np.shape(value)[np.ndim(q) :]))


def quantile_vjp(
    g: Any, a: Any, q: Any, axis: Any = None, keepdims: bool = False, method: str = "linear"
) -> Any:
    """VJP of ``np.quantile(a, q, axis, keepdims=keepdims)`` (linear interpolation): each
    output reads two neighbouring order statistics with weights ``1 - frac`` and ``frac``,
    so ``g`` goes back to the entries sorted into those places (ties: to one of them)."""
    a = np.asarray(a)
    if is_zero(g):
        return np.zeros(np.shape(a))
    shape, order, weights = quantile_weights(a, q, axis, method)
    gq = _q_first(np.broadcast_to(g, np.shape(np.quantile(a, q, axis, keepdims=keepdims))),
                  q, a, axis, keepdims)  # fmt: skip
    in_sorted = np.tensordot(np.moveaxis(gq, 0, -1), weights, axes=([-1], [0]))
    # back to the unsorted places: the inverse permutation of ``order``
    out = np.reshape(np.take_along_axis(in_sorted, np.argsort(order, axis=-1), axis=-1), shape)
    if axis is None:
        return np.reshape(out, a.shape)
    return np.moveaxis(out, -1, axis)


def quantile_jvp(
    t: Any, a: Any, q: Any, axis: Any = None, keepdims: bool = False, method: str = "linear"
) -> Any:
    """JVP of ``np.quantile``: the same interpolation of the tangent's entries, taken in
    the order that sorts ``a``."""
    a = np.asarray(a)
    shape, order, weights = quantile_weights(a, q, axis, method)
    t = np.broadcast_to(t, a.shape)
    tm = np.ravel(t) if axis is None else np.moveaxis(t, axis, -1)
    sorted_t = np.take_along_axis(tm, order, axis=-1)
    out = np.moveaxis(np.tensordot(sorted_t, weights, axes=([-1], [1])), -1, 0)
    out = np.reshape(out, (*np.shape(q), *out.shape[1:]))
    if keepdims:
        lead = np.ndim(q)
        if axis is None:
            out = np.reshape(out, (*np.shape(q), *([1] * a.ndim)))
        else:
            out = np.expand_dims(out, lead + axis % a.ndim)
    return out


nondiff("quantile weights", [quantile_weights])
