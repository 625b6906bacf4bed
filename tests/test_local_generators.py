"""Generator functions defined inside the differentiated function: a flat parameter vector
unpacked into ``[(W, b), ...]`` by a local generator, minibatches yielded from a closure,
a generator called twice and nested in another's loop, ``sum(gen(...))``.

A local generator runs to its end where it is called (its items, as a list), inlined like
any local function. Each program is checked against central finite differences in reverse
and forward mode, its Hessian-vector product and autograd running the same source; a
generator that never stops is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.user_checks import check_program

RS = np.random.RandomState(31)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0) -> Any:
    return check_program(fun, args, wrt, rs=RS)


SHAPES = [(3, 4), (4, 2)]


def flat_mlp(flat, X, y):
    """A flat parameter vector unpacked layer by layer by a local generator."""

    def layers(theta):
        start = 0
        for m, n in SHAPES:
            W = theta[start : start + m * n].reshape((m, n))
            start = start + m * n
            b = theta[start : start + n]
            start = start + n
            yield W, b

    h = X
    for W, b in layers(flat):
        h = np.tanh(h @ W + b)
    return np.mean((h - y) ** 2)


def test_flat_parameters_unpacked_by_a_local_generator():
    size = sum(m * n + n for m, n in SHAPES)
    _check(flat_mlp, (0.5 * RS.randn(size), RS.randn(5, 3), RS.randn(5, 2)))


def batched_loss(w, X, y):
    """Minibatches yielded by a local generator reading the enclosing function's data,
    summed with ``sum(...)`` over a generator expression of the batches."""

    def batches(size):
        for start in range(0, X.shape[0], size):
            yield X[start : start + size] * np.exp(w[0]), y[start : start + size]

    def residuals(xb, yb):
        for i in range(xb.shape[0]):
            yield np.dot(xb[i], w) - yb[i]

    total = sum(np.sum(np.tanh(xb @ w) - yb) ** 2 for xb, yb in batches(2))
    for xb, yb in batches(3):
        total = total + sum(r**2 for r in residuals(xb, yb))
    return total


def test_minibatches_from_a_generator_called_twice_and_nested():
    _check(batched_loss, (RS.randn(3), RS.randn(7, 3), RS.randn(7)))


def pairwise_energy(x):
    """``sum`` of a local generator with a ``while`` loop that ends and a ``break``."""

    def pairs(v):
        i = 0
        while i < v.shape[0] - 1:
            if v[i] > 3.0:
                break
            yield v[i], v[i + 1]
            i = i + 1

    return sum(np.exp(-((a - b) ** 2)) for a, b in pairs(x)) + sum(a * b for a, b in pairs(x))


def test_sum_of_a_local_generator_with_a_while_loop():
    _check(pairwise_energy, (np.array([0.3, -0.2, 1.1, 0.7]),))


def endless(x):
    def steps(v):
        k = 0
        while True:
            yield v * k
            k = k + 1

    total = 0.0
    for s, _ in zip(steps(x), range(3)):
        total = total + np.sum(s)
    return total


def test_a_generator_that_never_stops_is_refused():
    with pytest.raises(TransformError, match="never stops.*\n.*while True"):
        s2s_ad.grad(endless)(np.array([0.5, 1.0]))
