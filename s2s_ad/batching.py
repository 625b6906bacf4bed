"""Helpers of batched tangent programs (``jacobian(mode='fwd')``, ``hessian``), as ``_ad.<name>``.

A batched tangent carries one tangent per column of a Jacobian along a new leading
axis: the tangent of a value of shape ``s`` has shape ``(B,) + s`` (a Python float's
has shape ``(B,)``; a list's or a dict's is a list or a dict of batched tangents). The
symbolic zero stays ``0.0``: anything of dimension 0 where a tangent is expected is
zero, never a batch. Elementwise rules broadcast for free once an operand's tangent is
*lifted* to the rank of the result (:func:`lift`); reductions, products, indexing and
reshapes shift their axes past the batch axis. A rule without a batched form runs once
per column (:func:`columns`): exact, only slower.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import TransformError
from .rules import vjps as one_row
from .runtime import UNREACHED, WHOLE

_ndarray = np.ndarray


def _ndim(x: Any) -> int:
    return x.ndim if type(x) is _ndarray else np.ndim(x)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if type(x) is _ndarray else np.shape(x)


def _zero(t: Any) -> bool:
    """Whether a batched tangent is the symbolic zero (anything of dimension 0)."""
    if type(t) is _ndarray:
        return t.ndim == 0
    return not isinstance(t, (list, tuple, dict, _ndarray))


def batch_size(*ts: Any) -> int | None:
    """The batch size of the first batched array among ``ts`` (containers searched)."""
    for t in ts:
        if type(t) is _ndarray or isinstance(t, _ndarray):
            if t.ndim:
                return int(t.shape[0])
        elif isinstance(t, (list, tuple)):
            b = batch_size(*t)
            if b is not None:
                return b
        elif isinstance(t, dict):
            b = batch_size(*t.values())
            if b is not None:
                return b
    return None


def _as_array(t: Any) -> Any:
    """A batched tangent of a list or tuple operand of an array rule, as one array."""
    parts = [_as_array(p) if isinstance(p, (list, tuple)) else p for p in t]
    live = [p for p in parts if not _zero(p)]
    if not live:
        return 0.0
    shape = np.broadcast_shapes(*(p.shape for p in live))
    return np.stack([np.zeros(shape) if _zero(p) else np.broadcast_to(p, shape) for p in parts], 1)


def lift(t: Any, ans: Any) -> Any:
    """The tangent of an elementwise operand, with axes after the batch axis for the ones
    NumPy broadcasting adds to the operand in ``ans`` (``(B, n)`` -> ``(B, 1, n)``)."""
    if type(t) is not _ndarray:
        if isinstance(t, (list, tuple)):
            t = _as_array(t)
        if _zero(t):
            return t
    extra = _ndim(ans) - (t.ndim - 1)
    if extra > 0:
        return t.reshape(t.shape[:1] + (1,) * extra + t.shape[1:])
    return t


def batch_like(t: Any, ans: Any) -> Any:
    """The sum of an elementwise rule's contributions, with the full shape of ``ans``.

    Contributions of zero tangents have at most the rank of ``ans``: all of them zero
    gives the symbolic zero.
    """
    shape = _shape(ans)
    if type(t) is not _ndarray or t.ndim <= len(shape):
        return 0.0 if _zero(t) or np.ndim(t) <= len(shape) else t
    if t.shape[1:] == shape:
        return t
    return np.broadcast_to(t, t.shape[:1] + shape)


def column(t: Any, i: int) -> Any:
    if type(t) is _ndarray or isinstance(t, _ndarray):
        return t[i] if t.ndim else t
    if isinstance(t, (list, tuple)):
        return type(t)(column(u, i) for u in t)
    if isinstance(t, dict):
        return {k: column(v, i) for k, v in t.items()}
    return t


def _is_symbolic_zero(v: Any) -> bool:
    return v is None or (type(v) is float and v == 0.0)


def stack(cols: list[Any]) -> Any:
    """Stack per-column tangents along a new leading axis (leaf by leaf for containers)."""
    if all(_is_symbolic_zero(c) for c in cols):
        return 0.0
    first = next(c for c in cols if not _is_symbolic_zero(c))
    if isinstance(first, (list, tuple)):
        parts = [
            stack([0.0 if _is_symbolic_zero(c) else c[k] for c in cols]) for k in range(len(first))
        ]
        return parts if isinstance(first, list) else tuple(parts)
    if isinstance(first, dict):
        return {k: stack([0.0 if _is_symbolic_zero(c) else c[k] for c in cols]) for k in first}
    shape = np.shape(first)
    return np.stack([np.broadcast_to(c, shape) for c in cols])


def columns(f: Callable[..., Any], *ts: Any) -> Any:
    """``f`` (a per-column tangent rule) applied to each column of the batched ``ts``,
    stacked: the fallback of rules without a batched form. Zero when all ``ts`` are."""
    b = batch_size(*ts)
    if b is None:
        return 0.0
    return stack([f(*(column(t, i) for t in ts)) for i in range(b)])


# --- indexing and in-place writes ---------------------------------------------------------


def _advanced(i: Any) -> bool:
    return isinstance(i, (list, _ndarray)) or (
        isinstance(i, (int, np.integer, bool, np.bool_)) and not isinstance(i, type(Ellipsis))
    )


def _splits_advanced(index: tuple[Any, ...]) -> bool:
    """Whether array indices are separated by slices (NumPy then moves their axes first)."""
    if not any(isinstance(i, (list, _ndarray)) for i in index):
        return False
    where = [k for k, i in enumerate(index) if _advanced(i)]
    return where[-1] - where[0] + 1 != len(where)


def getitem(t: Any, index: Any) -> Any:
    """The batched tangent of ``x[index]``."""
    if type(t) is _ndarray:
        if not t.ndim:
            return 0.0
        full = index if type(index) is tuple else (index,)
        if _splits_advanced(full):
            return np.stack([u[index] for u in t])
        return t[(slice(None), *full)]
    if index is WHOLE:  # a bound method read from a record: its tangent is the record's
        return t
    if index is UNREACHED:
        return 0.0
    if isinstance(t, dict):
        return t.get(index, 0.0)
    if isinstance(t, (list, tuple)):
        return t[index]
    return 0.0


def restore_tangent(t: Any, obj: Any, key: Any, old: Any, old_t: Any) -> Any:
    """The batched tangent of ``obj`` after ``_ad.restore_item(obj, key, old)``."""
    from .runtime import restore_tangent as restore

    return restore(t, obj, key, old, old_t, set_tangent)


def set_tangent(old: Any, x: Any, index: Any, t: Any) -> Any:
    """The batched tangent of ``x`` after ``x[index] = v`` (``t`` is the tangent of ``v``)."""
    if not isinstance(x, _ndarray):
        out = (
            ([0.0] * len(x) if isinstance(x, (list, tuple)) else {})
            if _zero(old)
            else (dict(old) if isinstance(old, dict) else list(old))
        )
        out[index] = t
        return out
    b = batch_size(old, t)
    if b is None:
        return 0.0
    out = np.zeros((b,) + x.shape) if _zero(old) else np.array(old, dtype=float)
    full = index if type(index) is tuple else (index,)
    if _splits_advanced(full):
        for i in range(b):
            out[i][index] = 0.0 if _zero(t) else t[i]
        return out
    region = (slice(None), *full)
    if _zero(t):
        out[region] = 0.0
    else:
        out[region] = _with_rank(t, out[region].ndim - 1)
    return out


def tangent_parts(t: Any, x: Any) -> list[Any]:
    """Batched tangents of the parts of ``a, b = x``."""
    if type(t) is _ndarray:
        if not t.ndim:
            return [0.0] * len(x)
        return [t[:, k] for k in range(len(x))]
    if isinstance(t, (list, tuple)):
        return list(t)
    return [0.0] * len(x)


# --- reductions, products, shapes -------------------------------------------------------------


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Non-negative primal axes of a reduction (``None``: all)."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(int(a) % ndim if ndim else 0 for a in axes)


def reduce_sum(t: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Batched tangent of ``np.sum(a, axis, keepdims)``."""
    if type(t) is not _ndarray or not t.ndim:
        return 0.0 if _zero(t) else columns(lambda c: np.sum(c, axis, keepdims=keepdims), t)
    axes = tuple(a + 1 for a in _axes(axis, t.ndim - 1))
    return np.sum(t, axes, keepdims=keepdims)


