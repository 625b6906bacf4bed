"""Frozen SciPy distributions kept in variables (``prior = norm(0, 1)``), and SciPy's
functions and distribution methods handed to ``grad`` directly (``grad(norm.logpdf)``).

Gradients are checked against finite differences in both modes and at second order;
autograd (which has no frozen distributions) differentiates the same model written with
the distributions' own methods, as a second oracle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import s2s_ad

st = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

RNG = np.random.default_rng(5)
GROUPS = [RNG.normal(0.5 * k, 1.0, 4 + k) for k in range(3)]
Y = RNG.normal(1.0, 0.7, 9)
XS = RNG.standard_normal((5, 3))


# --- programs -----------------------------------------------------------------------------


def hierarchical(theta):
    """Log posterior of a hierarchical normal model: frozen priors made once, one frozen
    likelihood per group made (and used several times) inside the loop."""
    mu0, log_tau, log_sigma = theta[0], theta[1], theta[2]
    tau = np.exp(log_tau)
    prior = st.norm(0.0, 3.0)
    scale_prior = st.gamma(2.0, scale=1.0)
    lp = prior.logpdf(mu0) + scale_prior.logpdf(tau) + scale_prior.logpdf(np.exp(log_sigma))
    for k, group in enumerate(GROUPS):
        lik = st.norm(loc=mu0 + 0.1 * k * tau, scale=np.exp(log_sigma))
        lp = lp + np.sum(lik.logpdf(group)) + lik.logcdf(group[0])
        mu0 = mu0 + 0.01 * tau  # the frozen distribution keeps the value it was made with
    return lp


def unfrozen_model(np: Any, stats: Any) -> Any:
    """The same model through the distributions' methods (autograd's spelling), over the
    given NumPy and ``scipy.stats`` namespaces."""

    def hierarchical_unfrozen(theta):
        mu0, log_tau, log_sigma = theta[0], theta[1], theta[2]
        tau = np.exp(log_tau)
        lp = stats.norm.logpdf(mu0, 0.0, 3.0)
        lp = lp + stats.gamma.logpdf(tau, 2.0)
        lp = lp + stats.gamma.logpdf(np.exp(log_sigma), 2.0)
        for k, group in enumerate(GROUPS):
            loc, scale = mu0 + 0.1 * k * tau, np.exp(log_sigma)
            lp = lp + np.sum(stats.norm.logpdf(group, loc, scale))
            lp = lp + stats.norm.logcdf(group[0], loc, scale)
            mu0 = mu0 + 0.01 * tau
        return lp

    return hierarchical_unfrozen


class GaussianLikelihood:
    """A Keras-style model object whose loss freezes a multivariate normal."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data

    def loss(self, params):
        mean, chol = params["mean"], params["chol"]
        cov = chol @ chol.T + 0.1 * np.eye(3)
        dist = st.multivariate_normal(mean, cov, seed=0)
        return -np.sum(dist.logpdf(self.data)) - dist.logpdf(mean + 0.5)


def student_t_with_helper(p):
    """A frozen t distribution made in the function, used by an inner function."""
    resid_dist = st.t(np.exp(p[0]) + 1.0, loc=p[1], scale=np.exp(p[2]))

    def term(v):
        out = resid_dist.logpdf(v)
        return out * out

    tail = st.t(4.0, loc=p[1], scale=np.exp(p[2]))  # df fixed: t.sf is not modelled in df
    return term(Y[0]) + np.sum(resid_dist.pdf(Y)) + tail.sf(0.3)


P0 = np.array([0.3, -0.4, 0.2])
MODEL = GaussianLikelihood(XS)
PARAMS = {"mean": np.array([0.1, -0.2, 0.3]), "chol": np.tril(np.ones((3, 3))) * 0.4 + np.eye(3)}


@pytest.mark.parametrize(
    "fun, args",
    [
        (hierarchical, (P0,)),
        (MODEL.loss, (PARAMS,)),
        (student_t_with_helper, (np.array([1.1, 0.2, -0.3]),)),
    ],
    ids=["hierarchical", "multivariate_normal", "student_t"],
)
def test_frozen_distributions_in_variables(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, modes=("rev", "fwd"), atol=1e-6, rtol=1e-6)


def test_frozen_distributions_second_order() -> None:
    s2s_ad.check_grads(hierarchical, (P0,), order=2, atol=1e-5, rtol=1e-5)
    s2s_ad.check_grads(student_t_with_helper, (np.array([1.1, 0.2, -0.3]),), order=2)


