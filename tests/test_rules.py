"""Walk the rule registry: every VJP template against finite differences, every
elementwise partial against SymPy, and the table's bookkeeping (names, helpers, nondiff).

Templates are evaluated the way generated code runs them: :func:`substitute` puts
variable names for the parameters (defaults are source text, evaluated too) and the
expression is evaluated with ``np``, ``_ad``, ``g`` and ``ans`` in scope.
"""

from __future__ import annotations

import builtins
import math
import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import sympy
from sympy.codegen import cfunctions
from trees import flat, is_float, unflat

from s2s_ad import runtime
from s2s_ad.emit import AD  # the helpers generated code reaches as _ad
from s2s_ad.rules import REGISTRY, vjps
from s2s_ad.rules.containers import CHECKED_ON_PROGRAMS
from s2s_ad.rules.registry import Rule, substitute

REGISTRY.load_optional()  # SciPy's rules, when SciPy is installed
EPS = 1e-6
ZERO = "0.0"  # the template of a parameter the output does not depend on (full_like's a)
RTOL = 1e-5
ATOL = 1e-6

Call = tuple[tuple[Any, ...], dict[str, Any]]


# --- helpers -------------------------------------------------------------------------


def calls(rule: Rule) -> list[Call]:
    """The sample calls of a rule: (positional args, keyword args)."""
    out: list[Call] = []
    for sample in rule.samples:
        if sample and isinstance(sample[-1], dict):
            out.append((tuple(sample[:-1]), dict(sample[-1])))
        else:
            out.append((tuple(sample), {}))
    for kw in rule.kw_samples:
        out.append((out[0][0], dict(kw)))
    return out


def primal(rule: Rule) -> Callable[..., Any]:
    """The callable a rule describes (methods and attributes through ``getattr``)."""
    if rule.funcs:
        return rule.funcs[0]
    name = rule.name.removeprefix("ndarray.")
    if REGISTRY.attrs.get(name) is rule:
        return lambda self: getattr(self, name)
    return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)


def check_structure(adj: Any, like: Any, where: str) -> None:
    """An adjoint has exactly the structure, shapes and a float dtype of its input."""
    if isinstance(like, (list, tuple)):
        assert type(adj) is type(like), f"{where}: {type(adj)} for a {type(like)}"
        assert len(adj) == len(like), where
        for i, (a, x) in enumerate(zip(adj, like)):
            check_structure(a, x, f"{where}[{i}]")
        return
    assert np.shape(adj) == np.shape(like), f"{where}: shape {np.shape(adj)} != {np.shape(like)}"
    assert np.asarray(adj).dtype.kind == "f", f"{where}: dtype {np.asarray(adj).dtype}"


def random_like(value: Any, rng: np.random.Generator) -> Any:
    """A random cotangent with the structure of ``value``."""
    if isinstance(value, (list, tuple)):
        parts = [random_like(v, rng) for v in value]
        return type(value)(*parts) if hasattr(value, "_fields") else type(value)(parts)
    if np.ndim(value) == 0:
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(value))


