"""User-like programs over the statistics rules (``np.average``, ``np.median``,
``np.nanmean``, ``np.polyval``, ``np.cov``/``np.corrcoef``, ``scipy.stats.logistic`` and
``dirichlet``, ``scipy.special.kl_div``, ``scipy.linalg.expm``/``sqrtm``): gradients
against finite differences in both modes, second order where the program is scalar.

Autograd has none of these NumPy functions (it raises ``NotImplementedError``), so finite
differences are the oracle here; the rules themselves are walked in tests/test_rules*.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import TransformError

stats = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")
linalg = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(5)
X = RNG.standard_normal((10, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + 0.1 * RNG.standard_normal(10)
Y[3] += 6.0  # an outlier for the robust loss
SAMPLE_WEIGHTS = RNG.uniform(0.2, 2.0, 10)


def mlp_init(sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1)
    return [
        (0.5 * rng.standard_normal((m, n)), 0.1 * rng.standard_normal(n))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def mlp(params, inputs):
    h = inputs
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return h @ W + b


def weighted_loss(params, weights):
    """Importance-weighted squared error: the weights are learned too."""
    preds = mlp(params, X)[:, 0]
    return np.average((preds - Y) ** 2, weights=np.exp(weights))


def robust_loss(w):
    """Least median of absolute residuals, plus a median-centred spread term."""
    resid = Y - X @ w
    spread = np.median(np.abs(resid - np.median(resid)))
    return np.median(resid**2) + 0.5 * spread


def test_weighted_average_loss_of_an_mlp() -> None:
    (w1, b1), (w2, b2) = mlp_init([3, 4, 1])

    def loss(w1, b1, w2, b2, weights):  # check_grads takes arrays: the list is built inside
        return weighted_loss([(w1, b1), (w2, b2)], weights)

    args = (w1, b1, w2, b2, np.log(SAMPLE_WEIGHTS))
    s2s_ad.check_grads(loss, args, modes=("rev", "fwd"))
    s2s_ad.check_grads(loss, args, order=2)
    grads = s2s_ad.grad(weighted_loss)(mlp_init([3, 4, 1]), np.log(SAMPLE_WEIGHTS))
    assert isinstance(grads, list) and np.shape(grads[0][0]) == (3, 4)


def test_average_along_an_axis_with_keepdims() -> None:
    def loss(h, w):
        centred = h - np.average(h, axis=0, weights=w, keepdims=True)
        return np.sum(np.average(centred**2, axis=1))

    s2s_ad.check_grads(loss, (X, SAMPLE_WEIGHTS), modes=("rev", "fwd"))


def test_robust_median_regression() -> None:
    w = np.array([0.4, -0.8, 1.7])
    s2s_ad.check_grads(robust_loss, (w,), modes=("rev", "fwd"))
    # The median's gradient flows only through the middle residuals: the outlier gets none.
    grad_resid = s2s_ad.grad(lambda r: np.median(r**2))(Y - X @ w)
    assert grad_resid[3] == 0.0
    assert np.count_nonzero(grad_resid) == 2  # even length: the two middle entries


def test_nanmean_of_features_with_missing_entries() -> None:
    """Gradient in a data matrix with missing entries (imputation): NaN entries get 0.

    (``np.nanmean((pred - targets) ** 2)`` with NaN targets has a NaN gradient in ``pred``:
    the chain rule multiplies the zero cotangent by ``2 * nan``, as in JAX.)"""
    data = X.copy()
    data[1, 0] = data[6, 2] = np.nan
    w = np.array([0.4, -0.8, 1.7])

    def score(z):
        means = np.nanmean(z, axis=0)
        return np.tanh(means) @ w + 0.1 * np.nansum(z)

    s2s_ad.check_grads(lambda z: score(np.where(np.isnan(data), np.nan, z)), (X,), order=2)
    g = s2s_ad.grad(score)(data)
    assert g[1, 0] == 0.0 and g[6, 2] == 0.0
    assert np.all(np.isfinite(g))


def test_polynomial_fit_and_correlation_penalty() -> None:
    t = np.linspace(-1.0, 1.0, 9)
    data = np.sin(2.0 * t)

    def loss(coeffs):
        fit = np.polyval(coeffs, t)
        c = np.cov(fit, data)
        return np.sum((fit - data) ** 2) - np.corrcoef(fit, data)[0, 1] + 0.01 * c[0, 0]

    s2s_ad.check_grads(loss, (np.array([0.3, -0.1, 1.5, 0.05]),), modes=("rev", "fwd"), order=2)


def test_feature_covariance_of_a_layer() -> None:
    params = mlp_init([3, 4, 2])

    def decorrelation(params):
        h = mlp(params, X)
        c = np.cov(h, rowvar=False)
        r = np.corrcoef(h.T)
        return np.sum(c * c) + np.sum(r[0, 1:] ** 2)

    s2s_ad.check_grads(decorrelation, (params,), modes=("rev", "fwd"))


def test_dirichlet_and_logistic_likelihood() -> None:
    props = np.array([[0.2, 0.5, 0.3], [0.1, 0.6, 0.3], [0.45, 0.25, 0.3], [0.3, 0.3, 0.4]]).T
    obs = np.array([-0.4, 1.3, 0.2, 2.5, -1.7])

    def neg_log_lik(log_alpha, loc, log_scale):
        alpha = np.exp(log_alpha)
        lik = np.sum(stats.dirichlet.logpdf(props, alpha))
        lik = lik + np.sum(stats.logistic.logpdf(obs, loc, np.exp(log_scale)))
        lik = lik + np.sum(stats.logistic.logcdf(obs, loc=loc, scale=2.0))
        return -lik + np.sum(special.kl_div(alpha / np.sum(alpha), np.full(3, 1.0 / 3.0)))

    args = (np.array([0.3, 0.9, -0.2]), 0.4, -0.1)
    s2s_ad.check_grads(neg_log_lik, args, modes=("rev", "fwd"), order=2)


def test_dirichlet_in_x_along_the_simplex() -> None:
    """Proportions kept on the simplex by normalizing positive weights: the gradient of the
    Dirichlet log-density in the weights (only its part along the simplex counts)."""
    alpha = np.array([1.5, 2.0, 0.7])

    def log_lik(w, alpha):
        x = w / np.sum(w)
        return stats.dirichlet.logpdf(x, alpha) + 0.5 * stats.dirichlet.pdf(x, alpha)

    s2s_ad.check_grads(log_lik, (np.array([0.8, 1.5, 0.6]), alpha), modes=("rev", "fwd"))


def test_matrix_exponential_ode_solution() -> None:
    """x(t) = expm(A t) x0 fitted to observations: gradients in A and x0, and a Hessian."""
    times = np.array([0.25, 0.5, 1.0])
    x0 = np.array([1.0, 0.0])
    a_true = np.array([[-0.5, 1.3], [-1.3, -0.2]])
    obs = np.stack([linalg.expm(a_true * t) @ x0 for t in times])

    def loss(a, x0):
        total = 0.0
        for i in range(len(times)):
            x = linalg.expm(a * times[i]) @ x0
            total = total + np.sum((x - obs[i]) ** 2)
        return total

    a = np.array([[-0.3, 1.0], [-1.1, -0.4]])
    s2s_ad.check_grads(loss, (a, x0), modes=("rev", "fwd"))
    s2s_ad.check_grads(loss, (a, x0), order=2)


def test_sqrtm_whitening_and_complex_root_refused() -> None:
    m = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
    spd = m @ m.T + np.eye(3)

    def whitened(s):
        root = linalg.sqrtm(s)
        return np.sum(np.linalg.solve(root, X.T) ** 2)

    s2s_ad.check_grads(whitened, (spd,), modes=("rev", "fwd"))
    with pytest.raises(TransformError):
        s2s_ad.grad(lambda s: np.sum(linalg.sqrtm(s)))(np.array([[-1.0, 0.0], [0.0, 1.0]]))
