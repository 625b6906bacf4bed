"""Per-trip record lists in ``while`` loops and in loops with ``break`` or ``continue``
(``s2s_ad/trip_records.py``).

A value recorded once per trip goes into a list of its own when it is recorded and
assigned in exactly the trips the backward loop reverses: after a ``while`` loop's test,
before any ``break`` or ``continue`` of a loop counted at the top of its trips, after
every ``break`` of a loop counted at the end. The backward loop then walks the list (or
reads entry ``i`` of it), and a trip count nothing else reads goes. Each program is
written the way a user brings it and checked by :func:`tests.user_checks.check_program`
(finite differences, autograd, forward mode, Hessian-vector product, the optimizer off),
and through a ``vjp`` pullback, whose two functions pass the lists on the tape.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2s_ad
from tests.fd import flatten
from tests.user_checks import check_program, close

RS = np.random.RandomState(3)


def newton_sqrt(a, x0):
    """Newton's iteration for a square root, to a tolerance."""
    x = x0
    while abs(x * x - a) > 1e-10:
        x = 0.5 * (x + a / x)
    return x


def make_step(a):
    """A step function closing over its parameter."""

    def step(x):
        return 0.5 * (x + a / x)

    return step


def babylonian(a):
    """A fixed-point iteration whose test calls the step (the test records values)."""
    step = make_step(a)
    x = 1.0
    while abs(step(x) - x) > 1e-10:
        x = step(x)
    return x


def shrink_to_tolerance(v, w, tol):
    """A vector damped until its norm is below a tolerance."""
    k = 0
    while np.linalg.norm(v) > tol:
        z = np.tanh(v * w)
        v = 0.5 * z
        k += 1
    return np.sum(v * v) + k


def rnn_until_saturated(Wh, xs):
    """An RNN stopped once its state sums past a threshold (the test after the step)."""
    h = np.zeros(Wh.shape[0])
    for t in range(xs.shape[0]):
        z = np.tanh(Wh @ h + xs[t])
        h = 0.8 * z + 0.2 * h
        if np.sum(h) > 1.5:
            break
    return np.sum(h**2)


def capped_sum(X, n):
    """Stops at the first row with a negative lead (nothing to reverse in the trip that
    stops)."""
    s = np.zeros(X.shape[1])
    for i in range(n):
        if X[i, 0] < 0:
            break
        s = s * np.cos(X[i]) + X[i] ** 2
    return np.sum(s)


def skip_small(xs, w):
    """A feature computed in every trip, used only where the sample is large enough."""
    acc = 0.0
    for i in range(xs.shape[0]):
        z = np.sin(w * xs[i])
        if abs(xs[i]) < 0.3:
            continue
        acc = acc * 0.9 + z * z
    return acc


def stop_on_large_step(Wh, xs):
    """The ``break`` comes between two recorded values: the first is in every trip
    reversed, the second is not (it stays on the tape)."""
    h = np.zeros(Wh.shape[0])
    for t in range(xs.shape[0]):
        pre = Wh @ h + xs[t]
        if np.max(np.abs(pre)) > 2.5:
            break
        h = np.tanh(pre)
    return np.sum(h**2) + np.sum(pre)


def rows_to_tolerance(A, w):
    """A ``while`` loop inside a ``for`` loop: a list per outer trip."""
    total = 0.0
    for i in range(A.shape[0]):
        r = A[i] * w
        while np.sum(r * r) > 0.05:
            z = np.sin(r)
            r = 0.6 * z * z + 0.3 * r
        total = total + np.sum(r)
    return total


def repay(rate, payment, balance0, months):
    """A loan repaid monthly: a lower rate once the balance is small, stop when repaid
    (a branch on the running value, then a ``break``: the trip count is not known)."""
    balance = balance0
    paid = 0.0
    for _ in range(months):
        if balance > 1000.0:
            balance = balance * (1.0 + rate) - payment
        else:
            balance = balance * (1.0 + 0.5 * rate) - payment
        paid = paid + payment
        if balance < 0.0:
            break
    return balance + paid


def cool_down(T0, k):
    """Cooling in steps, faster while hot, until near room temperature."""
    T = T0
    steps = 0
    while T > 21.0:
        if T > 60.0:
            T = T - k * (T - 20.0)
        else:
            T = T - 0.5 * k * (T - 20.0)
        steps += 1
    return T * steps


def _source(fun, args, wrt=0):
    df = s2s_ad.grad(fun, wrt)
    df(*args)
    return s2s_ad.source(df)


def test_a_while_loop_to_a_tolerance_walks_its_list():
    for a in (2.0, 0.3, 9.0):
        check_program(newton_sqrt, (a, 1.0), 0, rs=RS)
    assert s2s_ad.grad(newton_sqrt)(2.0, 1.0) == pytest.approx(0.5 / np.sqrt(2.0))
    check_program(babylonian, (2.5,), 0, rs=RS)
    assert s2s_ad.grad(babylonian)(2.5) == pytest.approx(0.5 / np.sqrt(2.5))


