"""Realistic TensorFlow programs run with ``import s2s_ad.tf as tf``: a WGAN-GP training
loop (generator and critic, Adam, a gradient penalty through the critic), a custom
training loop with Keras metrics and a model with BatchNormalization, a ``tf.Module``
holding its layers in a list.

The literals were recorded from runs of the same programs with TensorFlow 2.21 and
tf_keras (``TF_USE_LEGACY_KERAS=1``), with the same weights and data (set explicitly).
"""

import numpy as np
import pytest
from fd import numerical_grad
from tf_weights import sin_weights as _w

import s2s_ad.tf as tf
from s2s_ad.tf import keras

layers = keras.layers


def _gan():
    generator = keras.Sequential(
        [layers.Dense(8), layers.LeakyReLU(0.2), layers.Dense(3, activation="tanh")]
    )
    critic = keras.Sequential(
        [
            layers.Dense(8),
            layers.LeakyReLU(0.2),
            layers.Dense(6, activation="tanh"),
            layers.Dense(1),
        ]
    )
    generator(np.zeros((1, 2), np.float32))
    critic(np.zeros((1, 3), np.float32))
    generator.set_weights([_w(w.shape, k, 0.6) for k, w in enumerate(generator.get_weights())])
    critic.set_weights([_w(w.shape, 20 + k, 0.6) for k, w in enumerate(critic.get_weights())])
    return generator, critic


def test_wgan_gp_training_steps_give_tensorflows_losses_and_weights():
    generator, critic = _gan()
    g_opt = keras.optimizers.Adam(1e-3, beta_1=0.5, beta_2=0.9)
    c_opt = keras.optimizers.Adam(1e-3, beta_1=0.5, beta_2=0.9)
    real = _w((6, 3), 5.0, 0.6)
    seen = []
    for step in range(3):
        z = _w((6, 2), 30.0 + step, 0.6)
        eps = (_w((6, 1), 40.0 + step, 0.6) + 1.0) / 2.0
        with tf.GradientTape() as tape:
            fake = generator(z, training=True)
            fake_logits = critic(fake, training=True)
            real_logits = critic(real, training=True)
            c_cost = tf.reduce_mean(fake_logits) - tf.reduce_mean(real_logits)
            xhat = eps * real + (1.0 - eps) * fake
            with tf.GradientTape() as gp_tape:
                gp_tape.watch(xhat)
                pred = critic(xhat, training=True)
            grads = gp_tape.gradient(pred, [xhat])[0]
            norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1]))
            gp = tf.reduce_mean((norm - 1.0) ** 2)
            c_loss = c_cost + 10.0 * gp
        c_grads = tape.gradient(c_loss, critic.trainable_variables)
        c_opt.apply_gradients(zip(c_grads, critic.trainable_variables))
        with tf.GradientTape() as tape:
            generated = generator(z, training=True)
            g_loss = -tf.reduce_mean(critic(generated, training=True))
        g_grads = tape.gradient(g_loss, generator.trainable_variables)
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
        seen.append((float(c_loss), float(gp), float(g_loss)))
    tf_losses = [
        (4.491539478302002, 0.4242340326309204, -1.1636143922805786),
        (4.477870464324951, 0.4218980371952057, -1.174894094467163),
        (4.615471839904785, 0.4348302185535431, -1.1844674348831177),
    ]
    np.testing.assert_allclose(seen, tf_losses, rtol=2e-6)
    tf_critic = [0.5447668433189392, 0.35225769877433777, -0.41148263216018677]
    tf_critic += [-0.5150354504585266, 0.20719565451145172, 0.5965849161148071]
    tf_generator = [-0.0007858219905756414, 0.5883584022521973, 0.23753908276557922]
    tf_generator += [-0.4952854514122009, -0.4291379451751709, 0.3227844536304474]
    np.testing.assert_allclose(critic.get_weights()[0].ravel()[:6], tf_critic, atol=2e-6)
    np.testing.assert_allclose(generator.get_weights()[0].ravel()[:6], tf_generator, atol=2e-6)


class _Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = layers.Dense(8, activation="relu")
        self.bn = layers.BatchNormalization()
        self.d2 = layers.Dense(3)

    def call(self, x, training=False):
        return self.d2(self.bn(self.d1(x), training=training))


