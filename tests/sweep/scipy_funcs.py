"""``scipy.special`` and ``scipy.stats`` (and ``math.gamma``), as in autograd's
``test_scipy.py``: special functions inside their domains, log-densities and
distribution functions with broadcasting parameters."""

from __future__ import annotations

import math

import numpy as np
import scipy.signal
import scipy.special as sc
import scipy.stats as st

from .common import Table

T = Table("scipy", seed=4)
r, u = T.r, T.u


def f_polygamma(x):
    return sc.polygamma(0, x)


def f_polygamma_2(x):
    return sc.polygamma(2, x)


def f_psi(x):
    return sc.psi(x)


def f_digamma(x):
    return sc.digamma(x)


def f_gamma(x):
    return sc.gamma(x)


def f_gammaln(x):
    return sc.gammaln(x)


def f_gammasgn(x):
    return sc.gammasgn(x) * x


def f_rgamma(x):
    return sc.rgamma(x)


def f_multigammaln(x):
    return sc.multigammaln(x, 3)


def f_j0(x):
    return sc.j0(x)


def f_j1(x):
    return sc.j1(x)


def f_y0(x):
    return sc.y0(x)


def f_y1(x):
    return sc.y1(x)


def f_jn(x):
    return sc.jn(2, x)


def f_yn(x):
    return sc.yn(2, x)


def f_i0(x):
    return sc.i0(x)


def f_i1(x):
    return sc.i1(x)


def f_i0e(x):
    return sc.i0e(x)


def f_i1e(x):
    return sc.i1e(x)


def f_yn_fractional(x):
    return sc.yn(2.5, x)


def f_iv(x):
    return sc.iv(2.0, x)


def f_ive(x):
    return sc.ive(1.0, x)


def f_erf(x):
    return sc.erf(x)


def f_erfc(x):
    return sc.erfc(x)


def f_erfinv(x):
    return sc.erfinv(x)


def f_erfcinv(x):
    return sc.erfcinv(x)


def f_erfcx(x):
    return sc.erfcx(x)


def f_logit(x):
    return sc.logit(x)


def f_expit(x):
    return sc.expit(x)


def f_beta(a, b):
    return sc.beta(a, b)


def f_betaln(a, b):
    return sc.betaln(a, b)


def f_betainc(a, b, x):
    return sc.betainc(a, b, x)


def f_gammainc(a, x):
    return sc.gammainc(a, x)


def f_gammaincc(a, x):
    return sc.gammaincc(a, x)


def f_xlogy(x, y):
    return sc.xlogy(x, y)


def f_logsumexp(x):
    return sc.logsumexp(x)


def f_logsumexp_axis(x):
    return sc.logsumexp(x, axis=0, keepdims=True)


def f_logsumexp_b(x, b):
    return sc.logsumexp(x, axis=1, b=b)


def f_softmax(x):
    return sc.softmax(x, axis=1)


def f_log_softmax(x):
    return sc.log_softmax(x, axis=-1)


def f_math_gamma(x):
    return math.gamma(x) + math.lgamma(x)


def f_math_lgamma(x):
    return math.lgamma(x) * x


def f_norm_pdf(x, loc, scale):
    return st.norm.pdf(x, loc, scale)


def f_norm_cdf(x, loc, scale):
    return st.norm.cdf(x, loc, scale)


def f_norm_logpdf(x, loc, scale):
    return st.norm.logpdf(x, loc, scale)


def f_norm_logcdf(x, loc, scale):
    return st.norm.logcdf(x, loc, scale)


def f_norm_sf(x, loc, scale):
    return st.norm.sf(x, loc=loc, scale=scale)


def f_t_pdf(x, df, loc, scale):
    return st.t.pdf(x, df, loc, scale)


def f_t_logpdf(x, df, loc, scale):
    return st.t.logpdf(x, df, loc, scale)


def f_t_cdf(x, df, loc, scale):
    return st.t.cdf(x, df, loc, scale)


def f_mvn_logpdf(x, mean, cov):
    return st.multivariate_normal.logpdf(x, mean, cov)


def f_mvn_pdf(x, mean, cov):
    return st.multivariate_normal.pdf(x, mean, cov)


def f_mvn_entropy(mean, cov):
    return st.multivariate_normal.entropy(mean, cov)


def f_dirichlet_logpdf(x, alpha):
    return st.dirichlet.logpdf(x / np.sum(x), alpha)


def f_dirichlet_pdf(x, alpha):
    return st.dirichlet.pdf(x / np.sum(x), alpha)


def f_poisson_logpmf(mu):
    return st.poisson.logpmf(np.array([0, 1, 3, 5]), mu)


def f_poisson_pmf(mu):
    return st.poisson.pmf(np.array([0, 1, 3, 5]), mu)


def f_gamma_logpdf(x, a):
    return st.gamma.logpdf(x, a)


def f_gamma_cdf(x, a):
    return st.gamma.cdf(x, a)


def f_beta_logpdf(x, a, b):
    return st.beta.logpdf(x, a, b)


def f_beta_cdf(x, a, b):
    return st.beta.cdf(x, a, b)


def f_chi2_logpdf(x, df):
    return st.chi2.logpdf(x, df)


