"""The derivative of the regularized incomplete gamma function in its shape parameter,
reached as ``_ad.gammainc_da`` (``scipy.special.gammainc``/``gammaincc`` and the
distribution functions of ``scipy.stats.gamma`` in ``a``).

``dP/da`` has no closed form. It is summed to round-off from the two expansions SciPy's
own ``gammainc`` is built on, differentiated term by term:

* ``x <= a + 1``: the series ``P = sum_n x**(a+n) e**-x / Gamma(a+n+1)``; each term's
  derivative is the term times ``log(x) - digamma(a+n+1)``.
* ``x > a + 1``: ``Q = x**a e**-x / Gamma(a) * F`` with ``F`` the continued fraction of
  Legendre, evaluated by the modified Lentz method with the derivative in ``a`` carried
  through each step (forward mode by hand).

Both loops stop on the relative size of the last update of the value *and* of the
derivative. Beyond ``a = 10**6`` the prefactor ``x**a e**-x / Gamma(a)`` loses more than
nine digits to cancellation in its exponent (SciPy switches to Temme's uniform
expansion there): such shapes, and a loop that has not converged after ``_MAX_TERMS``
steps, raise ``TransformError`` instead of returning an inaccurate derivative.
The helper has its own rule (its derivative in ``x`` is closed-form; in ``a`` it is
refused), so it is not differentiated from source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = ["gammainc_da", "betainc_da", "betainc_db"]
FROM_SOURCE: tuple[str, ...] = ()

_EPS = 1e-17
_CF_TOL = 1e-15  # a few units in the last place: the steps' products round
_TINY = 1e-300
_MAX_TERMS = 20000
_MAX_SHAPE = 1e6
_NEGLIGIBLE = 1e-300


def _not_converged(what: str) -> TransformError:
    return TransformError(
        f"scipy.special.gammainc: the {what} for the derivative in `a` did not converge",
        hint="the series and the continued fraction need too many terms here",
    )


def _series(a: Any, x: Any) -> Any:
    """``dP/da`` from the power series (``x <= a + 1``)."""
    from scipy.special import digamma, gammaln

    log_x = np.log(x)
    term = np.exp(a * log_x - x - gammaln(a + 1.0))
    weight = log_x - digamma(a + 1.0)  # log(x) - digamma(a + n + 1)
    total = term.copy()
    deriv = term * weight
    active = np.ones(np.shape(a), dtype=bool)
    for n in range(1, _MAX_TERMS):
        term = term * x / (a + n)
        weight = weight - 1.0 / (a + n)
        total = total + term
        step = term * weight
        deriv = deriv + step
        active = (term > _EPS * total) | (np.abs(step) > _EPS * (np.abs(deriv) + total))
        # terms never grow here (x <= a + 1): below 1e-300 the rest cannot matter, and
        # subnormal terms would stop shrinking
        active = active & (term > _NEGLIGIBLE)
        if not np.any(active):
            return deriv
    raise _not_converged("series")


def _fraction(a: Any, x: Any) -> Any:
    """``dP/da = -dQ/da`` from the continued fraction (``x > a + 1``)."""
    from scipy.special import digamma, gammaln

    b = x + 1.0 - a  # > 2 here
    d = 1.0 / b
    dd = 1.0 / (b * b)  # d(1/b)/da with db/da = -1
    h = d
    dh = dd
    c = np.ones(np.shape(b))  # c_0 is infinite: the first step sets c_1 = b_1 below
    dc = np.zeros(np.shape(b))
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        dan = float(i)
        b = b + 2.0
        den = an * d + b
        dden = dan * d + an * dd - 1.0
        if i == 1:
            cc = b
            dcc = -np.ones(np.shape(b))
        else:
            cc = b + an / c
            dcc = -1.0 + dan / c - an * dc / (c * c)
        if np.any(np.abs(den) < _TINY) or np.any(np.abs(cc) < _TINY):
            raise _not_converged("continued fraction")
        d = 1.0 / den
        dd = -dden / (den * den)
        c = cc
        dc = dcc
        delta = d * c
        ddelta = dd * c + d * dc
        dh = dh * delta + h * ddelta
        h = h * delta
        done = (np.abs(delta - 1.0) <= _CF_TOL) & (
            np.abs(h * ddelta) <= _CF_TOL * (np.abs(dh) + np.abs(h))
        )
        if np.all(done):
            prefactor = np.exp(a * np.log(x) - x - gammaln(a))
            dq = prefactor * (h * (np.log(x) - digamma(a)) + dh)
            return -dq
    raise _not_converged("continued fraction")


def gammainc_da(a: Any, x: Any) -> Any:
    """``d/da`` of ``scipy.special.gammainc(a, x)`` (the regularized lower incomplete
    gamma function ``P(a, x)``), elementwise; ``0`` at ``x == 0`` and ``x == inf``, NaN
    where ``gammainc`` is NaN (``a <= 0`` apart from ``a == 0``, ``x < 0``)."""
    a_arr, x_arr = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(x, dtype=float))
    out = np.zeros(np.shape(a_arr))
    bad = ~(a_arr > 0) | ~(x_arr >= 0) | np.isnan(a_arr) | np.isnan(x_arr)
    edge = (x_arr == 0) | np.isinf(x_arr)
    use = ~bad & ~edge
    if np.any(use & (a_arr > _MAX_SHAPE)):
        raise TransformError(
            "scipy.special.gammainc: derivative in `a` for a shape above 1e6",
            hint="the series would lose more than nine digits there",
        )
    low = use & (x_arr <= a_arr + 1.0)
    high = use & (x_arr > a_arr + 1.0)
    if np.any(low):
        out[low] = _series(a_arr[low], x_arr[low])
    if np.any(high):
        out[high] = _fraction(a_arr[high], x_arr[high])
    out[bad] = np.nan
    return out if np.ndim(out) else float(out)


def _beta_fraction(a: Any, b: Any, x: Any) -> Any:
    """``(h, dh/da, dh/db)`` for the continued fraction of ``I_x(a, b) = x**a (1-x)**b /
    (a B(a, b)) * h`` (modified Lentz, ``x < (a + 1) / (a + b + 2)``), the derivatives
    carried through each step."""
    d0 = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / d0
    dd = [(x / (a + 1.0) - (a + b) * x / (a + 1.0) ** 2) / d0**2, x / (a + 1.0) / d0**2]
    c = np.ones(np.shape(d))
    dc = [np.zeros(np.shape(d)), np.zeros(np.shape(d))]
    h = d
    dh = [dd[0], dd[1]]
    for m in range(1, _MAX_TERMS):
        even = m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m))
        d_even = [
            -even * (1.0 / (a - 1.0 + 2 * m) + 1.0 / (a + 2 * m)),
            m * x / ((a - 1.0 + 2 * m) * (a + 2 * m)),
        ]
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m))
        d_odd = [
            odd * (1.0 / (a + m) + 1.0 / (a + b + m) - 1.0 / (a + 2 * m) - 1.0 / (a + 1.0 + 2 * m)),
            odd / (a + b + m),
        ]
        for coef, dcoef in ((even, d_even), (odd, d_odd)):
            den = 1.0 + coef * d
            cc = 1.0 + coef / c
            if np.any(np.abs(den) < _TINY) or np.any(np.abs(cc) < _TINY):
                raise _not_converged("continued fraction")
            dd = [-(dcoef[k] * d + coef * dd[k]) / (den * den) for k in range(2)]
            dc = [dcoef[k] / c - coef * dc[k] / (c * c) for k in range(2)]
            d = 1.0 / den
            c = cc
            delta = d * c
            ddelta = [dd[k] * c + d * dc[k] for k in range(2)]
            dh = [dh[k] * delta + h * ddelta[k] for k in range(2)]
            h = h * delta
        scale = np.abs(h) + np.abs(dh[0]) + np.abs(dh[1])
        done = (
            (np.abs(delta - 1.0) <= _CF_TOL)
            & (np.abs(h * ddelta[0]) <= _CF_TOL * scale)
            & (np.abs(h * ddelta[1]) <= _CF_TOL * scale)
        )
        if np.all(done):
            return h, dh[0], dh[1]
    raise _not_converged("continued fraction")


def _betainc_grad(a: Any, b: Any, x: Any) -> Any:
    """``(dI/da, dI/db)`` of ``I_x(a, b)`` for ``0 < x < (a + 1) / (a + b + 2)``."""
    from scipy.special import betaln, digamma

    h, dh_da, dh_db = _beta_fraction(a, b, x)
    front = np.exp(a * np.log(x) + b * np.log1p(-x) - betaln(a, b)) / a
    both = digamma(a + b)
    da = front * (h * (np.log(x) - digamma(a) + both - 1.0 / a) + dh_da)
    db = front * (h * (np.log1p(-x) - digamma(b) + both) + dh_db)
    return da, db


def _betainc_shape_grads(a: Any, b: Any, x: Any) -> Any:
    """``(dI/da, dI/db)`` of ``scipy.special.betainc(a, b, x)`` elementwise, using
    ``I_x(a, b) = 1 - I_{1-x}(b, a)`` above ``(a + 1) / (a + b + 2)``."""
    a_arr, b_arr, x_arr = np.broadcast_arrays(
        np.asarray(a, dtype=float), np.asarray(b, dtype=float), np.asarray(x, dtype=float)
    )
    da = np.zeros(np.shape(a_arr))
    db = np.zeros(np.shape(a_arr))
    bad = ~(a_arr > 0) | ~(b_arr > 0) | ~(x_arr >= 0) | ~(x_arr <= 1)
    use = ~bad & (x_arr > 0) & (x_arr < 1)
    if np.any(use & (np.maximum(a_arr, b_arr) > _MAX_SHAPE)):
        raise TransformError(
            "scipy.special.betainc: derivative in `a` or `b` for a shape above 1e6",
            hint="the continued fraction would lose more than nine digits there",
        )
    low = use & (x_arr < (a_arr + 1.0) / (a_arr + b_arr + 2.0))
    high = use & ~low
    if np.any(low):
        da[low], db[low] = _betainc_grad(a_arr[low], b_arr[low], x_arr[low])
    if np.any(high):
        db_high, da_high = _betainc_grad(b_arr[high], a_arr[high], 1.0 - x_arr[high])
        da[high] = -da_high
        db[high] = -db_high
    da[bad] = np.nan
    db[bad] = np.nan
    return da, db


def betainc_da(a: Any, b: Any, x: Any) -> Any:
    """``d/da`` of ``scipy.special.betainc(a, b, x)`` (``0`` at ``x`` = 0 or 1)."""
    out = _betainc_shape_grads(a, b, x)[0]
    return out if np.ndim(out) else float(out)


def betainc_db(a: Any, b: Any, x: Any) -> Any:
    """``d/db`` of ``scipy.special.betainc(a, b, x)`` (``0`` at ``x`` = 0 or 1)."""
    out = _betainc_shape_grads(a, b, x)[1]
    return out if np.ndim(out) else float(out)
