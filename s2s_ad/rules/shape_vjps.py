"""Helpers of the array-manipulation rules (:mod:`.shapes`), reached as ``_ad.<name>``.

Plain NumPy on Python loops and slices, so that the transformer can differentiate them
from their source for higher derivatives (``FROM_SOURCE``). Each takes the cotangent ``g``
(``0.0`` when nothing reached the output) first; sequence inputs get a tuple or list of
adjoints in the container type of the input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import add_at, is_zero, unbroadcast
from .registry import nondiff

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "r_vjp",
    "c_vjp",
    "dstack_vjp",
    "trapezoid_vjp_y",
    "trapezoid_vjp_x",
    "trapezoid_jvp_x",
    "cumprod_vjp",
    "cumprod_jvp",
    "diff_vjp",
    "diff_vjp_edge",
    "diff_jvp_edge",
    "diff_jvp",
    "gradient_vjp",
    "select_vjp",
    "interp_vjp_x",
    "interp_vjp_fp",
    "convolve_vjp",
    "kron_vjp_a",
    "kron_vjp_b",
    "take_vjp",
    "take_along_axis_vjp",
    "meshgrid_vjp",
    "pad_vjp",
    "pad_jvp",
]
FROM_SOURCE = tuple(__all__)


def _as_container(like: Any, parts: list[Any]) -> Any:
    if isinstance(like, list):
        return parts
    return tuple(parts)


def r_vjp(g: Any, key: Any) -> Any:
    """VJP of ``np.r_[a, b, ...]`` (no slices or directives): ``g`` cut along axis 0 into
    pieces the sizes of the parts (a scalar part is one entry), one per part."""
    parts = []
    start = 0
    for item in key:
        n = 1 if np.ndim(item) == 0 else np.shape(item)[0]
        if is_zero(g):
            parts.append(0.0)
        elif np.ndim(item) == 0:
            parts.append(g[start])
        else:
            parts.append(g[start : start + n])
        start = start + n
    return _as_container(key, parts)


def c_vjp(g: Any, key: Any) -> Any:
    """VJP of ``np.c_[a, b, ...]``: ``g`` cut along the last axis; a 1-D part was a column,
    a scalar one entry."""
    parts = []
    start = 0
    for item in key:
        n = 1 if np.ndim(item) < 2 else np.shape(item)[-1]
        if is_zero(g):
            parts.append(0.0)
        elif np.ndim(item) == 0:
            parts.append(np.sum(g[..., start]))
        elif np.ndim(item) == 1:
            parts.append(g[:, start])
        else:
            parts.append(g[..., start : start + n])
        start = start + n
    return _as_container(key, parts)


def dstack_vjp(g: Any, tup: Any) -> Any:
    """VJP of ``np.dstack(tup)``: ``g`` cut along axis 2; parts of fewer than three
    dimensions were one slice (``atleast_3d``) and get their own shape back."""
    parts = []
    start = 0
    for item in tup:
        n = 1 if np.ndim(item) < 3 else np.shape(item)[2]
        if is_zero(g):
            parts.append(0.0)
        else:
            parts.append(np.reshape(g[:, :, start : start + n], np.shape(item)))
        start = start + n
    return _as_container(tup, parts)


def _trapezoid_steps(y: Any, x: Any, dx: Any, axis: int) -> Any:
    """The steps between samples along ``axis`` (moved last), broadcastable against ``y``."""
    if x is None:
        return dx * np.ones(np.shape(y)[axis] - 1)
    if np.ndim(x) == 1:
        return np.diff(x)
    return np.diff(np.moveaxis(x, axis, -1), 1, -1)


def trapezoid_vjp_y(g: Any, y: Any, x: Any, dx: Any, axis: int) -> Any:
    """VJP of ``np.trapezoid(y, x, dx, axis)`` in ``y``: each sample weighs half the steps
    on its two sides."""
    if is_zero(g):
        return np.zeros(np.shape(y))
    d = _trapezoid_steps(y, x, dx, axis)
    edge = np.zeros(np.shape(d)[:-1] + (1,))
    w = 0.5 * (np.concatenate([edge, d], -1) + np.concatenate([d, edge], -1))
    out = np.expand_dims(g, -1) * w
    return unbroadcast(np.moveaxis(out, -1, axis), y)


def trapezoid_vjp_x(g: Any, y: Any, x: Any, axis: int) -> Any:
    """VJP of ``np.trapezoid(y, x, axis=axis)`` in ``x``: each step weighs the mean of its
    two samples, so ``x[i]`` gets ``(y[i-1] - y[i+1]) / 2`` (one-sided at the ends)."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    ym = np.moveaxis(y, axis, -1)
    pairs = 0.5 * (ym[..., 1:] + ym[..., :-1])
    edge = np.zeros(np.shape(pairs)[:-1] + (1,))
    grad = np.expand_dims(g, -1) * (
        np.concatenate([edge, pairs], -1) - np.concatenate([pairs, edge], -1)
    )
    if np.ndim(x) == 1:
        return np.reshape(np.sum(np.reshape(grad, (-1, np.shape(x)[0])), 0), np.shape(x))
    return unbroadcast(np.moveaxis(grad, -1, axis), x)


