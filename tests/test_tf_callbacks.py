"""``model.fit(..., callbacks=[...])``: the hooks run in Keras's order with Keras's logs,
``fit`` returns the ``History``, and ``EarlyStopping`` stops (and restores weights) as
Keras does."""

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad.tf import keras


class Line(keras.Model):
    def __init__(self, w=5.0, b=0.0):
        super().__init__()
        self.w = tf.Variable(w)
        self.b = tf.Variable(b)

    def call(self, x):
        return self.w * x + self.b


def _data(n=96, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    return x, (3.0 * x + 2.0).astype(np.float32)


class Recorder(keras.callbacks.Callback):
    """Writes down every hook call with a copy of its logs."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin", None))

    def on_train_end(self, logs=None):
        self.calls.append(("train_end", dict(logs or {})))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append((f"epoch_begin {epoch}", None))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append((f"epoch_end {epoch}", dict(logs)))

    def on_batch_begin(self, batch, logs=None):
        self.calls.append((f"batch_begin {batch}", None))

    def on_batch_end(self, batch, logs=None):
        self.calls.append((f"batch_end {batch}", dict(logs)))


def test_hooks_run_in_order_with_the_logs_keras_gives():
    x, y = _data()
    model = Line()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05), loss="mse")
    recorder = Recorder()
    history = model.fit(x, y, epochs=2, batch_size=32, shuffle=False, callbacks=[recorder])
    names = [name for name, _ in recorder.calls]
    per_epoch = lambda e: [  # noqa: E731
        f"epoch_begin {e}",
        *[f"batch_{when} {b}" for b in range(3) for when in ("begin", "end")],
        f"epoch_end {e}",
    ]
    assert names == ["train_begin", *per_epoch(0), *per_epoch(1), "train_end"]
    assert recorder.model is model and recorder.params["epochs"] == 2
    assert recorder.params["steps"] == 3
    # batch logs: the epoch's running mean of the batch losses
    batch_losses = [logs["loss"] for name, logs in recorder.calls if name.startswith("batch_end")]
    epoch_logs = [logs for name, logs in recorder.calls if name.startswith("epoch_end")]
    assert epoch_logs[0]["loss"] == pytest.approx(batch_losses[2])
    assert epoch_logs[1]["loss"] == pytest.approx(batch_losses[5])
    assert history is model.history
    assert history.epoch == [0, 1]
    assert history.history["loss"] == [logs["loss"] for logs in epoch_logs]
    assert recorder.calls[-1][1] == epoch_logs[-1]


def test_the_running_mean_in_batch_logs_is_the_mean_of_each_batch_loss():
    x, y = _data(64)
    model = Line()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    seen = []
    log_batches = keras.callbacks.LambdaCallback(
        on_batch_end=lambda batch, logs: seen.append(logs["loss"])
    )
    model.fit(x, y, epochs=1, batch_size=16, shuffle=False, callbacks=[log_batches], verbose=0)
    # learning rate 0: every batch loss is the loss of the initial line on that batch
    per_batch = [
        float(np.mean((5.0 * x[k : k + 16] - y[k : k + 16]) ** 2)) for k in (0, 16, 32, 48)
    ]
    expected = np.cumsum(per_batch) / np.arange(1, 5)
    np.testing.assert_allclose(seen, expected, rtol=1e-5)


def test_lambda_callback_hooks():
    x, y = _data()
    model = Line()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    events = []
    callback = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: events.append("begin"),
        on_epoch_end=lambda epoch, logs: events.append((epoch, sorted(logs))),
        on_train_end=lambda logs: events.append("end"),
    )
    model.fit(x, y, epochs=2, batch_size=48, callbacks=[callback], verbose=0)
    assert events == ["begin", (0, ["loss", "mae"]), (1, ["loss", "mae"]), "end"]


def test_validation_scores_reach_the_epoch_logs():
    x, y = _data()
    model = Line()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05), loss="mse")
    history = model.fit(x, y, epochs=3, validation_data=(x[:32], y[:32]), verbose=0)
    assert sorted(history.history) == ["loss", "val_loss"]
    assert len(history.history["val_loss"]) == 3
    assert history.history["val_loss"][-1] < history.history["val_loss"][0]


class _StopAfter(keras.callbacks.Callback):
    def __init__(self, batches):
        super().__init__()
        self.batches = batches
        self.count = 0

    def on_train_batch_end(self, batch, logs=None):
        self.count += 1
        if self.count == self.batches:
            self.model.stop_training = True


def test_setting_stop_training_in_a_callback_stops_after_that_batch():
    x, y = _data()
    model = Line()
    model.compile(optimizer="sgd", loss="mse")
    stopper = _StopAfter(4)
    history = model.fit(x, y, epochs=10, batch_size=32, callbacks=[stopper], verbose=0)
    assert stopper.count == 4  # 3 batches per epoch: stopped in the second epoch
    assert history.epoch == [0, 1]


def _early_stopping_run(losses, **options):
    """Feed EarlyStopping a given sequence of monitored values, as fit would."""

    class Weights:
        def __init__(self):
            self.value = 0
            self.stop_training = False

        def get_weights(self):
            return [self.value]

        def set_weights(self, weights):
            self.value = weights[0]

    model = Weights()
    stopper = keras.callbacks.EarlyStopping(**options)
    stopper.set_model(model)
    stopper.on_train_begin()
    ran = []
    for epoch, loss in enumerate(losses):
        model.value = epoch  # the weights at the end of this epoch
        stopper.on_epoch_end(epoch, {"val_loss": loss, "val_accuracy": -loss})
        ran.append(epoch)
        if model.stop_training:
            break
    return ran, model.value, stopper


def test_early_stopping_patience_and_restore_best_weights():
    losses = [1.0, 0.5, 0.6, 0.7, 0.4, 0.3]
    ran, weights, stopper = _early_stopping_run(losses, patience=2)
    assert ran == [0, 1, 2, 3] and weights == 3 and stopper.stopped_epoch == 3
    ran, weights, _ = _early_stopping_run(losses, patience=2, restore_best_weights=True)
    assert ran == [0, 1, 2, 3] and weights == 1  # the weights of the best epoch
    ran, _, _ = _early_stopping_run(losses, patience=3)
    assert ran == [0, 1, 2, 3, 4, 5]  # epoch 4 improved in time
    # min_delta: 0.5 -> 0.45 is not an improvement of more than 0.1
    ran, _, _ = _early_stopping_run([1.0, 0.5, 0.45, 0.44], patience=1, min_delta=0.1)
    assert ran == [0, 1, 2]
    # an accuracy is maximized ('auto' mode)
    ran, _, stopper = _early_stopping_run(losses, monitor="val_accuracy", patience=1)
    assert ran == [0, 1, 2] and stopper.best == -0.5
    # a baseline to beat: the first epoch does not reset the wait, so it stops earlier
    ran, _, _ = _early_stopping_run([1.0, 1.1, 1.2, 1.3], patience=2)
    assert ran == [0, 1, 2]
    ran, _, _ = _early_stopping_run([1.0, 1.1, 1.2, 1.3], patience=2, baseline=0.5)
    assert ran == [0, 1]


def test_early_stopping_in_fit_restores_the_best_weights():
    x, y = _data()
    # a step size at which the offset converges and the slope slowly diverges: the
    # validation loss falls for some epochs, then rises
    model = Line(w=3.05, b=0.0)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.8), loss="mse")
    snapshots = []
    keep = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: snapshots.append(model.get_weights())
    )
    stopper = keras.callbacks.EarlyStopping(patience=1, restore_best_weights=True)
    history = model.fit(
        x, y, epochs=30, batch_size=96, validation_data=(x, y), callbacks=[keep, stopper]
    )
    val = history.history["val_loss"]
    assert len(val) < 30 and stopper.stopped_epoch == len(val) - 1
    best = int(np.argmin(val))
    for now, then in zip(model.get_weights(), snapshots[best]):
        np.testing.assert_allclose(now, then)


def test_early_stopping_on_a_missing_quantity_warns_and_trains_on():
    x, y = _data()
    model = Line()
    model.compile(optimizer="sgd", loss="mse")
    stopper = keras.callbacks.EarlyStopping(monitor="val_loss", patience=0)
    with pytest.warns(UserWarning, match="not available"):
        history = model.fit(x, y, epochs=3, callbacks=[stopper], verbose=0)
    assert history.epoch == [0, 1, 2]
