"""The GradientTape shim on the seed documents' examples (numbers as the documents print)."""

import warnings

import numpy as np
import pytest

import s2s_ad.tf as tf


def test_square_of_a_variable():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    assert dy_dx.numpy() == 6.0
    assert str(dy_dx) == "tf.Tensor(6.0, shape=(), dtype=float32)"


def test_watched_constant():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).numpy() == 6.0


def test_unwatched_constant_has_no_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_two_variables_as_a_list():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        f = x * x * y + y * y
    gradients = tape.gradient(f, [x, y])
    assert isinstance(gradients, list)
    assert (gradients[0].numpy(), gradients[1].numpy()) == (12.0, 10.0)


def test_non_persistent_second_use_raises_tensorflow_text():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
        z = x * x * x
    assert tape.gradient(y, x).numpy() == 6.0
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only be used"):
        tape.gradient(z, x)


def test_persistent_tape():
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        z = x * x * x
    assert tape.gradient(y, x).numpy() == 6.0
    assert tape.gradient(z, x).numpy() == 27.0


def test_tensordot_gradient_is_four_x():
    x = tf.range(4, dtype=tf.float32)
    with tf.GradientTape() as t:
        t.watch(x)
        y = 2 * tf.tensordot(x, x, axes=1)
    assert y.numpy() == 28.0
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [0.0, 4.0, 8.0, 12.0])


def test_non_scalar_target_is_summed_and_weighted():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * tf.constant([3.0, 4.0])
    assert tape.gradient(y, x).numpy() == 7.0
    weighted = tape.gradient(y, x, output_gradients=tf.constant([1.0, 2.0]))
    assert weighted.numpy() == 11.0


def test_intermediate_value_as_source():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0


def test_stop_gradient():
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        u = tf.stop_gradient(y)
        z = u * x
    assert tape.gradient(z, x).numpy() == 9.0
    assert tape.gradient(y, x).numpy() == 6.0


def test_unconnected_source():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        z = y * y
    assert tape.gradient(z, x) is None
    zero = tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert zero.numpy() == 0.0
    assert tape.gradient(z, x, unconnected_gradients="zero").numpy() == 0.0


