"""``Dense`` applies ``tanh`` and ``relu`` (given by name, with their default arguments)
inline, other activations through their call: a training step through a tape gives
the finite-difference gradients for each, and the layer's values are those of the
activation function called on the affine map."""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.tf.keras import activations


def _affine_then(name):
    return {
        "tanh": np.tanh,
        "relu": lambda z: np.maximum(z, 0.0),
        "sigmoid": lambda z: 1.0 / (1.0 + np.exp(-z)),
        None: lambda z: z,
    }[name]


@pytest.mark.parametrize("name", ["tanh", "relu", "sigmoid", None])
def test_a_dense_step_matches_finite_differences(name):
    rng = np.random.default_rng(21)
    layer = tf.keras.layers.Dense(4, activation=name)
    x = rng.standard_normal((5, 3))
    layer(x)
    layer.set_weights([rng.standard_normal((3, 4)), rng.standard_normal(4) * 0.3])
    y = rng.standard_normal((5, 4))
    act = _affine_then(name)
    for _ in range(3):  # compiled by the first step, the layer's kept call after
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(layer(x) - y))
        gk, gb = tape.gradient(loss, layer.trainable_variables)
        kernel, bias = (w.numpy() for w in layer.weights)
        expected = numerical_grad(
            lambda k, b: np.mean((act(x @ k + b) - y) ** 2), (kernel, bias), (0, 1)
        )
        assert np.allclose(gk, expected[0], rtol=1e-6, atol=1e-9)
        assert np.allclose(gb, expected[1], rtol=1e-6, atol=1e-9)
        assert np.array_equal(layer(x), getattr(activations, name or "linear")(x @ kernel + bias))
        for w, g in zip(layer.trainable_variables, (gk, gb)):
            w.assign_sub(0.1 * g)


def test_relu_with_other_arguments_keeps_its_own_call():
    """A layer given ``relu`` with a threshold (a callable of the user's) is not the
    plain ``relu``: its own function runs, differentiated."""
    layer = tf.keras.layers.Dense(3, activation=lambda z: activations.relu(z, threshold=0.5))
    x = np.array([[1.0, -2.0], [0.5, 0.25]])
    layer(x)
    layer.set_weights([np.array([[0.4, -0.3, 0.9], [0.2, 0.1, -0.5]]), np.zeros(3)])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x))
    gk, _ = tape.gradient(loss, layer.trainable_variables)
    z = x @ layer.kernel.numpy()
    assert np.allclose(gk, x.T @ (z > 0.5).astype(float))
