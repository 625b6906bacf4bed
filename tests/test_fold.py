"""Folding generated code back together (``s2s_ad/fold.py``): single-use temporaries into
their readers, ``e + e`` as ``2 * e``, a first contribution assigned instead of added to
a zero; and what must never move.

The gradients themselves are compared with the optimizer on and off for every corpus
function in ``test_optimize.py``; here, the generated code of functions a user writes,
and of hand-made generated functions (the optimizer's input), one rule at a time.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import s2s_ad
from s2s_ad import optimize
from s2s_ad.api import clear_cache
from s2s_ad.codefacts import pure_call
from s2s_ad.testing import numerical_grad


def _clean(text: str) -> str:
    """The optimizer's output for a generated function written by hand."""
    return optimize.optimize_function(textwrap.dedent(text).strip("\n"), "_tape", optimize.Facts())


def _body(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()[1:] if not ln.strip().startswith("#")]


def _source(fun: Any, *args: Any, enabled: bool = True) -> str:
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        df = s2s_ad.grad(fun)
        if args:
            df(*args)
        return s2s_ad.source(df)
    finally:
        optimize.ENABLED = saved
        clear_cache()


def rnn_loss(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h**2)


def test_the_forward_sweep_reads_like_the_users_line():
    rng = np.random.default_rng(0)
    args = (
        rng.normal(size=(3, 4)),
        rng.normal(size=(4, 4)),
        rng.normal(size=4),
        rng.normal(size=(5, 3)),
        np.zeros(4),
    )
    text = _source(rnn_loss, *args)
    # the old h is saved before the line runs, so the line comes back whole
    # (each trip's new h goes in the loop's own list: trip_records.py)
    assert "h = np.tanh(xs[t] @ Wx + h @ Wh + b)\n        _h_tape.append(h)\n" in text
    assert "for t in range(xs.shape[0]):" in text
    off = _source(rnn_loss, *args, enabled=False)
    assert len(text.splitlines()) < len(off.splitlines())
    s2s_ad.check_grads(rnn_loss, list(args))


def mlp_loss(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=1))
    return -np.mean(z[np.arange(len(y)), y] - lse)


def test_an_mlp_gives_the_same_gradient_folded_and_not():
    rng = np.random.default_rng(1)
    params = [(rng.normal(size=(4, 6)), rng.normal(size=6)), (rng.normal(size=(6, 3)), np.zeros(3))]
    x, y = rng.normal(size=(5, 4)), rng.integers(0, 3, size=5)
    grads = {}
    for enabled in (True, False):
        saved = optimize.ENABLED
        optimize.ENABLED = enabled
        clear_cache()
        try:
            grads[enabled] = s2s_ad.grad(mlp_loss)(params, x, y)
        finally:
            optimize.ENABLED = saved
            clear_cache()
    for (gw1, gb1), (gw2, gb2) in zip(grads[True], grads[False]):
        np.testing.assert_array_equal(gw1, gw2)
        np.testing.assert_array_equal(gb1, gb2)
    first = lambda W: mlp_loss([(W, params[0][1]), params[1]], x, y)  # noqa: E731
    num = numerical_grad(first, [params[0][0]], 0).reshape(4, 6)
    np.testing.assert_allclose(grads[True][0][0], num, rtol=1e-5, atol=1e-7)


def test_a_chain_of_temporaries_folds_into_the_test_that_reads_it():
    out = _clean(
        """
        def f_grad(x, i):
            # L3: if x[i] < 0:
            _t2 = x[i]
            _t1 = _t2 < 0
            if _t1:
                return 1.0
            return 0.0
        """
    )
    assert _body(out) == ["if x[i] < 0:", "return 1.0", "return 0.0"]
    assert "# L3: if x[i] < 0:" in out


@pytest.mark.parametrize(
    "between",
    [
        "x[0] = 5.0",  # an in-place write (an alias of what is read may be written)
        "x += 1.0",
        "_tape.append(x)",  # tape traffic
        "x = _tape.pop()",
        "x = x * 2.0",  # a write of what the value reads
        "log(x)",  # a call that may have effects
    ],
)
def test_a_value_never_moves_past_a_write_or_the_tape(between: str):
    out = _clean(
        f"""
        def f_grad(x, _tape):
            _t1 = np.sin(x)
            {between}
            y = _t1 * 2.0
            return y, x, _tape
        """
    )
    assert "_t1 = np.sin(x)" in out and "y = _t1 * 2.0" in out


def test_nothing_is_duplicated_moved_into_a_loop_test_or_a_conditional_operand():
    out = _clean(
        """
        def f_grad(x, c):
            _t1 = np.exp(x)
            y = _t1 * _t1
            _t2 = np.cos(x)
            z = c and _t2
            _t3 = np.sum(x)
            while _t3 > 0:
                x = x - 1.0
            return y, z, x
        """
    )
    assert "_t1 = np.exp(x)" in out  # read twice: folding would compute it twice
    assert "_t2 = np.cos(x)" in out and "z = c and _t2" in out
    assert "_t3 = np.sum(x)" in out and "while _t3 > 0:" in out


