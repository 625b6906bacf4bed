"""What the tape and the dispatcher remember between steps (the plan per block, target
and sources; the generated code per layer class) never gives a stale gradient: new
values, other sources, another block, a Variable rebound to a name, a layer or loss
class whose ``call`` changes between steps, all give the gradient of what ran."""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def _step(w, b, x, y):
    """One step of a linear regression, written as a user would."""
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(w * x + b - y))
    return tape.gradient(loss, [w, b])


def _expected(w0, b0, x, y):
    def loss(w, b):
        return np.mean((w * x + b - y) ** 2)

    return numerical_grad(loss, (w0, b0), (0, 1))


def test_the_same_block_with_new_values_at_every_step():
    rng = np.random.default_rng(3)
    w, b = tf.Variable(0.5, dtype=np.float64), tf.Variable(-0.2, dtype=np.float64)
    for _ in range(3):  # new data, and the Variables moved by the step before
        x = rng.standard_normal(16)
        y = 3.0 * x - 1.0
        gw, gb = _step(w, b, x, y)
        ew, eb = _expected(float(w.numpy()), float(b.numpy()), x, y)
        assert float(gw) == pytest.approx(ew, rel=1e-6)
        assert float(gb) == pytest.approx(eb, rel=1e-6)
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)


def test_other_variables_bound_to_the_same_names():
    x = np.linspace(-1.0, 1.0, 8)
    y = 2.0 * x
    for w0, b0 in ((0.5, 0.1), (-1.5, 2.0), (3.0, -0.5)):
        w, b = tf.Variable(w0, dtype=np.float64), tf.Variable(b0, dtype=np.float64)
        gw, gb = _step(w, b, x, y)
        ew, eb = _expected(w0, b0, x, y)
        assert (float(gw), float(gb)) == pytest.approx((ew, eb), rel=1e-6)


def test_other_sources_of_the_same_block_in_a_row():
    x = np.array([0.5, -1.0, 2.0])
    w = tf.Variable(np.array([0.3, -0.2, 0.7]))
    b = tf.Variable(0.25, dtype=np.float64)
    for sources in ([w, b], [b], [w], (b, w), {"bias": b}):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((w * x + b) ** 2)
        got = tape.gradient(loss, sources)
        resid = w.numpy() * x + b.numpy()
        by_id = {id(w): 2.0 * resid * x, id(b): np.sum(2.0 * resid)}
        if isinstance(sources, dict):
            np.testing.assert_allclose(got["bias"], by_id[id(b)])
            continue
        assert type(got) is type(sources)
        for source, grad in zip(sources, got):
            np.testing.assert_allclose(np.asarray(grad), by_id[id(source)])


def test_a_persistent_tape_asked_for_other_targets_and_sources():
    w = tf.Variable(np.array([1.0, -2.0]))
    v = tf.Variable(3.0, dtype=np.float64)
    with tf.GradientTape(persistent=True) as tape:
        a = tf.reduce_sum(w * w) * v
        c = v * v
    np.testing.assert_allclose(tape.gradient(a, w), 2.0 * w.numpy() * 3.0)
    assert float(tape.gradient(a, v)) == pytest.approx(5.0)
    assert float(tape.gradient(c, v)) == pytest.approx(6.0)
    assert tape.gradient(c, w) is None
    np.testing.assert_allclose(tape.gradient(a, [w])[0], 6.0 * w.numpy())


def test_two_blocks_reading_the_same_names_one_after_the_other():
    x = np.array([1.0, 2.0, -1.0])
    w = tf.Variable(np.array([0.5, 0.5, 0.5]))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(w * x))
    first = tape.gradient(loss, w)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w * x)
    second = tape.gradient(loss, w)
    np.testing.assert_allclose(first, 2.0 * w.numpy() * x * x)
    np.testing.assert_allclose(second, x)


class _Scale(keras.layers.Layer):
    """A user layer with one weight; its ``call`` is swapped by the test below."""

    def build(self, input_shape):
        self.w = self.add_weight("w", (input_shape[-1],), initializer="ones")

    def call(self, inputs):
        return inputs * self.w


