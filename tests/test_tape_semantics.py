"""The tape follows TensorFlow's semantics: targets in lists and dicts, ``None`` for what the
block did not differentiably read, reset(), jacobians through objects, and a gradient of
exactly the computation that ran (random masks and state changes happen once)."""

import numpy as np
import pytest

import s2s_ad
import s2s_ad.tf as tf
from tests.fd import numerical_grad


def test_a_list_of_targets_adds_their_gradients():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y1 = x * x
        y2 = 3.0 * x
    assert tape.gradient([y1, y2], x).numpy() == pytest.approx(7.0)
    assert tape.gradient({"a": y1, "b": y2}, x).numpy() == pytest.approx(7.0)
    weighted = tape.gradient([y1, y2], x, output_gradients=[2.0, 1.0])
    assert weighted.numpy() == pytest.approx(11.0)


def test_a_variable_on_the_branch_not_taken_has_no_gradient():
    x = tf.Variable(2.0)
    v = tf.Variable(5.0)
    for sign, expected in ((1.0, (2.0, None)), (-1.0, (None, 2.0))):
        with tf.GradientTape() as tape:
            if sign > 0:
                y = x * 2.0
            else:
                y = v * 2.0
        gx, gv = tape.gradient(y, [x, v])
        got = tuple(None if g is None else float(g.numpy()) for g in (gx, gv))
        assert got == expected


class _Gate(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = tf.Variable(3.0)
        self.off = tf.Variable(4.0)

    def __call__(self, x, use_on):
        if use_on:
            return x * self.on
        return x * self.off


def test_a_variable_of_a_module_on_the_branch_not_taken_has_no_gradient():
    gate = _Gate()
    with tf.GradientTape() as tape:
        y = gate(2.0, True)
    g_on, g_off = tape.gradient(y, [gate.on, gate.off])
    assert g_on.numpy() == pytest.approx(2.0) and g_off is None


def test_an_integer_cast_cuts_the_gradient_a_float_cast_does_not():
    x = tf.Variable(2.5)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.cast(x, tf.int32) * 2
        z = tf.cast(x, tf.float64) * 2.0
    assert tape.gradient(y, x) is None
    assert tape.gradient(z, x).numpy() == pytest.approx(2.0)
    assert tape.gradient(y, x, unconnected_gradients="zero").numpy() == 0.0


def test_a_constant_neither_watched_nor_used_gives_none():
    x = tf.constant(3.0)
    unrelated = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, unrelated) is None


class _Linear(tf.Module):
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        rng = np.random.default_rng(3)
        self.kernel = tf.Variable(rng.standard_normal((n_in, n_out)), dtype=np.float64)
        self.bias = tf.Variable(np.zeros(n_out), dtype=np.float64)

    def __call__(self, x):
        return np.tanh(x @ self.kernel + self.bias)


def test_jacobian_and_batch_jacobian_for_variables_reached_through_an_object():
    layer = _Linear(3, 2)
    x = np.random.default_rng(0).standard_normal((4, 3))
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    jac = tape.jacobian(y, layer.kernel)
    assert jac.shape == (4, 2, 3, 2)

    def f(kernel):
        return np.tanh(x @ kernel + layer.bias.numpy())

    k0 = layer.kernel.numpy()
    numeric = np.zeros((4, 2, 3, 2))
    for idx in np.ndindex(3, 2):
        step = np.zeros_like(k0)
        step[idx] = 1e-6
        numeric[(Ellipsis, *idx)] = (f(k0 + step) - f(k0 - step)) / 2e-6
    np.testing.assert_allclose(jac.numpy(), numeric, atol=1e-6)
    xs = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = layer(xs)
    per_example = tape.batch_jacobian(y, xs)
    assert per_example.shape == (4, 2, 3)
    expected = (1 - np.tanh(x @ k0) ** 2)[:, :, None] * k0.T[None]
    np.testing.assert_allclose(per_example.numpy(), expected, atol=1e-9)


def test_reset_forgets_what_came_before():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
        tape.reset()
        z = 3.0 * x + y
    # y was computed before the reset: a constant for the tape
    assert tape.gradient(z, x).numpy() == pytest.approx(3.0)


def test_reset_inside_a_loop_of_the_block_is_refused():
    x = tf.Variable(2.0)
    with pytest.raises(s2s_ad.TransformError, match="reset"):
        with tf.GradientTape() as tape:
            for _ in range(2):
                tape.reset()
                x.assign_add(1.0)


class _Dropout(tf.Module):
    """A dropout-style layer drawing its mask with np.random inside its call."""

    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(np.ones(8))

    def __call__(self, x):
        mask = np.where(np.random.random(x.shape) > 0.5, 1.0, 0.0)
        return x * self.w * mask


