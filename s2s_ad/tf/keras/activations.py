"""Activation functions (plain NumPy, differentiated from their source)."""

from __future__ import annotations

from typing import Any

import numpy as np


def relu(x: Any) -> Any:
    return np.maximum(x, 0.0)


def tanh(x: Any) -> Any:
    return np.tanh(x)


def sigmoid(x: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x: Any) -> Any:
    z = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def linear(x: Any) -> Any:
    return x


def get(name: Any) -> Any:
    """An activation by name (``'relu'``), a callable as it is, ``None`` for none."""
    if name is None or callable(name):
        return name
    return {"relu": relu, "tanh": tanh, "sigmoid": sigmoid, "softmax": softmax, "linear": linear}[
        name
    ]
