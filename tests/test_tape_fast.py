"""The common request (``tape.gradient(loss, [w, b])`` at every step of a training loop)
is answered by a short path after the first step (``s2s_ad/tape_fast.py``); whatever
changes between steps that the first answer depended on gives the gradient of what ran,
or the error the first step would have given: another Variable under a name, a
Variable not read on the branch taken, sources in another order, a Variable changed
between the block and the gradient, a block whose source was edited."""

import importlib.util
import linecache
import sys

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad import tape_fast


def _linear_grads(w0, b0, x, y):
    def loss(w, b):
        return np.mean((w * x + b - y) ** 2)

    return numerical_grad(loss, (w0, b0), (0, 1))


def test_a_training_loop_takes_the_short_path_and_matches_finite_differences():
    rng = np.random.default_rng(11)
    w, b = tf.Variable(0.3, dtype=np.float64), tf.Variable(-0.4, dtype=np.float64)
    opt = tf.keras.optimizers.SGD(learning_rate=0.05)
    for step in range(5):
        x = rng.standard_normal(24)
        y = 1.5 * x + 0.5
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * x + b - y))
        if step:  # remembered by the first step
            assert tape._block is not None and id(tape._block) in tape_fast._REQUESTS
        grads = tape.gradient(loss, [w, b])
        expected = _linear_grads(float(w.numpy()), float(b.numpy()), x, y)
        assert [float(g) for g in grads] == pytest.approx(expected, rel=1e-6)
        assert all(g.dtype == np.float64 for g in grads)
        opt.apply_gradients(zip(grads, [w, b]))


def test_a_stale_variable_in_the_sources_list_gets_none():
    """``params`` keeps the first ``w``; the block reads the new one bound to ``w``."""
    x = np.linspace(-1.0, 1.0, 6)
    y = 2.0 * x
    w, b = tf.Variable(0.5, dtype=np.float64), tf.Variable(0.1, dtype=np.float64)
    params = [w, b]
    for step in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * x + b - y))
        gw, gb = tape.gradient(loss, params)
        ew, eb = _linear_grads(float(w.numpy()), float(b.numpy()), x, y)
        assert float(gb) == pytest.approx(eb, rel=1e-6)
        if step < 2:
            assert float(gw) == pytest.approx(ew, rel=1e-6)
        else:
            assert gw is None  # params[0] is not the w the block read
        if step == 1:
            w = tf.Variable(-1.0, dtype=np.float64)


def test_a_variable_read_only_on_the_branch_taken_the_first_time():
    x = np.array([0.5, -1.5, 2.0])
    w = tf.Variable(np.array([0.2, 0.4, -0.3]))
    b = tf.Variable(0.7, dtype=np.float64)
    for use_bias in (True, True, False, True):
        with tf.GradientTape() as tape:
            if use_bias:
                loss = tf.reduce_sum((w * x + b) ** 2)
            else:
                loss = tf.reduce_sum((w * x) ** 2)
        gw, gb = tape.gradient(loss, [w, b])
        resid = w.numpy() * x + (b.numpy() if use_bias else 0.0)
        np.testing.assert_allclose(gw, 2.0 * resid * x, rtol=1e-12)
        if use_bias:
            assert float(gb) == pytest.approx(2.0 * resid.sum(), rel=1e-12)
        else:
            assert gb is None


def test_sources_in_another_order_and_a_tuple():
    x = np.array([1.0, 2.0, -1.0])
    w = tf.Variable(np.array([0.1, -0.2, 0.3]))
    b = tf.Variable(0.5, dtype=np.float64)
    for sources in ([w, b], [w, b], [b, w], (w, b), [w]):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(w * x) + b * b)
        got = tape.gradient(loss, sources)
        assert type(got) is type(sources)
        expected = {
            id(w): (1.0 - np.tanh(w.numpy() * x) ** 2) * x,
            id(b): 2.0 * b.numpy() * x.size,  # b * b is added to each entry
        }
        for g, source in zip(got, sources):
            np.testing.assert_allclose(g, expected[id(source)], rtol=1e-12)


