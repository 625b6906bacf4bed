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


def regression_data():
    """A float32 batch of 32 rows of 4 features and a linear target of two of them."""
    rng = np.random.RandomState(0)
    x = rng.normal(size=(32, 4)).astype(np.float32)
    y = (x[:, :1] * 0.5 - x[:, 1:2] + 0.1).astype(np.float32)
    return x, y


def set_sin_weights(model, scale=0.5):
    """Give every weight of ``model`` deterministic values (sines of its positions)."""
    values = []
    for k, w in enumerate(model.get_weights()):
        v = np.sin(np.arange(w.size) * 0.7 + k) * scale
        values.append(v.reshape(w.shape).astype(w.dtype))
    model.set_weights(values)
