"""Variables and arrays reached through objects inside a tape's block: a layer's kernel
named in the block (``model.layers[0].kernel``, ``self.dense.kernel``, under an ``if``
and on every training step), and a new value stored in a layer's attribute before the
layer is called (``layer.W = W``, a hypernetwork's ``lin.w = tf.sin(V) * 1.5``, a Keras
``dense.kernel = base * scale``).

The literals were printed by the same programs run with TensorFlow 2.21 and tf_keras
(``TF_USE_LEGACY_KERAS=1``), with the same weights and data; the float64 programs are
also checked against central finite differences.
"""

import numpy as np
import pytest
from fd import numerical_grad
from tf_weights import sin_weights as _w

import s2s_ad.tf as tf
from s2s_ad.tf import keras

layers = keras.layers


def test_a_kernel_named_in_a_branch_of_the_block_on_every_step():
    model = keras.Sequential([layers.Dense(4, activation="tanh"), layers.Dense(1)])
    model(np.zeros((1, 3), np.float32))
    model.set_weights([_w(w.shape, k, 0.5) for k, w in enumerate(model.get_weights())])
    x, y = _w((5, 3), 7.0), _w((5, 1), 9.0)
    opt = keras.optimizers.SGD(0.1)
    losses, rows = [], []
    for step in range(3):
        with tf.GradientTape() as tape:
            pred = model(x)
            loss = tf.reduce_mean((pred - y) ** 2)
            if step > 0:  # a weight penalty from the second step on
                loss = loss + 0.01 * tf.reduce_sum(model.layers[0].kernel ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
        rows.append(grads[0].numpy()[0])
    # TensorFlow 2.21 (float32)
    np.testing.assert_allclose(
        losses, [0.5612803101539612, 0.5246275663375854, 0.49303826689720154], rtol=1e-6
    )
    np.testing.assert_allclose(
        rows,
        [
            [-0.046562, -0.000949, 0.041333, 0.003387],
            [-0.037362, 0.007344, 0.037525, -0.006821],
            [-0.031054, 0.006395, 0.032162, -0.007691],
        ],
        atol=2e-6,
    )


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(4, activation="relu")
        self.out = layers.Dense(2)
        self.opt = keras.optimizers.Adam(0.05)

    def call(self, x):
        return self.out(self.dense(x))

    def step(self, x, y, l2):
        with tf.GradientTape() as tape:
            logits = self(x)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            if l2 > 0:
                loss += l2 * tf.nn.l2_loss(self.dense.kernel)
            else:
                loss += 0.001 * tf.reduce_sum(tf.abs(self.out.kernel))
        grads = tape.gradient(loss, self.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.trainable_variables))
        return loss, grads


def test_a_models_training_step_naming_its_layers_kernels_in_both_branches():
    net = Net()
    net(np.zeros((1, 3), np.float32))
    net.set_weights([_w(w.shape, k, 0.5) for k, w in enumerate(net.get_weights())])
    x, y = _w((6, 3), 3.0), np.array([0, 1, 1, 0, 1, 0])
    losses, first, out = [], [], []
    for i in range(4):
        loss, grads = net.step(x, y, 0.01 * (i % 2))
        losses.append(float(loss))
        first.append(grads[0].numpy()[0])
        out.append(grads[2].numpy()[0])
    # TensorFlow 2.21 (float32, Adam)
    np.testing.assert_allclose(losses, [0.653568, 0.606287, 0.552921, 0.516366], atol=2e-6)
    np.testing.assert_allclose(
        first,
        [
            [0.026795, -0.034342, 0.00848, -0.002051],
            [0.079895, -0.030467, 0.001455, -0.003621],
            [0.082976, -0.03403, 0.0, 0.0],
            [-0.005432, -0.023164, 0.000758, -0.002755],
        ],
        atol=3e-6,
    )
    np.testing.assert_allclose(
        out,
        [
            [-0.032587, 0.032587],
            [-0.061942, 0.061942],
            [-0.084222, 0.084222],
            [-0.099958, 0.099958],
        ],
        atol=2e-6,
    )


class Dense(tf.Module):
    def __init__(self, W):
        super().__init__()
        self.W = W

    def __call__(self, x):
        return tf.tanh(tf.matmul(x, self.W))


def _put_weights(weights, stack, x, scaled):
    with tf.GradientTape() as tape:
        for layer, W in zip(stack, weights):
            layer.W = W * 1.0 if scaled else W
        h = x
        for layer in stack:
            h = layer(h)
        loss = tf.reduce_sum(h**2)
    return loss, tape


@pytest.mark.parametrize("scaled", [False, True])
def test_weights_put_into_the_layers_inside_the_block(scaled):
    rs = np.random.RandomState(0)
    w0 = [rs.randn(3, 3), rs.randn(3, 2)]
    x = rs.randn(4, 3)
    stack = [Dense(np.zeros((3, 3))), Dense(np.zeros((3, 2)))]
    weights = [tf.Variable(w) for w in w0]
    loss, tape = _put_weights(weights, stack, x, scaled)
    grads = tape.gradient(loss, weights)
    # TensorFlow 2.21: the loss and the first row of each gradient
    np.testing.assert_allclose(float(loss), 4.00839627942513, rtol=1e-12)
    np.testing.assert_allclose(grads[0].numpy()[0], [-0.403625, -0.344672, 0.245331], atol=1e-6)
    np.testing.assert_allclose(grads[1].numpy()[0], [0.33147, 1.841108], atol=1e-6)

    def plain(ws):
        h = x
        for w in ws:
            h = np.tanh(h @ w)
        return np.sum(h**2)

    want = numerical_grad(plain, (w0,), 0)
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-8)


