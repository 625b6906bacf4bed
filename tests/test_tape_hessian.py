"""Second derivatives through a layer's Variables: an outer tape over an inner tape's
gradient with respect to ``layer.kernel`` (variables mode differentiated again).

Each program is checked against central differences of our own first-order tape
gradient, and the three programs also run under TensorFlow 2.21 with ``tf_keras``
(float64, the same weights): the numbers TensorFlow printed are kept here, next to the
finite differences that confirm them.
"""

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad.errors import TransformError
from s2s_ad.tf import keras


def _fd_jacobian(value_of, variable, eps=1e-6):
    """d value_of() / d variable by central differences (the Variable assigned)."""
    base = np.asarray(variable).copy()
    out = None
    for idx in np.ndindex(*base.shape):
        plus = base.copy()
        plus[idx] += eps
        variable.assign(plus)
        up = np.asarray(value_of(), dtype=np.float64)
        minus = base.copy()
        minus[idx] -= eps
        variable.assign(minus)
        down = np.asarray(value_of(), dtype=np.float64)
        if out is None:
            out = np.zeros(up.shape + base.shape)
        out[(Ellipsis, *idx)] = (up - down) / (2 * eps)
    variable.assign(base)
    return out


def _two_dense(seed):
    rng = np.random.default_rng(seed)
    first = keras.layers.Dense(4, activation="tanh", dtype="float64")
    last = keras.layers.Dense(2, dtype="float64")
    first.build((None, 3))
    last.build((None, 4))
    first.kernel.assign(rng.standard_normal((3, 4)))
    first.bias.assign(rng.standard_normal(4) * 0.1)
    last.kernel.assign(rng.standard_normal((4, 2)))
    last.bias.assign(rng.standard_normal(2) * 0.1)
    return first, last, rng.standard_normal((6, 3))


def test_hessian_of_a_loss_with_respect_to_a_dense_kernel():
    first, last, xv = _two_dense(11)
    x = tf.constant(xv)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            x = first(x)  # the block's input assigned again, as in TensorFlow's guide
            x = last(x)
            loss = tf.reduce_mean(x**2)
        g = inner.gradient(loss, first.kernel)
    h = outer.jacobian(g, first.kernel)
    assert h.shape == (3, 4, 3, 4)

    def gradient():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(last(first(tf.constant(xv))) ** 2)
        return tape.gradient(loss, first.kernel)

    np.testing.assert_allclose(np.asarray(g), np.asarray(gradient()), rtol=1e-12)
    fd = _fd_jacobian(gradient, first.kernel)
    np.testing.assert_allclose(np.asarray(h), fd, rtol=1e-6, atol=1e-8)
    h_mat = np.asarray(tf.reshape(h, [12, 12]))
    np.testing.assert_allclose(h_mat, h_mat.T, atol=1e-12)
    tf_says = [h[0, 0, 0, 0], h[1, 2, 0, 3], h[2, 3, 2, 3], np.trace(h_mat)]
    np.testing.assert_allclose(
        tf_says, [0.02001816488583654, 0.004133569704758904, 0.6913429871075873, 1.3702634355135137]
    )


def test_mixed_block_of_a_sequential_models_hessian():
    """d/d(second kernel) of the gradient with respect to the first kernel."""
    rng = np.random.default_rng(12)
    model = keras.Sequential(
        [
            keras.layers.Dense(3, activation="sigmoid", dtype="float64"),
            keras.layers.Dense(1, dtype="float64"),
        ]
    )
    model.build((None, 2))
    for v in model.trainable_variables:
        v.assign(rng.standard_normal(v.shape))
    x = tf.constant(rng.standard_normal((5, 2)))
    y = tf.constant(rng.standard_normal((5, 1)))
    hidden, out = model.layers
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            pred = model(x)
            loss = tf.reduce_mean((pred - y) ** 2)
        gk = t1.gradient(loss, hidden.kernel)
    mixed = t2.jacobian(gk, out.kernel)
    assert mixed.shape == (2, 3, 3, 1)

    def gradient():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        return tape.gradient(loss, hidden.kernel)

    fd = _fd_jacobian(gradient, out.kernel)
    np.testing.assert_allclose(np.asarray(mixed), fd, rtol=1e-6, atol=1e-9)
    # TensorFlow's own sigmoid differs from NumPy's in the 9th digit (its first-order
    # gradient of this loss already does)
    tf_says = [mixed[0, 0, 0, 0], mixed[1, 2, 1, 0], np.sum(mixed)]
    np.testing.assert_allclose(
        tf_says, [-0.0699789521989877, 0.051748634944764775, 0.3823815723952834], rtol=1e-7
    )


