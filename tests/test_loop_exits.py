"""Loops left early: ``break``, ``continue`` and ``return`` inside loops.

A flag only a ``break`` sets is true on the last trip at most: it is set to false once
before the loop and the backward sweep resets it at the end of each trip it reverses, so
nothing is recorded per trip for it; the test of an ``if`` that always breaks is read back
from that flag. Where nothing before the ``break`` in its trip has anything to reverse,
the breaking trip is not counted and there is no flag at all (``test_break_trips.py``).
A ``continue`` flag's guard reads the ``if``'s test instead of a recorded flag. Each case
is written the way a user brings it and checked against central finite differences.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2s_ad
from s2s_ad import check_grads

RNG = np.random.default_rng(21)


def first_positive_sum(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


def train_with_early_stopping(w, X, y):
    """Gradient descent on a least-squares fit, stopped when the loss stops improving."""
    lr = 0.05
    prev = np.inf
    loss = np.mean((X @ w - y) ** 2)
    steps = 0
    while steps < 50:
        r = X @ w - y
        loss = np.mean(r**2)
        if prev - loss < 1e-3:
            break
        prev = loss
        w = w - lr * (2.0 / X.shape[0]) * (X.T @ r)
        steps += 1
    return loss + 0.1 * np.sum(w * w)


def search_threshold(x, limit):
    """Accumulate until the running total passes ``limit``; the last term counts double."""
    total = 0.0
    last = 0.0
    for v in x:
        last = np.tanh(v) * 2.0
        total = total + last
        if total > limit:
            total = total + last
            break
    return total * last


def hinge_until_margin(params, xs):
    """A loss with an early return inside the loop, over an MLP's outputs."""
    W, b = params
    acc = 0.0
    for i in range(xs.shape[0]):
        h = np.tanh(xs[i] @ W + b)
        score = np.sum(h * h)
        if score > 2.5:
            return acc + score * 0.5
        acc = acc + np.maximum(0.0, 1.0 - score)
    return acc


def rows_until_spike(W, X):
    """Nested loops: each row stops at its first large entry."""
    acc = 0.0
    for j in range(X.shape[0]):
        h = 0.0
        for k in range(X.shape[1]):
            if X[j, k] > 1.5:
                break
            h = np.sin(h + W[k] * X[j, k])
        acc = acc + h * h
    return acc


def skip_and_stop(w, xs):
    """``continue`` past outliers, ``break`` at the end marker."""
    s = 0.0
    for x in xs:
        if x < -1.0:
            continue
        if x > 2.5:
            break
        s = s * 0.9 + np.sin(w * x)
    return s


class Smoother:
    """A Keras-style layer whose call loops with ``continue`` over the rows."""

    def __init__(self, decay):
        self.decay = decay

    def __call__(self, X, w):
        state = np.zeros(X.shape[1])
        for row in X:
            if np.mean(row) < -0.5:
                continue
            state = self.decay * state + np.tanh(row * w)
        return np.sum(state**2)


SMOOTHER = Smoother(0.8)


def smoothed(X, w):
    return SMOOTHER(X, w)


CASES = [
    (first_positive_sum, lambda: [np.array([0.5, 0.2, -0.4, 0.3]), 4]),
    (first_positive_sum, lambda: [np.array([0.5, 0.2, 0.4, 0.3]), 4]),
    (
        train_with_early_stopping,
        lambda: [RNG.normal(size=3), RNG.normal(size=(8, 3)), RNG.normal(size=8)],
    ),
    (search_threshold, lambda: [np.array([0.3, 0.8, 0.2, 0.9, 0.1]), 1.7]),
    (search_threshold, lambda: [np.array([0.3, 0.1, 0.2]), 5.0]),
    (
        hinge_until_margin,
        lambda: [(RNG.normal(size=(3, 4)), RNG.normal(size=4)), RNG.normal(size=(5, 3))],
    ),
    (rows_until_spike, lambda: [RNG.normal(size=4), RNG.normal(size=(3, 4)) * 1.5]),
    (skip_and_stop, lambda: [0.7, np.array([0.3, -2.0, 0.7, 1.0, 3.0, 0.1])]),
    (skip_and_stop, lambda: [0.7, np.array([-1.3, 0.2, -2.0, 0.4])]),
    (smoothed, lambda: [RNG.normal(size=(5, 3)), 0.6]),
]


@pytest.mark.parametrize(("fun", "args"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_loops_left_early_have_exact_gradients(fun, args):
    check_grads(fun, args())


@pytest.mark.parametrize(("fun", "args"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order_through_loop_exits(fun, args):
    a = args()
    if fun in (train_with_early_stopping, hinge_until_margin, smoothed):
        pytest.skip("vector-valued first argument: checked at first order")
    check_grads(fun, a, order=2, atol=1e-5, rtol=1e-4)


def _grad_source(fun, *args):
    df = s2s_ad.grad(fun)
    df(*args)  # source() then shows the variant for these shapes
    return s2s_ad.source(df)


def _pushes(text):
    return re.findall(r"_tape\.append\((\w+)\)", text)


def test_a_break_loop_records_one_value_per_trip():
    text = _grad_source(first_positive_sum, np.array([0.5, 0.2, -0.4, 0.3]), 4)
    assert _pushes(text) == ["s"]
    assert "_tape.append(_jumped" not in text


def test_an_if_that_breaks_is_reversed_from_the_exit_flag():
    text = _grad_source(search_threshold, np.array([0.3, 0.8, 0.2, 0.9]), 1.7)
    assert "if total > limit:" in text or re.search(r"\w+ = total > limit", text)
    bound = re.search(r"(\w+) = total > limit", text)
    test = bound.group(1) if bound else "total > limit"  # folded into the if: no flag at all
    assert not any(p.startswith("_jumped") or p == test for p in _pushes(text)), _pushes(text)


def test_a_continue_guard_reads_the_test_not_a_recorded_flag():
    text = _grad_source(skip_and_stop, 0.7, np.array([0.3, -2.0, 0.7, 3.0]))
    assert not any(p.startswith("_jumped") for p in _pushes(text)), _pushes(text)


def test_an_inner_break_with_nothing_before_it_records_no_flag():
    # the inner trip that breaks is not counted: per outer trip only the inner trip
    # count is recorded, and no exit flag at all
    text = _grad_source(rows_until_spike, RNG.normal(size=4), RNG.normal(size=(3, 4)))
    assert "_jumped" not in text
    counts = [line for line in text.splitlines() if re.search(r"_tape\.append\(_trips", line)]
    assert len(counts) == 1 and counts[0].startswith(" " * 8 + "_tape"), counts
