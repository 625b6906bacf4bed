"""Programs in the style of Keras's guides "Customizing what happens in fit()" and
"Transfer learning": ``fit`` with ``sample_weight`` (given to ``train_step`` as a third
element of the batch, weighing the loss and the ``weighted_metrics``, not the plain
``metrics``), ``validation_split``, ``evaluate`` with ``sample_weight``, a model's own
``compute_loss``, ``keras.utils.unpack_x_y_sample_weight``, ``compute_metrics``,
``optimizer.minimize(..., tape=tape)``; a frozen base model (``trainable = False`` set on
its layers too, its ``BatchNormalization`` in inference mode) called with
``training=False`` in a functional model, which keeps it in inference mode after
unfreezing. ``sample_weight`` was silently ignored by ``fit`` before, and the graph's
``training=False`` forgotten.

The literals were printed by the same programs run with TensorFlow 2.21 and tf_keras
(float32: agreement to a few float32 roundings).
"""

import numpy as np
import pytest
from tf_weights import regression_data, set_sin_weights

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def _weighted_fit():
    x, y = regression_data()

    class Weighted(keras.Model):
        def train_step(self, batch):
            if len(batch) == 3:
                xb, yb, sample_weight = batch
            else:
                sample_weight = None
                xb, yb = batch
            with tf.GradientTape() as tape:
                pred = self(xb, training=True)
                loss = self.compiled_loss(
                    yb, pred, sample_weight=sample_weight, regularization_losses=self.losses
                )
            variables = self.trainable_variables
            grads = tape.gradient(loss, variables)
            self.optimizer.apply_gradients(zip(grads, variables))
            self.compiled_metrics.update_state(yb, pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(4,))
    model = Weighted(inputs, keras.layers.Dense(1)(inputs))
    set_sin_weights(model)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    weights = np.linspace(0.1, 1.0, 32).astype(np.float32)
    history = model.fit(
        x, y, sample_weight=weights, epochs=2, batch_size=8, verbose=0, shuffle=False
    )
    plain = keras.Sequential([keras.layers.Dense(3, activation="tanh"), keras.layers.Dense(1)])
    plain.build((None, 4))
    set_sin_weights(plain)
    plain.compile(
        optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"], weighted_metrics=["mse"]
    )
    split = plain.fit(
        x,
        y,
        sample_weight=weights,
        epochs=2,
        batch_size=8,
        verbose=0,
        shuffle=False,
        validation_split=0.25,
    )
    scores = plain.evaluate(x, y, sample_weight=weights[::-1], verbose=0, return_dict=True)
    return {
        "history": history.history,
        "kernel": model.get_weights()[0],
        "split": split.history,
        "scores": scores,
    }


def _own_loss():
    x, y = regression_data()

    class Penalized(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = keras.layers.Dense(3, activation="relu")
            self.out = keras.layers.Dense(1)
            self.loss_tracker = keras.metrics.Mean(name="loss")

        def call(self, inputs):
            return self.out(self.hidden(inputs))

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
            decay = tf.add_n([tf.reduce_sum(w**2) for w in self.trainable_weights])
            loss = tf.reduce_mean(tf.abs(y - y_pred)) + 0.01 * decay
            self.loss_tracker.update_state(loss)
            return loss

        @property
        def metrics(self):
            return [self.loss_tracker]

    model = Penalized()
    model(x[:1])
    set_sin_weights(model)
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)

    class Unpacking(keras.Model):
        def train_step(self, batch):
            xb, yb, sample_weight = keras.utils.unpack_x_y_sample_weight(batch)
            with tf.GradientTape() as tape:
                pred = self(xb, training=True)
                loss = self.compute_loss(xb, yb, pred, sample_weight)
            self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
            return self.compute_metrics(xb, yb, pred, sample_weight)

    inputs = keras.Input(shape=(4,))
    hidden = keras.layers.Dense(3, activation="tanh")(inputs)
    other = Unpacking(inputs, keras.layers.Dense(1)(hidden))
    set_sin_weights(other)
    other.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    second = other.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    return {"history": history.history, "second": second.history, "last": other.get_weights()[-1]}


