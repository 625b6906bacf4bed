"""Helpers of batched backward sweeps (reverse-mode ``jacobian``), as ``_ad.<name>`` there.

A batched cotangent carries one cotangent per row of a Jacobian along a new leading
axis: the cotangent of a value of shape ``s`` has shape ``(B,) + s`` (a Python float's
has shape ``(B,)``; a list's or a dict's is a list or a dict of batched cotangents). The
symbolic zero stays ``0.0``: anything of dimension 0 where a cotangent is expected is
zero, never a batch (the convention of :mod:`s2s_ad.batching`, whose helpers serve here
too: a VJP helper is linear in its cotangent, so its batched tangent is its batched form).

Elementwise adjoints ``g * partial`` broadcast for free, the batch axis being leading;
what sums, scatters, stacks or moves axes is here, shifted past the batch axis. A VJP
without a batched form runs once per row (:func:`rows`): exact, only slower. The
namespace :data:`AD` holds these and the helpers of the forward sweep and of partial
derivatives (which never see a cotangent); a helper of one-row cotangents is not in it,
so a program calling one is not batched (:func:`missing`).
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from . import batching
from .batching import _advanced, _splits_advanced, _zero, batch_size, column, stack
from .emit import AD as ONE_ROW
from .rules import vjps as _vjps

_ndarray = np.ndarray


def rows(f: Callable[[Any], Any], g: Any, like: Any = None) -> Any:
    """``f`` (a one-row VJP) applied to each row of the batched ``g``, stacked (leaf by
    leaf for containers): the fallback of VJPs without a batched form. Each row is
    broadcast to the shape of ``like`` (the primal whose cotangent it is) when that is an
    array or a number: a one-row cotangent may be smaller than its primal."""
    b = batch_size(g)
    if b is None:
        return 0.0
    return shaped(stack([f(column(g, i)) for i in range(b)]), like)


def shaped(g: Any, like: Any) -> Any:
    """The batched array ``g`` broadcast to ``(B,) + shape(like)`` when ``like`` (the primal
    whose cotangent it is) is an array or a number: a one-row cotangent may be smaller."""
    if type(g) is _ndarray and g.ndim and isinstance(like, (_ndarray, float, np.generic)):
        return np.broadcast_to(g, (g.shape[0], *np.shape(like)))
    return g


def unbroadcast(g: Any, x: Any) -> Any:
    """``g`` summed down to ``(B,) + shape(x)`` (undoes NumPy broadcasting)."""
    if isinstance(g, (list, tuple, dict)):
        return g
    return batching.unbroadcast(g, x)


def add(a: Any, b: Any) -> Any:
    """Sum of two batched cotangents of the same structure (a container's cotangent may
    be a list of entries or one array with the entries on axis 1)."""
    if type(a) is _ndarray and type(b) is _ndarray:
        return a + b
    if _zero(a) and not isinstance(a, (list, tuple, dict)):
        return b
    if _zero(b) and not isinstance(b, (list, tuple, dict)):
        return a
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        like = a if isinstance(a, (list, tuple)) else b
        parts = [add(u, v) for u, v in zip(entries(a, like), entries(b, like))]
        return parts if isinstance(like, list) else tuple(parts)
    if isinstance(a, dict):
        return {k: add(a[k], b.get(k, 0.0)) for k in a} | {k: b[k] for k in b if k not in a}
    return a + b


def getitem(g: Any, index: Any) -> Any:
    """Row by row ``g[index]`` for a batched array; an entry of a container's cotangent."""
    if type(g) is _ndarray:
        part = batching.getitem(g, index)
        return part.copy() if isinstance(part, _ndarray) else part
    return ONE_ROW.getitem(g, index)


def written(g: Any, index: Any) -> Any:
    """Row by row ``runtime.written``: ``g[index]`` passing an entry's cotangent only to
    its last write when ``index`` repeats it."""
    part = getitem(g, index)
    if type(g) is not _ndarray or not g.ndim or _zero(part):
        return part
    keep = ONE_ROW.last_writes(g.shape[1:], index)
    if keep is None:
        return part
    return part * keep.reshape((1, *keep.shape) + (1,) * (np.ndim(part) - 1 - keep.ndim))