def trapezoid_jvp_x(t: Any, y: Any, x: Any, axis: int) -> Any:
    """JVP of ``np.trapezoid(y, x, axis=axis)`` in ``x``: the step tangents times the means
    of the samples they separate."""
    ym = np.moveaxis(y, axis, -1)
    pairs = 0.5 * (ym[..., 1:] + ym[..., :-1])
    if is_zero(t):
        return np.zeros(np.shape(pairs)[:-1])
    if np.ndim(x) == 1:
        return np.sum(np.diff(t) * pairs, -1)
    return np.sum(np.diff(np.moveaxis(t, axis, -1), 1, -1) * pairs, -1)


def _flip_cumsum(v: Any, axis: int) -> Any:
    """The cumulative sum of ``v`` from the end of ``axis``."""
    return np.flip(np.cumsum(np.flip(v, axis), axis), axis)


def cumprod_vjp(g: Any, a: Any, axis: Any) -> Any:
    """VJP of ``np.cumprod(a, axis)``: ``a_bar[j] = sum over k >= j of g[k] * prod(a[i] for
    i <= k, i != j)``, exact at zeros.

    Without a zero in ``a`` that is the reversed cumulative sum of ``g * ans`` divided by
    ``a``. With one, the exclusive-product form: ``L[j] * R[j]``, with ``L[j]`` the product
    of the entries before ``j`` and ``R[j] = g[j] + a[j + 1] * R[j + 1]`` (a loop along the
    axis). It divides by nothing, so it and its derivatives are exact at zeros."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    x = np.ravel(a) if axis is None else np.asarray(a, dtype=float)
    ax = 0 if axis is None else axis
    if not np.any(x == 0.0):
        out = _flip_cumsum(g * np.cumprod(x, ax), ax) / x
        return np.reshape(out, np.shape(a))
    xm = np.moveaxis(x, ax, -1)
    gm = np.moveaxis(g + np.zeros(np.shape(x)), ax, -1)
    n = np.shape(xm)[-1]
    ones = np.ones(np.shape(xm)[:-1] + (1,))
    before = np.concatenate([ones, np.cumprod(xm[..., : n - 1], -1)], -1)
    after = [gm[..., n - 1]]
    for j in range(n - 2, -1, -1):
        after.append(gm[..., j] + xm[..., j + 1] * after[-1])
    out = np.moveaxis(before * np.stack(after[::-1], -1), -1, ax)
    return np.reshape(out, np.shape(a))


def cumprod_jvp(t: Any, a: Any, axis: Any) -> Any:
    """JVP of ``np.cumprod(a, axis)``: ``sum over j <= k of t[j] * prod(a[i] for i <= k,
    i != j)``, exact at zeros: ``ans * cumsum(t / a)`` without a zero in ``a``, else the
    recurrence ``D[k] = a[k] D[k - 1] + t[k] L[k]`` (``L[k]``: the product of the entries
    before ``k``)."""
    x = np.ravel(a) if axis is None else np.asarray(a, dtype=float)
    ax = 0 if axis is None else axis
    if is_zero(t):
        return np.zeros(np.shape(x))
    tx = np.ravel(t + np.zeros(np.shape(a))) if axis is None else t + np.zeros(np.shape(x))
    if not np.any(x == 0.0):
        return np.cumprod(x, ax) * np.cumsum(tx / x, ax)
    xm = np.moveaxis(x, ax, -1)
    tm = np.moveaxis(tx, ax, -1)
    n = np.shape(xm)[-1]
    ones = np.ones(np.shape(xm)[:-1] + (1,))
    before = np.concatenate([ones, np.cumprod(xm[..., : n - 1], -1)], -1)
    dots = [tm[..., 0]]
    for k in range(1, n):
        dots.append(xm[..., k] * dots[-1] + tm[..., k] * before[..., k])
    return np.moveaxis(np.stack(dots, -1), -1, ax)


def _diff_back(g: Any, n: int, ax: int) -> Any:
    """The transposed difference (``-diff`` of ``g`` padded with a zero at both ends)
    ``n`` times: the cotangent of ``np.diff``'s whole input (with its edges)."""
    for _ in range(n):
        shape = list(np.shape(g))
        shape[ax] = 1
        edge = np.zeros(shape)
        g = -np.diff(np.concatenate([edge, g, edge], ax), 1, ax)
    return g