def _frozen_base():
    x, y = regression_data()
    base = keras.Sequential(
        [
            keras.layers.Dense(6, activation="relu", input_shape=(4,)),
            keras.layers.BatchNormalization(),
            keras.layers.Dense(5, activation="relu"),
        ],
        name="base",
    )
    base.trainable = False
    inputs = keras.Input(shape=(4,))
    features = base(inputs, training=False)
    model = keras.Model(inputs, keras.layers.Dense(1)(features))
    set_sin_weights(model, 0.3)
    norm = base.layers[1]
    norm.moving_variance.assign(np.abs(norm.moving_variance.numpy()) + 0.5)
    counts = [len(model.trainable_weights), len(model.non_trainable_weights)]
    flags = [layer.trainable for layer in base.layers]
    model.compile(optimizer=keras.optimizers.Adam(), loss="mse")
    frozen = model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    base.trainable = True  # fine-tuning: the normalization stays in inference mode
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    counts += [len(model.trainable_weights), len(model.non_trainable_weights)]
    tuned = model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    return {
        "counts": counts,
        "flags": flags,
        "frozen": frozen.history,
        "tuned": tuned.history,
        "moving_mean": norm.moving_mean.numpy(),
        "first_bias": base.layers[0].get_weights()[1],
    }


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64).ravel(), want, rtol=2e-6, atol=1e-7)


def _history(got, want):
    assert list(got) == list(want)
    for key, values in want.items():
        _close(got[key], values)


def test_fit_with_sample_weights_and_a_validation_split():
    out = _weighted_fit()
    # TensorFlow 2.21
    _history(
        out["history"],
        {
            "loss": [1.704871416091919, 0.8173686265945435],
            "mae": [1.4554214477539062, 1.013122797012329],
        },
    )
    _close(
        out["kernel"],
        [0.19329321384429932, -0.3898671269416809, 0.2984350621700287, 0.3125682771205902],
    )
    _history(
        out["split"],
        {
            "loss": [0.7042626738548279, 0.646221935749054],
            "mae": [1.0539952516555786, 1.0126432180404663],
            "mse": [1.623207688331604, 1.4894335269927979],
            "val_loss": [3.0004119873046875, 2.8281450271606445],
            "val_mae": [1.6045286655426025, 1.5580315589904785],
            "val_mse": [3.3397765159606934, 3.1480250358581543],
        },
    )
    _history(
        {k: [v] for k, v in out["scores"].items()},
        {"loss": [0.9395856857299805], "mae": [1.1270021200180054], "mse": [1.7083377838134766]},
    )


def test_a_models_own_compute_loss_and_a_step_that_unpacks_its_batch():
    out = _own_loss()
    # TensorFlow 2.21
    _history(out["history"], {"loss": [1.2240374088287354, 1.1207150220870972]})
    _history(
        out["second"],
        {
            "loss": [2.0246453285217285, 1.6710994243621826],
            "mae": [1.170058250427246, 1.0550150871276855],
        },
    )
    _close(out["last"], [-0.09286531805992126])


def test_a_frozen_base_called_with_training_false_then_fine_tuned():
    out = _frozen_base()
    # TensorFlow 2.21
    assert out["counts"] == [2, 8, 8, 2]
    assert out["flags"] == [False, False, False]
    _history(out["frozen"], {"loss": [1.7148574590682983, 1.7136224508285522]})
    _history(out["tuned"], {"loss": [1.7156264781951904, 1.7110693454742432]})
    # the moving statistics never moved: the graph's training=False holds after unfreezing
    _close(
        out["moving_mean"],
        [
            -0.22704075276851654,
            -0.29997697472572327,
            -0.23182934522628784,
            -0.0546487495303154,
            0.14823400974273682,
            0.28139999508857727,
        ],
    )
    _close(
        out["first_bias"],
        [
            0.24764548242092133,
            0.29174166917800903,
            0.19705267250537872,
            0.015016084536910057,
            -0.1773025542497635,
            -0.3002496659755707,
        ],
    )


def test_fit_options_that_are_not_modelled_are_refused():
    x, y = regression_data()
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(NotImplementedError, match="class_weight"):
        model.fit(x, y, class_weight={0: 1.0}, verbose=0)