def keep_last(part: Any, y: Any, index: Any) -> Any:
    """Row by row ``runtime.keep_last`` (``y`` is a primal, ``part`` batched)."""
    if type(part) is not _ndarray or not part.ndim or type(y) is not _ndarray:
        return ONE_ROW.keep_last(part, y, index)
    keep = ONE_ROW.last_writes(y.shape, index)
    if keep is None:
        return part
    return part * keep.reshape((1, *keep.shape) + (1,) * (np.ndim(part) - 1 - keep.ndim))


def _region(index: Any) -> tuple[Any, ...]:
    return (slice(None), *(index if type(index) is tuple else (index,)))


def _scatter(out: Any, index: Any, g: Any) -> Any:
    """Add the batched ``g`` into the batched array ``out`` at the primal ``index``."""
    full = index if type(index) is tuple else (index,)
    if _splits_advanced(full):  # NumPy moves those axes first: row by row
        for i in range(out.shape[0]):
            row = out[i]
            np.add.at(row, index, ONE_ROW.unbroadcast(g[i] if np.ndim(g) else g, row[index]))
        return out
    region = _region(index)
    g = batching.unbroadcast(np.asarray(g), out[region][0])
    if any(_advanced(i) and not isinstance(i, (int, np.integer)) for i in full):
        np.add.at(out, region, g)
    else:
        out[region] += g
    return out


def add_at(x_bar: Any, x: Any, index: Any, g: Any) -> Any:
    """Adjoint of ``x[index]`` read: ``x_bar`` plus the batched ``g`` scattered at ``index``
    (a new value; ``x_bar`` is not modified)."""
    if _zero(g) and not isinstance(g, (list, tuple, dict)):
        return x_bar
    if isinstance(x, (tuple, list)):
        out = list(zeros_like(x) if _zero(x_bar) else entries(x_bar, x))
        if isinstance(index, slice):
            for pos, val in zip(range(*index.indices(len(x))), entries(g, x[index])):
                out[pos] = add(out[pos], unbroadcast(val, x[pos]))
        else:
            out[index] = add(out[index], unbroadcast(g, x[index]))
        return out if isinstance(x, list) else tuple(out)
    if isinstance(x, dict):
        out_d = dict(zeros_like(x) if _zero(x_bar) else x_bar)
        out_d[index] = add(out_d.get(index, 0.0), unbroadcast(g, x[index]))
        return out_d
    b = batch_size(g)
    shape = np.shape(x)
    if _zero(x_bar):
        out_a = np.zeros((b, *shape))
    else:
        out_a = np.array(np.broadcast_to(x_bar, (b, *shape)), dtype=float)
    return _scatter(out_a, index, g)


def add_at_owned(x_bar: Any, x: Any, index: Any, g: Any) -> Any:
    """``add_at`` that may write into ``x_bar`` (an array no other adjoint shares)."""
    if type(x_bar) is _ndarray and x_bar.ndim and not isinstance(x, (tuple, list, dict)):
        if _zero(g):
            return x_bar
        if x_bar.shape[1:] == np.shape(x):
            return _scatter(x_bar, index, g)
    return add_at(x_bar, x, index, g)


def zero_at(x_bar: Any, index: Any) -> Any:
    """``x_bar`` with the entries at ``index`` set to zero in every row (a new value)."""
    if type(x_bar) is _ndarray and x_bar.ndim:
        return zero_at_owned(x_bar.copy(), index)
    if isinstance(x_bar, (list, tuple)):
        out = list(x_bar)
        out[index] = zeros_like(out[index])
        return type(x_bar)(out)
    return ONE_ROW.zero_at(x_bar, index)