def _train_step(layer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) ** 2)
    return tape.gradient(loss, layer.trainable_variables)[0]


def test_a_layer_class_whose_call_changes_between_steps(monkeypatch):
    x = np.array([[1.0, 2.0], [-0.5, 0.25]], np.float32)
    layer = _Scale()
    first = [_train_step(layer, x) for _ in range(2)]  # the second from remembered code
    w = layer.w.numpy()
    for g in first:
        np.testing.assert_allclose(g, np.sum(2.0 * (x * w) * x, axis=0), rtol=1e-6)

    def cubed(self, inputs):
        return inputs * self.w**3

    monkeypatch.setattr(_Scale, "call", cubed)
    for _ in range(2):
        got = _train_step(layer, x)
        np.testing.assert_allclose(
            got, np.sum(2.0 * (x * w**3) * x * 3.0 * w**2, axis=0), rtol=1e-5
        )


def test_a_callable_object_whose_class_call_changes(monkeypatch):
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.array([1.0, 2.0]))

        def __call__(self, x):
            return x * self.w

    model = Model()
    x = np.array([3.0, -1.0])

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        return tape.gradient(loss, model.trainable_variables)[0]

    for _ in range(2):
        np.testing.assert_allclose(step(), x)
    monkeypatch.setattr(Model, "__call__", lambda self, x: x * self.w * self.w)
    for _ in range(2):
        np.testing.assert_allclose(step(), 2.0 * x * model.w.numpy())


class _Doubled(keras.losses.MeanSquaredError):
    """A loss whose ``__call__`` is its own: differentiated as it is written."""

    def __call__(self, y_true, y_pred, sample_weight=None):
        return 2.0 * super().__call__(y_true, y_pred, sample_weight)


class _Quartic(keras.losses.Loss):
    """A user's loss written as Keras documents: ``call`` gives one value per example."""

    def call(self, y_true, y_pred):
        return tf.reduce_mean(tf.square(tf.square(y_pred - y_true)), axis=-1)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none"])
def test_loss_classes_and_reductions_in_a_training_step(reduction):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 3))
    y = rng.standard_normal((6, 2))
    weights = np.linspace(0.5, 1.5, 6)
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,), dtype="float64")])
    # weights set from the seeded draws: the initializer's are unseeded (as in TensorFlow)
    model.set_weights([rng.standard_normal((3, 2)), 0.1 * rng.standard_normal(2)])
    kernel, bias = (v.numpy() for v in model.trainable_variables)

    def per_example(k, c):
        return np.mean((x @ k + c - y) ** 2, axis=-1)

    reduce = {"sum_over_batch_size": np.mean, "sum": np.sum, "none": np.sum}[reduction]
    cases = [
        (keras.losses.MeanSquaredError(reduction=reduction), None, 1.0),
        (keras.losses.MeanSquaredError(reduction=reduction), weights, 1.0),
        (_Doubled(reduction=reduction), None, 2.0),
    ]
    quartic = _Quartic(reduction=reduction)
    for loss_fn, sample_weight, scale in cases:
        for _ in range(2):  # the second step takes the kept calls back
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True), sample_weight=sample_weight)
            dk, db = tape.gradient(loss, model.trainable_variables)
            sw = 1.0 if sample_weight is None else sample_weight

            def total(k, c, sw=sw, scale=scale):
                return scale * reduce(per_example(k, c) * sw)

            np.testing.assert_allclose(dk, numerical_grad(total, (kernel, bias), 0), rtol=1e-6)
            np.testing.assert_allclose(db, numerical_grad(total, (kernel, bias), 1), rtol=1e-6)

    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = quartic(y, model(x, training=True))
        dk, db = tape.gradient(loss, model.trainable_variables)

        def fourth(k, c):
            return reduce(np.mean((x @ k + c - y) ** 4, axis=-1))

        np.testing.assert_allclose(dk, numerical_grad(fourth, (kernel, bias), 0), rtol=1e-6)
        np.testing.assert_allclose(db, numerical_grad(fourth, (kernel, bias), 1), rtol=1e-6)
