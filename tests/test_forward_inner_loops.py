"""Forward mode: a variable reset to a value without tangent inside an outer loop, then
carried through an inner loop by a matrix product (an MLP applied to each input of a
list). Its tangent was the symbolic zero ``0.0``, and ``np.matmul(0.0, W)`` failed; a
variable some loop reads before assigning it now gets dense zeros."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.testing import check_grads

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

rng = np.random.default_rng(5)
PARAMS = [(rng.normal(size=(3, 3)) * 0.7, rng.normal(size=3)) for _ in range(2)]
XS = [rng.normal(size=3) for _ in range(3)]


def per_input_loss(params, xs):
    total = 0.0
    for x in xs:
        h = x
        for W, b in params:
            h = np.tanh(h @ W + b)
        total = total + np.sum(h**2)
    return total


def ag_per_input_loss(params, xs):
    total = 0.0
    for x in xs:
        h = x
        for W, b in params:
            h = anp.tanh(anp.dot(h, W) + b)
        total = total + anp.sum(h**2)
    return total


def inner_function_in_a_generator(params, xs):
    def predict(x):
        h = x
        for W, b in params:
            h = np.tanh(h @ W + b)
        return h

    return sum(np.sum(predict(x) ** 2) for x in xs)


def first_layer_weights(W, xs):
    return per_input_loss([(W, np.zeros(3)), PARAMS[1]], xs)


def ag_first_layer_weights(W, xs):
    return ag_per_input_loss([(W, anp.zeros(3)), PARAMS[1]], xs)


@pytest.mark.parametrize("fun", [per_input_loss, inner_function_in_a_generator])
def test_jvp_through_inner_loop_after_reset(fun) -> None:
    check_grads(fun, (PARAMS, XS), modes=("rev", "fwd"))
    tangent = [(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in PARAMS]
    _, out_dot = s2s_ad.jvp(lambda p: fun(p, XS), (PARAMS,), (tangent,))
    grads = autograd.grad(ag_per_input_loss)(PARAMS, XS)
    expected = sum(np.sum(g * t) for gp, tp in zip(grads, tangent) for g, t in zip(gp, tp))
    assert out_dot == pytest.approx(expected, rel=1e-9)


def test_hessian_and_forward_jacobian_of_the_weights() -> None:
    W = PARAMS[0][0]
    expected = autograd.hessian(ag_first_layer_weights)(W, XS)
    np.testing.assert_allclose(s2s_ad.hessian(first_layer_weights)(W, XS), expected, atol=1e-10)
    jac = s2s_ad.jacobian(first_layer_weights, mode="fwd")(W, XS)
    np.testing.assert_allclose(jac, autograd.grad(ag_first_layer_weights)(W, XS), atol=1e-12)