def test_frozen_matches_unfrozen_and_autograd() -> None:
    ours = s2s_ad.grad(hierarchical)(P0)
    plain = s2s_ad.grad(unfrozen_model(np, st))(P0)
    np.testing.assert_allclose(ours, plain, rtol=1e-12)
    autograd = pytest.importorskip("autograd")
    import autograd.numpy as anp
    import autograd.scipy.stats as astats

    theirs = autograd.grad(unfrozen_model(anp, astats))(P0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_frozen_generated_code_reads_the_kept_parameters() -> None:
    def one(mu, s):
        d = st.norm(mu, s)
        return np.sum(d.logpdf(Y))

    code = s2s_ad.source(s2s_ad.grad(one, (0, 1)))
    assert "d_loc = mu" in code and "norm.logpdf(Y, d_loc, d_scale)" in code


# --- what is not modelled is refused -------------------------------------------------------


def sampled(mu):
    d = st.norm(mu, 1.0)
    return np.sum(d.rvs(size=3, random_state=0)) + d.logpdf(0.3)


def reassigned(mu):
    d = st.norm(mu, 1.0)
    out = d.logpdf(0.2)
    d = st.norm(2.0 * mu, 1.0)
    return out + d.logpdf(0.3)


def moments(mu):
    d = st.norm(mu, 2.0)
    return d.mean() + d.std()


def _use(dist, x):
    return dist.logpdf(x)


def passed_on(mu):
    d = st.norm(mu, 1.0)
    return _use(d, 0.3)


@pytest.mark.parametrize("fun", [sampled, reassigned, moments, passed_on])
def test_unmodelled_uses_of_a_frozen_distribution_are_refused(fun: Any) -> None:
    with pytest.raises(s2s_ad.TransformError):
        s2s_ad.grad(fun)(0.4)


def constant_samples(w, mu):
    return w * np.sum(st.norm(mu, 1.0).rvs(4))


def test_other_methods_of_a_frozen_distribution_keep_their_meaning() -> None:
    """``norm(mu, 1).rvs(4)`` draws 4 samples (it is not ``norm.rvs(4, mu, 1)``)."""
    np.random.seed(7)
    want = np.sum(st.norm(0.2, 1.0).rvs(4))
    np.random.seed(7)
    assert s2s_ad.grad(constant_samples)(1.5, 0.2) == pytest.approx(want, rel=1e-12)


# --- library functions handed to grad directly --------------------------------------------


def test_grad_of_distribution_methods() -> None:
    x, loc, scale = 0.3, 0.1, 1.5
    z = (x - loc) / scale
    assert s2s_ad.grad(st.norm.logpdf)(x, loc, scale) == pytest.approx(-z / scale)
    got = s2s_ad.grad(st.norm.logpdf, wrt=("loc", "scale"))(x, loc, scale)
    np.testing.assert_allclose(got, (z / scale, (z**2 - 1.0) / scale), rtol=1e-12)
    np.testing.assert_allclose(
        s2s_ad.grad(st.norm.logpdf, argnums=(1, 2))(x, loc, scale), got, rtol=1e-12
    )
    assert s2s_ad.grad(s2s_ad.grad(st.norm.logpdf, 2), 2)(x, loc, scale) == pytest.approx(
        (1.0 - 3.0 * z**2) / scale**2
    )
    xs = np.array([0.3, -0.2, 1.1])
    np.testing.assert_allclose(
        s2s_ad.elementwise_grad(st.norm.logpdf)(xs, loc, scale), -(xs - loc) / scale**2
    )


@pytest.mark.parametrize(
    "fun, args",
    [
        (st.norm.logpdf, (0.3, 0.1, 1.5)),
        (st.norm.cdf, (0.3, 0.1, 1.5)),
        (st.t.logpdf, (0.4, 3.5, 0.1, 1.2)),
        (st.gamma.logpdf, (1.4, 2.5, 0.0, 0.8)),
        (st.beta.logpdf, (0.3, 2.0, 3.0)),
        (st.poisson.logpmf, (3, 2.5)),
        (special.gammaln, (2.5,)),
        (special.digamma, (1.7,)),
        (special.expit, (0.3,)),
        (special.logsumexp, (np.array([0.3, -1.0, 2.0]),)),
    ],
)
def test_library_functions_against_finite_differences(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, modes=("rev", "fwd"))
    if fun is not special.logsumexp:
        s2s_ad.check_grads(fun, args, order=2)


def test_library_functions_against_autograd() -> None:
    autograd = pytest.importorskip("autograd")
    import autograd.scipy.special as aspecial
    import autograd.scipy.stats as astats

    pairs = [
        (st.norm.logpdf, astats.norm.logpdf, (0.3, 0.1, 1.5)),
        (st.t.logpdf, astats.t.logpdf, (0.4, 3.5, 0.1, 1.2)),
        (st.gamma.logpdf, astats.gamma.logpdf, (1.4, 2.5)),
        (special.gammaln, aspecial.gammaln, (2.5,)),
    ]
    for ours, theirs, args in pairs:
        wrt = tuple(range(len(args)))
        np.testing.assert_allclose(
            s2s_ad.grad(ours, wrt)(*args), autograd.grad(theirs, wrt)(*args), rtol=1e-10
        )
    x, mean = XS[0], PARAMS["mean"]
    cov = np.eye(3) + 0.2
    mvn = st.multivariate_normal.logpdf
    np.testing.assert_allclose(
        s2s_ad.grad(mvn, wrt="cov")(x, mean, cov),
        autograd.grad(astats.multivariate_normal.logpdf, 2)(x, mean, cov),
        rtol=1e-10,
    )