def _edge_length(edge: Any, ax: int) -> int:
    """How many entries ``prepend=``/``append=`` adds along the axis (a scalar: one)."""
    if edge is np._NoValue:
        return 0
    return 1 if np.ndim(edge) == 0 else np.shape(edge)[ax]


def diff_vjp(g: Any, a: Any, n: int, axis: int, prepend: Any, append: Any) -> Any:
    """VJP of ``np.diff(a, n, axis, prepend=, append=)`` in ``a``: the transposed difference
    ``n`` times, then the part of the result that lies over ``a`` (not over
    ``prepend``/``append``)."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    ax = axis % np.ndim(a)
    start = _edge_length(prepend, ax)
    moved = np.moveaxis(_diff_back(g, n, ax), ax, 0)[start : start + np.shape(a)[ax]]
    return np.moveaxis(moved, 0, ax)


def diff_vjp_edge(g: Any, a: Any, n: int, axis: int, prepend: Any, append: Any, which: str) -> Any:
    """VJP of ``np.diff(a, n, axis, prepend=, append=)`` in ``prepend`` (``which ==
    'prepend'``) or ``append``: the part of the transposed difference over it, summed
    over its broadcasting (a scalar is one slice along the axis)."""
    edge = prepend if which == "prepend" else append
    if is_zero(g):
        return np.zeros(np.shape(edge))
    ax = axis % np.ndim(a)
    full = np.moveaxis(_diff_back(g, n, ax), ax, 0)
    start = _edge_length(prepend, ax)
    if which == "prepend":
        part = full[:start]
    else:
        part = full[start + np.shape(a)[ax] :]
    part = np.moveaxis(part, 0, ax)
    return np.sum(part) if np.ndim(edge) == 0 else part


def diff_jvp_edge(t: Any, a: Any, n: int, axis: int, prepend: Any, append: Any, which: str) -> Any:
    """JVP of ``np.diff(a, n, axis, prepend=, append=)`` in ``prepend`` or ``append``: the
    difference with zeros for ``a`` and the other edge."""
    pre = prepend if prepend is np._NoValue else np.zeros(np.shape(prepend))
    app = append if append is np._NoValue else np.zeros(np.shape(append))
    if not is_zero(t):
        if which == "prepend":
            pre = t
        else:
            app = t
    return np.diff(np.zeros(np.shape(a)), n, axis, prepend=pre, append=app)


def diff_jvp(t: Any, a: Any, n: int, axis: int, prepend: Any, append: Any) -> Any:
    """JVP of ``np.diff`` in ``a``: the difference of ``t``, zeros for ``prepend``/``append``."""
    if is_zero(t):
        t = np.zeros(np.shape(a))
    if prepend is np._NoValue and append is np._NoValue:
        return np.diff(t, n, axis)
    if prepend is np._NoValue:
        return np.diff(t, n, axis, append=np.zeros(np.shape(append)))
    if append is np._NoValue:
        return np.diff(t, n, axis, prepend=np.zeros(np.shape(prepend)))
    return np.diff(
        t, n, axis, prepend=np.zeros(np.shape(prepend)), append=np.zeros(np.shape(append))
    )


def gradient_vjp(g: Any, f: Any, spacing: Any, axis: Any, edge_order: int) -> Any:
    """VJP of ``np.gradient(f, *spacing, axis=, edge_order=)`` in ``f``: along each axis the
    transpose of the difference matrix ``D`` (exact for any spacing), without forming it.

    ``D`` is banded: row ``i`` reads columns ``i - 2 .. i + 2`` at most (one-sided edge
    formulas reach two entries in). The columns ``j`` with ``j % 5 == c`` never share a row,
    so ``np.gradient`` of their indicator gives, in row ``i``, the one entry ``D[i, j]``
    of that band; ``(D.T g)[j]`` sums ``D[i, j] g[i]`` over the five rows around ``j``.
    Memory: a few arrays the size of ``f``.
    """
    nd = np.ndim(f)
    if axis is None:
        axes = list(range(nd))
    elif np.ndim(axis) == 0:
        axes = [axis % nd]
    else:
        axes = [ax % nd for ax in axis]
    gs = g
    if len(axes) == 1:
        gs = [g]
    out = np.zeros(np.shape(f))
    for i in range(len(axes)):
        ax = axes[i]
        gi = gs[i]
        if is_zero(gi):
            continue
        n = np.shape(f)[ax]
        rows = np.moveaxis(gi, ax, 0)
        lead = (n,) + (1,) * (nd - 1)
        for c in range(5):
            probe = (np.arange(n) % 5 == c) * 1.0
            if len(spacing) == 0:
                band = np.gradient(probe, edge_order=edge_order)
            else:
                step = spacing[0] if len(spacing) == 1 else spacing[i]
                band = np.gradient(probe, step, edge_order=edge_order)
            r = np.reshape(band, lead) * rows
            wide = np.concatenate(
                [np.zeros((2,) + np.shape(r)[1:]), r, np.zeros((2,) + np.shape(r)[1:])]
            )
            window = (
                wide[0:n] + wide[1 : n + 1] + wide[2 : n + 2] + wide[3 : n + 3] + wide[4 : n + 4]
            )
            out = out + np.moveaxis(window * np.reshape(probe, lead), 0, ax)
    return out


def select_vjp(g: Any, condlist: Any, choicelist: Any) -> Any:
    """VJP of ``np.select(condlist, choicelist, default)`` in ``choicelist``: ``g`` where the
    choice was taken (its condition is the first true one), in the container of the input."""
    parts = []
    taken = np.zeros(np.shape(g), dtype=bool)
    for i in range(len(choicelist)):
        mask = np.logical_and(condlist[i], np.logical_not(taken))
        taken = np.logical_or(taken, condlist[i])
        if is_zero(g):
            parts.append(0.0)
        else:
            parts.append(unbroadcast(g * mask, choicelist[i]))
    return _as_container(choicelist, parts)


def _interp_segments(x: Any, xp: Any, left: Any, right: Any, period: Any) -> Any:
    """``(lo, hi, offset, width, inside, above, keep)`` for each ``x`` of ``np.interp``:
    the indices into ``fp`` of the two knots of its segment, the position of the left knot
    and the segment's width, whether ``x`` lies within ``[xp[0], xp[-1]]`` (or is periodic),
    whether it lies above, and whether the value comes from ``fp`` at all (not from
    ``left``/``right``). The weight of the right knot is
    ``(x - offset) / width * inside + above``.

    Below ``xp[0]`` both knots are the first one, above ``xp[-1]`` the last one. With a
    ``period``, the knots are reduced and sorted as NumPy does, one wrapped knot is added at
    each end, and ``offset`` includes the whole periods between ``x`` and its reduction.
    """
    x = np.asarray(x, dtype=float)
    xp = np.asarray(xp, dtype=float)
    n = np.shape(xp)[0]
    if period is not None:
        period = abs(period)
        order = np.argsort(xp % period)
        reduced = (xp % period)[order]
        knots = np.concatenate([reduced[-1:] - period, reduced, reduced[:1] + period])
        source = np.concatenate([order[-1:], order, order[:1]])
        shift = x - x % period
        seg = np.clip(np.searchsorted(knots, x - shift, "right") - 1, 0, n)
        inside = np.ones(np.shape(x), dtype=bool)
        keep = np.ones(np.shape(x))
        lo = source[seg]
        hi = source[seg + 1]
        width = knots[seg + 1] - knots[seg]
        return lo, hi, knots[seg] + shift, width, inside, 0.0 * keep, keep
    seg = np.clip(np.searchsorted(xp, x, "right") - 1, 0, n - 2)
    below = x < xp[0]
    above = x > xp[-1]
    inside = np.logical_not(np.logical_or(below, above))
    lo = np.where(above, n - 1, seg)
    hi = np.where(below, 0, seg + 1)
    width = np.where(inside, xp[seg + 1] - xp[seg], 1.0)
    keep = inside * 1.0
    if left is None:
        keep = keep + below
    if right is None:
        keep = keep + above
    return lo, hi, xp[seg], width, inside, above * 1.0, keep


def interp_vjp_x(
    g: Any, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """VJP of ``np.interp(x, xp, fp, left, right, period)`` in ``x``: ``g`` times the slope
    of the segment (the right one at a knot), zero outside ``[xp[0], xp[-1]]``."""
    lo, hi, offset, width, inside, above, keep = _interp_segments(x, xp, left, right, period)
    fp = np.asarray(fp)
    slope = (fp[hi] - fp[lo]) / width
    return g * slope * inside


def interp_vjp_fp(
    g: Any, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """VJP of ``np.interp(x, xp, fp, left, right, period)`` in ``fp``: each ``g`` shared
    between the two knots of its segment by the interpolation weights (all to the end knot
    outside the range, nothing where ``left``/``right`` gives the value), scattered with
    ``np.add.at`` (memory of the size of ``x`` plus ``fp``)."""
    if is_zero(g):
        return np.zeros(np.shape(fp))
    lo, hi, offset, width, inside, above, keep = _interp_segments(x, xp, left, right, period)
    theta = (x - offset) / width * inside + above
    gk = np.broadcast_to(g * keep, np.shape(theta))
    knots = np.asarray(fp)
    w = add_at(0.0, knots, np.ravel(lo), np.ravel(gk * (1.0 - theta)))
    return add_at(w, knots, np.ravel(hi), np.ravel(gk * theta))


def _convolve_full(g: Any, na: int, nv: int, mode: str) -> Any:
    """``g`` placed in the full-length output of ``np.convolve`` (zeros elsewhere)."""
    full = na + nv - 1
    lo = min(na, nv)
    start = 0
    if mode == "same":
        start = (lo - 1) // 2
    elif mode == "valid":
        start = lo - 1
    n = np.shape(g)[0]
    return np.concatenate([np.zeros(start), g, np.zeros(full - start - n)])


def convolve_vjp(g: Any, a: Any, v: Any, mode: str) -> Any:
    """VJP of ``np.convolve(a, v, mode)`` in ``a`` (``v`` by symmetry): the full-length
    cotangent correlated with ``v``."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    full = _convolve_full(g, np.size(a), np.size(v), mode)
    return np.convolve(full, np.flip(v), "valid")


