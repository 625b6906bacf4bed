"""Loops whose ``break`` leaves nothing to reverse count only the trips that ran through.

When nothing with an adjoint (and nothing recorded) runs in a trip before its ``break``,
the trip count is taken at the end of the trip (and before each ``continue``): the trip
that breaks is not counted, and neither sweep needs an exit flag. Where an active
statement comes before the ``break`` in the trip, the flag stays. Each program is written
the way a user brings it and checked against central finite differences, against
autograd running the same source, and with the optimizer off.
"""

from __future__ import annotations

import re
import types

import numpy as np
import pytest

import s2s_ad
from s2s_ad import check_grads, optimize
from s2s_ad.api import clear_cache

RNG = np.random.default_rng(7)


def first_positive_sum(x, n):
    """GENERATED.md's ``break`` example."""
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


def rnn_until_quiet(Wh, Wx, xs):
    """An RNN over a sequence, stopped at the first quiet input step."""
    h = np.zeros(Wh.shape[0])
    for t in range(xs.shape[0]):
        if np.max(np.abs(xs[t])) < 0.2:
            break
        h = np.tanh(Wh @ h + Wx @ xs[t])
    return np.sum(h**2)


def newton_cube_root(a):
    """Newton's iteration for the cube root, stopped when the residual is small."""
    x = a
    k = 0
    while k < 60:
        if abs(x * x * x - a) < 1e-12:
            break
        x = x - (x * x * x - a) / (3.0 * x * x)
        k += 1
    return x


def newton_step_first(a):
    """Newton's iteration that computes the residual before testing it: the residual
    has an adjoint, so the breaking trip is reversed (with the flag)."""
    x = a
    for _ in range(60):
        r = x * x * x - a
        if abs(r) < 1e-12:
            break
        x = x - r / (3.0 * x * x)
    return x


def line_search(w, X, y, d):
    """Backtracking line search: halve the step until the loss stops decreasing."""
    best = np.mean((X @ w - y) ** 2)
    step = 1.0
    for _ in range(20):
        trial = w + step * d
        loss = np.mean((X @ trial - y) ** 2)
        if loss >= best:
            break
        best = loss
        w = trial
        step = step * 0.5
    return best + 0.01 * np.sum(w * w)


def band_sum(x, lo, hi):
    """A ``break`` inside nested ``if`` statements."""
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > lo:
            if x[i] > hi:
                break
        s = s + np.sin(x[i]) * s + x[i] * lo
    return s


def skip_then_stop(x, n):
    """``continue`` and ``break`` in one loop over an index."""
    s = 0.0
    for i in range(n):
        if x[i] > 2.0:
            continue
        if x[i] < 0:
            break
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


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


# (function, arguments, whether the exit needs no flag)
CASES = [
    (first_positive_sum, lambda: [np.array([1.0, 2.0, -1.0, 3.0]), 4], True),
    (first_positive_sum, lambda: [np.array([0.5, 0.2, 0.4, 0.3]), 4], True),
    (first_positive_sum, lambda: [np.array([-0.5, 0.2]), 2], True),
    (
        rnn_until_quiet,
        lambda: [
            RNG.normal(size=(3, 3)) * 0.5,
            RNG.normal(size=(3, 2)),
            np.array([[1.0, -0.5], [0.7, 0.9], [0.1, -0.1], [2.0, 1.0]]),
        ],
        True,
    ),
    (newton_cube_root, lambda: [2.7], True),
    (newton_step_first, lambda: [2.7], False),
    (
        line_search,
        lambda: [RNG.normal(size=3), RNG.normal(size=(6, 3)), RNG.normal(size=6), np.ones(3)],
        False,
    ),
    (band_sum, lambda: [np.array([0.1, 0.6, 0.4, 1.9, 0.3]), 0.5, 1.5], True),
    (band_sum, lambda: [np.array([0.1, 0.6, 0.4]), 0.5, 1.5], True),
    (skip_then_stop, lambda: [np.array([0.3, 2.5, 0.7, -1.0, 0.4]), 5], True),
    (skip_then_stop, lambda: [np.array([2.5, 0.3, 2.1]), 3], True),
    (rows_until_spike, lambda: [RNG.normal(size=4), RNG.normal(size=(3, 4)) * 1.5], True),
]
IDS = [f"{f.__name__}-{k}" for k, (f, _, _) in enumerate(CASES)]


def _source(fun, args):
    df = s2s_ad.grad(fun)
    df(*args)
    return s2s_ad.source(df)


@pytest.mark.parametrize(("fun", "args", "quiet"), CASES, ids=IDS)
def test_gradients_match_finite_differences(fun, args, quiet):
    check_grads(fun, args())


@pytest.mark.parametrize(("fun", "args", "quiet"), CASES, ids=IDS)
def test_gradients_match_autograd(fun, args, quiet):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    same = types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp})
    a = args()
    ours = s2s_ad.grad(fun)(*a)
    theirs = autograd.grad(same)(*a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("fun", "args", "quiet"), CASES, ids=IDS)
def test_same_gradients_with_the_optimizer_off(fun, args, quiet):
    a = args()
    on = s2s_ad.grad(fun)(*a)
    saved = optimize.ENABLED
    optimize.ENABLED = False
    clear_cache()
    try:
        off = s2s_ad.grad(fun)(*a)
    finally:
        optimize.ENABLED = saved
        clear_cache()
    np.testing.assert_allclose(on, off, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize(("fun", "args", "quiet"), CASES, ids=IDS)
def test_a_flag_only_where_the_breaking_trip_has_something_to_reverse(fun, args, quiet):
    text = _source(fun, args())
    assert ("_jumped" not in text) == quiet, text
    if quiet:
        # the count is the last statement of the forward trip: the breaking trip is not
        # counted, and the backward loop reverses every trip it counts without a guard
        # (or the backward loop walks the lists of the trips' records, as long as the count)
        assert re.search(r"\n(\s+)(_trips\d+) \+= 1\n(?!\1\s)", text) or (
            "_trips" not in text and re.search(r"\n\s+for \w+ in reversed\(_\w+_tape\):", text)
        ), text


def test_the_generated_md_break_example_has_one_push_per_trip_and_no_guard():
    text = _source(first_positive_sum, [np.array([1.0, 2.0, -1.0, 3.0]), 4])
    assert re.findall(r"_tape\.append\((\w+)\)", text) == ["s"]
    assert "s_bar = 1.0" in text
    backward = text.split("for i in reversed")[1]
    assert "if " not in backward
    # both contributions to x_bar[i] are added before s_bar is overwritten
    assert backward.index("x_bar[i] +=") < backward.index("s_bar = s_bar * np.cos(x[i])")


def test_the_while_loops_last_test_is_reversed_once_after_a_quiet_break():
    # the test block of the trip that breaks runs again in the forward sweep: the
    # backward sweep reverses it with the loop's last test, whichever way the loop left
    for a in (2.7, 0.2, 30.0):
        check_grads(newton_cube_root, [a])
        assert s2s_ad.grad(newton_cube_root)(a) == pytest.approx(1 / (3 * a ** (2 / 3)))
