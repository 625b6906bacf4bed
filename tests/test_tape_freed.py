"""A tape is in no reference cycle: dropped after its step, it is freed at once with the
arrays it copied, its recording and the pullbacks of the layers its block called, even
with Python's cyclic garbage collector off (a training loop that makes a tape per step
would otherwise leave each step's objects for the collector, and a step's fresh memory
is slower to use than memory just freed). Each step's gradient is checked too."""

import gc
import weakref

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf


class _Dense2(tf.keras.Model):
    """Two dense layers and a counter of calls, Keras style."""

    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(5, activation="tanh")
        self.out = tf.keras.layers.Dense(1)
        self.calls = 0

    def call(self, x):
        self.calls += 1
        return self.out(self.hidden(x))


def _freed_steps(step, count=4):
    """Run ``step`` (which returns its tape and a result) ``count`` times with the
    collector off; the results, and whether every tape was freed when dropped."""
    refs, results = [], []
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(count):
            tape, result = step()
            refs.append(weakref.ref(tape))
            del tape
            results.append(result)
        freed = [r() is None for r in refs]
    finally:
        if enabled:
            gc.enable()
    return results, freed


def test_linear_regression_steps_free_their_tapes():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(16)
    y = 0.7 * x - 0.2
    w, b = tf.Variable(0.4, dtype=np.float64), tf.Variable(0.1, dtype=np.float64)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * x + b - y))
        return tape, tape.gradient(loss, [w, b])

    results, freed = _freed_steps(step)
    assert all(freed)

    def loss_of(w0, b0):
        return np.mean((w0 * x + b0 - y) ** 2)

    expected = numerical_grad(loss_of, (0.4, 0.1), (0, 1))
    for grads in results:  # the first step takes the general way, the others the short one
        assert [float(g) for g in grads] == pytest.approx(expected, rel=1e-6)


def test_two_tapes_of_one_block_and_an_assignment_free_their_tapes():
    x = np.linspace(-1.0, 1.0, 9)
    y = np.sin(x)
    g, d = tf.Variable(0.3, dtype=np.float64), tf.Variable(-0.6, dtype=np.float64)
    seen = tf.Variable(0.0, dtype=np.float64, trainable=False)

    def step():
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            g_loss = tf.reduce_mean(tf.square(g * x - y))
            seen.assign_add(1.0)  # noted by both tapes
            d_loss = tf.reduce_mean(tf.square(d * x + g - y))
        grads = gen_tape.gradient(g_loss, [g]), disc_tape.gradient(d_loss, [d])
        assert gen_tape is not disc_tape
        return gen_tape, grads

    results, freed = _freed_steps(step)
    assert all(freed)
    assert float(seen.numpy()) == 4.0
    gen = numerical_grad(lambda g0: np.mean((g0 * x - y) ** 2), (0.3,), (0,))
    disc = numerical_grad(lambda d0: np.mean((d0 * x + 0.3 - y) ** 2), (-0.6,), (0,))
    for g_grads, d_grads in results:
        assert float(g_grads[0]) == pytest.approx(gen[0], rel=1e-6)
        assert float(d_grads[0]) == pytest.approx(disc[0], rel=1e-6)


def test_keras_model_steps_free_their_tapes_and_kept_calls():
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((6, 3))
    ys = rng.standard_normal((6, 1))
    model = _Dense2()
    model(xs)  # built (float32 weights, as in Keras)
    mse = tf.keras.losses.MeanSquaredError()

    def step():
        with tf.GradientTape() as tape:
            loss = mse(ys, model(xs))
        return tape, tape.gradient(loss, model.trainable_variables)

    results, freed = _freed_steps(step)
    assert all(freed)
    assert model.calls == 5  # the build call, then once per step: not run again

    weights = [np.asarray(v.numpy(), dtype=np.float64) for v in model.trainable_variables]

    def loss_of(k1, b1, k2, b2):
        return np.mean((np.tanh(xs @ k1 + b1) @ k2 + b2 - ys) ** 2)

    expected = numerical_grad(loss_of, tuple(weights), (0, 1, 2, 3))
    for grads in results:
        for got, want in zip(grads, expected):
            assert np.allclose(np.asarray(got), want, rtol=1e-3, atol=1e-5)