def _kron_parts(g: Any, a: Any, b: Any) -> Any:
    """``(G, a, b)`` with ``G`` the cotangent of ``np.kron(a, b)`` with its axes split in
    pairs ``(a_0, b_0, a_1, b_1, ...)`` and ``a``, ``b`` spread over the even and odd ones
    (the one with fewer axes padded with leading ones, as ``np.kron`` does)."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    pairs = tuple(n for both in zip(sa, sb) for n in both)
    a_spread = np.reshape(a, tuple(n for m in sa for n in (m, 1)))
    b_spread = np.reshape(b, tuple(n for m in sb for n in (1, m)))
    return np.reshape(g, pairs), a_spread, b_spread


def kron_vjp_a(g: Any, a: Any, b: Any) -> Any:
    """VJP of ``np.kron(a, b)`` in ``a`` (any dimensions): ``G`` times ``b`` summed over the
    axes of ``b``."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    blocks, _, b_spread = _kron_parts(g, a, b)
    odd = tuple(range(1, np.ndim(blocks), 2))
    return np.reshape(np.sum(blocks * b_spread, odd), np.shape(a))


def kron_vjp_b(g: Any, a: Any, b: Any) -> Any:
    """VJP of ``np.kron(a, b)`` in ``b`` (any dimensions): ``G`` times ``a`` summed over the
    axes of ``a``."""
    if is_zero(g):
        return np.zeros(np.shape(b))
    blocks, a_spread, _ = _kron_parts(g, a, b)
    even = tuple(range(0, np.ndim(blocks), 2))
    return np.reshape(np.sum(blocks * a_spread, even), np.shape(b))


