"""A branch's test that reads only what its loop's trips leave unchanged (``if x[i] > 0``
with ``x`` never written, the loop index, a mask argument) is tested again by the backward
trip instead of recorded: nothing is stored that is still available.

Each program is written the way a user brings it and checked by
:func:`tests.user_checks.check_program` (finite differences, autograd on the same source,
forward mode, the Hessian-vector product, the optimizer off); the generated source is
read for what is recorded.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2s_ad
from tests.user_checks import autograd_twin, check_program

RS = np.random.RandomState(5)


def leaky_energy(x, w):
    """A leaky-ReLU energy summed element by element."""
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            total = total + w * x[i] ** 2
        else:
            total = total + 0.1 * w * x[i]
    return total


def skip_negatives(xs, w):
    """A running filter that skips negative samples."""
    acc = 0.0
    for i in range(xs.shape[0]):
        if xs[i] < 0:
            continue
        acc = acc * 0.9 + np.sin(w * xs[i])
    return acc


def masked_rnn(Wh, xs, mask, h0):
    """An RNN whose state is held where the mask is off (padding steps)."""
    h = h0
    for t in range(xs.shape[0]):
        hn = np.tanh(xs[t] + h @ Wh)
        if mask[t] > 0:
            h = hn
    return np.sum(h**2)


def even_odd(x, n):
    """A branch on the loop index alone."""
    s = x
    for i in range(n):
        if i % 2 == 0:
            s = s * 0.9 + np.sin(s)
        else:
            s = s * s * 0.5
    return s


def thresholded_rows(A, w):
    """Nested loops with a test on each entry of a matrix."""
    total = 0.0
    for i in range(A.shape[0]):
        row = 0.0
        for j in range(A.shape[1]):
            if A[i, j] > 0.2:
                row = row + np.tanh(A[i, j] * w)
            else:
                row = row * 0.5
        total = total + row * row
    return total


def running_clip(x, c):
    """The test reads the running value the trip changes: still recorded."""
    s = 0.0
    for i in range(x.shape[0]):
        if s > c:
            s = s * 0.5 + x[i]
        else:
            s = s + x[i] * x[i]
    return s


def written_then_tested(x, a):
    """The loop writes the array its test reads (``y[i - 1]``): recorded."""
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        if y[i - 1] > 0:
            y[i] = y[i - 1] * a + x[i]
        else:
            y[i] = x[i] - a * y[i - 1]
    return np.sum(y**2)


def _source(fun, args, wrt=0):
    df = s2s_ad.grad(fun, wrt)
    df(*args)
    return s2s_ad.source(df)


def _backward(text):
    """The backward sweep's code, without its ``# L<n>:`` comments."""
    lines = text.split("# backward sweep")[1].splitlines()
    return "\n".join(ln for ln in lines if not ln.strip().startswith("#"))


def test_an_if_on_data_in_a_loop_records_nothing():
    x = RS.normal(size=7)
    check_program(leaky_energy, (x, 1.3), 0, rs=RS)
    check_program(leaky_energy, (x, 1.3), 1, rs=RS, twin=None)
    text = _source(leaky_energy, (x, 1.3))
    assert "if x[i] > 0:" in _backward(text), text
    assert "_tape.append(True)" not in text and "reversed(_t" not in text, text


def test_continue_on_data_tests_again():
    xs = np.array([0.3, -0.5, 1.2, -0.1, 0.8, 0.4])
    check_program(skip_negatives, (xs, 0.7), 0, rs=RS)
    check_program(skip_negatives, (xs, 0.7), 1, rs=RS)
    text = _source(skip_negatives, (xs, 0.7))
    assert "xs[i] < 0" in _backward(text), text


def test_masked_rnn_reads_its_mask_backwards():
    Wh = RS.normal(size=(4, 4)) * 0.5
    xs = RS.normal(size=(6, 3, 4))
    mask = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    h0 = RS.normal(size=(3, 4)) * 0.1
    check_program(masked_rnn, (Wh, xs, mask, h0), 0, rs=RS)
    check_program(masked_rnn, (Wh, xs, mask, h0), 1, rs=RS)
    check_program(masked_rnn, (Wh, xs, mask, h0), 3, rs=RS)
    text = _source(masked_rnn, (Wh, xs, mask, h0))
    assert "if mask[t] > 0:" in _backward(text), text


def test_a_test_on_the_loop_index():
    check_program(even_odd, (0.4, 7), 0, rs=RS)
    text = _source(even_odd, (0.4, 7))
    assert re.search(r"if \(?i % 2\)? == 0:", _backward(text)), text


def test_nested_loops_test_each_entry_again():
    A = RS.normal(size=(3, 4))
    check_program(thresholded_rows, (A, 0.8), 0, rs=RS)
    check_program(thresholded_rows, (A, 0.8), 1, rs=RS)
    text = _source(thresholded_rows, (A, 0.8))
    assert "A[i, j] > 0.2" in _backward(text), text


@pytest.mark.parametrize(
    ("fun", "args", "twin"),
    [
        (running_clip, (np.array([0.4, 1.5, -0.3, 0.9, 2.0, 0.1]), 0.8), autograd_twin),
        # autograd cannot run the element writes
        (written_then_tested, (np.array([0.5, -1.0, 0.3, 0.8, -0.2]), 0.7), None),
    ],
)
def test_a_test_on_what_the_trips_change_is_still_recorded(fun, args, twin):
    check_program(fun, args, 0, rs=RS, twin=twin)
    check_program(fun, args, 1, rs=RS, twin=twin)
    text = _source(fun, args)
    backward = _backward(text)
    assert not any(op in backward for op in (" > c", "y[i - 1] > 0")), text
