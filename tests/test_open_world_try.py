"""``try``/``except``/``else``/``finally`` in differentiated functions: the path that
ran is a recorded branch (the body probed on the primal values first). Robust losses
that fall back from ``np.linalg.solve`` to ``lstsq``, or from a Cholesky factor to a
jittered one, are checked against finite differences in reverse and forward mode and
(where it exists) the Hessian; autograd runs the same code. What the probe cannot run
as Python does is refused with the user's line.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.fd import numerical_grad
from tests.test_open_world import _check, _close, _twin

RS = np.random.RandomState(3)


def robust_least_squares(A, y):
    try:
        z = np.linalg.solve(A, y)
    except np.linalg.LinAlgError:
        z = np.linalg.lstsq(A, y, rcond=None)[0]
    return np.sum(z**2) + 0.1 * np.sum(A**2)


def test_solve_that_succeeds_takes_the_body():
    A, y = RS.randn(3, 3) + 3 * np.eye(3), RS.randn(3)
    got = _check(robust_least_squares, (A, y))
    _close(got, autograd.grad(_twin(robust_least_squares))(A, y))
    _check(robust_least_squares, (A, y), wrt=1)


def test_solve_that_raises_falls_back_to_lstsq():
    # a tall matrix: solve raises LinAlgError (not square), lstsq gives the fit
    A, y = RS.randn(5, 3), RS.randn(5)
    got = _check(robust_least_squares, (A, y))

    def normal_equations(A, y):  # the same fit (full column rank), which autograd reaches
        z = anp.linalg.solve(A.T @ A, A.T @ y)
        return anp.sum(z**2) + 0.1 * anp.sum(A**2)

    _close(got, autograd.grad(normal_equations)(A, y))
    _check(robust_least_squares, (A, y), wrt=1)


def gp_log_marginal(log_ell, X, y):
    K = np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / np.exp(2 * log_ell))
    try:
        L = np.linalg.cholesky(K - 0.5 * np.eye(len(X)))
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K + 1e-2 * np.eye(len(X)))
    alpha = np.linalg.solve(L, y)
    return -0.5 * alpha @ alpha - np.sum(np.log(np.diag(L)))


def test_cholesky_with_jitter_fallback():
    X, y = np.linspace(0.0, 2.0, 5), RS.randn(5)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2) - 0.5 * np.eye(5))
    got = _check(gp_log_marginal, (0.0, X, y))
    _close(got, autograd.grad(_twin(gp_log_marginal))(0.0, X, y))


def safe_ratio(a, b):
    try:
        r = a / b
    except ZeroDivisionError:
        r = a * 1e3
    else:
        r = r + 1.0
    finally:
        scale = 2.0
    return scale * r**2


def test_else_and_finally_with_python_floats():
    _check(safe_ratio, (1.5, 0.7))
    _check(safe_ratio, (1.5, 0.7), wrt=1)
    _check(safe_ratio, (1.5, 0.0))
    assert s2s_ad.grad(safe_ratio, 1)(1.5, 0.0) == 0.0


def first_that_works(x, kind):
    try:
        if kind == "log":
            y = np.log(x)
        elif kind == "bad":
            y = x["key"]
        else:
            raise KeyError(kind)
    except KeyError:
        y = np.sqrt(x)
    except (TypeError, IndexError):
        y = x**3
    return np.sum(y * x)


def test_several_handlers_pick_the_one_that_catches():
    x = np.array([0.5, 1.5, 2.0])
    for kind in ("log", "bad", "other"):
        got = _check(lambda v, k=kind: first_that_works(v, k), (x,))
        _close(got, numerical_grad(first_that_works, (x, kind)))


def scalar_square(x):
    try:
        s = np.sum(x.reshape(1)) ** 2
    except KeyError:
        s = 0.0
    return s


def test_an_exception_no_handler_catches_propagates_as_in_python():
    with pytest.raises(ValueError) as plain:
        scalar_square(np.ones(2))
    with pytest.raises(ValueError) as info:
        s2s_ad.grad(scalar_square)(np.ones(2))
    assert str(info.value) == str(plain.value)
    # and one in a handler too (lstsq of mismatched shapes, after solve refused them)
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible dimensions"):
        s2s_ad.grad(robust_least_squares)(np.ones((2, 3)), np.ones(4))
    _close(s2s_ad.grad(scalar_square)(np.array([1.5])), [3.0])


def mlp_with_fallback(params, x):
    h = x
    for W, b in params:
        try:
            h = np.tanh(h @ W + b)
        except ValueError:
            h = np.tanh(h @ W[: h.shape[-1]] + b)
    return np.sum(h**2)


def test_try_inside_a_loop_of_an_mlp():
    params = [(RS.randn(3, 4), RS.randn(4)), (RS.randn(5, 2), RS.randn(2))]
    x = RS.randn(6, 3)
    got = s2s_ad.grad(mlp_with_fallback)(params, x)
    want = numerical_grad(mlp_with_fallback, (params, x))
    _close(got, want, 1e-5)
    _close(got, autograd.grad(_twin(mlp_with_fallback))(params, x))


def appends_in_try(xs):
    out = []
    for x in xs:
        try:
            out.append(np.log(x))
        except FloatingPointError:
            out.append(x)
    return sum(out)


def reads_the_exception(x):
    try:
        y = np.linalg.inv(x)
    except np.linalg.LinAlgError as err:
        y = x * len(str(err))
    return np.sum(y)


def returns_with_finally(x):
    try:
        return np.sum(np.log(x))
    except ValueError:
        return 0.0
    finally:
        x = None


def draws_in_try(x):
    try:
        y = x + np.random.normal(size=x.shape)
    except ValueError:
        y = x
    return np.sum(y**2)


@pytest.mark.parametrize(
    ("fun", "construct", "line"),
    [
        (appends_in_try, r"in-place method \.append\(\)", "out.append(np.log(x))"),
        (reads_the_exception, "exception 'err' read in its handler", "except np.linalg"),
        (returns_with_finally, "'return' inside a 'try' with a 'finally'", "return np.sum"),
        (draws_in_try, "random draw inside a 'try' body", "np.random.normal"),
    ],
)
def test_what_the_probe_cannot_run_twice_is_refused(fun, construct, line):
    with pytest.raises(TransformError, match=construct) as info:
        s2s_ad.grad(fun)(np.array([0.5, 2.0]))
    assert line in str(info.value)
    assert "test_open_world_try.py" in str(info.value)


def test_forward_mode_takes_the_same_path():
    A, y = RS.randn(5, 3), RS.randn(5)
    V = RS.randn(5, 3)
    _, tangent = s2s_ad.jvp(lambda a: robust_least_squares(a, y), (A,), (V,))
    g = s2s_ad.grad(robust_least_squares)(A, y)
    _close(tangent, np.sum(g * V))
