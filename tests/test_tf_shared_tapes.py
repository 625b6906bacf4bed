"""Two tapes of one ``with`` (a GAN step's ``gen_tape`` and ``disc_tape``) share one
entry and one recording of the block's draws: each gradient uses the draws the block
made, once, and state changed in the block changes once."""

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad import replay


class Critic(tf.Module):
    """A critic that drops half its inputs at random in each call."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.linspace(0.5, 1.5, 6))
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        mask = np.where(np.random.random(x.shape) > 0.5, 1.0, 0.0)
        return tf.reduce_sum(x * self.w * mask), mask


def test_a_pair_of_tapes_differentiates_the_masks_the_block_drew():
    critic = Critic()
    g = tf.Variable(np.array([0.3, -0.2, 0.7, 1.1, -0.4, 0.9]))
    x = np.arange(6.0)
    np.random.seed(3)
    for _ in range(3):
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            fake = g * x
            score, mask = critic(fake)
            gen_loss = -score
            disc_loss = score + tf.reduce_sum(critic.w**2)
        (dg,) = gen_tape.gradient(gen_loss, [g])
        (dw,) = disc_tape.gradient(disc_loss, [critic.w])
        w = critic.w.numpy()
        assert np.allclose(dg, -x * w * mask)
        assert np.allclose(dw, np.asarray(fake) * mask + 2.0 * w)
    assert critic.calls == 3  # each call ran once, in the block
    assert not replay.RECORDING  # the shared recording was stopped


def _keras_pair(seed):
    tf.keras.utils.set_random_seed(seed)
    gen = tf.keras.Sequential(
        [tf.keras.layers.Dense(4, activation="tanh", input_shape=(3,)), tf.keras.layers.Dense(2)]
    )
    disc = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(5, activation="relu", input_shape=(2,)),
            tf.keras.layers.Dropout(0.4),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(1),
        ]
    )
    return gen, disc


def test_a_keras_gan_step_of_two_tapes_matches_one_persistent_tape():
    """The same step through one persistent tape (no sharing) gives the same gradients;
    the critic's dropout masks and moving statistics change once per step either way."""
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((8, 3)).astype(np.float32)
    real = rng.standard_normal((8, 2)).astype(np.float32)
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    results = []
    for shared in (True, False):
        gen, disc = _keras_pair(11)
        np.random.seed(7)
        steps = []
        for _ in range(3):
            if shared:
                with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
                    fake = gen(noise, training=True)
                    fake_out = disc(fake, training=True)
                    real_out = disc(real, training=True)
                    g_loss = bce(tf.ones_like(fake_out), fake_out)
                    d_loss = bce(tf.ones_like(real_out), real_out) + bce(
                        tf.zeros_like(fake_out), fake_out
                    )
                g_grads = gen_tape.gradient(g_loss, gen.trainable_variables)
                d_grads = disc_tape.gradient(d_loss, disc.trainable_variables)
            else:
                with tf.GradientTape(persistent=True) as tape:
                    fake = gen(noise, training=True)
                    fake_out = disc(fake, training=True)
                    real_out = disc(real, training=True)
                    g_loss = bce(tf.ones_like(fake_out), fake_out)
                    d_loss = bce(tf.ones_like(real_out), real_out) + bce(
                        tf.zeros_like(fake_out), fake_out
                    )
                g_grads = tape.gradient(g_loss, gen.trainable_variables)
                d_grads = tape.gradient(d_loss, disc.trainable_variables)
            for v, dv in zip(gen.trainable_variables, g_grads):
                v.assign_sub(0.1 * np.asarray(dv))
            for v, dv in zip(disc.trainable_variables, d_grads):
                v.assign_sub(0.1 * np.asarray(dv))
            steps.append([np.asarray(t) for t in (*g_grads, *d_grads)])
        moving = [np.asarray(v) for v in disc.non_trainable_variables]
        results.append((steps, moving))
    (shared_steps, shared_moving), (single_steps, single_moving) = results
    for a, b in zip(shared_steps, single_steps):
        for ga, gb in zip(a, b):
            assert np.allclose(ga, gb, rtol=1e-5, atol=1e-7)
    for ma, mb in zip(shared_moving, single_moving):
        assert np.allclose(ma, mb)
    assert not np.allclose(shared_moving[0], 0.0)  # the moving mean moved


@pytest.mark.parametrize("flags", [(True, False), (False, True)])
def test_a_shared_pair_watches_by_each_tapes_flag_with_draws(flags):
    w = tf.Variable(np.array([1.0, -2.0, 0.5]))
    x = np.array([0.5, 1.5, -1.0])
    np.random.seed(1)
    with (
        tf.GradientTape(watch_accessed_variables=flags[0]) as a,
        tf.GradientTape(watch_accessed_variables=flags[1]) as b,
    ):
        noise = np.random.normal(size=3)
        loss = tf.reduce_sum(w * x + noise * w**2)
    expected = x + 2.0 * noise * np.asarray(w)
    for tape, watches in zip((a, b), flags):
        got = tape.gradient(loss, w)
        if watches:
            assert np.allclose(got, expected)
        else:
            assert got is None
