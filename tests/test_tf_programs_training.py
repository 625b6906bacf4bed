"""Training programs a TensorFlow user brings: a ``keras.Model`` whose ``train_step``
uses ``self.compiled_loss`` and ``self.compiled_metrics`` (trained by ``fit``), one that
keeps its own metric trackers, a ``tf.Module`` holding its layers in a list trained with
a learning-rate schedule, and an actor-critic step with two tapes in one ``with``.

The literals were recorded from runs of the same programs with TensorFlow 2.21 and
tf_keras (``TF_USE_LEGACY_KERAS=1``), with the same weights and data (set explicitly).
"""

import numpy as np
import pytest
from tf_weights import sin_weights as _w

import s2s_ad.tf as tf
from s2s_ad.tf import keras

layers = keras.layers


class CompiledStepModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_a_custom_train_step_with_the_compiled_loss_and_metrics():
    inputs = keras.Input(shape=(4,))
    outputs = layers.Dense(3)(layers.Dense(8, activation="relu")(inputs))
    model = CompiledStepModel(inputs, outputs)
    model.set_weights([_w(w.shape, k, 0.5) for k, w in enumerate(model.get_weights())])
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    x = _w((12, 4), 3.0, 1.0)
    y = (np.arange(12) % 3).astype(np.int64)
    history = model.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    assert list(history.history) == ["loss", "accuracy"]
    np.testing.assert_allclose(history.history["loss"], [1.14568, 1.127271, 1.116742], atol=2e-6)
    np.testing.assert_allclose(history.history["accuracy"], [1 / 3] * 3, atol=1e-6)
    tf_kernel = [0.0178810004144907, 0.49687498807907104, 0.2110690027475357, -0.37522199749946594]
    np.testing.assert_allclose(model.get_weights()[0].ravel()[:4], tf_kernel, atol=2e-6)
    assert model.metrics_names == ["loss", "accuracy"]


loss_tracker = keras.metrics.Mean(name="loss")
mae_metric = keras.metrics.MeanAbsoluteError(name="mae")


class TrackedModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = keras.losses.mean_squared_error(y, y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        loss_tracker.update_state(loss)
        mae_metric.update_state(y, y_pred)
        return {"loss": loss_tracker.result(), "mae": mae_metric.result()}

    @property
    def metrics(self):
        return [loss_tracker, mae_metric]


def test_a_train_step_with_its_own_metric_trackers_compiled_without_a_loss():
    inputs = keras.Input(shape=(3,))
    outputs = layers.Dense(2)(layers.Dense(5, activation="tanh")(inputs))
    model = TrackedModel(inputs, outputs)
    model.set_weights([_w(w.shape, k, 0.5) for k, w in enumerate(model.get_weights())])
    model.compile(optimizer=keras.optimizers.Adam(0.01))
    x, y = _w((16, 3), 3.0, 1.0), _w((16, 2), 5.0, 1.0)
    history = model.fit(x, y, epochs=3, batch_size=8, verbose=0, shuffle=False)
    np.testing.assert_allclose(history.history["loss"], [0.616267, 0.57521, 0.54464], atol=2e-6)
    np.testing.assert_allclose(history.history["mae"], [0.693677, 0.667573, 0.654006], atol=2e-6)
    tf_kernel = [0.05389999970793724, 0.4375210106372833, 0.25331801176071167, -0.470153003931]
    np.testing.assert_allclose(model.get_weights()[0].ravel()[:4], tf_kernel, atol=2e-6)


class MLP(tf.Module):
    def __init__(self, sizes, name=None):
        super().__init__(name=name)
        self.layers = []
        with self.name_scope:
            for k, n in enumerate(sizes):
                activation = "tanh" if k < len(sizes) - 1 else None
                self.layers.append(layers.Dense(n, activation=activation))

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_a_module_with_a_list_of_layers_and_a_learning_rate_schedule():
    mlp = MLP([6, 4, 1], name="mlp")
    mlp(np.zeros((1, 3), np.float32))
    for k, v in enumerate(mlp.trainable_variables):
        v.assign(_w(v.shape, 40 + k, 0.5))
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    opt = keras.optimizers.SGD(learning_rate=schedule, momentum=0.9)
    xs, ys = _w((10, 3), 7.0, 1.0), _w((10, 1), 8.0, 1.0)
    losses, rates = [], []
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(mlp(xs) - ys))
        grads = tape.gradient(loss, mlp.trainable_variables)
        opt.apply_gradients(zip(grads, mlp.trainable_variables))
        losses.append(float(loss))
        rates.append(float(opt.learning_rate))  # the rate the step used
    np.testing.assert_allclose(
        losses, [1.021897, 0.770204, 0.599844, 0.577715, 0.633659], atol=2e-6
    )
    np.testing.assert_allclose(rates, [0.1, 0.070711, 0.05, 0.035355, 0.025], atol=1e-6)


@pytest.mark.parametrize(
    ("schedule", "tf_values"),
    [
        (
            keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5, staircase=True),
            [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025],
        ),
        (
            keras.optimizers.schedules.InverseTimeDecay(0.2, 2, 0.5),
            [0.2, 0.16, 0.13333334, 0.11428571, 0.1, 0.08888889, 0.08],
        ),
        (
            keras.optimizers.schedules.PiecewiseConstantDecay([2, 5], [0.1, 0.05, 0.01]),
            [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.01],
        ),
        (
            keras.optimizers.schedules.PolynomialDecay(0.1, 4, 0.01, power=2.0),
            [0.1, 0.060625, 0.0325, 0.015625, 0.01, 0.01, 0.01],
        ),
        (
            keras.optimizers.schedules.CosineDecay(0.1, 5, alpha=0.1),
            [0.1, 0.091405764, 0.068905763, 0.041094225, 0.018594233, 0.01, 0.01],
        ),
    ],
)
def test_learning_rate_schedules(schedule, tf_values):
    got = [float(schedule(step)) for step in range(7)]
    np.testing.assert_allclose(got, tf_values, rtol=1e-6)


