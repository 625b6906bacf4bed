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

from typing import Any

import autograd
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.fd import numerical_grad
from tests.user_checks import autograd_twin as _twin
from tests.user_checks import check_program
from tests.user_checks import close as _close

RS = np.random.RandomState(53)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0) -> Any:
    return check_program(fun, args, wrt, rs=RS)


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


def test_calling_a_differentiated_object_differentiates_its_call():
    # a plain object passed in is a record of its attributes (tests/test_passed_objects.py)
    w, x = RS.randn(2), RS.randn(2)
    g = s2s_ad.grad(apply_model)(Scaler(w), x)
    assert type(g) is Scaler
    np.testing.assert_allclose(g.w, 2 * w * x**2, rtol=1e-12)
