"""Values a loop records once per trip go into a list of their own (``s2s_ad/trip_records.py``).

The forward loop appends each trip's value after assigning it, the backward loop walks the
list with ``zip(..., reversed(records))`` in its header: no tape pop per trip. Each case is
checked against central finite differences (and autograd where it reaches), with the
optimizer on and off, through ``grad`` and through a ``vjp`` pullback (the sweeps split
into two functions that pass the lists on the tape).
"""

from __future__ import annotations

import math
import re

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from fd import flatten

import s2s_ad
from s2s_ad import check_grads, optimize
from s2s_ad.api import clear_cache

RNG = np.random.default_rng(11)


def branchy_decay(x, n):
    s = x
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + math.sin(x * i)
        else:
            s = s + x * x
    return s


def rnn(params, xs, h0):
    (Wx, Wh, b), (V, c) = params
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    out = h @ V + c
    return np.sum(out**2)


def nested(A, w):
    total = 0.0
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            z = np.sin(A[i, j] * w)
            acc = acc * 0.9 + z * z
        total = total + np.tanh(acc)
    return total


def old_value_read_later(x, w):
    t = x * w
    u = np.sin(t)  # its adjoint reads t from before the loop
    for k in range(3):
        t = np.cos(t) * w + u * k
    return np.sum(t * u)


class Cell:
    """A Keras-style recurrent cell: weights on the instance, a step method."""

    def __init__(self, W: np.ndarray, U: np.ndarray) -> None:
        self.W, self.U = W, U

    def run(self, xs, h):
        for t in range(xs.shape[0]):
            pre = xs[t] @ self.W + h @ self.U
            h = np.where(pre > 0, pre, 0.1 * pre)
        return np.sum(h**2)


def _with_optimizer(enabled: bool, fun, *args, wrt=0):
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        return s2s_ad.grad(fun, wrt)(*args)
    finally:
        optimize.ENABLED = saved
        clear_cache()


def _rnn_params():
    Wx = RNG.standard_normal((3, 4)) * 0.5
    Wh = RNG.standard_normal((4, 4)) * 0.5
    b = RNG.standard_normal(4) * 0.1
    V = RNG.standard_normal((4, 2))
    c = RNG.standard_normal(2)
    return [(Wx, Wh, b), (V, c)]


def test_branch_flags_walked_from_their_list():
    df = s2s_ad.grad(branchy_decay)
    g = df(0.9, 200)
    text = s2s_ad.source(df)
    # a flag per trip of range(n), a byte each: the bytes are made whole, the trips that
    # take the branch set their entry; trip i of reversed(range(n)) reads entry i
    assert re.search(r"_t\d+_tape = bytearray\(n\)\n", text)
    assert re.search(r"if s > 1\.0:\n\s+_t\d+_tape\[i\] = 1\n", text)
    assert re.search(
        r"for i in reversed\(range\(n\)\):\n\s+# L\d+: .*\n\s+if _t\d+_tape\[i\]:", text
    )
    backward = text.split("# backward sweep")[1]
    # no pop at all: both loops are at the top of the function, the list stays a local
    assert ".pop()" not in backward and not re.search(r"^\s+_tape = \[\]", text, re.M)
    assert g == pytest.approx(_with_optimizer(False, branchy_decay, 0.9, 200), rel=0, abs=0)
    check_grads(branchy_decay, (0.9, 200))
    check_grads(branchy_decay, (1.7, 40))


def test_rnn_params_through_grad_and_pullback():
    params = _rnn_params()
    xs = RNG.standard_normal((6, 5, 3))
    h0 = np.zeros((5, 4))
    check_grads(rnn, (params, xs, h0))
    on = s2s_ad.grad(rnn)(params, xs, h0)
    off = _with_optimizer(False, rnn, params, xs, h0)
    np.testing.assert_array_equal(flatten(on), flatten(off))
    expected = autograd.grad(lambda p: _anp_rnn(p, xs, h0))(params)
    np.testing.assert_allclose(flatten(on), flatten(expected), rtol=1e-9)
    out, pullback = s2s_ad.vjp(rnn, params, xs, h0)
    sweeps = s2s_ad.source(pullback)  # rnn_fwd and rnn_bwd, passing the lists on the tape
    assert re.search(r"_tape\.append\(_t\d+_tape\)", sweeps)
    assert re.search(r"for t in reversed\(range\(xs\.shape\[0\]\)\):", sweeps)
    assert re.search(r"\b_t\d+_tape\[t\]", sweeps)
    for _ in range(2):  # the second call runs the forward sweep again
        got, _, _ = pullback(1.0)
        np.testing.assert_allclose(flatten(got), flatten(expected), rtol=1e-9)


def _anp_rnn(params, xs, h0):
    (Wx, Wh, b), (V, c) = params
    h = h0
    for t in range(xs.shape[0]):
        h = anp.tanh(xs[t] @ Wx + h @ Wh + b)
    return anp.sum((h @ V + c) ** 2)


