"""More of ``scipy.stats``, the distributions users put in likelihoods and priors beyond
:mod:`.scipy_stats`: ``uniform``, ``halfnorm``, ``invgamma``, ``weibull_min``, ``pareto``,
``gumbel_r``, ``rayleigh`` (logpdf pdf), ``laplace`` and ``uniform`` distribution
functions (cdf sf logcdf logsf), ``bernoulli``, ``geom``, ``nbinom`` (logpmf pmf in their
probabilities and ``nbinom``'s ``n``), and the quantile functions ``norm.ppf`` and
``norm.isf``. Partials are written in ``z = (x - loc) / scale`` and checked against SymPy.

Outside the support the densities are constant (zero, or ``-inf`` for the log): their
gradient there is zero. Loaded with :mod:`.scipy_stats`.
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from .registry import elementwise
from .scipy_stats import _family

_Z = "((x - loc) / scale)"
_LOC_SCALE = {"loc": "0", "scale": "1"}
_X = np.array([[-1.2, 0.3, 0.8], [1.7, -0.4, 2.1]])
_POS = np.array([[0.4, 1.3, 2.2], [0.7, 3.1, 1.6]])
_SCALES = np.array([0.8, 1.5, 2.0])
_LOCS = np.array([[0.3], [-0.5]])
_PROBS = np.array([0.15, 0.4, 0.55, 0.85])
_K = np.array([0, 1, 3, 6])

# --- uniform on [loc, loc + scale] -----------------------------------------------------------

_IN = "((x >= loc) & (x <= loc + scale))"
uniform = _family(
    st.uniform,
    "uniform",
    ("x", "loc", "scale"),
    ("0.0 * x", "0.0 * x", f"np.where({_IN}, -1.0 / scale, 0.0)"),
    [(0.7,), (_POS / 4.0 + 0.02, 0.1), (_POS, -0.5, 4.0), (_X, -1.5, _SCALES + 2.5)],
    cdf=(
        f"np.where({_IN}, 1.0 / scale, 0.0)",
        f"np.where({_IN}, -1.0 / scale, 0.0)",
        f"np.where({_IN}, -{_Z} / scale, 0.0)",
    ),
    cdf_params=("x", "loc", "scale"),
    defaults=_LOC_SCALE,
)

# --- location-scale families on the half line ---------------------------------------------------

halfnorm = _family(
    st.halfnorm,
    "halfnorm",
    ("x", "loc", "scale"),
    (f"-{_Z} / scale", f"{_Z} / scale", f"({_Z} ** 2 - 1.0) / scale"),
    [(0.7,), (_POS,), (_POS, -0.3, _SCALES), (2.5, 0.4, 1.5)],
    defaults=_LOC_SCALE,
)
invgamma = _family(
    st.invgamma,
    "invgamma",
    ("x", "a", "loc", "scale"),
    (
        f"(1.0 / {_Z} - (a + 1.0)) / (x - loc)",
        f"-np.log({_Z}) - _ad.digamma(a)",
        f"((a + 1.0) - 1.0 / {_Z}) / (x - loc)",
        f"(a - 1.0 / {_Z}) / scale",
    ),
    [(0.7, 2.5), (_POS, 1.5), (_POS, 3.0, -0.3, _SCALES), (2.5, 0.8, 0.4, 1.5)],
    defaults=_LOC_SCALE,
)
weibull_min = _family(
    st.weibull_min,
    "weibull_min",
    ("x", "c", "loc", "scale"),
    (
        f"((c - 1.0) - c * {_Z} ** c) / (x - loc)",
        f"1.0 / c + np.log({_Z}) * (1.0 - {_Z} ** c)",
        f"(c * {_Z} ** c - (c - 1.0)) / (x - loc)",
        f"c * ({_Z} ** c - 1.0) / scale",
    ),
    [(0.7, 1.5), (_POS, 2.5), (_POS, 0.8, -0.3, _SCALES), (2.5, 3.0, 0.4, 1.5)],
    defaults=_LOC_SCALE,
)
pareto = _family(
    st.pareto,
    "pareto",
    ("x", "b", "loc", "scale"),
    (
        "-(b + 1.0) / (x - loc)",
        f"1.0 / b - np.log({_Z})",
        "(b + 1.0) / (x - loc)",
        "b / scale",
    ),
    [(1.7, 2.5), (_POS + 1.0, 1.5), (_POS + 0.5, 3.0, -0.3, _SCALES / 2.0), (2.5, 0.8, 0.4, 1.5)],
    defaults=_LOC_SCALE,
)
gumbel_r = _family(
    st.gumbel_r,
    "gumbel_r",
    ("x", "loc", "scale"),
    (
        f"(np.exp(-{_Z}) - 1.0) / scale",
        f"(1.0 - np.exp(-{_Z})) / scale",
        f"({_Z} * (1.0 - np.exp(-{_Z})) - 1.0) / scale",
    ),
    [(0.7,), (_X,), (_X, _LOCS, _SCALES), (-1.1, 0.4, 2.5)],
    defaults=_LOC_SCALE,
)
rayleigh = _family(
    st.rayleigh,
    "rayleigh",
    ("x", "loc", "scale"),
    (
        f"(1.0 / {_Z} - {_Z}) / scale",
        f"({_Z} - 1.0 / {_Z}) / scale",
        f"({_Z} ** 2 - 2.0) / scale",
    ),
    [(0.7,), (_POS,), (_POS, -0.3, _SCALES), (2.5, 0.4, 1.5)],
    defaults=_LOC_SCALE,
)

# --- Laplace's distribution function: 1/2 e^z below loc, 1 - 1/2 e^-z above --------------------

_LAPLACE_PDF = f"(0.5 * np.exp(-np.abs({_Z})) / scale)"
for _method, _sign in (("cdf", ""), ("sf", "-")):
    elementwise(
        f"scipy.stats.laplace.{_method}",
        [getattr(st.laplace, _method)],
        ("x", "loc", "scale"),
        (
            f"{_sign}{_LAPLACE_PDF}",
            f"-{_sign}{_LAPLACE_PDF}" if _sign == "" else _LAPLACE_PDF,
            f"-{_sign}{_Z} * {_LAPLACE_PDF}" if _sign == "" else f"{_Z} * {_LAPLACE_PDF}",
        ),
        [(0.7,), (_X, 0.1), (_X, _LOCS + 0.05, _SCALES), (-1.1, 0.4, 2.5)],
        defaults=_LOC_SCALE,
    )
for _method, _sign in (("logcdf", ""), ("logsf", "-")):
    elementwise(
        f"scipy.stats.laplace.{_method}",
        [getattr(st.laplace, _method)],
        ("x", "loc", "scale"),
        (
            f"{_sign}{_LAPLACE_PDF} / np.exp(ans)",
            f"-({_sign}{_LAPLACE_PDF}) / np.exp(ans)",
            f"-({_sign}{_LAPLACE_PDF}) * {_Z} / np.exp(ans)",
        ),
        [(0.7,), (_X, 0.1), (_X, _LOCS + 0.05, _SCALES), (-1.1, 0.4, 2.5)],
        defaults=_LOC_SCALE,
    )

# --- discrete: the counts are integers, the probabilities differentiable ------------------------

bernoulli = _family(
    st.bernoulli,
    "bernoulli",
    ("k", "p", "loc"),
    ("(k - loc) / p - (1.0 - k + loc) / (1.0 - p)",),
    [(1, 0.3), (np.array([0, 1, 1, 0]), _PROBS), (np.array([[0], [1]]), _PROBS)],
    defaults={"loc": "0"},
    diff=("p",),
    pmf=True,
)
geom = _family(
    st.geom,
    "geom",
    ("k", "p", "loc"),
    ("1.0 / p - (k - loc - 1.0) / (1.0 - p)",),
    [(3, 0.3), (_K + 1, _PROBS), (np.array([[1], [4]]), _PROBS)],
    defaults={"loc": "0"},
    diff=("p",),
    pmf=True,
)
nbinom = _family(
    st.nbinom,
    "nbinom",
    ("k", "n", "p", "loc"),
    (
        "_ad.digamma(k - loc + n) - _ad.digamma(n) + np.log(p)",
        "n / p - (k - loc) / (1.0 - p)",
    ),
    [(3, 2.5, 0.4), (_K, 1.7, _PROBS), (_K, np.array([[0.8], [4.0]]), 0.35)],
    defaults={"loc": "0"},
    diff=("n", "p"),
    pmf=True,
)

# --- normal quantiles: ppf(q) = loc + scale * ndtri(q), isf(q) = loc - scale * ndtri(q) -----------

_Q_Z = "((ans - loc) / scale)"
_INV_PHI = f"(scale * np.sqrt(2.0 * np.pi) * np.exp(0.5 * {_Q_Z} ** 2))"
norm_ppf = elementwise(
    "scipy.stats.norm.ppf",
    [st.norm.ppf],
    ("q", "loc", "scale"),
    (_INV_PHI, "1.0", _Q_Z),
    [(0.3,), (_PROBS, 0.5), (_PROBS, _LOCS, _SCALES[:1]), (0.9, -0.4, 2.5)],
    sympy="norm.ppf",
    defaults=_LOC_SCALE,
)
norm_isf = elementwise(
    "scipy.stats.norm.isf",
    [st.norm.isf],
    ("q", "loc", "scale"),
    (f"-{_INV_PHI}", "1.0", _Q_Z),
    [(0.3,), (_PROBS, 0.5), (_PROBS, _LOCS, _SCALES[:1]), (0.9, -0.4, 2.5)],
    sympy="norm.isf",
    defaults=_LOC_SCALE,
)
