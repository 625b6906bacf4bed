"""``functools.partial`` kept in a variable and called later: a loss with the data bound, a
layer with its weights bound, partials made in a loop, keywords overridden at the call.

The calls become calls of the function with the bound arguments first
(``s2s_ad/partials.py``), so the gradient reaches the bound differentiated values. Each
program is checked against central finite differences in reverse and forward mode, its
Hessian-vector product and autograd running the same source; a partial passed on as a
value and binding a differentiated value stays refused.
"""

from __future__ import annotations

import functools
from functools import partial
from typing import Any

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.user_checks import check_program

RS = np.random.RandomState(41)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0) -> Any:
    return check_program(fun, args, wrt, rs=RS)


def dense(params, x, activation=np.tanh):
    W, b = params
    return activation(x @ W + b)


def squared_error(pred, y, weight=1.0):
    return weight * np.mean((pred - y) ** 2)


def mlp_with_bound_layers(params, X, y):
    """A hidden layer as a partial with its activation bound, called in a loop; the head a
    partial with its ``(W, b)`` bound; the loss a partial with the targets bound, whose
    weight a call overrides."""
    hidden = functools.partial(dense, activation=np.tanh)
    h = X
    for k in range(len(params) - 1):
        h = hidden(params[k], h)
    head = partial(dense, params[-1], activation=np.sin)
    loss = partial(squared_error, y=y, weight=0.5)
    return loss(head(h)) + loss(head(h), weight=2.0)


def test_layers_and_loss_as_partials():
    params = [(0.5 * RS.randn(3, 4), 0.1 * RS.randn(4)), (0.5 * RS.randn(4, 2), RS.randn(2))]
    got = _check(mlp_with_bound_layers, (params, RS.randn(5, 3), RS.randn(5, 2)))
    assert got[1][0].shape == (4, 2)


def penalized(w, X, y):
    """A local loss function with the data bound, a penalty whose strength is bound in a
    loop (each partial used in its own trip), and the weights rebound after binding."""

    def objective(theta, data, target):
        r = data @ theta - target
        return np.sum(r**2) / data.shape[0]

    fit = partial(objective, data=X, target=y)
    total = fit(w)
    for k in range(1, 4):
        penalty = partial(np.dot, w * k)
        total = total + 0.01 * penalty(w)
    bound = partial(objective, w)
    w = w * 3.0  # the partial keeps the value it was given
    return total + bound(X, y) + np.sum(w)


def test_partial_of_a_local_function_in_a_loop():
    _check(penalized, (RS.randn(3), RS.randn(6, 3), RS.randn(6)))


def passed_on(w, x):
    f = partial(squared_error, w)
    return sum(g(x) for g in [f])


def test_a_partial_used_as_a_value_stays_refused():
    with pytest.raises(TransformError, match="partial"):
        s2s_ad.grad(passed_on)(RS.randn(3), RS.randn(3))
