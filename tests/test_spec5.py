"""What the fifth round of random user programs left: an internal error in grad-of-grad and
SPEC constructs (star-calls of local functions, closures from module factories, decorated
local functions), written as the user code that found them."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np

import s2s_ad


def kalman_2d(ys, F, Q, R):
    m = np.zeros(2)
    P = np.eye(2)
    H = np.array([[1.0, 0.0]])
    ll = 0.0
    for t in range(len(ys)):
        m = F @ m
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        v = ys[t] - H @ m
        K = P @ H.T / S[0, 0]
        m = m + K[:, 0] * v[0]
        P = P - K @ H @ P
        ll = ll - 0.5 * (v[0] ** 2 / S[0, 0] + np.log(S[0, 0]))
    return ll


def kalman_2d_autograd(ys, F, Q, R):
    m = anp.zeros(2)
    P = anp.eye(2)
    H = anp.array([[1.0, 0.0]])
    ll = 0.0
    for t in range(len(ys)):
        m = F @ m
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        v = ys[t] - H @ m
        K = P @ H.T / S[0, 0]
        m = m + K[:, 0] * v[0]
        P = P - K @ H @ P
        ll = ll - 0.5 * (v[0] ** 2 / S[0, 0] + anp.log(S[0, 0]))
    return ll


def smoothed_loss(x, F0):
    """The caller reuses ``Q`` for a 4 x 4 array after the filter: the filter's ``Q`` then
    counts as active, its adjoint carries ``Q_bar`` and zero cotangents that start as
    scalars (``m_bar``, ``P_bar``) and are broadcast into ``K[:, 0]`` and a 2 x 2 product."""
    h = x * 1.0
    F = np.eye(2) + 0.1 * F0
    Q = 0.1 * np.eye(2)
    R = np.array([[0.5]])
    s = 0.1 * kalman_2d(h, F, Q, R)
    Q = np.outer(h, x)
    h = h + Q @ h
    return s + np.sum(h**2)


def smoothed_loss_autograd(x, F0):
    h = x * 1.0
    F = anp.eye(2) + 0.1 * F0
    Q = 0.1 * anp.eye(2)
    R = anp.array([[0.5]])
    s = 0.1 * kalman_2d_autograd(h, F, Q, R)
    Q = anp.outer(h, x)
    h = h + Q @ h
    return s + anp.sum(h**2)


def test_grad_of_grad_through_a_kalman_filter_whose_caller_reuses_q():
    rng = np.random.default_rng(0)
    x, F0, v = rng.normal(size=4), rng.normal(size=(2, 2)), np.ones(4)
    grad = s2s_ad.grad(smoothed_loss)

    def directional(u):
        return np.dot(grad(u, F0), v)

    want = autograd.grad(lambda u: anp.dot(autograd.grad(smoothed_loss_autograd)(u, F0), v))(x)
    np.testing.assert_allclose(s2s_ad.grad(directional)(x), want, rtol=1e-9)
    s2s_ad.check_grads(smoothed_loss, (x, F0), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda u: smoothed_loss(u, F0), (x,), order=2, modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda Fm: kalman_2d(x, Fm, 0.2 * np.eye(2), np.eye(1)), (F0,), order=2)
