"""Higher order: derivatives of generated derivatives (the pipeline run on its own output)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import s2s_ad

X = sympy.Symbol("x")


def f_poly(x):
    return x**3 * np.sin(x) + np.exp(0.5 * x)


def f_branch(x):
    if x > 0.0:
        y = np.tanh(x) * x
    else:
        y = x**4
    return y / (1.0 + x * x)


def f_loop(x):
    s = 1.0
    for k in range(1, 4):
        s = s * x + np.cos(k * x)
    return s


SYMBOLIC = [
    (f_poly, X**3 * sympy.sin(X) + sympy.exp(X / 2), [0.3, -1.1, 2.0]),
    (f_branch, sympy.tanh(X) * X / (1 + X**2), [0.4, 1.7]),
    (f_branch, X**4 / (1 + X**2), [-0.6]),
    (f_loop, ((X + sympy.cos(X)) * X + sympy.cos(2 * X)) * X + sympy.cos(3 * X), [0.2, -0.9]),
]


@pytest.mark.parametrize(
    ("fun", "expr", "points"), SYMBOLIC, ids=lambda v: getattr(v, "__name__", "")
)
def test_second_and_third_derivatives_match_sympy(fun, expr, points):
    d2 = s2s_ad.grad(s2s_ad.grad(fun))
    d3 = s2s_ad.grad(s2s_ad.grad(s2s_ad.grad(fun)))
    for x in points:
        assert d2(x) == pytest.approx(float(sympy.diff(expr, X, 2).subs(X, x)), rel=1e-10)
        assert d3(x) == pytest.approx(float(sympy.diff(expr, X, 3).subs(X, x)), rel=1e-9)


def f_vec(x, A):
    h = np.tanh(A @ x)
    return np.sum(h**2) + 0.5 * np.dot(x, x) * np.sum(np.sin(x))


def _fd_hessian(fun, x, A, eps=1e-5):
    g = s2s_ad.grad(fun)
    cols = [(g(x + eps * e, A) - g(x - eps * e, A)) / (2 * eps) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


def test_hessian_matches_finite_differences_of_the_gradient():
    rng = np.random.default_rng(0)
    x, A = rng.standard_normal(4), rng.standard_normal((3, 4))
    H = s2s_ad.hessian(f_vec)(x, A)
    np.testing.assert_allclose(H, _fd_hessian(f_vec, x, A), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


def test_hvp_is_hessian_times_vector():
    rng = np.random.default_rng(1)
    x, A, v = rng.standard_normal(4), rng.standard_normal((3, 4)), rng.standard_normal(4)
    np.testing.assert_allclose(
        s2s_ad.hvp(f_vec)(x, A, v), s2s_ad.hessian(f_vec)(x, A) @ v, rtol=1e-10
    )


def test_jvp_of_grad_and_grad_of_grad_agree():
    x = 0.7
    forward_over_reverse = s2s_ad.jvp(s2s_ad.grad(f_poly), (x,), (1.0,))[1]
    reverse_over_reverse = s2s_ad.grad(s2s_ad.grad(f_poly))(x)
    assert forward_over_reverse == pytest.approx(reverse_over_reverse, rel=1e-12)


def seed_while(a):
    b = a * 2
    while np.linalg.norm(b) < 1000:
        b = b * 2
    if np.sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c


def test_higher_order_through_the_seed_while_loop():
    # c is linear in a along each path: the second derivative is zero
    assert s2s_ad.grad(seed_while)(0.37) == pytest.approx(seed_while(0.37) / 0.37)
    assert s2s_ad.grad(s2s_ad.grad(seed_while))(0.37) == pytest.approx(0.0)


def inner_loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def maml_objective(w, x_tr, y_tr, x_te, y_te):
    """One inner gradient step on the training batch, loss on the test batch (MAML)."""
    adapted = w - 0.1 * s2s_ad.grad(inner_loss)(w, x_tr, y_tr)
    return inner_loss(adapted, x_te, y_te)


def test_maml_inner_step_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    w = rng.standard_normal(3)
    batches = [rng.standard_normal((5, 3)), rng.standard_normal(5)] * 2
    s2s_ad.check_grads(maml_objective, [w, *batches])


def test_check_grads_order_two():
    s2s_ad.check_grads(f_poly, [0.8], order=2, modes=("fwd", "rev"))


def _corpus_second_order_cases():
    from corpus import collect

    # stop_gradient: finite differences of the gradient see through it (value identity);
    # the rest are refused cleanly at second order (dynamic calls whose pullback is a
    # closure, recursion through a lazy callee, varargs, rules without a second order)
    refused = {
        "scalars.stop_gradient_scalar",
        "vectors.stop_gradient_vector",
        "calls.callable_instance_argument",
        "calls.method_on_argument",
        "calls.function_argument_ufunc",
        "calls.function_argument_user",
        "calls.bound_method",
        "calls.callee_varargs",
        "calls.call_with_star_args",
        "calls.call_with_double_star_kwargs",
        "calls.staticmethod_call",
        "calls.object_created_inside",
        "calls.calls_grad_inside",
        "mutation.list_drained_by_pop",
        "mutation.dict_new_key_assignment",
        "mutation.recursion_power",
        "mutation.recursion_tree",
        "mutation.recursion_self",
        "mutation.mutual_recursion",
    }
    out = []
    for case in collect():
        if case.label in refused:
            continue
        point = next(iter(case.points))
        out.append(pytest.param(case, point, id=f"{case.label}[{point}]"))
    return out


@pytest.mark.parametrize(("case", "point"), _corpus_second_order_cases())
def test_hessian_vector_products_over_the_corpus(case, point):
    from fd import positions

    from s2s_ad.transforms import _jvp_wrt

    args = case.args(point)
    pos = positions(case.fun, case.wrt)[0][0]
    x = args[pos]
    if not isinstance(x, (float, np.ndarray)) or np.asarray(x).dtype != np.float64:
        pytest.skip("second order is checked on float64 arguments")
    gradient = s2s_ad.grad(case.fun, pos)
    v = np.random.default_rng(0).standard_normal(np.shape(x)) if np.shape(x) else 1.0
    _, hv = _jvp_wrt(gradient, args, [pos], [v])
    plus, minus = list(case.args(point)), list(case.args(point))
    plus[pos], minus[pos] = x + 1e-5 * v, x - 1e-5 * v
    fd = (np.asarray(gradient(*plus)) - np.asarray(gradient(*minus))) / 2e-5
    np.testing.assert_allclose(hv, fd, rtol=1e-4, atol=1e-5)
