"""Deterministic weights for the TensorFlow-compatibility tests: the same values were set
in the TensorFlow 2.21 runs whose printed numbers the tests compare with."""

from __future__ import annotations

import numpy as np

from s2s_ad.tf import keras


def sin_weights(shape, seed, scale=0.8):
    """``scale * sin(1.37 k + seed)`` over the ``k`` entries of ``shape``, as float32."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.37 + seed) * scale).reshape(shape).astype(np.float32)


def leaky_critic():
    """A small WGAN-style critic (3 -> 8 -> 6 -> 1, leaky ReLU and tanh) with weights set."""
    layers = keras.layers
    critic = keras.Sequential(
        [
            layers.Dense(8),
            layers.LeakyReLU(0.2),
            layers.Dense(6, activation="tanh"),
            layers.Dense(1),
        ]
    )
    critic(np.zeros((1, 3), np.float32))
    critic.set_weights(
        [sin_weights(w.shape, 20 + k, 0.6) for k, w in enumerate(critic.get_weights())]
    )
    return critic
