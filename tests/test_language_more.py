"""More of the language on programs users bring: ``enumerate(xs, start)``, comprehension
variables named like the function's locals, starred assignment targets, namedtuple
parameters, ``functools.reduce`` and attribute stores on model objects.

Each gradient is checked against central finite differences in reverse and forward mode,
and against autograd running the same code where it can.
"""

from __future__ import annotations

import functools
import types
from collections import namedtuple
from functools import reduce
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from s2s_ad.transforms import _jvp_wrt
from tests.fd import flatten, numerical_grad, unflatten

RS = np.random.RandomState(5)


def _close(got: Any, want: Any, tol: float = 1e-6) -> None:
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=tol, atol=tol)


def _twin(fun: Any) -> Any:
    """``fun`` with ``np`` bound to autograd's NumPy: the same code for the second oracle."""
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__)


def _autograd(fun: Any, args: tuple[Any, ...], wrt: int = 0) -> Any:
    return autograd.grad(_twin(fun), wrt)(*args)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0, hvp: bool = True) -> Any:
    """Reverse and forward mode against finite differences (and the hvp against differences
    of the gradient); returns the gradient."""
    got = s2s_ad.grad(fun, wrt)(*args)
    fd = numerical_grad(fun, args, wrt)
    _close(got, fd, 1e-5)
    v = unflatten(args[wrt], np.random.RandomState(3).standard_normal(flatten(args[wrt]).size))
    value, dout = _jvp_wrt(fun, args, (wrt,), [v])
    _close(value, fun(*args))
    _close(dout, float(flatten(fd) @ flatten(v)), 1e-5)
    if hvp:
        got_h = s2s_ad.hvp(fun, wrt)(*args, v)
        g = s2s_ad.grad(fun, wrt)
        x0, d, h = flatten(args[wrt]), flatten(v), 1e-5

        def at(x: np.ndarray) -> np.ndarray:
            shifted = list(args)
            shifted[wrt] = unflatten(args[wrt], x)
            return flatten(g(*shifted))

        _close(got_h, (at(x0 + h * d) - at(x0 - h * d)) / (2 * h), 1e-4)
    return got


# --- enumerate with a start -------------------------------------------------------------


def welford(xs):
    mean = 0.0
    m2 = 0.0
    for k, x in enumerate(xs, start=1):
        delta = x - mean
        mean += delta / k
        m2 += delta * (x - mean)
    return mean**2 + m2 / (len(xs) - 1)


def weighted_rows(X, w):
    total = 0.0
    for i, row in enumerate(X, 2):
        total = total + i * np.sum(np.sin(row * w))
    return total


def test_enumerate_start_keyword():
    xs = list(RS.randn(6))
    _check(welford, (xs,))
    _close(s2s_ad.grad(welford)(xs), _autograd(welford, (xs,)))


def test_enumerate_start_positional_counts_from_start():
    X, w = RS.randn(4, 3), RS.randn(3)
    got = _check(weighted_rows, (X, w), wrt=1)
    want = sum((i + 2) * np.cos(X[i] * w) * X[i] for i in range(4))
    _close(got, want)
    _close(got, _autograd(weighted_rows, (X, w), 1))


# --- comprehension variables have their own scope ---------------------------------------


def tied_mlp(Ws, x):
    for W in Ws:
        x = np.tanh(W @ x)
    return np.sum(x**2) + 0.1 * sum(np.sum(W**2) for W in Ws)


def shadowed_parameter(x, ws):
    # ``x`` in the comprehension is not the parameter x
    feats = [np.sum(np.exp(-x)) for x in ws]
    return np.sum(x**3) + sum(feats) * np.sum(x)


def test_comprehension_variable_named_like_a_differentiated_local():
    Ws = [0.5 * RS.randn(3, 3), 0.5 * RS.randn(3, 3)]
    x = RS.randn(3)
    got = _check(tied_mlp, (Ws, x))
    _close(got, _autograd(tied_mlp, (Ws, x)))
    _close(s2s_ad.grad(tied_mlp, 1)(Ws, x), _autograd(tied_mlp, (Ws, x), 1))


def test_comprehension_variable_named_like_a_parameter():
    x, ws = RS.randn(3), [RS.randn(2), RS.randn(2)]
    got = _check(shadowed_parameter, (x, ws))
    s = sum(np.sum(np.exp(-w)) for w in ws)
    _close(got, 3 * x**2 + s)
    _close(
        s2s_ad.grad(shadowed_parameter, 1)(x, ws), numerical_grad(shadowed_parameter, (x, ws), 1)
    )