def test_custom_training_loop_with_metrics_and_batch_normalization():
    net = _Net()
    net(np.zeros((1, 4), np.float32))
    net.set_weights([_w(w.shape, k) for k, w in enumerate(net.get_weights())])
    # Keras 2's order: by layer, the moving statistics after gamma and beta
    assert [v.name.split("/")[-1] for v in net.weights] == [
        "kernel:0",
        "bias:0",
        "gamma:0",
        "beta:0",
        "moving_mean:0",
        "moving_variance:0",
        "kernel:0",
        "bias:0",
    ]
    x = _w((16, 4), 3.0)
    y = (np.arange(16) % 3).astype(np.int64)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = keras.optimizers.Adam(0.01)
    train_loss = keras.metrics.Mean(name="train_loss")
    train_acc = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    epochs = []
    for _ in range(3):
        train_loss.reset_state()
        train_acc.reset_state()
        for b in range(2):
            xb, yb = x[b * 8 : (b + 1) * 8], y[b * 8 : (b + 1) * 8]
            with tf.GradientTape() as tape:
                logits = net(xb, training=True)
                loss = loss_fn(yb, logits)
                train_loss.update_state(loss)
                train_acc.update_state(yb, logits)
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
        epochs.append((float(train_loss.result()), float(train_acc.result())))
    tf_epochs = [
        (1.2235885858535767, 0.3125),
        (1.1766703128814697, 0.3125),
        (1.1476207971572876, 0.3125),
    ]
    np.testing.assert_allclose(epochs, tf_epochs, rtol=2e-6)
    tf_mean = [-0.5218353867530823, -0.5542935729026794, 0.3440418243408203, 0.732571542263031]
    np.testing.assert_allclose(net.bn.moving_mean.numpy()[:4], tf_mean, atol=2e-6)
    tf_kernel = [-0.1723444163799286, 0.6928572058677673, 0.49611997604370117]
    tf_kernel += [-0.5513792037963867, -0.661384105682373, 0.1789323389530182]
    np.testing.assert_allclose(net.d2.kernel.numpy().ravel()[:6], tf_kernel, atol=2e-6)


class _MLP(tf.Module):
    def __init__(self, sizes, name=None):
        super().__init__(name=name)
        self.layers = []
        with self.name_scope:
            for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
                w = tf.Variable(_w((a, b), i).astype(np.float64), name=f"w{i}")
                self.layers.append(
                    (w, tf.Variable(_w((b,), 10 + i).astype(np.float64), name=f"b{i}"))
                )

    @tf.Module.with_name_scope
    def __call__(self, x):
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                x = tf.nn.relu(x)
        return x


def test_a_module_holding_its_layers_in_a_list():
    mlp = _MLP([4, 5, 2], name="mlp")
    assert [v.name for v in mlp.trainable_variables] == [
        "mlp/w0:0",
        "mlp/b0:0",
        "mlp/w1:0",
        "mlp/b1:0",
    ]
    x = _w((16, 4), 3.0).astype(np.float64)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(mlp(x) ** 2)
    grads = tape.gradient(loss, mlp.trainable_variables)
    assert float(loss) == pytest.approx(0.391671, abs=1e-6)  # TensorFlow's

    def loss_of(w0, b0, w1, b1):
        return float(np.mean((np.maximum(x @ w0 + b0, 0.0) @ w1 + b1) ** 2))

    values = [v.numpy() for v in mlp.trainable_variables]
    want = numerical_grad(loss_of, values, (0, 1, 2, 3))
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-9)


def test_leaky_relu_and_relu_layers():
    x = np.array([[-2.0, -0.5, 0.0, 0.5, 3.0]])
    np.testing.assert_allclose(layers.LeakyReLU()(x), [[-0.6, -0.15, 0.0, 0.5, 3.0]])
    np.testing.assert_allclose(layers.LeakyReLU(negative_slope=0.1)(x)[0, 0], -0.2)
    np.testing.assert_allclose(layers.ReLU(max_value=1.0)(x), [[0.0, 0.0, 0.0, 0.5, 1.0]])
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layers.LeakyReLU(0.2)(v * v * np.sign(x)))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [[0.8, 0.2, 0.0, 1.0, 6.0]])
