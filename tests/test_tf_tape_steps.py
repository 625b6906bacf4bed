"""A persistent tape whose block takes an optimizer step: the gradient of a loss computed
after the step is taken at the new weights, the gradient of a loss computed before the
step at the old ones, and a step after the block changes neither (TensorFlow
differentiates the values that were read).

The ``_TF`` literals were recorded from a run of the same program with TensorFlow 2.21
and tf_keras (``TF_USE_LEGACY_KERAS=1``), with the same weights (set explicitly).
"""

import numpy as np
import pytest
from fd import numerical_grad
from tf_weights import sin_weights

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def _model():
    model = keras.Sequential([keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(1)])
    model(np.zeros((1, 3), np.float32))
    model.set_weights([sin_weights(w.shape, k) for k, w in enumerate(model.get_weights())])
    return model


_X, _Y = sin_weights((5, 3), 7.0), sin_weights((5, 1), 2.0)

# TensorFlow: the two losses, and the gradient of the second one (flattened)
_TF_LOSSES = (1.1211905479431152, 0.861781895160675)
_TF = [
    [-0.0557027, -0.0260988, 0.0560097, -0.0018608, -0.1292284, 0.0717169]
    + [0.2090331, 0.0118939, 0.0041535, 0.0547067, 0.0273734, 0.0066053],
    [-0.0058416, -0.1039537, -0.0312185, -0.0149867],
    [0.5751564, 0.2675767, -0.6416034, -0.4265492],
    [0.570103],
]


def _step_in_the_block(model, opt):
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_mean((model(_X) - _Y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        loss_after = tf.reduce_mean((model(_X) - _Y) ** 2)
    return tape, loss, loss_after


def test_the_gradient_of_a_loss_computed_after_the_step_is_at_the_new_weights():
    model = _model()
    tape, loss, loss_after = _step_in_the_block(model, keras.optimizers.SGD(0.1))
    assert (float(loss), float(loss_after)) == pytest.approx(_TF_LOSSES, rel=1e-6)
    grads = tape.gradient(loss_after, model.trainable_variables)
    for got, want in zip(grads, _TF):
        np.testing.assert_allclose(np.ravel(got), want, rtol=1e-5, atol=1e-7)
    # finite differences at the weights the step left, in float64
    weights = [v.numpy().astype(np.float64) for v in model.trainable_variables]
    want = numerical_grad(_mse_numpy, weights, (0, 1, 2, 3))
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-6)


def _mse_numpy(k1, b1, k2, b2):
    return float(np.mean((np.tanh(_X @ k1 + b1) @ k2 + b2 - _Y) ** 2))


def test_the_gradient_of_the_loss_computed_before_the_step_is_at_the_old_weights():
    model = _model()
    weights = [v.numpy().astype(np.float64) for v in model.trainable_variables]
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_mean((model(_X) - _Y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        keras.optimizers.Adam(0.01).apply_gradients(zip(grads, model.trainable_variables))
    again = tape.gradient(loss, model.trainable_variables)
    want = numerical_grad(_mse_numpy, weights, (0, 1, 2, 3))
    for inside, after, expected in zip(grads, again, want):
        np.testing.assert_array_equal(np.asarray(after), np.asarray(inside))
        np.testing.assert_allclose(np.asarray(after), expected, rtol=1e-4, atol=1e-6)
    assert not np.allclose(model.trainable_variables[0].numpy(), weights[0])


def test_a_step_after_the_block_leaves_the_gradient_of_the_loss_after_the_first():
    model = _model()
    opt = keras.optimizers.SGD(0.1)
    tape, _, loss_after = _step_in_the_block(model, opt)
    grads = tape.gradient(loss_after, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))  # the weights move again
    again = tape.gradient(loss_after, model.trainable_variables)
    for got, want in zip(again, _TF):
        np.testing.assert_allclose(np.ravel(got), want, rtol=1e-5, atol=1e-7)


def test_a_gradient_inside_the_block_after_the_step_and_a_variable_used_by_name():
    w = tf.Variable(np.array([0.5, -1.5, 2.0]))
    x = np.array([1.0, 2.0, -0.5])
    opt = keras.optimizers.SGD(0.25)
    with tf.GradientTape(persistent=True) as tape:
        first = tf.reduce_sum(tf.sin(w * x))
        g = tape.gradient(first, w)
        opt.apply_gradients([(g, w)])
        second = tf.reduce_sum(tf.sin(w * x) ** 2)
        inside = tape.gradient(second, w)
    stepped = np.array([0.5, -1.5, 2.0]) - 0.25 * np.cos(np.array([0.5, -1.5, 2.0]) * x) * x
    np.testing.assert_allclose(w.numpy(), stepped)
    want = 2.0 * np.sin(stepped * x) * np.cos(stepped * x) * x
    np.testing.assert_allclose(inside.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(second, w).numpy(), want, rtol=1e-12)
    start = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(tape.gradient(first, w).numpy(), np.cos(start * x) * x)