def _take_index(indices: Any, n: int, mode: str) -> Any:
    """The positions ``np.take(..., mode=)`` reads: negative ones wrapped (``'raise'`` and
    ``'wrap'``) or clipped to the ends (``'clip'``)."""
    idx = np.asarray(indices)
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    return idx % n


def take_vjp(g: Any, a: Any, indices: Any, axis: Any, mode: str = "raise") -> Any:
    """VJP of ``np.take(a, indices, axis, mode=)``: ``g`` scattered with ``np.add.at`` onto
    the positions read (repeated indices accumulate; memory of the size of ``a`` plus
    ``g``)."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    if axis is None:
        flat = np.ravel(a)
        idx = _take_index(indices, np.size(a), mode)
        return np.reshape(add_at(0.0, flat, idx, g), np.shape(a))
    ax = axis % np.ndim(a)
    idx = _take_index(indices, np.shape(a)[ax], mode)
    key = tuple([slice(None)] * ax) + (idx,)
    return add_at(0.0, np.asarray(a), key, g)


def take_along_axis_vjp(g: Any, arr: Any, indices: Any, axis: Any) -> Any:
    """VJP of ``np.take_along_axis(arr, indices, axis)``: ``g`` scattered with
    ``np.add.at`` onto the positions it was taken from (repeated indices accumulate)."""
    if is_zero(g):
        return np.zeros(np.shape(arr))
    if axis is None:
        flat = take_along_axis_vjp(g, np.ravel(arr), indices, 0)
        return np.reshape(flat, np.shape(arr))
    return add_at(0.0, np.asarray(arr), _along_axis_key(np.shape(arr), indices, axis), g)


def _along_axis_key(shape: Any, indices: Any, axis: int) -> Any:
    """The fancy index equal to ``take_along_axis``'s reads: ``indices`` along ``axis``,
    open ``arange`` grids on the other axes (broadcast against ``indices``)."""
    nd = len(shape)
    ax = axis % nd
    key = []
    for i in range(nd):
        if i == ax:
            key.append(np.asarray(indices) % shape[ax])
        else:
            grid = [1] * nd
            grid[i] = shape[i]
            key.append(np.reshape(np.arange(shape[i]), grid))
    return tuple(key)


def meshgrid_vjp(g: Any, xi: Any, indexing: str, sparse: bool) -> Any:
    """VJP of ``np.meshgrid(*xi, indexing=, sparse=)``: each output's cotangent summed over
    every axis but its input's (the first two swapped for ``indexing='xy'``)."""
    nd = len(xi)
    parts = []
    for i in range(nd):
        if is_zero(g) or is_zero(g[i]):
            parts.append(np.zeros(np.shape(xi[i])))
            continue
        gi = g[i]
        ax = i
        if indexing == "xy" and nd > 1 and i < 2:
            ax = 1 - i
        others = tuple([k for k in range(nd) if k != ax])
        total = np.sum(gi, others) if not sparse else np.ravel(gi)
        parts.append(np.reshape(total, np.shape(xi[i])))
    return tuple(parts)