def reduce_mean(t: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Batched tangent of ``np.mean(a, axis, keepdims)``."""
    if type(t) is not _ndarray or not t.ndim:
        return 0.0 if _zero(t) else columns(lambda c: np.mean(c, axis, keepdims=keepdims), t)
    axes = tuple(a + 1 for a in _axes(axis, t.ndim - 1))
    return np.mean(t, axes, keepdims=keepdims)


def sum_vjp(t: Any, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Batched tangent of ``_ad.sum_vjp(g, a, axis, keepdims)`` (``g`` broadcast back)."""
    if _zero(t):
        return 0.0
    t = np.asarray(t)
    shape = _shape(a)
    if not keepdims:
        for k in sorted(_axes(axis, len(shape))):
            t = np.expand_dims(t, k + 1)
    return np.broadcast_to(t, t.shape[:1] + shape)


def mean_vjp(t: Any, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Batched tangent of ``_ad.mean_vjp(g, a, axis, keepdims)``."""
    if _zero(t):
        return 0.0
    shape = _shape(a)
    count = int(np.prod([shape[k] for k in _axes(axis, len(shape))]))
    return sum_vjp(t, a, axis, keepdims) / count


def unbroadcast(t: Any, x: Any) -> Any:
    """Batched tangent of ``_ad.unbroadcast(g, x)``: summed down to ``(B,) + x.shape``."""
    if type(t) is not _ndarray:
        return t  # zero, or a list concatenation's parts
    if not t.ndim:
        return 0.0
    shape = _shape(x)
    if t.shape[1:] == shape:
        return t
    extra = t.ndim - 1 - len(shape)
    if extra > 0:
        t = t.sum(axis=tuple(range(1, extra + 1)))
    axes = tuple(k + 1 for k, n in enumerate(shape) if n == 1 and t.shape[k + 1] != 1)
    return t.sum(axis=axes, keepdims=True) if axes else t


def _mT(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _with_rank(t: Any, ndim: int) -> Any:
    """``t`` (batched) with axes of length 1 after the batch axis, up to rank ``ndim + 1``."""
    extra = ndim + 1 - t.ndim
    return t.reshape(t.shape[:1] + (1,) * extra + t.shape[1:]) if extra > 0 else t


def matmul_x(t: Any, y: Any, ans: Any) -> Any:
    """Batched tangent of ``x @ y`` from the tangent of ``x``."""
    if _zero(t):
        return 0.0
    y = np.asarray(y)
    if y.ndim == 1:
        return t @ y
    if t.ndim == 2:  # a vector x: a row vector per column
        lifted = t.reshape(t.shape[:1] + (1,) * (y.ndim - 2) + (1, t.shape[1]))
        return (lifted @ y)[..., 0, :]
    return _with_rank(t, _ndim(ans)) @ y


def matmul_y(x: Any, t: Any, ans: Any) -> Any:
    """Batched tangent of ``x @ y`` from the tangent of ``y``."""
    if _zero(t):
        return 0.0
    x = np.asarray(x)
    if t.ndim == 2:  # a vector y
        if x.ndim <= 2:
            return t @ _mT(x) if x.ndim == 2 else t @ x
        lifted = t.reshape(t.shape[:1] + (1,) * (x.ndim - 2) + t.shape[1:])
        return (x @ lifted[..., None])[..., 0]
    if x.ndim == 1:
        return np.matmul(x, t)
    return x @ _with_rank(t, _ndim(ans))


def matmul_vjp_x(t: Any, x: Any, y: Any) -> Any:
    """Batched tangent of ``_ad.matmul_vjp_x(g, x, y)`` in ``g``."""
    if _zero(t):
        return 0.0
    y = np.asarray(y)
    if y.ndim == 1:
        gx = t[..., None] * y
    elif np.ndim(x) == 1:
        gx = (y @ t[..., None])[..., 0]
    else:
        gx = t @ _mT(y)
    return unbroadcast(gx, x)


def matmul_vjp_y(t: Any, x: Any, y: Any) -> Any:
    """Batched tangent of ``_ad.matmul_vjp_y(g, x, y)`` in ``g``."""
    if _zero(t):
        return 0.0
    x = np.asarray(x)
    if x.ndim == 1:
        gy = x[:, None] * t[..., None, :] if np.ndim(y) > 1 else t[..., None] * x
    elif np.ndim(y) == 1:
        gy = t @ x if x.ndim == 2 else (_mT(x) @ t[..., None])[..., 0]
    else:
        gy = _mT(x) @ t
    return unbroadcast(gy, y)


def matmul_vjp_x_wrt_y(g: Any, x: Any, t: Any) -> Any:
    """Batched tangent of ``_ad.matmul_vjp_x(g, x, y)`` in ``y`` (matrices and vectors)."""
    if _zero(t):
        return 0.0
    g = np.asarray(g)
    if np.ndim(x) == 2 and t.ndim == 3 and g.ndim == 2:
        return g @ _mT(t)
    if np.ndim(x) == 2 and t.ndim == 2 and g.ndim == 1:
        return g[:, None] * t[:, None, :]
    return columns(lambda c: one_row.matmul_vjp_x(g, x, c), t)


def matmul_vjp_y_wrt_x(g: Any, t: Any, y: Any) -> Any:
    """Batched tangent of ``_ad.matmul_vjp_y(g, x, y)`` in ``x`` (matrices and vectors)."""
    if _zero(t):
        return 0.0
    g = np.asarray(g)
    if t.ndim == 3 and np.ndim(y) in (1, 2) and g.ndim == np.ndim(y):
        return _mT(t) @ g
    return columns(lambda c: one_row.matmul_vjp_y(g, c, y), t)


def dot_a(t: Any, b: Any, ans: Any) -> Any:
    """Batched tangent of ``np.dot(a, b)`` from the tangent of ``a``."""
    if _zero(t):
        return 0.0
    if 1 <= t.ndim - 1 <= 2 and 1 <= np.ndim(b) <= 2:
        return matmul_x(t, b, ans)
    return columns(lambda c: np.dot(c, b), t)


def dot_b(a: Any, t: Any, ans: Any) -> Any:
    """Batched tangent of ``np.dot(a, b)`` from the tangent of ``b``."""
    if _zero(t):
        return 0.0
    if 1 <= np.ndim(a) <= 2 and 1 <= t.ndim - 1 <= 2:
        return matmul_y(a, t, ans)
    return columns(lambda c: np.dot(a, c), t)


def transpose(t: Any, axes: Any = None) -> Any:
    """Batched tangent of ``np.transpose(a, axes)``."""
    if _zero(t):
        return 0.0
    nd = t.ndim - 1
    order = range(nd - 1, -1, -1) if axes is None else (int(a) % nd for a in axes)
    return np.transpose(t, (0, *(a + 1 for a in order)))


def reshape(t: Any, shape: Any) -> Any:
    """Batched tangent of ``np.reshape(a, shape)`` (C order)."""
    if _zero(t):
        return 0.0
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return np.reshape(t, (t.shape[0], *shape))


def jvp_from_vjp(pull: Callable[[Any], Any], ans: Any, tangents: tuple[Any, ...]) -> Any:
    """Batched ``J t`` from a pullback: one pullback per output entry, shared by all columns."""
    if isinstance(ans, (tuple, list, dict)):
        raise TransformError("forward mode through a rule with several outputs")
    b = batch_size(*tangents)
    if b is None:
        return 0.0
    shape = np.shape(ans)
    if not shape:
        return _inner(pull(1.0), tangents, b)
    out = np.zeros((b, int(np.prod(shape))))
    basis = np.zeros(out.shape[1])
    for k in range(out.shape[1]):
        basis[k] = 1.0
        out[:, k] = _inner(pull(basis.reshape(shape)), tangents, b)
        basis[k] = 0.0
    return out.reshape((b, *shape))


def _inner(grads: Any, tangents: Any, b: int) -> Any:
    """Per column, the sum over entries of ``grads * tangents`` (a ``(b,)`` array)."""
    total = np.zeros(b)
    if _is_symbolic_zero(grads) or _zero(tangents):
        return total
    if isinstance(tangents, (tuple, list)):
        for g, t in zip(grads, tangents):
            total = total + _inner(g, t, b)
        return total
    if isinstance(tangents, dict):
        for k, t in tangents.items():
            if k in grads:
                total = total + _inner(grads[k], t, b)
        return total
    t = np.asarray(tangents)
    prod = t * np.asarray(grads)
    return prod.reshape(b, -1).sum(axis=1)


def jvp_call(
    func: Any, labels: tuple[Any, ...], tangents: tuple[Any, ...], *args: Any, **kwargs: Any
) -> tuple[Any, Any]:
    """Batched forward mode through a call known only at run time (``f(x)`` of a user
    function): its own batched tangent program when it is a Python function, else one
    run per column."""
    from .forward_batch import call_batched

    return call_batched(func, labels, tangents, args, kwargs)