def param_values(rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The sample value of each differentiable parameter that was passed."""
    values = dict(zip(rule.params, args))
    values.update(kwargs)
    if rule.varargs:
        values["args"] = tuple(args[len(rule.params) :])
    return {p: values[p] for p in rule.vjps if p in values}


def with_param(
    rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any], param: str, value: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call with one parameter replaced."""
    if param == "args":
        return args[: len(rule.params)] + tuple(value), kwargs
    if param in kwargs:
        return args, {**kwargs, param: value}
    pos = rule.params.index(param)
    return args[:pos] + (value,) + args[pos + 1 :], kwargs


def eval_template(
    rule: Rule, template: str, args: tuple[Any, ...], kwargs: dict[str, Any], extra: dict[str, Any]
) -> Any:
    """Evaluate a template for a call, as generated code would."""
    names = [f"_v{i}" for i in range(len(args))]
    kw_names = {k: f"_k_{k}" for k in kwargs}
    bound = rule.bind(names, kw_names)
    assert bound is not None, f"{rule.name} does not bind {len(args)} args and {list(kwargs)}"
    env = {"np": np, "_ad": AD, **dict(zip(names, args)), **extra}
    env.update({kw_names[k]: v for k, v in kwargs.items()})
    return eval(substitute(template, bound), env)  # noqa: S307


# Parameters that lie on the probability simplex (SciPy refuses other values): perturbed
# along it (directions summing to zero over the first axis).
ON_SIMPLEX = {("scipy.stats.dirichlet.logpdf", "x"), ("scipy.stats.dirichlet.pdf", "x")}


def along_simplex(v: np.ndarray) -> np.ndarray:
    """``v`` projected onto the directions that keep sums over the first axis."""
    return v - np.mean(v, axis=0, keepdims=True)


def symmetric(m: np.ndarray) -> np.ndarray:
    """The symmetric part of a (stack of) matrices."""
    return 0.5 * (m + np.swapaxes(m, -1, -2))


def templates(rule: Rule) -> list[str]:
    return [*rule.vjps.values(), *rule.partials.values(), *rule.defaults.values()]


GRADIENT_RULES = [r for r in REGISTRY.rules if r.vjps and r.samples]


# --- finite differences ------------------------------------------------------------------


@pytest.mark.parametrize("rule", GRADIENT_RULES, ids=lambda r: r.name)
def test_vjp_matches_finite_differences(rule: Rule) -> None:
    rng = np.random.default_rng(0)
    f = primal(rule)
    tested: set[str] = set()
    for n, (args, kwargs) in enumerate(calls(rule)):
        ans = f(*args, **kwargs)
        g = random_like(ans, rng)
        for param, value in param_values(rule, args, kwargs).items():
            if not is_float(value):
                continue
            tested.add(param)
            where = f"{rule.name} sample {n} d/d{param}"
            adj = eval_template(rule, rule.vjps[param], args, kwargs, {"g": g, "ans": ans})
            if rule.vjps[param] != ZERO:
                check_structure(adj, value, where)
            x0 = flat(value)
            for _ in range(2):
                v = rng.standard_normal(x0.size)
                if param in rule.symmetric and np.ndim(value) >= 2:  # reads one triangle
                    v = symmetric(v.reshape(np.shape(value))).ravel()
                if (rule.name, param) in ON_SIMPLEX:
                    v = along_simplex(v.reshape(np.shape(value))).ravel()
                up, down = (
                    with_param(rule, args, kwargs, param, unflat(x0 + step * v, value))
                    for step in (EPS, -EPS)
                )
                fd = float(flat(g) @ (flat(f(*up[0], **up[1])) - flat(f(*down[0], **down[1]))))
                fd /= 2 * EPS
                got = 0.0 if rule.vjps[param] == ZERO else float(flat(adj) @ v)
                assert abs(got - fd) <= RTOL * max(abs(got), abs(fd)) + ATOL, (
                    f"{where}: vjp.v = {got!r}, finite differences {fd!r}"
                )
    untested = set(rule.vjps) - tested
    assert not untested, f"{rule.name}: no float sample for {sorted(untested)}"


@pytest.mark.parametrize("rule", GRADIENT_RULES, ids=lambda r: r.name)
def test_helpers_accept_zero_cotangent(rule: Rule) -> None:
    """Helpers called as ``_ad.f(g, ...)`` accept the symbolic zero ``0.0``."""
    args, kwargs = calls(rule)[-1]
    ans = primal(rule)(*args, **kwargs)
    for param, value in param_values(rule, args, kwargs).items():
        template = rule.vjps[param]
        if not re.match(r"_ad\.\w+\(g,", template) or not is_float(value):
            continue
        adj = eval_template(rule, template, args, kwargs, {"g": 0.0, "ans": ans})
        assert not np.any(flat(adj)), f"{rule.name} d/d{param} of a zero cotangent"


def test_sample_calls_bind() -> None:
    """Every sample call binds to its rule's parameters (keyword samples included)."""
    for rule in REGISTRY.rules:
        for args, kwargs in calls(rule):
            names = [f"a{i}" for i in range(len(args))]
            assert rule.bind(names, {k: k for k in kwargs}) is not None, rule.name


def test_every_gradient_rule_has_samples() -> None:
    ours = [
        r
        for r in REGISTRY.rules
        if r.vjps
        and not any((getattr(f, "__module__", None) or "").startswith("s2s_ad") for f in r.funcs)
    ]
    missing = [r.name for r in ours if not r.samples]
    assert sorted(set(missing) - CHECKED_ON_PROGRAMS) == []


def test_reductions_have_axis_and_keepdims_samples() -> None:
    for rule in REGISTRY.rules:
        if rule.nondiff or not {"axis", "keepdims"} <= set(rule.params):
            continue
        ok = False
        for args, kwargs in calls(rule):
            bound = dict(zip(rule.params, args)) | kwargs
            ok |= bound.get("axis") is not None and bound.get("keepdims") is True
        assert ok, f"{rule.name}: no sample with an axis and keepdims=True"


# --- SymPy ---------------------------------------------------------------------------------


def _exact(func: Callable[..., Any]) -> Callable[..., Any]:
    """A SymPy function taking Python floats as exact numbers (``np.log(2.0)`` -> log(2))."""
    return lambda *args: func(*(sympy.nsimplify(a) if isinstance(a, float) else a for a in args))


SYMPY_NP = types.SimpleNamespace(
    pi=sympy.pi,
    exp2=_exact(lambda x: 2**x),
    log1p=_exact(lambda x: sympy.log(1 + x)),
    expm1=_exact(lambda x: sympy.exp(x) - 1),
    **{
        name: _exact(getattr(sympy, name)) for name in "exp log sqrt sin cos sinh cosh sign".split()
    },
)
_S = sympy


def _ndtr(x: Any) -> Any:
    return _S.erfc(-x / _S.sqrt(2)) / 2  # accurate in the left tail, unlike 1 + erf


def _betaln(a: Any, b: Any) -> Any:
    return _S.loggamma(a) + _S.loggamma(b) - _S.loggamma(a + b)


# Primals that SymPy spells differently (SciPy's special functions and distributions).
SYMPY_EXTRA: dict[str, Callable[..., Any]] = {
    "betaln": _betaln,
    "expit": lambda x: 1 / (1 + _S.exp(-x)),
    "logit": lambda x: _S.log(x / (1 - x)),
    "hyp1f1": lambda a, b, x: _S.hyper([a], [b], x),
    "poch": lambda z, m: _S.gamma(z + m) / _S.gamma(z),
    "log_expit": lambda x: -_S.log(1 + _S.exp(-x)),
    "ndtr": _ndtr,
    "log_ndtr": lambda x: _S.log(_ndtr(x)),
    "ndtri": lambda x: _S.sqrt(2) * _S.erfinv(2 * x - 1),
    "xlogy": lambda x, y: x * _S.log(y),
    "xlog1py": lambda x, y: x * _S.log(1 + y),
    "entr": lambda x: -x * _S.log(x),
    "rel_entr": lambda x, y: x * _S.log(x / y),
    "kl_div": lambda x, y: x * _S.log(x / y) - x + y,
    "i0": lambda x: _S.besseli(0, x),
    "i1": lambda x: _S.besseli(1, x),
    "i0e": lambda x: _S.exp(-_S.Abs(x)) * _S.besseli(0, x),
    "ive": lambda v, x: _S.exp(-_S.Abs(x)) * _S.besseli(v, x),
    "j0": lambda x: _S.besselj(0, x),
    "j1": lambda x: _S.besselj(1, x),
    "y0": lambda x: _S.bessely(0, x),
    "y1": lambda x: _S.bessely(1, x),
    "rgamma": lambda x: 1 / _S.gamma(x),
    "i1e": lambda x: _S.exp(-_S.Abs(x)) * _S.besseli(1, x),
    "sinc_pi": lambda x: _S.sin(_S.pi * x) / (_S.pi * x),  # NumPy's normalized sinc
    "gammainc": lambda a, x: _S.lowergamma(a, x) / _S.gamma(a),
    "gammaincc": lambda a, x: _S.uppergamma(a, x) / _S.gamma(a),
    "betainc": lambda a, b, x: _S.betainc_regularized(a, b, 0, x),
    "erfcx": lambda x: _S.exp(x**2) * _S.erfc(x),
}


def _z(x: Any, loc: Any, scale: Any) -> Any:
    return (x - loc) / scale


# scipy.stats log-densities (parameters in SciPy's order); densities are their exponentials.
_LOGPDF: dict[str, Callable[..., Any]] = {
    "norm.logpdf": lambda x, loc, scale: (
        -(_z(x, loc, scale) ** 2) / 2 - _S.log(scale) - _S.log(2 * _S.pi) / 2
    ),
    "expon.logpdf": lambda x, loc, scale: -_z(x, loc, scale) - _S.log(scale),
    "t.logpdf": lambda x, df, loc, scale: (
        _S.loggamma((df + 1) / 2)
        - _S.loggamma(df / 2)
        - _S.log(df * _S.pi) / 2
        - _S.log(scale)
        - (df + 1) / 2 * _S.log(1 + _z(x, loc, scale) ** 2 / df)
    ),
    "gamma.logpdf": lambda x, a, loc, scale: (
        (a - 1) * _S.log(_z(x, loc, scale)) - _z(x, loc, scale) - _S.loggamma(a) - _S.log(scale)
    ),
    "beta.logpdf": lambda x, a, b, loc, scale: (
        (a - 1) * _S.log(_z(x, loc, scale))
        + (b - 1) * _S.log(1 - _z(x, loc, scale))
        - _betaln(a, b)
        - _S.log(scale)
    ),
    "logistic.logpdf": lambda x, loc, scale: (
        -_z(x, loc, scale) - 2 * _S.log(1 + _S.exp(-_z(x, loc, scale))) - _S.log(scale)
    ),
    "laplace.logpdf": lambda x, loc, scale: -_S.Abs(_z(x, loc, scale)) - _S.log(2 * scale),
    "cauchy.logpdf": lambda x, loc, scale: -_S.log(_S.pi * scale * (1 + _z(x, loc, scale) ** 2)),
    "lognorm.logpdf": lambda x, s, loc, scale: (
        -_S.log(s * _z(x, loc, scale) * _S.sqrt(2 * _S.pi))
        - _S.log(_z(x, loc, scale)) ** 2 / (2 * s**2)
        - _S.log(scale)
    ),
    "poisson.logpmf": lambda k, mu, loc=0: (k - loc) * _S.log(mu) - mu - _S.loggamma(k - loc + 1),
    "binom.logpmf": lambda k, n, p, loc=0: (
        _S.loggamma(n + 1)
        - _S.loggamma(k - loc + 1)
        - _S.loggamma(n - k + loc + 1)
        + (k - loc) * _S.log(p)
        + (n - k + loc) * _S.log(1 - p)
    ),
    "uniform.logpdf": lambda x, loc, scale: -_S.log(scale) + 0 * x + 0 * loc,
    "halfnorm.logpdf": lambda x, loc, scale: (
        -(_z(x, loc, scale) ** 2) / 2 - _S.log(scale) + _S.log(2 / _S.pi) / 2
    ),
    "invgamma.logpdf": lambda x, a, loc, scale: (
        -(a + 1) * _S.log(_z(x, loc, scale))
        - 1 / _z(x, loc, scale)
        - _S.loggamma(a)
        - _S.log(scale)
    ),
    "weibull_min.logpdf": lambda x, c, loc, scale: (
        _S.log(c) + (c - 1) * _S.log(_z(x, loc, scale)) - _z(x, loc, scale) ** c - _S.log(scale)
    ),
    "pareto.logpdf": lambda x, b, loc, scale: (
        _S.log(b) - (b + 1) * _S.log(_z(x, loc, scale)) - _S.log(scale)
    ),
    "gumbel_r.logpdf": lambda x, loc, scale: (
        -_z(x, loc, scale) - _S.exp(-_z(x, loc, scale)) - _S.log(scale)
    ),
    "rayleigh.logpdf": lambda x, loc, scale: (
        _S.log(_z(x, loc, scale)) - _z(x, loc, scale) ** 2 / 2 - _S.log(scale)
    ),
    "bernoulli.logpmf": lambda k, p, loc=0: (k - loc) * _S.log(p) + (1 - k + loc) * _S.log(1 - p),
    "geom.logpmf": lambda k, p, loc=0: (k - loc - 1) * _S.log(1 - p) + _S.log(p),
    "nbinom.logpmf": lambda k, n, p, loc=0: (
        _S.loggamma(k - loc + n)
        - _S.loggamma(n)
        - _S.loggamma(k - loc + 1)
        + n * _S.log(p)
        + (k - loc) * _S.log(1 - p)
    ),
}
_LOGPDF["chi2.logpdf"] = lambda x, df, loc, scale: _LOGPDF["gamma.logpdf"](
    x, df / 2, loc, 2 * scale
)
for _name, _f in list(_LOGPDF.items()):
    _LOGPDF[_name.replace(".log", ".")] = lambda *a, _f=_f: _S.exp(_f(*a))
SYMPY_EXTRA.update(_LOGPDF)
SYMPY_EXTRA["norm.ppf"] = lambda q, loc, scale: loc + scale * _S.sqrt(2) * _S.erfinv(2 * q - 1)
SYMPY_EXTRA["norm.isf"] = lambda q, loc, scale: loc - scale * _S.sqrt(2) * _S.erfinv(2 * q - 1)
for _dist, _cdf, _sf in (
    ("norm", lambda z: _S.erfc(-z / _S.sqrt(2)) / 2, lambda z: _S.erfc(z / _S.sqrt(2)) / 2),
    ("expon", lambda z: 1 - _S.exp(-z), lambda z: _S.exp(-z)),
    ("logistic", lambda z: 1 / (1 + _S.exp(-z)), lambda z: 1 / (1 + _S.exp(z))),
    ("cauchy", lambda z: _S.S.Half + _S.atan(z) / _S.pi, lambda z: _S.S.Half - _S.atan(z) / _S.pi),
):
    SYMPY_EXTRA[f"{_dist}.cdf"] = lambda x, loc, scale, _c=_cdf: _c(_z(x, loc, scale))
    SYMPY_EXTRA[f"{_dist}.sf"] = lambda x, loc, scale, _c=_sf: _c(_z(x, loc, scale))
    SYMPY_EXTRA[f"{_dist}.logcdf"] = lambda x, loc, scale, _c=_cdf: _S.log(_c(_z(x, loc, scale)))
    SYMPY_EXTRA[f"{_dist}.logsf"] = lambda x, loc, scale, _c=_sf: _S.log(_c(_z(x, loc, scale)))

SYMPY_AD = types.SimpleNamespace(
    safe_log=_exact(sympy.log),
    digamma=_exact(sympy.digamma),
    polygamma=_exact(sympy.polygamma),
    gammaln=_exact(sympy.loggamma),
    betaln=_exact(_betaln),
    ndtr=_exact(_ndtr),
    i0=_exact(SYMPY_EXTRA["i0"]),
    i1=_exact(SYMPY_EXTRA["i1"]),
    i0e=_exact(SYMPY_EXTRA["i0e"]),
    jv=_exact(sympy.besselj),
    yv=_exact(sympy.bessely),
    iv=_exact(sympy.besseli),
    ive=_exact(SYMPY_EXTRA["ive"]),
    i1e=_exact(SYMPY_EXTRA["i1e"]),
    expn=_exact(sympy.expint),
    zeta=_exact(sympy.zeta),
    hyp1f1=_exact(SYMPY_EXTRA["hyp1f1"]),
)
SYMPY_RULES = [r for r in REGISTRY.rules if r.sympy and r.partials]
# Partials with no closed form (SymPy answers with a Meijer G function it cannot evaluate
# numerically): checked against Richardson-extrapolated differences in
# tests/test_incomplete_gamma_beta.py instead.
NO_CLOSED_FORM = {
    ("scipy.special.gammainc", "a"),
    ("scipy.special.gammaincc", "a"),
    ("scipy.special.betainc", "a"),
    ("scipy.special.betainc", "b"),
}


def _hyper(p: Any, q: Any, x: Any) -> Any:
    import scipy.special

    return scipy.special.hyp1f1(p[0], q[0], x)


def _expint(n: Any, x: Any) -> Any:
    import scipy.special

    return scipy.special.expn(np.asarray(n).astype(int), x)


# SymPy functions lambdify does not translate to SciPy by itself.
_NUMERIC_EXTRA = {"hyper": _hyper, "expint": _expint}


def sympy_function(name: str) -> Any:
    return SYMPY_EXTRA.get(name) or getattr(sympy, name, None) or getattr(cfunctions, name)


@pytest.mark.parametrize("rule", SYMPY_RULES, ids=lambda r: r.name)
def test_partials_match_sympy(rule: Rule) -> None:
    diff = list(rule.partials)
    # Every parameter is a symbol (polygamma's order n, a count k): only ``diff`` vary.
    params = [p for p in rule.params if p in diff or p not in rule.defaults]
    symbols = {p: sympy.Symbol(p, real=True) for p in params}
    expr = sympy_function(rule.sympy)(*symbols.values())
    f = primal(rule)
    modules = [_NUMERIC_EXTRA, "scipy", "numpy"] if _has_scipy() else "numpy"
    for param, partial in rule.partials.items():
        if (rule.name, param) in NO_CLOSED_FORM:
            continue
        expected = sympy.diff(expr, symbols[param])
        # Symbolically: the template over SymPy objects equals the derivative.
        names = {p: f"_s_{p}" for p in params}
        names.update({p: rule.defaults[p] for p in rule.params if p not in params})
        env = {"np": SYMPY_NP, "_ad": SYMPY_AD, "ans": expr}
        env.update({names[p]: s for p, s in symbols.items()})
        try:
            got = eval(substitute(partial, names), env)  # noqa: S307
        except (AttributeError, TypeError):
            got = None  # piecewise helpers (_ad.max_weight...): numeric check only
        if got is not None:
            got = sympy.nsimplify(got, rational=True)
        if got is not None and sympy.simplify(expected - got) != 0:
            for point in ([0.3, 0.7, 0.6, 0.9, 1.1], [0.55, 0.2, 0.4, 0.8, 1.3]):
                subs = dict(zip(symbols.values(), point))
                err = complex((expected - got).evalf(subs=subs))
                assert abs(err) < 1e-9, f"{rule.name} d/d{param}: {got} != {expected}"
        # Numerically, on the rule's samples, with the template evaluated by NumPy.
        exact = sympy.lambdify(list(symbols.values()), expected, modules=modules)
        for args in rule.samples:
            given = dict(zip(rule.params, args))
            if set(given) - set(params):
                continue  # a parameter SymPy holds at its default (a count's shift loc)
            default = {p: eval(rule.defaults.get(p, "None"), {"np": np}) for p in params}  # noqa: S307
            values = [given.get(p, default[p]) for p in params]
            point = [np.asarray(v, dtype=float) for v in values]
            with np.errstate(invalid="ignore", divide="ignore"):
                want = np.asarray(exact(*point), dtype=float) * np.ones(np.broadcast(*point).shape)
            have = eval_template(rule, partial, args, {}, {"ans": f(*args)})
            have = np.broadcast_to(have, want.shape)
            ok = np.isfinite(want)  # cbrt's SymPy derivative is complex below zero
            np.testing.assert_allclose(have[ok], want[ok], rtol=1e-9, atol=1e-12)


def _has_scipy() -> bool:
    try:
        import scipy.special  # noqa: F401
    except ImportError:
        return False
    return True


# --- bookkeeping ---------------------------------------------------------------------------

SPEC_NAMES = """
np.exp np.log np.log1p np.expm1 np.sqrt np.sin np.cos np.tan np.tanh np.sinh np.cosh
np.arcsin np.arccos np.arctan np.arctan2 np.power np.square np.abs np.maximum np.minimum
np.where np.clip np.sign np.sum np.mean np.prod np.max np.min np.var np.std np.linalg.norm
np.logaddexp np.dot np.matmul np.tensordot np.einsum np.outer np.inner np.trace
np.transpose np.linalg.inv np.linalg.det np.linalg.solve np.reshape np.ravel
np.expand_dims np.squeeze np.concatenate np.stack np.broadcast_to np.tile np.repeat
np.zeros np.ones np.zeros_like np.ones_like np.full np.eye np.arange np.linspace np.array
np.asarray abs sum min max pow float round int math.exp math.log math.sqrt math.sin
math.cos math.tan math.tanh math.pow math.fabs math.floor math.ceil np.floor np.ceil
np.round np.argmax np.amax np.amin np.cumsum
""".split()
NONDIFF_NAMES = """
round np.round np.around np.floor np.ceil np.trunc np.rint np.sign np.argmax np.argmin
np.argsort int bool np.int64 np.greater np.less_equal np.equal np.isnan np.isfinite
np.logical_and np.any np.all np.count_nonzero len range isinstance print np.shape np.ndim
np.size math.floor math.ceil np.random.randn np.random.rand np.zeros np.ones np.zeros_like
np.eye np.empty
""".split()
NAMESPACE = {"np": np, "math": math, **vars(builtins)}


@pytest.mark.parametrize("name", SPEC_NAMES)
def test_spec_function_has_rule(name: str) -> None:
    assert REGISTRY.lookup(eval(name, NAMESPACE)) is not None, name  # noqa: S307


@pytest.mark.parametrize("name", NONDIFF_NAMES)
def test_nondiff_functions_are_marked(name: str) -> None:
    rule = REGISTRY.lookup(eval(name, NAMESPACE))  # noqa: S307
    assert rule is not None and rule.nondiff and not rule.vjps, name


def test_smooth_functions_are_not_cut() -> None:
    """Outputs that depend smoothly on a float argument are never registered nondiff."""
    for func in (np.random.normal, np.random.uniform, np.logspace, np.linspace, np.arange):
        rule = REGISTRY.lookup(func)
        assert rule is None or not rule.nondiff, func


def test_methods_and_attributes() -> None:
    names = "sum mean prod max min var std reshape transpose ravel flatten squeeze copy astype"
    for name in (names + " dot clip cumsum").split():
        assert REGISTRY.methods[name].vjps, name
    assert REGISTRY.methods["argmax"].nondiff
    assert REGISTRY.attrs["T"].vjps and REGISTRY.attrs["real"].vjps
    for name in "shape ndim size dtype".split():
        assert REGISTRY.attrs[name].nondiff and not REGISTRY.attrs[name].vjps


def test_helpers_used_by_templates_exist() -> None:
    runtime_names = {k for k, v in vars(runtime).items() if not k.startswith("_") and callable(v)}
    assert not runtime_names & set(vjps.__all__), "vjps helpers shadow runtime names"
    for name in vjps.__all__:
        assert callable(getattr(vjps, name)), name
    for rule in REGISTRY.rules:
        for template in templates(rule):
            for helper in re.findall(r"_ad\.(\w+)", template):
                assert hasattr(AD, helper), f"{rule.name}: _ad.{helper} is missing"


def test_templates_call_helpers_positionally() -> None:
    for rule in REGISTRY.rules:
        for template in rule.vjps.values():
            for call in re.findall(r"_ad\.\w+\(([^()]*)\)", template):
                assert not re.search(r"\b\w+\s*=[^=]", call), f"{rule.name}: {template}"


def test_callables_belong_to_one_rule() -> None:
    owner: dict[int, str] = {}
    for rule in REGISTRY.rules:
        for func in rule.funcs:
            assert owner.setdefault(id(func), rule.name) == rule.name, (
                f"{func} is in {owner[id(func)]} and {rule.name}"
            )


def test_binary_elementwise_rules_unbroadcast() -> None:
    for rule in REGISTRY.rules:
        if rule.partials and len(rule.params) > 1:
            for param, template in rule.vjps.items():
                assert template.startswith("_ad.unbroadcast("), (rule.name, param)
                assert template.endswith(f", {param})"), (rule.name, param)


def test_math_counterparts_agree_with_numpy() -> None:
    for rule in REGISTRY.rules:
        if not rule.partials or len(rule.funcs) < 2:
            continue
        for args in rule.samples:
            if all(isinstance(a, float) for a in args):
                want = rule.funcs[0](*args)
                for func in rule.funcs[1:]:
                    assert math.isclose(func(*args), want, rel_tol=1e-12), (rule.name, func)


# --- behaviour at kinks and degenerate points ----------------------------------------------


def test_ties_share_the_gradient() -> None:
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]])
    np.testing.assert_allclose(AD.max_vjp(1.0, a, a.max(), None, False), [[0, 0.5, 0.5], [0, 0, 0]])
    np.testing.assert_allclose(
        AD.max_vjp(np.ones(2), a, a.max(axis=1), 1, False), [[0, 0.5, 0.5], [0.5, 0.5, 0]]
    )
    np.testing.assert_allclose(AD.min_vjp(1.0, a, a.min(), None, False)[1, 2], 1.0)
    assert AD.max_weight(2.0, 2.0) == 0.5 and AD.min_weight(1.0, 2.0) == 1.0
    assert AD.builtin_max_vjp(1.0, [1.0, 3.0, 3.0], None, (), 3.0) == [0.0, 0.5, 0.5]
    assert AD.builtin_min_vjp(2.0, 1.5, 1.5, (), 1.5) == 1.0
    assert AD.builtin_max_vjp(1.0, 2.5, 1.0, (), 2.5) == 1.0
    assert AD.builtin_max_vjp(3.0, 2.5, 1.0, (2.5, 2.5), 2.5) == 1.0
    assert AD.builtin_max_args_vjp(3.0, 2.5, 1.0, (2.5, 0.0, 2.5), 2.5) == (1.0, 0.0, 1.0)
    x = np.float64(0.5)
    assert AD.builtin_min_vjp(1.0, x, x, (), x) == 0.5  # np.bool_ + np.bool_ is not 2


