"""``evaluate`` and ``fit``'s validation loss count the losses a model's call adds
(``add_loss``) batch by batch, as Keras does; the expected numbers were printed by
TensorFlow 2.21 with tf_keras running the same program."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad.tf as tf

keras = tf.keras


class ActivityPenalized(keras.Model):
    """Two Dense layers; the hidden activations' squares are added to the loss."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = keras.layers.Dense(4, activation="tanh")
        self.out = keras.layers.Dense(1)

    def call(self, x, training=False):
        h = self.hidden(x)
        self.add_loss(0.01 * tf.reduce_sum(tf.square(h)))
        return self.out(h)


def _model_and_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3)).astype("float32")
    y = rng.normal(size=(50, 1)).astype("float32")
    model = ActivityPenalized()
    model(x[:1])
    model.set_weights(
        [rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.get_weights()]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return model, x, y


def test_evaluate_adds_each_batch_losses():
    model, x, y = _model_and_data()
    assert model.evaluate(x, y, batch_size=16, verbose=0) == pytest.approx(1.94979, abs=2e-5)
    # by hand: batches of 16, 16, 16, 2, each its mean squared error and its penalty
    total = 0.0
    for start in range(0, 50, 16):
        xb, yb = x[start : start + 16], y[start : start + 16]
        h = np.tanh(xb @ model.hidden.kernel.numpy() + model.hidden.bias.numpy())
        pred = h @ model.out.kernel.numpy() + model.out.bias.numpy()
        total += len(xb) * (np.mean((pred - yb) ** 2) + 0.01 * np.sum(h**2))
    assert model.evaluate(x, y, batch_size=16, verbose=0) == pytest.approx(total / 50, rel=1e-5)


def test_fit_validates_in_its_batch_size():
    model, x, y = _model_and_data()
    history = model.fit(
        x,
        y,
        batch_size=16,
        epochs=2,
        shuffle=False,
        validation_data=(x[:20], y[:20]),
        verbose=0,
    )
    assert history.history["loss"] == pytest.approx([1.78954, 1.40601], abs=2e-5)
    assert history.history["val_loss"] == pytest.approx([1.61396, 1.41871], abs=2e-5)
