"""Tape behaviours met in TensorFlow's guides, each in a user's own code: a Keras stack
with BatchNormalization in training mode differentiated with respect to its input only
(``watch_accessed_variables=False``), by ``gradient``, ``jacobian`` and ``batch_jacobian``,
checked against finite differences, with the moving statistics moved once."""

import numpy as np
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.tf import keras

_EPS = 0.001


def _stack(seed):
    """An encoder: Dense -> BatchNormalization -> Dense (float64, weights by hand)."""
    rng = np.random.default_rng(seed)
    first = keras.layers.Dense(4, activation="tanh", dtype="float64")
    norm = keras.layers.BatchNormalization(momentum=0.8, dtype="float64")
    last = keras.layers.Dense(3, dtype="float64")
    first.build((None, 5))
    norm.build((None, 4))
    last.build((None, 4))
    first.kernel.assign(rng.standard_normal((5, 4)))
    first.bias.assign(rng.standard_normal(4) * 0.1)
    last.kernel.assign(rng.standard_normal((4, 3)))
    norm.gamma.assign([1.0, 0.5, 2.0, 1.5])
    norm.beta.assign([0.0, 0.1, -0.2, 0.3])
    return first, norm, last


def _by_hand(xv, first, norm, last):
    h = np.tanh(xv @ first.kernel.numpy() + first.bias.numpy())
    mean, var = h.mean(axis=0), h.var(axis=0)
    z = (h - mean) / np.sqrt(var + _EPS) * norm.gamma.numpy() + norm.beta.numpy()
    return z @ last.kernel.numpy() + last.bias.numpy(), mean, var


def _encode(x, first, norm, last):
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        h = first(x)
        h = norm(h, training=True)
        out = last(h)
    return tape, out


def test_input_gradient_through_batch_norm_in_training_mode():
    first, norm, last = _stack(0)
    xv = np.random.default_rng(1).standard_normal((6, 5))
    x = tf.constant(xv)
    tape, out = _encode(x, first, norm, last)
    expected, mean, var = _by_hand(xv, first, norm, last)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-10)
    # the block moved the statistics once; taking gradients does not move them again
    moving = norm.moving_mean.numpy().copy(), norm.moving_variance.numpy().copy()
    np.testing.assert_allclose(moving[0], 0.2 * mean, rtol=1e-10)
    np.testing.assert_allclose(moving[1], 0.8 + 0.2 * var, rtol=1e-10)

    weights = np.random.default_rng(2).standard_normal((6, 3))
    g = tape.gradient(out, x, output_gradients=weights)
    fd = numerical_grad(
        lambda v: float(np.sum(_by_hand(v, first, norm, last)[0] * weights)), (xv,), 0
    )
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-8)

    # the full Jacobian: each row (one output entry) is that entry's gradient
    j = tape.jacobian(out, x)
    assert j.shape == (6, 3, 6, 5)
    for i, k in [(0, 0), (3, 2), (5, 1)]:
        row = numerical_grad(
            lambda v, i=i, k=k: float(_by_hand(v, first, norm, last)[0][i, k]), (xv,), 0
        )
        np.testing.assert_allclose(np.asarray(j[i, k]), row, rtol=1e-6, atol=1e-8)
    # batch statistics couple the rows: the batch Jacobian is the diagonal blocks only
    jb = tape.batch_jacobian(out, x)
    assert jb.shape == (6, 3, 5)
    np.testing.assert_allclose(np.asarray(jb), np.einsum("bibk->bik", np.asarray(j)), rtol=1e-10)
    np.testing.assert_allclose(norm.moving_mean.numpy(), moving[0])
    np.testing.assert_allclose(norm.moving_variance.numpy(), moving[1])


def test_second_order_through_a_layers_kernel():
    """An outer tape over an inner tape's gradient with respect to a Variable reached
    through a layer: the Hessian block, checked against finite differences of the
    first-order gradient."""
    first, norm, last = _stack(3)
    x = tf.constant(np.random.default_rng(4).standard_normal((6, 5)))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_mean(last(first(x)) ** 2)
        g = inner.gradient(loss, first.kernel)
    h = np.asarray(outer.jacobian(g, first.kernel))
    assert h.shape == (5, 4, 5, 4)
    base = first.kernel.numpy().copy()

    def entry(kernel):
        first.kernel.assign(kernel)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(last(first(x)) ** 2)
        return np.asarray(tape.gradient(loss, first.kernel))[1, 2]

    row = numerical_grad(entry, (base,), 0)
    first.kernel.assign(base)
    np.testing.assert_allclose(h[1, 2], row, rtol=1e-6, atol=1e-9)
