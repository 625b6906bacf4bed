"""Keras layers, models and losses called by a tape's block keep their pullback.

From the second training step on (once a gradient has compiled the layer), a Keras
call made by a statement of the block runs there through its generated forward sweep;
the gradient takes its value and pullback back instead of calling it again. The tests
train for a few steps so that both the first step and the recorded ones are checked:
the gradients must be those of the computation that ran, its draws and state changes
happening once.
"""

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def _dense_model(rng, activation="tanh"):
    model = keras.Sequential(
        [
            keras.layers.Dense(6, activation=activation, input_shape=(4,)),
            keras.layers.Dense(2),
        ]
    )
    model.set_weights([rng.standard_normal(w.shape) * 0.5 for w in model.weights])
    return model


def _mlp_grads(weights, x, y):
    """The MSE of a tanh MLP and the gradients of its weights, by hand."""
    w1, b1, w2, b2 = weights
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    g_out = 2.0 * (out - y) / out.size
    g_h = g_out @ w2.T * (1.0 - h * h)
    return [x.T @ g_h, g_h.sum(0), h.T @ g_out, g_out.sum(0)]


def test_a_training_loop_gets_the_gradients_of_each_step():
    rng = np.random.default_rng(0)
    model = _dense_model(rng)
    mse = keras.losses.MeanSquaredError()
    optimizer = keras.optimizers.SGD(0.1)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    for _ in range(4):
        expected = _mlp_grads([w.numpy() for w in model.trainable_variables], x, y)
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        for g, e in zip(grads, expected):
            assert g.dtype == np.float32
            np.testing.assert_allclose(g, e, rtol=2e-4, atol=1e-6)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


def test_the_calls_of_a_block_are_kept_and_taken_back_once():
    rng = np.random.default_rng(1)
    model = _dense_model(rng)
    mse = keras.losses.MeanSquaredError()
    x = rng.standard_normal((5, 4))
    y = rng.standard_normal((5, 2))
    for step in range(3):
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        calls = tape._recording.calls
        # the first step may call the layers as they are (until a gradient compiles them)
        assert len(calls) == 2 or step == 0 and not calls
        tape.gradient(loss, model.trainable_variables)
        assert all(call.used for call in calls)


def test_a_persistent_tape_runs_the_calls_again_for_its_second_gradient():
    rng = np.random.default_rng(2)
    model = _dense_model(rng)
    x = rng.standard_normal((5, 4))
    for _ in range(3):
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_sum(model(x) ** 2)
        first = tape.gradient(loss, model.trainable_variables)
        second = tape.gradient(loss, model.trainable_variables)
        for a, b in zip(first, second):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_layer_on_a_value_computed_from_variables_passes_its_gradient_back():
    rng = np.random.default_rng(3)
    scale = tf.Variable(rng.standard_normal(4))
    layer = keras.layers.Dense(3, dtype="float64")
    x = rng.standard_normal((6, 4))
    for _ in range(3):
        with tf.GradientTape() as tape:
            h = x * scale
            loss = tf.reduce_sum(tf.square(layer(h)))
        g_scale, g_kernel = tape.gradient(loss, [scale, layer.kernel])
        out = (x * scale.numpy()) @ layer.kernel.numpy() + layer.bias.numpy()
        g_h = 2.0 * out @ layer.kernel.numpy().T
        np.testing.assert_allclose(g_scale, (g_h * x).sum(0), rtol=1e-10)
        np.testing.assert_allclose(g_kernel, (x * scale.numpy()).T @ (2.0 * out), rtol=1e-10)


def test_one_layer_called_twice_in_a_block():
    rng = np.random.default_rng(4)
    layer = keras.layers.Dense(4, activation="tanh", dtype="float64")
    a = rng.standard_normal((3, 4))
    for _ in range(3):
        with tf.GradientTape() as tape:
            first = layer(a)
            second = layer(first)
            loss = tf.reduce_sum(second)
        (g_kernel,) = tape.gradient(loss, [layer.kernel])
        k, b = layer.kernel.numpy(), layer.bias.numpy()
        h1 = np.tanh(a @ k + b)
        h2 = np.tanh(h1 @ k + b)
        g2 = 1.0 - h2 * h2
        g1 = (g2 @ k.T) * (1.0 - h1 * h1)
        np.testing.assert_allclose(g_kernel, h1.T @ g2 + a.T @ g1, rtol=1e-10)


def test_dropout_in_a_model_uses_the_mask_of_the_block():
    np.random.seed(5)
    rng = np.random.default_rng(5)
    model = keras.Sequential(
        [keras.layers.Dense(16, input_shape=(3,), dtype="float64"), keras.layers.Dropout(0.5)]
    )
    x = rng.standard_normal((10, 3)) + 3.0
    c = rng.standard_normal((10, 16))
    for _ in range(4):
        with tf.GradientTape() as tape:
            y = model(x, training=True)
            loss = tf.reduce_sum(y * c)
        kernel = model.layers[0].kernel
        (g,) = tape.gradient(loss, [kernel])
        kept = np.asarray(y) != 0.0
        assert 0 < kept.sum() < kept.size
        np.testing.assert_allclose(g, x.T @ (c * kept * 2.0), rtol=1e-10)