def test_non_trainable_variable_is_not_watched():
    x = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_dict_of_sources_keeps_its_structure():
    w = tf.Variable(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    b = tf.Variable(tf.constant([0.5, -0.5]))
    x = tf.constant([[1.0, 1.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.matmul(x, w) + b)
    grads = tape.gradient(y, {"w": w, "b": b})
    assert set(grads) == {"w", "b"}
    assert grads["w"].shape == (2, 2)
    np.testing.assert_array_equal(grads["b"].numpy(), [1.0, 1.0])


def test_integer_source_gives_none_and_warns():
    x = tf.constant(3)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tape.gradient(y, x) is None
    assert caught


def grow(a):
    b = a * 2
    while tf.norm(b) < 1000:
        b = b * 2
    if tf.reduce_sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c


def test_control_flow_in_a_called_function():
    a = tf.Variable(0.37)
    with tf.GradientTape() as t:
        d = grow(a)
    d_grad = t.gradient(d, a)
    assert d_grad.numpy() == pytest.approx(d.numpy() / a.numpy(), rel=1e-6)


def test_block_statements_not_leading_to_the_target_run_once(capsys):
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        print("in the block")
        y = x * x
    tape.gradient(y, x)
    assert capsys.readouterr().out.count("in the block") == 1


def test_target_not_from_the_block():
    x = tf.Variable(2.0)
    outside = x * 3.0
    with tf.GradientTape() as tape:
        y = x * x
    with pytest.raises(ValueError, match="target"):
        tape.gradient(outside, [x, y])


def test_nested_tapes_give_the_second_derivative():
    x = tf.Variable(3.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x**3
        dy_dx = inner.gradient(y, x)
    d2y_dx2 = outer.gradient(dy_dx, x)
    assert dy_dx.numpy() == 27.0
    assert d2y_dx2.numpy() == 18.0


def test_source_reached_only_through_stop_gradient_is_unconnected():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        f = tf.stop_gradient(x * y)
        g = x * f
    assert tape.gradient(g, x).numpy() == 6.0
    assert tape.gradient(g, y) is None


def test_round_has_no_gradient():
    x = tf.Variable(2.3)
    with tf.GradientTape() as tape:
        y = tf.round(x) * 2.0
    assert tape.gradient(y, x) is None


def test_custom_gradient_in_a_tape_block():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))

        return tf.math.log(1 + e), grad

    x = tf.constant(100.0)
    with np.errstate(over="ignore"), tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    with np.errstate(over="ignore"):
        assert tape.gradient(y, x).numpy() == 1.0


class _Dense:
    def __init__(self, n_in, n_out, seed):
        rng = np.random.default_rng(seed)
        self.kernel = tf.Variable(rng.standard_normal((n_in, n_out)) * 0.5, dtype=np.float64)
        self.bias = tf.Variable(np.zeros(n_out), dtype=np.float64)

    def __call__(self, x):
        return np.tanh(x @ self.kernel + self.bias)


class _Model:
    def __init__(self):
        self.first = _Dense(3, 4, 0)
        self.second = _Dense(4, 2, 1)

    def __call__(self, x):
        return self.second(self.first(x))

    @property
    def trainable_variables(self):
        return [self.first.kernel, self.first.bias, self.second.kernel, self.second.bias]


def _mse(y, p):
    return np.mean((y - p) ** 2)


def test_variables_read_through_objects():
    model = _Model()
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    with tf.GradientTape() as tape:
        loss = _mse(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    assert [g.shape for g in grads] == [(3, 4), (4,), (4, 2), (2,)]
    for var, grad in zip(model.trainable_variables, grads):
        flat = var.value.reshape(-1)
        eps = 1e-6
        for k in range(0, flat.size, 3):
            flat[k] += eps
            plus = _mse(y, model(x))
            flat[k] -= 2 * eps
            minus = _mse(y, model(x))
            flat[k] += eps
            assert np.asarray(grad).reshape(-1)[k] == pytest.approx(
                (plus - minus) / (2 * eps), abs=1e-7
            )


def test_dict_sources_through_a_branch():
    x = tf.Variable(2.0)
    y = tf.Variable(5.0)
    with tf.GradientTape() as tape:
        if x > 1.0:
            result = x * y
        else:
            result = x + y
    grads = tape.gradient(result, {"x": x, "y": y})
    assert (grads["x"].numpy(), grads["y"].numpy()) == (5.0, 2.0)


def test_assign_add_in_the_block_cuts_the_gradient():
    x0 = tf.Variable(1.0)
    x1 = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        x1.assign_add(x0)
        y = x1**2
    assert tape.gradient(y, x0) is None
    assert tape.gradient(y, x1).numpy() == 6.0


def test_variable_plus_one_is_a_plain_tensor():
    x = tf.Variable(2.0)
    y = x + 1.0
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, y) is None


def test_dense_layer_gradient_has_the_kernel_shape():
    layer = tf.keras.layers.Dense(2, activation="relu")
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_mean(y**2)
    grad = tape.gradient(loss, layer.kernel)
    assert grad.shape == (3, 2)


def test_linear_model_seed_example():
    x_input = tf.constant([[1.0, 2.0, 3.0]], dtype=tf.float32)
    y_true = tf.constant([[10.0]], dtype=tf.float32)
    W = tf.Variable(tf.constant([[0.1], [0.2], [0.3]]), name="weight")
    b = tf.Variable(tf.zeros(1), name="bias")
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(x_input, W) + b
        loss = tf.reduce_mean(tf.square(y_pred - y_true))
    gradients = tape.gradient(loss, [W, b])
    residual = 1.4 - 10.0
    np.testing.assert_allclose(
        gradients[0].numpy(), 2 * residual * np.array([[1.0], [2.0], [3.0]]), rtol=1e-5
    )
    np.testing.assert_allclose(gradients[1].numpy(), [2 * residual], rtol=1e-5)


def test_jacobian_and_batch_jacobian():
    x = tf.Variable(tf.constant([1.0, 2.0, 3.0]))
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    jac = tape.jacobian(y, x)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))
    xb = tf.Variable(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    with tf.GradientTape() as tape2:
        yb = xb * 3.0
    per_example = tape2.batch_jacobian(yb, xb)
    assert per_example.shape == (2, 2, 2)
    np.testing.assert_allclose(per_example.numpy()[1], 3.0 * np.eye(2))


def test_stop_recording():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
        with tape.stop_recording():
            c = x * 10.0
        z = y + c
    assert tape.gradient(z, x).numpy() == 6.0


def test_gradient_of_a_jacobian_row_matches_the_weighted_gradient():
    x = tf.Variable(tf.constant([0.5, -1.0]))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.exp(x) * x
    jac = tape.jacobian(y, x).numpy()
    grad = tape.gradient(y, x, output_gradients=tf.constant([1.0, 0.0])).numpy()
    np.testing.assert_allclose(jac[0], grad, rtol=1e-6)


def test_jacobian_of_an_inner_gradient_is_the_hessian():
    x = tf.Variable(tf.constant([1.0, 2.0]))
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(x * x * x)
        g = inner.gradient(y, x)
    hessian = outer.jacobian(g, x)
    np.testing.assert_allclose(hessian.numpy(), np.diag([6.0, 12.0]))


def test_tape_in_exec_code_is_refused_clearly():
    import s2s_ad

    code = (
        "import s2s_ad.tf as tf\nx = tf.Variable(2.0)\n"
        "with tf.GradientTape() as t:\n    y = x * x\n"
    )
    with pytest.raises(s2s_ad.TransformError, match="source cannot be read"):
        exec(compile(code, "<interactive>", "exec"), {})


def test_tape_inside_a_function_and_a_loop():
    def step(w, x):
        grads = []
        for k in range(3):
            with tf.GradientTape() as tape:
                loss = w * x * k
            grads.append(tape.gradient(loss, w).numpy())
        return grads

    assert step(tf.Variable(1.5), 2.0) == [0.0, 2.0, 4.0]


_GLOBAL_W = tf.Variable(2.0)


def _uses_global(x):
    return _GLOBAL_W * x * x


def test_variable_read_as_a_global_by_a_called_function():
    with tf.GradientTape() as tape:
        y = _uses_global(3.0)
    assert tape.gradient(y, _GLOBAL_W).numpy() == 9.0


def test_random_draws_in_the_block_are_not_drawn_again():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        r = np.random.normal()
        z = tf.random.normal([3])
        y = x * r + tf.reduce_sum(x * z)
    grad = tape.gradient(y, x)
    assert np.isclose(grad.numpy(), r + np.sum(z.numpy()), rtol=1e-5)
    assert np.isclose(tape.gradient(y, x).numpy(), grad.numpy())


GLOBAL_X = tf.Variable(3.0)


def _square_of_global():
    return GLOBAL_X * GLOBAL_X


def test_a_variable_read_directly_and_through_a_called_function_gets_both_parts():
    with tf.GradientTape() as tape:
        a = GLOBAL_X + 0.0
        y = _square_of_global() + a
    assert tape.gradient(y, GLOBAL_X).numpy() == pytest.approx(7.0)


def test_local_functions_called_in_a_block_inside_a_function():
    x = tf.Variable(3.0)

    def f():
        return x * x

    def g(v):
        return 2.0 * v

    with tf.GradientTape() as tape:
        y = f() + g(x)
    assert tape.gradient(y, x).numpy() == pytest.approx(8.0)


def test_variables_held_in_a_list_and_read_in_a_loop():
    ws = [tf.Variable(1.5), tf.Variable(-0.5)]
    with tf.GradientTape() as tape:
        y = 0.0
        for w in ws:
            y = y + w * w
    grads = tape.gradient(y, ws)
    assert [g.numpy() for g in grads] == pytest.approx([3.0, -1.0])
    with tf.GradientTape() as tape:
        for w in ws:  # noqa: B007
            pass
        y = w * w
    first, last = tape.gradient(y, ws)
    assert first is None and last.numpy() == pytest.approx(-1.0)
