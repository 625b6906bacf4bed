"""A value on the tape that an in-place write through another name changes.

``a = d; a = np.sin(a) * w; d[0] = ...``: the push before ``a`` is rebound records the
array ``d`` names; the write into ``d`` changes it, so the backward sweep undoes the write
(in place) before it reads the recorded value. Each
case is checked against central finite differences; a write seen through a view made by a
call (``flat = h.reshape(-1); h[0, 0] = ...``) is refused, as Python would share it.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError, check_grads

RNG = np.random.default_rng(12)


def clipped_activation(W, x):
    z = x @ W
    out = z
    out = np.sin(out)  # ``out`` no longer names z's array; its old value is recorded
    z[:, 0] = 0.5  # a unit held at a constant, written in place
    return np.sum(out * z)


def smoothed_series(w, xs):
    buf = xs * 1.0
    total = 0.0
    for t in range(1, xs.shape[0]):
        prev = buf
        prev = np.sin(prev * w)
        buf[t] = buf[t - 1] * 0.5 + prev[t]
        total = total + np.sum(prev**2)
    return total + np.sum(buf)


def fresh_buffer_each_step(w, xs):
    total = 0.0
    for _ in range(3):
        row = xs * w  # a new array every trip
        keep = row
        keep = np.sin(keep)
        row[0] = w
        total = total + np.sum(keep * keep)
    return total


def normalised_rows(params, x):
    W, b = params
    h = x @ W + b
    kept = h
    h = h / np.sqrt(np.sum(h * h, axis=1, keepdims=True))
    kept[0] = h[0] * 2.0
    return np.sum(h * kept) + np.sum(kept**2)


def denoise_loss(W, x):
    def layer(h):
        return np.tanh(h @ W)

    buf = x * 1.0
    y = buf
    for _ in range(2):
        y = np.sin(layer(y))
        buf[:, 0] = y[:, 0]  # the first pass read buf's array through y
    return np.mean((y - buf) ** 2)


def popped_then_written(w, x):
    stack = [x * w, x + w]
    top = stack.pop()
    top = top * top  # the popped array: put back into the list in the backward sweep
    rest = stack[0]
    rest[1] = w * 3.0
    return np.sum(top) + np.sum(rest * x)


@pytest.mark.parametrize(
    ("fun", "args"),
    [
        (clipped_activation, lambda: [RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3))]),
        (smoothed_series, lambda: [0.7, RNG.normal(size=5)]),
        (fresh_buffer_each_step, lambda: [0.7, RNG.normal(size=3)]),
        (
            normalised_rows,
            lambda: [(RNG.normal(size=(3, 4)), RNG.normal(size=4)), RNG.normal(size=(2, 3))],
        ),
        (denoise_loss, lambda: [RNG.normal(size=(3, 3)), RNG.normal(size=(2, 3))]),
        (popped_then_written, lambda: [0.4, RNG.normal(size=3)]),
    ],
)
def test_a_recorded_value_written_through_an_alias_keeps_its_contents(fun, args):
    check_grads(fun, args())


def test_a_write_into_a_recorded_array_is_undone_and_no_other():
    text = s2s_ad.source(s2s_ad.grad(clipped_activation))
    assert "z[:, 0] = _tape.pop()" in text

    def write_then_use(W, x):
        z = x @ W
        z[:, 0] = 0.5
        return np.sum(np.sin(z))

    check_grads(write_then_use, [RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3))])
    assert "_tape" not in s2s_ad.source(s2s_ad.grad(write_then_use))


def flattened_then_written(W, x):
    h = x @ W
    flat = h.reshape(-1)
    h[0, 0] = 0.0  # changes flat too
    return np.sum(np.sin(flat))


def raveled_then_written(W, x):
    h = np.tanh(x @ W)
    flat = np.ravel(h)
    total = np.sum(flat**2)
    flat[1] = 0.0  # changes h too
    return total + np.sum(h)


def test_a_write_seen_through_a_reshape_view_is_followed():
    # h.reshape(-1) is a view (norm_views): flat is derived again after the write of h
    check_grads(flattened_then_written, [RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3))])


def test_a_write_seen_through_a_view_made_by_a_function_is_refused():
    with pytest.raises(TransformError, match="also names|a view"):
        s2s_ad.grad(raveled_then_written)(RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3)))