_PAD_MODES = (
    "constant",
    "edge",
    "reflect",
    "symmetric",
    "wrap",
    "mean",
    "linear_ramp",
    "maximum",
    "minimum",
    "median",
)
# Modes whose padded entries mix the input's (a linear map per axis), not copy them.
_PAD_LINEAR = ("mean", "linear_ramp")
# Modes padding with a statistic that picks entries of each line (the median of an even
# count: the two middle ones, half each): a map per line and axis, from the values.
_PAD_PICKED = ("maximum", "minimum", "median")


def _check_pad(mode: Any, reflect_type: str) -> None:
    if mode not in _PAD_MODES or reflect_type != "even":
        raise TransformError(
            f"np.pad with mode={mode!r}, reflect_type={reflect_type!r}",
            hint=f"differentiated modes: {', '.join(_PAD_MODES)} (reflect_type='even')",
        )


def pad_vjp(
    g: Any, array: Any, pad_width: Any, mode: Any, reflect_type: str, stat_length: Any = None
) -> Any:
    """VJP of ``np.pad(array, pad_width, mode)``. The modes that copy entries: ``g``
    scattered with ``np.add.at`` onto the entries each output position copies (constant
    padding: none); memory of the size of the input plus the output. ``'mean'`` and
    ``'linear_ramp'`` (``end_values`` constant): the transposed map of each axis.
    ``'maximum'``, ``'minimum'``, ``'median'``: the transposed map of each line of each
    axis, last axis first (the padded entries' gradient goes to the entries picked)."""
    _check_pad(mode, reflect_type)
    if is_zero(g):
        return np.zeros(np.shape(array))
    if mode in _PAD_PICKED:
        out = g
        maps = _picked_maps(array, pad_width, mode, stat_length, True)
        for k in range(np.ndim(array) - 1, -1, -1):
            lines = np.moveaxis(out, k, -1)
            out = np.moveaxis(np.matmul(maps[k], lines[..., None])[..., 0], -1, k)
        return out
    if mode in _PAD_LINEAR:
        out = g
        for k in range(np.ndim(array)):
            m = _pad_matrix(np.shape(array), k, pad_width, mode, stat_length)
            out = np.moveaxis(np.tensordot(m.T, np.moveaxis(out, k, 0), 1), 0, k)
        return out
    if mode == "constant":
        inner = _pad_interior(np.shape(array), pad_width)
        return np.reshape(g[inner], np.shape(array)) * 1.0
    flat = np.ravel(array)
    source = np.pad(np.reshape(np.arange(np.size(array)), np.shape(array)), pad_width, mode)
    out = add_at(0.0, flat, np.ravel(source), np.ravel(g))
    return np.reshape(out, np.shape(array))