def zero_at_owned(x_bar: Any, index: Any) -> Any:
    """``zero_at`` that may write into ``x_bar``."""
    if type(x_bar) is _ndarray and x_bar.ndim:
        full = index if type(index) is tuple else (index,)
        if _splits_advanced(full):
            for row in x_bar:
                row[index] = 0
        else:
            x_bar[_region(index)] = 0
        return x_bar
    return zero_at(x_bar, index)


def zeros_like(x: Any) -> Any:
    """The zero cotangent of ``x``: ``0.0`` per leaf (the batch size is not known here)."""
    if isinstance(x, (tuple, list)):
        parts = [zeros_like(v) for v in x]
        return parts if isinstance(x, list) else tuple(parts)
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    return 0.0


def dense(x_bar: Any, x: Any) -> Any:
    """A fresh cotangent a loop may update element by element (the symbolic zero stays
    zero: the batch size is known only once a cotangent arrives)."""
    if isinstance(x, np.ndarray):
        if _zero(x_bar):
            return 0.0
        return np.array(np.broadcast_to(x_bar, (x_bar.shape[0], *x.shape)), dtype=float)
    if isinstance(x, (list, tuple)):
        return list(entries(x_bar, x))
    if isinstance(x, dict):
        return zeros_like(x) if _zero(x_bar) else dict(x_bar)
    return x_bar


def materialize(g: Any, like: Any) -> Any:
    """``g`` as it is: the batched VJPs take the symbolic zero themselves."""
    return g


def pack(x: Any, parts: Any) -> Any:
    """Adjoint of unpacking ``a, b = x``: the parts' batched cotangents in ``x``'s structure."""
    parts = [0.0 if p is None else p for p in parts]
    if isinstance(x, np.ndarray):
        b = batch_size(*parts)
        if b is None:
            return 0.0
        shape = (b, *x.shape[1:])
        return np.stack(
            [np.zeros(shape) if _zero(p) else np.broadcast_to(p, shape) for p in parts], 1
        )
    if isinstance(x, list):
        return parts
    return tuple(parts)


def entries(g: Any, x: Any) -> Any:
    """The cotangent of a list or tuple ``x`` as a list of its entries' batched
    cotangents (an array rule's VJP gives one array ``(B, len(x), ...)``)."""
    if type(g) is _ndarray and g.ndim > 1 and isinstance(x, (list, tuple)):
        parts = [g[:, k] for k in range(len(x))]
        return parts if isinstance(x, list) else tuple(parts)
    if _zero(g) and isinstance(x, (list, tuple)) and not isinstance(g, (list, tuple)):
        return zeros_like(x)
    return g


def drop_last(xs_bar: Any) -> Any:
    """Adjoint of a list before its last ``append``: all entries but the last."""
    if type(xs_bar) is _ndarray and xs_bar.ndim > 1:
        return [xs_bar[:, k] for k in range(xs_bar.shape[1] - 1)]
    return ONE_ROW.drop_last(xs_bar)


def append_bar(xs_bar: Any, xs: Any, last: Any) -> Any:
    """Adjoint of a list before ``xs.pop()``: the adjoint after it plus the popped one's."""
    out = list(zeros_like(xs)) if _zero(xs_bar) else list(entries(xs_bar, xs))
    out.append(0.0 if last is None else last)
    return out


# --- VJPs with a batched form ------------------------------------------------------------


def dot_vjp_a(g: Any, a: Any, b: Any) -> Any:
    """Batched ``_ad.dot_vjp_a``: a matrix product for vectors and matrices."""
    if _zero(g):
        return 0.0
    if 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2:
        return batching.matmul_vjp_x(g, a, b)
    return rows(lambda r: _vjps.dot_vjp_a(r, a, b), g)


def dot_vjp_b(g: Any, a: Any, b: Any) -> Any:
    """Batched ``_ad.dot_vjp_b``."""
    if _zero(g):
        return 0.0
    if 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2:
        return batching.matmul_vjp_y(g, a, b)
    return rows(lambda r: _vjps.dot_vjp_b(r, a, b), g)


