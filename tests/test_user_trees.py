"""User code over parameter trees: a recursive walk of nested dicts and lists, named-tuple
parameters and ``[(W, b), ...]`` lists checked to second order by ``check_grads``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from scipy.special import logsumexp

import s2s_ad

RS = np.random.RandomState(5)


def tree_sq(t):
    """Sum of squares over a tree of dicts, lists and tuples of arrays."""
    if isinstance(t, dict):
        return sum(tree_sq(v) for v in t.values())
    if isinstance(t, (list, tuple)):
        return sum(tree_sq(v) for v in t)
    return np.sum(t**2)


def regularized(params, x):
    """A loss with an L2 penalty written as a recursive tree walk."""
    W, b = params["layer"]
    h = np.tanh(x @ W + b)
    return np.sum(h * params["scale"][0]) + 0.1 * tree_sq(params)


def _tree():
    return {
        "layer": [RS.randn(3, 2), RS.randn(2)],
        "scale": (RS.randn(2),),
    }


def test_a_recursive_walk_of_a_parameter_tree():
    # the walk's parameter took part in ``t ** 2``, so its adjoint was added with ``+``;
    # on the dict and list branches it starts as ``0.0`` and gets a list: a TypeError
    params, x = _tree(), RS.randn(4, 3)
    got = s2s_ad.grad(regularized)(params, x)
    autograd = pytest.importorskip("autograd")
    agnp = pytest.importorskip("autograd.numpy")

    def oracle(p):
        W, b = p["layer"]
        h = agnp.tanh(x @ W + b)
        sq = sum(agnp.sum(a**2) for a in (W, b, p["scale"][0]))
        return agnp.sum(h * p["scale"][0]) + 0.1 * sq

    want = autograd.grad(oracle)(params)
    np.testing.assert_allclose(got["layer"][0], want["layer"][0], rtol=1e-10)
    np.testing.assert_allclose(got["layer"][1], want["layer"][1], rtol=1e-10)
    np.testing.assert_allclose(got["scale"][0], want["scale"][0], rtol=1e-10)
    assert isinstance(got["layer"], list) and isinstance(got["scale"], tuple)
    s2s_ad.check_grads(regularized, (params, x), modes=("rev", "fwd"))


def test_the_walk_alone_on_nested_containers():
    tree = {"a": [RS.randn(2), (RS.randn(3),)], "b": RS.randn(1)}
    g = s2s_ad.grad(tree_sq)(tree)
    np.testing.assert_allclose(g["a"][0], 2 * tree["a"][0])
    np.testing.assert_allclose(g["a"][1][0], 2 * tree["a"][1][0])
    np.testing.assert_allclose(g["b"], 2 * tree["b"])


class Dense(NamedTuple):
    W: np.ndarray
    b: np.ndarray


def named_loss(p: Dense, x, y):
    pred = np.tanh(x @ p.W + p.b)
    return np.mean((pred - y) ** 2) + 0.01 * sum(np.sum(w**2) for w in p)


def test_check_grads_on_named_tuple_parameters():
    # check_grads rebuilt the named tuple from one iterable (``Dense(parts)``): TypeError
    p = Dense(RS.randn(3, 2), RS.randn(2))
    x, y = RS.randn(4, 3), RS.randn(4, 2)
    s2s_ad.check_grads(named_loss, (p, x, y), order=2, modes=("rev", "fwd"))


def mlp_nll(params, x, labels):
    *hidden, (W, b) = params
    for Wh, bh in hidden:
        x = np.tanh(x @ Wh + bh)
    logits = x @ W + b
    logp = logits - logsumexp(logits, axis=1, keepdims=True)
    return -np.mean(logp[np.arange(len(labels)), labels])


def test_check_grads_to_second_order_on_a_layer_list():
    # at order 2 the finite differences summed the structured gradient with np.sum:
    # ValueError (inhomogeneous shape)
    params = [(0.5 * RS.randn(4, 5), 0.1 * RS.randn(5)), (0.5 * RS.randn(5, 3), 0.1 * RS.randn(3))]
    x, labels = RS.randn(6, 4), np.array([0, 1, 2, 0, 1, 2])
    s2s_ad.check_grads(mlp_nll, (params, x, labels), order=2)