def test_a_while_loop_over_a_vector():
    v, w = np.array([0.9, -1.2, 0.4]), np.array([1.1, 0.7, -0.5])
    check_program(shrink_to_tolerance, (v, w, 1e-3), 0, rs=RS)
    check_program(shrink_to_tolerance, (v, w, 1e-3), 1, rs=RS)
    text = _source(shrink_to_tolerance, (v, w, 1e-3))
    assert re.search(r"for z in reversed\(_z_tape\):", text), text
    assert "_trips" not in text, text  # the list counts the trips
    assert "while np.linalg.norm(v) > tol:" in text and "while True" not in text, text


@pytest.mark.parametrize("scale", [0.3, 2.0])  # runs to the end / breaks early
def test_a_break_after_the_step(scale):
    Wh = RS.normal(size=(4, 4)) * 0.4
    xs = RS.normal(size=(7, 4)) * scale
    check_program(rnn_until_saturated, (Wh, xs), 0, rs=RS)
    check_program(rnn_until_saturated, (Wh, xs), 1, rs=RS)
    text = _source(rnn_until_saturated, (Wh, xs))
    assert "_z_tape[t]" in text, text


@pytest.mark.parametrize("lead", [[0.5, 1.2, 0.3, -0.4, 0.8], [0.5, 1.2, 0.3]])
def test_a_break_before_the_step(lead):
    X = np.column_stack([lead, RS.normal(size=len(lead))])
    check_program(capped_sum, (X, len(lead)), 0, rs=RS)
    text = _source(capped_sum, (X, len(lead)))
    assert re.search(r"_t\d+_tape\.append\(_t\d+\)", text), text


def test_a_continue_after_the_recorded_value():
    xs = np.array([0.5, -0.1, 1.3, 0.2, -0.8, 0.6])
    check_program(skip_small, (xs, 0.8), 0, rs=RS)
    check_program(skip_small, (xs, 0.8), 1, rs=RS)
    text = _source(skip_small, (xs, 0.8), 1)
    assert "_z_tape.append(z)" in text, text


@pytest.mark.parametrize("scale", [0.2, 3.0])
def test_what_comes_after_a_break_stays_on_the_tape(scale):
    Wh = RS.normal(size=(3, 3)) * 0.5
    xs = RS.normal(size=(6, 3)) * scale
    check_program(stop_on_large_step, (Wh, xs), 0, rs=RS)
    check_program(stop_on_large_step, (Wh, xs), 1, rs=RS)
    text = _source(stop_on_large_step, (Wh, xs))
    assert "_tape.append(h)" in text, text


def test_a_while_loop_inside_a_for_loop():
    A = RS.normal(size=(3, 4))
    check_program(rows_to_tolerance, (A, 0.9), 0, rs=RS)
    check_program(rows_to_tolerance, (A, 0.9), 1, rs=RS)
    text = _source(rows_to_tolerance, (A, 0.9))
    assert re.search(r"_tape\.append\(_\w+_tape\)", text), text  # one list per row


@pytest.mark.parametrize(
    ("fun", "args"),
    [
        (newton_sqrt, (3.0, 1.0)),
        (babylonian, (2.5,)),
        (shrink_to_tolerance, (np.array([0.9, -1.2, 0.4]), np.array([1.1, 0.7, -0.5]), 1e-3)),
        (rnn_until_saturated, (RS.normal(size=(4, 4)) * 0.4, RS.normal(size=(7, 4)))),
        (rows_to_tolerance, (RS.normal(size=(3, 4)), 0.9)),
    ],
)
def test_pullbacks_pass_the_lists_on_the_tape(fun, args):
    want = s2s_ad.grad(fun)(*args)
    _, pullback = s2s_ad.vjp(fun, *args)
    for _ in range(2):  # the second call runs the forward sweep again
        close(flatten(pullback(1.0)[0]), flatten(want), 1e-12)


@pytest.mark.parametrize("months", [12, 60])  # runs to the end / stops when repaid
def test_branch_flags_of_a_loop_with_a_break_are_bytes(months):
    args = (0.01, 150.0, 5000.0, months)
    for wrt in (0, 1, 2):
        check_program(repay, args, wrt, rs=RS)
    text = _source(repay, args)
    # one byte per trip, appended (the trip count is not known before the loop)
    assert re.search(r"_t\d+_tape = bytearray\(\)\n", text), text
    assert re.search(r"if balance > 1000\.0:\n\s+_t\d+_tape\.append\(1\)", text), text
    assert re.search(r"else:\n\s+_t\d+_tape\.append\(0\)", text), text
    assert re.search(r"for _t\d+ in reversed\(_t\d+_tape\):", text), text


@pytest.mark.parametrize("T0", [100.0, 40.0, 20.0])  # both branches / one / no trip
def test_branch_flags_of_a_while_loop_are_bytes(T0):
    check_program(cool_down, (T0, 0.1), 0, rs=RS)
    check_program(cool_down, (T0, 0.1), 1, rs=RS)
    _, pullback = s2s_ad.vjp(cool_down, T0, 0.1)
    want = s2s_ad.grad(cool_down, (0, 1))(T0, 0.1)
    for _ in range(2):
        close(flatten(pullback(1.0)), flatten(want), 1e-12)
    text = _source(cool_down, (T0, 0.1))
    assert re.search(r"_t\d+_tape = bytearray\(\)\n", text), text
