"""Helpers that rule templates call as ``_ad.<name>``.

Every name in ``__all__`` is merged with :mod:`s2s_ad.runtime` into the ``_ad``
namespace of generated code. Each helper takes the cotangent ``g`` first and then the
primal values it needs, all positionally, so a template reads like a call:
``_ad.sum_vjp(g, a, axis, keepdims)``.

Conventions:

* ``g`` has the shape of the primal output, except that it may be the symbolic zero
  ``0.0``; helpers that reshape ``g`` return a zero adjoint for it.
* Results have the shape of the input they are the adjoint of. They may be views of
  ``g`` (slices, ``np.moveaxis``, ``np.reshape``): callers must not update adjoints in
  place without copying first.
* Helpers for a sequence input (``np.concatenate``, ``np.stack``, ``np.array`` of a
  list, builtin ``sum``/``max`` of a list, ``np.einsum`` operands) return the adjoints
  in the same container type as the input: a list for a list, a tuple for a tuple, an
  array for an array.
* The code stays plain NumPy (loops rather than comprehensions over differentiable
  values, no generator expressions, no ``try``), so the transformer can differentiate
  it again for higher derivatives.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

import numpy as np

from .. import duck
from ..runtime import getitem, is_zero, pack, unbroadcast, zeros_like

_ndarray = np.ndarray
_float = float
_float64 = np.float64
_float32 = np.float32

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from collections.abc import Sequence
    from typing import Any

# fmt: off
__all__ = [
    "seq_prod_vjp", "dist_vjp",
    "arange_vjp_start", "arange_vjp_step", "array_vjp", "astype_vjp", "builtin_max_args_vjp",
    "builtin_max_vjp", "builtin_min_args_vjp", "builtin_min_vjp", "builtin_sum_vjp",
    "clip_mask", "concatenate_vjp", "cumsum_vjp", "det_vjp", "diag_vjp", "diagonal_vjp",
    "dot_vjp_a", "dot_vjp_b", "einsum_vjp", "einsum_parts_vjp", "einsum_subscripts",
    "hstack_vjp", "inner_vjp_a", "inner_vjp_b",
    "item_vjp", "linspace_vjp_start", "linspace_vjp_stop", "logsumexp_vjp", "matmul_vjp_x",
    "matmul_vjp_y", "max_vjp", "max_weight", "mean_vjp", "min_vjp", "min_weight", "mT",
    "norm_vjp", "prod_vjp", "repeat_vjp", "safe_log", "solve_vjp_a", "solve_vjp_b", "sort_vjp",
    "stack_vjp", "std_vjp", "sum_vjp", "tensordot_vjp_a", "tensordot_vjp_b", "tile_vjp",
    "tolist_vjp", "trace_vjp", "transpose_vjp", "var_vjp", "vstack_vjp",
    # for higher derivatives (see the last section)
    "add_at_t", "array_vjp_t", "as_grads_t", "einsum_jvp", "einsum_vjp_dops", "item_take",
    "materialize", "norm_order", "norm_vjp_dx", "pack_t", "prod_hvp", "repack", "solve_dual",
    "solve_vjp_a_dct", "sort_take", "transpose_axes", "unless_zero",
]
# fmt: on


# --- small building blocks -------------------------------------------------------


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Reduction axes as a sorted tuple of non-negative ints (``None`` = all)."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(sorted([int(ax) % max(ndim, 1) for ax in axis]))


def _keep(value: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """Re-insert the reduced axes of a reduction's output (so it broadcasts back)."""
    if keepdims or not axes or np.ndim(value) == 0:
        return value
    return np.expand_dims(value, axes)


def _fill(g: Any, shape: tuple[int, ...], like: Any = None) -> Any:
    """``g`` broadcast to ``shape`` as a fresh, writable float array (in the library of
    ``like`` when that is a foreign array: a Dask input gets a lazy, chunked adjoint)."""
    if duck.is_foreign(like):
        return duck.fill_like(g, like)
    return np.broadcast_to(g, shape) + 0.0


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """Number of elements reduced over ``axes``."""
    n = 1
    for ax in axes:
        n *= shape[ax]
    return n


def _like(container: Any, parts: list[Any]) -> Any:
    """``parts`` in the container type of ``container`` (list, tuple or array)."""
    if isinstance(container, np.ndarray):
        return np.stack(parts) if parts else np.zeros(container.shape)
    if isinstance(container, tuple):
        return tuple(parts)
    return parts


def mT(x: Any) -> Any:
    """Swap the last two axes (matrix transpose of a stack of matrices)."""
    return np.swapaxes(x, -1, -2)


def safe_log(x: Any) -> Any:
    """``log(x)`` where ``x > 0``, else ``0`` (for d(x ** y)/dy at ``x <= 0``)."""
    return np.log(np.where(x > 0, x, 1.0))


def _weight(won: Any, x: Any, y: Any) -> Any:
    """``won`` (a comparison of ``x`` and ``y``) as 1.0 / 0.0, with 0.5 on a tie.

    A float array as NumPy arrays (``x`` a plain array, ``y`` one or a float): the
    comparison converted once and the rare ties set afterwards (two passes over the data
    fewer than ``won + 0.5 * (x == y)``; the same values).
    """
    if type(x) is np.ndarray and (type(y) is float or type(y) is np.ndarray):
        out = won.astype(np.float64)
        if type(out) is np.ndarray:
            tie = x == y
            if tie.any():
                out[tie] = 0.5
            return out
    return won + 0.5 * (x == y)


def max_weight(x: Any, y: Any) -> Any:
    """Share of ``x`` in ``maximum(x, y)``: 1 if larger, 0.5 on a tie, else 0."""
    return _weight(x > y, x, y)


def min_weight(x: Any, y: Any) -> Any:
    """Share of ``x`` in ``minimum(x, y)``: 1 if smaller, 0.5 on a tie, else 0."""
    return _weight(x < y, x, y)


def clip_mask(a: Any, a_min: Any, a_max: Any, part: str = "a") -> Any:
    """Where ``np.clip(a, a_min, a_max)`` reads ``a`` (``part='a'``: ``a_min <= a <= a_max``),
    ``a_min`` (``'a_min'``: below it) or ``a_max`` (``'a_max'``: above it), as 1.0 and 0.0.
    A ``None`` bound is no bound. Crossed bounds (``a_min > a_max``) give ``a_max``
    everywhere, as NumPy's ``minimum(maximum(a, a_min), a_max)`` does."""
    crossed = False if a_min is None or a_max is None else np.asarray(a_min) > a_max
    if part == "a_min":
        return ((a < a_min) & ~crossed) * 1.0
    if part == "a_max":
        return ((a > a_max) | crossed) * 1.0
    inside = np.ones(np.shape(a), dtype=bool) & ~crossed
    if a_min is not None:
        inside = inside & (a >= a_min)
    if a_max is not None:
        inside = inside & (a <= a_max)
    return inside * 1.0


# --- reductions --------------------------------------------------------------------


