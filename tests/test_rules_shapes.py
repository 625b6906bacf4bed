"""End to end through the transformer: NumPy's index tricks (``np.r_``, ``np.c_``) and the
array-manipulation rules of :mod:`s2s_ad.rules.shapes`, in both modes and second order;
what is not modelled is refused (never a silent zero gradient)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy import r_

import s2s_ad

X0 = np.array([0.6, -1.3, 0.9])


def r_concat(x):
    y = np.r_[x, 2.0 * x, x[0] ** 2]
    return np.sum(y**3)


def c_columns(x):
    m = np.c_[x, x**2, np.sin(x)]
    return np.sum(m @ m.T)


def r_imported(x):
    return np.sum(r_[x[:2], 1.5, x] ** 2)


def r_single(x):
    return np.sum(np.r_[x] * np.arange(3.0))


@pytest.mark.parametrize("fun", [r_concat, c_columns, r_imported, r_single])
def test_index_tricks(fun: Any) -> None:
    s2s_ad.check_grads(fun, (X0,), modes=("rev", "fwd"))
    s2s_ad.check_grads(fun, (X0,), order=2)


def r_with_slice(x):
    return np.sum(np.r_[0:2, x] ** 2)


def r_with_directive(x):
    return np.sum(np.r_["0,2", x, x])


def r_constant_slice(x):
    idx = np.r_[0:2, 2]
    return np.sum(x[idx] ** 2)


@pytest.mark.parametrize("fun", [r_with_slice, r_with_directive])
def test_index_tricks_with_slices_or_directives_are_refused(fun: Any) -> None:
    with pytest.raises(s2s_ad.TransformError, match=r"np.r_\[...\] with a"):
        s2s_ad.grad(fun)(X0)
    with pytest.raises(s2s_ad.TransformError, match=r"np.r_\[...\] with a"):
        s2s_ad.jvp(fun, (X0,), (X0,))


def test_index_tricks_on_constants_still_run() -> None:
    np.testing.assert_allclose(s2s_ad.grad(r_constant_slice)(X0), 2.0 * X0)


# --- the rules of s2s_ad/rules/shapes.py through the transformer ---------------------------

A0 = np.array([[0.5, -1.2, 0.8], [1.5, 0.4, -0.7]])
XP = np.array([0.0, 0.5, 1.3, 2.0])


def manipulations(x):
    m = np.reshape(x, (2, 3))
    parts = np.split(np.append(x, x[:2] ** 2), 4)
    out = np.sum(np.diff(x, 2) ** 2) + np.sum(np.cumprod(x + 2.0)) + np.sum(np.rot90(m) ** 3)
    out = out + np.sum(parts[1] * parts[3]) + np.sum(np.take(x, [0, 2, 2]) ** 2)
    out = out + np.sum(np.take_along_axis(m, np.array([[2, 0], [1, 1]]), 1) ** 2)
    return out + np.sum(np.gradient(x**2, 0.5)) + np.sum(np.sinc(x) * np.nan_to_num(x))


def signals(x):
    smooth = np.convolve(x, np.array([0.25, 0.5, 0.25]), "same")
    grid_x, grid_y = np.meshgrid(x[:2], x[2:5])
    padded = np.pad(x[:3], (1, 2), "reflect")
    kron = np.kron(x[:2], x[3:5])
    picked = np.select([x > 0, x < -1], [x**2, np.sin(x)], 0.5 * x)
    curve = np.interp(np.array([0.3, 0.9, 1.6]), XP, x[:4] ** 2)
    return (
        np.sum(smooth**2)
        + np.sum(grid_x * grid_y)
        + np.sum(padded**2 * np.arange(6.0))
        + np.sum(kron**2)
        + np.sum(picked)
        + np.sum(curve**2)
    )


@pytest.mark.parametrize("fun", [manipulations, signals])
def test_array_manipulation_programs(fun: Any) -> None:
    x = np.array([0.6, -1.3, 0.9, 2.1, -0.4, 1.1])
    s2s_ad.check_grads(fun, (x,), modes=("rev", "fwd"))
    s2s_ad.check_grads(fun, (x,), order=2)


def imag_part(x):
    return np.sum(np.real(x) ** 2 + np.imag(x))


def test_real_and_imag_of_real_input() -> None:
    x = np.array([0.5, -1.5])
    np.testing.assert_allclose(s2s_ad.grad(imag_part)(x), 2.0 * x)


def pad_ramp_and_mean(x):
    """A border that ramps to zero, then one of the mean of the row: both linear in x."""
    a = np.pad(x, 2, "linear_ramp")
    b = np.pad(a, (1, 3), "mean", stat_length=2)
    return np.sum(np.sin(b) * np.arange(b.size))


def pad_odd(x):
    return np.sum(np.pad(x, 2, "reflect", reflect_type="odd"))


def test_pad_modes_ramp_and_mean_against_finite_differences() -> None:
    x = np.array([0.5, -1.5, 0.7])
    s2s_ad.check_grads(pad_ramp_and_mean, (x,), modes=("rev", "fwd"))
    s2s_ad.check_grads(pad_ramp_and_mean, (x,), order=2)


def test_pad_odd_reflection_is_refused_at_the_users_line() -> None:
    # (maximum, minimum and median are differentiated: tests/test_language_lang5.py)
    with pytest.raises(s2s_ad.TransformError, match="reflect_type='odd'") as info:
        s2s_ad.grad(pad_odd)(np.array([0.5, -1.5]))
    assert 'np.pad(x, 2, "reflect", reflect_type="odd")' in str(info.value)


def _apply(fn, x):
    return fn(x, ord=3)


def norm_passed_in(x):
    return _apply(np.linalg.vector_norm, x)


def grid_passed_in(x, fn):
    return np.sum(fn(x, x**2, indexing="ij")[1] ** 2)


def einsum_passed_in(x, fn):
    return fn("i,i->", x, x**2)


def test_rules_with_keyword_only_and_varargs_parameters_through_runtime_dispatch() -> None:
    """A callable with a rule known only at run time (passed in as a value) binds keyword-only
    parameters and ``*args`` like a call seen in the source."""
    s2s_ad.check_grads(norm_passed_in, (X0,))
    s2s_ad.check_grads(lambda x: grid_passed_in(x, np.meshgrid), (X0,))
    s2s_ad.check_grads(lambda x: einsum_passed_in(x, np.einsum), (X0,))


def splits_and_stacks(x):
    m = np.reshape(x, (2, 3))
    left, right = np.hsplit(np.column_stack([x[:3], x[3:]]), 2)
    top, bottom = np.vsplit(m, 2)
    cube = np.dstack([m, m**2])
    front, back = np.dsplit(cube, 2)
    return np.sum(left * right) + np.sum(top * bottom**2) + np.sum(front * back)


def test_splits_and_stacks() -> None:
    x = np.array([0.6, -1.3, 0.9, 2.1, -0.4, 1.1])
    s2s_ad.check_grads(splits_and_stacks, (x,), modes=("rev", "fwd"))
    s2s_ad.check_grads(splits_and_stacks, (x,), order=2)


def normalized_density(p):
    grid = np.linspace(-3.0, 3.0, 41) * np.exp(p[0])
    dens = np.exp(-0.5 * (grid - p[1]) ** 2)
    return np.trapezoid(dens, grid) + np.trapezoid(dens**2, dx=0.15)


@pytest.mark.skipif(not hasattr(np, "trapezoid"), reason="NumPy < 2.0")
def test_trapezoid_integration() -> None:
    s2s_ad.check_grads(normalized_density, (np.array([0.1, 0.3]),), modes=("rev", "fwd"))
    s2s_ad.check_grads(normalized_density, (np.array([0.1, 0.3]),), order=2)


def running_survival(hazards):
    """Survival curves as running products of per-step survival rates, some exactly 0."""
    survive = np.cumprod(1.0 - hazards, axis=1)
    return np.sum(survive * np.arange(1.0, 5.0)) + np.sum(np.cumprod(hazards) ** 2)


def test_cumprod_is_exact_at_zeros() -> None:
    """A rate of exactly 1 (survival 0) is no NaN: the exclusive-product form divides by
    nothing. Checked in both modes and at second order, where the zeros stay."""
    h = np.array([[0.2, 1.0, 0.3, 0.1], [0.0, 0.5, 1.0, 0.4], [0.3, 0.2, 0.6, 1.0]])
    grad = s2s_ad.grad(running_survival)(h)
    assert np.all(np.isfinite(grad))
    s2s_ad.check_grads(running_survival, (h,), modes=("rev", "fwd"))
    s2s_ad.check_grads(running_survival, (h,), order=2)
