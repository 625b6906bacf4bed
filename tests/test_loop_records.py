"""Arrays filled one element per trip (``y[i] = f(y[i - 1], ...)``) need no tape.

Each trip writes a new element and reads only elements earlier trips wrote, so the
backward sweep can read the final array. Where a trip reads an element before it is
written, or a later one, or code before the loop reads the array back, the overwritten
elements are still recorded. Each case is checked against central finite differences.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2s_ad
from s2s_ad import check_grads

RNG = np.random.default_rng(5)


def smoothed_signal(x, a):
    n = x.shape[0]
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y**2)


def second_order_filter(x, a, b):
    y = np.zeros_like(x)
    y[0] = x[0]
    y[1] = x[1] + a * x[0]
    for i in range(2, x.shape[0]):
        y[i] = a * y[i - 1] - b * np.tanh(y[i - 2]) + x[i]
    return np.sum(np.sin(y))


def rnn_states(W, xs):
    """Hidden states stored as the rows of a matrix, one row per step."""
    H = np.zeros((xs.shape[0] + 1, W.shape[0]))
    for t in range(1, xs.shape[0] + 1):
        prev = H[t - 1]
        H[t] = np.tanh(W @ prev + xs[t - 1])
    return np.sum(H[1:] ** 2)


def reads_the_old_value(x, a):
    y = x * 1.0
    for i in range(1, x.shape[0]):
        y[i] = y[i] * a + y[i - 1] ** 2  # y[i] read before this trip writes it
    return np.sum(y)


def reads_a_later_element(x, a):
    y = x * 1.0
    for i in range(0, x.shape[0] - 1):
        y[i] = np.sin(y[i + 1]) * a
    return np.sum(y * y)


def wraps_around(x, a):
    y = x * 1.0
    for i in range(x.shape[0]):
        y[i] = y[i - 1] * a + x[i]  # y[-1] on the first trip: the last element, as it was
    return np.sum(y**2)


def read_back_before_the_loop(x, a):
    y = x * 1.0
    z = np.sin(y)  # its adjoint needs y as it was here
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * a
    return np.sum(z * y)


def drains_a_queue(x, a):
    y = [x[0], x[1] * 2.0, x[2] * 3.0, x[3] * 4.0, x[4] * 5.0]
    s = 0.0
    for i in range(1, 3):
        y[i] = y[i - 1] * a
        s = s + y.pop()  # reads the list too (the element it takes off)
    return s + y[1] * y[2]


def pops_before_filling(x, a):
    y = [x[0], x[1] * 2.0, x[2] * 3.0, x[3] * 4.0, x[4] * 5.0]
    s = 0.0
    for i in range(1, 3):
        t = y.pop()
        y[i] = y[i - 1] * a
        s = s + t * y[i]
    return s


CASES = [
    (smoothed_signal, lambda: [RNG.normal(size=8), 0.9]),
    (second_order_filter, lambda: [RNG.normal(size=7), 0.6, 0.3]),
    (rnn_states, lambda: [RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(4, 3))]),
    (reads_the_old_value, lambda: [RNG.normal(size=5) * 0.5, 0.7]),
    (reads_a_later_element, lambda: [RNG.normal(size=5), 0.7]),
    (read_back_before_the_loop, lambda: [RNG.normal(size=5), 0.7]),
    (wraps_around, lambda: [RNG.normal(size=5), 0.7]),
    (drains_a_queue, lambda: [RNG.normal(size=5), 0.7]),
    (pops_before_filling, lambda: [RNG.normal(size=5), 0.7]),
]


@pytest.mark.parametrize(("fun", "args"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_filled_arrays_have_exact_gradients(fun, args):
    check_grads(fun, args())


@pytest.mark.parametrize(
    ("fun", "recorded"),
    [
        (smoothed_signal, False),
        (second_order_filter, False),
        (reads_the_old_value, True),
        (reads_a_later_element, True),
        (read_back_before_the_loop, True),
        (wraps_around, True),
    ],
)
def test_only_an_array_read_back_as_it_was_is_recorded(fun, recorded):
    text = s2s_ad.source(s2s_ad.grad(fun))
    assert bool(re.search(r"_tape\.append\((_ad\.copy\()?y\[i\]", text)) is recorded, text