def _fill_fast(g: Any, a: Any, axis: Any, keepdims: bool, count: bool) -> Any:
    """:func:`_fill` of a reduction's cotangent for a NumPy array ``a`` (not 0-d) and a
    float ``g`` (a Python or NumPy float, or a float array shaped like the reduction's
    result): the same values, without ``np.broadcast_to``'s Python-level cost. ``count``
    divides by the number of reduced elements (``mean``). ``None`` for any other case."""
    tg = type(g)
    ndim = a.ndim
    if tg is _float or tg is _float64:
        if axis is None:
            if count:
                g = g / a.size
            out = np.empty(a.shape)
            out.fill(g + 0.0)
            return out
        return None
    if tg is _float32:  # a float32 scalar (a tape's seed): a float32 array, as the general path
        if axis is None:
            if count:
                g = g / a.size
            out = np.empty(a.shape, dtype=_float32)
            out.fill(g)
            return out
        return None
    if tg is not _ndarray or g.dtype.kind != "f" or (axis is None and g.ndim):
        return None
    axes = _axes(axis, ndim)
    if not keepdims and axes:
        kept = list(a.shape)
        for ax in axes:
            kept[ax] = 1
        if g.shape != tuple([n for i, n in enumerate(a.shape) if i not in axes]):
            return None  # a cotangent smaller than the result (it broadcasts): the general path
        g = g.reshape(kept)
    if count:
        g = g / _count(a.shape, axes)
    return np.add(g, 0.0, out=np.empty(a.shape, dtype=g.dtype))


