"""Functional-style numerical code: ``map`` over sequences with ``functools.partial``
binding the parameters, a recursive likelihood that maps itself over a list of
sequences (an HMM's forward algorithm), ``filter`` picking terms, ``map`` with two
iterables, ``list(map(np.log, params))`` turning probabilities into natural
parameters, and loops over ``reversed(...)`` (Horner's rule, discounted returns)."""

from __future__ import annotations

from functools import partial

import numpy as np
from scipy.special import logsumexp

from programs_real import Program


def hmm_log_likelihood(log_params, observations):
    """Forward algorithm in log space; a list of sequences sums the per-sequence values."""
    if isinstance(observations, list):
        return sum(map(partial(hmm_log_likelihood, log_params), observations))
    log_start, log_trans, log_emit = log_params
    log_alpha = log_start + log_emit[:, observations[0]]
    for obs in observations[1:]:
        log_alpha = logsumexp(log_alpha[:, None] + log_trans, axis=0) + log_emit[:, obs]
    return logsumexp(log_alpha)


_SEQS = [np.array([0, 2, 1, 1]), np.array([1, 0]), np.array([2, 2, 0])]


def hmm_from_probabilities(probs):
    """Probabilities in, natural parameters by ``map``, the likelihood of three sequences."""
    log_params = list(map(np.log, probs))
    return hmm_log_likelihood(log_params, _SEQS)


def _residual(x, y, scale, shift):
    return np.sum((scale * np.tanh(x) + shift - y) ** 2)


def batched_residuals(theta, xs, ys):
    """One residual per (x, y) pair: ``map`` over two lists with the parameters bound."""
    scale, shift = theta[0], theta[1]
    per_pair = map(partial(_residual, scale=scale, shift=shift), xs, ys)
    return sum(per_pair) / len(xs)


def positive_part_energy(w, xs):
    """Energy of the positive responses only: ``filter`` with a lambda over the items."""
    responses = [np.dot(w, x) for x in xs]
    return sum(r**2 for r in filter(lambda r: r > 0, responses))


def layer_norms(params):
    """Weight decay over ``[(W, b), ...]`` written with ``map`` and a lambda."""
    return sum(map(lambda layer: np.sum(layer[0] ** 2) + 0.1 * np.sum(layer[1] ** 2), params))


def horner(coeffs, x):
    """A polynomial by Horner's rule over the coefficients read backwards."""
    value = np.zeros_like(x)
    for c in reversed(coeffs):
        value = value * x + c
    return np.sum(value**2)


def discounted_returns(rewards, gamma):
    """Returns computed from the last step back, weighted by their distance to the end."""
    ret = 0.0
    total = 0.0
    for k, r in enumerate(reversed(list(rewards))):
        ret = r + gamma * ret
        total = total + (k + 1) * ret**2
    return total


_rs = np.random.RandomState(11)


def _stochastic(*shape):
    p = _rs.rand(*shape) + 0.2
    return p / p.sum(-1, keepdims=True)


_PROBS = [_stochastic(3), _stochastic(3, 3), _stochastic(3, 3)]
_XS = [_rs.randn(4) for _ in range(3)]
_YS = [_rs.randn(4) for _ in range(3)]

PROGRAMS = [
    Program(
        "horner", (_rs.randn(4), np.linspace(-1, 1, 5)), wrt=(0, 1), checks=("grad", "vg", "fwd")
    ),
    Program(
        "discounted_returns",
        (_rs.randn(5), 0.9),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # autograd cannot iterate reversed() over its boxes' list
    ),
    Program("hmm_from_probabilities", (_PROBS,), checks=("grad", "vg")),
    Program(
        "hmm_log_likelihood",
        ([np.log(p) for p in _PROBS], _SEQS),
        checks=("grad", "vg"),
        tag="list",
    ),
    Program(
        "batched_residuals", (np.array([0.8, -0.3]), _XS, _YS), checks=("grad", "vg", "fwd", "hvp")
    ),
    Program(
        "positive_part_energy",
        (_rs.randn(4), [_rs.randn(4) for _ in range(5)]),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "layer_norms",
        ([(_rs.randn(3, 4), _rs.randn(4)), (_rs.randn(4, 2), _rs.randn(2))],),
        checks=("grad", "vg"),
    ),
]
