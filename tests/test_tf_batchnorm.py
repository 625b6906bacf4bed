"""``keras.layers.BatchNormalization`` over any feature axis (channels-first images, a
middle axis, several axes): values and moving statistics as Keras computes them, and
gradients through a tape that agree with finite differences."""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.tf import keras

_EPS = 0.001


def _reference(x, axes, gamma, beta):
    """Batch normalization by hand: statistics over every axis but the feature axes."""
    reduced = tuple(a for a in range(x.ndim) if a not in axes)
    shape = [x.shape[a] if a in axes else 1 for a in range(x.ndim)]
    mean = x.mean(axis=reduced, keepdims=True)
    var = x.var(axis=reduced, keepdims=True)
    y = (x - mean) / np.sqrt(var + _EPS)
    return y * gamma.reshape(shape) + beta.reshape(shape), mean, var


CASES = [
    ("channels first", (4, 3, 2, 2), 1, (1,)),
    ("middle axis", (5, 3, 2), -2, (1,)),
    ("last axis", (6, 4), -1, (1,)),
    ("two axes", (4, 2, 3), [1, 2], (1, 2)),
]


@pytest.mark.parametrize("shape, axis, axes", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_training_step_values_statistics_and_gradients(shape, axis, axes):
    rng = np.random.default_rng(len(shape) * 10 + shape[1])
    x_value = rng.standard_normal(shape) * 2.0 + 0.5
    weights = rng.standard_normal(shape)
    bn = keras.layers.BatchNormalization(axis=axis, momentum=0.9, dtype="float64")
    x = tf.Variable(x_value)
    with tf.GradientTape() as tape:
        y = bn(x, training=True)
        loss = tf.reduce_sum(y * weights)
    param_shape = tuple(shape[a] for a in axes)
    assert bn.gamma.shape == param_shape and bn.moving_mean.shape == param_shape
    gamma0, beta0 = np.ones(param_shape), np.zeros(param_shape)
    expected, mean, var = _reference(x_value, axes, gamma0, beta0)
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-10, atol=1e-12)
    # the moving statistics moved once, by the batch statistics (biased variance)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * mean.reshape(param_shape))
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * var.reshape(param_shape))

    g_x, g_gamma, g_beta = tape.gradient(loss, [x, bn.gamma, bn.beta])

    def loss_of(xv, gamma, beta):
        return float(np.sum(_reference(xv, axes, gamma, beta)[0] * weights))

    args = (x_value, gamma0, beta0)
    for got, k in ((g_x, 0), (g_gamma, 1), (g_beta, 2)):
        np.testing.assert_allclose(
            np.asarray(got), numerical_grad(loss_of, args, k), rtol=1e-6, atol=1e-8
        )


def test_inference_uses_the_moving_statistics_along_the_axis():
    rng = np.random.default_rng(3)
    x_value = rng.standard_normal((4, 3, 5))
    bn = keras.layers.BatchNormalization(axis=1, dtype="float64")
    bn(x_value, training=True)
    bn.gamma.assign([1.0, 2.0, 0.5])
    bn.beta.assign([0.0, -1.0, 0.3])
    mean, var = bn.moving_mean.numpy(), bn.moving_variance.numpy()
    x = tf.Variable(x_value)
    with tf.GradientTape() as tape:
        y = bn(x, training=False)
        loss = tf.reduce_sum(y * y)
    scale = (bn.gamma.numpy() / np.sqrt(var + _EPS))[None, :, None]
    expected = (x_value - mean[None, :, None]) * scale + bn.beta.numpy()[None, :, None]
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-10)
    # inference does not move the statistics, and x's gradient goes through the scale only
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean)
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, x)), 2.0 * expected * scale)


class ChannelsFirstNet(keras.Model):
    """Images (batch, channels, h, w): a per-channel affine map, batch norm over the
    channel axis, a dense head."""

    def __init__(self):
        super().__init__()
        self.mix = tf.Variable(np.array([[1.0, 0.5], [-0.3, 0.8]]), name="mix")
        self.norm = keras.layers.BatchNormalization(axis=1, dtype="float64")
        self.head = keras.layers.Dense(1, dtype="float64")

    def call(self, images, training=None):
        mixed = tf.einsum("dc,bchw->bdhw", self.mix, images)
        normed = self.norm(mixed, training=training)
        return self.head(tf.reshape(normed, [tf.shape(images)[0], -1]))


def test_a_channels_first_model_trains_with_gradients_from_the_tape():
    rng = np.random.default_rng(5)
    images = rng.standard_normal((6, 2, 3, 3))
    target = rng.standard_normal((6, 1))
    model = ChannelsFirstNet()
    model(images, training=False)  # build
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(images, training=True) - target) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    names = [v.name for v in model.trainable_variables]
    assert len(grads) == len(names) == 5  # mix, gamma, beta, kernel, bias
    values = [v.numpy() for v in model.trainable_variables]

    def plain(*params):
        by_name = dict(zip(names, params))
        mix = by_name["mix:0"]
        gamma = next(p for n, p in by_name.items() if n.endswith("gamma:0"))
        beta = next(p for n, p in by_name.items() if n.endswith("beta:0"))
        kernel = next(p for n, p in by_name.items() if n.endswith("kernel:0"))
        bias = next(p for n, p in by_name.items() if n.endswith("bias:0"))
        mixed = np.einsum("dc,bchw->bdhw", mix, images)
        normed = _reference(mixed, (1,), gamma, beta)[0]
        out = normed.reshape(6, -1) @ kernel + bias
        return float(np.mean((out - target) ** 2))

    for k, got in enumerate(grads):
        np.testing.assert_allclose(
            np.asarray(got), numerical_grad(plain, tuple(values), k), rtol=1e-6, atol=1e-8
        )


def test_an_axis_out_of_range_is_refused():
    with pytest.raises(ValueError, match="out of range"):
        keras.layers.BatchNormalization(axis=3)(np.zeros((2, 3)))
