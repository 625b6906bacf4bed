"""An outer tape over an inner tape's input gradient through Keras models (a WGAN-GP
gradient penalty): ``Sequential``, functional and subclassed critics with several
layers and activations, ``BatchNormalization`` and ``Dropout`` in the inner block.

The ``_TF`` literals were recorded from a run of the same programs with TensorFlow 2.21
and tf_keras (``TF_USE_LEGACY_KERAS=1``), with the same weights (set explicitly); the
other checks are finite differences of the first-order penalty and autograd.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from fd import numerical_grad
from tf_weights import sin_weights

import s2s_ad.tf as tf
from s2s_ad.errors import TransformError
from s2s_ad.tf import keras


class _Critic(keras.Model):
    def __init__(self, dtype=None):
        super().__init__()
        self.d1 = keras.layers.Dense(4, activation="tanh", dtype=dtype)
        self.d2 = keras.layers.Dense(3, dtype=dtype)
        self.d3 = keras.layers.Dense(1, dtype=dtype)

    def call(self, x):
        return self.d3(tf.nn.elu(self.d2(self.d1(x))))


def _critic(kind, dtype=None):
    dense = keras.layers.Dense
    if kind == "sequential":
        model = keras.Sequential(
            [
                dense(4, activation="tanh", dtype=dtype),
                dense(3, activation="softplus", dtype=dtype),
                dense(1, dtype=dtype),
            ]
        )
    elif kind == "functional":
        inputs = keras.Input(shape=(3,), dtype=dtype or "float32")
        h = dense(4, activation="tanh", dtype=dtype)(inputs)
        h = dense(3, activation="sigmoid", dtype=dtype)(h)
        model = keras.Model(inputs, dense(1, dtype=dtype)(h))
    elif kind == "subclassed":
        model = _Critic(dtype)
    else:
        model = keras.Sequential(
            [
                dense(4, activation="tanh", dtype=dtype),
                keras.layers.BatchNormalization(dtype=dtype),
                dense(3, activation="tanh", dtype=dtype),
                dense(1, dtype=dtype),
            ]
        )
    model(np.zeros((1, 3), dtype or np.float32))
    model.set_weights(
        [sin_weights(w.shape, k).astype(w.dtype) for k, w in enumerate(model.get_weights())]
    )
    return model


def _penalty_step(model, x):
    """The gradient penalty of a critic at ``x`` and its gradient for the critic's
    trainable Variables (an outer tape over the inner tape's input gradient)."""
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            score = model(x, training=True)
        g = inner.gradient(score, x)
        penalty = tf.reduce_mean((tf.norm(g, axis=1) - 1.0) ** 2)
    return float(penalty), outer.gradient(penalty, model.trainable_variables)


def _penalty(model, x):
    """The penalty alone (first order only: for finite differences)."""
    with tf.GradientTape() as inner:
        inner.watch(x)
        score = model(x, training=True)
    g = inner.gradient(score, x)
    return float(np.mean((np.sqrt(np.sum(np.asarray(g) ** 2, axis=1)) - 1.0) ** 2))


# TensorFlow's penalty and gradients (flattened), per critic; None: TensorFlow's None
# for the last bias, which the penalty does not depend on
_TF = {
    "sequential": (
        0.24442286789417267,
        [
            [0.0894635, 0.0089793, -0.0672404, 0.0809498, 0.131663, 0.0362559]
            + [-0.0694178, 0.1254832, 0.0871056, 0.0386776, -0.1346088, 0.0916517],
            [0.0783515, -0.0287981, -0.0511852, -0.0204146],
            [-0.2003225, -0.1326489, 0.0574457, 0.0616573, 0.0535652, -0.0567163]
            + [0.2352335, 0.1696695, -0.0957246, 0.0310636, 0.007758, 0.0301137],
            [-0.1181443, -0.0234253, -0.061488],
            [0.4389154, 0.0625565, -0.328178],
            None,
        ],
    ),
    "functional": (
        0.5516877770423889,
        [
            [0.0244395, 0.0187895, -0.0146812, 0.0207622, 0.1021809, 0.0379077]
            + [-0.0865846, 0.0889119, 0.1194313, 0.0308348, -0.1795575, 0.1136341],
            [0.100169, -0.0209996, -0.0720275, 0.0380058],
            [-0.1328774, -0.1419344, 0.0722699, 0.0398713, 0.0601678, -0.0231784]
            + [0.1599262, 0.1814893, -0.0890319, 0.0103916, -0.0033766, -0.0040367],
            [0.0113846, -0.0090555, -0.0157242],
            [0.3512931, 0.0747565, -0.308089],
            None,
        ],
    ),
    "subclassed": (
        0.11361813545227051,
        [
            [0.0169266, 0.0009657, -0.0650589, 0.0172827, -0.0295621, 0.0544634]
            + [0.0439056, 0.0225421, -0.0269106, 0.0562553, 0.0579202, 0.0207838],
            [0.0417052, -0.0237119, -0.146922, 0.0132358],
            [-0.0041821, -0.0105577, -0.0185842, 0.0459166, 0.0435835, -0.02335]
            + [0.0311697, 0.0352539, 0.0122718, -0.0074392, -0.001456, 0.0144493],
            [0.0162066, 0.0093342, -0.0150564],
            [0.0405838, -0.0104162, -0.0092562],
            None,
        ],
    ),
}


def _assert_unconnected(got):
    """TensorFlow gives None; the tape gives None or zeros (the second-order code
    computes a zero for a bias the input gradient does not depend on)."""
    assert got is None or not np.any(np.asarray(got))


@pytest.mark.parametrize("kind", sorted(_TF))
def test_gradient_penalty_through_keras_critics_gives_tensorflows_numbers(kind):
    model = _critic(kind)
    x = tf.constant(sin_weights((5, 3), 7.0))
    penalty, grads = _penalty_step(model, x)
    want_penalty, want = _TF[kind]
    assert penalty == pytest.approx(want_penalty, rel=1e-5)
    assert len(grads) == len(want) == len(model.trainable_variables)
    for got, expected in zip(grads, want):
        if expected is None:
            _assert_unconnected(got)
        else:
            np.testing.assert_allclose(np.ravel(got), expected, rtol=2e-4, atol=2e-6)


@pytest.mark.parametrize("kind", ["sequential", "subclassed", "batchnorm"])
def test_gradient_penalty_agrees_with_finite_differences(kind):
    model = _critic(kind, dtype="float64")
    x = sin_weights((5, 3), 7.0).astype(np.float64)
    before = [v.numpy().copy() for v in model.non_trainable_variables]
    _, grads = _penalty_step(model, x)
    for variable, got in zip(model.trainable_variables, grads):
        start = variable.numpy().copy()
        moving = [v.numpy().copy() for v in model.non_trainable_variables]

        def penalty_at(value, variable=variable, moving=moving):
            variable.assign(value)
            out = _penalty(model, x)
            for v, m in zip(model.non_trainable_variables, moving):
                v.assign(m)  # a training call updates the moving statistics
            return out

        want = numerical_grad(penalty_at, [start])
        variable.assign(start)
        if got is None:
            np.testing.assert_allclose(want, 0.0, atol=1e-7)
        else:
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-8)
    if kind == "batchnorm":  # the step's one training call moved the statistics once
        assert not np.allclose(before[0], model.non_trainable_variables[0].numpy())


