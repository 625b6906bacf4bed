"""``tape.gradient`` and ``tape.jacobian`` called inside the tape's own ``with`` block:
what the statements before the call computed is differentiated (as in TensorFlow), a
persistent tape goes on recording after it, a non-persistent one refuses a second call."""

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad.errors import TransformError
from s2s_ad.tf import keras
from tests.fd import numerical_grad


def _mlp_loss(kernel1, bias1, kernel2, bias2, x, y):
    """The loss of the two-layer model below, in float64 NumPy (the finite-difference
    reference)."""
    hidden = np.tanh(x @ kernel1 + bias1)
    return float(np.mean((hidden @ kernel2 + bias2 - y) ** 2))


def _model(rng):
    model = keras.Sequential([keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(1)])
    model(np.zeros((1, 3), dtype=np.float32))
    model.set_weights([rng.standard_normal(w.shape) * 0.5 for w in model.get_weights()])
    return model


def test_a_training_step_applies_its_gradients_inside_the_block():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 1)).astype(np.float32)
    model = _model(rng)
    opt = keras.optimizers.SGD(0.1)
    for _ in range(3):
        before = [np.array(w, dtype=np.float64) for w in model.get_weights()]
        with tf.GradientTape() as tape:
            pred = model(x)
            loss = tf.reduce_mean(tf.square(pred - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        assert float(loss) == pytest.approx(_mlp_loss(*before, x, y), rel=1e-5)
        expected = numerical_grad(_mlp_loss, [*before, x, y], wrt=(0, 1, 2, 3))
        for got, want, old, new in zip(grads, expected, before, model.get_weights()):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(new, old - 0.1 * got.numpy(), rtol=1e-5, atol=1e-6)


def test_a_non_persistent_tape_refuses_a_second_gradient_inside_the_block():
    w = tf.Variable([1.0, -2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w * w)
        first = tape.gradient(loss, w)
        with pytest.raises(RuntimeError, match="non-persistent"):
            tape.gradient(loss, w)
        doubled = loss * 2.0
    np.testing.assert_allclose(first.numpy(), [2.0, -4.0])
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(doubled, w)


def test_a_persistent_tape_records_after_a_gradient_inside_the_block():
    w = tf.Variable(np.array([1.0, 2.0]))
    x = np.array([0.5, -1.0])
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_sum((w * x) ** 2)
        g = tape.gradient(loss, w)
        w.assign_sub(0.1 * g)
        later = tf.reduce_sum(tf.sin(w * x))
    np.testing.assert_allclose(g.numpy(), 2.0 * np.array([1.0, 2.0]) * x**2)
    stepped = np.array([1.0, 2.0]) - 0.1 * g.numpy()
    np.testing.assert_allclose(w.numpy(), stepped)
    want = numerical_grad(lambda v: float(np.sum(np.sin(v * x))), [stepped])
    np.testing.assert_allclose(tape.gradient(later, w).numpy(), want, rtol=1e-6)
    # the first loss read w before the step: its gradient is at that value (TensorFlow's)
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), g.numpy())


def test_an_optimizer_step_in_the_block_leaves_a_later_gradient_of_what_ran_before_it():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 3))
    y = rng.standard_normal((6, 1))
    model = _model(rng)
    before = [np.array(w, dtype=np.float64) for w in model.get_weights()]
    opt = keras.optimizers.SGD(0.05)
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    # TensorFlow gives the gradient at the old weights, which the loss read
    again = tape.gradient(loss, model.trainable_variables)
    expected = numerical_grad(_mlp_loss, [*before, x, y], wrt=(0, 1, 2, 3))
    for got, first, want in zip(again, grads, expected):
        np.testing.assert_array_equal(got.numpy(), first.numpy())
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


def test_a_variable_an_optimizer_changed_after_the_loss_keeps_its_gradient():
    opt = keras.optimizers.SGD(0.5)
    for inside in (True, False):
        w = tf.Variable(np.array([1.0, 2.0]))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w**2)
            opt.apply_gradients([(np.array([1.0, 1.0]), w)])
            if inside:
                g = tape.gradient(loss, w)
        if not inside:
            g = tape.gradient(loss, w)
        np.testing.assert_allclose(g.numpy(), [2.0, 4.0])  # at w = [1, 2], as TensorFlow
        np.testing.assert_allclose(w.numpy(), [0.5, 1.5])


class _Critic(tf.Module):
    def __init__(self, rng):
        super().__init__()
        self.w = tf.Variable(rng.standard_normal((3, 5)))
        self.v = tf.Variable(rng.standard_normal((5, 1)))

    def __call__(self, x):
        return tf.tanh(x @ self.w) @ self.v


