"""Calls resolved at run time (a model object passed in, a layer's ``__call__``) are
remembered per function after their first resolution: the shortcut must give the same
gradients as resolving again, and must step aside when a rule applies."""

import numpy as np
from fd import numerical_grad

import s2s_ad
import s2s_ad.tf as tf
from s2s_ad.tf import keras


class Affine:
    """A callable object: ``model(x)`` dispatches to ``Affine.__call__`` at run time."""

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


def loss(model, x):
    return np.sum(model(x) ** 2)


_X = np.array([[0.5, -1.0], [0.3, 0.8], [-0.2, 0.1]])


def _model(seed):
    rng = np.random.default_rng(seed)
    return Affine(rng.standard_normal((2, 3)), rng.standard_normal(3))


def test_each_object_gets_its_own_gradient_through_the_remembered_code():
    grad_x = s2s_ad.grad(loss, 1)
    for seed in range(4):  # the second call on takes the shortcut, other objects alike
        model = _model(seed)
        for _ in range(2):
            got = grad_x(model, _X)
            expected = numerical_grad(lambda x, m=model: loss(m, x), (_X,), 0)
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_an_object_with_its_own_rule_is_not_taken_for_its_class():
    plain, special = _model(1), _model(2)
    s2s_ad.defgrad(special, lambda g, x: np.full(np.shape(x), 7.0))
    grad_x = s2s_ad.grad(loss, 1)
    # the plain object's call is remembered first; the special one has a rule of its own
    np.testing.assert_allclose(
        grad_x(plain, _X), numerical_grad(lambda x: loss(plain, x), (_X,), 0), rtol=1e-6
    )
    got = grad_x(special, _X)
    np.testing.assert_allclose(got, np.full(_X.shape, 7.0))
    np.testing.assert_allclose(
        grad_x(plain, _X), numerical_grad(lambda x: loss(plain, x), (_X,), 0), rtol=1e-6
    )


def test_a_rule_registered_later_replaces_the_remembered_code():
    class Square:
        def __call__(self, x):
            return x * x

    def total(fn, x):
        return np.sum(fn(x))

    grad_x = s2s_ad.grad(total, 1)
    square = Square()
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad_x(square, x), 2.0 * x)
    np.testing.assert_allclose(grad_x(square, x), 2.0 * x)  # remembered
    s2s_ad.defgrad(square, lambda g, v: g * 100.0)
    np.testing.assert_allclose(grad_x(square, x), [100.0, 100.0])


def test_keras_layers_called_directly_or_through_call_agree():
    """A built layer is dispatched straight to ``call``: the same numbers as a layer whose
    ``__call__`` is overridden (which keeps the full path)."""

    class Logged(keras.layers.Dense):
        def __call__(self, inputs, training=None):
            return super().__call__(inputs, training=training)

    x = np.array([[0.2, -0.4, 1.0], [0.7, 0.1, -0.3]], np.float32)
    direct = keras.layers.Dense(2, activation="tanh")
    logged = Logged(2, activation="tanh")
    direct(x)
    logged(x)
    logged.set_weights(direct.get_weights())
    grads = []
    for layer in (direct, logged):
        for _ in range(2):
            with tf.GradientTape() as tape:
                out = tf.reduce_sum(layer(x, training=True) ** 2)
            grads.append(tape.gradient(out, layer.trainable_variables))
    for pair in grads[1:]:
        for a, b in zip(grads[0], pair):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    kernel, bias = (v.numpy().astype(np.float64) for v in direct.trainable_variables)

    def plain(k, c):
        return float(np.sum(np.tanh(x @ k + c) ** 2))

    np.testing.assert_allclose(
        np.asarray(grads[0][0]), numerical_grad(plain, (kernel, bias), 0), rtol=1e-3, atol=1e-4
    )
