"""Higher order through calls: third derivatives through user helpers whose sweeps keep a
tape, gradient functions called inside other functions (in loops, in helpers), Hessians
of losses built on ``grad`` (a Hamiltonian's leapfrog), Jacobians and pullbacks of
gradients. Checked against autograd (its own operator overloading, run on the same
source with ``np`` bound to ``autograd.numpy``) and finite differences of the order below.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad
from s2s_ad import TransformError
from s2s_ad.testing import check_grads

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

G = s2s_ad.grad


# --- user code --------------------------------------------------------------------------


def smooth_step(u):
    s = u
    for _ in range(3):
        s = s - 0.2 * np.sin(s) * u
    return s


def damped(u, a):
    if u > 0:
        r = u * np.exp(-a * u)
    else:
        r = np.sin(u) * u
    return r


def through_loop_helper(x):
    return smooth_step(x) * np.cos(x)


def through_branch_helper(x):
    return damped(x, 1.0) * damped(x * x - 0.3, 0.5)


def through_inner_while(x):
    def settle(u):
        n = 0
        v = u
        while n < 3:
            v = v * np.tanh(v) + u
            n += 1
        return v

    return settle(x) + settle(0.5 * x)


def list_of_terms(x):
    terms = []
    for k in range(3):
        terms.append(smooth_step(k * x) * x)
    total = 0.0
    for t in terms:
        total = total + t * t
    return total


d_smooth = G(smooth_step)


def grad_called_in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + d_smooth(x * (k + 1.0)) * x
    return total


def grad_called_in_a_while(x):
    v = x
    n = 0
    while n < 2:
        v = v - 0.1 * d_smooth(v)
        n = n + 1
    return v * v


def energy(x):
    return np.sum(np.sin(x) * x**2) + np.sum(x) ** 2


d_energy = G(energy)


def slope_plus_one(x):
    return d_energy(x) + 1.0


def through_a_helper_calling_grad(x):
    return np.sum(slope_plus_one(x) ** 2)


def elementwise(x):
    return np.sin(x) * np.exp(0.3 * x) + smooth_step(x)


def hamiltonian(q, p, theta):
    k, m = theta[0], theta[1]
    return 0.5 * np.sum(p * p) / m + 0.5 * k * np.sum(q * q) + 0.1 * np.sum(q**4)


dH_dq = G(hamiltonian, 0)
dH_dp = G(hamiltonian, 1)


def leapfrog(q, p, theta, dt, steps):
    for _ in range(steps):
        p = p - 0.5 * dt * dH_dq(q, p, theta)
        q = q + dt * dH_dp(q, p, theta)
        p = p - 0.5 * dt * dH_dq(q, p, theta)
    return q, p


def trajectory_loss(theta, q0, p0):
    q, p = leapfrog(q0, p0, theta, 0.1, 5)
    return np.sum((q - 0.5) ** 2) + 0.1 * np.sum(p * p)


def layer(W, b, h):
    return np.tanh(h @ W + b)


def mlp(params, x):
    h = x
    for W, b in params[:-1]:
        h = layer(W, b, h)
    W, b = params[-1]
    return h @ W + b


def critic(x, params):
    return np.sum(mlp(params, x))


input_grad = G(critic, 0)


def penalised_loss(params, x, y):
    pred = mlp(params, x)
    g = input_grad(x, params)
    slopes = np.sqrt(np.sum(g * g, axis=1))
    return np.mean((pred - y) ** 2) + 0.1 * np.sum((slopes - 1.0) ** 2)


# --- autograd's versions of the same source -----------------------------------------------

_MADE_BY_GRAD = {
    "d_smooth": ("smooth_step", 0),
    "d_energy": ("energy", 0),
    "dH_dq": ("hamiltonian", 0),
    "dH_dp": ("hamiltonian", 1),
    "input_grad": ("critic", 0),
}


def _autograd_version(fun):
    """``fun`` and the module's functions it calls, with ``np`` bound to autograd.numpy and
    the module's gradient functions made by autograd."""
    scope = dict(fun.__globals__)
    scope["np"] = anp
    for name, value in list(scope.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == __name__:
            scope[name] = types.FunctionType(value.__code__, scope, value.__name__)
    for name, (primal, argnum) in _MADE_BY_GRAD.items():
        scope[name] = autograd.grad(scope[primal], argnum)
    scope["G"] = autograd.grad
    return scope[fun.__name__]


def _third(fun):
    return autograd.grad(autograd.grad(autograd.grad(_autograd_version(fun))))


# --- tests --------------------------------------------------------------------------------

SCALAR = [
    through_loop_helper,
    through_branch_helper,
    through_inner_while,
    list_of_terms,
    grad_called_in_a_loop,
    grad_called_in_a_while,
]


@pytest.mark.parametrize("fun", SCALAR, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0.6, -0.9])
def test_third_derivative_matches_autograd(fun, x):
    assert G(G(G(fun)))(x) == pytest.approx(_third(fun)(x), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("fun", SCALAR, ids=lambda f: f.__name__)
def test_third_derivative_is_the_slope_of_the_second(fun):
    x = 0.6
    second = G(G(fun))
    slope = numerical_grad(second, (x,), 0)
    assert G(G(G(fun)))(x) == pytest.approx(slope, rel=1e-5, abs=1e-7)


def test_a_helper_calling_a_gradient_function_differentiated_twice():
    x = np.array([0.3, -0.8, 1.1])
    ours = s2s_ad.hessian(through_a_helper_calling_grad)(x)
    theirs = autograd.hessian(_autograd_version(through_a_helper_calling_grad))(x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_a_gradient_function_refused_again_keeps_its_own_reason():
    value_and_slope = s2s_ad.value_and_grad(smooth_step)

    def slope_of(x):
        value, slope = value_and_slope(x)
        return slope

    def loss(x):
        return slope_of(x) ** 2

    with pytest.raises(TransformError, match="value_and_grad"):
        G(loss)(0.4)


def test_elementwise_grad_three_times_through_a_loop_helper():
    x = np.array([0.3, -0.7, 1.2])
    e = s2s_ad.elementwise_grad
    ae = autograd.elementwise_grad
    theirs = ae(ae(ae(_autograd_version(elementwise))))(x)
    np.testing.assert_allclose(e(e(e(elementwise)))(x), theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_of_elementwise_grad_through_a_loop_helper(mode):
    x = np.array([0.3, -0.7, 1.2])
    theirs = autograd.jacobian(autograd.elementwise_grad(_autograd_version(elementwise)))(x)
    ours = s2s_ad.jacobian(s2s_ad.elementwise_grad(elementwise), mode=mode)(x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def vector_loss(x):
    return np.sum(np.sin(x) * x**2) + np.prod(np.cos(x)) + smooth_step(x[0]) * x[1]


def test_jacobian_vjp_and_hvp_of_a_gradient_agree_with_the_hessian():
    x = np.array([0.3, -0.7, 1.2])
    v = np.array([0.5, -1.0, 2.0])
    hess = autograd.hessian(_autograd_version(vector_loss))(x)
    gradient = G(vector_loss)
    np.testing.assert_allclose(s2s_ad.jacobian(gradient)(x), hess, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        s2s_ad.jacobian(gradient, mode="fwd")(x), hess, rtol=1e-9, atol=1e-12
    )
    out, pullback = s2s_ad.vjp(gradient, x)
    np.testing.assert_allclose(out, gradient(x))
    np.testing.assert_allclose(pullback(v)[0], hess.T @ v, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2s_ad.hvp(vector_loss)(x, v), hess @ v, rtol=1e-9)


THETA = np.array([1.3, 0.8])
Q0 = np.array([0.4, -0.2])
P0 = np.array([0.1, 0.3])


def test_leapfrog_loss_gradient_and_hessian_in_the_parameters():
    theirs = _autograd_version(trajectory_loss)
    np.testing.assert_allclose(
        G(trajectory_loss)(THETA, Q0, P0), autograd.grad(theirs)(THETA, Q0, P0), rtol=1e-9
    )
    hess = s2s_ad.hessian(trajectory_loss)(THETA, Q0, P0)
    np.testing.assert_allclose(hess, autograd.hessian(theirs)(THETA, Q0, P0), rtol=1e-8)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-9)
    gradient, eps = G(trajectory_loss), 1e-6
    columns = [
        (gradient(THETA + eps * e, Q0, P0) - gradient(THETA - eps * e, Q0, P0)) / (2 * eps)
        for e in np.eye(THETA.size)
    ]
    np.testing.assert_allclose(hess, np.stack(columns, axis=1), rtol=1e-5, atol=1e-7)


def test_leapfrog_loss_hessian_in_the_initial_position():
    theirs = _autograd_version(trajectory_loss)
    np.testing.assert_allclose(
        s2s_ad.hessian(trajectory_loss, 1)(THETA, Q0, P0),
        autograd.hessian(theirs, 1)(THETA, Q0, P0),
        rtol=1e-8,
    )


def _mlp_problem():
    rng = np.random.default_rng(0)
    params = [
        (rng.normal(size=(3, 4)) * 0.5, rng.normal(size=4) * 0.1),
        (rng.normal(size=(4, 1)) * 0.5, rng.normal(size=1) * 0.1),
    ]
    return params, rng.normal(size=(5, 3)), rng.normal(size=(5, 1))


def test_gradient_penalty_through_the_input_gradient_of_an_mlp():
    params, x, y = _mlp_problem()
    ours = G(penalised_loss)(params, x, y)
    theirs = autograd.grad(_autograd_version(penalised_loss))(params, x, y)
    for (dW, db), (tW, tb) in zip(ours, theirs):
        np.testing.assert_allclose(dW, tW, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(db, tb, rtol=1e-9, atol=1e-12)
    check_grads(penalised_loss, (params, x, y))


def last_times_scale(pair):
    xs, scale = pair
    last = xs.pop()
    return scale * np.size(last) + last * scale


def test_a_list_unpacked_from_an_argument_and_popped_gets_its_adjoint_at_entry():
    pair = ([1.0, 2.0, 4.0], 3.0)
    xs_bar, scale_bar = G(last_times_scale)(pair)
    assert xs_bar == [0.0, 0.0, 3.0]
    assert scale_bar == pytest.approx(5.0)
    assert pair == ([1.0, 2.0, 4.0], 3.0)  # the gradient pops a copy


V = np.array([0.5, -1.0, 2.0])


def directional_slope(x):
    return np.sum(G(vector_loss)(x) * V)


def test_hessian_of_a_directional_derivative_through_a_loop_helper():
    # forward over reverse over reverse: the tangent of a list adjoint that starts empty
    x = np.array([0.3, -0.7, 1.2])
    theirs = autograd.hessian(_autograd_version(directional_slope))(x)
    np.testing.assert_allclose(s2s_ad.hessian(directional_slope)(x), theirs, rtol=1e-9, atol=1e-12)
