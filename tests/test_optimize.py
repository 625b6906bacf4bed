"""The clean-up passes over generated code (``s2s_ad/optimize.py``): every corpus function
gives the same gradient with them on and off, and what they remove is really dead.

With the optimizer on, a call runs the variant lowered for its arguments' shape class
(``s2s_ad/lower.py``); off, the general one. Each case also runs at a point of the same
shape class with other sizes (that variant then serves a call it was not made for)."""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np
import pytest
from corpus import collect, resized
from fd import flatten, positions
from test_forward import SKIP as TEST_FORWARD_SKIP
from test_forward import _random_like

import s2s_ad
from s2s_ad import optimize
from s2s_ad.api import clear_cache
from s2s_ad.transforms import _jvp_wrt

CASES = collect()
SKIP: set[str] = set()
JVP_SKIP = TEST_FORWARD_SKIP  # refused in forward mode


def _gradients(c: Any, point: str, enabled: bool, resize: bool = False) -> Any:
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        df = s2s_ad.grad(c.fun, c.wrt)
        args = c.args(point)
        if resize:  # the variant made for the first call serves the second
            df(*copy.deepcopy(args))
            args = resized(args, np.random.default_rng(len(c.label)))
        with np.errstate(all="ignore"):
            return df(*copy.deepcopy(args))
    finally:
        optimize.ENABLED = saved
        clear_cache()


@pytest.mark.parametrize("c", [c for c in CASES if c.label not in SKIP], ids=lambda c: c.label)
def test_same_gradients_with_and_without_the_optimizer(c: Any) -> None:
    for point in c.points:
        on = flatten(_gradients(c, point, True))
        off = flatten(_gradients(c, point, False))
        np.testing.assert_array_equal(on, off, err_msg=f"{c.label}[{point}]")
        try:
            off = flatten(_gradients(c, point, False, resize=True))
        except Exception as exc:  # noqa: BLE001 (the sizes do not suit the function)
            with pytest.raises(type(exc)):
                _gradients(c, point, True, resize=True)
            continue
        on = flatten(_gradients(c, point, True, resize=True))
        np.testing.assert_array_equal(on, off, err_msg=f"{c.label}[{point}, resized]")


def _tangent(c: Any, point: str, enabled: bool) -> Any:
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        args = c.args(point)
        where, _ = positions(c.fun, c.wrt)
        rng = np.random.default_rng(3)
        directions = [_random_like(args[p], rng) for p in where]
        with np.errstate(all="ignore"):
            return _jvp_wrt(c.fun, copy.deepcopy(args), where, directions)
    finally:
        optimize.ENABLED = saved
        clear_cache()


@pytest.mark.parametrize("c", [c for c in CASES if c.label not in JVP_SKIP], ids=lambda c: c.label)
def test_same_tangents_with_and_without_the_optimizer(c: Any) -> None:
    point = next(iter(c.points))
    on = flatten(_tangent(c, point, True))
    off = flatten(_tangent(c, point, False))
    np.testing.assert_array_equal(on, off, err_msg=f"{c.label}[{point}]")


def _source(fun: Any, enabled: bool) -> str:
    saved = optimize.ENABLED
    optimize.ENABLED = enabled
    clear_cache()
    try:
        return s2s_ad.source(s2s_ad.grad(fun))
    finally:
        optimize.ENABLED = saved
        clear_cache()


def first_positive_sum(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


def skip_or_stop(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0.1 * s:  # reads s, which the trips change: not tested again backwards
            if x[i] < -1:
                break
            continue
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


def test_a_branch_flag_nothing_reads_is_neither_pushed_nor_restored():
    # the backward sweep reads _t1 only to reset jump flags the next pop overwrites
    before, after = _source(skip_or_stop, False), _source(skip_or_stop, True)
    assert "_tape.append(_t1)" in before and "_t1 = _tape.pop()" in before
    assert "_tape.append(_t1)" not in after and "_t1 = _tape.pop()" not in after
    assert after.count("_tape.append(") == after.count("_tape.pop()")
    assert re.search(r"# L\d+: if x\[i\] < 0.1 \* s:", after)
    assert re.search(r"# L\d+: s = s \* np.cos", after)
    x = np.array([0.5, -0.2, 0.1, -1.5, 0.3])
    assert s2s_ad.grad(skip_or_stop)(x, 5) == pytest.approx(_reference(skip_or_stop, x, 5))


def _reference(fun: Any, x: np.ndarray, *rest: Any) -> np.ndarray:
    from fd import numerical_grad

    return numerical_grad(fun, (x, *rest), 0)


def test_site_marks_never_reach_the_generated_code():
    text = _source(first_positive_sum, True)
    assert "#@" not in text


def test_disabled_optimizer_leaves_the_sweeps_as_built():
    text = _source(skip_or_stop, False)
    assert text.count("_tape.append(") > _source(skip_or_stop, True).count("_tape.append(")


def cubic_energy(x, y):
    return np.sum(x * x * y + y * y)


def test_the_two_contributions_of_x_times_x_are_merged():
    text = _source(cubic_energy, True)
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("x_bar ="))
    assert line.strip().startswith("x_bar = 2.0 * ") and " + " not in line
    x, y = np.array([0.5, -1.0]), np.array([2.0, 0.3])
    np.testing.assert_allclose(s2s_ad.grad(cubic_energy)(x, y), 2 * x * y)


def test_source_shows_the_variant_that_ran_last():
    import inspect

    df = s2s_ad.grad(cubic_energy)
    df(np.ones(3), np.ones(3))
    for_arrays = s2s_ad.source(df)
    df(2.0, 3.0)
    for_floats = s2s_ad.source(df)
    assert for_arrays != for_floats and "unbroadcast" not in for_floats
    assert inspect.getsource(df) == for_floats
    df(np.ones(3), np.ones(3))
    assert s2s_ad.source(df) == for_arrays
