"""Writing into tensors and Variables by index, as TensorFlow does.

``tf.gather_nd``, ``tf.scatter_nd``, ``tf.tensor_scatter_nd_update`` (``_add``,
``_sub``) make new tensors and are differentiable with TensorFlow's gradients (those of
``tensor_scatter_nd_update`` with repeated indices too: every row of ``updates`` gets the
gradient of the place it was written to, and the tensor none there). The Variable methods
``scatter_nd_update`` (``_add``, ``_sub``) and a slice's ``assign`` (``v[1].assign(5.0)``,
see :meth:`Variable._assign_slice`) go through ``Variable.assign``, which tapes note and
whose value carries no gradient, as in TensorFlow.

Indices are checked as TensorFlow's CPU kernels check them, with their errors: an index
out of range (negative ones too) or updates whose outer dimensions do not match the
indices raise ``InvalidArgumentError`` with TensorFlow's text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..custom import defgrad, defjvp
from ..rules.registry import nondiff
from ..variable import Tensor, Variable
from ..variable import tensor as _tensor
from .errors import InvalidArgumentError
from .ops import _KERNEL


def _where(
    shape: tuple[int, ...], indices: Any, op: str, what: str = "shape"
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The places ``indices`` name in an array of ``shape`` (a tuple of index arrays,
    one row per place) and the indices as an int64 array; TensorFlow's error for an
    index out of range."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise InvalidArgumentError(message=f"indices of {op} must be integers, got {idx.dtype}")
    idx = idx.astype(np.int64, copy=False)
    if idx.ndim == 0:
        raise InvalidArgumentError(message=f"{_KERNEL % op} indices must be at least 1-d [Op:{op}]")
    depth = idx.shape[-1]
    if depth > len(shape):
        raise InvalidArgumentError(
            message=f"{_KERNEL % op} index innermost dimension length must be <= params rank; "
            f"saw: {depth} vs. {len(shape)} [Op:{op}]"
        )
    flat = idx.reshape(-1, depth)
    bad = (flat < 0) | (flat >= np.asarray(shape[:depth], dtype=np.int64))
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        named = ",".join(str(d) for d in shape)
        node = f", node name: {op}" if op == "GatherNd" else ""  # (as TensorFlow 2.21 says)
        place = ", ".join(str(int(k)) for k in flat[row])
        raise InvalidArgumentError(
            message=f"{_KERNEL % op} indices[{row}] = [{place}] does not index into "
            f"{what} [{named}]{node} [Op:{op}]"
        )
    return tuple(flat.T), idx


def _rows(shape: tuple[int, ...], idx: np.ndarray, updates: Any, dtype: Any, op: str) -> np.ndarray:
    """``updates`` as one row per place (of ``dtype``), after TensorFlow's check that
    their outer dimensions are those of the indices."""
    depth = idx.shape[-1]
    values = np.asarray(updates, dtype=dtype)
    want = (*idx.shape[:-1], *shape[depth:])
    if values.shape != want:
        got_i = ",".join(str(d) for d in idx.shape)
        got_u = ",".join(str(d) for d in values.shape)
        raise InvalidArgumentError(
            message=f"{_KERNEL % op} Outer dimensions of indices and update must match. "
            f"Indices shape: [{got_i}], updates shape:[{got_u}] [Op:{op}]"
        )
    return values.reshape((-1, *shape[depth:]))


def _scattered(base: Any, indices: Any, updates: Any, how: str, op: str) -> np.ndarray:
    """A copy of ``base`` with ``updates`` written (``how``: ``update``), added or
    subtracted at ``indices`` (repeated places add up)."""
    out = np.array(base)
    where, idx = _where(out.shape, indices, op)
    rows = _rows(out.shape, idx, updates, out.dtype, op)
    if how == "update":
        out[where] = rows
    elif how == "add":
        np.add.at(out, where, rows)
    else:
        np.subtract.at(out, where, rows)
    return out


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: Any = None) -> Tensor:
    """The slices of ``params`` at ``indices`` (the last axis of ``indices`` indexes the
    leading axes of ``params``)."""
    if batch_dims:
        raise NotImplementedError("tf.gather_nd with batch_dims: not supported")
    values = np.asarray(params)
    where, idx = _where(values.shape, indices, "GatherNd", "param shape")
    rows = values[where]
    return _tensor(rows.reshape((*idx.shape[:-1], *values.shape[idx.shape[-1] :])))


def scatter_nd(indices: Any, updates: Any, shape: Any, name: Any = None) -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (repeated places add up)."""
    values = np.asarray(updates)
    zeros = np.zeros(tuple(int(d) for d in np.asarray(shape).reshape(-1)), dtype=values.dtype)
    return _tensor(_scattered(zeros, indices, values, "add", "ScatterNd"))


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: Any = None) -> Tensor:
    """A copy of the tensor with ``updates`` written at ``indices``."""
    return _tensor(_scattered(tensor, indices, updates, "update", "TensorScatterUpdate"))


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: Any = None) -> Tensor:
    """A copy of the tensor with ``updates`` added at ``indices``."""
    return _tensor(_scattered(tensor, indices, updates, "add", "TensorScatterAdd"))


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: Any = None) -> Tensor:
    """A copy of the tensor with ``updates`` subtracted at ``indices``."""
    return _tensor(_scattered(tensor, indices, updates, "sub", "TensorScatterSub"))