def test_newton_step_on_a_regression_layer_lands_on_least_squares():
    """For a linear layer and a squared loss one Newton step on the kernel is exact: the
    kernel becomes the least-squares fit of the targets minus the bias."""
    rng = np.random.default_rng(13)
    reg = keras.layers.Dense(1, dtype="float64")
    reg.build((None, 3))
    reg.kernel.assign(rng.standard_normal((3, 1)))
    reg.bias.assign([0.5])
    xv, yv = rng.standard_normal((10, 3)), rng.standard_normal((10, 1))
    X, Y = tf.constant(xv), tf.constant(yv)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            loss = tf.reduce_mean((reg(X) - Y) ** 2)
        g = t1.gradient(loss, reg.kernel)
    h = t2.jacobian(g, reg.kernel)
    n = tf.reduce_prod(reg.kernel.shape)
    assert n.dtype == tf.int32 and int(n) == 3  # as TensorFlow converts a shape
    h_mat = tf.reshape(h, [n, n])
    np.testing.assert_allclose(np.asarray(h_mat), 2 * xv.T @ xv / 10, rtol=1e-12)
    step = tf.linalg.solve(h_mat, tf.reshape(g, [n, 1]))
    reg.kernel.assign_sub(tf.reshape(step, reg.kernel.shape))
    best = np.linalg.lstsq(xv, yv - 0.5, rcond=None)[0]
    np.testing.assert_allclose(np.asarray(reg.kernel), best, rtol=1e-10)
    np.testing.assert_allclose(
        np.asarray(reg.kernel).ravel(),
        [-0.8229774879433549, -0.2731732114384853, 0.3850761557259801],
        rtol=1e-10,
    )


