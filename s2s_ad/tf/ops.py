"""Construction, shape and reduction ops of the ``tf`` namespace, in plain NumPy.

Each function is ordinary Python the transformer differentiates from its source; results
are ``Tensor`` values. Reductions take ``axis`` as an int, a list or a tuple.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..custom import defgrad
from ..rules.registry import nondiff
from ..variable import EagerTensor, Tensor, Variable, tensor
from .dtypes import as_numpy_dtype
from .errors import InvalidArgumentError

_add_reduce = np.add.reduce
_asarray = np.asarray


def _axis(axis: Any) -> Any:
    """TensorFlow's ``axis`` (int, list, tuple or None) as NumPy takes it."""
    if isinstance(axis, (list, tuple)) or isinstance(axis, np.ndarray):
        return tuple(int(a) for a in axis)
    return axis


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Tensor:
    """A tensor holding ``value`` (Python floats become float32), broadcast to ``shape``."""
    out = tensor(value, as_numpy_dtype(dtype))
    if shape is not None:
        out = tensor(np.broadcast_to(out, tuple(shape)).copy(), out.dtype)
    return out


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    return tensor(value, as_numpy_dtype(dtype))


def identity(x: Any, name: str | None = None) -> Tensor:
    return tensor(x)


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    return tensor(np.asarray(x).astype(as_numpy_dtype(dtype)))


def _cast_grad(g: Any, x: Any, *rest: Any, dtype: Any = None, name: Any = None) -> Any:
    # a cast to an integer or boolean type cuts the gradient (``None`` through the tape)
    target = rest[0] if rest else dtype
    gx = g if np.dtype(as_numpy_dtype(target)).kind in "fc" else 0.0
    return (gx, *(0.0 for _ in rest)) if rest else gx


defgrad(cast, _cast_grad)


def zeros(shape: Any, dtype: Any = np.float32, name: str | None = None) -> Tensor:
    return tensor(np.zeros(shape), as_numpy_dtype(dtype))


def ones(shape: Any, dtype: Any = np.float32, name: str | None = None) -> Tensor:
    return tensor(np.ones(shape), as_numpy_dtype(dtype))


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    return tensor(np.full(dims, value), np.asarray(value).dtype)