# --- gradients (TensorFlow's: ``array_grad.py``'s rules for these ops) --------------------


def _none(count: int) -> tuple[float, ...]:
    return (0.0,) * count


def _gathered(g: Any, indices: Any) -> np.ndarray:
    """``gather_nd(g, indices)`` as a plain array (the gradient of ``updates``)."""
    return np.asarray(gather_nd(g, indices))


def _gather_nd_grad(g: Any, params: Any, indices: Any, *rest: Any, **options: Any) -> Any:
    out = np.zeros(np.shape(params), dtype=np.result_type(g))
    where, idx = _where(out.shape, indices, "GatherNd", "param shape")
    np.add.at(out, where, np.asarray(g).reshape((-1, *out.shape[idx.shape[-1] :])))
    return (out, 0.0, *_none(len(rest)))


def _scatter_nd_grad(g: Any, indices: Any, updates: Any, *rest: Any, **options: Any) -> Any:
    return (0.0, _gathered(g, indices), *_none(len(rest)))


def _update_grad(g: Any, tensor: Any, indices: Any, updates: Any, *rest: Any, **o: Any) -> Any:
    # the tensor's gradient is cut where it was written over; each row of updates gets the
    # gradient of its place, repeated places too (as TensorFlow's rule gives)
    cut = np.array(g)
    where, _ = _where(cut.shape, indices, "TensorScatterUpdate")
    cut[where] = 0
    return (cut, 0.0, _gathered(g, indices), *_none(len(rest)))


def _add_grad(g: Any, tensor: Any, indices: Any, updates: Any, *rest: Any, **o: Any) -> Any:
    return (g, 0.0, _gathered(g, indices), *_none(len(rest)))


def _sub_grad(g: Any, tensor: Any, indices: Any, updates: Any, *rest: Any, **o: Any) -> Any:
    return (g, 0.0, -_gathered(g, indices), *_none(len(rest)))


defgrad(gather_nd, _gather_nd_grad)
defgrad(scatter_nd, _scatter_nd_grad)
defgrad(tensor_scatter_nd_update, _update_grad)
defgrad(tensor_scatter_nd_add, _add_grad)
defgrad(tensor_scatter_nd_sub, _sub_grad)


# --- tangents: each op is linear in its values ------------------------------------------------


