"""``tf.math``: elementwise functions, NumPy-backed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..variable import Tensor, tensor


def log(x: Any) -> Tensor:
    return tensor(np.log(x))


def exp(x: Any) -> Tensor:
    return tensor(np.exp(x))


def square(x: Any) -> Tensor:
    return tensor(np.square(x))


def sqrt(x: Any) -> Tensor:
    return tensor(np.sqrt(x))


def sigmoid(x: Any) -> Tensor:
    return tensor(1.0 / (1.0 + np.exp(-x)))


def tanh(x: Any) -> Tensor:
    return tensor(np.tanh(x))


def reduce_sum(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return tensor(np.sum(x, axis=axis, keepdims=keepdims))