def _pad_matrix(shape: Any, k: int, pad_width: Any, mode: str, stat_length: Any) -> Any:
    """The matrix of ``np.pad``'s linear map along axis ``k`` (``'mean'``, or
    ``'linear_ramp'`` without its constant ``end_values``): the identity padded."""
    n = shape[k]
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (len(shape), 2))
    rows = (int(widths[k][0]), int(widths[k][1]))
    if mode == "linear_ramp":
        return np.pad(np.eye(n), (rows, (0, 0)), "linear_ramp", end_values=0.0)
    if stat_length is None:
        return np.pad(np.eye(n), (rows, (0, 0)), "mean")
    stats = np.broadcast_to(np.asarray(stat_length, dtype=int), (len(shape), 2))
    pairs = ((int(stats[k][0]), int(stats[k][1])), (1, 1))
    return np.pad(np.eye(n), (rows, (0, 0)), "mean", stat_length=pairs)


def _picked_maps(
    array: Any, pad_width: Any, mode: str, stat_length: Any, transpose: bool
) -> list[Any]:
    """Per axis ``k``, the maps (shape ``lines + (n + before + after, n)``) of ``np.pad``
    along ``k`` with ``'maximum'``, ``'minimum'`` or ``'median'`` at ``array``'s values: a
    line of the array padded along the axes before ``k`` (as ``np.pad`` pads them in turn)
    to its padded line; transposed with ``transpose``."""
    nd = np.ndim(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (nd, 2))
    stats = None
    if stat_length is not None:
        stats = np.broadcast_to(np.asarray(stat_length, dtype=int), (nd, 2))
    value = np.asarray(array, dtype=float)
    maps = []
    for k in range(nd):
        before, after = int(widths[k][0]), int(widths[k][1])
        lines = np.moveaxis(value, k, -1)
        n = lines.shape[-1]
        m = np.zeros(lines.shape[:-1] + (before + n + after, n))
        m[..., before : before + n, :] = np.eye(n)
        for side, rows in ((0, slice(0, before)), (1, slice(before + n, before + n + after))):
            if rows.start == rows.stop:
                continue
            length = n if stats is None else min(int(stats[k][side]), n)
            cols = slice(0, length) if side == 0 else slice(n - length, n)
            m[..., rows, cols] = _picked_weights(lines[..., cols], mode)[..., None, :]
        value = np.moveaxis(np.matmul(m, lines[..., None])[..., 0], -1, k)
        maps.append(np.swapaxes(m, -1, -2) if transpose else m)
    return maps