def sum_vjp(g: Any, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """VJP of ``np.sum(a, axis, keepdims=keepdims)``: ``g`` broadcast back."""
    if type(a) is _ndarray and a.ndim:
        out = _fill_fast(g, a, axis, keepdims, False)
        if out is not None:
            return out
    shape = np.shape(a)
    return _fill(_keep(g, _axes(axis, len(shape)), keepdims), shape, a)


def mean_vjp(g: Any, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """VJP of ``np.mean``: ``g`` broadcast back, divided by the count."""
    if type(a) is _ndarray and a.ndim:
        out = _fill_fast(g, a, axis, keepdims, True)
        if out is not None:
            return out
    shape = np.shape(a)
    axes = _axes(axis, len(shape))
    return _fill(_keep(g, axes, keepdims) / _count(shape, axes), shape, a)


def prod_vjp(g: Any, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """VJP of ``np.prod``: the product of the *other* elements, exact at zeros.

    Away from zeros that is ``prod / a``; a slice with one zero sends the product of
    its other elements to the zero's place and nothing elsewhere; with two zeros, all 0.
    """
    a = duck.as_float(a)
    axes = _axes(axis, a.ndim)
    is_zero_at = a == 0.0
    nonzero = np.where(is_zero_at, 1.0, a)
    rest = np.prod(nonzero, axis=axes, keepdims=True)
    zeros = np.sum(is_zero_at, axis=axes, keepdims=True)
    others = np.where(zeros == 0, rest / nonzero, np.where(is_zero_at & (zeros == 1), rest, 0.0))
    return _keep(g, axes, keepdims) * others


def max_vjp(g: Any, a: Any, ans: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """VJP of ``np.max``: ``g`` split equally among the maximal elements (as JAX)."""
    a = duck.as_array(a)
    axes = _axes(axis, a.ndim)
    hit = a == _keep(ans, axes, keepdims)
    # (no entry is the extremum where ``initial=`` is: no gradient there)
    return _keep(g, axes, keepdims) * hit / np.maximum(np.sum(hit, axis=axes, keepdims=True), 1)


def min_vjp(g: Any, a: Any, ans: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """VJP of ``np.min``: ``g`` split equally among the minimal elements."""
    return max_vjp(g, a, ans, axis, keepdims)


def logsumexp_vjp(g: Any, a: Any, ans: Any, axis: Any = 0, keepdims: bool = False) -> Any:
    """VJP of ``np.logaddexp.reduce``: ``g`` times the softmax of ``a`` along ``axis``."""
    axes = _axes(axis, np.ndim(a))
    return _keep(g, axes, keepdims) * np.exp(a - _keep(ans, axes, keepdims))


def var_vjp(g: Any, a: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """VJP of ``np.var``: ``2 g (a - mean) / (n - ddof)``."""
    a = duck.as_array(a)
    axes = _axes(axis, a.ndim)
    centered = a - np.mean(a, axis=axes, keepdims=True)
    return _keep(g, axes, keepdims) * (2.0 / (_count(a.shape, axes) - ddof)) * centered


def std_vjp(
    g: Any, a: Any, ans: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False
) -> Any:
    """VJP of ``np.std``: ``g (a - mean) / ((n - ddof) std)``, zero where ``std == 0``."""
    a = duck.as_array(a)
    axes = _axes(axis, a.ndim)
    std = _keep(ans, axes, keepdims)
    scale = np.where(std > 0, _keep(g, axes, keepdims) / np.where(std > 0, std, 1.0), 0.0)
    centered = a - np.mean(a, axis=axes, keepdims=True)
    return scale * centered / (_count(a.shape, axes) - ddof)


def _vector_norm_vjp(g: Any, x: Any, ans: Any, ord: Any, axes: tuple[int, ...]) -> Any:
    """VJP of a vector p-norm over ``axes``; ``g`` and ``ans`` have kept dims."""
    nonzero = ans > 0
    safe = np.where(nonzero, ans, 1.0)
    if ord is None or ord == 2:
        return np.where(nonzero, g / safe, 0.0) * x
    if ord == 1:
        return g * np.sign(x)
    if ord == 0:
        return np.zeros(x.shape)
    if ord == np.inf or ord == -np.inf:
        hit = np.abs(x) == ans
        return g * np.sign(x) * hit / np.sum(hit, axis=axes, keepdims=True)
    scale = np.where(nonzero, g / safe ** (ord - 1), 0.0)
    return scale * np.sign(x) * np.abs(x) ** (ord - 1)


def _matrix_norm_vjp(g: Any, x: Any, ans: Any, ord: Any) -> Any:
    """VJP of a matrix norm over the last two axes; ``g`` and ``ans`` have kept dims."""
    if ord is None or ord == "fro":
        return _vector_norm_vjp(g, x, ans, None, (-2, -1))
    if ord == "nuc" or ord == 2 or ord == -2:
        u, _, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return g * (u @ vh)
        k = 0 if ord == 2 else -1  # the largest or the smallest singular value
        return g * (u[..., :, [k]] @ vh[..., [k], :])
    over = -2 if ord in (1, -1) else -1
    sums = np.sum(np.abs(x), axis=over, keepdims=True)
    hit = sums == ans
    return g * np.sign(x) * hit / np.sum(hit, axis=(-2, -1), keepdims=True)


def norm_vjp(
    g: Any, x: Any, ans: Any, ord: Any = None, axis: Any = None, keepdims: bool = False
) -> Any:
    """VJP of ``np.linalg.norm`` (vector and matrix norms; zero gradient at zero)."""
    x = duck.as_float(x)
    if axis is None:
        matrix = ord is not None and x.ndim == 2
        axes = _axes(None, x.ndim)
    else:
        axes = _axes(axis, x.ndim)
        matrix = len(axes) == 2
    if is_zero(g):
        return np.zeros(x.shape)
    g = _keep(g, axes, keepdims)
    ans = _keep(ans, axes, keepdims)
    if not matrix:
        return _vector_norm_vjp(g, x, ans, ord, axes)
    if axis is not None:
        if np.ndim(g) < x.ndim:  # a matrix reduced to a scalar: give it its kept dims
            g = np.reshape(g, (1, 1))
            ans = np.reshape(ans, (1, 1))
        axis = (int(axis[0]) % x.ndim, int(axis[1]) % x.ndim)
        ends = (-2, -1)
        moved = _matrix_norm_vjp(
            np.moveaxis(g, axis, ends),
            np.moveaxis(x, axis, ends),
            np.moveaxis(ans, axis, ends),
            ord,
        )
        return np.moveaxis(moved, ends, axis)
    return _matrix_norm_vjp(g, x, ans, ord)


def cumsum_vjp(g: Any, a: Any, axis: Any = None) -> Any:
    """VJP of ``np.cumsum``: the reversed cumulative sum of ``g``."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    if axis is None:
        return np.reshape(np.cumsum(np.ravel(g)[::-1])[::-1], np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def sort_vjp(g: Any, a: Any, axis: Any = -1) -> Any:
    """VJP of ``np.sort``: ``g`` sent back to where each sorted element came from."""
    a = np.asarray(a)
    if axis is None:
        out = np.zeros(a.size)
        out[np.argsort(a, axis=None, kind="stable")] = np.ravel(g)
        return np.reshape(out, a.shape)
    out = np.zeros(a.shape)
    np.put_along_axis(out, np.argsort(a, axis=axis, kind="stable"), g, axis)
    return out


# --- linear algebra ----------------------------------------------------------------


def _tensordot_axes(axes: Any, nda: int, ndb: int) -> tuple[list[int], list[int]]:
    """``np.tensordot``'s ``axes`` as two lists of non-negative axis numbers."""
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(nda - n, nda)), list(range(n))
    ax_a, ax_b = axes
    ax_a = [ax_a] if np.ndim(ax_a) == 0 else list(ax_a)
    ax_b = [ax_b] if np.ndim(ax_b) == 0 else list(ax_b)
    return [int(ax) % nda for ax in ax_a], [int(ax) % ndb for ax in ax_b]


def tensordot_vjp_a(g: Any, a: Any, b: Any, axes: Any = 2) -> Any:
    """VJP of ``np.tensordot(a, b, axes)`` with respect to ``a``."""
    a, b = duck.as_array(a), duck.as_array(b)
    if is_zero(g):
        return np.zeros(a.shape)
    ax_a, ax_b = _tensordot_axes(axes, a.ndim, b.ndim)
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    g = duck.as_array(g)
    res = np.tensordot(g, b, (list(range(len(free_a), g.ndim)), free_b))
    pairs = sorted(zip(ax_b, ax_a))
    return np.transpose(res, np.argsort(free_a + [i for _, i in pairs]).tolist())


def tensordot_vjp_b(g: Any, a: Any, b: Any, axes: Any = 2) -> Any:
    """VJP of ``np.tensordot(a, b, axes)`` with respect to ``b``."""
    a, b = duck.as_array(a), duck.as_array(b)
    if is_zero(g):
        return np.zeros(b.shape)
    ax_a, ax_b = _tensordot_axes(axes, a.ndim, b.ndim)
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    res = np.tensordot(a, g, (free_a, list(range(len(free_a)))))
    pairs = sorted(zip(ax_a, ax_b))
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    return np.transpose(res, np.argsort([j for _, j in pairs] + free_b).tolist())


def dot_vjp_a(g: Any, a: Any, b: Any) -> Any:
    """VJP of ``np.dot(a, b)`` with respect to ``a`` (every ``ndim`` case)."""
    nda, ndb = np.ndim(a), np.ndim(b)
    if nda == 0 or ndb == 0:
        return unbroadcast(g * b, a)
    return tensordot_vjp_a(g, a, b, ([nda - 1], [max(ndb - 2, 0)]))


def dot_vjp_b(g: Any, a: Any, b: Any) -> Any:
    """VJP of ``np.dot(a, b)`` with respect to ``b`` (every ``ndim`` case)."""
    nda, ndb = np.ndim(a), np.ndim(b)
    if nda == 0 or ndb == 0:
        return unbroadcast(g * a, b)
    return tensordot_vjp_b(g, a, b, ([nda - 1], [max(ndb - 2, 0)]))


def inner_vjp_a(g: Any, a: Any, b: Any) -> Any:
    """VJP of ``np.inner(a, b)`` (contraction over both last axes) for ``a``."""
    nda, ndb = np.ndim(a), np.ndim(b)
    if nda == 0 or ndb == 0:
        return unbroadcast(g * b, a)
    return tensordot_vjp_a(g, a, b, ([nda - 1], [ndb - 1]))


def inner_vjp_b(g: Any, a: Any, b: Any) -> Any:
    """VJP of ``np.inner(a, b)`` for ``b``."""
    nda, ndb = np.ndim(a), np.ndim(b)
    if nda == 0 or ndb == 0:
        return unbroadcast(g * a, b)
    return tensordot_vjp_b(g, a, b, ([nda - 1], [ndb - 1]))


_ARRAY_HOLDERS = duck.ARRAY_HOLDERS


def _held(x: Any) -> Any:
    """A tf Variable's array, as ``np.asarray`` gives it (``__array__``), else ``x``."""
    return x.__array__() if type(x) in _ARRAY_HOLDERS else x


def matmul_vjp_x(g: Any, x: Any, y: Any) -> Any:
    """VJP of ``x @ y`` for ``x`` (1-D operands and batch broadcasting as ``np.matmul``)."""
    if type(g) is _ndarray and type(x) is _ndarray and type(y) is _ndarray:  # fast path
        if y.ndim == 1:
            return unbroadcast(g[..., None] * y, x)
        if x.ndim == 1:
            return unbroadcast((y @ g[..., None])[..., 0], x)
        return unbroadcast(g @ (y.T if y.ndim == 2 else mT(y)), x)
    if type(y) in _ARRAY_HOLDERS or type(x) in _ARRAY_HOLDERS:  # a layer's kernel Variable
        return matmul_vjp_x(g, _held(x), _held(y))
    x, y = duck.as_array(x), duck.as_array(y)
    if is_zero(g):
        return np.zeros_like(x, dtype=float) if duck.is_foreign(x) else np.zeros(x.shape)
    g = duck.as_array(g)
    if y.ndim == 1:
        gx = g[..., None] * y
    elif x.ndim == 1:
        gx = (y @ g[..., None])[..., 0]
    else:
        gx = g @ mT(y)
    return unbroadcast(gx, x)


def matmul_vjp_y(g: Any, x: Any, y: Any) -> Any:
    """VJP of ``x @ y`` for ``y``."""
    if type(g) is _ndarray and type(x) is _ndarray and type(y) is _ndarray:  # fast path
        if x.ndim == 1:
            return unbroadcast(x[:, None] * g[..., None, :] if y.ndim > 1 else g * x, y)
        xt = x.T if x.ndim == 2 else mT(x)
        if y.ndim == 1:
            return unbroadcast((xt @ g[..., None])[..., 0], y)
        return unbroadcast(xt @ g, y)
    if type(y) in _ARRAY_HOLDERS or type(x) in _ARRAY_HOLDERS:  # a layer's kernel Variable
        return matmul_vjp_y(g, _held(x), _held(y))
    x, y = duck.as_array(x), duck.as_array(y)
    if is_zero(g):
        return np.zeros_like(y, dtype=float) if duck.is_foreign(y) else np.zeros(y.shape)
    g = duck.as_array(g)
    if x.ndim == 1:
        gy = x[:, None] * g[..., None, :] if y.ndim > 1 else g * x
    elif y.ndim == 1:
        gy = (mT(x) @ g[..., None])[..., 0]
    else:
        gy = mT(x) @ g
    return unbroadcast(gy, y)


def _einsum_terms(subscripts: str, ndims: Sequence[int]) -> tuple[list[str], str]:
    """Input terms and output term of an einsum, ellipses replaced by fresh letters."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    terms = lhs.split(",")
    free = [c for c in string.ascii_letters if c not in spec]
    widths = [nd - len(t) + 3 for t, nd in zip(terms, ndims) if "..." in t]
    ell = "".join(free[: max(widths, default=0)])
    full = []
    for term, nd in zip(terms, ndims):
        if "..." in term:
            width = nd - len(term) + 3
            term = term.replace("...", ell[len(ell) - width :])
        full.append(term)
    if arrow:
        return full, out.replace("...", ell)
    letters = "".join(terms).replace(".", "")
    single = sorted([c for c in set(letters) if letters.count(c) == 1])
    return full, ell + "".join(single)


def einsum_vjp(g: Any, subscripts: str, operands: Sequence[Any]) -> tuple[Any, ...]:
    """VJPs of ``np.einsum(subscripts, *operands)``: a tuple, one adjoint per operand.

    The adjoint of each operand is itself an einsum of ``g`` with the other operands;
    indices summed only inside that operand are broadcast back (a ``ones`` factor) and
    repeated indices (``'ii->i'``) put ``g`` back on the diagonal (an ``eye`` factor).
    """
    ops = [duck.as_array(op) for op in operands]
    if is_zero(g):
        return tuple([np.zeros(op.shape) for op in ops])
    terms, out = _einsum_terms(subscripts, [op.ndim for op in ops])
    sizes: dict[str, int] = {}
    for term, op in zip(terms, ops):
        for letter, n in zip(term, op.shape):
            sizes[letter] = max(sizes.get(letter, 1), n)
    spare = [c for c in string.ascii_letters if c not in sizes]
    grads = []
    for i, (term, op) in enumerate(zip(terms, ops)):
        unique = "".join(dict.fromkeys(term))
        in_terms, in_ops = [out], [g]
        for j in range(len(ops)):
            if j != i:
                in_terms.append(terms[j])
                in_ops.append(ops[j])
        present = "".join(in_terms)
        for letter in unique:
            if letter not in present:
                in_terms.append(letter)
                in_ops.append(np.ones(sizes[letter]))
        res = np.einsum(",".join(in_terms) + "->" + unique, *in_ops)
        if len(unique) < len(term):
            res = _einsum_diagonal(res, unique, term, sizes, spare)
        grads.append(unbroadcast(res, op))
    return tuple(grads)


def einsum_subscripts(first: Any, rest: Sequence[Any]) -> str:
    """The subscripts string of a call ``np.einsum(first, *rest)``: ``first`` itself, or
    built from the sublists of the interleaved form ``np.einsum(op0, sublist0, op1,
    sublist1, ..., [sublistout])``."""
    if isinstance(first, str):
        return first
    parts = (first,) + tuple(rest)
    terms = []
    for k in range(1, len(parts), 2):
        terms.append(_sublist_term(parts[k]))
    spec = ",".join(terms)
    if len(parts) % 2 == 1:
        spec += "->" + _sublist_term(parts[-1])
    return spec


def _sublist_term(sublist: Sequence[Any]) -> str:
    term = ""
    for axis in sublist:
        term += "..." if axis is Ellipsis else string.ascii_letters[axis]
    return term


def einsum_parts_vjp(g: Any, first: Any, rest: Sequence[Any]) -> tuple[Any, ...]:
    """VJPs of ``np.einsum(first, *rest)`` in either form: one entry for ``first`` and
    one per entry of ``rest`` (``0.0`` for the subscripts string and the sublists)."""
    if isinstance(first, str):
        return (0.0,) + tuple(einsum_vjp(g, first, rest))
    parts = (first,) + tuple(rest)
    count = len(parts) // 2
    ops = [parts[2 * k] for k in range(count)]
    bars = einsum_vjp(g, einsum_subscripts(first, rest), ops)
    out = []
    for k in range(len(parts)):
        out.append(bars[k // 2] if k % 2 == 0 and k // 2 < count else 0.0)
    return tuple(out)


def _einsum_diagonal(
    res: Any, unique: str, term: str, sizes: dict[str, int], spare: list[str]
) -> Any:
    """Spread ``res`` (indexed by ``unique``) onto the repeated indices of ``term``."""
    seen: set[str] = set()
    target, eyes, eye_terms = "", [], []
    for letter in term:
        if letter in seen:
            fresh = spare[len(eyes)]
            target += fresh
            eye_terms.append(letter + fresh)
            eyes.append(np.eye(sizes[letter]))
        else:
            seen.add(letter)
            target += letter
    return np.einsum(",".join([unique] + eye_terms) + "->" + target, res, *eyes)


def diagonal_vjp(g: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """VJP of ``np.diagonal(a, offset, axis1, axis2)``: ``g`` written on that diagonal."""
    shape = np.shape(a)
    axis1, axis2 = axis1 % len(shape), axis2 % len(shape)
    rest = [n for i, n in enumerate(shape) if i not in (axis1, axis2)]
    out = np.zeros(tuple(rest) + (shape[axis1], shape[axis2]))
    length = np.shape(g)[-1] if np.ndim(g) else 0
    rows = np.arange(length) + max(-offset, 0)
    cols = np.arange(length) + max(offset, 0)
    out[..., rows, cols] = g
    return np.moveaxis(out, (-2, -1), (axis1, axis2))


def trace_vjp(g: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """VJP of ``np.trace``: ``g`` on the diagonal of every matrix."""
    diag = np.diagonal(np.zeros(np.shape(a)), offset, axis1, axis2)
    return diagonal_vjp(np.broadcast_to(np.expand_dims(g, -1), diag.shape), a, offset, axis1, axis2)


def diag_vjp(g: Any, v: Any, k: int = 0) -> Any:
    """VJP of ``np.diag(v, k)``: the diagonal of ``g`` (1-D ``v``) or ``g`` on it (2-D)."""
    if is_zero(g):
        return np.zeros(np.shape(v))
    if np.ndim(v) == 1:
        return np.diag(g, k)
    return diagonal_vjp(g, v, k, 0, 1)


def det_vjp(g: Any, a: Any, ans: Any) -> Any:
    """VJP of ``np.linalg.det``: ``g det(a) inv(a).T``."""
    return np.expand_dims(g * ans, (-2, -1)) * mT(np.linalg.inv(a))


def solve_vjp_b(g: Any, a: Any, b: Any) -> Any:
    """VJP of ``np.linalg.solve(a, b)`` for ``b``: ``solve(a.T, g)``."""
    a, b = np.asarray(a), np.asarray(b)
    if is_zero(g):
        return np.zeros(b.shape)
    if b.ndim == 1:
        gb = np.linalg.solve(mT(a), np.asarray(g)[..., None])[..., 0]
    else:
        gb = np.linalg.solve(mT(a), g)
    return unbroadcast(gb, b)


def solve_vjp_a(g: Any, a: Any, b: Any, ans: Any) -> Any:
    """VJP of ``np.linalg.solve(a, b)`` for ``a``: ``-solve(a.T, g) @ ans.T``."""
    a, b = np.asarray(a), np.asarray(b)
    if is_zero(g):
        return np.zeros(a.shape)
    if b.ndim == 1:
        gb = np.linalg.solve(mT(a), np.asarray(g)[..., None])
        return unbroadcast(-gb * np.asarray(ans)[..., None, :], a)
    return unbroadcast(-np.linalg.solve(mT(a), g) @ mT(ans), a)


# --- shape and copy operations ----------------------------------------------------


def transpose_vjp(g: Any, axes: Any = None) -> Any:
    """VJP of ``np.transpose(a, axes)`` and of ``a.transpose(*axes)``."""
    if is_zero(g):
        return g
    if isinstance(axes, tuple) and len(axes) == 1 and (axes[0] is None or np.ndim(axes[0])):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return np.transpose(g)
    ndim = np.ndim(g)
    return np.transpose(g, np.argsort([int(ax) % ndim for ax in axes]))


def _cut(g: Any, xs: Any, sizes: list[int], axis: int) -> Any:
    """``g`` cut along ``axis`` into pieces of ``sizes``, shaped and typed like ``xs``."""
    moved = np.moveaxis(g, axis, 0)
    parts = []
    start = 0
    for x, n in zip(xs, sizes):
        parts.append(np.reshape(np.moveaxis(moved[start : start + n], 0, axis), np.shape(x)))
        start = start + n
    return _like(xs, parts)


def concatenate_vjp(g: Any, arrays: Any, axis: Any = 0) -> Any:
    """VJP of ``np.concatenate(arrays, axis)``: ``g`` cut back into the pieces."""
    if is_zero(g):
        return zeros_like(arrays)
    if axis is None:
        return _cut(np.ravel(g), arrays, [int(np.size(x)) for x in arrays], 0)
    axis = int(axis) % np.ndim(g)
    return _cut(g, arrays, [np.shape(x)[axis] for x in arrays], axis)


def stack_vjp(g: Any, arrays: Any, axis: int = 0) -> Any:
    """VJP of ``np.stack(arrays, axis)``: the slices of ``g`` along ``axis``."""
    if is_zero(g):
        return zeros_like(arrays)
    moved = np.moveaxis(g, int(axis) % np.ndim(g), 0)
    parts = []
    for i in range(len(arrays)):
        parts.append(unbroadcast(moved[i], arrays[i]))
    return _like(arrays, parts)


def hstack_vjp(g: Any, tup: Any) -> Any:
    """VJP of ``np.hstack(tup)`` (axis 0 for 1-D pieces, else axis 1)."""
    if is_zero(g):
        return zeros_like(tup)
    shapes = [np.shape(np.atleast_1d(x)) for x in tup]
    axis = 0 if len(shapes[0]) == 1 else 1
    return _cut(g, tup, [s[axis] for s in shapes], axis)


def vstack_vjp(g: Any, tup: Any) -> Any:
    """VJP of ``np.vstack(tup)`` (pieces seen as at least 2-D, joined on axis 0)."""
    if is_zero(g):
        return zeros_like(tup)
    return _cut(g, tup, [np.shape(np.atleast_2d(x))[0] for x in tup], 0)


def tile_vjp(g: Any, A: Any, reps: Any) -> Any:
    """VJP of ``np.tile(A, reps)``: the sum of ``g`` over the tiles."""
    shape = np.shape(A)
    if is_zero(g):
        return np.zeros(shape)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple([int(r) for r in reps])
    d = max(len(shape), len(reps))
    full = (1,) * (d - len(shape)) + tuple(shape)
    reps = (1,) * (d - len(reps)) + reps
    split = []
    for r, n in zip(reps, full):
        split += [r, n]
    summed = np.sum(np.reshape(g, split), axis=tuple(range(0, 2 * d, 2)))
    return np.reshape(summed, shape)


def repeat_vjp(g: Any, a: Any, repeats: Any, axis: Any = None) -> Any:
    """VJP of ``np.repeat(a, repeats, axis)``: ``g`` summed over each run of copies."""
    shape = np.shape(a)
    if is_zero(g):
        return np.zeros(shape)
    if axis is None:
        base = (int(np.prod(shape)),)
        axis = 0
    else:
        axis = int(axis) % len(shape)
        base = tuple(shape)
    n = base[axis]
    if np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        split = base[:axis] + (n, r) + base[axis + 1 :]
        return np.reshape(np.sum(np.reshape(g, split), axis=axis + 1), shape)
    moved = np.moveaxis(np.asarray(g), axis, 0)
    out = np.zeros((n,) + moved.shape[1:])
    np.add.at(out, np.repeat(np.arange(n), repeats), moved)
    return np.reshape(np.moveaxis(out, 0, axis), shape)


def _linspace_vjp(g: Any, x: Any, weights: Any, axis: int) -> Any:
    if isinstance(g, tuple):
        raise NotImplementedError("gradient of np.linspace(..., retstep=True)")
    if is_zero(g):
        return np.zeros(np.shape(x))
    return unbroadcast(np.moveaxis(np.asarray(g), axis, -1) @ weights, x)


def linspace_vjp_start(
    g: Any, start: Any, num: int = 50, endpoint: bool = True, axis: int = 0
) -> Any:
    """VJP of ``np.linspace`` for ``start``: sample ``k`` weighs ``1 - k / (num - 1)``."""
    return _linspace_vjp(g, start, 1.0 - np.linspace(0.0, 1.0, num, endpoint=endpoint), axis)


def linspace_vjp_stop(
    g: Any, stop: Any, num: int = 50, endpoint: bool = True, axis: int = 0
) -> Any:
    """VJP of ``np.linspace`` for ``stop``: sample ``k`` weighs ``k / (num - 1)``."""
    return _linspace_vjp(g, stop, np.linspace(0.0, 1.0, num, endpoint=endpoint), axis)


def arange_vjp_start(g: Any, stop: Any) -> Any:
    """VJP of ``np.arange(start, stop, step)`` for ``start`` (zero for ``np.arange(stop)``)."""
    if stop is None:  # the single argument is the stop: the values do not depend on it
        return 0.0
    return np.sum(g)


def arange_vjp_step(g: Any) -> Any:
    """VJP of ``np.arange`` for ``step``: element ``k`` is ``start + k * step``."""
    return np.sum(g * np.arange(np.size(g)))


def array_vjp(g: Any, obj: Any, dtype: Any = None) -> Any:
    """VJP of ``np.array(obj, dtype)`` / ``np.asarray``: ``g`` in the structure of ``obj``.

    A (nested) list or tuple gets a list or tuple of adjoints; an integer ``dtype``
    cuts the gradient (zeros).
    """
    if is_zero(g) or (dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact)):
        return zeros_like(obj)
    if isinstance(obj, (list, tuple)):
        g = np.reshape(g, np.shape(obj))
        parts = []
        for i in range(len(obj)):
            parts.append(array_vjp(g[i], obj[i]))
        return _like(obj, parts)
    if np.shape(g) != np.shape(obj):
        return np.reshape(g, np.shape(obj))
    return g


def astype_vjp(g: Any, x: Any, dtype: Any) -> Any:
    """VJP of ``x.astype(dtype)``: ``g`` for float dtypes, zeros for integer ones."""
    if np.issubdtype(np.dtype(dtype), np.inexact):
        return g
    return np.zeros(np.shape(x))


def item_vjp(g: Any, x: Any, args: tuple[Any, ...] = ()) -> Any:
    """VJP of ``x.item(*args)``: ``g`` at the element read, zeros elsewhere."""
    shape = np.shape(x)
    out = np.zeros(shape)
    out[_item_index(shape, args)] = g
    return out


def _item_index(shape: tuple[int, ...], args: tuple[Any, ...]) -> Any:
    """The index of the element ``x.item(*args)`` reads, for an ``x`` of ``shape``."""
    if len(args) == 0:
        return (0,) * len(shape)
    if len(args) == 1 and np.ndim(args[0]) == 0:
        return np.unravel_index(args[0], shape)
    return tuple(args[0]) if len(args) == 1 else args


def tolist_vjp(g: Any, x: Any) -> Any:
    """VJP of ``x.tolist()``: the nested-list cotangent as an array of ``x``'s shape."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    return np.reshape(np.array(g, dtype=float), np.shape(x))


# --- Python builtins ---------------------------------------------------------------


def builtin_sum_vjp(g: Any, iterable: Any) -> Any:
    """VJP of ``sum(iterable)``: ``g`` for every element (an array: over axis 0; a dict's
    or a set's entries are keys, which carry none)."""
    if isinstance(iterable, (dict, set, frozenset)):
        return 0.0
    if isinstance(iterable, np.ndarray):
        return _fill(g, iterable.shape)
    parts = []
    for x in iterable:
        parts.append(unbroadcast(g, x))
    return _like(iterable, parts)


def _hits(a: Any, b: Any, args: tuple[Any, ...], ans: Any) -> Any:
    """How many of the arguments of ``max(a, b, *args)`` equal the result."""
    hits = 1.0 * (a == ans) + 1.0 * (b == ans)
    for x in args:
        hits = hits + 1.0 * (x == ans)
    return hits


def builtin_max_vjp(g: Any, a: Any, b: Any, args: tuple[Any, ...], ans: Any) -> Any:
    """VJP of builtin ``max`` for ``a``: ``max(a, b, *args)`` or ``max(a)`` of an iterable.

    The arguments equal to the result share ``g`` equally (so ``min`` has the same VJP).
    For ``b``'s adjoint call it with ``a`` and ``b`` swapped. Over an iterable the
    adjoint is a list/tuple/array with the share of ``g`` at the extremal elements.
    """
    if b is not None:
        return g * (a == ans) / _hits(a, b, args, ans)
    if isinstance(a, (dict, set, frozenset)):
        return 0.0  # ``max(d)``: a key, which carries no gradient
    if isinstance(a, np.ndarray):
        hit = a == ans
        return g * hit / np.sum(hit)
    share = g / sum([1.0 * (x == ans) for x in a])
    parts = []
    for x in a:
        parts.append(share * (x == ans))
    return _like(a, parts)


def builtin_min_vjp(g: Any, a: Any, b: Any, args: tuple[Any, ...], ans: Any) -> Any:
    """VJP of builtin ``min`` for ``a`` (see :func:`builtin_max_vjp`)."""
    return builtin_max_vjp(g, a, b, args, ans)


def builtin_max_args_vjp(g: Any, a: Any, b: Any, args: tuple[Any, ...], ans: Any) -> Any:
    """VJPs of the third and later arguments of ``max(a, b, *args)``: a tuple."""
    share = g / _hits(a, b, args, ans)
    parts = []
    for x in args:
        parts.append(share * (x == ans))
    return tuple(parts)


def builtin_min_args_vjp(g: Any, a: Any, b: Any, args: tuple[Any, ...], ans: Any) -> Any:
    """VJPs of the third and later arguments of ``min(a, b, *args)``: a tuple."""
    return builtin_max_args_vjp(g, a, b, args, ans)


def seq_prod_vjp(g: Any, seq: Any, ans: Any) -> list[Any]:
    """Adjoint of ``math.prod(seq)``: each element gets ``g`` times the others' product."""
    out = []
    for k in range(len(seq)):
        rest = 1.0
        for j, value in enumerate(seq):
            if j != k:
                rest = rest * value
        out.append(g * rest)
    return out if isinstance(seq, list) else type(seq)(out)


def dist_vjp(g: Any, p: Any, q: Any, ans: Any) -> list[Any]:
    """Adjoint of ``math.dist(p, q)`` with respect to ``p``."""
    scale = 0.0 if ans == 0 else g / ans
    out = [scale * (a - b) for a, b in zip(p, q)]
    return out if isinstance(p, list) else type(p)(out)


# --- for higher derivatives ---------------------------------------------------------------
#
# Differentiating generated code again (``grad(grad(f))``) differentiates the helpers above;
# their rules (s2s_ad/rules/generated_rules.py) call these. The first group is linear in
# its first argument and closed under transposition (each one's transpose is a helper
# here or above), so those rules can be registered in turn; the second group (``prod_hvp``
# onwards, but for ``norm_order``, which has no derivative) holds second derivatives that
# appear only in second-order code and are differentiated from their source.


def materialize(g: Any, like: Any) -> Any:
    """``g`` with the symbolic zero (``0.0``/``None``) replaced by dense zeros shaped like
    ``like``; containers entry by entry. A nonzero array is returned as it is (no copy)."""
    if isinstance(like, (list, tuple)):
        parts = []
        for i in range(len(like)):
            parts.append(materialize(0.0 if is_zero(g) else g[i], like[i]))
        kind = g if isinstance(g, (list, tuple)) else like
        return parts if isinstance(kind, list) else tuple(parts)  # namedtuples: a tuple
    if isinstance(like, dict):
        out = {}
        for key in like:
            out[key] = materialize(0.0 if is_zero(g) else g.get(key, 0.0), like[key])
        return out
    if is_zero(g):
        if isinstance(like, np.ndarray) and np.issubdtype(like.dtype, np.inexact):
            return np.zeros(like.shape, dtype=like.dtype)
        return np.zeros(np.shape(like))
    return g


def unless_zero(x: Any, guard: Any) -> Any:
    """``x``, or the symbolic zero ``0.0`` when ``guard`` is the symbolic zero (or ``None``).

    Guards a cotangent whose value does not matter because the primal it belongs to was a
    symbolic zero (the helpers return it unchanged; its derivative is never taken).
    """
    return 0.0 if is_zero(guard) else x


def _broadcast_like(v: Any, like: Any) -> Any:
    """``v`` (a slice of a cotangent) in the shape of ``like`` (the value added there): summed
    down where ``like`` was broadcast into a larger region (a scalar added to ``x[:, 0]``)."""
    if isinstance(like, (list, tuple, dict)):
        return materialize(v, like)
    if np.size(v) > np.size(like):
        return unbroadcast(v, like)
    return np.broadcast_to(v, np.shape(like))


def add_at_t(g: Any, x: Any, index: Any, ct: Any) -> Any:
    """Transpose of ``add_at(x_bar, x, index, ct)`` in ``ct``: ``g[index]`` brought to the
    shape of ``ct`` (summed where ``ct`` was broadcast into ``x[index]``; entry by entry for a
    slice of a list); ``0.0`` if ``ct`` is zero."""
    if is_zero(ct):
        return 0.0
    part = getitem(g, index)
    if isinstance(x, (list, tuple)) and isinstance(index, slice):
        out = []
        for i in range(len(ct)):
            out.append(_broadcast_like(getitem(part, i), ct[i]))
        return type(ct)(out)
    return _broadcast_like(part, ct)


def pack_t(g: Any, x: Any, parts: Any) -> Any:
    """Transpose of ``pack(x, parts)`` in ``parts``: the cotangent of each part, in the
    container type of ``parts`` (``0.0`` for ``None`` parts and for a zero ``g``)."""
    out = []
    for i in range(len(parts)):
        if parts[i] is None or is_zero(g):
            out.append(0.0)
        else:
            out.append(unbroadcast(g[i], parts[i]))
    return type(parts)(out)


def repack(g: Any, x: Any, parts: Any) -> Any:
    """Transpose of :func:`pack_t`: ``pack(x, g)``, with zeros where ``parts`` has ``None``
    or ``g`` has the symbolic zero."""
    entries = []
    for i in range(len(parts)):
        if parts[i] is None or is_zero(g) or is_zero(g[i]):
            entries.append(None)
        else:
            entries.append(g[i])
    return pack(x, entries)


def as_grads_t(g: Any, grads: Any, n: int) -> Any:
    """Transpose of ``as_grads(grads, n)``: the ``n``-tuple ``g`` in the structure of ``grads``."""
    if n == 1 and not (isinstance(grads, (tuple, list)) and len(grads) == 1):
        return 0.0 if is_zero(g) else g[0]
    out = []
    for i in range(n):
        out.append(0.0 if is_zero(g) else g[i])
    return type(grads)(out)


def transpose_axes(g: Any, axes: Any) -> Any:
    """``np.transpose(g, axes)``, ``axes`` as :func:`transpose_vjp` takes them (its transpose)."""
    if is_zero(g):
        return g
    if isinstance(axes, tuple) and len(axes) == 1 and (axes[0] is None or np.ndim(axes[0])):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return np.transpose(g)
    ndim = np.ndim(g)
    return np.transpose(g, [int(ax) % ndim for ax in axes])


def sort_take(g: Any, a: Any, axis: Any) -> Any:
    """``g`` read in the order that sorts ``a`` (the transpose of :func:`sort_vjp`)."""
    a = np.asarray(a)
    if axis is None:
        order = np.argsort(a, axis=None, kind="stable")
        return np.zeros(a.size) if is_zero(g) else np.ravel(g)[order]
    if is_zero(g):
        return np.zeros(a.shape)
    return np.take_along_axis(np.asarray(g), np.argsort(a, axis=axis, kind="stable"), axis)


def item_take(g: Any, x: Any, args: tuple[Any, ...]) -> Any:
    """``g`` at the element ``x.item(*args)`` reads (the transpose of :func:`item_vjp`)."""
    if is_zero(g):
        return 0.0
    return np.asarray(g)[_item_index(np.shape(x), args)]


def array_vjp_t(g: Any, ct: Any, obj: Any, dtype: Any) -> Any:
    """Transpose of ``array_vjp(ct, obj, dtype)`` in ``ct``: ``g`` (structured like ``obj``)
    as an array shaped like ``ct``; zeros when the adjoint was cut (an integer ``dtype``),
    ``0.0`` when ``g`` or ``ct`` is zero."""
    if is_zero(g) or is_zero(ct):
        return 0.0
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.inexact):
        return np.zeros(np.shape(ct))
    return np.reshape(np.array(materialize(g, obj), dtype=float), np.shape(ct))


def prod_hvp(w: Any, a: Any, axis: Any) -> Any:
    """The Hessian of ``np.prod(a, axis)`` applied to ``w``, slice by slice: entry ``k`` is
    ``sum over i != k of w[i] * prod(a[j] for j not in {i, k})``. Exact at zeros."""
    a = np.asarray(a, dtype=float)
    if is_zero(w):
        return np.zeros(a.shape)
    w = np.broadcast_to(w, a.shape)
    axes = _axes(axis, a.ndim)
    zero = a == 0.0
    nz = np.where(zero, 1.0, a)
    rest = np.prod(nz, axis=axes, keepdims=True)  # product of the nonzero entries
    zeros = np.sum(zero, axis=axes, keepdims=True)
    w_over = np.sum(w / nz, axis=axes, keepdims=True)
    w_zero = np.sum(w * zero, axis=axes, keepdims=True)
    # no zero in the slice, or k is its only zero: sum over i != k of w_i rest / (a_i a_k)
    smooth = rest / nz * (w_over - w / nz)
    one = np.where(zero, smooth, w_zero * rest / nz)  # k nonzero: only i = the zero counts
    two = np.where(zero, rest * (w_zero - w), 0.0)  # k a zero: only i = the other zero
    return np.where(zeros == 0, smooth, np.where(zeros == 1, one, np.where(zeros == 2, two, 0.0)))


def _norm_kind(ndim: int, ord: Any, axis: Any) -> tuple[tuple[int, ...], bool]:
    """Reduction axes and whether ``np.linalg.norm(x, ord, axis)`` is a matrix norm, for an
    ``x`` with ``ndim`` dimensions."""
    if axis is None:
        return _axes(None, ndim), ord is not None and ndim == 2
    axes = _axes(axis, ndim)
    return axes, len(axes) == 2


def norm_order(x: Any, ord: Any, axis: Any) -> float:
    """How the VJP of ``np.linalg.norm`` scales with ``1 / ans``: ``p - 1`` for a vector
    p-norm (1 for the 2-norm and the Frobenius norm), 0 where it does not depend on ``ans``
    smoothly (the 0-, 1- and infinity-norms, matrix norms other than Frobenius)."""
    _, matrix = _norm_kind(np.ndim(x), ord, axis)
    if matrix:
        return 1.0 if ord is None or ord == "fro" else 0.0
    if ord is None:
        return 1.0
    if ord == 0 or ord == np.inf or ord == -np.inf:
        return 0.0
    return float(ord) - 1.0


def norm_vjp_dx(w: Any, g: Any, x: Any, ans: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """The derivative of ``norm_vjp(g, x, ans, ord, axis, keepdims)`` in ``x`` applied to
    ``w`` (``ans`` held fixed). That derivative is diagonal, so this is both its JVP and its
    VJP. Raises ``NotImplementedError`` for the nuclear and spectral matrix norms."""
    x = np.asarray(x, dtype=float)
    axes, matrix = _norm_kind(np.ndim(x), ord, axis)
    if matrix and (ord == "nuc" or ord == 2 or ord == -2):
        raise NotImplementedError(f"second derivative of np.linalg.norm with ord={ord!r}")
    if is_zero(g) or is_zero(w):
        return np.zeros(x.shape)
    g = _keep(g, axes, keepdims)
    ans = _keep(ans, axes, keepdims)
    nonzero = ans > 0
    safe = np.where(nonzero, ans, 1.0)
    if ord is None or ord == 2 or ord == "fro":
        return np.where(nonzero, g / safe, 0.0) * w
    if matrix or ord == 0 or ord == 1 or ord == np.inf or ord == -np.inf:
        return np.zeros(x.shape)  # piecewise constant in x
    p = float(ord)
    scale = np.where(nonzero, g / safe ** (p - 1), 0.0)
    size = np.abs(x)
    curve = np.where(size > 0, (p - 1) * np.where(size > 0, size, 1.0) ** (p - 2), 0.0)
    return scale * curve * w


def einsum_jvp(subscripts: str, operands: Sequence[Any], tangents: Any) -> Any:
    """``np.einsum(subscripts, *operands)`` differentiated along ``tangents`` (one per
    operand, ``0.0`` for none): the sum of the einsums with one operand replaced by its
    tangent (the transpose of :func:`einsum_vjp` in its cotangent)."""
    out = 0.0
    if is_zero(tangents):
        return out
    for i in range(len(operands)):
        if is_zero(tangents[i]):
            continue
        ops = list(operands)
        ops[i] = tangents[i]
        out = out + _einsum(subscripts, ops)
    return out


def _einsum(subscripts: str, ops: Sequence[Any]) -> Any:
    """``np.einsum(subscripts, *ops)`` for up to four operands, without a starred call (the
    transformer cannot differentiate one)."""
    if len(ops) == 1:
        return np.einsum(subscripts, ops[0])
    if len(ops) == 2:
        return np.einsum(subscripts, ops[0], ops[1])
    if len(ops) == 3:
        return np.einsum(subscripts, ops[0], ops[1], ops[2])
    if len(ops) == 4:
        return np.einsum(subscripts, ops[0], ops[1], ops[2], ops[3])
    raise NotImplementedError("second derivative of np.einsum with more than four operands")


def einsum_vjp_dops(x: Any, g: Any, subscripts: str, operands: Sequence[Any]) -> Any:
    """The derivative of ``einsum_vjp(g, subscripts, operands)`` in the operands applied to
    ``x`` (one entry per operand, ``0.0`` for none): entry ``m`` sums, over the other
    operands ``j``, the adjoint of operand ``m`` with operand ``j`` replaced by ``x[j]``.
    The map is symmetric, so this is both its JVP and its VJP."""
    out = []
    for op in operands:
        out.append(np.zeros(np.shape(op)))
    if not (is_zero(g) or is_zero(x)):
        for j in range(len(operands)):
            if is_zero(x[j]):
                continue
            ops = list(operands)
            ops[j] = x[j]
            grads = einsum_vjp(g, subscripts, ops)
            for m in range(len(operands)):
                if m != j:
                    out[m] = out[m] + grads[m]
    return list(out) if isinstance(operands, list) else tuple(out)


def _col(v: Any, vector: bool) -> Any:
    return np.asarray(v)[..., None] if vector else np.asarray(v)


def solve_dual(t: Any, g: Any, a: Any, b: Any) -> Any:
    """``-t^T solve(a^T, g)``, shaped like ``g`` (vectors as columns when ``b`` is 1-D).

    The derivatives of ``solve_vjp_b(g, a, b)`` and ``solve_vjp_a(g, a, b, ans)`` in ``a``
    along ``t`` are those helpers with this as their cotangent; ``solve_dual(u, g, a, b)``
    is also the VJP of ``solve_vjp_a`` in ``ans`` for the cotangent ``u``.
    """
    if is_zero(g) or is_zero(t):
        return 0.0
    vector = np.ndim(b) == 1
    out = -(mT(np.asarray(t)) @ np.linalg.solve(mT(a), _col(g, vector)))
    return out[..., 0] if vector else out


def solve_vjp_a_dct(g: Any, a: Any, b: Any, ans: Any) -> Any:
    """Transpose of ``solve_vjp_a(ct, a, b, ans)`` in ``ct``: ``-solve(a, g @ ans)`` (vectors
    as columns when ``b`` is 1-D)."""
    if is_zero(g):
        return np.zeros(np.shape(ans))
    vector = np.ndim(b) == 1
    out = -np.linalg.solve(a, np.asarray(g) @ _col(ans, vector))
    return out[..., 0] if vector else out


# --- helpers kept in their own modules, merged into ``_ad`` here ---------------------------

from . import (  # noqa: E402
    corpus_vjps,
    incgamma_vjps,
    linalg_vjps,
    more_vjps,
    numpy2_vjps,
    scipy_corpus_vjps,
    scipy_decomp_vjps,
    scipy_linalg_vjps,
    scipy_vjps,
    shape_vjps,
    shapes_more_vjps,
    stats_vjps,
)

# Those without a rule of their own: differentiated from their source (higher order).
FROM_SOURCE: tuple[str, ...] = ()
for _module in (
    corpus_vjps,
    linalg_vjps,
    more_vjps,
    numpy2_vjps,
    scipy_vjps,
    shape_vjps,
    shapes_more_vjps,
    incgamma_vjps,
    stats_vjps,
    scipy_linalg_vjps,
    scipy_decomp_vjps,
    scipy_corpus_vjps,
):
    globals().update({_name: getattr(_module, _name) for _name in _module.__all__})
    __all__ += _module.__all__  # noqa: PLE0605
    FROM_SOURCE += _module.FROM_SOURCE
