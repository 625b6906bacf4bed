"""``MeanSquaredError()`` called in a tape's block is differentiated as one function
(``_mean_squared_error_over_batch``: the per-example mean and the batch mean in one
body); its values and gradients are those of ``call`` then the reduction, and the
losses that cannot take it (another reduction, sample weights, a subclass with its own
``call``) keep the general way."""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.tf.keras import losses


def _model_and_data(dtype):
    rng = np.random.default_rng(3)
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(5, activation="tanh", input_shape=(4,)), tf.keras.layers.Dense(3)]
    )
    x = rng.standard_normal((6, 4)).astype(dtype)
    model(x)
    model.set_weights([rng.standard_normal(w.shape).astype(dtype) for w in model.weights])
    return model, x, rng


def _fd_kernel_grad(model, x, y, loss_of):
    """Finite differences of the loss for the last layer's kernel, in float64."""
    params = [w.numpy().astype(np.float64) for w in model.weights]

    def f(k2):
        h = np.tanh(x.astype(np.float64) @ params[0] + params[1])
        return loss_of(y, h @ k2 + params[3])

    return numerical_grad(f, (params[2],), (0,))[0]


@pytest.mark.parametrize("labels", ["float", "int"])
def test_mean_squared_error_steps_match_finite_differences(labels):
    model, x, rng = _model_and_data(np.float64)
    mse = tf.keras.losses.MeanSquaredError()
    for _ in range(3):  # the first step compiles, the next ones take the kept calls
        y = rng.integers(0, 3, (6, 3)) if labels == "int" else rng.standard_normal((6, 3))
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        expected = _fd_kernel_grad(model, x, y, lambda t, p: np.mean((p - t) ** 2))
        assert np.allclose(grads[2], expected, rtol=1e-6, atol=1e-9)
        assert float(loss) == float(mse._value(y, model(x)))


def test_the_fused_function_gives_the_values_of_call_then_the_mean():
    rng = np.random.default_rng(8)
    y_pred = tf.constant(rng.standard_normal((7, 4)).astype(np.float32))
    y_true = rng.standard_normal((7, 4))
    mse = tf.keras.losses.MeanSquaredError()
    fused = losses._mean_squared_error_over_batch(y_true, y_pred)
    general = mse._value(y_true, y_pred)
    assert fused.dtype == general.dtype == np.float32
    assert fused.tobytes() == general.tobytes()
    assert mse._s2s_forward((1,), (y_true, y_pred), {})[0] is losses._mean_squared_error_over_batch


def test_other_reductions_weights_and_subclasses_keep_the_general_way():
    y = np.ones((2, 3))
    p = np.zeros((2, 3))
    summed = tf.keras.losses.MeanSquaredError(reduction="sum")
    assert summed._s2s_forward((1,), (y, p), {})[0] == summed._value
    plain = tf.keras.losses.MeanSquaredError()
    weighted = plain._s2s_forward((1,), (y, p), {"sample_weight": np.ones(2)})
    assert weighted[0] == plain._value

    class Doubled(tf.keras.losses.MeanSquaredError):
        def call(self, y_true, y_pred):
            return 2.0 * losses.mean_squared_error(y_true, y_pred)

    doubled = Doubled()
    assert doubled._s2s_forward((1,), (y, p), {})[0] == doubled._value
    model, x, rng = _model_and_data(np.float64)
    y = rng.standard_normal((6, 3))
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = doubled(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        expected = _fd_kernel_grad(model, x, y, lambda t, p: 2.0 * np.mean((p - t) ** 2))
        assert np.allclose(grads[2], expected, rtol=1e-6, atol=1e-9)
