"""What the tape keeps between training steps to answer them faster, and when it must
not be used: a block found again by the code object that runs it, the class of an
object the block reads (``tape._OPAQUE``), the second tape of ``with a, b:`` leaving
with what the first found and reading into the same dict until one of them resets,
the backward helpers taking a layer's kernel Variable as its array, and the generated
code the dispatcher keeps per callee, checked against the registry's version."""

import importlib.util
import linecache
import sys

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf

_MODULE = """
import s2s_ad.tf as tf


def step(w, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum({expr})
    return tape.gradient(loss, [w])
"""


def test_a_file_edited_under_a_running_module_keeps_the_block_of_its_code(tmp_path):
    """The module's file is written again but the module is not imported again: the
    code that runs is still the first one, so is the block its gradient re-runs (the
    block was looked up by file contents before: the new source's loss, a wrong
    gradient for the loss the code computed)."""
    path = tmp_path / "running_step.py"
    x = np.array([0.5, -1.0, 2.0])
    w = tf.Variable(np.array([1.0, 2.0, -0.5]))
    path.write_text(_MODULE.format(expr="tf.square(w * x)"))
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location("running_step", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (g,) = module.step(w, x)
    np.testing.assert_allclose(g, 2.0 * w.numpy() * x * x, rtol=1e-12)
    path.write_text(_MODULE.format(expr="tf.sin(w * x)"))  # same lines, another loss
    linecache.checkcache(str(path))
    for _ in range(2):
        (g,) = module.step(w, x)  # the code of the first text runs
        np.testing.assert_allclose(g, 2.0 * w.numpy() * x * x, rtol=1e-12)
    sys.modules.pop("running_step", None)


class Scale(tf.Module):
    """A user's module whose call reads its Variable: objects of its class are taken
    at once on entry from the second step on, still as user code."""

    def __init__(self, value: float):
        super().__init__()
        self.s = tf.Variable(value, dtype=np.float64)

    def __call__(self, x):
        return self.s * x


def test_objects_of_a_class_seen_before_still_count_as_code_that_reads_variables():
    x = np.array([0.5, -1.0, 2.0])
    layers = [Scale(1.5), Scale(-0.5), Scale(2.0)]
    for layer in layers * 2:
        s0 = float(layer.s.numpy())
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(x)))
        (g,) = tape.gradient(loss, [layer.s])
        assert float(g) == pytest.approx(2.0 * s0 * np.sum(x * x), rel=1e-12)
        layer.s.assign(s0 * 0.9)


def test_a_name_bound_to_objects_of_other_classes_between_steps():
    """``params`` holds a module, then a list of Variables, then a module again: each
    step takes the branch of its own value's class."""
    x = np.array([0.5, -1.0, 2.0])
    w = tf.Variable(np.array([1.0, 2.0, -0.5]))
    module = Scale(0.5)

    def loss_of(params):
        if isinstance(params, list):
            return params[0] * x
        return params(x)

    for params, source, expected in [
        (module, module.s, lambda: 2.0 * 0.5 * np.sum(x * x)),
        ([w], w, lambda: 2.0 * w.numpy() * x * x),
        (module, module.s, lambda: 2.0 * 0.5 * np.sum(x * x)),
    ]:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(loss_of(params)))
        (g,) = tape.gradient(loss, [source])
        np.testing.assert_allclose(g, expected(), rtol=1e-12)


def _pair(g0, d0, x, y):
    def gen(g):
        return np.mean((g * x - y) ** 2)

    def disc(d, g):
        return np.mean((d * x + g - y) ** 2)

    return numerical_grad(gen, (g0,), (0,))[0], numerical_grad(disc, (d0, g0), (0, 1))


def test_the_second_tape_leaves_with_what_the_first_found_each_step():
    """Each step's values: the tape opened first takes the values the block left from
    the one that left before it, never a step's before."""
    rng = np.random.default_rng(11)
    g = tf.Variable(0.3, dtype=np.float64)
    d = tf.Variable(-0.6, dtype=np.float64)
    for step in range(4):
        x = rng.standard_normal(8)
        y = 2.0 * x + 0.5 * step
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            g_loss = tf.reduce_mean(tf.square(g * x - y))
            d_loss = tf.reduce_mean(tf.square(d * x + g - y))
        e_g, (e_d, e_dg) = _pair(float(g.numpy()), float(d.numpy()), x, y)
        (gg,) = gen_tape.gradient(g_loss, [g])
        dd, dg = disc_tape.gradient(d_loss, [d, g])
        assert float(gg) == pytest.approx(e_g, rel=1e-6)
        assert (float(dd), float(dg)) == pytest.approx((e_d, e_dg), rel=1e-6)
        g.assign(g.numpy() - 0.1 * float(gg))
        d.assign(d.numpy() - 0.1 * float(dd))


