"""Helpers of the rules in :mod:`.corpus` (``np.vander``, ``np.logspace``, ``np.geomspace``,
``np.modf``, ``np.frexp``, ``np.insert``, ``np.delete``, ``np.resize``, ``np.extract``,
``np.maximum.accumulate``, ``np.linalg.tensorinv``, ``tensorsolve``, ``cond``,
``np.polyfit``, ``statistics``), reached as ``_ad.<name>``.

Plain NumPy, differentiated from their source for higher derivatives (``FROM_SOURCE``).
The functions that only rearrange entries (``insert``, ``delete``, ``resize``,
``extract``, a running maximum) share one VJP: the function applied to the entries'
positions (``positions``) says which entry each output copies, and the cotangent is
summed back onto those entries (``moved_vjp``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import add_at, is_zero
from .registry import nondiff
from .vjps import norm_vjp

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "positions",
    "moved_vjp",
    "moved_jvp",
    "insert_vjp",
    "insert_jvp",
    "running_source",
    "vander_powers",
    "vander_vjp",
    "vander_jvp",
    "tuple_first_vjp",
    "frexp_vjp",
    "tensorinv_vjp",
    "tensorinv_jvp",
    "tensorsolve_vjp_a",
    "tensorsolve_vjp_b",
    "tensorsolve_jvp_a",
    "tensorsolve_jvp_b",
    "cond_vjp",
    "polyfit_vjp_x",
    "polyfit_vjp_y",
    "polyfit_jvp_x",
    "stat_mean_vjp",
    "stat_variance_vjp",
    "stat_dot",
]
#: every helper but those computing indices or a source array only (no gradient of their own)
FROM_SOURCE = tuple(n for n in __all__ if n not in ("positions", "running_source", "vander_powers"))


# --- functions that copy entries: insert, delete, resize, extract, running maxima ----------


def positions(x: Any) -> Any:
    """The flat position of each entry of ``x``, shaped like ``x`` (integers)."""
    return np.reshape(np.arange(np.size(x)), np.shape(x))


def moved_vjp(g: Any, x: Any, source: Any) -> Any:
    """VJP of a function that copies entries of ``x``: output entry ``i`` copies entry
    ``source[i]`` (a flat position; ``source`` is the function applied to
    ``positions(x)``), so ``g`` is summed back onto the entries copied."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    flat = np.zeros(np.size(x))
    out = add_at(flat, flat, np.ravel(source), np.ravel(g))
    return np.reshape(out, np.shape(x))


def moved_jvp(t: Any, x: Any, source: Any) -> Any:
    """JVP of a function that copies entries of ``x`` (see :func:`moved_vjp`)."""
    if is_zero(t):
        return np.zeros(np.shape(source))
    return np.reshape(np.ravel(t)[np.ravel(source)], np.shape(source))


def insert_vjp(g: Any, arr: Any, obj: Any, values: Any, axis: Any, which: str) -> Any:
    """VJP of ``np.insert(arr, obj, values, axis)`` in ``arr`` (``which == 'arr'``) or in
    ``values``: the positions of both, numbered one after the other, are inserted as the
    function does, and ``g`` goes back to the entries each output position holds (a value
    broadcast to several positions sums their cotangents)."""
    n = np.size(arr)
    shape = np.shape(arr) if which == "arr" else np.shape(values)
    if is_zero(g):
        return np.zeros(shape)
    source = np.insert(positions(arr), obj, n + positions(values), axis)
    flat = np.zeros(n + np.size(values))
    out = add_at(flat, flat, np.ravel(source), np.ravel(g))
    part = out[:n] if which == "arr" else out[n:]
    return np.reshape(part, shape)


def insert_jvp(t: Any, arr: Any, obj: Any, values: Any, axis: Any, which: str) -> Any:
    """JVP of ``np.insert(arr, obj, values, axis)`` in ``arr`` (``which == 'arr'``) or in
    ``values``: the tangent inserted with zeros for the other argument."""
    if which == "arr":
        base = np.zeros(np.shape(arr)) if is_zero(t) else t
        return np.insert(base, obj, np.zeros(np.shape(values)), axis)
    extra = np.zeros(np.shape(values)) if is_zero(t) else t
    return np.insert(np.zeros(np.shape(arr)), obj, extra, axis)


