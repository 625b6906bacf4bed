"""A NumPy ufunc computed again in the backward sweep reads the value the forward sweep
holds (``s2s_ad/reuse.py``), and only while that value is certainly the same."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

import s2s_ad
from s2s_ad import optimize
from s2s_ad.api import clear_cache
from s2s_ad.testing import check_grads


def _clean(text: str) -> list[str]:
    """The optimizer's output for a generated function written by hand, line by line."""
    out = optimize.optimize_function(textwrap.dedent(text).strip("\n"), "_tape", optimize.Facts())
    return [ln.strip() for ln in out.splitlines()[1:] if not ln.strip().startswith("#")]


def _code(fun: Any, wrt: Any, *args: Any, enabled: bool = True) -> tuple[list[str], Any]:
    """The lines of the generated gradient that runs for ``args``, and its result."""
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        df = s2s_ad.grad(fun, wrt)
        out = df(*args)
        text = s2s_ad.source(df)
    finally:
        optimize.ENABLED = saved
        clear_cache()
    return [ln.strip() for ln in text.splitlines() if not ln.strip().startswith("#")], out


def wave_energy(x, a):
    y = np.sin(x) * a + np.exp(-x * x)
    w = np.maximum(np.tanh(y) ** 2, 0.1) / (1.0 + x * x)
    return np.sum(w * np.cos(x)) + np.mean(y)


def test_sin_and_cos_are_computed_once_and_the_gradient_is_unchanged():
    rng = np.random.default_rng(0)
    x, a = rng.standard_normal(50), 0.7
    lines, grads = _code(wave_energy, (0, 1), x, a)
    text = "\n".join(lines)
    assert text.count("np.cos(x)") == 1  # the forward sweep's, read again backwards
    assert text.count("np.sin(x)") == 1
    _, plain = _code(wave_energy, (0, 1), x, a, enabled=False)
    for got, want in zip(grads, plain):
        np.testing.assert_array_equal(got, want)  # the same value read: the same bits
    check_grads(wave_energy, (x, a))


def layer_norm_loss(params, x):
    """A Keras-style dense layer with a sine activation, then a cosine read-out."""
    h = x
    for W, b in params:
        h = np.sin(h @ W + b)
    return np.sum(np.cos(h) * h)


def test_a_loop_body_reuses_within_one_trip_only():
    rng = np.random.default_rng(1)
    params = [(rng.standard_normal((4, 5)) * 0.5, rng.standard_normal(5)) for _ in range(3)]
    params[-1] = (rng.standard_normal((5, 5)) * 0.5, rng.standard_normal(5))
    params[1] = (rng.standard_normal((5, 5)) * 0.5, rng.standard_normal(5))
    x = rng.standard_normal((6, 4))
    grads = s2s_ad.grad(layer_norm_loss)(params, x)

    def loss_of(flat: np.ndarray) -> float:
        rebuilt, k = [], 0
        for W, b in params:
            Wn = flat[k : k + W.size].reshape(W.shape)
            k += W.size
            rebuilt.append((Wn, flat[k : k + b.size]))
            k += b.size
        return float(layer_norm_loss(rebuilt, x))

    flat = np.concatenate([np.concatenate([W.ravel(), b]) for W, b in params])
    eps, numeric = 1e-6, np.zeros_like(flat)
    for i in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (loss_of(up) - loss_of(down)) / (2 * eps)
    analytic = np.concatenate([np.concatenate([gW.ravel(), gb]) for gW, gb in grads])
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def overwritten(x):
    y = x * 1.0
    c = np.cos(y)
    y[0] = 3.0 * y[1]  # y changes in place: cos(y) must be computed again
    return np.sum(np.sin(y) * c)


def test_a_value_written_in_place_is_not_reused():
    x = np.array([0.3, -1.2, 0.8, 2.0])
    check_grads(overwritten, (x,))


def test_the_pass_on_generated_code_written_by_hand():
    lines = _clean(
        """
        def f_grad(x, g):
            _t1 = np.cos(x)
            y = _t1 * 2.0
            x_bar = g * -np.sin(x)
            x_bar = x_bar + g * np.cos(x)
            return y, x_bar
        """
    )
    assert "x_bar = x_bar + g * _t1" in lines
    assert "x_bar = g * -np.sin(x)" in lines  # nothing holds sin(x)


@pytest.mark.parametrize(
    "between",
    [
        "x = x * 2.0; v = 0",  # a name the call reads is bound again
        "_t1 = g * 2.0; v = 0",  # the holder is bound again
        "_t1 += 1.0; v = 0",  # the holder is written in place
        "x[0] = 2.0; v = 0",  # an in-place write (an alias may be written)
        "v = np.add(g, 1.0, out=g)",  # NumPy writing into an argument
        "v = helper(x)",  # a call that may write into its arguments
        "_tape.append(x); v = 0",  # tape traffic
    ],
)
def test_the_pass_stops_where_the_value_may_differ(between: str):
    lines = _clean(
        f"""
        def f_grad(x, g, helper, _tape):
            _t1 = np.cos(x)
            y = _t1 * 2.0
            {between}
            x_bar = g * np.cos(x)
            return y, x_bar, _t1, v
        """
    )
    assert "x_bar = g * np.cos(x)" in lines


def test_an_adjoint_updated_in_place_keeps_the_reuse_going_when_it_is_fresh():
    lines = _clean(
        """
        def f_grad(x, g, h):
            _t1 = np.cos(x)
            x_bar = g * h
            x_bar += g * _t1
            x_bar += h * np.cos(x)
            return _t1, x_bar
        """
    )
    assert "x_bar += h * _t1" in lines
    passed_on = _clean(
        """
        def f_grad(x, g, h):
            _t1 = np.cos(x)
            x_bar = g * h
            keep = [x_bar]
            x_bar += g * _t1
            x_bar += h * np.cos(x)
            return _t1, x_bar, keep
        """
    )
    assert "x_bar += h * np.cos(x)" in passed_on  # x_bar was passed on: may alias


def test_a_whole_right_hand_side_is_not_replaced():
    lines = _clean(
        """
        def f_grad(x, g):
            _t1 = np.cos(x)
            v = np.cos(x)
            v += g
            return _t1, v
        """
    )
    assert "v = np.cos(x)" in lines  # v is updated in place: it must not be _t1