def test_a_value_stays_in_the_code_of_its_users_line():
    out = _clean(
        """
        def f_grad(x):
            # L2: a = np.sin(x) * 2.0
            _t1 = np.sin(x)
            # L3: return a
            a = _t1 * 2.0
            return a
        """
    )
    assert "_t1 = np.sin(x)" in out


def test_the_first_contribution_is_assigned_not_added_to_a_zero():
    out = _clean(
        """
        def f_grad(x, y_bar, z_bar):
            x_bar = 0.0
            x_bar = x_bar + y_bar * 3.0
            w_bar = 0.0
            w_bar += z_bar * x
            v_bar = 0.0
            u = v_bar * 2.0
            v_bar = v_bar + y_bar * 2.0
            return x_bar, w_bar, v_bar, u
        """
    )
    body = _body(out)
    assert "x_bar = y_bar * 3.0" in body and "w_bar = z_bar * x" in body
    assert "x_bar = 0.0" not in body and "w_bar = 0.0" not in body
    assert "v_bar = 0.0" in body  # the zero is read on the way


def twice_contributed(x, y):
    return np.sum(x * x * y + y * y)


def test_doubled_contributions_are_merged_bit_for_bit():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([2.0, 0.3, -0.7])
    text = _source(twice_contributed, x, y)
    assert "y_bar = 2.0 * " in text or "2.0 * (" in text
    np.testing.assert_array_equal(s2s_ad.grad(twice_contributed)(x, y), 2 * x * y)


def test_every_example_on_the_optimizer_page_is_current():
    page = (Path(__file__).resolve().parent.parent / "docs" / "optimizer.md").read_text()
    blocks = re.findall(r"```python\n(.*?)\n```", page, flags=re.S)
    assert len(blocks) >= 10 and len(blocks) % 2 == 0
    for before, after in zip(blocks[::2], blocks[1::2]):
        assert _clean(before) == after


def test_a_value_folded_into_another_moves_no_further_than_both_may():
    # the tangent of ``a += np.sin(a)``: once ``_t2_dot`` (reading ``a``) is folded into
    # ``_t1_dot``, ``_t1_dot`` reads ``a`` and must not pass ``a``'s update
    out = _clean(
        """
        def f_jvp(a, a_dot):
            _t2_dot = a_dot * np.cos(a)
            _t1_dot = _t2_dot + 0.5
            a = a + 1.0
            b = _t1_dot * 2.0
            return a, b
        """
    )
    assert _body(out) == [
        "_t1_dot = a_dot * np.cos(a) + 0.5",
        "a = a + 1.0",
        "b = _t1_dot * 2.0",
        "return a, b",
    ]


def test_the_users_own_underscore_names_are_kept():
    out = _clean(
        """
        def f_grad(x):
            _ = x ** 2
            __ = _ * 3.0
            return __ + x
        """
    )
    assert "_ = x ** 2" in out and "__ = _ * 3.0" in out


def damped_energy(x, n):
    """A damped oscillator stepped with a two-name update and a rebound state."""
    pos, vel = x[0], x[1]
    e = 0.0
    for _ in range(n):
        pos, vel = pos + 0.1 * vel, vel - 0.1 * np.sin(pos) - 0.05 * vel
        e = e * 0.9 + pos**2 + np.cos(vel) * vel
    return e


def test_a_line_saves_the_old_value_before_it_runs_and_folds_back_whole():
    x = np.array([0.7, -0.3])
    text = _source(damped_energy, x, 6)
    # the old pos is pushed before the pair's temporaries, which then fold (each trip's
    # new vel goes in the loop's own list after the pair: trip_records.py)
    assert re.search(r"_tape\.append\(pos\)\n\s+_t\d+ = vel - ", text)
    assert re.search(r"vel = _t\d+\n\s+_vel_tape\.append\(vel\)\n", text)
    assert "\n        e = e * 0.9 + pos ** 2 + np.cos(vel) * vel\n" in text
    g = s2s_ad.grad(damped_energy)(x, 6)
    num = numerical_grad(lambda v: damped_energy(v, 6), [x], 0)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)
    # the pair assigned at once (each read by the other's new value) stays right
    for enabled in (True, False):
        np.testing.assert_allclose(_grad_with(damped_energy, enabled, x, 6), g, rtol=1e-12)


def _grad_with(fun: Any, enabled: bool, *args: Any) -> Any:
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        return s2s_ad.grad(fun)(*args)
    finally:
        optimize.ENABLED = saved
        clear_cache()


class Spring:
    """A Keras-style layer: a spring's energy plus a constant pull, over displacements."""

    def __init__(self, k: float) -> None:
        self.k = k

    def energy(self, x):
        return np.sum(x * x * self.k + x)


