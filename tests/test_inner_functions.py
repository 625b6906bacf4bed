"""Functions defined inside the differentiated function, as people write them: a recurrent
cell closing over the weights, a helper called with keywords and defaults, a logging
helper that appends to a list, helpers calling helpers. Checked against finite
differences, to second order."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError, check_grads, grad, hvp
from tests.fd import flatten, numerical_grad

RNG = np.random.default_rng(5)


def rnn_loss(params, xs, target):
    W, U, b = params

    def cell(h, x):
        pre = W @ h + U @ x + b
        h = np.tanh(pre)
        return h

    h = np.zeros(W.shape[0])
    for x in xs:
        h = cell(h, x)
    return np.sum((h - target) ** 2)


def lstm_loss(p, xs):
    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def step(h, c, x):
        gates = p["W"] @ np.concatenate([h, x]) + p["b"]
        n = h.shape[0]
        i = sigmoid(gates[:n])
        f = sigmoid(gates[n : 2 * n])
        o = sigmoid(gates[2 * n : 3 * n])
        g = np.tanh(gates[3 * n :])
        c = f * c + i * g
        h = o * np.tanh(c)
        return h, c

    h, c = np.zeros(2), np.zeros(2)
    for t in range(xs.shape[0]):
        h, c = step(h, c, xs[t])
    return np.sum(h**2) + 0.1 * np.sum(c)


def test_rnn_cell_defined_inside_the_loss():
    params = (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(3, 2)), RNG.normal(size=3))
    xs = [RNG.normal(size=2) for _ in range(4)]
    target = RNG.normal(size=3)
    g = grad(rnn_loss)(params, xs, target)
    assert type(g) is tuple and len(g) == 3
    np.testing.assert_allclose(
        flatten(g), flatten(numerical_grad(rnn_loss, (params, xs, target), 0)), rtol=1e-5, atol=1e-7
    )


def test_lstm_step_and_gate_helpers_defined_inside_the_loss():
    p = {"W": RNG.normal(size=(8, 4)) * 0.5, "b": RNG.normal(size=8) * 0.1}
    xs = RNG.normal(size=(3, 2))
    g = grad(lstm_loss)(p, xs)
    assert g.keys() == p.keys()
    np.testing.assert_allclose(
        flatten(g), flatten(numerical_grad(lstm_loss, (p, xs), 0)), rtol=1e-5, atol=1e-7
    )


def closure_over_a_rebound_name(x):
    scale = 2.0

    def g(u, k=3.0):
        v = u * scale
        w = np.sin(v) * k
        return w

    a = g(x)
    scale = 0.5  # the closure reads the name when it is called
    b = g(x, k=1.5)
    return np.sum(a * b)


def helper_that_records(x):
    hist = []

    def record(v):
        hist.append(v * 2.0)

    for i in range(3):
        record(x * i)
    return np.sum(hist[1] * hist[2])


def helpers_calling_helpers(x):
    def sq(u):
        t = u * u
        return t

    def quad(u):
        s = sq(u)
        return s * s

    return np.sum(quad(x))


@pytest.mark.parametrize(
    "f", [closure_over_a_rebound_name, helper_that_records, helpers_calling_helpers]
)
def test_local_helpers_to_second_order(f):
    x = np.array([0.3, -0.4, 1.2])
    check_grads(f, [x], order=2)


def test_hessian_vector_product_through_an_inner_cell():
    xs = [RNG.normal(size=2) for _ in range(3)]
    target = RNG.normal(size=3)
    U, b = RNG.normal(size=(3, 2)), RNG.normal(size=3)

    def loss_of_w(w):
        return rnn_loss((w.reshape(3, 3), U, b), xs, target)

    w, v = RNG.normal(size=9) * 0.5, RNG.normal(size=9)
    eps = 1e-5
    want = (grad(loss_of_w)(w + eps * v) - grad(loss_of_w)(w - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp(loss_of_w)(w, v), want, rtol=1e-5, atol=1e-7)


def recursive_local(x):
    def down(u, n):
        y = u * 0.5
        return down(y, n - 1) if n > 0 else y

    return down(x, 3)


def local_function_as_a_value(x):
    def sq(u):
        t = u * u
        return t

    fs = [sq]
    return fs[0](x)


def early_return_local(x):
    def clipped(u):
        for v in u:
            if v > 1.0:
                return
            yield v

    return sum(clipped([x, 2.0 * x]))


@pytest.mark.parametrize(
    "f, message",
    [
        (recursive_local, "recursive call of the local function down"),
        (local_function_as_a_value, "local function sq used as a value"),
        (early_return_local, "generator that returns before its last statement"),
    ],
)
def test_local_functions_we_do_not_inline_are_refused(f, message):
    with pytest.raises(TransformError, match=message) as info:
        grad(f)(0.7)
    assert "test_inner_functions.py" in str(info.value)


def test_hessian_vector_product_of_an_rnn_started_from_zeros():
    """The state enters the loop without a tangent and gets one on the first trip: its
    tangent at loop entry is dense zeros, which the matrix product reads."""
    U, b = RNG.normal(size=(3, 2)), RNG.normal(size=3)
    xs = [RNG.normal(size=2) for _ in range(3)]

    def loss(w):
        W = w.reshape(3, 3)
        h = np.zeros(3)
        for x in xs:
            h = np.tanh(W @ h + U @ x + b)
        return np.sum(h**2)

    w, v = RNG.normal(size=9) * 0.5, RNG.normal(size=9)
    eps = 1e-5
    want = (grad(loss)(w + eps * v) - grad(loss)(w - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp(loss)(w, v), want, rtol=1e-5, atol=1e-7)


# --- closures returned by a function of a differentiated value ----------------------------


def make_step(a, scale=2.0):
    shift = a * scale

    def step(x):
        return np.tanh(x * a + shift)

    return step


def repeated_steps(a, x):
    step = make_step(a)
    total = 0.0
    for _ in range(3):
        total = total + np.sum(step(x) ** 2)
    return total


def make_cell(W, b):
    def cell(h, x):
        return np.tanh(h @ W + x + b)

    return cell


def rnn_from_factory(W, b, xs):
    cell = make_cell(W, b)
    h = np.zeros(W.shape[0])
    for x in xs:
        h = cell(h, x)
    return np.sum(h**2)


def two_closures(a, b, x):
    up = make_step(a)
    down = make_step(b, scale=-1.0)
    return np.sum(up(x) * down(x))


def closure_passed_on(a, x):
    step = make_step(a)
    return np.sum(list(map(step, [x, 2 * x]))[0])


def test_closure_returned_by_a_factory_both_modes_and_second_order():
    x = RNG.normal(size=4)
    check_grads(repeated_steps, (0.7, x), order=2)
    check_grads(repeated_steps, (0.7, x), modes=("fwd",))


def test_rnn_cell_made_by_a_factory():
    W, b, xs = 0.5 * RNG.normal(size=(3, 3)), RNG.normal(size=3), RNG.normal(size=(5, 3))
    check_grads(rnn_from_factory, (W, b, xs), order=2)
    source = s2s_ad.source(s2s_ad.grad(rnn_from_factory))
    assert "# L" in source and "cell_def_h" in source


def test_two_closures_from_one_factory_keep_their_own_values():
    x = RNG.normal(size=3)
    grads = s2s_ad.grad(two_closures, wrt=(0, 1))(0.4, -0.3, x)
    expected = [numerical_grad(two_closures, (0.4, -0.3, x), i) for i in (0, 1)]
    np.testing.assert_allclose(grads, expected, rtol=1e-6, atol=1e-8)


def test_closure_passed_to_map():
    """``map(step, xs)`` calls the closure once per item, each call differentiated."""
    check_grads(closure_passed_on, (0.5, RNG.normal(size=2)), order=2, modes=("rev", "fwd"))


def make_newton_step(a):
    def step(x):
        return 0.5 * (x + a / x)

    return step


def square_root(a):
    """A fixed-point iteration whose step function is returned by a helper."""
    step = make_newton_step(a)
    x = 1.0
    while abs(step(x) - x) > 1e-12:
        x = step(x)
    return x


def test_fixed_point_iteration_with_a_step_from_a_factory():
    for a in (2.0, 9.0, 0.3):
        assert grad(square_root)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-8)
        assert grad(grad(square_root))(a) == pytest.approx(-0.25 * a**-1.5, rel=1e-6)