# --- starred assignment -----------------------------------------------------------------


def affine(x, *weights_and_bias):
    *pairs, b = weights_and_bias
    out = b
    for i in range(0, len(pairs), 2):
        out = out + pairs[i] @ pairs[i + 1]
    return out + 0.0 * np.sum(x)


def gated(x, W1, W2, W3, b):
    return np.sum(np.tanh(affine(x, x, W1, x, W2, x @ W3, np.eye(2), b)) ** 2)


def head_and_tail(xs):
    first, *rest = xs
    *init, last = xs
    a, *mid, z = xs
    assert isinstance(rest, list) and isinstance(init, list)
    return first * sum(rest) + last * np.sin(sum(init)) + a * z * len(mid) + sum(mid) ** 2


def test_starred_target_in_a_model():
    x = RS.randn(3)
    W1, W2, W3, b = RS.randn(3, 2), RS.randn(3, 2), RS.randn(3, 2), RS.randn(2)
    for pos in (1, 2, 3, 4):
        got = _check(gated, (x, W1, W2, W3, b), wrt=pos)
        _close(got, _autograd(gated, (x, W1, W2, W3, b), pos))
    _check(gated, (x, W1, W2, W3, b), wrt=0)


def test_starred_targets_bind_lists_and_elements():
    xs = list(RS.randn(5))
    _check(head_and_tail, (xs,))
    _check(head_and_tail, (tuple(xs),))
    _close(s2s_ad.grad(head_and_tail)(xs), _autograd(head_and_tail, (xs,)))


def test_starred_target_too_short_raises_like_python():
    with pytest.raises(ValueError, match="not enough values to unpack"):
        s2s_ad.grad(head_and_tail)([1.0])


# --- namedtuple parameters --------------------------------------------------------------

Layer = namedtuple("Layer", ["W", "b"])


def namedtuple_mlp(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(np.log1p(h**2))


def one_layer(layer, x):
    return np.sum(np.sin(x @ layer.W) * layer.b) + np.sum(layer.W**2) + layer[1] @ layer.b


def test_namedtuple_fields_are_differentiated():
    layers = [Layer(RS.randn(3, 4), RS.randn(4)), Layer(RS.randn(4, 2), RS.randn(2))]
    x = RS.randn(5, 3)
    got = _check(namedtuple_mlp, (layers, x))
    assert all(type(g) is Layer for g in got)
    plain = [tuple(layer) for layer in layers]

    def as_tuples(params, x):
        return namedtuple_mlp([Layer(*p) for p in params], x)

    _close(got, numerical_grad(as_tuples, (plain, x)))


def test_namedtuple_gradient_has_the_namedtuple_type():
    layer, x = Layer(RS.randn(3, 2), RS.randn(2)), RS.randn(4, 3)
    g = _check(one_layer, (layer, x))
    assert type(g) is Layer
    want_W = x.T @ (np.cos(x @ layer.W) * layer.b) + 2 * layer.W
    _close(g.W, want_W)
    want_b = np.sum(np.sin(x @ layer.W), axis=0) + 2 * layer.b
    _close(g.b, want_b)


class Holder:
    def __init__(self, W):
        self.W = W


def object_attribute(obj):
    return np.sum(obj.W**2)


def test_attribute_of_a_differentiated_plain_object():
    # a plain object passed in: a record of its attributes, its gradient a Holder
    W = RS.randn(2)
    g = s2s_ad.grad(object_attribute)(Holder(W))
    assert type(g) is Holder
    _close(g.W, 2 * W)


# --- functools.reduce -------------------------------------------------------------------


def chain_product(mats, v):
    M = functools.reduce(lambda A, B: A @ B, mats)
    return v @ M @ v


def _matmul(A, B):
    return A @ B


def chain_named(mats, v):
    return np.sum(np.tanh(reduce(_matmul, mats, np.diag(v))))


def sum_sq(xs):
    return reduce(lambda acc, x: acc + x**2, xs, 0.0)


def test_reduce_with_a_lambda():
    mats, v = [0.5 * RS.randn(3, 3) for _ in range(3)], RS.randn(3)
    got = _check(chain_product, (mats, v))
    _close(got, _autograd(chain_product, (mats, v)))
    _check(chain_product, (mats, v), wrt=1)


def test_reduce_with_a_function_and_an_initial_value():
    mats, v = [0.5 * RS.randn(3, 3) for _ in range(2)], RS.randn(3)
    _check(chain_named, (mats, v))
    _check(chain_named, (mats, v), wrt=1)
    _close(s2s_ad.grad(chain_named)(mats, v), _autograd(chain_named, (mats, v)))
    xs = list(RS.randn(4))
    _close(s2s_ad.grad(sum_sq)(xs), [2 * x for x in xs])


def test_reduce_of_an_empty_list_raises_like_python():
    with pytest.raises(TypeError, match="empty iterable"):
        s2s_ad.grad(chain_product)([], np.ones(3))


# --- attribute stores on model objects --------------------------------------------------


class Dense:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W)


