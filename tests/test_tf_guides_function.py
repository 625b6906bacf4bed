"""``@tf.function`` as TensorFlow's guides use it, in a user's own code: a module whose
``__call__`` is a ``tf.function`` called on Python lists (float32, as TensorFlow converts
them), and the same module and a decorated function differentiated by a tape."""

import numpy as np
import pytest

import s2s_ad.tf as tf


class Scorer(tf.Module):
    """A user's linear scorer whose call is a tf.function."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, -2.0], [0.5, 0.0], [2.0, 1.0]], name="w")
        self.b = tf.Variable([0.1, -0.3], name="b")

    @tf.function
    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


@tf.function
def penalty(v):
    return tf.reduce_sum(v * v)


def test_python_lists_become_float32_tensors():
    scorer = Scorer()
    out = scorer([[2.0, 2.0, 2.0]])
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [[7.1, 0.0]], rtol=1e-6)
    batch = scorer([[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]])
    assert batch.shape == (1, 2, 2) and batch.dtype == np.float32
    assert penalty([1.0, 2.0]).dtype == np.float32
    assert penalty.python_function(np.array([1.0, 2.0])) == pytest.approx(5.0)


def test_gradients_through_decorated_calls():
    scorer = Scorer()
    x = tf.constant([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(scorer(x)) + 0.5 * penalty(scorer.w)
    g_w, g_b = tape.gradient(loss, [scorer.w, scorer.b])
    pre = np.asarray(x) @ scorer.w.numpy() + scorer.b.numpy()
    active = (pre > 0).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(g_w), np.asarray(x).T @ active + scorer.w.numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(np.asarray(g_b), active.sum(axis=0), rtol=1e-6)