def zeros_like(x: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    return tensor(np.zeros(np.shape(x)), as_numpy_dtype(dtype) or np.asarray(x).dtype)


def ones_like(x: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    return tensor(np.ones(np.shape(x)), as_numpy_dtype(dtype) or np.asarray(x).dtype)


def eye(
    num_rows: int, num_columns: int | None = None, dtype: Any = np.float32, name: Any = None
) -> Tensor:
    return tensor(np.eye(num_rows, num_columns), as_numpy_dtype(dtype))


def range(  # noqa: A001
    start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str | None = None
) -> Tensor:
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        floats = builtins.any(isinstance(v, float) for v in (start, limit, delta))
        dtype = np.float32 if floats else np.int32
    return tensor(np.arange(start, limit, delta), as_numpy_dtype(dtype))


def linspace(start: Any, stop: Any, num: int, name: str | None = None, axis: int = 0) -> Tensor:
    # TensorFlow's dtype is the start's: a Python float is float32, an int float64
    dtype = np.float32 if type(start) is float else np.asarray(start * 1.0).dtype
    return tensor(np.linspace(start, stop, int(num), axis=axis), dtype)


def reshape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    return tensor(np.reshape(x, tuple(shape) if isinstance(shape, list) else shape))


def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: Any = None) -> Tensor:
    return tensor(np.transpose(a, perm))


def expand_dims(x: Any, axis: int, name: str | None = None) -> Tensor:
    return tensor(np.expand_dims(x, axis))


def squeeze(x: Any, axis: Any = None, name: str | None = None) -> Tensor:
    return tensor(np.squeeze(x, _axis(axis)))


def stack(values: Any, axis: int = 0, name: str | None = None) -> Tensor:
    return tensor(np.stack(values, axis=axis))


def concat(values: Any, axis: int, name: str | None = None) -> Tensor:
    return tensor(np.concatenate(values, axis=axis))


def unstack(value: Any, num: Any = None, axis: int = 0, name: str | None = None) -> list[Any]:
    moved = np.moveaxis(np.asarray(value), axis, 0)
    return [tensor(part) for part in moved]


def split(value: Any, num_or_size_splits: Any, axis: int = 0, name: Any = None) -> list[Any]:
    if isinstance(num_or_size_splits, int):
        parts = np.split(value, num_or_size_splits, axis=axis)
    else:
        parts = np.split(value, np.cumsum(num_or_size_splits)[:-1], axis=axis)
    return [tensor(p) for p in parts]


def _split_grad(g: Any, value: Any, sizes: Any, *rest: Any, axis: int = 0, **options: Any) -> Any:
    axis = rest[0] if rest else axis
    parts = split(np.zeros(np.shape(value)), sizes, axis)
    pieces = [np.zeros(np.shape(p)) if _no_grad(gp) else gp for gp, p in zip(g, parts)]
    return _first(np.concatenate(pieces, axis=axis), 1 + len(rest))


def _first(grad: Any, others: int) -> Any:
    """A rule's result: ``grad`` for the first argument, no gradient for the ``others``."""
    return (grad, *(0.0 for _ in range(others))) if others else grad


def _no_grad(g: Any) -> bool:
    return g is None or (type(g) is float and g == 0.0)


defgrad(split, _split_grad)


def tile(x: Any, multiples: Any, name: str | None = None) -> Tensor:
    return tensor(np.tile(x, tuple(multiples)))


def pad(
    x: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0, name: Any = None
) -> Tensor:
    if mode.upper() != "CONSTANT":
        raise NotImplementedError(f"tf.pad mode={mode!r}: only 'CONSTANT' is supported")
    return tensor(np.pad(x, _widths(paddings), constant_values=constant_values))


def _widths(paddings: Any) -> tuple[tuple[int, int], ...]:
    return tuple((int(row[0]), int(row[1])) for row in np.asarray(paddings))


def _pad_grad(g: Any, x: Any, paddings: Any, *rest: Any, **options: Any) -> Any:
    inner = tuple(slice(a, np.shape(g)[k] - b) for k, (a, b) in enumerate(_widths(paddings)))
    return _first(np.asarray(g)[inner], 1 + len(rest))


defgrad(pad, _pad_grad)


def gather(
    params: Any, indices: Any, axis: int = 0, batch_dims: int = 0, name: Any = None
) -> Tensor:
    return tensor(np.take(params, np.asarray(indices).astype(np.int64), axis=axis))


def _gather_grad(g: Any, params: Any, indices: Any, *rest: Any, axis: int = 0, **opts: Any) -> Any:
    axis = rest[0] if rest else axis
    out = np.zeros(np.shape(params))
    moved_out = np.moveaxis(out, axis, 0)
    idx = np.asarray(indices).astype(np.int64)
    moved_g = np.moveaxis(np.asarray(g), axis, 0).reshape((idx.size, *moved_out.shape[1:]))
    np.add.at(moved_out, idx.reshape(-1), moved_g)
    return _first(out, 1 + len(rest))


defgrad(gather, _gather_grad)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    if x is None and y is None:
        return tensor(np.argwhere(np.asarray(condition)), np.int64)
    return tensor(np.where(condition, x, y))


def one_hot(
    indices: Any,
    depth: int,
    on_value: Any = 1.0,
    off_value: Any = 0.0,
    axis: Any = None,
    dtype: Any = np.float32,
    name: Any = None,
) -> Tensor:
    codes = np.asarray(indices).astype(np.int64)
    picked = np.where(np.arange(depth) == codes[..., None], 1.0, 0.0)
    return tensor(picked * (on_value - off_value) + off_value, as_numpy_dtype(dtype))


def shape(x: Any, out_type: Any = np.int32, name: str | None = None) -> Tensor:
    return tensor(np.array(np.shape(x)), as_numpy_dtype(out_type))


def size(x: Any, out_type: Any = np.int32, name: str | None = None) -> Tensor:
    return tensor(np.size(x), as_numpy_dtype(out_type))


def rank(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.ndim(x), np.int32)


# --- reductions -----------------------------------------------------------------------------


def reduce_sum(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    # the array's own method: np.sum's Python-level dispatch costs more than a small sum
    values = _values(x)
    if values.dtype.kind in "iu":  # TensorFlow keeps the integer type (NumPy widens it)
        return tensor(values.sum(axis=_axis(axis), keepdims=keepdims, dtype=values.dtype))
    if axis is None and not keepdims:  # what ``values.sum()`` calls, without its frame
        return tensor(_add_reduce(values, None))
    return tensor(values.sum(axis=_axis(axis), keepdims=keepdims))


def reduce_mean(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    values = np.asarray(x)
    if axis is None and not keepdims and values.dtype.kind == "f":
        # the sum over the count: what np.mean computes, without its Python-level cost
        # (``np.add.reduce`` is what ``values.sum()`` calls, without its Python frame)
        # (a NumPy scalar: as a 0-d tensor, what ``tensor`` makes of it, inline)
        return _asarray(_add_reduce(values, None) / values.size).view(EagerTensor)
    return tensor(np.mean(values, axis=_axis(axis), keepdims=keepdims))


def _values(x: Any) -> np.ndarray:
    """``x`` as an array; Python numbers, lists of them and shapes as TensorFlow converts
    them (integers to int32, floats to float32): ``tf.reduce_prod(kernel.shape)`` is an
    int32 tensor."""
    if isinstance(x, (np.ndarray, Variable)):
        return np.asarray(x)
    return np.asarray(tensor(x))


def reduce_max(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    return tensor(np.max(_values(x), axis=_axis(axis), keepdims=keepdims))


def reduce_min(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    return tensor(np.min(_values(x), axis=_axis(axis), keepdims=keepdims))


def reduce_prod(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    values = _values(x)
    dtype = values.dtype if values.dtype.kind in "iu" else None  # as for reduce_sum
    return tensor(np.prod(values, axis=_axis(axis), keepdims=keepdims, dtype=dtype))


def reduce_variance(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    return tensor(np.var(np.asarray(x), axis=_axis(axis), keepdims=keepdims))


def reduce_std(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    return tensor(np.std(np.asarray(x), axis=_axis(axis), keepdims=keepdims))


def reduce_logsumexp(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    axes = _axis(axis)
    top = np.max(x, axis=axes, keepdims=True)
    shifted = np.log(np.sum(np.exp(x - top), axis=axes, keepdims=True)) + top
    if keepdims:
        return tensor(shifted)
    return tensor(np.squeeze(shifted, axis=axes))


def reduce_any(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    return tensor(np.any(x, axis=_axis(axis), keepdims=keepdims), bool)


def reduce_all(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    return tensor(np.all(x, axis=_axis(axis), keepdims=keepdims), bool)


def argmax(x: Any, axis: Any = None, output_type: Any = np.int64, name: Any = None) -> Tensor:
    return tensor(np.argmax(x, axis=0 if axis is None else axis), as_numpy_dtype(output_type))


def argmin(x: Any, axis: Any = None, output_type: Any = np.int64, name: Any = None) -> Tensor:
    return tensor(np.argmin(x, axis=0 if axis is None else axis), as_numpy_dtype(output_type))


# --- clipping ---------------------------------------------------------------------------------


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: Any = None) -> Tensor:
    return tensor(np.clip(t, clip_value_min, clip_value_max))


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: Any = None) -> Tensor:
    norm = np.sqrt(np.sum(np.square(t), axis=_axis(axes), keepdims=True))
    return tensor(t * clip_norm / np.maximum(norm, clip_norm))


def global_norm(t_list: Any, name: Any = None) -> Tensor:
    total = sum(np.sum(np.square(np.asarray(t))) for t in t_list if t is not None)
    return tensor(np.sqrt(total))


def clip_by_global_norm(
    t_list: Any, clip_norm: float, use_norm: Any = None, name: Any = None
) -> tuple[list[Any], Tensor]:
    """Scale the tensors so that their joint norm is at most ``clip_norm``."""
    norm = global_norm(t_list) if use_norm is None else tensor(use_norm)
    scale = clip_norm / max(float(norm), clip_norm)
    clipped = [None if t is None else tensor(np.asarray(t) * scale) for t in t_list]
    return clipped, norm


def einsum(equation: str, *inputs: Any, **options: Any) -> Tensor:
    return tensor(np.einsum(equation, *inputs))


def _einsum_grad(g: Any, equation: str, *inputs: Any, **options: Any) -> tuple[Any, ...]:
    """Each input's gradient is an einsum of the output's gradient and the other inputs;
    an index that appears in one input only (summed there) is broadcast back."""
    from ..errors import TransformError

    lhs, out = equation.replace(" ", "").split("->")
    terms = lhs.split(",")
    if "." in equation:
        raise TransformError("the gradient of tf.einsum with '...'", hint="spell out the axes")
    grads: list[Any] = [0.0]
    for k, term in enumerate(terms):
        others = [t for j, t in enumerate(terms) if j != k]
        if len(set(term)) != len(term):
            raise TransformError(f"the gradient of tf.einsum with a repeated index in {term!r}")
        known = set(out).union(*others) if others else set(out)
        spec = ",".join([out, *others]) + "->" + "".join(c for c in term if c in known)
        part = np.einsum(spec, g, *[x for j, x in enumerate(inputs) if j != k])
        shape = [np.shape(inputs[k])[i] if c in known else 1 for i, c in enumerate(term)]
        grads.append(np.broadcast_to(np.reshape(part, shape), np.shape(inputs[k])).copy())
    return tuple(grads)


defgrad(einsum, _einsum_grad)


def tensordot(a: Any, b: Any, axes: Any = 2, name: str | None = None) -> Tensor:
    return tensor(np.tensordot(a, b, axes=axes))


def matmul(
    a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, name: Any = None
) -> Tensor:
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    _check_matmul(a, b)
    return tensor(np.matmul(a, b))


# where TensorFlow's eager kernels run on a machine without accelerators: its op errors
# name the function and device of the kernel first
_KERNEL = "{{function_node __wrapped__%s_device_/job:localhost/replica:0/task:0/device:CPU:0}}"


def _check_matmul(a: Any, b: Any) -> None:
    """TensorFlow's error (its text, on a CPU) for matrices whose inner dimensions
    differ (TensorFlow 2.21 leaves the op's name after ``name:`` empty, even when one is
    given)."""
    sa, sb = np.shape(a), np.shape(b)
    if len(sa) >= 2 and len(sb) >= 2 and sa[-1] != sb[-2]:
        raise InvalidArgumentError(
            message=f"{_KERNEL % 'MatMul'} Matrix size-incompatible: "
            f"In[0]: [{sa[-2]},{sa[-1]}], In[1]: [{sb[-2]},{sb[-1]}] [Op:MatMul] name: "
        )


nondiff("tf.matmul shape check", [_check_matmul])


def is_tensor(x: Any) -> bool:
    return isinstance(x, (Tensor, Variable))
