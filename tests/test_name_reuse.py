"""One name reused for unrelated values in user code (``norm_split``): a local ``def``
then the gradient of an inner step, a config dict's keys then ``np.roll``'s shift, a
lambda then a float. Each is checked against finite differences (reverse, forward,
second order) and autograd; the traps check that what is one variable across loop
trips, branches and closures stays one."""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2s_ad

RS = np.random.RandomState(7)


def _mlp():
    return [(0.4 * RS.randn(4, 4), 0.3 * RS.randn(4)) for _ in range(2)]


def _check(fun, args):
    s2s_ad.check_grads(fun, args, modes=("rev", "fwd"))
    s2s_ad.check_grads(fun, args, order=2)


def _autograd_copy(fun):
    """``fun`` running on autograd's NumPy (the same code, ``np`` rebound)."""
    anp = pytest.importorskip("autograd.numpy")
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__)


def _against_autograd(fun, args, argnum=0):
    autograd = pytest.importorskip("autograd")
    want = autograd.grad(_autograd_copy(fun), argnum)(*args)
    got = s2s_ad.grad(fun, argnum)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


# --- the reuses the fuzzing found ----------------------------------------------------------


def inner_steps(x, params):
    """An MLP whose output is refined by two gradient steps: ``g`` is first the
    activation, then the gradient of the inner objective."""
    (W1, b1), (W2, b2) = params
    h = x * 1.0

    def g(u, c=0.5):
        return np.tanh(u * c)

    h = g(W1 @ h + b1)
    for _ in range(2):
        g = 2.0 * (h - b2)
        h = h - 0.1 * g
    return np.sum((W2 @ h) ** 2)


def test_a_local_function_name_reused_for_the_gradient_of_a_step():
    params, x = _mlp(), RS.randn(4)
    _check(lambda x: inner_steps(x, params), (x,))
    _against_autograd(inner_steps, (x, params))


def test_the_renamed_binding_keeps_the_user_name_first_and_the_user_line():
    params, x = _mlp(), RS.randn(4)
    grad = s2s_ad.grad(inner_steps)
    grad(x, params)
    text = s2s_ad.source(grad)
    assert "g_2 = 2.0 * " in text
    assert ": g = 2.0 * (h - b2)" in text  # the comment shows the line as the user wrote it
    assert "h_2" not in text and "x_2" not in text  # names not reused keep theirs


def config_roll(x, cfg):
    """Weights read by key from a config dict, then a fixed circular shift: ``k`` is the
    key, then the shift."""
    h = x * 1.0
    for k in cfg:
        h = h * cfg[k] + 0.1
    k = 2
    s = np.sum(np.roll(h, k) * h)
    rows = []
    for k in range(3):
        rows.append(np.roll(h, k) * cfg["scale"])
    return s + np.sum(np.stack(rows) ** 2)


def test_a_dict_key_name_reused_for_np_roll_shifts():
    x = RS.randn(5)
    cfg = {"scale": 1.3, "w": RS.randn(5)}
    _check(config_roll, (x, cfg))
    _against_autograd(config_roll, (x, cfg))
    s2s_ad.check_grads(lambda w: config_roll(x, {"scale": 1.3, "w": w}), (cfg["w"],))


def lambda_then_scale(x, W):
    a = lambda u: np.sin(u) * 2.0  # noqa: E731
    h = a(W @ x) + 0.1
    for i in range(2):
        a = 0.5 * (i + 1.0) * np.mean(h)
        h = h * a + h
    return np.sum(h**2)


def accumulated(x, params):
    """``act`` a lambda then a running total built with ``+=`` (one variable)."""
    act = lambda u: np.tanh(u)  # noqa: E731
    s = 0.0
    for W, b in params:
        x = act(W @ x + b)
        s += np.sum(x**2)
    act = 0.0
    for W, _ in params:
        act += np.sum(W @ x)
    act *= 0.5
    return s + act**2


def test_a_lambda_name_reused_for_a_total_built_with_augmented_assignments():
    params, x = _mlp(), RS.randn(4)
    _check(lambda x: accumulated(x, params), (x,))
    _against_autograd(accumulated, (x, params))


def test_a_lambda_name_reused_for_a_float():
    x, W = RS.randn(4), 0.5 * RS.randn(4, 4)
    _check(lambda_then_scale, (x, W))
    _against_autograd(lambda_then_scale, (x, W))
    _against_autograd(lambda_then_scale, (x, W), argnum=1)


class Dense:
    """A Keras-style layer whose call defines its activation and then reuses the name."""

    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        def act(u):
            return np.maximum(u, 0.0) + 0.1 * np.tanh(u)

        z = act(self.W @ x + self.b)
        act = np.mean(z)  # then the mean activation
        return z - 0.5 * act


def test_a_method_reusing_its_activation_name():
    layer = Dense(0.5 * RS.randn(4, 4), 0.3 * RS.randn(4))
    x = RS.randn(4)

    def loss(x):
        return np.sum(layer(x) ** 2)

    _check(loss, (x,))


# --- traps: what is one variable must stay one -------------------------------------------


def carried_across_trips(x):
    """``g`` rebound at the end of the loop body is read at its top on the next trip: one
    variable with ``g = h * 0.0`` before the loop (and unrelated to the ``def g``)."""

    def g(u):
        return np.tanh(u)

    h = g(x)
    g = h * 0.0
    for _ in range(3):
        h = h + 0.3 * g
        g = np.sin(h) * h
    return np.sum(h**2) + np.sum(g)


def test_a_name_read_on_the_next_trip_is_one_variable():
    x = RS.randn(4)
    _check(carried_across_trips, (x,))
    _against_autograd(carried_across_trips, (x,))


def rebound_in_one_branch(x, cfg):
    for k in cfg:
        x = x * cfg[k]
    k = 1
    if np.sum(x) > 0.0:
        k = 2
    return np.sum(np.roll(x, k) * x)


def test_a_name_rebound_in_one_branch_only():
    cfg = {"a": 1.5, "b": 0.5}
    for x in (np.abs(RS.randn(5)), -np.abs(RS.randn(5))):
        _check(rebound_in_one_branch, (x, cfg))
        _against_autograd(rebound_in_one_branch, (x, cfg))


def closure_reads_later(x):
    """``scale`` reads ``c`` when called: the value bound after the ``def``."""
    c = lambda u: u * 3.0  # noqa: E731
    h = c(x)

    def scale(u):
        return u * c

    c = np.mean(h) * 0.5
    return np.sum(scale(h) ** 2)


def test_a_closure_reading_a_name_rebound_after_the_def():
    x = RS.randn(4)
    _check(closure_reads_later, (x,))
    _against_autograd(closure_reads_later, (x,))


def zero_trip_keeps_the_def(x, n):
    """``g`` after the loop is the ``def`` when the loop runs no trip: one name, refused
    as before (a local function also assigned), never split."""

    def g(u):
        return u * 2.0

    for _ in range(n):
        g = x * 0.5  # noqa: F811 (the def, when the loop runs no trip)
    return np.sum(g if n else g(x))


def test_a_name_that_may_still_be_the_def_after_a_loop_is_not_split():
    with pytest.raises(s2s_ad.TransformError, match="local function g also assigned") as info:
        s2s_ad.grad(zero_trip_keeps_the_def)(RS.randn(4), 2)
    assert info.value.lineno == zero_trip_keeps_the_def.__code__.co_firstlineno + 4
