"""Model classes of another module, built inside differentiated functions of
``tests/test_built_classes_init.py``: their ``__init__`` reads names (``onp``,
``fan_scale``) the module of the loss does not have."""

from __future__ import annotations

import numpy as onp

DEFAULT_GAIN = 0.5


def fan_scale(W):
    """A Glorot-like scale of a weight matrix."""
    return onp.sqrt(2.0 / (W.shape[0] + W.shape[1]))


class ScaledDense:
    """``act(scale * x @ W + b)`` with a scale computed from the shape of ``W``."""

    def __init__(self, W, b, gain=DEFAULT_GAIN):
        self.W = onp.asarray(W, dtype=float)
        self.b = b
        self.scale = gain * fan_scale(W)

    def __call__(self, x):
        return onp.tanh(self.scale * (x @ self.W) + self.b)
