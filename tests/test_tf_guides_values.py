"""Values as TensorFlow prints and computes them, in a user's own code: tensors and
Variables of several rows print their array on a new line, and softplus's gradient (the
sigmoid) keeps float32's digits for large inputs."""

import numpy as np
from fd import numerical_grad

import s2s_ad.tf as tf


def test_a_matrix_prints_on_its_own_lines():
    w = tf.Variable(np.arange(4, dtype=np.float32).reshape(2, 2), name="kernel")
    rows = tf.constant([[1.5, -2.0], [0.25, 4.0]])
    assert str(rows) == "tf.Tensor(\n[[ 1.5  -2.  ]\n [ 0.25  4.  ]], shape=(2, 2), dtype=float32)"
    assert repr(rows).startswith("<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[")
    assert repr(w).startswith("<tf.Variable 'kernel:0' shape=(2, 2) dtype=float32, numpy=\narray(")
    # one line stays on one line
    assert str(tf.constant([1.0, 2.0])) == "tf.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert repr(tf.Variable(3.0, name="s")).endswith("numpy=3.0>")


def test_softplus_gradient_is_the_float32_sigmoid():
    # a user's smooth hinge: softplus of a margin, large and small
    margin = tf.Variable([12.0, 10.0, 0.5, -3.0, -40.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.softplus(margin) * [1.0, 2.0, 3.0, 4.0, 5.0])
    g = tape.gradient(loss, margin)
    assert g.dtype == np.float32
    x = margin.numpy().astype(np.float64)
    exact = np.array([1.0, 2.0, 3.0, 4.0, 5.0]) / (1.0 + np.exp(-x))
    # within two float32 roundings of the exact sigmoid, also where it is close to 1 or 0
    np.testing.assert_allclose(np.asarray(g), exact, rtol=2.5e-7)
    fd = numerical_grad(lambda v: float(np.sum(np.logaddexp(0.0, v) * [1, 2, 3, 4, 5])), (x,), 0)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-12)