def test_degenerate_points_give_finite_gradients() -> None:
    zero = np.zeros(3)
    assert np.all(AD.norm_vjp(1.0, zero, 0.0, None, None, False) == 0)
    assert np.all(AD.norm_vjp(1.0, np.zeros((2, 2)), 0.0, "fro", None, False) == 0)
    assert np.all(AD.std_vjp(1.0, np.ones(4), 0.0, None, 0, False) == 0)
    assert AD.safe_log(-1.0) == 0.0 and AD.safe_log(0.0) == 0.0
    sign = eval(REGISTRY.lookup(np.abs).vjps["x"], {"np": np, "g": 1.0, "x": 0.0})  # noqa: S307
    assert sign == 0.0
    np.testing.assert_allclose(AD.prod_vjp(1.0, np.array([0.0, 2.0, 3.0])), [6.0, 0.0, 0.0])
    np.testing.assert_allclose(
        AD.clip_mask(np.array([-1.0, 0.0, 1.0, 2.0]), 0.0, 1.0), [0.0, 1.0, 1.0, 0.0]
    )


def test_power_of_zero_base() -> None:
    rule = REGISTRY.lookup(np.power)
    out = eval_template(rule, rule.vjps["y"], (0.0, 2.0), {}, {"g": 1.0, "ans": 0.0})
    assert out == 0.0


