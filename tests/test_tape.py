"""The tape records only what the backward sweep reads and cannot recompute."""

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import compile_adjoint


def _tape_after_forward(fun, wrt, *args):
    fns = compile_adjoint(fun, wrt).bind(fun)
    _, saved = fns["fwd"](*args)
    tapes = [s for s in saved if isinstance(s, list)]
    return tapes[0] if tapes else []


def _records(tape):
    """Values recorded: a loop's per-trip list (``s2s_ad/trip_records.py``) counts its
    entries."""
    return sum(len(e) if isinstance(e, list) else 1 for e in tape)


def straight(x, y):
    z = x * y
    z2 = np.sin(z) + x
    return np.sum(z2 * z2)


def test_straight_line_records_nothing():
    assert "_tape" not in s2s_ad.source(s2s_ad.grad(straight))
    assert _tape_after_forward(straight, ("x",), np.ones(3), np.ones(3)) == []


def running(x, n):
    s = 0.0
    for i in range(n):
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


@pytest.mark.parametrize("n", [10, 100, 1000])
def test_loop_records_one_value_per_trip_for_the_overwritten_variable(n):
    x = np.linspace(0.1, 1.0, n)
    tape = _tape_after_forward(running, ("x",), x, n)
    # s (overwritten, read by the adjoint of its own update) and cos(x[i]) (a call result
    # the adjoint multiplies by); x[i] and i are recomputed, not recorded. The cos values
    # go in a list of the loop's own (one tape entry), s on the tape (its value before
    # the loop is read back)
    assert _records(tape) == 2 * n
    assert len(tape) == n + 1


def sum_only(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i]
    return s


def test_linear_loop_records_only_what_shapes_need():
    n = 50
    tape = _tape_after_forward(sum_only, ("x",), np.ones(n), n)
    assert len(tape) <= n


def untouched(x, w, n):
    acc = 0.0
    for _ in range(n):
        t = w * 2.0
        acc = acc + t
    return acc * x


def test_inactive_loop_records_nothing():
    # the loop does not depend on x: nothing in it is differentiated or recorded
    assert _tape_after_forward(untouched, ("x",), 1.5, 3.0, 100) == []
