"""``x.shape`` as TensorFlow gives it: a ``TensorShape`` for tensors, Variables, specs and
symbolic Keras inputs, that NumPy still takes wherever it wants a shape."""

import pickle

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def test_tensor_and_variable_shapes_answer_tensorflows_accessors():
    x = tf.constant(np.zeros((2, 3)))
    v = tf.Variable(np.ones((4, 5, 6)))
    for value, dims in ((x, [2, 3]), (v, [4, 5, 6]), (tf.matmul(x, np.ones((3, 7))), [2, 7])):
        shape = value.shape
        assert isinstance(shape, tf.TensorShape)
        assert shape.as_list() == dims
        assert shape.rank == shape.ndims == len(shape) == len(dims)
        assert shape.num_elements() == int(np.prod(dims))
        assert shape == dims and shape == tuple(dims) and shape != dims[:-1]
        assert list(shape) == dims and shape[0] == dims[0] and shape[-1] == dims[-1]
        assert isinstance(shape[1:], tf.TensorShape) and shape[1:] == dims[1:]
        assert shape.is_fully_defined()
    assert repr(v.shape) == "TensorShape([4, 5, 6])"
    assert str(x.shape) == "(2, 3)" and str(tf.constant([1.0, 2.0]).shape) == "(2,)"
    assert tf.constant(3.0).shape == [] and tf.constant(3.0).shape.rank == 0
    assert "shape=(4, 5, 6)" in repr(v)


def test_numpy_takes_a_tensor_shape_as_a_shape():
    x = tf.constant(np.arange(6.0).reshape(2, 3))
    assert np.zeros(x.shape).shape == (2, 3)
    assert np.reshape(x, x.shape[::-1]).shape == (3, 2)
    assert np.ones(x.shape + (4,)).shape == (2, 3, 4)
    assert tf.reshape(x, [x.shape[1], x.shape[0]]).shape == [3, 2]
    y = tf.constant(np.zeros((2, 3)))
    y.shape = (3, 2)  # NumPy's in-place reshape still works
    assert y.shape == (3, 2)
    assert {x.shape: "known"}[(2, 3)] == "known"  # hashes as the tuple


def test_unknown_dimensions_and_ranks():
    spec = tf.TensorSpec(shape=[None, 3], dtype=tf.float32)
    assert isinstance(spec.shape, tf.TensorShape) and spec.shape.as_list() == [None, 3]
    assert spec.shape.num_elements() is None and not spec.shape.is_fully_defined()
    assert spec.shape.is_compatible_with([8, 3]) and not spec.shape.is_compatible_with([8, 2])
    anything = tf.TensorShape(None)
    assert anything.rank is None and str(anything) == "<unknown>"
    with pytest.raises(ValueError):
        anything.as_list()
    assert tf.TensorSpec(shape=None).shape.rank is None
    assert tf.TensorShape([2]).concatenate([3, None]).as_list() == [2, 3, None]
    symbolic = keras.Input(shape=(4,))
    assert isinstance(symbolic.shape, tf.TensorShape) and symbolic.shape.as_list() == [None, 4]
    assert pickle.loads(pickle.dumps(spec.shape)) == [None, 3]


def test_shapes_in_a_layer_built_from_them():
    class Scale(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", shape=[input_shape[-1]], initializer="ones")

        def call(self, x):
            assert x.shape.rank == 2
            return x * self.w

    layer = Scale()
    x = tf.constant(np.ones((3, 4), np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) * np.arange(4.0))
    assert layer.w.shape.as_list() == [4]
    np.testing.assert_allclose(tape.gradient(loss, layer.w), 3.0 * np.arange(4.0))
