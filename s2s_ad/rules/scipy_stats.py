"""``scipy.stats``: log-densities, densities and distribution functions with every
parameter differentiable.

Loaded only once the user has imported :mod:`scipy.stats` (see ``REGISTRY.defer``).
Univariate distributions are elementwise in all their arguments, so each method is an
elementwise rule whose partials are written in ``z = (x - loc) / scale`` (checked against
SymPy by the tests); they bind positionally and by keyword as SciPy's methods do
(``norm.logpdf(x, mu, sigma)``, ``norm.logpdf(x, loc=mu, scale=sigma)``).

Covered: ``norm``, ``expon``, ``cauchy`` (logpdf pdf cdf logcdf sf logsf), ``t``, ``gamma``,
``beta`` (logpdf pdf; cdf logcdf sf logsf in every parameter: the shape parameters through
``_ad.gammainc_da``, ``_ad.betainc_da`` and ``_ad.betainc_db``), ``laplace`` and
``lognorm`` (logpdf pdf), ``poisson`` (logpmf pmf cdf logcdf sf logsf in ``mu``) and
``binom`` (logpmf pmf in ``p``),
``multivariate_normal`` (logpdf pdf in ``x``, ``mean`` and ``cov``; entropy in ``cov``),
``logistic`` (logpdf pdf cdf logcdf sf logsf), ``chi2`` (logpdf pdf cdf logcdf sf logsf),
``dirichlet`` (logpdf pdf in ``alpha`` and in ``x``, which must lie on the simplex: its
gradient is meaningful along it, as for ``x / np.sum(x)``). Not covered, and
refused when differentiated: the count arguments of discrete distributions. Frozen
distributions (``norm(mu, sigma).logpdf(x)``, or ``d = norm(mu, sigma)`` and then
``d.logpdf(x)``) are read as ``norm.logpdf(x, mu, sigma)`` by the normalizer for the
methods with a rule; any other use of a frozen distribution whose parameters are
differentiated (``d.rvs()``, ``d.mean()``, ``d`` passed to a function) is refused.
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from . import scipy_special  # noqa: F401  (the rules of the _ad.gammaln... wrappers)
from .registry import Rule, elementwise, set_jvps, vjp_rule

_Z = "((x - loc) / scale)"
_PHI = f"np.exp(-0.5 * {_Z} ** 2) / np.sqrt(2.0 * np.pi)"
_LOC_SCALE = {"loc": "0", "scale": "1"}

_X = np.array([[-1.2, 0.3, 0.8], [1.7, -0.4, 2.1]])
_POS = np.array([[0.4, 1.3, 2.2], [0.7, 3.1, 1.6]])
_UNIT = np.array([0.15, 0.4, 0.55, 0.85])
_LOCS = np.array([[0.3], [-0.5]])
_SCALES = np.array([0.8, 1.5, 2.0])


def _family(
    dist: object,
    name: str,
    params: tuple[str, ...],
    logpdf: tuple[str, ...],
    samples: list[tuple[object, ...]],
    *,
    cdf: tuple[str, ...] | None = None,
    cdf_params: tuple[str, ...] | None = None,
    logcdf: tuple[str, ...] | None = None,
    logsf: tuple[str, ...] | None = None,
    defaults: dict[str, str] | None = None,
    diff: tuple[str, ...] | None = None,
    pmf: bool = False,
    cdf_sympy: bool = False,
) -> list[Rule]:
    """Register the methods of one distribution from the partials of its log-density.

    Args:
        dist: The distribution object (``scipy.stats.norm``).
        name: Its name (``"norm"``).
        params: The methods' parameters in SciPy's positional order.
        logpdf: Partials of ``logpdf`` (``logpmf``), one per parameter in ``diff``.
        samples: Sample calls (positional arguments) for the tests.
        cdf: Partials of ``cdf`` in ``cdf_params`` (``sf`` and, from ``ans``, ``logcdf``
            and ``logsf`` follow unless given).
        cdf_params: The parameters the distribution function is differentiated in.
        logcdf: Stable partials of ``logcdf``, when ``cdf / exp(ans)`` would underflow.
        logsf: Stable partials of ``logsf``.
        defaults: Parameter defaults (``loc=0``, ``scale=1``).
        diff: The differentiable parameters of the density (all of ``params`` when omitted).
        pmf: A discrete distribution: ``logpmf``/``pmf`` instead of ``logpdf``/``pdf``.
        cdf_sympy: The tests know the distribution function in closed form (SymPy check).
    """
    diff = diff if diff is not None else params
    log, lin = ("logpmf", "pmf") if pmf else ("logpdf", "pdf")
    rules = [
        elementwise(
            f"scipy.stats.{name}.{log}",
            [getattr(dist, log)],
            params,
            logpdf,
            samples,
            sympy=f"{name}.{log}",
            defaults=defaults,
            diff=diff,
        ),
        elementwise(
            f"scipy.stats.{name}.{lin}",
            [getattr(dist, lin)],
            params,
            tuple(f"ans * ({p})" for p in logpdf),
            samples,
            sympy=f"{name}.{lin}",
            defaults=defaults,
            diff=diff,
        ),
    ]
    if cdf is None or cdf_params is None:
        return rules
    logcdf = logcdf or tuple(f"({p}) / np.exp(ans)" for p in cdf)
    logsf = logsf or tuple(f"-({p}) / np.exp(ans)" for p in cdf)
    partials = {
        "cdf": cdf,
        "sf": tuple(f"-({p})" for p in cdf),
        "logcdf": logcdf,
        "logsf": logsf,
    }
    for method, parts in partials.items():
        rules.append(
            elementwise(
                f"scipy.stats.{name}.{method}",
                [getattr(dist, method)],
                params,
                parts,
                samples,
                sympy=f"{name}.{method}" if cdf_sympy else None,
                defaults=defaults,
                diff=cdf_params,
            )
        )
    return rules


# --- normal ----------------------------------------------------------------------------------

norm = _family(
    st.norm,
    "norm",
    ("x", "loc", "scale"),
    (f"-{_Z} / scale", f"{_Z} / scale", f"({_Z} ** 2 - 1.0) / scale"),
    [(0.7,), (_X,), (_X, _LOCS), (_X, 0.3, _SCALES), (-1.1, 0.4, 2.5)],
    cdf=(f"{_PHI} / scale", f"-{_PHI} / scale", f"-{_Z} * {_PHI} / scale"),
    cdf_params=("x", "loc", "scale"),
    # d log(Phi(z)) = phi(z) / Phi(z) dz = exp(-z^2/2 - logcdf) / sqrt(2 pi) dz: no underflow
    logcdf=tuple(
        f"{s}np.exp(-0.5 * {_Z} ** 2 - ans) / (np.sqrt(2.0 * np.pi) * scale){m}"
        for s, m in (("", ""), ("-", ""), ("-", f" * {_Z}"))
    ),
    logsf=tuple(
        f"{s}np.exp(-0.5 * {_Z} ** 2 - ans) / (np.sqrt(2.0 * np.pi) * scale){m}"
        for s, m in (("-", ""), ("", ""), ("", f" * {_Z}"))
    ),
    defaults=_LOC_SCALE,
    cdf_sympy=True,
)

# --- exponential -------------------------------------------------------------------------------

_EXP = [(0.7,), (_POS,), (_POS, -0.3), (_POS, 0.2, _SCALES), (2.5, 0.4, 1.5)]
expon = _family(
    st.expon,
    "expon",
    ("x", "loc", "scale"),
    ("-1.0 / scale", "1.0 / scale", f"({_Z} - 1.0) / scale"),
    _EXP,
    cdf=(f"np.exp(-{_Z}) / scale", f"-np.exp(-{_Z}) / scale", f"-{_Z} * np.exp(-{_Z}) / scale"),
    cdf_params=("x", "loc", "scale"),
    logcdf=(
        f"1.0 / (scale * np.expm1({_Z}))",
        f"-1.0 / (scale * np.expm1({_Z}))",
        f"-{_Z} / (scale * np.expm1({_Z}))",
    ),
    logsf=("-1.0 / scale", "1.0 / scale", f"{_Z} / scale"),
    defaults=_LOC_SCALE,
    cdf_sympy=True,
)

# --- Student's t -------------------------------------------------------------------------------

_T_LOGPDF = (
    f"_ad.gammaln((df + 1.0) / 2.0) - _ad.gammaln(df / 2.0) - 0.5 * np.log(df * np.pi) "
    f"- np.log(scale) - (df + 1.0) / 2.0 * np.log1p({_Z} ** 2 / df)"
)
_T_PDF = f"np.exp({_T_LOGPDF})"
# cdf = I_w(df/2, 1/2) / 2 below the centre (1 minus that above) with w = df / (df + z**2):
# in df, the shape derivative of the incomplete beta plus its density times dw/d(df) (zero
# at z = 0, where the density is infinite but w does not move).
_T_W = f"(df / (df + {_Z} ** 2))"
_T_CDF_DF = (
    f"-0.5 * np.sign({_Z}) * (0.5 * _ad.betainc_da(df / 2.0, 0.5, {_T_W}) + np.where({_Z} == 0.0, "
    f"0.0, np.exp((df / 2.0 - 1.0) * np.log({_T_W}) - 0.5 * np.log1p(-{_T_W}) "
    f"- _ad.betaln(df / 2.0, 0.5)) * {_Z} ** 2 / (df + {_Z} ** 2) ** 2))"
)
t = _family(
    st.t,
    "t",
    ("x", "df", "loc", "scale"),
    (
        f"-(df + 1.0) * {_Z} / (scale * (df + {_Z} ** 2))",
        f"0.5 * (_ad.digamma((df + 1.0) / 2.0) - _ad.digamma(df / 2.0) - 1.0 / df "
        f"- np.log1p({_Z} ** 2 / df) + (df + 1.0) * {_Z} ** 2 / (df * (df + {_Z} ** 2)))",
        f"(df + 1.0) * {_Z} / (scale * (df + {_Z} ** 2))",
        f"((df + 1.0) * {_Z} ** 2 / (df + {_Z} ** 2) - 1.0) / scale",
    ),
    [(0.7, 3.0), (_X, 4.5), (_X, _SCALES + 1.0, _LOCS), (_X, 2.5, 0.3, _SCALES), (-1.1, 7.0)],
    cdf=(_T_PDF, _T_CDF_DF, f"-{_T_PDF}", f"-{_Z} * {_T_PDF}"),
    cdf_params=("x", "df", "loc", "scale"),
    defaults=_LOC_SCALE,
)

# --- gamma -------------------------------------------------------------------------------------

_G_LOGPDF = f"(a - 1.0) * np.log({_Z}) - {_Z} - _ad.gammaln(a) - np.log(scale)"
_G_PDF = f"np.exp({_G_LOGPDF})"
# -z * pdf, the cdf's scale partial, as one power: 0 at z = 0 also where the density is
# infinite there (a < 1), not 0 * inf
_G_ZPDF = f"-np.exp(a * np.log({_Z}) - {_Z} - _ad.gammaln(a) - np.log(scale))"
gamma = _family(
    st.gamma,
    "gamma",
    ("x", "a", "loc", "scale"),
    (
        f"((a - 1.0) / {_Z} - 1.0) / scale",
        f"np.log({_Z}) - _ad.digamma(a)",
        f"-((a - 1.0) / {_Z} - 1.0) / scale",
        f"({_Z} - a) / scale",
    ),
    [(0.7, 2.5), (_POS, 1.7), (_POS, _SCALES, -0.3), (_POS, 3.0, 0.1, _SCALES), (2.5, 0.8)],
    cdf=(_G_PDF, f"_ad.gammainc_da(a, np.maximum({_Z}, 0.0))", f"-{_G_PDF}", _G_ZPDF),
    cdf_params=("x", "a", "loc", "scale"),
    defaults=_LOC_SCALE,
)

# --- chi2: gamma(df / 2, scale=2 scale) -----------------------------------------------------

_C_LOGPDF = (
    f"(0.5 * df - 1.0) * np.log({_Z}) - 0.5 * {_Z} - _ad.gammaln(0.5 * df) "
    "- 0.5 * df * np.log(2.0) - np.log(scale)"
)
_C_PDF = f"np.exp({_C_LOGPDF})"
chi2 = _family(
    st.chi2,
    "chi2",
    ("x", "df", "loc", "scale"),
    (
        f"((0.5 * df - 1.0) / {_Z} - 0.5) / scale",
        f"0.5 * (np.log(0.5 * {_Z}) - _ad.digamma(0.5 * df))",
        f"-((0.5 * df - 1.0) / {_Z} - 0.5) / scale",
        f"(0.5 * {_Z} - 0.5 * df) / scale",
    ),
    [(0.7, 2.5), (_POS, 3.4), (_POS, _SCALES * 2.0, -0.3), (_POS, 3.0, 0.1, _SCALES), (2.5, 1.6)],
    cdf=(
        _C_PDF,
        f"0.5 * _ad.gammainc_da(0.5 * df, 0.5 * np.maximum({_Z}, 0.0))",
        f"-{_C_PDF}",
        f"-{_Z} * {_C_PDF}",
    ),
    cdf_params=("x", "df", "loc", "scale"),
    defaults=_LOC_SCALE,
)

# --- beta --------------------------------------------------------------------------------------

_B_DX = f"((a - 1.0) / {_Z} - (b - 1.0) / (1.0 - {_Z}))"
_B_LOGPDF = (
    f"(a - 1.0) * np.log({_Z}) + (b - 1.0) * np.log1p(-{_Z}) - _ad.betaln(a, b) - np.log(scale)"
)
_B_PDF = f"np.exp({_B_LOGPDF})"
beta = _family(
    st.beta,
    "beta",
    ("x", "a", "b", "loc", "scale"),
    (
        f"{_B_DX} / scale",
        f"np.log({_Z}) - _ad.digamma(a) + _ad.digamma(a + b)",
        f"np.log1p(-{_Z}) - _ad.digamma(b) + _ad.digamma(a + b)",
        f"-{_B_DX} / scale",
        f"-({_Z} * {_B_DX} + 1.0) / scale",
    ),
    [
        (0.3, 2.5, 1.5),
        (_UNIT, 1.7, 3.2),
        (_UNIT, np.array([[0.8], [2.5]]), 1.3),
        (_UNIT * 2.0, 2.0, 2.5, 0.1, 2.2),
    ],
    cdf=(
        _B_PDF,
        f"_ad.betainc_da(a, b, np.clip({_Z}, 0.0, 1.0))",
        f"_ad.betainc_db(a, b, np.clip({_Z}, 0.0, 1.0))",
        f"-{_B_PDF}",
        # -z * pdf as one power: 0 at z = 0 also where the density is infinite (a < 1)
        f"-np.exp(a * np.log({_Z}) + (b - 1.0) * np.log1p(-{_Z}) - _ad.betaln(a, b) "
        "- np.log(scale))",
    ),
    cdf_params=("x", "a", "b", "loc", "scale"),
    defaults=_LOC_SCALE,
)

# --- Laplace, Cauchy, log-normal ------------------------------------------------------------------

laplace = _family(
    st.laplace,
    "laplace",
    ("x", "loc", "scale"),
    (f"-np.sign({_Z}) / scale", f"np.sign({_Z}) / scale", f"(np.abs({_Z}) - 1.0) / scale"),
    [(0.7,), (_X, 0.1), (_X, _LOCS + 0.05, _SCALES), (-1.1, 0.4, 2.5)],
    defaults=_LOC_SCALE,
)
_CAUCHY = f"(np.pi * scale * (1.0 + {_Z} ** 2))"
cauchy = _family(
    st.cauchy,
    "cauchy",
    ("x", "loc", "scale"),
    (
        f"-2.0 * {_Z} / (scale * (1.0 + {_Z} ** 2))",
        f"2.0 * {_Z} / (scale * (1.0 + {_Z} ** 2))",
        f"({_Z} ** 2 - 1.0) / (scale * (1.0 + {_Z} ** 2))",
    ),
    [(0.7,), (_X,), (_X, _LOCS, _SCALES), (-1.1, 0.4, 2.5)],
    cdf=(f"1.0 / {_CAUCHY}", f"-1.0 / {_CAUCHY}", f"-{_Z} / {_CAUCHY}"),
    cdf_params=("x", "loc", "scale"),
    defaults=_LOC_SCALE,
    cdf_sympy=True,
)
# logistic: d logpdf / dz = -tanh(z / 2); the density is 1 / (4 cosh(z / 2)^2) / scale.
_TANH = f"np.tanh(0.5 * {_Z})"
_SECH2 = f"(0.25 / np.cosh(0.5 * {_Z}) ** 2)"
logistic = _family(
    st.logistic,
    "logistic",
    ("x", "loc", "scale"),
    (f"-{_TANH} / scale", f"{_TANH} / scale", f"({_Z} * {_TANH} - 1.0) / scale"),
    [(0.7,), (_X,), (_X, _LOCS, _SCALES), (-1.1, 0.4, 2.5)],
    cdf=(f"{_SECH2} / scale", f"-{_SECH2} / scale", f"-{_Z} * {_SECH2} / scale"),
    cdf_params=("x", "loc", "scale"),
    # log(expit(z))' = expit(-z), log(expit(-z))' = -expit(z): no underflow in the tails
    logcdf=tuple(
        f"{s}0.5 * (1.0 - {_TANH}) / scale{m}" for s, m in (("", ""), ("-", ""), ("-", f" * {_Z}"))
    ),
    logsf=tuple(
        f"{s}0.5 * (1.0 + {_TANH}) / scale{m}" for s, m in (("-", ""), ("", ""), ("", f" * {_Z}"))
    ),
    defaults=_LOC_SCALE,
    cdf_sympy=True,
)
_LOG_Y = f"np.log({_Z})"
lognorm = _family(
    st.lognorm,
    "lognorm",
    ("x", "s", "loc", "scale"),
    (
        f"-(1.0 + {_LOG_Y} / s ** 2) / ((x - loc))",
        f"-1.0 / s + {_LOG_Y} ** 2 / s ** 3",
        f"(1.0 + {_LOG_Y} / s ** 2) / ((x - loc))",
        f"{_LOG_Y} / (s ** 2 * scale)",
    ),
    [(0.7, 0.9), (_POS, 0.6), (_POS, 1.3, -0.2, _SCALES), (2.5, 0.5, 0.3, 1.7)],
    defaults=_LOC_SCALE,
)

# --- discrete: the counts are integers, the rates differentiable --------------------------------

_K = np.array([0, 2, 5, 1])
# (the count is k - loc: a shifted distribution)
_PMF = "np.exp(_J * np.log(mu) - mu - _ad.gammaln(_J + 1.0))".replace("_J", "np.floor(k - loc)")
poisson = _family(
    st.poisson,
    "poisson",
    ("k", "mu", "loc"),
    ("(k - loc) / mu - 1.0",),
    [(3, 2.5), (_K, 1.7), (_K, np.array([[0.8], [2.5]])), (_K + 3, 1.3, 2), (6, 0.9, -1)],
    # cdf = gammaincc(floor(k - loc) + 1, mu): d/dmu = -pmf(floor(k - loc)), 0 below the support
    cdf=(f"np.where(k - loc >= 0, -{_PMF}, 0.0)",),
    cdf_params=("mu",),
    defaults={"loc": "0"},
    diff=("mu",),
    pmf=True,
)
binom = _family(
    st.binom,
    "binom",
    ("k", "n", "p", "loc"),
    ("(k - loc) / p - (n - k + loc) / (1.0 - p)",),
    [(3, 7, 0.4), (_K, 6, 0.25), (_K, 9, np.array([[0.3], [0.65]])), (_K + 1, 8, 0.35, 1)],
    defaults={"loc": "0"},
    diff=("p",),
    pmf=True,
)

# --- multivariate normal -------------------------------------------------------------------------

_MEAN = np.array([0.2, -0.5, 1.0])
_COV = np.array([[1.5, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 2.0]])
_XS = np.array([[0.5, -0.2, 1.3], [-1.0, 0.4, 0.2], [0.3, 0.9, -0.7], [1.1, -1.4, 0.8]])
_MVN = {"mean": "None", "cov": "1", "allow_singular": "False"}
_MVN_SAMPLES = [
    (_XS[0], _MEAN, _COV),
    (_XS, _MEAN, _COV),
    (_XS, {"mean": _MEAN, "cov": _COV}),
    (_XS, _MEAN, 1.7),
    (_XS, _MEAN, np.array([0.5, 1.2, 2.0])),
    (_XS, None, _COV),
    (_XS[:, :2] - 0.3, {"cov": _COV[:2, :2]}),
]
for _method, _pdf in (("logpdf", False), ("pdf", True)):
    _rule = vjp_rule(
        f"scipy.stats.multivariate_normal.{_method}",
        [getattr(st.multivariate_normal, _method)],
        ("x", "mean", "cov", "allow_singular"),
        {
            p: f"_ad.mvn_vjp(g, x, mean, cov, ans, {_pdf})[{i}]"
            for i, p in enumerate(("x", "mean", "cov"))
        },
        _MVN_SAMPLES,
        defaults=_MVN,
        symmetric=("cov",),
    )
    set_jvps(
        _rule,
        x=f"_ad.mvn_jvp(t, 0.0, 0.0, x, mean, cov, ans, {_pdf})",
        mean=f"_ad.mvn_jvp(0.0, t, 0.0, x, mean, cov, ans, {_pdf})",
        cov=f"_ad.mvn_jvp(0.0, 0.0, t, x, mean, cov, ans, {_pdf})",
    )

# --- Dirichlet: in alpha (x lies on the simplex) -------------------------------------------

_ALPHA = np.array([1.5, 2.0, 0.7])
_SIMPLEX = np.array([[0.2, 0.5, 0.3], [0.1, 0.6, 0.3], [0.45, 0.25, 0.3]]).T
_SCORE = "_ad.dirichlet_score(x, alpha)"  # per component and sample
_DX = "_ad.dirichlet_dx(x, alpha)"  # per component and sample
for _method, _pdf in (("logpdf", ""), ("pdf", " * ans")):
    _rule = vjp_rule(
        f"scipy.stats.dirichlet.{_method}",
        [getattr(st.dirichlet, _method)],
        ("x", "alpha"),
        {
            "x": f"{_DX} * (g{_pdf})",
            "alpha": f"np.sum(np.reshape({_SCORE}, (np.size(alpha), -1))"
            f" * np.reshape(g{_pdf}, (1, -1)), 1)",
        },
        [(_SIMPLEX[:, 0], _ALPHA), (_SIMPLEX, _ALPHA), (_SIMPLEX[:2], _ALPHA)],
    )
    set_jvps(
        _rule,
        x=f"np.sum(t * {_DX}, 0){_pdf}",
        alpha=f"np.tensordot(t, {_SCORE}, 1){_pdf}",
    )

# --- multivariate normal entropy ---------------------------------------------------------

_rule = vjp_rule(
    "scipy.stats.multivariate_normal.entropy",
    [st.multivariate_normal.entropy],
    ("mean", "cov", "allow_singular"),
    {"mean": "0.0", "cov": "_ad.mvn_entropy_vjp(g, mean, cov)"},
    [(_MEAN, _COV), (_MEAN, 1.7), (_MEAN, np.array([0.5, 1.2, 2.0])), (None, _COV)],
    defaults={"mean": "None", "cov": "1", "allow_singular": "False"},
    symmetric=("cov",),
)
set_jvps(_rule, mean="0.0", cov="np.sum(_ad.mvn_entropy_vjp(1.0, mean, cov) * t)")
from . import scipy_stats_more  # noqa: E402, F401  (loaded with this module)
