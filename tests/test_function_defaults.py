"""Lambdas whose defaults capture differentiated values (``lambda z, s=s: ...``), made in a
comprehension or a loop, kept in a list and called later: ensembles of feature maps,
layers bound to their weights, a default overridden at the call.

The lambda is made with ``None`` defaults and then ``_ad.with_defaults(fn, s)``; a call of
such a function value passes its defaults explicitly and differentiates them like
arguments (``s2s_ad/rules/defaults.py``). Checked against central finite differences in
reverse and forward mode, the Hessian-vector product, ``grad(grad)``, ``hessian``, the
optimizer off and autograd running the same source. A lambda that reads a differentiated
value from its closure (late binding) stays refused.
"""

from __future__ import annotations

import types
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError, optimize
from s2s_ad.api import clear_cache
from s2s_ad.transforms import _jvp_wrt
from tests.fd import flatten, numerical_grad, unflatten

RS = np.random.RandomState(53)


def _close(got: Any, want: Any, tol: float = 1e-6) -> None:
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=tol, atol=tol)


def _twin(fun: Any) -> Any:
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0) -> Any:
    got = s2s_ad.grad(fun, wrt)(*args)
    fd = numerical_grad(fun, args, wrt)
    _close(got, fd, 1e-5)
    _close(got, autograd.grad(_twin(fun), wrt)(*args), 1e-9)
    v = unflatten(args[wrt], RS.standard_normal(flatten(args[wrt]).size))
    value, dout = _jvp_wrt(fun, args, (wrt,), [v])
    _close(value, fun(*args))
    _close(dout, float(flatten(fd) @ flatten(v)), 1e-5)
    g = s2s_ad.grad(fun, wrt)
    x0, d, h = flatten(args[wrt]), flatten(v), 1e-5

    def at(x: np.ndarray) -> np.ndarray:
        shifted = list(args)
        shifted[wrt] = unflatten(args[wrt], x)
        return flatten(g(*shifted))

    _close(s2s_ad.hvp(fun, wrt)(*args, v), (at(x0 + h * d) - at(x0 - h * d)) / (2 * h), 1e-4)
    saved = optimize.ENABLED
    optimize.ENABLED = False
    clear_cache()
    try:
        _close(s2s_ad.grad(fun, wrt)(*args), got, 1e-12)
    finally:
        optimize.ENABLED = saved
        clear_cache()
    return got


def layer_ensemble(params, x, y):
    """One dense layer per ``(W, b)`` made as a lambda with its weights as defaults; the
    ensemble's mean prediction against the targets."""
    members = [lambda h, W=W, b=b: np.tanh(h @ W + b) for W, b in params]
    preds = [member(x) for member in members]
    mean = sum(preds) / len(preds)
    return np.mean((mean - y) ** 2)


def test_an_ensemble_of_layers_bound_by_defaults():
    params = [(0.5 * RS.randn(3, 2), 0.1 * RS.randn(2)) for _ in range(3)]
    got = _check(layer_ensemble, (params, RS.randn(4, 3), RS.randn(4, 2)))
    assert got[2][0].shape == (3, 2)
    _check(layer_ensemble, (params, RS.randn(4, 3), RS.randn(4, 2)), wrt=1)


def scaled_features(a, x):
    """Lambdas made in a loop, one default computed from ``a`` and one constant default
    that a call overrides."""
    feats = []
    for k in range(3):
        feats.append(lambda z, c=a * (k + 1), d=2.0: np.sin(c * z) + d)
    total = 0.0
    for f in feats:
        total = total + f(x) * f(x, d=0.5) + f(x, a)
    return total


def test_defaults_computed_in_a_loop_and_overridden_at_the_call():
    _check(scaled_features, (0.7, 1.3))
    _check(scaled_features, (0.7, 1.3), wrt=1)


def test_second_derivatives_through_the_defaults():
    fd = numerical_grad(s2s_ad.grad(scaled_features), (0.7, 1.3), 0)
    _close(s2s_ad.grad(s2s_ad.grad(scaled_features))(0.7, 1.3), fd, 1e-5)
    _close(s2s_ad.hessian(scaled_features)(0.7, 1.3), fd, 1e-5)
    twin = autograd.grad(autograd.grad(_twin(scaled_features)))
    _close(s2s_ad.hessian(scaled_features)(0.7, 1.3), twin(0.7, 1.3), 1e-9)


def late_binding(scales, x):
    feats = []
    for s in scales:
        feats.append(lambda z: np.tanh(s * z))  # noqa: B023 (late binding, on purpose)
    return sum(np.sum(f(x)) for f in feats)


def test_a_lambda_reading_a_differentiated_value_from_its_closure_is_refused():
    with pytest.raises(TransformError, match="lambda used as a value"):
        s2s_ad.grad(late_binding)([0.5, 1.5], RS.randn(3))


class Scaler:
    def __init__(self, w: np.ndarray) -> None:
        self.w = w

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.w * x


def apply_model(model, x):
    return np.sum(model(x) ** 2)


def test_calling_a_differentiated_object_is_refused_at_the_users_function():
    with pytest.raises(TransformError, match=r"(?s)a Scaler object.*test_function_defaults\.py"):
        s2s_ad.grad(apply_model)(Scaler(np.ones(2)), RS.randn(2))