def _penalized(w, v, x):
    """The critic's mean score plus ten times its gradient penalty, in NumPy: the input
    gradient of sum(tanh(x @ w) @ v) is ((1 - tanh^2) * v.T) @ w.T per row."""
    hidden = np.tanh(x @ w)
    gx = ((1.0 - hidden**2) * v.T) @ w.T
    norm = np.sqrt(np.sum(gx**2, axis=1))
    return float(np.mean(hidden @ v) + 10.0 * np.mean((norm - 1.0) ** 2))


def test_a_gradient_penalty_taken_inside_the_inner_block():
    rng = np.random.default_rng(2)
    critic = _Critic(rng)
    x = rng.standard_normal((8, 3))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            score = critic(x)
            gx = inner.gradient(score, x)
        norm = tf.sqrt(tf.reduce_sum(tf.square(gx), axis=1))
        penalty = tf.reduce_mean((norm - 1.0) ** 2)
        total = tf.reduce_mean(score) + 10.0 * penalty
    assert float(total) == pytest.approx(_penalized(critic.w.numpy(), critic.v.numpy(), x))
    gw, gv = outer.gradient(total, [critic.w, critic.v])
    want_w, want_v = numerical_grad(_penalized, [critic.w.numpy(), critic.v.numpy(), x], (0, 1))
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gv.numpy(), want_v, rtol=1e-5, atol=1e-6)


def test_a_jacobian_inside_the_block_sees_only_what_ran_before_it():
    x = tf.Variable(np.array([0.3, -0.7, 1.1]))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.sin(x) * x
        jac = tape.jacobian(y, x)
        y = y * 3.0  # after the call: not part of that jacobian
    want = np.diag(np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy()))
    np.testing.assert_allclose(jac.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), 3.0 * want, rtol=1e-6)


def test_a_gradient_inside_a_loop_of_the_block():
    w = tf.Variable([1.5, -0.5])
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_sum(w**3)
        seen = []
        for _ in range(2):
            seen.append(tape.gradient(loss, w))  # the target ran before the loop: fine
    for g in seen:
        np.testing.assert_allclose(g.numpy(), 3.0 * np.array([1.5, -0.5]) ** 2)
    with tf.GradientTape(persistent=True) as tape:
        for k in range(2):
            inner_loss = tf.reduce_sum(w * float(k + 1))
            with pytest.raises(TransformError, match="loop or branch"):
                tape.gradient(inner_loss, w)


def test_a_target_computed_from_the_same_tapes_gradient_is_refused():
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_sum(w**2)
        g = tape.gradient(loss, w)
        norm = tf.reduce_sum(g * g)
    with pytest.raises(TransformError, match="same tape's gradient"):
        tape.gradient(norm, w)


def _regularized_model():
    model = keras.Sequential(
        [
            keras.layers.Dense(6, activation="relu"),
            keras.layers.Dropout(0.5),
            keras.layers.BatchNormalization(),
            keras.layers.Dense(1),
        ]
    )
    model(np.zeros((1, 3)))
    init = np.random.default_rng(1)
    model.set_weights([init.standard_normal(w.shape) for w in model.get_weights()])
    return model


def test_dropout_and_batch_norm_give_the_same_step_inside_the_block_as_after_it():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3))
    y = rng.standard_normal((8, 1))
    runs = {}
    for inside in (True, False):
        model = _regularized_model()
        np.random.seed(3)
        tf.random.set_seed(3)
        steps = []
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                if inside:
                    grads = tape.gradient(loss, model.trainable_variables)
            if not inside:
                grads = tape.gradient(loss, model.trainable_variables)
            steps.append((float(loss), [g.numpy() for g in grads], model.get_weights()))
        runs[inside] = steps
    for (loss_in, grads_in, state_in), (loss_after, grads_after, state_after) in zip(
        runs[True], runs[False]
    ):
        assert loss_in == loss_after
        for a, b in zip(grads_in, grads_after):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        for a, b in zip(state_in, state_after):  # moving statistics updated once per step
            np.testing.assert_array_equal(a, b)


def test_a_persistent_tapes_gradient_in_a_loop_keeps_its_results_and_bounded_records():
    w = tf.Variable(np.array([0.3, -0.7]))
    x = np.array([1.5, 0.5])
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_sum(tf.sin(w * x))
        sq = tf.reduce_sum((w * x) ** 2)
    seen = []
    for _ in range(50):
        seen.append(tape.gradient(loss, w).numpy())
        seen.append(tape.gradient(sq, [w])[0].numpy())
    for k in range(0, 100, 2):
        np.testing.assert_allclose(seen[k], np.cos(np.array([0.3, -0.7]) * x) * x)
        np.testing.assert_allclose(seen[k + 1], 2.0 * np.array([0.3, -0.7]) * x**2)
    assert len(tape._ran) <= 2  # one record per (slice, target), not one per call
