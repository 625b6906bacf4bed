"""``tf.math``: elementwise functions (plain NumPy, differentiated from their source),
reductions, ``argmax``/``argmin`` and cumulative sums."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..custom import defgrad
from ..variable import EagerTensor, Tensor, tensor
from .ops import (
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_std,
    reduce_sum,
    reduce_variance,
)


def abs(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.abs(x))


def acos(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.arccos(x))


def acosh(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.arccosh(x))


def asin(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.arcsin(x))


def asinh(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.arcsinh(x))


def atan(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.arctan(x))


def atanh(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.arctanh(x))


def cos(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.cos(x))


def cosh(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.cosh(x))


def exp(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.exp(x))


def expm1(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.expm1(x))


def log(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.log(x))


def log1p(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.log1p(x))


def negative(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.negative(x))


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    return tensor(1.0 / x)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    return tensor(1.0 / np.sqrt(x))


def sin(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.sin(x))


def sinh(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.sinh(x))


def sqrt(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.sqrt(x))


def square(x: Any, name: str | None = None) -> Tensor:
    # a tensor's array squared as a plain one (NumPy's ufuncs cost more on a subclass)
    out = np.square(x.view(np.ndarray) if type(x) is EagerTensor else x)
    kind = type(out)
    if kind is EagerTensor:  # a new array already: no view needed
        return out
    return out.view(EagerTensor) if kind is np.ndarray else tensor(out)  # (tensor's first case)


def tan(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.tan(x))


def tanh(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.tanh(x))


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    return tensor(1.0 / (1.0 + np.exp(-x)))


def softplus(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.logaddexp(0.0, x))


def _softplus_grad(g: Any, x: Any, name: Any = None) -> Any:
    # sigmoid(x), as TensorFlow computes it: exp(x - softplus(x)) loses digits in float32
    x = np.asarray(x)
    e = np.exp(-np.abs(x))
    return g * np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


defgrad(softplus, _softplus_grad)


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    return tensor(-np.logaddexp(0.0, -x))


def sign(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.sign(x))


def floor(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.floor(x))


def ceil(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.ceil(x))


def round(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.round(x))


def exp2(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.exp2(x))


def is_nan(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.isnan(x), bool)


def is_inf(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.isinf(x), bool)


def is_finite(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.isfinite(x), bool)


def logical_not(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.logical_not(x), bool)


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(x + y)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(x - y)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(x * y)


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(x / y)


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(x / y)


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.floor_divide(x, y))


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.mod(x, y))


def mod(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.mod(x, y))


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.power(x, y))


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.maximum(x, y))


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.minimum(x, y))


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.square(x - y))


def atan2(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.arctan2(x, y))


def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y)))


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.where(y == 0, 0.0, x * y))


def xlogy(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1.0, y))))


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.equal(x, y), bool)


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.not_equal(x, y), bool)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.greater(x, y), bool)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.greater_equal(x, y), bool)


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.less(x, y), bool)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.less_equal(x, y), bool)


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.logical_and(x, y), bool)


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.logical_or(x, y), bool)


def logical_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    return tensor(np.logical_xor(x, y), bool)


try:  # scipy.special has gradient rules when SciPy is installed
    from scipy.special import erf as _erf
except ImportError:  # pragma: no cover
    _erf = None


def erf(x: Any, name: str | None = None) -> Tensor:
    if _erf is None:
        raise NotImplementedError("tf.math.erf needs SciPy (scipy.special.erf)")
    return tensor(_erf(np.asarray(x)))


def _erf_grad(g: Any, x: Any, name: Any = None) -> Any:
    return g * (2.0 / np.sqrt(np.pi)) * np.exp(-np.square(x))


defgrad(erf, _erf_grad)


def add_n(inputs: Any, name: str | None = None) -> Tensor:
    total = inputs[0]
    for item in inputs[1:]:
        total = total + item
    return tensor(total)


def cumsum(
    x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False, name: Any = None
) -> Tensor:
    if exclusive or reverse:
        raise NotImplementedError("tf.math.cumsum with exclusive or reverse")
    return tensor(np.cumsum(x, axis=axis))


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Any = None) -> Tensor:
    squared = np.sum(np.square(x), axis=axis, keepdims=True)
    return tensor(x / np.sqrt(np.maximum(squared, epsilon)))


def top_k(x: Any, k: int = 1, sorted: bool = True, name: Any = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    order = np.argsort(-np.asarray(x), axis=-1)[..., :k]
    return tensor(np.take_along_axis(x, order, axis=-1)), tensor(order, np.int32)


def count_nonzero(x: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Tensor:
    return tensor(np.count_nonzero(x, axis=axis, keepdims=keepdims), np.int64)


def softmax(logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    z = logits - np.max(logits, axis=axis, keepdims=True)
    e = np.exp(z)
    return tensor(e / np.sum(e, axis=axis, keepdims=True))


ELEMENTWISE = [
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "cos",
    "cosh",
    "divide",
    "divide_no_nan",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log_sigmoid",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "multiply_no_nan",
    "negative",
    "not_equal",
    "pow",
    "reciprocal",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softplus",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tan",
    "tanh",
    "truediv",
    "xlogy",
]

__all__ = [
    "abs",
    "acos",
    "acosh",
    "add",
    "add_n",
    "argmax",
    "argmin",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "cos",
    "cosh",
    "count_nonzero",
    "cumsum",
    "divide",
    "divide_no_nan",
    "equal",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "is_finite",
    "is_inf",
    "is_nan",
    "l2_normalize",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log_sigmoid",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "multiply_no_nan",
    "negative",
    "not_equal",
    "pow",
    "reciprocal",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_std",
    "reduce_sum",
    "reduce_variance",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softmax",
    "softplus",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tan",
    "tanh",
    "top_k",
    "truediv",
    "xlogy",
]
