"""The derivatives of the regularized incomplete gamma and beta functions in their shape
parameters (``_ad.gammainc_da``, ``_ad.betainc_da``, ``_ad.betainc_db``):
``scipy.special.gammainc``/``gammaincc``/``betainc`` and the distribution functions of
``scipy.stats.gamma``, ``beta`` and ``t`` in ``a``, ``b``, ``df``.

There is no closed form to compare with and autograd does not differentiate these in
their shapes; the reference is SciPy's own function differentiated numerically to high
precision without mpmath: central differences of ``log F`` (or of the log of the
complement, whichever is below one half, so that no digits cancel), Richardson-extrapolated
over four step sizes, times ``F``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import s2s_ad

sc = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")


def richardson_log(lower: Any, upper: Any, p: float) -> float:
    """``d/dp`` of ``lower(p)`` (``1 - upper(p)``, used when ``lower(p) >= 0.5``) from
    Richardson-extrapolated central differences of its logarithm."""
    use_lower = lower(p) < 0.5
    value = lower(p) if use_lower else upper(p)
    if value == 0.0:
        return 0.0
    f = lower if use_lower else upper
    h = min(0.02 * max(np.sqrt(p), 0.1), 0.25 * p)
    table = [(np.log(f(p + h / 2**k)) - np.log(f(p - h / 2**k))) / (2 * h / 2**k) for k in range(4)]
    for m in range(1, 4):
        table = [(4**m * table[k + 1] - table[k]) / (4**m - 1) for k in range(len(table) - 1)]
    return value * table[0] if use_lower else -value * table[0]


def reference_da(a: float, x: float) -> float:
    """``dP/da`` by Richardson-extrapolated differences of ``log P`` or ``log Q``."""
    lower = sc.gammainc(a, x) < 0.5
    value = sc.gammainc(a, x) if lower else sc.gammaincc(a, x)
    if value == 0.0:  # underflows: so does the derivative
        return 0.0

    def log_f(s: float) -> float:
        return float(np.log(sc.gammainc(s, x) if lower else sc.gammaincc(s, x)))

    h = min(0.02 * max(np.sqrt(a), 0.1), 0.25 * a)
    table = [(log_f(a + h / 2**k) - log_f(a - h / 2**k)) / (2 * h / 2**k) for k in range(4)]
    for m in range(1, 4):
        table = [(4**m * table[k + 1] - table[k]) / (4**m - 1) for k in range(len(table) - 1)]
    return value * table[0] if lower else -value * table[0]


SHAPES = [0.05, 0.3, 1.0, 2.5, 7.0, 30.0, 150.0, 1000.0, 2e4, 9e5]


def _points() -> list[tuple[float, float]]:
    out = []
    for a in SHAPES:
        for x in (1e-3, 0.3 * a, 0.9 * a, a, a + 1.0, a + 1.5, 1.2 * a + 2.0, 3.0 * a + 10.0):
            out.append((a, x))
        out.append((a, a + 4.0 * np.sqrt(a)))
        if a > 20:
            out.append((a, a - 4.0 * np.sqrt(a)))
    return out


@pytest.mark.parametrize(("a", "x"), _points())
def test_gammainc_da_against_high_precision_differences(a: float, x: float) -> None:
    got = s2s_ad.grad(lambda s: sc.gammainc(s, x))(a)
    want = reference_da(a, x)
    if abs(want) < 1e-290:  # underflows in either form
        assert abs(got) < 1e-280
        return
    assert np.isfinite(got)
    np.testing.assert_allclose(got, want, rtol=2e-8)


def test_vectorized_and_edges() -> None:
    a = np.array([0.5, 2.0, 2.0, 40.0, 3.0])
    x = np.array([0.2, 2.9, 3.1, 41.0, 0.0])  # both sides of x = a + 1, and x = 0
    got = s2s_ad.grad(lambda s: np.sum(sc.gammainc(s, x)))(a)
    want = [reference_da(ai, xi) if xi > 0 else 0.0 for ai, xi in zip(a, x)]
    np.testing.assert_allclose(got, want, rtol=2e-8)
    assert got[-1] == 0.0


def binned_gamma_loglik(shape, scale):
    """Interval-censored likelihood: counts of observations falling between bin edges."""
    edges = np.array([0.0, 0.5, 1.0, 2.0, 4.0, 8.0])
    counts = np.array([3.0, 7.0, 12.0, 9.0, 4.0])
    cdf = st.gamma.cdf(edges, shape, scale=scale)
    tail = st.gamma.sf(edges[-1], shape, scale=scale)
    return np.sum(counts * np.log(np.diff(cdf))) + 2.0 * np.log(tail)


def tails(a, x):
    lower = st.gamma.logcdf(x, a, loc=0.1, scale=1.5)
    upper = st.gamma.logsf(x, a, loc=0.1, scale=1.5)
    return np.sum(lower * np.cos(x) + upper) + np.sum(sc.gammaincc(a, x) ** 2)


X_DATA = np.array([0.05, 0.7, 1.9, 3.3, 6.0])


@pytest.mark.parametrize(
    ("fun", "args"),
    [
        (binned_gamma_loglik, (1.7, 1.3)),
        (binned_gamma_loglik, (0.6, 2.2)),
        # inside the support (x > loc = 0.1): below it logcdf is -inf and the function too
        (tails, (2.3, X_DATA + 0.1)),
        (tails, (np.array([0.4, 1.2, 3.0, 8.0, 2.0]), X_DATA + 0.1)),
    ],
)
def test_programs_in_both_modes(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, modes=("rev", "fwd"), rtol=1e-6)


def test_mixed_second_derivative_is_exact() -> None:
    """``d/dx`` of the generated ``d/da``: the derivative of the density in ``a``."""
    dP_da = s2s_ad.grad(lambda a, x: sc.gammainc(a, x), 0)
    mixed = s2s_ad.grad(dP_da, 1)
    for a, x in [(2.5, 0.7), (0.4, 3.5), (30.0, 33.0)]:
        want = np.exp((a - 1.0) * np.log(x) - x - sc.gammaln(a)) * (np.log(x) - sc.digamma(a))
        np.testing.assert_allclose(mixed(a, x), want, rtol=1e-12)
        s2s_ad.check_grads(lambda x, a=a: dP_da(a, x), (x,), modes=("rev", "fwd"))


def test_second_derivative_in_the_shape_is_refused() -> None:
    def f(a):
        return sc.gammainc(a, 1.5)

    with pytest.raises(s2s_ad.TransformError, match="gammainc_da"):
        s2s_ad.grad(s2s_ad.grad(f))(2.0)
    with pytest.raises(s2s_ad.TransformError, match="gammainc_da"):
        s2s_ad.hessian(f)(2.0)


def test_too_large_a_shape_is_refused_not_approximated() -> None:
    with pytest.raises(s2s_ad.TransformError, match="above 1e6"):
        s2s_ad.grad(lambda a: sc.gammainc(a, a * 1.0001))(1e10)
    s2s_ad.grad(lambda a: sc.gammainc(a, a + 1.0))(1e6)  # the largest shape: converges


def beta_reference(a: float, b: float, x: float) -> tuple[float, float]:
    """``(dI/da, dI/db)`` of ``betainc(a, b, x)`` by :func:`richardson_log`."""
    d_a = richardson_log(lambda s: sc.betainc(s, b, x), lambda s: sc.betainc(b, s, 1 - x), a)
    d_b = richardson_log(lambda s: sc.betainc(a, s, x), lambda s: sc.betainc(s, a, 1 - x), b)
    return d_a, d_b


BETA_SHAPES = [0.1, 0.5, 1.0, 2.5, 10.0, 80.0, 1000.0]


def _beta_points() -> list[tuple[float, float, float]]:
    out = []
    for a in BETA_SHAPES:
        for b in (0.2, 1.0, 3.0, 40.0, 500.0):
            mode = a / (a + b)
            for x in (1e-3, 0.5 * mode, mode, 0.5, min(0.999, mode + 0.1), 0.999):
                out.append((a, b, x))
    return out


@pytest.mark.parametrize(("a", "b", "x"), _beta_points())
def test_betainc_shapes_against_high_precision_differences(a: float, b: float, x: float) -> None:
    got = s2s_ad.grad(lambda a, b: sc.betainc(a, b, x), (0, 1))(a, b)
    for g, w in zip(got, beta_reference(a, b, x)):
        if abs(w) < 1e-290:
            assert abs(g) < 1e-280
        else:
            np.testing.assert_allclose(g, w, rtol=5e-8)


@pytest.mark.parametrize("df", [0.7, 3.0, 30.0, 300.0])
@pytest.mark.parametrize("x", [-30.0, -3.0, -0.5, 0.0, 0.4, 2.0, 10.0])
def test_t_cdf_in_df(df: float, x: float) -> None:
    got = s2s_ad.grad(lambda d: st.t.cdf(x, d, 0.2, 1.5), 0)(df)
    want = richardson_log(lambda d: st.t.cdf(x, d, 0.2, 1.5), lambda d: st.t.sf(x, d, 0.2, 1.5), df)
    np.testing.assert_allclose(got, want, rtol=5e-8, atol=1e-300)
    sf = s2s_ad.grad(lambda d: st.t.sf(x, d, 0.2, 1.5), 0)(df)
    np.testing.assert_allclose(sf, -got, rtol=1e-15, atol=0)


def beta_interval_loglik(a, b):
    """Proportions binned into intervals, a beta model with a shifted support."""
    edges = np.array([0.0, 0.1, 0.3, 0.6, 0.9, 1.0])
    counts = np.array([2.0, 6.0, 11.0, 5.0, 1.0])
    cdf = st.beta.cdf(edges * 0.9 + 0.05, a, b, loc=0.0, scale=1.0)
    return np.sum(counts * np.log(np.diff(cdf) + 1e-12))


def robust_tails(df, x):
    """Student-t tail probabilities of residuals, in the degrees of freedom and the data."""
    return np.sum(st.t.logsf(np.abs(x), df, scale=0.8)) + np.sum(st.t.logcdf(x, df) * x)


@pytest.mark.parametrize(
    ("fun", "args"),
    [
        (beta_interval_loglik, (1.8, 3.1)),
        (beta_interval_loglik, (0.6, 0.9)),
        (robust_tails, (3.5, np.array([-2.1, -0.3, 0.5, 1.7, 4.0]))),
        (
            robust_tails,
            (np.array([0.9, 2.0, 7.0, 40.0, 3.0]), np.array([-2.1, -0.3, 0.5, 1.7, 4.0])),
        ),
    ],
)
def test_beta_and_t_programs_in_both_modes(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, modes=("rev", "fwd"), rtol=1e-6)


def test_betainc_mixed_second_derivatives_are_exact() -> None:
    dI = s2s_ad.grad(lambda a, b, x: sc.betainc(a, b, x), (0, 1))
    for a, b, x in [(2.5, 1.5, 0.3), (0.4, 30.0, 0.02), (40.0, 3.0, 0.95)]:
        for k in (0, 1):
            s2s_ad.check_grads(lambda x, a=a, b=b, k=k: dI(a, b, x)[k], (x,), modes=("rev", "fwd"))


def test_random_shapes_and_points() -> None:
    """Log-uniform shapes from 0.01 to 10**4 (gamma: to 3 * 10**5), points across the
    bulk and the tails: every derivative within 1e-8 of the reference (or both below
    1e-250)."""
    from s2s_ad.rules.incgamma_vjps import betainc_da, betainc_db, gammainc_da

    rng = np.random.default_rng(5)
    for _ in range(150):
        a, b = 10 ** rng.uniform(-2, 4, 2)
        x = rng.uniform(0.001, 0.999) if rng.random() < 0.6 else 10 ** rng.uniform(-6, -0.01)
        x = 1.0 - x if rng.random() < 0.3 else x
        for got, ref in zip((betainc_da(a, b, x), betainc_db(a, b, x)), beta_reference(a, b, x)):
            if abs(ref) > 1e-250:
                np.testing.assert_allclose(got, ref, rtol=1e-8, err_msg=f"{a} {b} {x}")
        s = 10 ** rng.uniform(-2, 5.5)
        y = s * 10 ** rng.uniform(-1, 0.5)
        ref = reference_da(s, y)
        if abs(ref) > 1e-250:
            np.testing.assert_allclose(gammainc_da(s, y), ref, rtol=1e-8, err_msg=f"{s} {y}")


def test_subnormal_terms_end_the_series() -> None:
    """Far below the mean the first term is subnormal and stops shrinking when multiplied:
    the series must still end (it used to run out of terms and refuse)."""
    got = s2s_ad.grad(lambda a: sc.gammainc(a, 56846.52777243439))(66121.49908178195)
    assert np.isfinite(got) and abs(got) < 1e-300


def test_a_nan_gradient_never_agrees_with_a_number() -> None:
    """check_grads's comparison: a NaN against a finite difference fails (it used to pass,
    which hid the gamma cdf's 0 * inf at the edge of its support)."""
    from s2s_ad.testing import _compare

    with pytest.raises(AssertionError, match="differs"):
        _compare(np.array([1.0, np.nan]), np.array([1.0, 8.43]), "gradient", 1e-6, 1e-6)
    _compare(np.array([np.nan, np.inf]), np.array([np.nan, np.inf]), "gradient", 1e-6, 1e-6)


def test_binned_likelihood_with_an_infinite_density_at_zero() -> None:
    """shape < 1: the density is infinite at the first edge (0), where the cdf is 0 for
    every scale; the scale's gradient is finite (it was NaN: 0 * inf)."""
    g = s2s_ad.grad(binned_gamma_loglik, (0, 1))(0.6, 2.2)
    assert np.all(np.isfinite(g))
    s2s_ad.check_grads(binned_gamma_loglik, (0.6, 2.2), modes=("rev", "fwd"), rtol=1e-5)
