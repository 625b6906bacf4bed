"""Keras layers as TensorFlow's guides use them, in a user's own code: Python lists as
inputs (converted as Keras converts them, floats to float32, and built from their shape),
and a layer called on inputs its weights do not fit (TensorFlow's
``InvalidArgumentError``), with gradients through the layer unchanged."""

import numpy as np
import pytest

import s2s_ad.tf as tf


class Affine(tf.keras.layers.Layer):
    """A user's layer that makes its weights from the first input's shape."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        fan_in = input_shape[-1]
        values = np.arange(fan_in * self.units, dtype=np.float32).reshape(fan_in, self.units)
        self.w = tf.Variable(values / 10.0, name="w")
        self.b = tf.Variable(tf.ones([self.units]), name="b")

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


def test_a_list_of_floats_is_a_float32_batch():
    layer = Affine(2)
    out = layer([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]])
    assert layer.w.shape == (3, 2)
    assert out.dtype == np.float32 and out.shape == (2, 2)
    w = np.arange(6, dtype=np.float32).reshape(3, 2) / 10.0
    expected = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], np.float32) @ w + 1.0
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_inputs_that_do_not_fit_the_weights_raise_invalid_argument():
    layer = Affine(3)
    layer(tf.ones([2, 4]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\]: \[1,5\], In\[1\]: \[4,3\]"):
        layer(tf.ones([1, 5]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
    # transposed operands are checked after the transposition
    assert tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]), transpose_b=True).shape == (2, 2)


def test_gradients_through_the_checked_matmul():
    layer = Affine(3)
    x = tf.constant(np.linspace(-1.0, 1.0, 8).reshape(2, 4).astype(np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) ** 2)
    g_w, g_b = tape.gradient(loss, [layer.w, layer.b])
    out = np.asarray(x) @ layer.w.numpy() + layer.b.numpy()
    np.testing.assert_allclose(np.asarray(g_w), np.asarray(x).T @ (2.0 * out), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g_b), (2.0 * out).sum(axis=0), rtol=1e-5)


class _Encoder(tf.keras.Model):
    """A user's model whose sub-layers are built by its first call."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = Affine(4, name="hidden")
        self.head = tf.keras.layers.Dense(1, name="head")

    def call(self, x):
        return self.head(self.hidden(x))


def test_variables_made_by_build_are_named_under_the_layer():
    model = _Encoder(name="encoder")
    x = tf.ones([2, 3])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    # made by each layer's build, by a tf.Variable or add_weight, under the name scope
    # of the model whose first call builds them ('encoder/hidden/w:0', as in Keras 2)
    names = [v.name for v in model.trainable_variables]
    assert sorted(names) == [
        "encoder/head/bias:0",
        "encoder/head/kernel:0",
        "encoder/hidden/b:0",
        "encoder/hidden/w:0",
    ]
    grads = tape.gradient(loss, model.trainable_variables)
    by_name = dict(zip(names, grads))
    np.testing.assert_allclose(np.asarray(by_name["encoder/head/bias:0"]), [2.0])
    hidden = np.ones((2, 3), np.float32) @ model.hidden.w.numpy() + model.hidden.b.numpy()
    np.testing.assert_allclose(
        np.asarray(by_name["encoder/head/kernel:0"]), hidden.sum(axis=0)[:, None], rtol=1e-6
    )
    # a layer built directly keeps plain names, as in Keras
    lone = tf.keras.layers.Dense(2)
    lone.build((None, 3))
    assert [v.name for v in lone.variables] == ["kernel:0", "bias:0"]
    # a Sequential model's layers keep their own names
    seq = tf.keras.Sequential([tf.keras.layers.Dense(2, name="first")])
    seq(x)
    assert [v.name for v in seq.variables] == ["first/kernel:0", "first/bias:0"]