def running_source(a: Any, ans: Any, axis: int, largest: bool) -> Any:
    """The flat positions ``np.maximum.accumulate(a, axis)`` (``largest``) or
    ``np.minimum.accumulate`` copies: each output holds the latest entry so far that equals
    it (where the running extremum was last reached)."""
    x = np.asarray(a)
    ax = axis % np.ndim(x)
    shape = [1] * np.ndim(x)
    shape[ax] = np.shape(x)[ax]
    k = np.broadcast_to(np.reshape(np.arange(np.shape(x)[ax]), shape), np.shape(x))
    reached = np.where(x == ans, k, 0)
    last = np.maximum.accumulate(reached, axis=ax)
    return np.take_along_axis(positions(x), last, ax)


# --- np.vander ----------------------------------------------------------------------------------


def vander_powers(x: Any, n: Any, increasing: bool) -> Any:
    """The powers of ``np.vander(x, n, increasing)``'s columns."""
    cols = len(x) if n is None else int(n)
    powers = np.arange(cols)
    return powers if increasing else powers[::-1]


def vander_vjp(g: Any, x: Any, n: Any, increasing: bool) -> Any:
    """VJP of ``np.vander(x, n, increasing)``: column ``j`` is ``x ** p_j``, whose
    derivative is ``p_j x ** (p_j - 1)`` (zero for ``p_j == 0``)."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    p = vander_powers(x, n, increasing)
    slopes = p * np.asarray(x)[:, None] ** np.maximum(p - 1, 0)
    return np.sum(g * slopes, 1)


def vander_jvp(t: Any, x: Any, n: Any, increasing: bool) -> Any:
    """JVP of ``np.vander(x, n, increasing)``."""
    p = vander_powers(x, n, increasing)
    slopes = p * np.asarray(x)[:, None] ** np.maximum(p - 1, 0)
    if is_zero(t):
        return np.zeros(np.shape(slopes))
    return np.asarray(t)[:, None] * slopes


# --- np.modf, np.frexp: a differentiated first output, a constant second -----------------


def tuple_first_vjp(g: Any, x: Any) -> Any:
    """VJP of a pair whose first output moves with ``x`` one for one and whose second is
    piecewise constant (``frac, whole = np.modf(x)``)."""
    if is_zero(g) or is_zero(g[0]):
        return np.zeros(np.shape(x))
    return np.broadcast_to(g[0], np.shape(x)) * 1.0


def frexp_vjp(g: Any, x: Any, ans: Any) -> Any:
    """VJP of ``m, e = np.frexp(x)``: ``m = x / 2**e`` with ``e`` piecewise constant."""
    if is_zero(g) or is_zero(g[0]):
        return np.zeros(np.shape(x))
    return g[0] * np.ldexp(1.0, -ans[1])


# --- np.linalg.tensorinv, tensorsolve, cond -----------------------------------------------


def _square(a: Any, ind: int) -> Any:
    rows = int(np.prod(np.shape(a)[:ind]))
    return np.reshape(a, (rows, -1))


def tensorinv_vjp(g: Any, a: Any, ans: Any, ind: int) -> Any:
    """VJP of ``ans = np.linalg.tensorinv(a, ind)``, the inverse of ``a`` read as a square
    matrix ``A`` (its first ``ind`` axes as rows): ``-A^-T G A^-T``."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    inv = _square(ans, np.ndim(ans) - ind)
    back = -(inv.T @ np.reshape(g, np.shape(inv)) @ inv.T)
    return np.reshape(back, np.shape(a))


def tensorinv_jvp(t: Any, a: Any, ans: Any, ind: int) -> Any:
    """JVP of ``np.linalg.tensorinv(a, ind)``: ``-A^-1 dA A^-1``."""
    if is_zero(t):
        return np.zeros(np.shape(ans))
    inv = _square(ans, np.ndim(ans) - ind)
    return np.reshape(-(inv @ _square(t, ind) @ inv), np.shape(ans))


def _check_axes(axes: Any) -> None:
    if axes is not None:
        raise TransformError(
            "np.linalg.tensorsolve(..., axes=)",
            hint="move the axes with np.moveaxis before the call",
        )


def tensorsolve_vjp_b(g: Any, a: Any, b: Any, ans: Any, axes: Any) -> Any:
    """VJP of ``x = np.linalg.tensorsolve(a, b)`` in ``b``: ``A^-T g`` with ``A`` the
    matrix of ``a`` (rows the axes of ``b``)."""
    _check_axes(axes)
    if is_zero(g):
        return np.zeros(np.shape(b))
    mat = np.reshape(a, (np.size(b), -1))
    return np.reshape(np.linalg.solve(mat.T, np.ravel(g)), np.shape(b))


