"""Probabilistic models: GP marginal likelihood, Bayesian logistic regression, black-box
variational inference with the reparameterization trick, a Gaussian mixture, and a
Student-t regression."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats

from programs_real import Program


def rbf_kernel(X, Y, log_ell, log_sf):
    sq = np.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)
    return np.exp(2 * log_sf) * np.exp(-0.5 * sq / np.exp(2 * log_ell))


def gp_neg_log_marginal(hyp, X, y):
    """Negative log marginal likelihood from a Cholesky factor (numpy only)."""
    log_ell, log_sf, log_sn = hyp[0], hyp[1], hyp[2]
    n = X.shape[0]
    K = rbf_kernel(X, X, log_ell, log_sf) + (np.exp(2 * log_sn) + 1e-6) * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * n * np.log(2 * np.pi)


def gp_nlml_scipy(hyp, X, y):
    """The same with scipy's cho_factor/cho_solve and slogdet for the determinant."""
    n = X.shape[0]
    K = rbf_kernel(X, X, hyp[0], hyp[1]) + np.exp(2 * hyp[2]) * np.eye(n)
    c_and_lower = scipy.linalg.cho_factor(K, lower=True)
    alpha = scipy.linalg.cho_solve(c_and_lower, y)
    _, logdet = np.linalg.slogdet(K)
    return 0.5 * np.dot(y, alpha) + 0.5 * logdet


def logistic_log_posterior(w, X, t, prior_scale):
    """Log posterior of Bayesian logistic regression, Gaussian prior via scipy.stats."""
    z = X @ w
    log_lik = np.sum(t * z - np.logaddexp(0.0, z))
    log_prior = np.sum(scipy.stats.norm.logpdf(w, 0.0, prior_scale))
    return log_lik + log_prior


def bbvi_elbo(var_params, X, t, n_samples=8, seed=0):
    """Reparameterized ELBO of a mean-field Gaussian over logistic regression weights."""
    mean, log_std = var_params[: X.shape[1]], var_params[X.shape[1] :]
    rs = np.random.RandomState(seed)
    eps = rs.randn(n_samples, X.shape[1])
    samples = mean + np.exp(log_std) * eps
    total = 0.0
    for s in samples:
        total = total + logistic_log_posterior(s, X, t, 2.0)
    entropy = np.sum(log_std) + 0.5 * X.shape[1] * (1.0 + np.log(2 * np.pi))
    return -(total / n_samples + entropy)


def gmm_neg_log_lik(params, data):
    """1-d Gaussian mixture: logits, means, log std devs; scipy.special.logsumexp."""
    logits, mus, log_sigmas = params
    log_w = logits - scipy.special.logsumexp(logits)
    sig = np.exp(log_sigmas)
    comp = log_w - 0.5 * ((data[:, None] - mus) / sig) ** 2 - log_sigmas - 0.5 * np.log(2 * np.pi)
    return -np.sum(scipy.special.logsumexp(comp, axis=1))


def student_t_regression(theta, x, y):
    """Robust regression: t likelihood with learnt log scale, via scipy.stats.t.logpdf."""
    a, b, log_scale = theta
    resid = y - (a * x + b)
    return -np.sum(scipy.stats.t.logpdf(resid, 3.0, 0.0, np.exp(log_scale)))


def mvn_log_density(mean, cov_chol, points):
    """Multivariate normal log density summed over points, by scipy.stats.multivariate_normal."""
    cov = cov_chol @ cov_chol.T + 0.1 * np.eye(cov_chol.shape[0])
    return np.sum(scipy.stats.multivariate_normal.logpdf(points, mean, cov))


_rs = np.random.RandomState(5)
_Xg = _rs.randn(7, 2)
_yg = np.sin(_Xg[:, 0]) + 0.1 * _rs.randn(7)
_Xl = _rs.randn(10, 3)
_tl = (_rs.rand(10) > 0.5).astype(float)
_gmm_data = np.concatenate([_rs.randn(6) - 2.0, 0.5 * _rs.randn(6) + 1.0])

PROGRAMS = [
    Program(
        "gp_neg_log_marginal",
        (np.array([0.1, -0.2, -1.0]), _Xg, _yg),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "gp_nlml_scipy",
        (np.array([0.1, -0.2, -1.0]), _Xg, _yg),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # autograd has no gradient for scipy.linalg.cho_factor
    ),
    Program(
        "logistic_log_posterior",
        (_rs.randn(3), _Xl, _tl, 1.5),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("bbvi_elbo", (0.3 * _rs.randn(6), _Xl, _tl), checks=("grad", "vg", "fwd", "hvp")),
    Program(
        "gmm_neg_log_lik",
        ((_rs.randn(3), np.array([-2.0, 0.0, 1.0]), 0.2 * _rs.randn(3)), _gmm_data),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "student_t_regression",
        (np.array([0.5, -0.3, 0.2]), _rs.randn(8), _rs.randn(8)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "mvn_log_density",
        (_rs.randn(2), np.array([[1.0, 0.0], [0.3, 0.8]]), _rs.randn(5, 2)),
        wrt=(0, 1),
        checks=("grad", "vg"),
    ),
]