def test_unwatched_and_integer_variables_after_a_remembered_step():
    x = np.array([1.0, -2.0])
    w = tf.Variable(np.array([0.5, 0.25]))
    b = tf.Variable(1.5, dtype=np.float64)
    for watch_all in (True, True, False):
        with tf.GradientTape(watch_accessed_variables=watch_all) as tape:
            if not watch_all:
                tape.watch(w)
            loss = tf.reduce_sum(w * x * b)
        gw, gb = tape.gradient(loss, [w, b])
        np.testing.assert_allclose(gw, x * b.numpy(), rtol=1e-12)
        if watch_all:
            assert float(gb) == pytest.approx(float(np.sum(w.numpy() * x)), rel=1e-12)
        else:
            assert gb is None  # not watched


def test_a_variable_changed_between_the_block_and_the_gradient_every_time():
    x = np.linspace(0.0, 1.0, 5)
    w, b = tf.Variable(0.5, dtype=np.float64), tf.Variable(0.0, dtype=np.float64)
    for _ in range(2):  # a clean step, remembered
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w * x + b))
        tape.gradient(loss, [w, b])
    for _ in range(2):
        read = float(w.numpy())
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w * x + b))
        w.assign_sub(0.1)  # after the block, before the gradient
        gw, gb = tape.gradient(loss, [w, b])  # at the value the block read
        np.testing.assert_allclose(float(gw), np.sum(2.0 * (read * x) * x))
        np.testing.assert_allclose(float(gb), np.sum(2.0 * read * x))


_MODULE = """
import s2s_ad.tf as tf


def step(w, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum({expr})
    return tape.gradient(loss, [w])
"""