def tensorsolve_vjp_a(g: Any, a: Any, b: Any, ans: Any, axes: Any) -> Any:
    """VJP of ``x = np.linalg.tensorsolve(a, b)`` in ``a``: ``-(A^-T g) x^T``."""
    _check_axes(axes)
    if is_zero(g):
        return np.zeros(np.shape(a))
    w = np.ravel(tensorsolve_vjp_b(g, a, b, ans, axes))
    return np.reshape(-np.outer(w, np.ravel(ans)), np.shape(a))


def tensorsolve_jvp_b(t: Any, a: Any, b: Any, ans: Any, axes: Any) -> Any:
    """JVP of ``np.linalg.tensorsolve(a, b)`` in ``b``: ``A^-1 db``."""
    _check_axes(axes)
    if is_zero(t):
        return np.zeros(np.shape(ans))
    mat = np.reshape(a, (np.size(b), -1))
    return np.reshape(np.linalg.solve(mat, np.ravel(t)), np.shape(ans))


def tensorsolve_jvp_a(t: Any, a: Any, b: Any, ans: Any, axes: Any) -> Any:
    """JVP of ``np.linalg.tensorsolve(a, b)`` in ``a``: ``-A^-1 dA x``."""
    _check_axes(axes)
    if is_zero(t):
        return np.zeros(np.shape(ans))
    mat = np.reshape(a, (np.size(b), -1))
    dmat = np.reshape(t, np.shape(mat))
    return np.reshape(-np.linalg.solve(mat, dmat @ np.ravel(ans)), np.shape(ans))


