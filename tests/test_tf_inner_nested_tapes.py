"""A helper whose inner tape's block opens another tape (second order inside the
helper: a Hessian-vector product, the gradient penalty of a gradient penalty), called
in an outer tape's block: the outer gradient is a third derivative.

The literals were printed by the same programs run with TensorFlow 2.21; the outer
gradients are also checked against central finite differences of the helper's value.
"""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.errors import TransformError
from s2s_ad.tf import keras

W0 = np.array([[0.3, -0.2], [0.5, 0.4], [-0.1, 0.7]])
X0 = np.array([[0.5, -1.0, 0.8], [0.2, 0.4, -0.6]])
V0 = np.array([[1.0, 0.5, -0.5], [0.3, -0.2, 0.9]])


class Scorer(tf.Module):
    def __init__(self, w):
        super().__init__()
        self.w = tf.Variable(w)

    def __call__(self, x):
        return tf.reduce_sum(tf.tanh(tf.matmul(x, self.w)) ** 2)


def hessian_vector_product(f, x, v):
    """The Hessian of ``f`` at ``x`` times ``v``: reverse over reverse."""
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
        gv = tf.reduce_sum(g * v)
    return t2.gradient(gv, x)


def _hvp_loss(scorer):
    h = hessian_vector_product(scorer, tf.constant(X0), tf.constant(V0))
    return tf.reduce_sum(h**2), h


def test_an_outer_tape_over_a_hessian_vector_product_helper():
    scorer = Scorer(W0.copy())
    with tf.GradientTape() as outer:
        loss, h = _hvp_loss(scorer)
    g = outer.gradient(loss, scorer.w)
    # TensorFlow 2.21
    np.testing.assert_allclose(
        h.numpy(),
        [[0.29057218, -0.02169194, -0.53383917], [-0.1723631, 0.20296883, 0.48084403]],
        atol=1e-8,
    )
    np.testing.assert_allclose(float(loss), 0.6720033533742498, rtol=1e-12)
    np.testing.assert_allclose(
        g.numpy(),
        [[0.8793084, -1.81442596], [-0.60048689, 0.13909693], [-0.26518738, 2.13422183]],
        atol=1e-8,
    )

    def at(w):
        scorer.w.assign(w)
        return float(_hvp_loss(scorer)[0])

    want = numerical_grad(at, [W0.copy()])
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-8)


class Critic(tf.Module):
    def __init__(self):
        super().__init__()
        self.w1 = tf.Variable(np.sin(np.arange(15.0)).reshape(3, 5) * 0.6)
        self.b1 = tf.Variable(np.cos(np.arange(5.0)) * 0.3)
        self.w2 = tf.Variable(np.sin(np.arange(5.0) + 2).reshape(5, 1) * 0.6)

    def __call__(self, x):
        return tf.matmul(tf.tanh(tf.matmul(x, self.w1) + self.b1), self.w2)


def penalty_of_penalty(critic, x):
    """The mean square of the input gradient of a gradient penalty."""
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            s = critic(x)
        g = t1.gradient(s, x)
        pen = tf.reduce_sum(g**2)
    g2 = t2.gradient(pen, x)
    return tf.reduce_mean(g2**2)


X1 = np.sin(np.arange(12.0) * 1.37 + 1).reshape(4, 3) * 0.8


def test_the_gradient_penalty_of_a_gradient_penalty_of_a_module_critic():
    critic = Critic()
    x = tf.constant(X1)
    with tf.GradientTape() as tape:
        loss = penalty_of_penalty(critic, x)
    variables = [critic.w1, critic.b1, critic.w2]
    grads = tape.gradient(loss, variables)
    # TensorFlow 2.21 (the first entries of each gradient)
    np.testing.assert_allclose(float(loss), 0.029477591207745568, rtol=1e-12)
    expected = [
        [-0.007881069, -0.0003983213, 0.0279481197, 0.0279895399, -0.0009385288],
        [-0.0140505864, -0.0008912494, -0.0042750353, 0.017814009, 0.0020437014],
        [0.0652535181, 0.0494630203, -0.0640916359, -0.0674844781, -0.0607875462],
    ]
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g.numpy().ravel()[:5], e, atol=1e-9)
    for variable, g in zip(variables, grads):
        start = variable.numpy()

        def at(value, variable=variable):
            variable.assign(value)
            return float(penalty_of_penalty(critic, x))

        want = numerical_grad(at, [start])
        variable.assign(start)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-9)


def test_a_third_derivative_through_keras_layers_matches_finite_differences():
    """Was refused (a ValueError inside: a scalar zero cotangent broadcast into a matrix
    product by the transposes of add_at/unbroadcast, see tests/test_spec5.py)."""
    critic = keras.Sequential(
        [
            keras.layers.Dense(5, activation="tanh", dtype="float64"),
            keras.layers.Dense(1, dtype="float64"),
        ]
    )
    critic(np.zeros((1, 3)))
    x = tf.constant(X1)
    with tf.GradientTape() as tape:
        loss = penalty_of_penalty(critic, x)
    grads = tape.gradient(loss, critic.trainable_variables)
    for variable, g in zip(critic.trainable_variables, grads):
        start = variable.numpy().copy()

        def at(value, variable=variable):
            variable.assign(value)
            return float(penalty_of_penalty(critic, x))

        want = numerical_grad(at, [start])
        variable.assign(start)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-8)


def weight_penalty_slope(critic, x):
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            s = tf.reduce_sum(critic(x) ** 2)
        g = t1.gradient(s, [critic.w1, critic.b1])
        pen = tf.reduce_sum(g[0] ** 2) + tf.reduce_sum(g[1] ** 2)
    return tf.reduce_sum(t2.gradient(pen, critic.w2))


def test_nested_gradients_with_respect_to_variables_under_an_outer_tape_are_refused():
    critic = Critic()
    x = tf.constant(X1)
    # run natively, the helper gives TensorFlow's value
    np.testing.assert_allclose(
        float(weight_penalty_slope(critic, x)), -7.853354501760605, rtol=1e-12
    )
    with tf.GradientTape() as tape:
        loss = weight_penalty_slope(critic, x)
    with pytest.raises(TransformError, match="third derivative"):
        tape.gradient(loss, [critic.w1, critic.b1, critic.w2])
