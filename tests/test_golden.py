"""Golden files of generated code: a change in what users read shows up in review.

Regenerate after an intended change with
``S2S_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py``.
"""

import os
from pathlib import Path

import numpy as np
import pytest

import s2s_ad

GOLDEN = Path(__file__).parent / "golden"


def loss(w, x, y):
    z = x @ w
    p = np.tanh(z)
    return np.mean((p - y) ** 2)


def first_positive_sum(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


def scale(u, k=2.0):
    return u * k


def calls_helper(a, b):
    c = scale(a, k=3.0) + np.sin(b)
    return c * b


def grow(a):
    b = a * 2
    while np.linalg.norm(b) < 1000:
        b = b * 2
    if np.sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c


CASES = {
    "loss": (loss, 0),
    "first_positive_sum": (first_positive_sum, 0),
    "calls_helper": (calls_helper, (0, 1)),
    "grow": (grow, 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden(name):
    fun, wrt = CASES[name]
    text = s2s_ad.source(s2s_ad.grad(fun, wrt))
    path = GOLDEN / f"{name}.py.txt"
    if os.environ.get("S2S_UPDATE_GOLDEN") or not path.exists():
        path.write_text(text)
    assert text == path.read_text()


def rnn_loss(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h**2)


def _rnn_args():
    rng = np.random.default_rng(0)
    return (
        rng.normal(size=(4, 5)),
        rng.normal(size=(5, 5)),
        rng.normal(size=5),
        rng.normal(size=(6, 3, 4)),
        np.zeros((3, 5)),
    )


# the variant for the shapes of a call (what source() shows after that call)
CALLED = {
    "loss_shapes": (loss, 0, lambda: (np.ones(3), np.ones((4, 3)), np.ones(4))),
    # GENERATED.md's break example, the variant for a 1-d array (what runs)
    "first_positive_sum_shapes": (
        first_positive_sum,
        0,
        lambda: (np.array([1.0, 2.0, -1.0, 3.0]), 4),
    ),
    "rnn_loss_shapes": (rnn_loss, (0, 1, 2), _rnn_args),
}


@pytest.mark.parametrize("name", sorted(CALLED))
def test_variant_for_the_call_matches_golden(name):
    fun, wrt, args = CALLED[name]
    df = s2s_ad.grad(fun, wrt)
    df(*args())
    text = s2s_ad.source(df)
    path = GOLDEN / f"{name}.py.txt"
    if os.environ.get("S2S_UPDATE_GOLDEN") or not path.exists():
        path.write_text(text)
    assert text == path.read_text()


def test_golden_functions_are_correct():
    rng = np.random.default_rng(1)
    w, x, y = rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=4)
    s2s_ad.check_grads(loss, [w, x, y])
    s2s_ad.check_grads(first_positive_sum, [np.array([0.3, 0.9, -0.2, 0.5]), 4])
    s2s_ad.check_grads(calls_helper, [0.7, -1.2])
    assert s2s_ad.grad(grow)(0.37) == pytest.approx(grow(0.37) / 0.37)