def _picked_weights(window: Any, mode: str) -> Any:
    """Weights over the last axis of ``window`` of the entries its statistic picks: one at
    the maximum or minimum, at the median (the two middle entries of an even count: a half
    each)."""
    weights = np.zeros(window.shape)
    length = window.shape[-1]
    if mode == "maximum":
        picks = [(np.argmax(window, -1), 1.0)]
    elif mode == "minimum":
        picks = [(np.argmin(window, -1), 1.0)]
    else:
        order = np.argsort(window, -1)
        middle = [length // 2] if length % 2 else [length // 2 - 1, length // 2]
        picks = [(order[..., i], 1.0 / len(middle)) for i in middle]
    for at, w in picks:
        np.put_along_axis(weights, at[..., None], w, -1)
    return weights


def _pad_interior(shape: Any, pad_width: Any) -> Any:
    """The slices of ``np.pad``'s output that hold the input."""
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (len(shape), 2))
    return tuple(
        [slice(int(widths[i][0]), int(widths[i][0]) + shape[i]) for i in range(len(shape))]
    )


def pad_jvp(
    t: Any, array: Any, pad_width: Any, mode: Any, reflect_type: str, stat_length: Any = None
) -> Any:
    """JVP of ``np.pad``: the tangent padded alike (constant padding and ``linear_ramp``'s
    ``end_values``: zeros)."""
    _check_pad(mode, reflect_type)
    if is_zero(t):
        t = np.zeros(np.shape(array))
    if mode == "linear_ramp":
        return np.pad(t, pad_width, mode, end_values=0.0)
    if mode in _PAD_PICKED:
        maps = _picked_maps(array, pad_width, mode, stat_length, False)
        for k in range(np.ndim(array)):
            lines = np.moveaxis(t, k, -1)
            t = np.moveaxis(np.matmul(maps[k], lines[..., None])[..., 0], -1, k)
        return t
    if mode == "mean":
        return np.pad(t, pad_width, mode, stat_length=stat_length)
    return np.pad(t, pad_width, mode)


# Checks and index computations: no gradient flows through them.
nondiff(
    "shape checks",
    [
        _check_pad,
        _interp_segments,
        _take_index,
        _along_axis_key,
        _pad_interior,
        _pad_matrix,
        _picked_maps,
    ],
)
