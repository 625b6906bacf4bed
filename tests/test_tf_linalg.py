"""``tf.linalg.svd`` differentiated through its singular vectors ``u`` and ``v`` (not only
the values), checked against finite differences and autograd."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf

_RNG = np.random.default_rng(7)
_TALL = _RNG.standard_normal((5, 3))
_WIDE = _RNG.standard_normal((3, 4))


def _weights(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def _tf_loss(a, k, w_proj, w_u, w_v, w_s):
    """A loss that does not change when a pair (u[:, i], v[:, i]) flips sign: a rank-k
    projection, squared vector entries and the singular values."""
    s, u, v = tf.linalg.svd(a)
    proj = u[:, :k] @ tf.transpose(v[:, :k])
    return (
        tf.reduce_sum(w_proj * proj)
        + tf.reduce_sum(w_u * u**2)
        + tf.reduce_sum(w_v * v**4)
        + tf.reduce_sum(w_s * s)
    )


def _autograd_loss(a, k, w_proj, w_u, w_v, w_s):
    u, s, vh = anp.linalg.svd(a, full_matrices=False)
    v = anp.swapaxes(vh, -1, -2)
    proj = anp.dot(u[:, :k], anp.transpose(v[:, :k]))
    return anp.sum(w_proj * proj) + anp.sum(w_u * u**2) + anp.sum(w_v * v**4) + anp.sum(w_s * s)


@pytest.mark.parametrize("matrix", [_TALL, _WIDE], ids=["tall", "wide"])
def test_svd_gradient_through_u_v_and_s(matrix):
    m, n = matrix.shape
    r = min(m, n)
    w_proj, w_u, w_v, w_s = (
        _weights(shape, k) for k, shape in enumerate([(m, n), (m, r), (n, r), (r,)])
    )
    weights = (2, w_proj, w_u, w_v, w_s)
    a = tf.Variable(matrix)
    with tf.GradientTape() as tape:
        loss = _tf_loss(a, 2, w_proj, w_u, w_v, w_s)
    got = np.asarray(tape.gradient(loss, a))
    numeric = numerical_grad(lambda x: float(_tf_loss(x, *weights)), (matrix,), 0)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-7)
    oracle = autograd.grad(_autograd_loss)(matrix, *weights)
    np.testing.assert_allclose(got, oracle, rtol=1e-9, atol=1e-10)


class LowRank(tf.Module):
    """A rank-k approximation of its weight: the loss reads the singular vectors."""

    def __init__(self, matrix, rank):
        super().__init__()
        self.w = tf.Variable(matrix)
        self.rank = rank

    def __call__(self, target):
        s, u, v = tf.linalg.svd(self.w)
        k = self.rank
        approx = (u[:, :k] * s[:k]) @ tf.transpose(v[:, :k])
        return tf.reduce_mean((approx - target) ** 2)


def test_svd_vectors_inside_a_module_call():
    target = _weights((5, 3), 11)
    model = LowRank(_TALL, 2)
    with tf.GradientTape() as tape:
        loss = model(target)
    got = np.asarray(tape.gradient(loss, model.trainable_variables)[0])

    def plain(w):
        u, s, vh = np.linalg.svd(w, full_matrices=False)
        approx = (u[:, :2] * s[:2]) @ vh[:2]
        return float(np.mean((approx - target) ** 2))

    np.testing.assert_allclose(got, numerical_grad(plain, (_TALL,), 0), rtol=1e-6, atol=1e-8)


def test_svd_vectors_where_singular_values_repeat_give_no_finite_gradient():
    # u[:, 0] is any unit vector of a two-dimensional space: TensorFlow's gradient is not
    # finite there either
    a = tf.Variable(np.diag([2.0, 2.0, 1.0]))
    with tf.GradientTape() as tape:
        s, u, v = tf.linalg.svd(a)
        loss = tf.reduce_sum(u[:, :1] ** 2 * np.arange(3.0)[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.asarray(tape.gradient(loss, a))
    assert not np.all(np.isfinite(g))


def test_svd_values_and_vectors_reconstruct_the_matrix():
    s, u, v = tf.linalg.svd(_WIDE)
    assert u.shape == (3, 3) and v.shape == (4, 3) and s.shape == (3,)
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s) @ np.asarray(v).T, _WIDE)
    full_s, full_u, full_v = tf.linalg.svd(_WIDE, full_matrices=True)
    assert full_u.shape == (3, 3) and full_v.shape == (4, 4)
    np.testing.assert_allclose(tf.linalg.svd(_WIDE, compute_uv=False), s)
