"""Bugs found by the second round of random user programs (``random_users.py``), each as
the user code that showed it."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2s_ad

RS = np.random.RandomState(11)


# --- a recursive network in forward mode -------------------------------------------------


def deep(params, u):
    """An MLP written as a recursion over the list of layers."""
    if not params:
        return u
    W, b = params[0]
    return deep(params[1:], np.tanh(W @ u + b))


def recursive_loss(x, params):
    return np.sum(deep(params, x) ** 2)


def _layers():
    return [(0.5 * RS.randn(3, 3), 0.5 * RS.randn(3)) for _ in range(2)]


def test_a_recursive_network_in_forward_mode():
    # the optimizer folded ``_t2 = params[0]`` into its two readers but left
    # ``W, b = _t2`` reading the name it dropped: a NameError in deep_jvp
    params, x = _layers(), RS.randn(3)
    s2s_ad.check_grads(functools.partial(recursive_loss, params=params), (x,), modes=("rev", "fwd"))
    grads = s2s_ad.grad(recursive_loss, 1)(x, params)
    V = _layers()
    _, tangent = s2s_ad.jvp(recursive_loss, (x, params), (np.zeros(3), V))
    want = sum(np.sum(g * v) for gl, vl in zip(grads, V) for g, v in zip(gl, vl))
    np.testing.assert_allclose(tangent, want, rtol=1e-10)


# --- a closure factory and a local function called with a starred layer ------------------


def make_affine(W, b):
    def apply(u):
        return W @ u + b

    return apply


def starred_factory_loss(x, params):
    h = x
    for layer in params:
        fn = make_affine(*layer)
        h = np.tanh(fn(h))
    return np.sum(h**2)


def starred_lambda_loss(x, params):
    dense = lambda u, W, b: np.sin(W @ u) + b  # noqa: E731
    h = dense(x, *params[0])
    return np.sum(dense(h, *params[1]) ** 2)


def test_a_closure_factory_called_with_a_starred_layer():
    # was refused: "call of make_affine with starred arguments" (SPEC promises star-calls)
    params, x = _layers(), RS.randn(3)
    for loss in (starred_factory_loss, starred_lambda_loss):
        s2s_ad.check_grads(functools.partial(loss, params=params), (x,), modes=("rev", "fwd"))
        s2s_ad.check_grads(functools.partial(loss, x), (params,))


def starred_too_long(x, params):
    fn = make_affine(*params)  # two layers: W and b are the two (W, b) tuples
    return np.sum(fn(x))


def starred_first(x, params):
    dense = lambda W, b, u: np.sin(W @ u) + b  # noqa: E731
    return np.sum(dense(*params[0], x))


def test_a_starred_layer_of_another_length_or_before_a_positional():
    params, x = _layers() + _layers(), RS.randn(3)
    with pytest.raises(ValueError):  # as Python raises (a TypeError there): never a number
        s2s_ad.grad(starred_too_long)(x, params)
    with pytest.raises(s2s_ad.TransformError, match="starred arguments") as info:
        s2s_ad.grad(starred_first)(x, params)
    assert "dense(*params[0], x)" in str(info.value)
