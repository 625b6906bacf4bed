"""Realistic programs written against SciPy, end to end: gradients against finite
differences (``s2s_ad.check_grads``, both modes), against autograd as a second oracle
where it is installed, and second derivatives of scalar log-densities against SymPy.

Each model is written once, inside :func:`models`, over a NumPy namespace and SciPy
modules passed in: s2s_ad differentiates the plain NumPy/SciPy version, autograd its own
wrapped one (``autograd.numpy``, ``autograd.scipy``).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

import s2s_ad

scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")
scipy_linalg = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(11)
X = RNG.standard_normal((12, 3))
Y_BIN = (X @ np.array([1.0, -2.0, 0.5]) + 0.3 * RNG.standard_normal(12) > 0).astype(float)
Y_REAL = X @ np.array([0.7, -0.4, 1.2]) + 0.5 * RNG.standard_t(3.0, 12)
EPS = RNG.standard_normal((16, 3))  # fixed reparameterization draws
DATA = np.concatenate([RNG.normal(-1.5, 0.5, 8), RNG.normal(1.0, 0.8, 10)])
GP_X = np.linspace(-1.0, 1.0, 7)[:, None]
GP_Y = np.sin(3.0 * GP_X[:, 0])


def models(np: Any, stats: Any, special: Any, linalg: Any) -> types.SimpleNamespace:
    """The models, over the given NumPy and SciPy namespaces."""

    def logistic_regression(w):
        """Bayesian logistic regression: log posterior with a standard normal prior."""
        p = special.expit(X @ w)
        loglik = np.sum(Y_BIN * np.log(p) + (1.0 - Y_BIN) * np.log(1.0 - p))
        return loglik + np.sum(stats.norm.logpdf(w, 0.0, 1.0))

    def student_t_regression(params):
        """Robust regression: Student-t likelihood, every parameter learned."""
        w = params[:3]
        scale = np.exp(params[3])
        df = np.exp(params[4]) + 1.0
        resid = Y_REAL - X @ w
        return np.sum(stats.t.logpdf(resid, df, 0.0, scale))

    def elbo(mu, log_sigma):
        """Variational objective of a Gaussian posterior, reparameterized with fixed draws."""
        sigma = np.exp(log_sigma)
        total = 0.0
        for i in range(EPS.shape[0]):
            z = mu + sigma * EPS[i]
            log_p = np.sum(stats.norm.logpdf(X @ z, loc=Y_REAL, scale=1.5))
            log_p = log_p + np.sum(stats.norm.logpdf(z, 0.0, 2.0))
            log_q = np.sum(stats.norm.logpdf(z, mu, sigma))
            total = total + (log_p - log_q)
        return total / EPS.shape[0]

    def mixture(params):
        """Log-likelihood of a 2-component Gaussian mixture; parameters in a dict."""
        log_w = params["logits"] - special.logsumexp(params["logits"])
        scales = np.exp(params["log_scales"])
        comp = stats.norm.logpdf(DATA[:, None], params["means"], scales)
        return np.sum(special.logsumexp(log_w + comp, axis=1))

    def gp_marginal_likelihood(log_params):
        """Negative log marginal likelihood of a GP through scipy.linalg.cho_factor."""
        ls = np.exp(log_params[0])
        amp = np.exp(log_params[1])
        noise = np.exp(log_params[2])
        k = amp * np.exp(-0.5 * (GP_X - GP_X.T) ** 2 / ls**2) + noise * np.eye(7)
        factor = linalg.cho_factor(k, lower=True)
        alpha = linalg.cho_solve(factor, GP_Y)
        return 0.5 * GP_Y @ alpha + np.sum(np.log(np.diag(factor[0])))

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if callable(v)})


M = models(np, scipy_stats, scipy_special, scipy_linalg)
W0 = np.array([0.3, -0.8, 0.2])
T0 = np.array([0.5, -0.3, 1.0, -0.4, 0.8])
MIX0 = {
    "logits": np.array([0.2, -0.1]),
    "means": np.array([-1.0, 0.8]),
    "log_scales": np.array([-0.4, 0.1]),
}
CASES = [
    ("logistic_regression", (W0,)),
    ("student_t_regression", (T0,)),
    ("elbo", (np.array([0.4, -0.2, 0.9]), np.array([-0.5, -1.0, -0.3]))),
    ("mixture", (MIX0,)),
    ("gp_marginal_likelihood", (np.array([-0.3, 0.2, -1.5]),)),
]
WRT = {"elbo": (0, 1)}


@pytest.mark.parametrize("name, args", CASES, ids=[c[0] for c in CASES])
def test_gradients_against_finite_differences(name: str, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(getattr(M, name), args, modes=("rev", "fwd"), atol=1e-5, rtol=1e-5)


def _autograd_models() -> types.SimpleNamespace:
    ag = pytest.importorskip("autograd")
    import autograd.numpy as anp
    import autograd.scipy.linalg as alinalg
    import autograd.scipy.special as aspecial
    import autograd.scipy.stats as astats

    assert ag is not None
    return models(anp, astats, aspecial, alinalg)


@pytest.mark.parametrize("name, args", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_gradients_against_autograd(name: str, args: tuple[Any, ...]) -> None:
    """autograd has no cho_factor: the GP is compared in tests/test_linalg_programs.py.
    (autograd differentiates SciPy's densities only through positional arguments.)"""
    import autograd

    wrt = WRT.get(name, 0)
    ours = s2s_ad.grad(getattr(M, name), wrt)(*args)
    theirs = autograd.grad(getattr(_autograd_models(), name), wrt)(*args)
    if isinstance(ours, dict):
        for key in ours:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def t_keywords(p):
    return np.sum(scipy_stats.t.logpdf(Y_REAL, df=p[0], loc=p[1], scale=p[2]))


def t_positional(p):
    return np.sum(scipy_stats.t.logpdf(Y_REAL, p[0], p[1], p[2]))


def t_mixed(p):
    return np.sum(scipy_stats.t.logpdf(Y_REAL, p[0], scale=p[2], loc=p[1]))


def test_keyword_and_positional_parameters_agree() -> None:
    p = np.array([3.5, 0.2, 1.3])
    want = s2s_ad.grad(t_positional)(p)
    np.testing.assert_allclose(s2s_ad.grad(t_keywords)(p), want, rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.grad(t_mixed)(p), want, rtol=1e-12)
    s2s_ad.check_grads(t_keywords, (p,), modes=("rev", "fwd"))


def test_second_order() -> None:
    for name, args in CASES:
        if name in ("logistic_regression", "gp_marginal_likelihood"):
            s2s_ad.check_grads(getattr(M, name), args, order=2, atol=1e-5, rtol=1e-5)


# --- Hessians of scalar log-densities against SymPy ---------------------------------------


def norm_t_gamma(p):
    x, mu, log_s, df, a = p[0], p[1], p[2], p[3], p[4]
    s = np.exp(log_s)
    out = scipy_stats.norm.logpdf(x, loc=mu, scale=s) + scipy_stats.t.logpdf(x, df, mu, s)
    return out + scipy_stats.gamma.logpdf(x + 2.0, a, scale=s) + scipy_special.gammaln(df * a)


def test_hessian_of_log_densities_against_sympy() -> None:
    sympy = pytest.importorskip("sympy")
    x, mu, ls, df, a = syms = sympy.symbols("x mu ls df a", real=True)
    s = sympy.exp(ls)
    z = (x - mu) / s
    expr = -(z**2) / 2 - ls - sympy.log(2 * sympy.pi) / 2
    expr += (
        sympy.loggamma((df + 1) / 2)
        - sympy.loggamma(df / 2)
        - sympy.log(df * sympy.pi) / 2
        - ls
        - (df + 1) / 2 * sympy.log(1 + z**2 / df)
    )
    zg = (x + 2) / s
    expr += (a - 1) * sympy.log(zg) - zg - sympy.loggamma(a) - ls + sympy.loggamma(df * a)
    point = [0.3, -0.2, 0.1, 3.5, 1.7]
    exact = sympy.hessian(expr, syms).subs(dict(zip(syms, point))).evalf(20)
    want = np.array(exact.tolist(), dtype=float)
    got = s2s_ad.hessian(norm_t_gamma)(np.array(point))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


def test_unmodelled_parameters_and_frozen_distributions_are_refused_logm_is_not() -> None:
    def t_cdf_in_df(df):
        return scipy_stats.t.cdf(0.3, df)

    def frozen(mu):
        dist = scipy_stats.norm(mu, 1.0)
        return dist.logpdf(0.3) + dist.entropy()

    def logm(a):
        return np.sum(scipy_linalg.logm(a))

    def betainc_in_a(a):
        return scipy_special.betainc(a, 2.0, 0.4)

    def gammainc_in_a(a):
        return scipy_special.gammainc(a, 1.5)

    # first derivatives in shape parameters are summed by series; the second are not modelled
    with pytest.raises(s2s_ad.TransformError, match="argument 'a' of _ad.betainc_da"):
        s2s_ad.grad(s2s_ad.grad(t_cdf_in_df))(3.0)
    with pytest.raises(s2s_ad.TransformError, match="argument 'a' of _ad.betainc_da"):
        s2s_ad.grad(s2s_ad.grad(betainc_in_a))(3.0)
    with pytest.raises(s2s_ad.TransformError, match="argument 'a' of _ad.gammainc_da"):
        s2s_ad.grad(s2s_ad.grad(gammainc_in_a))(3.0)
    with pytest.raises(s2s_ad.TransformError, match="norm"):
        s2s_ad.grad(frozen)(0.5)
    # the matrix logarithm and a signed log-sum-exp have rules
    s2s_ad.check_grads(logm, (np.array([[2.0, 0.3], [0.1, 1.5]]),))
    s2s_ad.check_grads(signed_logsumexp, (np.array([0.5, 1.5]),))


def signed_logsumexp(a):
    value, sign = scipy_special.logsumexp(a, b=np.array([1.0, -0.5]), return_sign=True)
    return value * sign


def lu_program(a, b):
    factors = scipy_linalg.lu_factor(a)
    x = scipy_linalg.lu_solve(factors, b)
    y = scipy_linalg.lu_solve(factors, x, trans=1)
    return np.sum(x**2) + np.sum(y * b) + np.sum(factors[0] ** 2)


def test_lu_factor_and_lu_solve() -> None:
    a = np.array([[0.1, 2.0, 0.3], [1.5, -0.4, 0.8], [0.2, 0.7, -1.1]])
    b = np.array([0.5, -1.0, 2.0])
    s2s_ad.check_grads(lu_program, (a, b), modes=("rev", "fwd"))
    s2s_ad.check_grads(lu_program, (a, b), order=2)


def test_scipy_is_never_imported_by_s2s_ad() -> None:
    """SciPy's rules load once the user imports SciPy: importing s2s_ad does not import it."""
    import subprocess
    import sys

    code = "import sys, s2s_ad; assert 'scipy' not in sys.modules, 'scipy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def frozen_inline(p):
    a = scipy_stats.norm(p[0], np.exp(p[1])).logpdf(0.3) + scipy_stats.norm(loc=p[0]).cdf(0.1)
    b = scipy_stats.t(p[2], scale=2.0).logpdf(p[0])
    c = scipy_stats.multivariate_normal(p[:2], np.eye(2) * p[2]).logpdf(np.array([0.3, 0.1]))
    return a + b + c


def test_frozen_distribution_methods_called_where_made() -> None:
    """``norm(mu, sigma).logpdf(x)`` is read as ``norm.logpdf(x, mu, sigma)``; frozen
    distributions kept in variables: tests/test_scipy_frozen.py."""
    p = np.array([0.2, -0.3, 3.0])
    s2s_ad.check_grads(frozen_inline, (p,), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize(
    "fun, x",
    [
        (M.logistic_regression, W0),
        (M.student_t_regression, T0),
        (M.gp_marginal_likelihood, np.array([-0.3, 0.2, -1.5])),
        (frozen_inline, np.array([0.2, -0.3, 3.0])),
    ],
    ids=["logistic_regression", "student_t_regression", "gp_marginal_likelihood", "frozen"],
)
def test_hessian_vector_products(fun: Any, x: np.ndarray) -> None:
    """Forward over reverse (``hvp``) against finite differences of the gradient."""
    from fd import numerical_grad

    v = np.cos(np.arange(x.size))
    df = s2s_ad.grad(fun)
    want = numerical_grad(lambda y: np.sum(df(y) * v), (x,), 0)
    np.testing.assert_allclose(s2s_ad.hvp(fun)(x, v), want, rtol=1e-5, atol=1e-6)