@pytest.mark.parametrize("enabled", [True, False])
def test_nested_loops_get_a_list_per_outer_trip(enabled):
    A = RNG.standard_normal((4, 5))
    got = _with_optimizer(enabled, nested, A, 0.7, wrt=(0, 1))
    check_grads(nested, (A, 0.7))

    def anp_nested(A, w):
        total = 0.0
        for i in range(A.shape[0]):
            acc = 0.0
            for j in range(A.shape[1]):
                z = anp.sin(A[i, j] * w)
                acc = acc * 0.9 + z * z
            total = total + anp.tanh(acc)
        return total

    want = autograd.grad(anp_nested, (0, 1))(A, 0.7)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


def test_value_before_the_loop_still_restored():
    x = RNG.standard_normal(5)
    check_grads(old_value_read_later, (x, 0.8))
    on = s2s_ad.grad(old_value_read_later, (0, 1))(x, 0.8)
    off = _with_optimizer(False, old_value_read_later, x, 0.8, wrt=(0, 1))
    np.testing.assert_array_equal(on[0], off[0])
    np.testing.assert_array_equal(on[1], off[1])


def test_method_of_a_cell_class():
    cell = Cell(RNG.standard_normal((3, 4)) * 0.5, RNG.standard_normal((4, 4)) * 0.5)
    xs = RNG.standard_normal((5, 2, 3))
    h = RNG.standard_normal((2, 4))
    check_grads(cell.run, (xs, h))


def test_second_order_through_a_recorded_loop():
    def f(x):
        s = x
        for i in range(5):
            s = np.sin(s) * x + 0.1 * i
        return s

    d2 = s2s_ad.grad(s2s_ad.grad(f))
    h = 1e-5
    d1 = s2s_ad.grad(f)
    assert d2(0.7) == pytest.approx((d1(0.7 + h) - d1(0.7 - h)) / (2 * h), rel=1e-6)


def test_hvp_of_a_loop_keeps_tape_and_tangents_paired():
    # hvp runs the tangent program of the gradient, which keeps its tape (no per-loop
    # lists there: tests/test_local_generators.py's flat MLP popped an empty tangent list)
    W = np.array([[0.5, -0.2], [0.1, 0.3]])
    xs = np.array([[0.3, -0.1], [0.2, 0.4], [-0.5, 0.1]])
    h0 = np.array([0.1, -0.2])

    def loss(w):
        h = h0
        for x in xs:
            h = np.tanh(w @ h + x)
        return np.sum(h**2)

    v = np.array([[1.0, 0.5], [-0.3, 0.2]])
    eps = 1e-6
    g = s2s_ad.grad(loss)
    expected = (g(W + eps * v) - g(W - eps * v)) / (2 * eps)
    np.testing.assert_allclose(s2s_ad.hvp(loss)(W, v), expected, rtol=1e-6, atol=1e-9)


def clipped_rows(A, w):
    """A branch on a running value in an inner loop: a flag list per row."""
    total = 0.0
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            if acc > 1.0:
                acc = acc * 0.5 + A[i, j] * w
            else:
                acc = acc + np.sin(A[i, j] * w)
        total = total + acc * acc
    return total


@pytest.mark.parametrize("enabled", [True, False])
def test_flags_of_an_inner_loop_through_grad_and_pullback(enabled):
    A = RNG.standard_normal((3, 5)) + 0.5
    check_grads(clipped_rows, (A, 0.8))
    got = _with_optimizer(enabled, clipped_rows, A, 0.8)
    expected = autograd.grad(_anp_clipped_rows)(A, 0.8)
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    out, pullback = s2s_ad.vjp(clipped_rows, A, 0.8)
    np.testing.assert_allclose(pullback(1.0)[0], expected, rtol=1e-10)
    df = s2s_ad.grad(clipped_rows)
    df(A, 0.8)
    text = s2s_ad.source(df)
    if optimize.ENABLED:  # (the suite may run with the optimizer off)
        assert re.search(r"_t\d+_tape = bytearray\(A\.shape\[1\]\)", text), text


def _anp_clipped_rows(A, w):
    total = 0.0
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            if acc > 1.0:
                acc = acc * 0.5 + A[i, j] * w
            else:
                acc = acc + anp.sin(A[i, j] * w)
        total = total + acc * acc
    return total


def softmax_rows_nll(W, X, labels):
    nll = 0.0
    for x, k in zip(X, labels):
        logits = W @ x
        logp = logits - np.log(np.sum(np.exp(logits)))
        nll = nll - logp[k]
    return nll


def test_values_kept_in_lists_leave_no_initial_none():
    # ``v = None`` at the top was there for the first push of ``v``; once ``v`` goes into
    # a list of its own nothing reads it (the rewriting's liveness must see the loops as
    # rewritten, not as the facts the optimizer knew before)
    W = RNG.standard_normal((4, 3))
    X = RNG.standard_normal((6, 3))
    labels = [0, 3, 1, 2, 2, 0]
    df = s2s_ad.grad(softmax_rows_nll)
    got = df(W, X, labels)
    check_grads(lambda W: softmax_rows_nll(W, X, labels), (W,))
    np.testing.assert_allclose(got, _with_optimizer(False, softmax_rows_nll, W, X, labels))
    text = s2s_ad.source(df)
    if optimize.ENABLED:  # (the suite may run with the optimizer off)
        listed = re.findall(r"^\s+_?(\w+)_tape = \[\]$", text, re.M)
        assert listed, text
        for name in listed:
            assert not re.search(rf"^\s+_?{name} = None$", text, re.M), text
