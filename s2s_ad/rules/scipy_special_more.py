"""More of ``scipy.special``, the functions JAX's tests differentiate: the exponential
integrals ``exp1``, ``expi``, ``expn``, the Pochhammer symbol ``poch``, the Hurwitz zeta
function ``zeta`` (in ``q``) and the confluent hypergeometric ``hyp1f1`` (in ``x``).

Their other parameters (``expn``'s order, ``zeta``'s exponent ``x``, ``hyp1f1``'s ``a``
and ``b``) have no closed-form derivative: a differentiated value passed there is refused
(``TransformError``), never given a zero gradient. Loaded with :mod:`.scipy_special`.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from . import scipy_vjps as W
from .registry import elementwise

_POS = np.array([[0.4, 1.3, 2.2], [0.7, 3.1, 1.6]])
_NONZERO = np.array([[-1.7, -0.4, 0.3], [0.8, 1.9, 3.5]])

# E1(x) = int_x^inf e^-t / t dt: E1' = -e^-x / x
exp1 = elementwise(
    "scipy.special.exp1", [sc.exp1], ("x",), ("-np.exp(-x) / x",), [(0.7,), (2.5,), (_POS,)],
    sympy="E1",
)  # fmt: skip
# Ei(x) = -PV int_-x^inf e^-t / t dt: Ei' = e^x / x
expi = elementwise(
    "scipy.special.expi", [sc.expi], ("x",), ("np.exp(x) / x",), [(0.7,), (-1.3,), (_NONZERO,)],
    sympy="Ei",
)  # fmt: skip
# E_n' = -E_{n-1}, and E_0(x) = e^-x / x, so E_0' = -E_0 (1 + 1 / x)
expn = elementwise(
    "scipy.special.expn",
    [sc.expn, W.expn],
    ("n", "x"),
    ("np.where(n > 0, -_ad.expn(np.maximum(n - 1, 0), x), -ans * (1.0 + 1.0 / x))",),
    [(1, 0.7), (2, _POS), (0, 1.9), (np.array([0, 1, 3]), np.array([0.8, 1.5, 2.5]))],
    diff=("x",),
    sympy="expint",
)
# poch(z, m) = Gamma(z + m) / Gamma(z)
poch = elementwise(
    "scipy.special.poch",
    [sc.poch],
    ("z", "m"),
    ("ans * (_ad.digamma(z + m) - _ad.digamma(z))", "ans * _ad.digamma(z + m)"),
    [(0.7, 2.5), (_POS, 1.3), (_POS, _POS[::-1])],
    sympy="poch",
)
# zeta(x, q) = sum_k (k + q)^-x: d/dq = -x zeta(x + 1, q); zeta(x) is zeta(x, 1)
zeta = elementwise(
    "scipy.special.zeta",
    [sc.zeta, W.zeta],
    ("x", "q"),
    ("-x * _ad.zeta(x + 1.0, q)",),
    [(1.5, 0.7), (2.5, _POS), (np.array([1.5, 3.0, 4.5]), np.array([0.8, 1.5, 2.5]))],
    diff=("q",),
    sympy="zeta",
)
# 1F1(a; b; x): d/dx = a / b 1F1(a + 1; b + 1; x)
hyp1f1 = elementwise(
    "scipy.special.hyp1f1",
    [sc.hyp1f1, W.hyp1f1],
    ("a", "b", "x"),
    ("a / b * _ad.hyp1f1(a + 1.0, b + 1.0, x)",),
    [(1.5, 2.5, 0.7), (0.5, 1.5, _NONZERO), (np.array([0.5, 1.0, 2.0]), 3.0, -0.8)],
    diff=("x",),
    sympy="hyp1f1",
)
