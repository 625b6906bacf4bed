"""``scipy.special``: elementwise functions as partial derivatives, and the reductions
``logsumexp``, ``softmax``, ``log_softmax``.

Loaded only once the user has imported :mod:`scipy.special` (see ``REGISTRY.defer``).
Partials are checked against SymPy by the tests like the NumPy ones; the SciPy functions
they are written in are reached as ``_ad.digamma`` ... (:mod:`.scipy_vjps`), whose
wrappers share the rule of the function they wrap.

``logsumexp(..., return_sign=True)`` returns ``(log|S|, sign)``: the sign carries no
gradient.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from . import incgamma_vjps as V
from . import scipy_vjps as W
from .registry import elementwise, nondiff, set_jvps, vjp_rule

_REAL = np.array([[-1.2, 0.3, 0.8], [1.7, -0.4, 2.1]])
_POS = np.array([[0.4, 1.3, 2.2], [0.7, 3.1, 1.6]])
_PROB = np.array([0.05, 0.3, 0.5, 0.92])
_UNIT = np.array([-0.8, -0.3, 0.2, 0.6])
_COL = np.array([[1.2], [0.4]])
_TAILS = np.array([-3.0, -1.0, 0.3, 4.0])

R = [(0.7,), (-1.3,), (_REAL,)]
P = [(0.7,), (2.5,), (_POS,)]

_SQRT_2PI = "np.sqrt(2.0 * np.pi)"

gammaln = elementwise(
    "scipy.special.gammaln", [sc.gammaln, W.gammaln], ("x",), ("_ad.digamma(x)",), P,
    sympy="loggamma",
)  # fmt: skip
digamma = elementwise(
    "scipy.special.digamma",
    [sc.digamma, sc.psi, W.digamma],
    ("x",),
    ("_ad.polygamma(1, x)",),
    P,
    sympy="digamma",
)
polygamma = elementwise(
    "scipy.special.polygamma",
    [sc.polygamma, W.polygamma],
    ("n", "x"),
    ("_ad.polygamma(n + 1, x)",),
    [(1, 0.7), (2, _POS), (0, 1.9), (np.array([1, 2, 3]), np.array([0.8, 1.5, 2.5]))],
    diff=("x",),
    sympy="polygamma",
)
betaln = elementwise(
    "scipy.special.betaln",
    [sc.betaln, W.betaln],
    ("a", "b"),
    ("_ad.digamma(a) - _ad.digamma(a + b)", "_ad.digamma(b) - _ad.digamma(a + b)"),
    [(0.7, 2.5), (_POS, 1.3), (np.abs(_UNIT), _COL)],
    sympy="betaln",
)
expit = elementwise(
    "scipy.special.expit", [sc.expit], ("x",), ("ans * (1.0 - ans)",), R, sympy="expit"
)
logit = elementwise(
    "scipy.special.logit",
    [sc.logit],
    ("x",),
    ("1.0 / (x * (1.0 - x))",),
    [(0.3,), (_PROB,)],
    sympy="logit",
)
log_expit = elementwise(
    "scipy.special.log_expit", [sc.log_expit], ("x",), ("1.0 - np.exp(ans)",), R,
    sympy="log_expit",
)  # fmt: skip
erf = elementwise(
    "scipy.special.erf",
    [sc.erf],
    ("x",),
    ("2.0 / np.sqrt(np.pi) * np.exp(-x * x)",),
    R,
    sympy="erf",
)
erfc = elementwise(
    "scipy.special.erfc",
    [sc.erfc],
    ("x",),
    ("-2.0 / np.sqrt(np.pi) * np.exp(-x * x)",),
    R,
    sympy="erfc",
)
erfinv = elementwise(
    "scipy.special.erfinv",
    [sc.erfinv],
    ("x",),
    ("np.sqrt(np.pi) / 2.0 * np.exp(ans * ans)",),
    [(0.3,), (-0.6,), (_UNIT,)],
    sympy="erfinv",
)
ndtr = elementwise(
    "scipy.special.ndtr",
    [sc.ndtr, W.ndtr],
    ("x",),
    (f"np.exp(-0.5 * x * x) / {_SQRT_2PI}",),
    R,
    sympy="ndtr",
)
# exp(-x^2/2 - log_ndtr(x)) stays finite far into the left tail (where ndtr underflows).
log_ndtr = elementwise(
    "scipy.special.log_ndtr",
    [sc.log_ndtr],
    ("x",),
    (f"np.exp(-0.5 * x * x - ans) / {_SQRT_2PI}",),
    [(0.7,), (-2.5,), (_TAILS,)],
    sympy="log_ndtr",
)
ndtri = elementwise(
    "scipy.special.ndtri",
    [sc.ndtri],
    ("x",),
    (f"{_SQRT_2PI} * np.exp(0.5 * ans * ans)",),
    [(0.3,), (_PROB,)],
    sympy="ndtri",
)
# d/dy at x == 0 is 0 (xlogy(0, y) == 0 for every y), also at y == 0.
xlogy = elementwise(
    "scipy.special.xlogy",
    [sc.xlogy],
    ("x", "y"),
    ("np.log(y)", "x / np.where(x == 0, 1.0, y)"),
    [(1.3, 0.7), (_REAL, _POS), (np.array([0.0, 1.5]), np.array([[0.5], [2.0]]))],
    sympy="xlogy",
)
xlog1py = elementwise(
    "scipy.special.xlog1py",
    [sc.xlog1py],
    ("x", "y"),
    ("np.log1p(y)", "x / np.where(x == 0, 1.0, 1.0 + y)"),
    [(1.3, 0.7), (_REAL, _POS - 0.3), (np.array([0.0, 1.5]), np.array([[-0.5], [2.0]]))],
    sympy="xlog1py",
)
# Entropies: the derivatives of x log x are unbounded at x == 0 (d/dx is +-inf there,
# the one-sided limit); outside the domain (x < 0 or y <= 0) the value is inf and the
# gradient is not meaningful (NaN or inf, as in JAX).
entr = elementwise(
    "scipy.special.entr",
    [sc.entr],
    ("x",),
    ("-(np.log(x) + 1.0)",),
    [(0.7,), (2.5,), (_POS,)],
    sympy="entr",
)
rel_entr = elementwise(
    "scipy.special.rel_entr",
    [sc.rel_entr],
    ("x", "y"),
    ("np.log(x / y) + 1.0", "-x / y"),
    [(0.7, 1.3), (_POS, 0.9), (np.abs(_UNIT), _COL)],
    sympy="rel_entr",
)
kl_div = elementwise(
    "scipy.special.kl_div",
    [sc.kl_div],
    ("x", "y"),
    ("np.log(x / y)", "1.0 - x / y"),
    [(0.7, 1.3), (_POS, 0.9), (np.abs(_UNIT), _COL)],
    sympy="kl_div",
)
beta = elementwise(
    "scipy.special.beta",
    [sc.beta],
    ("a", "b"),
    ("ans * (_ad.digamma(a) - _ad.digamma(a + b))", "ans * (_ad.digamma(b) - _ad.digamma(a + b))"),
    [(0.7, 2.5), (_POS, 1.3), (np.abs(_UNIT), _COL)],
    sympy="beta",
)
binom = elementwise(
    "scipy.special.binom",
    [sc.binom],
    ("n", "k"),
    (
        "ans * (_ad.digamma(n + 1.0) - _ad.digamma(n - k + 1.0))",
        "ans * (_ad.digamma(n - k + 1.0) - _ad.digamma(k + 1.0))",
    ),
    [(5.3, 2.5), (_POS + 3.0, 1.3), (4.6, _POS)],
    sympy="binomial",
)
gamma = elementwise(
    "scipy.special.gamma", [sc.gamma], ("x",), ("ans * _ad.digamma(x)",), P, sympy="gamma"
)
i0 = elementwise(
    "scipy.special.i0", [sc.i0, W.i0], ("x",), ("_ad.i1(x)",), R + [(0.0,)], sympy="i0"
)
# I1'(x) = I0(x) - I1(x) / x, and 1/2 at 0.
i1 = elementwise(
    "scipy.special.i1",
    [sc.i1, W.i1],
    ("x",),
    ("np.where(x == 0, 0.5, _ad.i0(x) - _ad.i1(x) / np.where(x == 0, 1.0, x))",),
    R + [(0.0,), (np.array([0.0, 1e-3, -2.0]),)],
    sympy="i1",
)
# The exponentially scaled ones: i0e = exp(-|x|) i0, so i0e' = i1e - sign(x) i0e, and
# i1e' = i0e - i1e (sign(x) + 1/x), which is 1/2 at 0.
i0e = elementwise(
    "scipy.special.i0e",
    [sc.i0e, W.i0e],
    ("x",),
    ("_ad.i1e(x) - np.sign(x) * ans",),
    R + [(np.array([-3.0, -0.4, 0.5, 6.0]),)],
    sympy="i0e",
)
i1e = elementwise(
    "scipy.special.i1e",
    [sc.i1e, W.i1e],
    ("x",),
    ("np.where(x == 0, 0.5, _ad.i0e(x) - ans * (np.sign(x) + 1.0 / np.where(x == 0, 1.0, x)))",),
    R + [(0.0,), (np.array([0.0, 1e-3, -2.0, 7.0]),)],
    sympy="i1e",
)
nondiff("scipy.special.gammasgn (piecewise constant)", [sc.gammasgn])
rgamma = elementwise(
    "scipy.special.rgamma", [sc.rgamma], ("x",), ("-ans * _ad.digamma(x)",), P + [(-0.5,)],
    sympy="rgamma",
)  # fmt: skip
multigammaln = elementwise(
    "scipy.special.multigammaln",
    [sc.multigammaln],
    ("a", "d"),
    ("_ad.multidigamma(a, d)",),
    [(2.5, 3), (np.array([[4.2, 4.7], [5.5, 6.1]]), 2), (1.3, 1)],
    diff=("a",),
)

# --- Bessel functions: J and Y of integer and real order, I (and exp-scaled) of real order ---
# d/dx C_v(x) = (C_{v-1}(x) - C_{v+1}(x)) / 2 for C = J, Y; (I_{v-1} + I_{v+1}) / 2 for I.
# (Derivatives in the order v are not modelled: its argument gets no gradient rule.)

_BESSEL_X = np.array([0.4, 1.7, 3.2, 8.5])
j0 = elementwise("scipy.special.j0", [sc.j0], ("x",), ("-_ad.jv(1, x)",), R + [(_BESSEL_X,)],
                 sympy="j0")  # fmt: skip
j1 = elementwise(
    "scipy.special.j1", [sc.j1], ("x",), ("0.5 * (_ad.jv(0, x) - _ad.jv(2, x))",), R,
    sympy="j1",
)  # fmt: skip
y0 = elementwise("scipy.special.y0", [sc.y0], ("x",), ("-_ad.yv(1, x)",), P + [(_BESSEL_X,)],
                 sympy="y0")  # fmt: skip
y1 = elementwise(
    "scipy.special.y1", [sc.y1], ("x",), ("0.5 * (_ad.yv(0, x) - _ad.yv(2, x))",), P,
    sympy="y1",
)  # fmt: skip
_ORDER_SAMPLES = [(2, 0.7), (1, _POS), (np.array([0, 1, 3]), _BESSEL_X[:3]), (3.5, 2.5)]
jv = elementwise(
    "scipy.special.jv",
    [sc.jv, sc.jn, W.jv],
    ("v", "x"),
    ("0.5 * (_ad.jv(v - 1, x) - _ad.jv(v + 1, x))",),
    _ORDER_SAMPLES,
    diff=("x",),
    sympy="besselj",
)
# yn truncates its order to an integer (with a warning): its own rule, in that order.
yn = elementwise(
    "scipy.special.yn",
    [sc.yn],
    ("n", "x"),
    ("0.5 * (_ad.yv(np.trunc(n) - 1, x) - _ad.yv(np.trunc(n) + 1, x))",),
    [(2, 0.7), (1, _POS), (np.array([0, 1, 3]), _BESSEL_X[:3])],
    diff=("x",),
    sympy="bessely",
)
yv = elementwise(
    "scipy.special.yv",
    [sc.yv, W.yv],
    ("v", "x"),
    ("0.5 * (_ad.yv(v - 1, x) - _ad.yv(v + 1, x))",),
    _ORDER_SAMPLES,
    diff=("x",),
    sympy="bessely",
)
iv = elementwise(
    "scipy.special.iv",
    [sc.iv, W.iv],
    ("v", "x"),
    ("0.5 * (_ad.iv(v - 1, x) + _ad.iv(v + 1, x))",),
    _ORDER_SAMPLES + [(2.0, _REAL)],
    diff=("x",),
    sympy="besseli",
)
ive = elementwise(
    "scipy.special.ive",
    [sc.ive, W.ive],
    ("v", "x"),
    ("0.5 * (_ad.ive(v - 1, x) + _ad.ive(v + 1, x)) - np.sign(x) * ans",),
    _ORDER_SAMPLES + [(1.0, _REAL)],
    diff=("x",),
    sympy="ive",
)

# --- reductions over an axis ------------------------------------------------------------

_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_V = np.array([0.6, -1.3, 0.9, 2.1])

logsumexp = vjp_rule(
    "scipy.special.logsumexp",
    [sc.logsumexp],
    ("a", "axis", "b", "keepdims", "return_sign"),
    {
        "a": "_ad.logsumexp_vjp_a(g, a, b, ans, axis, keepdims, return_sign)",
        "b": "_ad.logsumexp_vjp_b(g, a, b, ans, axis, keepdims, return_sign)",
    },
    [
        (_A,),
        (_V,),
        (_A, 1),
        (_T, (0, 2)),
        (_T, -1, None, True),
        (_A, 0, np.array([0.5, 2.0, 1.5])),
        (_A, None, np.array([[0.5], [2.0]])),
        (_V, {"b": np.array([0.3, 1.0, 2.0, 0.7]), "keepdims": True}),
        (_A, {"axis": 1, "b": np.array([[0.5, 1.0, 2.0], [1.5, 0.2, 0.9]])}),
        (_V, None, np.array([0.3, -1.0, 2.0, 0.7]), False, True),
        (_A, 1, np.array([[0.5, -1.0, 2.0], [-1.5, 0.2, 0.9]]), True, True),
    ],
    defaults={"axis": "None", "b": "None", "keepdims": "False", "return_sign": "False"},
    kw_samples=[{"axis": 1}, {"axis": 0, "keepdims": True}, {"axis": (0, 1), "keepdims": True}],
)
_LSE_DVALUE = (
    "np.sum(t * _ad.lse_weights(a, {}, ans, axis, keepdims, return_sign), axis, keepdims=keepdims)"
)
set_jvps(
    logsumexp,
    a=f"_ad.lse_tangent({_LSE_DVALUE.format('b')}, ans, return_sign)",
    b=f"_ad.lse_tangent({_LSE_DVALUE.format('None')}, ans, return_sign)",
)
softmax = vjp_rule(
    "scipy.special.softmax",
    [sc.softmax],
    ("x", "axis"),
    {"x": "ans * (g - np.sum(g * ans, axis, keepdims=True))"},
    [(_V,), (_A, 1), (_T, (0, 2)), (_T, {"axis": 0})],
    defaults={"axis": "None"},
)
set_jvps(softmax, x="ans * (t - np.sum(t * ans, axis, keepdims=True))")
log_softmax = vjp_rule(
    "scipy.special.log_softmax",
    [sc.log_softmax],
    ("x", "axis"),
    {"x": "g - np.exp(ans) * np.sum(g, axis, keepdims=True)"},
    [(_V,), (_A, 1), (_T, (0, 2)), (_T, {"axis": -1})],
    defaults={"axis": "None"},
)
set_jvps(log_softmax, x="t - np.sum(np.exp(ans) * t, axis, keepdims=True)")

# --- incomplete gamma and beta functions ------------------------------------------------------
# In the shape parameters (no closed form): summed to round-off by ``_ad.gammainc_da``,
# ``_ad.betainc_da`` and ``_ad.betainc_db`` (series / continued fractions), whose own
# rules differentiate them in ``x`` only.

_GAMMA_PDF = "np.exp((a - 1.0) * np.log(x) - x - _ad.gammaln(a))"
gammainc_da = elementwise(
    "_ad.gammainc_da",
    [V.gammainc_da],
    ("a", "x"),
    (f"{_GAMMA_PDF} * (np.log(x) - _ad.digamma(a))",),
    [(2.5, 0.7), (1.3, _POS), (_POS, 1.1), (0.4, 3.5)],
    diff=("x",),
)
gammainc = elementwise(
    "scipy.special.gammainc",
    [sc.gammainc],
    ("a", "x"),
    ("_ad.gammainc_da(a, x)", _GAMMA_PDF),
    [(2.5, 0.7), (1.3, _POS), (_POS, 1.1), (0.4, 3.5), (30.0, 27.0)],
    sympy="gammainc",
)
gammaincc = elementwise(
    "scipy.special.gammaincc",
    [sc.gammaincc],
    ("a", "x"),
    ("-_ad.gammainc_da(a, x)", f"-{_GAMMA_PDF}"),
    [(2.5, 0.7), (1.3, _POS), (_POS, 1.1), (0.4, 3.5), (30.0, 34.0)],
    sympy="gammaincc",
)
_BETA_PDF = "np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - _ad.betaln(a, b))"
_BETA_SAMPLES = [(2.5, 1.5, 0.3), (1.3, 2.2, _PROB), (_POS, 1.7, 0.6), (0.4, 30.0, 0.02)]
betainc_da = elementwise(
    "_ad.betainc_da",
    [V.betainc_da],
    ("a", "b", "x"),
    (f"{_BETA_PDF} * (np.log(x) - _ad.digamma(a) + _ad.digamma(a + b))",),
    _BETA_SAMPLES,
    diff=("x",),
)
betainc_db = elementwise(
    "_ad.betainc_db",
    [V.betainc_db],
    ("a", "b", "x"),
    (f"{_BETA_PDF} * (np.log1p(-x) - _ad.digamma(b) + _ad.digamma(a + b))",),
    _BETA_SAMPLES,
    diff=("x",),
)
betainc = elementwise(
    "scipy.special.betainc",
    [sc.betainc],
    ("a", "b", "x"),
    ("_ad.betainc_da(a, b, x)", "_ad.betainc_db(a, b, x)", _BETA_PDF),
    _BETA_SAMPLES + [(40.0, 3.0, 0.95)],
    sympy="betainc",
)
erfcinv = elementwise(
    "scipy.special.erfcinv",
    [sc.erfcinv],
    ("y",),
    ("-np.sqrt(np.pi) / 2.0 * np.exp(ans * ans)",),
    [(0.3,), (1.6,), (_PROB * 1.8,)],
    sympy="erfcinv",
)
erfcx = elementwise(
    "scipy.special.erfcx", [sc.erfcx], ("x",), ("2.0 * x * ans - 2.0 / np.sqrt(np.pi)",), R,
    sympy="erfcx",
)  # fmt: skip
from . import scipy_special_more  # noqa: E402, F401  (loaded with this module)