class Lin(tf.Module):
    def __init__(self, w, b):
        super().__init__()
        self.w = tf.Variable(w)
        self.b = tf.Variable(b)
        self.count = 0

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


def test_a_hypernetwork_weight_stored_on_a_module_in_the_block():
    lin = Lin(np.array([[0.2, -0.3], [0.5, 0.1]]), np.array([0.1, -0.1]))
    x = np.array([[1.0, 2.0], [-0.5, 0.3], [0.2, -1.0]])
    v0 = np.array([[0.9, 0.1], [0.2, -0.3]])
    V = tf.Variable(v0)
    with tf.GradientTape(persistent=True) as tape:
        lin.count += 1
        lin.w = tf.sin(V) * 1.5
        h = lin(x)
        loss = tf.reduce_sum(h**2) + tf.reduce_sum(lin.w)
    g = tape.gradient(loss, V)
    gh, gb = tape.gradient(h, [V, lin.b])
    # TensorFlow 2.21
    np.testing.assert_allclose(float(loss), 5.774276355292967, rtol=1e-12)
    np.testing.assert_allclose(
        g.numpy(), [[4.80649495, -0.32308238], [12.01240489, -4.69798872]], atol=1e-8
    )
    np.testing.assert_allclose(
        gh.numpy(), [[0.65269047, 1.04475437], [1.91112983, 1.86290615]], atol=1e-8
    )
    np.testing.assert_allclose(gb.numpy(), [3.0, 3.0])
    # the block ran once: the counter moved once, the layer keeps the block's weight
    assert lin.count == 1
    np.testing.assert_allclose(lin.w.numpy(), np.sin(v0) * 1.5)

    def plain(v):
        w = np.sin(v) * 1.5
        return np.sum((x @ w + lin.b.numpy()) ** 2) + np.sum(w)

    np.testing.assert_allclose(g.numpy(), numerical_grad(plain, (v0,), 0), rtol=1e-6)


def test_a_keras_kernel_replaced_by_an_array_built_from_a_variable():
    dense = layers.Dense(2, kernel_initializer="ones")
    dense(np.zeros((1, 2), np.float32))
    scale = tf.Variable(np.array([2.0, -1.0], np.float32))
    x = np.array([[1.0, 2.0], [-0.5, 0.3], [0.2, -1.0]], np.float32)
    base = np.array([[0.3, 0.4], [-0.5, 0.6]], np.float32)
    with tf.GradientTape() as tape:
        dense.kernel = base * scale
        out = dense(x)
        loss = tf.reduce_mean(out**2)
    g_scale, g_bias = tape.gradient(loss, [scale, dense.bias])
    # TensorFlow 2.21 (float32)
    np.testing.assert_allclose(float(loss), 1.0675333738327026, rtol=1e-6)
    np.testing.assert_allclose(g_scale.numpy(), [0.595733, -0.9436], atol=2e-6)
    np.testing.assert_allclose(g_bias.numpy(), [-0.293333, -0.353333], atol=2e-6)


class TwoHeads(keras.Model):
    """Two outputs and a weight penalty collected with ``add_loss``."""

    def __init__(self):
        super().__init__()
        self.body = layers.Dense(4, activation="relu")
        self.cls = layers.Dense(2)
        self.reg = layers.Dense(1)

    def call(self, x, training=False):
        h = self.body(x)
        self.add_loss(0.01 * tf.reduce_sum(tf.square(self.body.kernel)))
        return self.cls(h), self.reg(h)


def test_a_two_headed_model_with_add_loss_in_a_custom_training_loop():
    m = TwoHeads()
    m(np.zeros((1, 3), np.float32))
    m.set_weights([_w(w.shape, k, 0.5) for k, w in enumerate(m.get_weights())])
    x, yc, yr = _w((6, 3), 4.0, 0.5), np.array([0, 1, 1, 0, 1, 0]), _w((6, 1), 5.0, 0.5)
    opt = keras.optimizers.Adam(0.01)
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses, rows = [], []
    for _ in range(2):
        with tf.GradientTape() as tape:
            logits, r = m(x, training=True)
            loss = ce(yc, logits) + tf.reduce_mean((r - yr) ** 2) + tf.add_n(m.losses)
        grads = tape.gradient(loss, m.trainable_variables)
        opt.apply_gradients(zip(grads, m.trainable_variables))
        assert len(m.losses) == 1  # each call from outside the model starts afresh
        losses.append(float(loss))
        rows.append(grads[0].numpy()[0])
    # TensorFlow 2.21 (float32, Adam)
    np.testing.assert_allclose(losses, [1.31692, 1.269729], atol=2e-6)
    np.testing.assert_allclose(
        rows,
        [[0.103285, -0.025314, 0.023852, -0.00824], [0.098661, -0.028399, 0.023727, -0.00804]],
        atol=2e-6,
    )