def test_a_statements_two_contributions_to_one_adjoint_merge_exactly():
    spring = Spring(0.25)
    x = np.array([0.5, -1.25, 2.0, 0.1])
    text = _source(spring.energy, x)
    # x * x gives e + e while x_bar is already live: summed first, then doubled
    assert re.search(r"x_bar (\+= |= x_bar \+ )2\.0 \* ", text), text
    g = s2s_ad.grad(spring.energy)(x)
    num = numerical_grad(spring.energy, [x], 0)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(g, _grad_with(spring.energy, False, x))


def logistic_orbit(x, n):
    """A scalar loop with a branch on the running value, calling the math module."""
    s = x
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + math.sin(x * i)
        else:
            s = s + math.exp(-x * x)
    return s


def test_a_math_module_call_folds_like_a_numpy_one():
    text = _source(logistic_orbit, 0.9, 30)
    assert "s = s * 0.5 + math.sin(x * i)\n" in text, text
    assert "s = s + math.exp(-x * x)\n" in text, text
    g = s2s_ad.grad(logistic_orbit)(0.9, 30)
    num = numerical_grad(lambda v: logistic_orbit(v, 30), [0.9], 0)
    np.testing.assert_allclose(g, num, rtol=1e-6)
    assert g == _grad_with(logistic_orbit, False, 0.9, 30)


def first_positive_sum(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


def squash_in_place(x, w):
    y = x * 1.0
    for i in range(1, y.shape[0]):
        y[i] = y[i] * w + y[i] ** 2 * 0.1 - y[i - 1]
    return np.sum(y * y)


def test_an_element_read_twice_in_a_line_is_spelled_out_at_each_read():
    x = np.array([0.5, 0.2, 0.9, -0.4, 0.3])
    text = _source(first_positive_sum, x, 5)
    # GENERATED.md's break loop: the user's line comes back, and one push per trip
    assert "        _tape.append(s)\n        s = s * np.cos(x[i]) + x[i] ** 2\n" in text, text
    assert re.findall(r"_tape\.append\((\w+)\)", text) == ["s"]
    g = s2s_ad.grad(first_positive_sum)(x, 5)
    np.testing.assert_allclose(g, numerical_grad(lambda v: first_positive_sum(v, 5), [x], 0))
    np.testing.assert_array_equal(g, _grad_with(first_positive_sum, False, x, 5))


def test_an_element_is_read_again_only_before_the_line_writes_it():
    x, w = np.array([0.3, -0.5, 0.8, 0.1]), 0.7
    text = _source(squash_in_place, x, w)
    # the copy of the old y[i] is pushed first, then the user's line runs as written
    code = _body(text)
    k = code.index("y[i] = y[i] * w + y[i] ** 2 * 0.1 - y[i - 1]")
    assert code[k - 1].startswith("_tape.append(") and "y[i]" in code[k - 1], text
    g = s2s_ad.grad(squash_in_place, wrt=(0, 1))(x, w)
    num = numerical_grad(lambda v, c: squash_in_place(v, c), [x, w], 0)
    np.testing.assert_allclose(g[0], num, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g[1], numerical_grad(lambda c: squash_in_place(x, c), [w], 0))
    off = _grad_with(squash_in_place, False, x, w)
    np.testing.assert_array_equal(s2s_ad.grad(squash_in_place)(x, w), off)


def clipped_response(gain, bias):
    """A branch whose only work is overwritten later: its body goes, its test stays."""
    if 0.5 * bias - gain + bias > -0.3:
        bias = np.exp(0.3 * np.sin(bias))
    else:
        gain = gain * bias
    bias = np.sin(gain)
    return gain + bias


@pytest.mark.parametrize("point", [(0.4, 0.9), (2.0, -1.5)])
def test_a_test_folded_into_an_emptied_if_is_written_whole(point):
    text = s2s_ad.api.compile_forward(clipped_response, ("gain",)).source_of("jvp")
    assert "if not (0.5 * bias - gain + bias > -0.3):" in text, text
    _, tangent = s2s_ad.jvp(lambda g: clipped_response(g, point[1]), (point[0],), (1.0,))
    want = numerical_grad(lambda g: clipped_response(g, point[1]), [point[0]], 0)
    assert tangent == pytest.approx(want, rel=1e-6)
    assert s2s_ad.grad(clipped_response)(*point) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize(
    "src, pure",
    [
        ("np.sin(x)", True),
        ("np.linalg.norm(x, axis=0)", True),
        ("math.exp(x)", True),
        ("np.add(a, b, out=g)", False),
        ("np.copyto(a, b)", False),
        ("np.add.at(x, i, v)", False),
        ("np.fill_diagonal(a, 0.0)", False),
        ("np.random.normal(size=3)", False),
    ],
)
def test_calls_that_write_into_an_argument_are_not_pure(src: str, pure: bool) -> None:
    """Folding and dead-store removal never move or drop a NumPy call that writes into
    its argument (``out=``, ``np.copyto``, ``np.add.at``)."""
    assert pure_call(ast.parse(src, mode="eval").body) is pure
