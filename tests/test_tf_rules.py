"""``tf.square``, ``tf.reduce_sum`` and ``tf.reduce_mean`` have gradient rules: their
gradients in both modes, second derivatives, TensorFlow's ``axis`` as a list, Variables
as arguments and float32 kept, against finite differences and derivatives by hand."""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad
import s2s_ad.tf as tf


def energy(x, scale):
    spread = tf.reduce_mean(tf.square(x - tf.reduce_mean(x, axis=0, keepdims=True)), axis=[0])
    return tf.reduce_sum(spread * scale) + tf.reduce_sum(tf.square(x), axis=[0, 1])


def test_reverse_mode_against_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3))
    scale = rng.standard_normal(3)
    g = s2s_ad.grad(energy, (0, 1))(x, scale)
    want = numerical_grad(energy, (x, scale), (0, 1))
    for got, expected in zip(g, want):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_forward_mode_and_hessian_agree_with_reverse_mode():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3))
    scale = rng.standard_normal(3)
    direction = rng.standard_normal((4, 3))
    _, tangent = s2s_ad.jvp(lambda v: energy(v, scale), (x,), (direction,))
    gradient = s2s_ad.grad(energy)(x, scale)
    np.testing.assert_allclose(tangent, np.sum(gradient * direction), rtol=1e-10)
    hessian = s2s_ad.hessian(lambda v: energy(v, scale))(x)
    step = 1e-6
    moved = s2s_ad.grad(energy)(x + step * direction, scale)
    np.testing.assert_allclose(
        np.tensordot(hessian, direction, axes=2), (moved - gradient) / step, rtol=1e-4, atol=1e-6
    )


def test_a_tape_over_float32_variables_keeps_float32():
    w = tf.Variable(np.array([0.5, -1.5, 2.0], np.float32))
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.25]], np.float32)
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x * w)) + tf.reduce_sum(w, axis=[0])
        g = tape.gradient(loss, w)
        assert g.dtype == np.float32
        want = (2.0 * x * x * w.numpy()).sum(0) / x.size + 1.0
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_a_variable_as_the_argument_of_a_reduction_and_a_square():
    w = tf.Variable(np.array([1.0, -2.0, 0.5]))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(w), keepdims=True) + tf.reduce_mean(w)
    np.testing.assert_allclose(tape.gradient(loss, w), 2.0 * w.numpy() + 1.0 / 3.0)


def test_second_derivative_through_nested_tapes():
    x = tf.Variable(np.array([0.3, -1.1, 2.0]))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.square(tf.square(x)))
        g = inner.gradient(y, x)
        z = tf.reduce_mean(g)
    # y = sum(x^4): g = 4 x^3, d mean(g) / dx = 12 x^2 / 3
    np.testing.assert_allclose(outer.gradient(z, x), 4.0 * x.numpy() ** 2, rtol=1e-10)


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1], (1,), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy_and_their_gradients(axis, keepdims):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4))
    numpy_axis = tuple(axis) if isinstance(axis, list) else axis
    for reduce, ref, count in [
        (tf.reduce_sum, np.sum, 1),
        (tf.reduce_mean, np.mean, x.size // np.sum(x, axis=numpy_axis, keepdims=True).size),
    ]:
        np.testing.assert_allclose(
            reduce(x, axis=axis, keepdims=keepdims), ref(x, axis=numpy_axis, keepdims=keepdims)
        )
        g = s2s_ad.grad(lambda v, f=reduce: tf.reduce_sum(f(v, axis=axis, keepdims=keepdims)))(x)
        np.testing.assert_allclose(g, np.full_like(x, 1.0 / count))
