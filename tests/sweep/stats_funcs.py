"""``scipy.stats`` as likelihoods and priors are written: keyword parameters, broadcasting
data against parameters, sums of log-densities, frozen distributions, and the
distributions JAX's ``scipy_stats_test.py`` covers beyond autograd's."""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from .common import Table

T = Table("stats", seed=13)
r, u = T.r, T.u
_DATA = np.array([0.3, -1.1, 0.8, 2.2, -0.4])
_COUNTS = np.array([0, 2, 5, 1, 3])
_FLIPS = np.array([0, 1, 1, 0, 1])


def f_norm_loglik(mu, sigma):
    return np.sum(st.norm.logpdf(_DATA, loc=mu, scale=sigma))


def f_norm_frozen(mu, sigma):
    d = st.norm(mu, sigma)
    return np.sum(d.logpdf(_DATA)) + d.cdf(0.5)


def f_norm_logcdf_kw(x):
    return st.norm.logcdf(x, loc=0.3, scale=1.7)


def f_norm_ppf(q, mu, sigma):
    return st.norm.ppf(q, loc=mu, scale=sigma)


def f_norm_isf(q):
    return st.norm.isf(q)


def f_t_loglik(df, loc, scale):
    return np.sum(st.t.logpdf(_DATA, df, loc=loc, scale=scale))


def f_t_cdf_x(x):
    return st.t.cdf(x, 4.0)


def f_gamma_prior(a, scale):
    return st.gamma.logpdf(np.array([0.5, 1.3, 2.7]), a, scale=scale)


def f_gamma_cdf_x(x):
    return st.gamma.cdf(x, 2.5, scale=0.7)


def f_beta_prior(x, a, b):
    return st.beta.logpdf(x, a, b) + st.beta.pdf(x, a, b)


def f_beta_logcdf(x):
    return st.beta.logcdf(x, 2.0, 3.5)


def f_poisson_loglik(rate):
    return np.sum(st.poisson.logpmf(_COUNTS, rate))


def f_poisson_logcdf(rate):
    return st.poisson.logcdf(3, rate)


def f_mvn_loglik(x, mean, cov):
    return np.sum(st.multivariate_normal.logpdf(x, mean=mean, cov=cov))


def f_mvn_pdf_frozen(x, mean):
    return st.multivariate_normal(mean, np.eye(3) * 1.5).pdf(x)


def f_dirichlet_alpha(alpha):
    return st.dirichlet.logpdf(np.array([0.2, 0.5, 0.3]), alpha)


def f_expon_loglik(scale):
    return np.sum(st.expon.logpdf(np.abs(_DATA), scale=scale))


def f_uniform_prior(x, lo, width):
    return st.uniform.logpdf(x, lo, width) + st.uniform.cdf(x, loc=lo, scale=width)


def f_laplace_cdf(x, loc, scale):
    return st.laplace.cdf(x, loc, scale) + st.laplace.logsf(x, loc, scale)


def f_halfnorm_prior(sigma, scale):
    return st.halfnorm.logpdf(sigma, scale=scale)


def f_invgamma_prior(x, a, scale):
    return st.invgamma.logpdf(x, a, scale=scale)


def f_weibull(x, c, scale):
    return st.weibull_min.logpdf(x, c, scale=scale)


def f_pareto(x, b):
    return st.pareto.pdf(x, b)


def f_gumbel(x, loc, scale):
    return st.gumbel_r.logpdf(x, loc, scale)


def f_rayleigh(x, scale):
    return st.rayleigh.logpdf(x, scale=scale)


def f_bernoulli_loglik(p):
    return np.sum(st.bernoulli.logpmf(_FLIPS, p))


def f_geom(p):
    return st.geom.logpmf(_COUNTS + 1, p)


def f_nbinom(n, p):
    return np.sum(st.nbinom.logpmf(_COUNTS, n, p))


def f_binom(p):
    return st.binom.logpmf(_COUNTS, 6, p)


def f_logistic(x, loc, scale):
    return st.logistic.logcdf(x, loc, scale)


def f_cauchy(x, loc, scale):
    return st.cauchy.logpdf(x, loc, scale)


def f_lognorm(x, s, scale):
    return st.lognorm.logpdf(x, s, scale=scale)


def f_chi2(x, df):
    return st.chi2.logpdf(x, df)


T.add(f_norm_loglik, 0.4, 1.3)
T.add(f_norm_frozen, 0.4, 1.3)
T.add(f_norm_logcdf_kw, r(5) * 2)
T.add(f_norm_ppf, u(0.05, 0.95, 4), r(4), u(0.5, 2.0, 4))
T.add(f_norm_isf, u(0.05, 0.95, 4))
T.add(f_t_loglik, 4.5, 0.2, 1.4)
T.add(f_t_cdf_x, r(4))
T.add(f_gamma_prior, 2.5, 0.8)
T.add(f_gamma_cdf_x, u(0.2, 3.0, 4))
T.add(f_beta_prior, u(0.1, 0.9, 4), 2.5, 1.5)
T.add(f_beta_logcdf, u(0.1, 0.9, 4))
T.add(f_poisson_loglik, 2.3)
T.add(f_poisson_logcdf, u(0.5, 4.0, 3))
T.add(f_mvn_loglik, r(4, 3), r(3), T.psd(3) / 3, symmetric=(2,))
T.add(f_mvn_pdf_frozen, r(3), r(3))
T.add(f_dirichlet_alpha, u(0.5, 3.0, 3))
T.add(f_expon_loglik, 1.7)
T.add(f_uniform_prior, u(0.2, 0.8, 4), 0.1, 1.2)
T.add(f_laplace_cdf, np.array([-1.2, -0.3, 0.6, 1.9]), 0.1, 1.3)
T.add(f_halfnorm_prior, u(0.1, 2.0, 4), 1.5)
T.add(f_invgamma_prior, u(0.3, 2.0, 4), 2.5, 1.2)
T.add(f_weibull, u(0.3, 2.0, 4), 1.8, 1.1)
T.add(f_pareto, u(1.2, 3.0, 4), 2.5)
T.add(f_gumbel, r(4), 0.2, 1.5)
T.add(f_rayleigh, u(0.3, 2.0, 4), 1.2)
T.add(f_bernoulli_loglik, 0.35)
T.add(f_geom, u(0.1, 0.9, 5))
T.add(f_nbinom, 2.5, 0.4)
T.add(f_binom, u(0.1, 0.9, 5))
T.add(f_logistic, r(4), 0.3, 1.2)
T.add(f_cauchy, r(4), 0.3, 1.2)
T.add(f_lognorm, u(0.3, 2.0, 4), 0.8, 1.3)
T.add(f_chi2, u(0.3, 4.0, 4), 3.5)
