"""Helpers of the rules in :mod:`.stats` (``np.average``, ``np.median``, ``np.nansum``,
``np.nanmean``, ``np.polyval``, ``np.cov``, ``np.corrcoef``), reached as ``_ad.<name>``.

Plain NumPy, so that the transformer can differentiate them from their source for higher
derivatives (``FROM_SOURCE``); ``median_weights`` computes a selection only (no gradient).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import is_zero
from .registry import nondiff

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "average_vjp_a",
    "average_vjp_w",
    "average_jvp_w",
    "median_weights",
    "median_vjp",
    "nan_mask",
    "nanmean_vjp",
    "polyval_vjp_p",
    "polyval_dx",
    "cov_vjp",
    "cov_jvp",
    "corrcoef_vjp",
    "corrcoef_jvp",
]
FROM_SOURCE = (
    "average_vjp_a",
    "average_vjp_w",
    "average_jvp_w",
    "median_vjp",
    "nanmean_vjp",
    "polyval_vjp_p",
    "polyval_dx",
    "cov_vjp",
    "cov_jvp",
    "corrcoef_vjp",
    "corrcoef_jvp",
)


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Reduction axes as a sorted tuple of non-negative ints (``None`` = all)."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        return (int(axis) % max(ndim, 1),)
    return tuple(sorted(int(ax) % max(ndim, 1) for ax in axis))


def _expand(value: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    """A reduction's output (or cotangent) with its reduced axes put back (size one)."""
    axes = _axes(axis, np.ndim(a))
    if keepdims or not axes or np.ndim(value) == 0:
        return value
    return np.expand_dims(value, axes)


# --- np.average ----------------------------------------------------------------------------


def _full_weights(a: Any, axis: Any, weights: Any) -> Any:
    """The weights of ``np.average`` broadcast against ``a`` (1-D weights lie along ``axis``)."""
    w = np.asarray(weights)
    nd = np.ndim(a)
    if np.shape(w) != np.shape(a):
        if np.ndim(w) != 1 or axis is None or np.ndim(axis) != 0:
            raise TransformError("np.average: weights of another shape need an int axis")
        shape = [1] * nd
        shape[int(axis) % nd] = np.shape(w)[0]
        w = np.reshape(w, shape)
    return np.broadcast_to(w, np.shape(a))


def _weights_back(d: Any, a: Any, axis: Any, weights: Any) -> Any:
    """A cotangent over ``a``'s shape summed back to the weights' shape."""
    if np.shape(weights) == np.shape(a):
        return d
    ax = int(axis) % np.ndim(a)
    others = tuple(i for i in range(np.ndim(a)) if i != ax)
    return np.sum(d, axis=others)


def average_vjp_a(g: Any, a: Any, axis: Any, weights: Any, returned: bool, keepdims: bool) -> Any:
    """VJP of ``np.average(a, axis, weights)`` in ``a``: ``g * w / sum(w)`` (``g / n``
    without weights)."""
    if returned:
        raise TransformError("np.average(..., returned=True) returns a tuple: not modelled")
    if is_zero(g):
        return np.zeros(np.shape(a))
    gk = _expand(g, a, axis, keepdims)
    if weights is None:
        axes = _axes(axis, np.ndim(a))
        n = 1
        for ax in axes:
            n = n * np.shape(a)[ax]
        return np.broadcast_to(gk / n, np.shape(a)) + 0.0
    w = _full_weights(a, axis, weights)
    return np.broadcast_to(gk * w / np.sum(w, axis=axis, keepdims=True), np.shape(a)) + 0.0


def average_vjp_w(
    g: Any, a: Any, axis: Any, weights: Any, returned: bool, keepdims: bool, ans: Any
) -> Any:
    """VJP of ``np.average`` in ``weights``: ``g * (a - ans) / sum(w)``, summed back to
    the weights' shape."""
    if returned:
        raise TransformError("np.average(..., returned=True) returns a tuple: not modelled")
    if is_zero(g):
        return np.zeros(np.shape(weights))
    w = _full_weights(a, axis, weights)
    gk = _expand(g, a, axis, keepdims)
    d = gk * (a - _expand(ans, a, axis, keepdims)) / np.sum(w, axis=axis, keepdims=True)
    return _weights_back(np.broadcast_to(d, np.shape(a)) + 0.0, a, axis, weights)