@pytest.mark.parametrize("first_resets", [True, False])
def test_a_reset_in_a_shared_block_forgets_for_that_tape_only(first_resets):
    """Both tapes read into one dict until one resets: the other still has the Variable
    read before the reset (TensorFlow: the reset tape gives ``None`` for it)."""
    a = tf.Variable(1.5, dtype=np.float64)
    b = tf.Variable(-2.0, dtype=np.float64)
    x = np.array([0.5, -1.0, 2.0])
    for _ in range(2):
        with tf.GradientTape(persistent=True) as one, tf.GradientTape(persistent=True) as two:
            u = tf.reduce_sum(a * x)
            (one if first_resets else two).reset()
            v = tf.reduce_sum(b * x) + u
        reset, kept = (one, two) if first_resets else (two, one)
        ga, gb = reset.gradient(v, [a, b])
        assert ga is None  # ``u`` is a constant for the tape that reset
        assert float(gb) == pytest.approx(np.sum(x), rel=1e-12)
        ga, gb = kept.gradient(v, [a, b])
        assert float(ga) == pytest.approx(np.sum(x), rel=1e-12)
        assert float(gb) == pytest.approx(np.sum(x), rel=1e-12)


def test_a_persistent_pair_entered_again_by_another_with():
    """Tapes of a shared ``with`` entered again, each alone: nothing of the pair's
    entry or reads is taken over."""
    w = tf.Variable(np.array([1.0, -0.5]))
    x = np.array([2.0, 3.0])
    with tf.GradientTape(persistent=True) as one, tf.GradientTape(persistent=True) as two:
        first = tf.reduce_sum(w * x)
    with one:
        second = tf.reduce_sum(tf.square(w * x))
    with two:
        third = tf.reduce_sum(w * w)
    np.testing.assert_allclose(one.gradient(second, w), 2.0 * w.numpy() * x * x)
    np.testing.assert_allclose(two.gradient(third, w), 2.0 * w.numpy())
    assert first.numpy() == pytest.approx(float(np.sum(w.numpy() * x)))


def test_a_keras_mlp_step_matches_autograd():
    """Dense layers pass their kernel Variables to the matmul helpers as arrays: the
    gradients of a two-layer model (relu, then linear) against autograd's of the same
    function, over steps with an optimizer."""
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((16, 5))
    ys = rng.standard_normal((16, 3))
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(7, activation="relu", input_shape=(5,)),
            tf.keras.layers.Dense(3),
        ]
    )
    weights = [rng.standard_normal(w.shape) * 0.5 for w in model.get_weights()]
    model.set_weights(weights)
    mse = tf.keras.losses.MeanSquaredError()
    opt = tf.keras.optimizers.SGD(learning_rate=0.05)

    def loss_of(w1, b1, w2, b2):
        h = anp.maximum(xs @ w1 + b1, 0.0)
        return anp.mean((h @ w2 + b2 - ys) ** 2)

    reference = autograd.grad(loss_of, (0, 1, 2, 3))
    for _ in range(3):
        params = [v.numpy().astype(np.float64) for v in model.trainable_variables]
        with tf.GradientTape() as tape:
            loss = mse(ys, model(xs, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        for got, want in zip(grads, reference(*params)):
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)
        opt.apply_gradients(zip(grads, model.trainable_variables))


def _soft_clip(v):
    return np.tanh(v)


def _identity(v):
    return v


class _Activation(tf.keras.layers.Layer):
    """A user's layer applying the callable it was built with (dispatched at run time)."""

    def __init__(self, act):
        super().__init__()
        self.act = act

    def call(self, x):
        return self.act(x)


def test_a_rule_registered_between_steps_replaces_the_kept_generated_code():
    """The dispatcher keeps the generated code a layer's activation resolved to at the
    first steps; a ``defgrad`` made after that must be used from the next step on, also
    when another rule was dropped in between (the registry's sizes are then the same as
    when the code was kept: the check by sizes used the stale code, a wrong gradient)."""
    from s2s_ad import defgrad
    from s2s_ad.rules.registry import REGISTRY

    model = tf.keras.Sequential([tf.keras.layers.Dense(3), _Activation(_soft_clip)])
    x = np.linspace(-1.0, 1.0, 8).reshape(4, 2)
    model(x)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        return tape.gradient(loss, model.trainable_variables)

    defgrad(_identity, lambda g, v: g)
    try:
        kernel, bias = model.trainable_variables
        for _ in range(3):
            g_kernel, g_bias = step()
            h = np.asarray(x) @ kernel.numpy() + bias.numpy()
            slope = 1.0 - np.tanh(h) ** 2
            np.testing.assert_allclose(g_bias, slope.sum(0), rtol=1e-5)
        REGISTRY.drop_custom(_identity)
        defgrad(_soft_clip, lambda g, v: 5.0 * g)
        g_kernel, g_bias = step()
        np.testing.assert_allclose(g_bias, np.full(3, 20.0), rtol=1e-6)
        np.testing.assert_allclose(g_kernel, 5.0 * np.outer(x.sum(0), np.ones(3)), rtol=1e-5)
    finally:
        REGISTRY.drop_custom(_identity)
        REGISTRY.drop_custom(_soft_clip)


def test_every_change_of_the_registry_moves_its_version():
    """Each way of changing the rules goes through one method that moves the version the
    dispatcher's kept code is checked against."""
    from s2s_ad.rules.registry import REGISTRY

    def user_fn(v):
        return v

    seen = [REGISTRY.version]
    REGISTRY.set_custom(user_fn, lambda g, v: g)
    seen.append(REGISTRY.version)
    REGISTRY.drop_custom(user_fn)
    seen.append(REGISTRY.version)
    REGISTRY.set_custom(user_fn, lambda t, v: t, jvp=True)
    seen.append(REGISTRY.version)
    REGISTRY.drop_custom(user_fn, jvp=True)
    assert seen == sorted(set(seen)), seen