def test_batch_norm_in_the_inner_block_updates_the_moving_statistics_once():
    model = _critic("batchnorm")
    x = tf.constant(sin_weights((5, 3), 7.0))
    penalty, grads = _penalty_step(model, x)
    assert penalty == pytest.approx(0.7964297533035278, rel=1e-5)
    # TensorFlow's values, for the Variables after the batch normalization
    tf_after = [
        [0.2169249, 0.2007729, 0.6465481, -0.1457746],
        [-0.2112442, -0.251252, 0.4959693, -0.3107929],
        [-0.3747924, -0.0056017125, 0.10699428, -0.21099938, -0.00071007537, 0.2038635]
        + [-0.52044922, -0.012628687, 0.40279058, 0.14443648, 0.0004705445, -0.1660137],
        [0.3772326, 0.0040283, -0.256468],
        [-0.0888004, -0.0762506, 0.1463297],
    ]
    for got, want in zip(grads[2:7], tf_after):
        np.testing.assert_allclose(np.ravel(got), want, rtol=2e-4, atol=2e-6)
    _assert_unconnected(grads[7])
    # TensorFlow's moving statistics after the step: updated once (momentum 0.99)
    mean, variance = (v.numpy() for v in model.non_trainable_variables)
    np.testing.assert_allclose(mean, [-0.595426, -0.6232847, 0.3470198, 0.7618039], rtol=1e-5)
    np.testing.assert_allclose(variance, [-0.7586932, 0.0713086, 0.7881789, 0.2475475], rtol=1e-5)
    # the first layer's gradient differs from TensorFlow's: its batch variance stops
    # the gradient of the batch mean (tf.nn.moments), which changes second derivatives;
    # the tape differentiates the normalization itself (see the finite differences above)
    first_tf = [0.0762971, -0.0030196, -0.0206377, -0.0001156]
    assert not np.allclose(np.asarray(grads[1]), first_tf, rtol=1e-2)


def _dropout_critic(rate):
    model = keras.Sequential(
        [
            keras.layers.Dense(4, activation="tanh"),
            keras.layers.Dropout(rate),
            keras.layers.Dense(3, activation="tanh"),
            keras.layers.Dropout(rate),
            keras.layers.Dense(1),
        ]
    )
    model(np.zeros((1, 3), np.float32))
    model.set_weights([sin_weights(w.shape, k) for k, w in enumerate(model.get_weights())])
    return model


