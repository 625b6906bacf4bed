"""Stabilising shifts (``z - max(z)`` in softmax and log-softmax): the result does not
depend on the shift, so no adjoint is computed through it; where the result does depend on
it (log-sum-exp returns it, a sum along another axis), it is differentiated as before."""

from __future__ import annotations

import numpy as np
import pytest
from fd import flatten, numerical_grad

import s2s_ad
from s2s_ad.api import normalized
from s2s_ad.shifts import stabilising_shifts


def mlp_xent(params, x, labels):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    shift = np.max(logits, axis=1, keepdims=True)
    shifted = logits - shift
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def attention(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.sum((w @ v) ** 2)


def global_softmax_energy(z, weights):
    e = np.exp(z - np.max(z))
    p = e / np.sum(e)
    return np.sum(p * weights)


def logsumexp(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def normalised_along_other_axis(z):
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    return np.sum(e / np.sum(e, axis=0, keepdims=True) * z)


def shifted_also_returned(z):
    s = z - np.max(z, axis=1, keepdims=True)
    logp = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return np.sum(logp) + np.sum(s * s)


def softmax_with_a_floor(z):
    s = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(s)
    return np.sum(np.log(e / (np.sum(e, axis=1, keepdims=True) + 1.0)))


RNG = np.random.default_rng(7)


def _cut(fun) -> set[str]:
    return stabilising_shifts(normalized(fun))


def _check(fun, args, wrt):
    got = s2s_ad.grad(fun, wrt)(*args)
    want = numerical_grad(fun, args, wrt)
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-5, atol=1e-8)


def test_mlp_cross_entropy_has_no_adjoint_through_the_shift():
    params = [
        (RNG.normal(size=(4, 5)), RNG.normal(size=5)),
        (RNG.normal(size=(5, 3)), RNG.normal(size=3)),
    ]
    x, labels = RNG.normal(size=(6, 4)), np.eye(3)[[0, 2, 1, 1, 0, 2]]
    assert _cut(mlp_xent) == {"shift"}
    _check(mlp_xent, (params, x, labels), 0)
    text = s2s_ad.source(s2s_ad.grad(mlp_xent))
    assert "shift_bar" not in text and "max_vjp" not in text


def test_attention_softmax_with_rebound_names():
    q, k, v = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2))
    assert len(_cut(attention)) == 1
    _check(attention, (q, k, v), (0, 1, 2))
    assert "max_vjp" not in s2s_ad.source(s2s_ad.grad(attention, (0, 1)))


def test_global_shift():
    z, weights = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    assert len(_cut(global_softmax_energy)) == 1
    _check(global_softmax_energy, (z, weights), 0)


@pytest.mark.parametrize(
    "fun", [logsumexp, normalised_along_other_axis, shifted_also_returned, softmax_with_a_floor]
)
def test_shifts_the_result_depends_on_are_differentiated(fun):
    z = RNG.normal(size=(3, 4))
    assert _cut(fun) == set()
    _check(fun, (z,), 0)


def test_forward_mode_and_second_order_agree():
    z, weights = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    direction = RNG.normal(size=(2, 3))
    _, tangent = s2s_ad.jvp(lambda z: global_softmax_energy(z, weights), (z,), (direction,))
    gradient = s2s_ad.grad(global_softmax_energy)(z, weights)
    assert tangent == pytest.approx(np.sum(gradient * direction), rel=1e-10)
    hvp = s2s_ad.hvp(lambda z: global_softmax_energy(z, weights))(z, direction)
    eps = 1e-6
    g = s2s_ad.grad(global_softmax_energy)
    fd = (g(z + eps * direction, weights) - g(z - eps * direction, weights)) / (2 * eps)
    np.testing.assert_allclose(hvp, fd, rtol=1e-5, atol=1e-8)
