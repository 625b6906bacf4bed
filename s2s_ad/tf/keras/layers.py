"""``Dense`` and ``Flatten`` layers: NumPy code the transformer differentiates."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...variable import Variable
from ..module import Module
from . import activations

_seed = [0]


class Dense(Module):
    """``activation(x @ kernel + bias)``; the kernel is made on the first call
    (Glorot uniform, float32, as Keras does)."""

    def __init__(
        self, units: int, activation: Any = None, use_bias: bool = True, name: str | None = None
    ) -> None:
        super().__init__(name)
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel: Variable | None = None
        self.bias: Variable | None = None

    def build(self, n_in: int) -> None:
        rng = np.random.default_rng(_seed[0])
        _seed[0] += 1
        limit = np.sqrt(6.0 / (n_in + self.units))
        self.kernel = Variable(rng.uniform(-limit, limit, (n_in, self.units)), dtype=np.float32)
        if self.use_bias:
            self.bias = Variable(np.zeros(self.units), dtype=np.float32)

    def __call__(self, x: Any, training: Any = None) -> Any:
        if self.kernel is None:
            self.build(np.shape(x)[-1])
        y = x @ self.kernel
        if self.bias is not None:
            y = y + self.bias
        if self.activation is not None:
            y = self.activation(y)
        return y


class Flatten(Module):
    """Reshape to ``(batch, -1)``."""

    def __call__(self, x: Any, training: Any = None) -> Any:
        return np.reshape(x, (np.shape(x)[0], -1))