def test_batch_normalization_updates_its_moving_statistics_once_per_step():
    rng = np.random.default_rng(6)
    bn = keras.layers.BatchNormalization(momentum=0.5, dtype="float64")
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(2,), dtype="float64"), bn])
    x = rng.standard_normal((7, 2))
    moving = np.zeros(3)
    for _ in range(4):
        h = x @ model.layers[0].kernel.numpy() + model.layers[0].bias.numpy()
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x, training=True) ** 2)
        moving = moving * 0.5 + h.mean(0) * 0.5
        np.testing.assert_allclose(bn.moving_mean.numpy(), moving, rtol=1e-12)
        grads = tape.gradient(loss, model.trainable_variables)
        np.testing.assert_allclose(bn.moving_mean.numpy(), moving, rtol=1e-12)
        assert all(g is not None for g in grads)


class _CountingDense(keras.layers.Layer):
    """A layer that counts its calls (state a call changes)."""

    def __init__(self) -> None:
        super().__init__(dtype="float64")
        self.calls = 0

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], 2))

    def call(self, inputs):
        self.calls += 1
        return inputs @ self.kernel


def test_a_counter_in_a_layer_counts_each_step_once():
    layer = _CountingDense()
    x = np.ones((3, 4))
    for step in range(1, 4):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(x))
        (g,) = tape.gradient(loss, [layer.kernel])
        np.testing.assert_allclose(g, np.full((4, 2), 3.0))
        assert layer.calls == step


def test_a_layer_on_the_branch_not_taken_has_no_gradient():
    rng = np.random.default_rng(7)
    left = keras.layers.Dense(2, dtype="float64")
    right = keras.layers.Dense(2, dtype="float64")
    x = rng.standard_normal((3, 2))
    left(x), right(x)  # built
    for use_left in (True, True, False, True):
        with tf.GradientTape() as tape:
            if use_left:
                loss = tf.reduce_sum(left(x))
            else:
                loss = tf.reduce_sum(right(x))
        g_left, g_right = tape.gradient(loss, [left.kernel, right.kernel])
        taken, other = (g_left, g_right) if use_left else (g_right, g_left)
        assert other is None
        np.testing.assert_allclose(taken, np.repeat(x.sum(0)[:, None], 2, axis=1))


def test_an_input_changed_in_place_after_the_call_is_not_taken_for_it():
    rng = np.random.default_rng(8)
    layer = keras.layers.Dense(2, dtype="float64")
    x = rng.standard_normal((3, 2))
    for _ in range(3):
        data = x.copy()
        with tf.GradientTape() as tape:
            y = layer(data)
            data *= 2.0  # the call saved data: its pullback would see the new values
            loss = tf.reduce_sum(y * y)
        assert not tape._recording.calls
        (g,) = tape.gradient(loss, [layer.kernel])
        out = x @ layer.kernel.numpy() + layer.bias.numpy()
        np.testing.assert_allclose(g, x.T @ (2.0 * out), rtol=1e-10)


def test_an_array_method_called_in_the_block_keeps_no_calls():
    rng = np.random.default_rng(10)
    layer = keras.layers.Dense(2, activation="tanh", dtype="float64")
    x = rng.standard_normal((3, 2))
    for _ in range(3):
        out = np.tanh(x @ layer.kernel.numpy() + layer.bias.numpy()) if layer.built else None
        with tf.GradientTape() as tape:
            y = layer(x)
            h = np.asarray(y)
            h.fill(0.5)  # writes into the layer's output, which tanh's pullback reads
            loss = tf.reduce_sum(y)
        (g,) = tape.gradient(loss, [layer.kernel])
        if out is not None:
            np.testing.assert_allclose(g, x.T @ (1.0 - out * out), rtol=1e-10)


def test_metrics_updated_in_the_block_keep_the_calls():
    rng = np.random.default_rng(11)
    model = _dense_model(rng)
    mse = keras.losses.MeanSquaredError()
    metric = keras.metrics.Mean()
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = rng.standard_normal((6, 2)).astype(np.float32)
    for step in range(1, 4):
        expected = _mlp_grads([w.numpy() for w in model.trainable_variables], x, y)
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
            metric.update_state(loss)
        grads = tape.gradient(loss, model.trainable_variables)
        if step > 1:
            assert tape._recording.calls
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=2e-4, atol=1e-6)
        assert metric.count.numpy() == step


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum"])
def test_a_loss_with_sample_weights(reduction):
    rng = np.random.default_rng(9)
    layer = keras.layers.Dense(3, dtype="float64")
    loss_fn = keras.losses.MeanSquaredError(reduction=reduction)
    x = rng.standard_normal((4, 2))
    y = rng.standard_normal((4, 3))
    weights = np.array([1.0, 0.0, 2.0, 0.5])
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, layer(x), sample_weight=weights)
        (g,) = tape.gradient(loss, [layer.kernel])
        out = x @ layer.kernel.numpy() + layer.bias.numpy()
        per = 2.0 * (out - y) / 3.0 * weights[:, None]
        if reduction == "sum_over_batch_size":
            per = per / 4.0
        np.testing.assert_allclose(g, x.T @ per, rtol=1e-10)
