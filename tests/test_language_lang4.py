"""Python constructs users write that were refused: a local function that returns early.

Each gradient is checked against central finite differences in reverse and forward mode
and to second order (``s2s_ad.check_grads``), and against autograd running the same code
where it can; what stays refused is a located ``TransformError``.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from tests.fd import flatten

RS = np.random.RandomState(41)


def _twin(fun: Any) -> Any:
    """``fun`` with ``np`` bound to autograd's NumPy: the same code for the second oracle."""
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__)


def _check(fun: Any, x: Any, *rest: Any, oracle: bool = True, order: int = 2) -> None:
    """``fun(x, *rest)``: reverse and forward mode (and second order) against finite
    differences in ``x``, reverse and forward mode in the other arguments, and the
    gradient in ``x`` against autograd's."""
    names = list(inspect.signature(fun).parameters)
    s2s_ad.check_grads(
        functools.partial(fun, **dict(zip(names[1:], rest))),
        (x,),
        order=order,
        modes=("rev", "fwd"),
    )
    if rest:
        s2s_ad.check_grads(functools.partial(fun, x), tuple(rest), modes=("rev", "fwd"))
    if oracle:
        got = s2s_ad.grad(fun)(x, *rest)
        want = autograd.grad(_twin(fun))(x, *rest)
        np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-7, atol=1e-9)


def _net() -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (RS.standard_normal((4, 3)) * 0.5, RS.standard_normal(4) * 0.1),
        (RS.standard_normal((2, 4)) * 0.5, RS.standard_normal(2) * 0.1),
    ]


# 1. a local function that returns before its last statement: each return assigns the
# call's result, what follows runs under a flag, as for the loss's own early returns


def gated_mlp(x, params):
    def act(h, scale=1.0):
        if np.sum(h) > 0.0:
            return np.tanh(h) * scale
        h = h * 0.5
        return np.sin(h) * scale

    h = x
    for W, b in params:
        h = act(W @ h + b, scale=1.5)
    return np.sum(h**2)


def first_large(x, params):
    W, b = params[0]

    def first_over(rows, level):
        for k, row in enumerate(rows):
            if np.sum(row) > level:
                return row * (k + 1.0)
        return rows[-1]

    H = np.tanh(np.outer(W @ x + b, x))
    return np.sum(first_over(H, 0.0) ** 2) + np.sum(first_over(H, 10.0))


def shrink_steps(x, params):
    W, b = params[0]

    def step(u, k):
        if k == 0:
            return u
        if np.max(np.abs(u)) > 1.0:
            u = u / np.max(np.abs(u))
            return u * 0.9
        return u + 0.1 * np.tanh(u)

    h = W @ x + b
    for k in range(3):
        h = step(h, k)
    return np.sum(h**2)


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0])
def test_a_local_activation_that_returns_early_in_an_mlp(scale):
    params = _net()
    for sign in (1.0, -1.0):
        _check(gated_mlp, sign * scale * RS.standard_normal(3), params)


@pytest.mark.parametrize("shift", [-2.0, 0.0, 2.0])
def test_a_local_function_returning_from_inside_its_loop(shift):
    params = _net()
    _check(first_large, RS.standard_normal(3) + shift, params)


@pytest.mark.parametrize("scale", [0.1, 5.0])
def test_a_local_function_with_several_returns_called_in_a_loop(scale):
    params = _net()
    _check(shrink_steps, scale * RS.standard_normal(3), params)


def test_a_local_generator_that_returns_early_stays_refused():
    def loss(x):
        def items(u):
            for v in u:
                if v > 1.0:
                    return
                yield v * 2.0

        return sum(items(x))

    with pytest.raises(s2s_ad.TransformError, match="generator that returns before"):
        s2s_ad.grad(loss)(np.array([0.5, 2.0]))