def f_chi2_cdf(x, df):
    return st.chi2.cdf(x, df)


def f_convolve(x, y):
    return scipy.signal.convolve(x, y, mode="full")


def f_convolve_valid(x, y):
    return scipy.signal.convolve(x, y, mode="valid")


def f_np_convolve(x, y):
    return np.convolve(x, y, mode="same")


def f_correlate(x, y):
    return np.correlate(x, y)


def f_correlate_full(x, y):
    return np.correlate(x, y, mode="full")


def f_correlate_same(x, y):
    return np.correlate(x, y, "same")


for _f in (f_polygamma, f_polygamma_2, f_psi, f_digamma, f_gamma, f_gammaln, f_gammasgn):
    T.add(_f, u(0.3, 2.0, 4))
for _f in (f_rgamma, f_math_gamma, f_math_lgamma):
    T.add(_f, u(0.3, 2.0, 4) if _f is f_rgamma else u(0.3, 3.0))
T.add(f_math_lgamma, -0.5)
T.add(f_multigammaln, u(4.0, 5.0, 2, 3))
for _f in (f_j0, f_j1, f_y0, f_y1, f_jn, f_yn, f_yn_fractional):
    T.add(_f, u(0.2, 20.0, 4))
for _f in (f_i0, f_i1, f_i0e, f_i1e, f_iv, f_ive):
    T.add(_f, r(5) * 2)
for _f in (f_erf, f_erfc, f_erfcx):
    T.add(_f, u(-3.0, 3.0, 5))
T.add(f_erfinv, u(-0.95, 0.95, 5))
T.add(f_erfcinv, u(0.05, 1.95, 5))
T.add(f_logit, u(0.05, 0.95, 5))
T.add(f_expit, r(5))
T.add(f_beta, u(0.5, 3.0, 4), u(0.5, 3.0, 4))
T.add(f_betaln, u(0.5, 3.0, 3, 1), u(0.5, 3.0, 4))
T.add(f_betainc, u(0.5, 3.0, 4), u(0.5, 3.0, 4), u(0.1, 0.9, 4))
T.add(f_gammainc, u(0.5, 3.0, 4), u(0.2, 4.0, 4))
T.add(f_gammaincc, u(0.5, 3.0, 4), u(0.2, 4.0, 4))
T.add(f_xlogy, r(4), u(0.2, 2.0, 4))
T.add(f_logsumexp, r(3, 4))
T.add(f_logsumexp_axis, r(3, 4))
T.add(f_logsumexp_b, r(3, 4), np.exp(r(3, 4)))
T.add(f_softmax, r(3, 4))
T.add(f_log_softmax, r(3, 4))
for _f in (f_norm_pdf, f_norm_cdf, f_norm_logpdf, f_norm_logcdf, f_norm_sf):
    T.add(_f, r(4), r(4), r(4) ** 2 + 1.1)
    T.add(_f, r(4, 3), r(1, 3), r(4, 1) ** 2 + 1.1)
for _f in (f_t_pdf, f_t_logpdf):
    T.add(_f, r(4), r(4) ** 2 + 2.1, r(4), r(4) ** 2 + 2.1)
    T.add(_f, r(4, 3), r(1, 3) ** 2 + 2.1, r(4, 3), r(4, 1) ** 2 + 2.1)
T.add(f_t_cdf, r(4), r(4) ** 2 + 2.1, r(4), r(4) ** 2 + 2.1)
for _f in (f_mvn_logpdf, f_mvn_pdf):
    T.add(_f, r(4), r(4), T.psd(4) / 4, symmetric=(2,))
    T.add(_f, r(5, 4), r(4), T.psd(4) / 4, symmetric=(2,))
T.add(f_mvn_entropy, r(4), T.psd(4), symmetric=(1,))
_alpha = u(0.0, 1.0, 4) ** 2 + 1.2
_x = np.random.default_rng(9).dirichlet(_alpha)
T.add(f_dirichlet_logpdf, _x, _alpha)
T.add(f_dirichlet_pdf, _x, _alpha)
T.add(f_poisson_logpmf, u(0.5, 3.0, 4))
T.add(f_poisson_pmf, u(0.5, 3.0, 4))
T.add(f_gamma_logpdf, u(0.3, 3.0, 4), u(0.5, 3.0, 4))
T.add(f_gamma_cdf, u(0.3, 3.0, 4), u(0.5, 3.0, 4))
T.add(f_beta_logpdf, u(0.1, 0.9, 4), u(0.5, 3.0, 4), u(0.5, 3.0, 4))
T.add(f_beta_cdf, u(0.1, 0.9, 4), u(0.5, 3.0, 4), u(0.5, 3.0, 4))
T.add(f_chi2_logpdf, u(0.3, 3.0, 4), u(1.5, 4.0, 4))
T.add(f_chi2_cdf, u(0.3, 3.0, 4), u(1.5, 4.0, 4))
for _f in (f_convolve, f_convolve_valid, f_np_convolve):
    T.add(_f, r(6), r(3))
for _f in (f_correlate, f_correlate_full, f_correlate_same):
    T.add(_f, r(6), r(3))
    T.add(_f, r(3), r(5))