def test_a_block_edited_between_steps(tmp_path):
    """The module is written again with another loss and imported again (as an editor
    and a notebook's reload would): the gradient is the new loss's."""
    path = tmp_path / "edited_step.py"
    x = np.array([0.5, -1.0, 2.0])
    w = tf.Variable(np.array([1.0, 2.0, -0.5]))

    def load(expr):
        path.write_text(_MODULE.format(expr=expr))
        linecache.checkcache(str(path))
        spec = importlib.util.spec_from_file_location("edited_step", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules.pop("edited_step", None)
        spec.loader.exec_module(module)
        return module

    first = load("tf.square(w * x)")
    for _ in range(2):
        (g,) = first.step(w, x)
        np.testing.assert_allclose(g, 2.0 * w.numpy() * x * x, rtol=1e-12)
    second = load("tf.sin(w * x)  ")  # the same line count, another loss
    for _ in range(2):
        (g,) = second.step(w, x)
        np.testing.assert_allclose(g, np.cos(w.numpy() * x) * x, rtol=1e-12)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each request of the test took the short path (appended per request)."""
    taken: list[bool] = []
    original = tape_fast.fast_gradient

    def spy(*args: object) -> object:
        got = original(*args)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(tape_fast, "fast_gradient", spy)
    return taken


def _gan_losses(g0, d0, x, y):
    """A toy generator loss (of g) and discriminator loss (of d and g), in NumPy."""

    def gen(g):
        return np.mean((g * x - y) ** 2)

    def disc(d, g):
        return np.mean((d * x + g - y) ** 2)

    return numerical_grad(gen, (g0,), (0,)), numerical_grad(disc, (d0, g0), (0, 1))


def test_two_tapes_of_one_block_alternate_their_targets(monkeypatch):
    """A GAN-like step: two tapes opened by one ``with``, each asked for its own target;
    both requests are remembered for the block and answered with their own plans."""
    short = _spy(monkeypatch)
    x = np.linspace(-1.0, 1.0, 8)
    y = 0.5 * x + 0.25
    g, d = tf.Variable(0.3, dtype=np.float64), tf.Variable(-0.6, dtype=np.float64)
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    for _ in range(4):
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            gen_loss = tf.reduce_mean(tf.square(g * x - y))
            disc_loss = tf.reduce_mean(tf.square(d * x + g - y))
        (gg,) = gen_tape.gradient(gen_loss, [g])
        dd, dg = disc_tape.gradient(disc_loss, [d, g])
        (eg,), (ed, edg) = _gan_losses(float(g.numpy()), float(d.numpy()), x, y)
        assert float(gg) == pytest.approx(eg, rel=1e-6)
        assert [float(dd), float(dg)] == pytest.approx([ed, edg], rel=1e-6)
        opt.apply_gradients([(gg, g), (dd, d)])
    assert short == [False, False] + [True, True] * 3


def test_a_persistent_tape_asked_for_two_targets_and_two_source_lists(monkeypatch):
    """One target with respect to ``[g]``, then ``[d]``, then the other target: the
    requests differ by their sources or their target, each answered as its own."""
    short = _spy(monkeypatch)
    x = np.linspace(-1.0, 1.0, 8)
    y = 0.5 * x + 0.25
    g, d = tf.Variable(0.3, dtype=np.float64), tf.Variable(-0.6, dtype=np.float64)
    for _ in range(3):
        with tf.GradientTape(persistent=True) as tape:
            gen_loss = tf.reduce_mean(tf.square(g * x - y))
            disc_loss = tf.reduce_mean(tf.square(d * x + g - y))
        (eg,), (ed, edg) = _gan_losses(float(g.numpy()), float(d.numpy()), x, y)
        (dd,) = tape.gradient(disc_loss, [d])
        (dg,) = tape.gradient(disc_loss, [g])
        (gg,) = tape.gradient(gen_loss, [g])
        del tape
        assert [float(dd), float(dg), float(gg)] == pytest.approx([ed, edg, eg], rel=1e-6)
    assert short == [False] * 3 + [True] * 6


def test_more_requests_than_a_block_keeps(monkeypatch):
    """Past ``PER_BLOCK`` requests of one block, the oldest is forgotten: it takes the
    general way again, with the same numbers."""
    short = _spy(monkeypatch)
    monkeypatch.setattr(tape_fast, "PER_BLOCK", 2)
    x = np.array([0.5, -1.0, 2.0])
    w = tf.Variable(np.array([0.2, -0.3, 0.4]))
    for _ in range(2):
        with tf.GradientTape(persistent=True) as tape:
            a = tf.reduce_sum(tf.square(w * x))
            b = tf.reduce_sum(tf.sin(w * x))
            c = tf.reduce_sum(w * w * x)
        got = [tape.gradient(t, [w])[0] for t in (a, b, c)]
        del tape
        v = w.numpy()
        for g, e in zip(got, (2.0 * v * x * x, np.cos(v * x) * x, 2.0 * v * x)):
            np.testing.assert_allclose(g, e, rtol=1e-12)
    # three targets, two kept: each request pushes out the one asked two before it
    assert short == [False] * 6


def test_an_outer_tape_differentiates_an_inner_gradient_answered_by_the_short_path():
    """A gradient penalty: the inner tape's request is the remembered one from the second
    step on, and the outer tape, whose block is running, differentiates that call (the
    short path keeps the plan for it, as the general way does)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(10)
    y = 0.7 * x - 0.2
    w, b = tf.Variable(0.4, dtype=np.float64), tf.Variable(0.3, dtype=np.float64)

    def penalty(w0, b0):
        # the gradient of the mean squared error, by hand, and the penalty on it
        r = w0 * x + b0 - y
        gw, gb = np.mean(2.0 * r * x), np.mean(2.0 * r)
        return gw * gw + gb * gb

    for step in range(3):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = tf.reduce_mean(tf.square(w * x + b - y))
            if step:
                assert id(inner._block) in tape_fast._REQUESTS
            gw, gb = inner.gradient(loss, [w, b])
            pen = gw * gw + gb * gb
        grads = outer.gradient(pen, [w, b])
        expected = numerical_grad(penalty, (float(w.numpy()), float(b.numpy())), (0, 1))
        assert [float(g) for g in grads] == pytest.approx(expected, rel=1e-5)
        w.assign_sub(0.1 * grads[0])