def put_weights(weights, layers, x):
    for layer, W in zip(layers, weights):
        layer.W = W
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h**2)


def test_attribute_store_of_a_differentiated_value_is_differentiated():
    """``layer.W = W`` then ``layer(h)``: the attribute is state the backward sweep models
    (tests/test_object_state.py has more); the layers hold the weights afterwards."""
    layers = [Dense(RS.randn(3, 3)), Dense(RS.randn(3, 2))]
    weights = [RS.randn(3, 3), RS.randn(3, 2)]
    x = RS.randn(4, 3)
    got = s2s_ad.grad(put_weights)(weights, layers, x)
    assert all(layer.W is w for layer, w in zip(layers, weights))

    def plain(ws):
        return put_weights(ws, [Dense(w) for w in ws], x)

    _close(got, numerical_grad(plain, (weights,), 0), 1e-5)


def test_the_tape_over_variable_attributes_gives_the_same_gradient():
    """Variable attributes and a GradientTape on the same model: the gradient equals the
    one of the stores, and finite differences."""
    weights = [RS.randn(3, 3), RS.randn(3, 2)]
    x = RS.randn(4, 3)
    stored = s2s_ad.grad(put_weights)(weights, [Dense(w) for w in weights], x)
    layers = [Dense(s2s_ad.Variable(w)) for w in weights]
    with s2s_ad.GradientTape() as tape:
        h = x
        for layer in layers:
            h = layer(h)
        loss = np.sum(h**2)
    got = tape.gradient(loss, [layer.W for layer in layers])

    def plain(ws):
        return put_weights(ws, [Dense(w) for w in ws], x)

    _close([np.asarray(g) for g in got], numerical_grad(plain, (weights,), 0), 1e-5)
    _close(stored, [np.asarray(g) for g in got], 1e-10)


def count_calls(state, x):
    state.calls = state.calls + 1  # bookkeeping: not a differentiated value
    return np.sum(x**2)


def test_attribute_store_of_state_still_runs():
    state = Holder(None)
    state.calls = 0
    x = RS.randn(3)
    _close(s2s_ad.grad(count_calls, 1)(state, x), 2 * x)
    assert state.calls >= 1


# --- lambdas made in a comprehension ----------------------------------------------------


def lambda_ensemble(scales, x):
    feats = [lambda z, s=s: np.tanh(s * z) for s in scales]
    return sum(np.sum(f(x) ** 2) for f in feats)


def test_lambdas_from_a_comprehension_called_on_a_differentiated_value():
    scales, x = [0.5, 1.5, -0.7], RS.randn(4)
    got = _check(lambda_ensemble, (scales, x), wrt=1)
    _close(got, _autograd(lambda_ensemble, (scales, x), 1))


def test_lambdas_capturing_a_differentiated_value_as_a_default():
    scales, x = [0.5, 1.5, -0.7], RS.randn(4)
    got = _check(lambda_ensemble, (scales, x), wrt=0)
    _close(got, _autograd(lambda_ensemble, (scales, x), 0))


def late_binding_ensemble(scales, x):
    feats = [lambda z: np.tanh(s * z) for s in scales]  # noqa: B023 (all see the last s)
    return sum(np.sum(f(x) ** 2) for f in feats)


def test_lambdas_reading_a_differentiated_value_from_their_closure_are_refused():
    with pytest.raises(TransformError, match="lambda used as a value"):
        s2s_ad.grad(late_binding_ensemble, 0)([0.5, 1.5], RS.randn(4))