def cond_vjp(g: Any, x: Any, p: Any, ans: Any) -> Any:
    """VJP of ``np.linalg.cond(x, p)``. For ``p`` in ``None, 2, -2`` it is a ratio of
    singular values, whose gradients are ``u_i v_i^T``; for the other norms it is
    ``norm(x, p) * norm(inv(x), p)``, differentiated through the norm and the inverse."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    g = np.asarray(g)
    if p is None or p == 2 or p == -2:
        u, s, vt = np.linalg.svd(x)
        big = u[..., :, :1] * vt[..., :1, :]
        small = u[..., :, -1:] * vt[..., -1:, :]
        s0 = s[..., :1, None]
        s1 = s[..., -1:, None]
        if p == -2:
            s0, s1, big, small = s1, s0, small, big
        return g[..., None, None] * (big / s1 - s0 * small / (s1 * s1))
    if np.ndim(x) != 2:
        raise TransformError(f"np.linalg.cond(x, {p!r}) of a stack of matrices")
    inv = np.linalg.inv(x)
    n_x = np.linalg.norm(x, p)
    n_inv = np.linalg.norm(inv, p)
    g_x = norm_vjp(g * n_inv, x, n_x, p, None, False)
    g_inv = norm_vjp(g * n_x, inv, n_inv, p, None, False)
    return g_x - inv.T @ g_inv @ inv.T


# --- np.polyfit: a least-squares fit to the Vandermonde matrix ----------------------------


def _check_polyfit(full: bool, cov: Any) -> None:
    if full or cov:
        raise TransformError(
            "np.polyfit(..., full=True) or cov=",
            hint="differentiate the coefficients alone (full=False, cov=False)",
        )


def _fit_parts(x: Any, y: Any, deg: int, w: Any) -> Any:
    """``(v, y)``: the weighted Vandermonde matrix and data ``polyfit`` fits (``c = pinv(v)
    @ y``)."""
    v = np.vander(x, int(deg) + 1)
    y = np.asarray(y, dtype=float)
    if w is not None:
        v = v * np.asarray(w)[:, None]
        y = y * (np.asarray(w)[:, None] if np.ndim(y) == 2 else np.asarray(w))
    return v, y


def polyfit_vjp_y(g: Any, x: Any, y: Any, deg: int, w: Any, full: bool, cov: Any) -> Any:
    """VJP of ``c = np.polyfit(x, y, deg, w=w)`` in ``y``: ``c = pinv(V) (w y)`` is linear
    in ``y`` (``V`` of full column rank)."""
    _check_polyfit(full, cov)
    if is_zero(g):
        return np.zeros(np.shape(y))
    v, _ = _fit_parts(x, y, deg, w)
    back = np.linalg.pinv(v).T @ np.asarray(g)
    if w is not None:
        back = back * (np.asarray(w)[:, None] if np.ndim(y) == 2 else np.asarray(w))
    return back


def polyfit_vjp_x(g: Any, x: Any, y: Any, deg: int, w: Any, full: bool, cov: Any, ans: Any) -> Any:
    """VJP of ``c = np.polyfit(x, y, deg, w=w)`` in ``x``. With ``c = (V^T V)^-1 V^T y``,
    ``dc = (V^T V)^-1 dV^T r - pinv(V) dV c`` (``r = y - V c``), so the cotangent of ``V``
    is ``r h^T - pinv(V)^T g c^T`` with ``h = (V^T V)^-1 g``, then through ``np.vander``."""
    _check_polyfit(full, cov)
    if is_zero(g):
        return np.zeros(np.shape(x))
    v, yw = _fit_parts(x, y, deg, w)
    g = np.asarray(g)
    vector = np.ndim(g) == 1
    g2 = g[:, None] if vector else g
    c2 = np.asarray(ans)[:, None] if vector else np.asarray(ans)
    y2 = yw[:, None] if vector else yw
    r = y2 - v @ c2
    h = np.linalg.solve(v.T @ v, g2)
    g_v = r @ h.T - np.linalg.pinv(v).T @ g2 @ c2.T
    if w is not None:
        g_v = g_v * np.asarray(w)[:, None]
    return vander_vjp(g_v, x, int(deg) + 1, False)


def polyfit_jvp_x(t: Any, x: Any, y: Any, deg: int, w: Any, full: bool, cov: Any, ans: Any) -> Any:
    """JVP of ``np.polyfit(x, y, deg, w=w)`` in ``x``:
    ``(V^T V)^-1 dV^T r - pinv(V) dV c``."""
    _check_polyfit(full, cov)
    if is_zero(t):
        return np.zeros(np.shape(ans))
    v, yw = _fit_parts(x, y, deg, w)
    dv = vander_jvp(t, x, int(deg) + 1, False)
    if w is not None:
        dv = dv * np.asarray(w)[:, None]
    r = yw - v @ np.asarray(ans)
    return np.linalg.solve(v.T @ v, dv.T @ r) - np.linalg.pinv(v) @ (dv @ np.asarray(ans))


# --- statistics.mean, fmean, variance, pvariance, stdev, pstdev of a list of numbers ------


def stat_mean_vjp(g: Any, data: Any, weights: Any = None) -> Any:
    """VJP of ``statistics.mean(data)`` / ``fmean(data, weights)``: each entry gets its
    weight over the total (``1/n`` without weights), as a list like ``data``."""
    n = len(data)
    if weights is None:
        share = [1.0 / n] * n
    else:
        total = sum(weights)
        share = [wk / total for wk in weights]
    out = [0.0] * n if is_zero(g) else [g * s for s in share]
    return np.asarray(out) if isinstance(data, np.ndarray) else out


def stat_variance_vjp(g: Any, data: Any, xbar: Any, ddof: int) -> Any:
    """VJP of ``statistics.variance(data, xbar)`` (``ddof == 1``) or ``pvariance``
    (``ddof == 0``): ``2 (x_i - mean) / (n - ddof)``, as a list like ``data``. A given
    ``xbar`` is refused (the variance then reads it instead of the mean)."""
    if xbar is not None:
        raise TransformError(
            "statistics.variance(data, xbar) with a given mean",
            hint="let the function compute the mean (leave xbar out)",
        )
    n = len(data)
    mean = sum(data) / n
    out = [0.0] * n if is_zero(g) else [g * 2.0 * (xk - mean) / (n - ddof) for xk in data]
    return np.asarray(out) if isinstance(data, np.ndarray) else out


def stat_dot(t: Any, weights: Any) -> Any:
    """``sum_i t_i w_i`` over a list of tangents (symbolic zeros skipped)."""
    if is_zero(t):
        return 0.0
    total = 0.0
    for tk, wk in zip(t, weights):
        if not is_zero(tk):
            total = total + tk * wk
    return total


# Index computations: no gradient flows through them.
nondiff("index computations", [positions, running_source, vander_powers])