class ActorCritic(keras.Model):
    def __init__(self, num_actions, hidden):
        super().__init__()
        self.common = layers.Dense(hidden, activation="relu")
        self.actor = layers.Dense(num_actions)
        self.critic = layers.Dense(1)

    def call(self, inputs):
        x = self.common(inputs)
        return self.actor(x), self.critic(x)


def _expected_returns(rewards, gamma):
    out = np.zeros_like(rewards)
    total = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        total = rewards[t] + gamma * total
        out[t] = total
    return (out - out.mean()) / (out.std() + 1e-7)


def test_an_actor_critic_step_with_two_tapes_in_one_with_statement():
    model = ActorCritic(2, 8)
    model(np.zeros((1, 4), np.float32))
    model.set_weights([_w(w.shape, 50 + k, 0.5) for k, w in enumerate(model.get_weights())])
    huber = keras.losses.Huber(reduction=keras.losses.Reduction.SUM)
    actor_opt, critic_opt = keras.optimizers.Adam(0.01), keras.optimizers.Adam(0.02)
    states = _w((6, 4), 1.0, 1.0)
    actions = np.array([0, 1, 1, 0, 1, 0])
    returns = tf.constant(_expected_returns(_w((6,), 2.0, 1.0), 0.99).astype(np.float32))
    seen = []
    for _ in range(3):
        with tf.GradientTape() as actor_tape, tf.GradientTape() as critic_tape:
            logits, values = model(states)
            values = tf.squeeze(values, axis=1)
            advantage = returns - values
            log_probs = tf.nn.log_softmax(logits)
            taken = tf.reduce_sum(log_probs * tf.one_hot(actions, 2), axis=1)
            actor_loss = -tf.reduce_mean(taken * tf.stop_gradient(advantage))
            entropy = -tf.reduce_mean(tf.reduce_sum(tf.nn.softmax(logits) * log_probs, axis=1))
            actor_loss = actor_loss - 0.01 * entropy
            critic_loss = huber(tf.expand_dims(returns, 1), tf.expand_dims(values, 1))
        actor_vars = model.common.trainable_variables + model.actor.trainable_variables
        critic_vars = model.common.trainable_variables + model.critic.trainable_variables
        actor_grads = actor_tape.gradient(actor_loss, actor_vars)
        critic_grads = critic_tape.gradient(critic_loss, critic_vars)
        actor_opt.apply_gradients(zip(actor_grads, actor_vars))
        critic_opt.apply_gradients(zip(critic_grads, critic_vars))
        sums = [float(np.sum(g)) for g in (*actor_grads, *critic_grads)]
        seen.append([float(actor_loss), float(critic_loss), *sums])
    tf_seen = [
        [0.694841, 6.290719, -0.088677, 0.028122, 0.0, 0.0]
        + [0.02624, 4.510505, -10.823922, -2.34648],
        [0.548003, 5.666228, -0.064829, 0.01633, 0.0, 0.0]
        + [-0.066905, 4.023214, -10.493479, -2.333987],
        [0.412888, 5.065446, -0.049443, -0.030891, 0.0, 0.0]
        + [0.102206, 4.344348, -10.138073, -2.31864],
    ]
    np.testing.assert_allclose(seen, tf_seen, rtol=2e-6, atol=2e-6)
    tf_kernel = [-0.04163900017738342, 0.47663000226020813, 0.39914101362228394, -0.293247014]
    np.testing.assert_allclose(model.get_weights()[0].ravel()[:4], tf_kernel, atol=2e-6)


class EvaluatedModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        grads = tape.gradient(loss, self.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 0.5)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False) * 2.0
        self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_a_custom_test_step_serves_validation_and_evaluate():
    inputs = keras.Input(shape=(3,))
    outputs = layers.Dense(1)(layers.Dense(4, activation="relu")(inputs))
    model = EvaluatedModel(inputs, outputs)
    model.set_weights([_w(w.shape, k, 0.5) for k, w in enumerate(model.get_weights())])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    x, y = _w((12, 3), 1.0, 1.0), _w((12, 1), 2.0, 1.0)
    xv, yv = _w((6, 3), 3.0, 1.0), _w((6, 1), 4.0, 1.0)
    history = model.fit(
        x, y, batch_size=4, epochs=2, verbose=0, shuffle=False, validation_data=(xv, yv)
    )
    tf_history = {
        "loss": [0.692347, 0.659532],
        "mae": [0.662375, 0.644238],
        "val_loss": [0.754486, 0.65677],
        "val_mae": [0.686512, 0.683572],
    }
    assert list(history.history) == list(tf_history)
    for key, values in tf_history.items():
        np.testing.assert_allclose(history.history[key], values, atol=2e-6)
    scores = model.evaluate(xv, yv, batch_size=4, verbose=0)
    np.testing.assert_allclose(scores, [0.65677, 0.683572], atol=2e-6)
    named = model.evaluate(xv, yv, batch_size=4, verbose=0, return_dict=True)
    assert list(named) == ["loss", "mae"]