def average_jvp_w(t: Any, a: Any, axis: Any, weights: Any, keepdims: bool, ans: Any) -> Any:
    """JVP of ``np.average`` in ``weights``: ``sum(t * (a - ans)) / sum(w)``."""
    w = _full_weights(a, axis, weights)
    tw = _full_weights(a, axis, t)
    d = tw * (a - _expand(ans, a, axis, keepdims)) / np.sum(w, axis=axis, keepdims=True)
    return np.sum(d, axis=axis, keepdims=keepdims)


# --- np.median -----------------------------------------------------------------------------


def median_weights(a: Any, axis: Any) -> Any:
    """Where ``np.median`` takes its value from: weight 1 on the middle entry of each slice
    (1/2 on each of the two middle ones for even lengths), placed as ``np.argsort`` orders
    the slice (equal entries: the one sorting puts in the middle, as JAX does)."""
    x = np.asarray(a, dtype=float)
    nd = np.ndim(x)
    axes = _axes(axis, nd)
    k = len(axes)
    moved = np.moveaxis(x, axes, tuple(range(nd - k, nd)))
    flat = np.reshape(moved, np.shape(moved)[: nd - k] + (-1,))
    n = np.shape(flat)[-1]
    pick = np.zeros(n)
    if n % 2:
        pick[n // 2] = 1.0
    else:
        pick[n // 2 - 1 : n // 2 + 1] = 0.5
    w = np.zeros(np.shape(flat))
    order = np.argsort(flat, axis=-1, kind="stable")
    np.put_along_axis(w, order, np.broadcast_to(pick, np.shape(flat)), axis=-1)
    w = np.reshape(w, np.shape(moved))
    return np.moveaxis(w, tuple(range(nd - k, nd)), axes)


def median_vjp(g: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    """VJP of ``np.median``: ``g`` on the middle entries (see :func:`median_weights`)."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    return _expand(g, a, axis, keepdims) * median_weights(a, axis)


# --- np.nansum, np.nanmean -----------------------------------------------------------------


def nan_mask(a: Any) -> Any:
    """1.0 where ``a`` is a number, 0.0 where it is NaN (NaN entries get no gradient)."""
    return 1.0 - np.isnan(a)


def nanmean_vjp(g: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    """VJP of ``np.nanmean``: ``g`` divided by the count of numbers, on the numbers."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    mask = nan_mask(a)
    count = np.sum(mask, axis=axis, keepdims=True)
    return _expand(g, a, axis, keepdims) * mask / count


# --- np.polyval ----------------------------------------------------------------------------


def polyval_vjp_p(g: Any, p: Any, x: Any) -> Any:
    """VJP of ``np.polyval(p, x)`` in ``p``: ``sum(g * x**(n-1-i))`` over ``x``'s entries."""
    n = np.shape(p)[0]
    if is_zero(g):
        return np.zeros(n)
    powers = np.expand_dims(x, -1) ** np.arange(n - 1, -1, -1.0)
    total = np.expand_dims(np.broadcast_to(g, np.shape(x)), -1) * powers
    return np.reshape(total, (-1, n)).sum(axis=0)


def polyval_dx(p: Any, x: Any) -> Any:
    """The derivative ``p'(x)`` of the polynomial ``p`` (highest power first)."""
    n = np.shape(p)[0]
    if n < 2:
        return np.zeros(np.shape(x))
    return np.polyval(np.asarray(p)[:-1] * np.arange(n - 1, 0, -1.0), x)


# --- np.cov, np.corrcoef -------------------------------------------------------------------


def _rows(v: Any, rowvar: bool) -> Any:
    """``v`` as variables x observations, as ``np.cov`` reads it."""
    x = np.asarray(v, dtype=float)
    if np.ndim(x) < 2:
        x = np.reshape(x, (1, -1))
    if not rowvar and np.shape(x)[0] != 1:
        x = x.T
    return x


def _unrows(d: Any, v: Any, rowvar: bool) -> Any:
    """A cotangent over :func:`_rows` ``(v)`` brought back to ``v``'s shape."""
    x = np.asarray(v)
    if np.ndim(x) < 2:
        return np.reshape(d, np.shape(x))
    if not rowvar and np.shape(x)[0] != 1:
        return d.T
    return d


def _cov_parts(m: Any, y: Any, rowvar: bool, bias: bool, ddof: Any) -> tuple[Any, float, int]:
    """The centred data (variables x observations), the divisor, ``m``'s variable count."""
    xm = _rows(m, rowvar)
    x = xm if y is None else np.concatenate([xm, _rows(y, rowvar)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = np.shape(x)[1] - ddof
    centred = x - np.mean(x, axis=1, keepdims=True)
    return centred, fact, np.shape(xm)[0]


def _cov_unsupported(fweights: Any, aweights: Any) -> None:
    if fweights is not None or aweights is not None:
        raise TransformError("np.cov with fweights or aweights: no gradient rule")


def cov_vjp(
    g: Any,
    m: Any,
    y: Any,
    rowvar: bool,
    bias: bool,
    ddof: Any,
    fweights: Any,
    aweights: Any,
    which: int,
) -> Any:
    """VJP of ``np.cov`` in ``m`` (``which=0``) or ``y`` (``1``): ``(G + G^T) X_c / (N - ddof)``
    split back to the input (centring is a projection the centred data already lies in)."""
    _cov_unsupported(fweights, aweights)
    target = m if which == 0 else y
    if is_zero(g):
        return np.zeros(np.shape(target))
    centred, fact, nm = _cov_parts(m, y, rowvar, bias, ddof)
    nv = np.shape(centred)[0]
    gm = np.reshape(g, (nv, nv))
    d = (gm + gm.T) @ centred / fact
    part = d[:nm] if which == 0 else d[nm:]
    return _unrows(part, target, rowvar)


def cov_jvp(
    t: Any,
    m: Any,
    y: Any,
    rowvar: bool,
    bias: bool,
    ddof: Any,
    fweights: Any,
    aweights: Any,
    which: int,
    ans: Any,
) -> Any:
    """JVP of ``np.cov`` for the tangent ``t`` of ``m`` (``which=0``) or ``y`` (``1``)."""
    _cov_unsupported(fweights, aweights)
    centred, fact, nm = _cov_parts(m, y, rowvar, bias, ddof)
    dt = _rows(t, rowvar)
    dt = dt - np.mean(dt, axis=1, keepdims=True)
    zeros = np.zeros((np.shape(centred)[0] - np.shape(dt)[0], np.shape(centred)[1]))
    dx = np.concatenate([dt, zeros] if which == 0 else [zeros, dt], axis=0)
    prod = dx @ centred.T
    return np.reshape((prod + prod.T) / fact, np.shape(ans))


def _corr_back(gr: Any, c: Any) -> Any:
    """Cotangent of the covariance ``c`` from that of ``c / sqrt(outer(d, d))``."""
    d = np.diagonal(c)
    s = 1.0 / np.sqrt(d)
    r = c * np.outer(s, s)
    sym = gr + gr.T
    d_bar = -0.5 * np.sum(sym * r, axis=1) / d
    return gr * np.outer(s, s) + np.diag(d_bar)


def corrcoef_vjp(g: Any, x: Any, y: Any, rowvar: bool, which: int) -> Any:
    """VJP of ``np.corrcoef`` in ``x`` (``which=0``) or ``y`` (``1``), through ``np.cov``."""
    target = x if which == 0 else y
    if is_zero(g) or np.ndim(g) == 0:  # a single variable: the constant 1.0
        return np.zeros(np.shape(target))
    c = np.cov(x, y, rowvar)
    return cov_vjp(_corr_back(g, c), x, y, rowvar, False, None, None, None, which)


def corrcoef_jvp(t: Any, x: Any, y: Any, rowvar: bool, which: int, ans: Any) -> Any:
    """JVP of ``np.corrcoef``: ``dR = dC * s s^T - R * (dd s^2 1^T + 1 dd^T s^2) / 2``."""
    if np.ndim(ans) == 0:
        return np.zeros(())
    c = np.cov(x, y, rowvar)
    dc = cov_jvp(t, x, y, rowvar, False, None, None, None, which, c)
    d = np.diagonal(c)
    s = 1.0 / np.sqrt(d)
    rel = np.diagonal(dc) / d
    return dc * np.outer(s, s) - 0.5 * ans * (rel[:, None] + rel[None, :])


nondiff("index computations", [median_weights, nan_mask])