# --- substitution ------------------------------------------------------------------------


def test_substitute_leaves_string_literals_alone() -> None:
    """Parameter names inside a template's string literals (einsum subscripts, modes) are
    text, not parameters: only the identifiers outside them are replaced."""
    names = {"i": "_v0", "j": "_v1", "x": "a + b", "mode": "'same'"}
    template = "np.einsum('i,j->ij', g, j) + len(\"x\") * x + (mode == r'x') + f(x='i')"
    assert substitute(template, names) == (
        "np.einsum('i,j->ij', g, _v1) + len(\"x\") * (a + b) + ('same' == r'x') + f(x='i')"
    )


def test_template_with_subscripts_named_like_parameters() -> None:
    """A rule whose parameters are ``i`` and ``j`` and whose VJP is an einsum with the
    subscripts ``'i,j->ij'``: the gradient of ``i @ j`` is right (the old substitution
    rewrote the subscripts into the call-site names)."""
    rule = Rule("matvec", (), ("i", "j"), vjps={"i": "np.einsum('i,j->ij', g, j)",
                                               "j": "np.einsum('ij,i->j', i, g)"})  # fmt: skip
    rng = np.random.default_rng(1)
    m, v, g = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)
    for param, want in (("i", np.outer(g, v)), ("j", m.T @ g)):
        got = eval_template(rule, rule.vjps[param], (m, v), {}, {"g": g, "ans": m @ v})
        np.testing.assert_allclose(got, want, rtol=1e-12)