def _tangent(t: Any, like: Any) -> np.ndarray:
    """A tangent as an array of the value's shape (``0.0``: none)."""
    return np.broadcast_to(np.asarray(t, dtype=np.result_type(like, t)), np.shape(like))


def _scatter_jvp(op: Any) -> Any:
    def jvp(tangents: Any, tensor: Any, indices: Any, updates: Any, *rest: Any, **o: Any) -> Any:
        dt, _, du = tangents[:3]
        return op(_tangent(dt, tensor), indices, _tangent(du, updates))

    return jvp


def _gather_nd_jvp(tangents: Any, params: Any, indices: Any, *rest: Any, **options: Any) -> Any:
    return gather_nd(_tangent(tangents[0], params), indices)


def _scatter_nd_jvp(
    tangents: Any, indices: Any, updates: Any, shape: Any, *r: Any, **o: Any
) -> Any:
    return scatter_nd(indices, _tangent(tangents[1], updates), shape)


defjvp(gather_nd, _gather_nd_jvp)
defjvp(scatter_nd, _scatter_nd_jvp)
for _op in (tensor_scatter_nd_update, tensor_scatter_nd_add, tensor_scatter_nd_sub):
    defjvp(_op, _scatter_jvp(_op))


# --- the Variable methods -------------------------------------------------------------------


def _assign_slice(variable: Variable, index: Any, value: Any) -> Variable:
    """``variable[index].assign(value)``: the Variable with ``value`` (broadcast to the
    slice's shape, as TensorFlow does) written there, through ``assign``."""
    new = variable.value.copy()
    part = np.asarray(value, dtype=new.dtype)
    shape = np.shape(new[index])
    try:
        new[index] = np.broadcast_to(part, shape)
    except ValueError:
        given, final = ",".join(map(str, part.shape)), ",".join(map(str, shape))
        op = "ResourceStridedSliceAssign"
        raise InvalidArgumentError(
            message=f"{_KERNEL % op} Cannot broadcast input shape [{given}] into final "
            f"shape [{final}] [Op:{op}] name: "
        ) from None
    return variable.assign(new)


def _slice_assign(self: Tensor) -> Any:
    """A tensor's ``assign``: only a slice of a Variable has one (``v[1:3].assign(x)``),
    as in TensorFlow; other tensors raise its ``AttributeError``."""
    sliced = self.__dict__.get("_sliced")
    if sliced is None:
        raise AttributeError(
            "'tensorflow.python.framework.ops.EagerTensor' object has no attribute 'assign'"
        )
    variable, index = sliced

    def assign(
        value: Any, use_locking: Any = None, name: Any = None, read_value: Any = True
    ) -> Any:
        return _assign_slice(variable, index, value)

    return assign


Tensor.assign = property(_slice_assign)  # type: ignore[attr-defined]
nondiff("a Variable slice's assign", [_assign_slice])


def _variable_method(how: str, op: str) -> Any:
    def method(self: Variable, indices: Any, updates: Any, name: Any = None) -> Variable:
        return self.assign(_scattered(self.value, indices, updates, how, op))

    method.__name__ = f"scatter_nd_{how}"
    method.__doc__ = (
        f"Write ({how}) ``updates`` into the Variable at ``indices`` through ``assign`` "
        "(its value carries no gradient); the Variable."
    )
    return method


Variable.scatter_nd_update = _variable_method("update", "ResourceScatterNdUpdate")  # type: ignore[attr-defined]
Variable.scatter_nd_add = _variable_method("add", "ResourceScatterNdAdd")  # type: ignore[attr-defined]
Variable.scatter_nd_sub = _variable_method("sub", "ResourceScatterNdSub")  # type: ignore[attr-defined]
nondiff(
    "Variable.scatter_nd_update",
    [Variable.scatter_nd_update, Variable.scatter_nd_add, Variable.scatter_nd_sub],  # type: ignore[attr-defined]
)

__all__ = [
    "gather_nd",
    "scatter_nd",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
]
