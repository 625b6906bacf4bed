"""Second derivatives through the rules the sweep of JAX's test lists added: ``hessian``
of scalar user functions, compared with central differences of ``grad``, and ``jvp`` of
``grad`` (forward over reverse) compared with the Hessian."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.special as sc
import scipy.stats as st

import s2s_ad

_DATA = np.array([0.3, -1.1, 0.8, 2.2, -0.4])
_COUNTS = np.array([0, 2, 5, 1, 3])


def norm_loglik(theta):
    return np.sum(st.norm.logpdf(_DATA, loc=theta[0], scale=theta[1]))


def nbinom_loglik(theta):
    return np.sum(st.nbinom.logpmf(_COUNTS, theta[0], theta[1]))


def invgamma_prior(x):
    return np.sum(st.invgamma.logpdf(x, 2.5, scale=1.2) + st.halfnorm.logpdf(x, scale=0.8))


def special_mix(x):
    return np.sum(sc.exp1(x) + sc.poch(x, 1.5) + sc.zeta(3.0, x) + sc.hyp1f1(0.5, 1.5, x))


def eigvals_energy(a):
    s = a + a.T
    return np.sum(sla.eigh(s, eigvals_only=True) ** 2) + np.sum(np.linalg.qr(s, mode="r") ** 2)


def quantile_spread(x):
    return np.sum(np.percentile(x, [25.0, 75.0]) ** 2) + np.sum(np.nanstd(x) * x)


def cumulative(x):
    return np.sum(
        np.cumulative_prod(x, include_initial=True) * np.cumulative_sum(x, include_initial=True)
    )


def vecdots(x):
    m = np.reshape(x, (2, 3))
    return np.sum(np.vecdot(m, m[::-1]) ** 2) + np.sum(np.matvec(m.T @ m, m[0]) ** 2)


def poly(x):
    return np.sum(np.polymul(x, x) ** 2) + np.sum(np.polyder(x, 2) * np.polyint(x)[:2])


CASES = [
    (norm_loglik, np.array([0.4, 1.3])),
    (nbinom_loglik, np.array([2.5, 0.4])),
    (invgamma_prior, np.array([0.7, 1.4, 2.1])),
    (special_mix, np.array([0.6, 1.2, 2.0])),
    (eigvals_energy, np.array([[2.0, 0.3, 0.1], [0.2, 1.0, -0.4], [0.0, 0.5, -1.5]])),
    (quantile_spread, np.array([0.3, -1.2, 0.9, 2.1, -0.5])),
    (vecdots, np.array([0.6, -1.3, 0.9, 0.4, 1.1, -0.2])),
    (poly, np.array([0.5, -1.0, 0.8, 1.5])),
]
if hasattr(np, "cumulative_prod"):
    CASES.append((cumulative, np.array([0.5, -1.3, 0.8, 1.2])))


def _fd_hessian(f, x, eps=1e-5):
    grad = s2s_ad.grad(f)
    cols = []
    for i in range(x.size):
        d = np.zeros(x.size)
        d[i] = eps
        d = d.reshape(x.shape)
        cols.append(np.ravel(grad(x + d) - grad(x - d)) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_hessian_matches_differences_of_the_gradient(f, x):
    h = s2s_ad.hessian(f)(x)
    np.testing.assert_allclose(h, _fd_hessian(f, x), rtol=1e-5, atol=1e-6)
    v = np.cos(np.arange(x.size)).reshape(x.shape)
    _, hv = s2s_ad.jvp(s2s_ad.grad(f), (x,), (v,))
    np.testing.assert_allclose(
        np.ravel(hv), np.reshape(h, (x.size, x.size)) @ np.ravel(v), rtol=1e-6, atol=1e-8
    )