class MLP(tf.Module):
    """Weights as a list of (W, b) pairs, read by unpacking in a loop."""

    def __init__(self, sizes, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.params = [
            (tf.Variable(rng.standard_normal((m, n)) * 0.7), tf.Variable(rng.standard_normal(n)))
            for m, n in zip(sizes[:-1], sizes[1:])
        ]

    def __call__(self, x):
        for W, b in self.params[:-1]:
            x = tf.tanh(x @ W + b)
        W, b = self.params[-1]
        return x @ W + b


def _mlp_problem():
    mlp = MLP([3, 4, 2], 0)
    rng = np.random.default_rng(1)
    return mlp, rng.standard_normal((5, 3)), rng.standard_normal((5, 2))


def _mlp_gradient(mlp, xv, yv, sources):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((mlp(tf.constant(xv)) - yv) ** 2)
    return tape.gradient(loss, sources)


def test_first_order_through_variables_held_in_a_list_of_pairs():
    mlp, xv, yv = _mlp_problem()
    W0 = mlp.params[0][0]
    g = _mlp_gradient(mlp, xv, yv, W0)
    assert g is not None
    loss = lambda: np.mean((mlp(tf.constant(xv)) - yv) ** 2)  # noqa: E731
    np.testing.assert_allclose(np.asarray(g), _fd_jacobian(loss, W0), rtol=1e-6, atol=1e-9)


def test_gradient_penalty_of_an_mlp_module_for_its_variables_and_its_input():
    mlp, xv, yv = _mlp_problem()
    (W0, b0), (W1, _) = mlp.params
    x = tf.constant(xv)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            loss = tf.reduce_mean((mlp(x) - yv) ** 2)
        gw, gb = t1.gradient(loss, [W0, b0])
        penalty = tf.reduce_sum(gw**2) + tf.reduce_sum(gb**2)
    by_var = t2.gradient(penalty, [W0, W1, x])

    def penalty_of(xs=xv):
        gw, gb = _mlp_gradient(mlp, xs, yv, [W0, b0])
        return np.sum(np.asarray(gw) ** 2) + np.sum(np.asarray(gb) ** 2)

    for got, var in zip(by_var, [W0, W1]):
        np.testing.assert_allclose(
            np.asarray(got), _fd_jacobian(penalty_of, var), rtol=1e-6, atol=1e-9
        )
    fd_x = np.zeros_like(xv)
    for idx in np.ndindex(*xv.shape):
        plus, minus = xv.copy(), xv.copy()
        plus[idx] += 1e-6
        minus[idx] -= 1e-6
        fd_x[idx] = (penalty_of(plus) - penalty_of(minus)) / 2e-6
    np.testing.assert_allclose(np.asarray(by_var[2]), fd_x, rtol=1e-6, atol=1e-9)


class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense1 = keras.layers.Dense(3, activation="tanh", dtype="float64")
        self.dense2 = keras.layers.Dense(1, dtype="float64")

    def call(self, inputs):
        return self.dense2(self.dense1(inputs))

    def curvature(self, x, y):
        """The gradient and Hessian of the loss for the first layer's kernel."""
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                loss = tf.reduce_mean((self(x) - y) ** 2)
            g = t1.gradient(loss, self.dense1.kernel)
        return g, t2.jacobian(g, self.dense1.kernel)


def test_hessian_taken_in_a_models_own_method():
    net = Regressor()
    rng = np.random.default_rng(3)
    xv, yv = rng.standard_normal((6, 2)), rng.standard_normal((6, 1))
    net(xv)
    g, h = net.curvature(xv, yv)

    def gradient():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((net(xv) - yv) ** 2)
        return tape.gradient(loss, net.dense1.kernel)

    np.testing.assert_allclose(np.asarray(g), np.asarray(gradient()), rtol=1e-12)
    fd = _fd_jacobian(gradient, net.dense1.kernel)
    np.testing.assert_allclose(np.asarray(h), fd, rtol=1e-6, atol=1e-9)


def test_third_derivative_through_a_layers_kernel_is_refused():
    layer = keras.layers.Dense(2, activation="tanh", dtype="float64")
    x = tf.constant(np.random.default_rng(0).standard_normal((4, 3)))
    layer(x)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                loss = tf.reduce_sum(layer(x) ** 2)
            g = t1.gradient(loss, layer.kernel)
            s = tf.reduce_sum(g**2)
        g2 = t2.gradient(s, layer.kernel)
        s2 = tf.reduce_sum(g2)
    with pytest.raises(TransformError, match="third derivative"):
        t3.gradient(s2, layer.kernel)


def test_inner_block_that_assigns_an_input_again():
    """The inner gradient takes the inputs as they were when the inner block began, also
    when the block assigns one of them again (``s = s * 3.0``)."""
    w = tf.Variable(1.5)
    s = tf.constant(2.0)
    s0 = s
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            h = w * w * s
            s = s * 3.0
            y = h * s
        g = t1.gradient(y, w)
    d2 = t2.gradient(g, w)

    def gradient():
        with tf.GradientTape() as tape:
            y = w * w * s0 * (s0 * 3.0)
        return tape.gradient(y, w)

    np.testing.assert_allclose(float(g), float(gradient()), rtol=1e-6)
    np.testing.assert_allclose(float(d2), _fd_jacobian(gradient, w, eps=1e-2), rtol=1e-4)


def test_second_order_through_batch_normalization_in_training():
    """BatchNormalization's call assigns ``y`` again inside branches and updates its
    moving statistics: the Hessian of a loss through it agrees with finite differences
    of the first-order gradient, and the statistics moved once (the block's call)."""
    rng = np.random.default_rng(0)
    dense = keras.layers.Dense(3, activation="tanh", dtype="float64")
    norm = keras.layers.BatchNormalization(dtype="float64")
    x = rng.standard_normal((6, 2))
    norm(dense(x), training=False)  # built; the statistics untouched
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            h = norm(dense(x), training=True)
            loss = tf.reduce_sum(h**3)
        g = t1.gradient(loss, dense.kernel)
    hessian = t2.jacobian(g, dense.kernel)
    moved = norm.moving_mean.numpy().copy()
    np.testing.assert_allclose(moved, 0.01 * np.mean(np.tanh(x @ dense.kernel.numpy()), axis=0))

    def gradient():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(norm(dense(x), training=True) ** 3)
        return tape.gradient(loss, dense.kernel)

    want = _fd_jacobian(gradient, dense.kernel)
    np.testing.assert_allclose(np.asarray(hessian), want, rtol=1e-5, atol=1e-6)