def transpose_vjp(g: Any, axes: Any = None) -> Any:
    """Batched ``_ad.transpose_vjp``: the inverse permutation, past the batch axis."""
    if _zero(g):
        return 0.0
    if isinstance(axes, tuple) and len(axes) == 1 and (axes[0] is None or np.ndim(axes[0])):
        axes = axes[0]
    nd = g.ndim - 1
    if axes is None or len(axes) == 0:
        return batching.transpose(g)
    return batching.transpose(g, tuple(np.argsort([int(ax) % nd for ax in axes])))


def max_vjp(g: Any, a: Any, ans: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Batched ``_ad.max_vjp``: ``g`` broadcast back, times the (shared) split weights."""
    if _zero(g):
        return 0.0
    weights = _vjps.max_vjp(np.ones(np.shape(ans)), a, ans, axis, keepdims)
    return batching.sum_vjp(g, a, axis, keepdims) * weights


def broadcast_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Batched ``np.broadcast_to(g, shape)``: ``g``'s axes after the batch axis aligned
    to the right of ``shape``."""
    if _zero(g):
        return 0.0
    return np.broadcast_to(batching.lift(g, np.empty(shape)), (g.shape[0], *shape))


def unbroadcast_vjp(g: Any, like: Any) -> Any:
    """Batched ``_ad.unbroadcast_vjp``: ``g`` broadcast to ``(B,) + shape(like)``, or
    ``g`` itself where ``like`` is a container."""
    if isinstance(like, (list, tuple, dict)) or like is None:
        return g
    return broadcast_to(g, np.shape(like))


def _one_row_only() -> set[str]:
    """Helpers of one-row cotangents: every helper taking a cotangent first, but those
    that only test it or that have a batched form here."""
    out = set()
    for name, fn in vars(ONE_ROW).items():
        try:
            first = next(iter(inspect.signature(fn).parameters), "")
        except (TypeError, ValueError):
            continue
        if first in ("g", "grads", "xs_bar", "t", "old", "pull", "value", "w", "ta", "tx"):
            out.add(name)
    return out - {"is_zero"}


_BATCHED: dict[str, Any] = {
    "rows": rows,
    "unbroadcast": unbroadcast,
    "add": add,
    "getitem": getitem,
    "written": written,
    "keep_last": keep_last,
    "add_at": add_at,
    "add_at_owned": add_at_owned,
    "zero_at": zero_at,
    "zero_at_owned": zero_at_owned,
    "zeros_like": zeros_like,
    "materialize": materialize,
    "dense": dense,
    "pack": pack,
    "entries": entries,
    "drop_last": drop_last,
    "append_bar": append_bar,
    "sum_vjp": batching.sum_vjp,
    "mean_vjp": batching.mean_vjp,
    "matmul_vjp_x": batching.matmul_vjp_x,
    "matmul_vjp_y": batching.matmul_vjp_y,
    "dot_vjp_a": dot_vjp_a,
    "dot_vjp_b": dot_vjp_b,
    "transpose_vjp": transpose_vjp,
    "transpose": batching.transpose,
    "reshape": batching.reshape,
    "broadcast_to": broadcast_to,
    "unbroadcast_vjp": unbroadcast_vjp,
    "max_vjp": max_vjp,
    "min_vjp": max_vjp,
}
_UNSAFE = _one_row_only() | {"concat", "unless_zero", "einsum_vjp_dops", "mT"}

#: The helpers a batched backward sweep reaches as ``_ad``.
AD = types.SimpleNamespace(
    **{**{k: v for k, v in vars(ONE_ROW).items() if k not in _UNSAFE}, **_BATCHED}
)

_CALLED = re.compile(r"(?<![\w.])(\w+)\.(\w+)")


def missing(text: str, ad: str) -> list[str]:
    """The helpers ``text`` (a batched program) calls as ``<ad>.name`` that
    :data:`AD` does not hold (helpers of one-row cotangents)."""
    return sorted({m.group(2) for m in _CALLED.finditer(text) if m.group(1) == ad} - set(vars(AD)))