def _masked_penalty(k1, b1, k2, b2, k3, b3, x, m1, m2):
    """The penalty of the dropout critic with the masks given, by autograd."""

    def score(xs):
        h = anp.tanh(xs @ k1 + b1) * m1
        h = anp.tanh(h @ k2 + b2) * m2
        return anp.sum(h @ k3 + b3)

    g = autograd.grad(score)(x)
    return anp.mean((anp.sqrt(anp.sum(g**2, axis=1)) - 1.0) ** 2)


def test_dropout_in_the_inner_block_uses_the_masks_of_the_forward_pass():
    rate = 0.4
    model = _dropout_critic(rate)
    x = tf.constant(sin_weights((6, 3), 7.0))
    tf.random.set_seed(7)
    penalty, grads = _penalty_step(model, x)
    # the two masks the block drew (the dropout layers draw in order, from the seed)
    draws = np.random.default_rng(7)
    m1 = np.where(draws.uniform(0.0, 1.0, size=(6, 4)) >= rate, 1.0 / (1.0 - rate), 0.0)
    m2 = np.where(draws.uniform(0.0, 1.0, size=(6, 3)) >= rate, 1.0 / (1.0 - rate), 0.0)
    weights = [v.numpy().astype(np.float64) for v in model.trainable_variables]
    args = [*weights, np.asarray(x, np.float64), m1, m2]
    assert penalty == pytest.approx(float(_masked_penalty(*args)), rel=1e-5)
    for k, got in enumerate(grads[:-1]):
        want = autograd.grad(_masked_penalty, k)(*args)
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-6)
    _assert_unconnected(grads[-1])  # the last bias


def test_a_dropout_layer_called_twice_in_the_inner_block_is_refused():
    drop = keras.layers.Dropout(0.5)
    dense = keras.layers.Dense(3, activation="tanh")
    dense(np.zeros((1, 3), np.float32))
    x = tf.constant(sin_weights((4, 3), 1.0))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            score = tf.reduce_sum(drop(dense(drop(x, training=True)), training=True))
        g = inner.gradient(score, x)
        penalty = tf.reduce_sum(g**2)
    with pytest.raises(TransformError, match="drew tf.random.uniform 2 times"):
        outer.gradient(penalty, dense.trainable_variables)


def _critic_loss(k1, b1, k2, b2, fake, real, xhat, masks):
    """A WGAN-GP critic loss with the dropout masks given (one per call), by autograd."""

    def critic(x, mask):
        return anp.tanh(x @ k1 + b1) * mask @ k2 + b2

    g = autograd.grad(lambda xs: anp.sum(critic(xs, masks[2])))(xhat)
    gp = anp.mean((anp.sqrt(anp.sum(g**2, axis=1)) - 1.0) ** 2)
    return anp.mean(critic(fake, masks[0])) - anp.mean(critic(real, masks[1])) + 10.0 * gp


def test_a_dropout_critic_called_in_the_block_and_in_the_inner_block():
    """The critic scores fakes and reals in the outer block and the interpolates in the
    inner one: each call has its own mask, the penalty's derivative uses the inner one."""
    rate = 0.3
    critic = keras.Sequential(
        [
            keras.layers.Dense(6, activation="tanh"),
            keras.layers.Dropout(rate),
            keras.layers.Dense(1),
        ]
    )
    critic(np.zeros((1, 3), np.float32))
    critic.set_weights(
        [sin_weights(w.shape, k).astype(np.float64) for k, w in enumerate(critic.get_weights())]
    )
    fake, real = sin_weights((5, 3), 2.0), sin_weights((5, 3), 3.0)
    eps = (sin_weights((5, 1), 4.0) + 1.0) / 2.0
    tf.random.set_seed(5)
    with tf.GradientTape() as tape:
        fake_logits = critic(fake, training=True)
        real_logits = critic(real, training=True)
        xhat = eps * real + (1.0 - eps) * fake
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(xhat)
            pred = critic(xhat, training=True)
        grads = gp_tape.gradient(pred, [xhat])[0]
        gp = tf.reduce_mean((tf.norm(grads, axis=1) - 1.0) ** 2)
        loss = tf.reduce_mean(fake_logits) - tf.reduce_mean(real_logits) + 10.0 * gp
    got = tape.gradient(loss, critic.trainable_variables)
    draws = np.random.default_rng(5)  # the three masks, in the order of the calls
    masks = [
        np.where(draws.uniform(0.0, 1.0, size=(5, 6)) >= rate, 1.0 / (1.0 - rate), 0.0)
        for _ in range(3)
    ]
    weights = [v.numpy().astype(np.float64) for v in critic.trainable_variables]
    args = [*weights, *(np.asarray(a, np.float64) for a in (fake, real, xhat)), masks]
    assert float(loss) == pytest.approx(float(_critic_loss(*args)), rel=1e-5)
    for k, g in enumerate(got):
        want = autograd.grad(_critic_loss, k)(*args)
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-4, atol=2e-6)
