"""Arrays released after their last use in the shape variants (``s2s_ad/release.py``).

Each program is written as a user brings it; its gradient is checked against finite
differences and against the general variant with the optimizer off (the same numbers to
the bit: a release changes no value), its source for the ``del`` it should (or should
not) hold, and the peak memory of one call (``tracemalloc``) against the optimizer off.
"""

from __future__ import annotations

import gc
import re
import tracemalloc
from typing import Any

import numpy as np
import pytest
from fd import flatten

import s2s_ad
from s2s_ad import check_grads, optimize
from s2s_ad.api import clear_cache

RNG = np.random.default_rng(5)


def mlp_loss(W1, b1, W2, b2, x, y):
    """Two dense layers, softmax cross-entropy."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * logp) / x.shape[0]


def chain(x, a):
    y = np.sin(x) * a + np.exp(-x * x)
    z = np.tanh(y) ** 2 + np.log1p(y * y)
    w = np.maximum(z, 0.1) / (1.0 + x * x)
    return np.sum(w * np.cos(x)) + np.mean(z)


def clipped(x, lo):
    """An array bound in one branch only, read after it."""
    u = np.sin(x)
    if lo > 0.0:
        v = np.clip(u, -lo, lo)
        u = v * 2.0
    s = np.exp(u)
    return np.sum(s * x) + np.sum(u)


def smooth_steps(x, n):
    """A loop that reads arrays bound before it, then more array work after it."""
    base = np.cos(x)
    scale = x * x
    for _ in range(n):
        x = x - 0.1 * (x * base + np.sin(x))
    out = np.tanh(x * scale)
    return np.sum(out * out)


class Dense:
    """A Keras-style layer: weights on the instance, a ``__call__``."""

    def __init__(self, W: np.ndarray, b: np.ndarray) -> None:
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


def _run(fun: Any, args: tuple[Any, ...], wrt: Any, enabled: bool) -> tuple[Any, str, int]:
    """Gradient, source and peak memory of one call (its second: the variant made)."""
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        df = s2s_ad.grad(fun, wrt)
        df(*args)
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            out = df(*args)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        return out, s2s_ad.source(df), peak
    finally:
        optimize.ENABLED = saved
        clear_cache()


def _same(fun: Any, args: tuple[Any, ...], wrt: Any = 0) -> tuple[str, int, int]:
    on, text, peak_on = _run(fun, args, wrt, True)
    off, _, peak_off = _run(fun, args, wrt, False)
    np.testing.assert_array_equal(flatten(on), flatten(off))
    return text, peak_on, peak_off


def _released_after_last_read(text: str) -> None:
    """Every name a ``del`` releases is not named again by the code after it."""
    lines = [line for line in text.split("\n") if not line.strip().startswith("#")]
    for k, line in enumerate(lines):
        found = re.match(r"\s+del (.*)", line)
        if found:
            later = "\n".join(lines[k + 1 :])
            for name in found.group(1).split(", "):
                assert not re.search(rf"\b{name}\b", later), (name, text)


def test_mlp_releases_its_activations_and_keeps_the_peak_down():
    params = (
        RNG.standard_normal((64, 32)) * 0.1,
        np.zeros(32),
        RNG.standard_normal((32, 10)) * 0.1,
        np.zeros(10),
    )
    x = RNG.standard_normal((256, 64))
    y = np.eye(10)[RNG.integers(0, 10, 256)]
    text, peak_on, peak_off = _same(mlp_loss, (*params, x, y), (0, 1, 2, 3))
    assert re.search(r"^\s+del .*\blogits\b", text, re.M), text
    assert re.search(r"^\s+del .*\bh\b", text, re.M), text
    assert peak_on < peak_off
    check_grads(lambda W1, b1, W2, b2: mlp_loss(W1, b1, W2, b2, x[:8], y[:8]), params)


def test_elementwise_chain_drops_its_forward_values_in_the_backward_sweep():
    x = RNG.standard_normal(20_000)
    text, peak_on, peak_off = _same(chain, (x, 0.7), (0, 1))
    backward = text.split("# backward sweep")[1]
    assert "del " in backward, text
    _released_after_last_read(text)
    assert peak_on < 0.9 * peak_off
    check_grads(chain, (x[:7], 0.7))


@pytest.mark.parametrize("lo", [0.5, -1.0])  # the branch taken / not taken
def test_an_array_bound_in_one_branch_is_not_released(lo):
    x = RNG.standard_normal(50)
    text, _, _ = _same(clipped, (x, lo))
    # ``v`` may be unbound: never released; ``u`` is, once read for the last time
    assert not re.search(r"^\s+del .*\bv\b", text, re.M), text
    check_grads(clipped, (x, lo))


def test_arrays_read_in_a_loop_live_through_it():
    x = RNG.standard_normal(30)
    text, _, _ = _same(smooth_steps, (x, 4))
    assert "del " in text, text
    _released_after_last_read(text)
    check_grads(smooth_steps, (x, 4))


def test_a_layer_called_twice_and_second_order_unchanged():
    layer = Dense(RNG.standard_normal((6, 6)) * 0.4, RNG.standard_normal(6) * 0.1)

    def loss(x):
        return np.sum(layer(layer(x)) ** 2)

    x = RNG.standard_normal((5, 6))
    _same(loss, (x,))
    check_grads(loss, (x,))
    # the gradient differentiated again reads no ``del`` (the general variant is)
    v = RNG.standard_normal((5, 6))
    eps = 1e-6
    g = s2s_ad.grad(loss)
    expected = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(s2s_ad.hvp(loss)(x, v), expected, rtol=1e-5, atol=1e-8)
