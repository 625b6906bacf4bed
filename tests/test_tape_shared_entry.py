"""Tapes opened by one ``with`` (``with tf.GradientTape() as gen_tape,
tf.GradientTape() as disc_tape:``) read the block's values once: the second tape takes
what the first found on entry (``Block.shares_entry``). Each tape still watches what
its own flags say, every step sees that step's values, and a ``with`` whose items run
code of the user's between the entries, or whose block reads a tape's name, reads
them per tape."""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.tape_block import _BLOCKS


def _gan_grads(g0, d0, x, y):
    def gen(g):
        return np.mean((g * x - y) ** 2)

    def disc(d, g):
        return np.mean((d * x + g - y) ** 2)

    return numerical_grad(gen, (g0,), (0,))[0], numerical_grad(disc, (d0, g0), (0, 1))


def _block_of(line_text: str):
    return next(b for b in _BLOCKS.values() if line_text in b.source(b.node))


def test_two_tapes_of_one_with_train_a_gan_like_pair_step_by_step():
    rng = np.random.default_rng(5)
    g = tf.Variable(0.3, dtype=np.float64)
    d = tf.Variable(-0.6, dtype=np.float64)
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    for _ in range(4):
        x = rng.standard_normal(16)
        y = 2.0 * x + 0.5
        g0, d0 = float(g.numpy()), float(d.numpy())
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            g_loss = tf.reduce_mean(tf.square(g * x - y))
            d_loss = tf.reduce_mean(tf.square(d * x + g - y))
        (gg,) = gen_tape.gradient(g_loss, [g])
        dd, dg = disc_tape.gradient(d_loss, [d, g])
        e_g, (e_d, e_dg) = _gan_grads(g0, d0, x, y)
        assert float(gg) == pytest.approx(e_g, rel=1e-6)
        assert float(dd) == pytest.approx(e_d, rel=1e-6)
        assert float(dg) == pytest.approx(e_dg, rel=1e-6)
        opt.apply_gradients([(gg, g), (dd, d)])
    assert _block_of("gen_tape, tf.GradientTape() as disc_tape").shares_entry


def test_each_tape_of_a_shared_entry_watches_by_its_own_flag():
    """The second tape watches nothing by itself: the Variable the first watched is not
    its source (``None``), while its constant, watched by name, is."""
    w = tf.Variable(1.5, dtype=np.float64)
    x = tf.constant(np.array([0.5, -1.0, 2.0]))
    for _ in range(2):
        with (
            tf.GradientTape(persistent=True) as both,
            tf.GradientTape(watch_accessed_variables=False) as none,
        ):
            loss = tf.reduce_sum(w * x * x)
        assert float(both.gradient(loss, w)) == pytest.approx(float(np.sum(x * x)))
        assert none.gradient(loss, [w]) == [None]
        assert none.watched_variables() == ()
        assert both.watched_variables() == (w,)
    assert _block_of("as none").shares_entry


def test_a_with_that_runs_user_code_between_its_tapes_reads_per_tape():
    """The second item assigns the Variable before its tape enters: that tape's block
    starts from the new value, and the first tape sees the assignment too."""
    w = tf.Variable(2.0, dtype=np.float64)
    x = np.array([1.0, 3.0])

    def tape_after_assign(value):
        w.assign(value)
        return tf.GradientTape()

    with tf.GradientTape() as first, tape_after_assign(-1.0) as second:
        loss = tf.reduce_sum(tf.square(w * x))
    expected = float(np.sum(2.0 * (-1.0) * x * x))
    assert float(second.gradient(loss, w)) == pytest.approx(expected)
    assert float(first.gradient(loss, w)) == pytest.approx(expected)
    assert not _block_of("tape_after_assign(-1.0) as second").shares_entry


def test_a_block_that_reads_a_tape_name_does_not_share():
    x = tf.constant(np.array([0.2, 0.4]))
    with tf.GradientTape() as outer, tf.GradientTape() as inner:
        inner.watch(x)
        outer.watch(x)
        y = tf.reduce_sum(tf.exp(x))
    assert np.allclose(inner.gradient(y, x), np.exp([0.2, 0.4]))
    assert np.allclose(outer.gradient(y, x), np.exp([0.2, 0.4]))
    assert not _block_of("as outer, tf.GradientTape() as inner").shares_entry