def test_a_mask_drawn_inside_a_layer_is_the_one_the_gradient_uses():
    np.random.seed(1)
    layer = _Dropout()
    x = np.arange(1.0, 9.0)
    for _ in range(3):
        with tf.GradientTape() as tape:
            y = layer(x)
            loss = tf.reduce_sum(y)
        g = tape.gradient(loss, layer.w).numpy()
        kept = np.asarray(y) != 0
        assert 0 < kept.sum() < 8
        np.testing.assert_array_equal(g, np.where(kept, x, 0.0))


class _Noisy(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(2.0)

    def __call__(self, x):
        noise = tf.random.normal(np.shape(x), stddev=0.1)
        return (x + noise) * self.w


def test_tf_random_draws_inside_a_layer_are_replayed():
    tf.random.set_seed(0)
    layer = _Noisy()
    x = np.ones(5)
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_sum(y)
    g = tape.gradient(loss, layer.w)
    # d loss / d w = sum(x + noise) = sum(y) / w, with the noise of the block's run
    assert g.numpy() == pytest.approx(float(np.sum(y.numpy())) / 2.0, rel=1e-5)


class _Counting(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(2.0)
        self.seen = tf.Variable(0.0, trainable=False)
        self.calls = 0

    def __call__(self, x):
        self.seen.assign_add(1.0)
        self.calls += 1
        return x * self.w


def test_state_changed_in_a_call_changes_once():
    model = _Counting()
    for step in range(1, 3):
        with tf.GradientTape() as tape:
            y = model(3.0)
        assert tape.gradient(y, model.w).numpy() == pytest.approx(3.0)
        assert model.seen.numpy() == step
        assert model.calls == step


class _Cache(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(2.0)

    def __call__(self, x):
        self.last = x * self.w
        return self.last * 2.0


def test_a_float_stored_on_an_object_in_a_call_carries_its_gradient():
    model = _Cache()
    with tf.GradientTape(persistent=True) as tape:
        y = model(3.0)
        z = model.last * 5.0 + y  # read again through the object, after the call
    # TensorFlow 2.21 prints 6.0 and 21.0 (d/dw of 2*3w, and of 5*3w + 2*3w)
    assert tape.gradient(y, model.w).numpy() == pytest.approx(6.0)
    assert tape.gradient(z, model.w).numpy() == pytest.approx(21.0)
    assert float(model.last) == 6.0


def test_astype_of_an_array_that_is_not_a_source():
    w = tf.Variable(2.0)
    counts = np.arange(4)
    model = _Linear(4, 1)
    with tf.GradientTape() as tape:
        as_float = counts.astype(float)
        y = w * np.sum(as_float) + tf.reduce_sum(model(as_float[None, :]))
    assert tape.gradient(y, w).numpy() == pytest.approx(6.0)


def test_numpy_calls_in_a_block_are_differentiated():
    # a deliberate extension: TensorFlow gives None through NumPy calls
    x = tf.Variable(0.5)
    with tf.GradientTape() as tape:
        y = np.sin(x) * np.exp(x)
    expected = np.cos(0.5) * np.exp(0.5) + np.sin(0.5) * np.exp(0.5)
    assert tape.gradient(y, x).numpy() == pytest.approx(expected, rel=1e-6)


def test_an_outer_tape_over_an_inner_gradient_with_named_variables():
    kernel = tf.Variable(np.array([[0.5, -1.0], [2.0, 0.3]]), dtype=np.float64)
    x = tf.constant(np.array([[1.0, 2.0]]))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.tanh(x @ kernel))
        g = inner.gradient(y, x)
        size = tf.reduce_sum(g * g)
    got = outer.gradient(size, kernel)

    def size_of(k):
        t = np.tanh(np.array([[1.0, 2.0]]) @ k)
        gx = (1 - t**2) @ k.T
        return float(np.sum(gx * gx))

    k0 = kernel.numpy()
    numeric = np.zeros_like(k0)
    for idx in np.ndindex(k0.shape):
        step = np.zeros_like(k0)
        step[idx] = 1e-6
        numeric[idx] = (size_of(k0 + step) - size_of(k0 - step)) / 2e-6
    np.testing.assert_allclose(got.numpy(), numeric, rtol=1e-5)


def test_an_outer_tape_over_an_inner_gradient_through_a_layer_call():
    layer = _Linear(2, 2)
    xv = np.array([[1.0, 2.0]])
    x = tf.constant(xv)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = layer(x)
        g = inner.gradient(y, x)  # of sum(y), as TensorFlow does for a non-scalar target
        size = tf.reduce_sum(g * g)
    db, dk = outer.gradient(size, layer.trainable_variables)

    def size_of(kernel, bias):
        slope = 1 - np.tanh(xv @ kernel + bias) ** 2
        return np.sum((slope @ kernel.T) ** 2)

    kernel, bias = np.array(layer.kernel.numpy()), np.array(layer.bias.numpy())
    np.testing.assert_allclose(dk.numpy(), numerical_grad(size_of, (kernel, bias), 0), atol=1e-7)
    np.testing.assert_allclose(db.numpy(), numerical_grad(size_of, (kernel, bias), 1), atol=1e-7)


class _GeneratorDropout(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(np.ones(6))
        self.rng = np.random.default_rng(0)

    def __call__(self, x):
        return x * self.w * (self.rng.random(6) > 0.5)


def test_a_generator_drawn_from_in_a_call_is_refused_not_redrawn():
    layer = _GeneratorDropout()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(np.arange(6.0)))
    state = layer.rng.bit_generator.state
    with pytest.raises(s2s_ad.TransformError, match="np.random.Generator"):
        tape.gradient(loss, layer.w)
    assert layer.rng.bit_generator.state == state  # the generator was left as it was


class _LazyModule(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = None

    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.random.normal([3]))
        return x * self.w


def test_a_module_drawing_its_variables_lazily_in_a_block_is_refused():
    module = _LazyModule()
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(module(np.ones(3)))
    with pytest.raises(s2s_ad.TransformError, match="did not draw"):
        tape.gradient(y, module.w)
    with tf.GradientTape() as tape:  # once built, it works
        y = tf.reduce_sum(module(np.ones(3)))
    np.testing.assert_allclose(np.asarray(tape.gradient(y, module.w)), np.ones(3))


def test_a_variable_returned_as_it_is_on_the_branch_taken():
    flag = tf.constant(1.0)
    first, second = tf.Variable(2.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        tape.watch(flag)
        if flag > 0.0:
            out = first
        else:
            out = second**2
    g_first, g_second = tape.gradient(out, [first, second])
    assert g_first.numpy() == 1.0 and g_second is None


def test_reset_under_a_condition_of_the_block():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    forget = True
    with tf.GradientTape() as tape:
        b_sq = b * b
        if forget:
            tape.reset()
        total = a * a + b_sq
    grads = tape.gradient(total, {"a": a, "b": b})
    assert grads["a"].numpy() == 4.0 and grads["b"] is None


def test_stop_recording_and_two_tapes_in_one_with_statement():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        a_sq = a * a
        with tape.stop_recording():
            b_sq = b * b
        total = a_sq + b_sq
    grads = tape.gradient(total, {"a": a, "b": b})
    assert grads["a"].numpy() == 4.0 and grads["b"] is None
    u, v = tf.constant(0.0), tf.constant(0.0)
    with tf.GradientTape() as tape_u, tf.GradientTape() as tape_v:
        tape_u.watch(u)
        tape_v.watch(v)
        total = tf.math.sin(u) + tf.nn.sigmoid(v)
    assert tape_u.gradient(total, u).numpy() == pytest.approx(1.0)
    assert tape_v.gradient(total, v).numpy() == pytest.approx(0.25)


def test_watch_accessed_variables_off_and_integer_sources():
    a, b = tf.Variable(0.0), tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(b)
        total = tf.math.sin(a) + tf.nn.softplus(b)
    grads = tape.gradient(total, {"a": a, "b": b})
    assert grads["a"] is None and grads["b"].numpy() == pytest.approx(1 / (1 + np.exp(-10.0)))
    n = tf.constant(10)
    with tf.GradientTape() as tape:
        tape.watch(n)
        sq = n * n
    with pytest.warns(UserWarning, match="must be floating"):
        assert tape.gradient(sq, n) is None


def test_type_names_as_tensorflow_prints_them():
    v = tf.Variable(2.0)
    assert type(v).__name__ == "ResourceVariable"
    assert type(v + 1.0).__name__ == "EagerTensor"
    assert isinstance(v + 1.0, tf.Tensor) and isinstance(v, tf.Variable)


def test_a_name_read_and_reassigned_in_the_block_as_either_source():
    for step in range(2):  # the second pass reuses the cached functions
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            start = x
            x = x * 2.0
            y = x * x
        assert tape.gradient(y, start).numpy() == pytest.approx(24.0), step
        assert tape.gradient(y, x).numpy() == pytest.approx(12.0), step


def test_a_variable_made_inside_the_block_is_watched_when_read():
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        w = tf.Variable(tf.ones([2, 2]))
        y = tf.reduce_sum(x @ w)
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), [[1.0, 1.0], [2.0, 2.0]])
    with tf.GradientTape() as tape:
        v = tf.Variable(3.0 * tf.ones([2]))  # from data: the statement is not run again
        z = tf.reduce_sum(v * v)
    np.testing.assert_allclose(tape.gradient(z, v).numpy(), [6.0, 6.0])


def test_a_variable_read_before_and_after_its_assignment_is_refused():
    v = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        early = v * v
        v.assign_add(1.0)
        total = early + v * v
        late = 3.0 * v * v
    with pytest.raises(s2s_ad.TransformError, match="both before and after"):
        tape.gradient(total, v)
    # read only after the assignment: the value the block left
    assert tape.gradient(late, v).numpy() == pytest.approx(12.0)


def test_a_variable_assigned_and_read_in_a_loop_of_the_block_is_refused():
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        total = 0.0
        for _ in range(3):
            total = total + v * v
            v.assign_add(1.0)
    with pytest.raises(s2s_ad.TransformError, match="assign"):
        tape.gradient(total, v)
