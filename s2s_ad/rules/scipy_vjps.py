"""Helpers that SciPy rule templates call as ``_ad.<name>``.

* SciPy's special functions that derivatives are written in (``digamma`` in the
  derivative of ``gammaln``...). Generated code sees only ``np`` and ``_ad``, so they are
  reached through these wrappers, which import :mod:`scipy.special` on first call:
  importing s2s_ad never imports SciPy. :mod:`.scipy_special` registers each wrapper in
  the same rule as the SciPy function it wraps, so higher derivatives follow the rule.
* The VJPs of ``scipy.special.logsumexp`` with weights ``b``: plain NumPy, differentiated
  from their source for higher derivatives (``FROM_SOURCE`` in :mod:`.generated_rules`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..runtime import is_zero, unbroadcast

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from types import ModuleType
    from typing import Any

__all__ = [
    "betaln",
    "digamma",
    "gammaln",
    "i0",
    "i1",
    "i0e",
    "i1e",
    "jv",
    "yv",
    "iv",
    "ive",
    "multidigamma",
    "ndtr",
    "polygamma",
    "lse_weights",
    "logsumexp_vjp_a",
    "lse_tangent",
    "logsumexp_vjp_b",
    "mvn_vjp",
    "mvn_jvp",
    "mvn_entropy_vjp",
    "signal_convolve",
    "signal_convolve_vjp",
    "mvn_entropy_vjp",
    "signal_convolve_vjp",
    "dirichlet_score",
    "dirichlet_dx",
    "expn",
    "zeta",
    "hyp1f1",
]
# The wrappers above are registered with SciPy's functions; these have no rule.
FROM_SOURCE = (
    "multidigamma",
    "mvn_entropy_vjp",
    "lse_weights",
    "logsumexp_vjp_a",
    "logsumexp_vjp_b",
    "lse_tangent",
    "mvn_vjp",
    "mvn_jvp",
    "dirichlet_score",
    "dirichlet_dx",
)


def _special() -> ModuleType:
    import scipy.special

    return scipy.special


def gammaln(x: Any) -> Any:
    """``scipy.special.gammaln``."""
    return _special().gammaln(x)


def digamma(x: Any) -> Any:
    """``scipy.special.digamma``."""
    return _special().digamma(x)


def polygamma(n: Any, x: Any) -> Any:
    """``scipy.special.polygamma``."""
    return _special().polygamma(n, x)


def betaln(a: Any, b: Any) -> Any:
    """``scipy.special.betaln``."""
    return _special().betaln(a, b)


def ndtr(x: Any) -> Any:
    """``scipy.special.ndtr``."""
    return _special().ndtr(x)


def i0(x: Any) -> Any:
    """``scipy.special.i0``."""
    return _special().i0(x)


def i1(x: Any) -> Any:
    """``scipy.special.i1``."""
    return _special().i1(x)


def i0e(x: Any) -> Any:
    """``scipy.special.i0e``."""
    return _special().i0e(x)


def jv(v: Any, x: Any) -> Any:
    """``scipy.special.jv``."""
    return _special().jv(v, x)


def yv(v: Any, x: Any) -> Any:
    """``scipy.special.yv``."""
    return _special().yv(v, x)


def iv(v: Any, x: Any) -> Any:
    """``scipy.special.iv``."""
    return _special().iv(v, x)


def ive(v: Any, x: Any) -> Any:
    """``scipy.special.ive``."""
    return _special().ive(v, x)


def expn(n: Any, x: Any) -> Any:
    """``scipy.special.expn``."""
    return _special().expn(n, x)


def zeta(x: Any, q: Any = None) -> Any:
    """``scipy.special.zeta``."""
    return _special().zeta(x, q)


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """``scipy.special.hyp1f1``."""
    return _special().hyp1f1(a, b, x)


def multidigamma(a: Any, d: int) -> Any:
    """The derivative of ``scipy.special.multigammaln(a, d)``: the sum of
    ``digamma(a - j / 2)`` over ``j < d``."""
    total = 0.0
    for j in range(int(d)):
        total = total + digamma(a - 0.5 * j)
    return total


def i1e(x: Any) -> Any:
    """``scipy.special.i1e``."""
    return _special().i1e(x)


# --- logsumexp ---------------------------------------------------------------------------


def lse_weights(
    a: Any, b: Any, ans: Any, axis: Any, keepdims: bool, return_sign: bool = False
) -> Any:
    """``b * exp(a - ans)`` with the reduced axes of ``ans`` restored: the weights of
    ``logsumexp(a, axis, b, keepdims)`` (``b=None`` means ones), shaped like ``a * b``.
    With ``return_sign`` (``ans`` the pair ``(value, sign)``, ``value = log|S|``) they are
    ``b * exp(a - value) * sign``, the derivative of ``log|S|`` in ``a``."""
    ndim = np.ndim(a)
    if b is not None:
        ndim = max(ndim, np.ndim(b))
    if axis is None:
        axes = tuple(range(ndim))
    elif np.ndim(axis) == 0:
        axes = (int(axis) % max(ndim, 1),)
    else:
        axes = tuple(sorted([int(ax) % max(ndim, 1) for ax in axis]))
    value = ans[0] if return_sign else ans
    res = value
    if not keepdims and axes and np.ndim(value) < ndim:
        res = np.expand_dims(value, axes)
    weights = np.exp(a - res)
    if b is not None:
        weights = weights * b
    if return_sign:
        sign = ans[1]
        if not keepdims and axes and np.ndim(sign) < ndim:
            sign = np.expand_dims(sign, axes)
        weights = weights * sign
    return weights


def _expand(g: Any, ans: Any, weights: Any, axis: Any, keepdims: bool) -> Any:
    """The cotangent ``g`` of ``logsumexp``'s output, broadcastable against its input."""
    if keepdims or axis is None or np.ndim(g) == 0:
        return g
    ndim = np.ndim(weights)
    if np.ndim(axis) == 0:
        axes = (int(axis) % max(ndim, 1),)
    else:
        axes = tuple(sorted([int(ax) % max(ndim, 1) for ax in axis]))
    return np.expand_dims(g, axes)


def _value_cotangent(g: Any, return_sign: bool) -> Any:
    """The cotangent of the value (``logsumexp``'s first output with ``return_sign``)."""
    if return_sign and not is_zero(g):
        return g[0]
    return g


def logsumexp_vjp_a(
    g: Any, a: Any, b: Any, ans: Any, axis: Any, keepdims: bool, return_sign: bool = False
) -> Any:
    """VJP of ``scipy.special.logsumexp`` in ``a``: ``g`` times the weights ``b e^(a-ans)``
    (with ``return_sign``, the sign carries no gradient)."""
    g = _value_cotangent(g, return_sign)
    if is_zero(g):
        return np.zeros(np.shape(a))
    weights = lse_weights(a, b, ans, axis, keepdims, return_sign)
    return unbroadcast(_expand(g, ans, weights, axis, keepdims) * weights, a)


def logsumexp_vjp_b(
    g: Any, a: Any, b: Any, ans: Any, axis: Any, keepdims: bool, return_sign: bool = False
) -> Any:
    """VJP of ``scipy.special.logsumexp`` in ``b``: ``g`` times ``e^(a-ans)``."""
    g = _value_cotangent(g, return_sign)
    if is_zero(g):
        return np.zeros(np.shape(b))
    weights = lse_weights(a, None, ans, axis, keepdims, return_sign) + 0.0 * b
    return unbroadcast(_expand(g, ans, weights, axis, keepdims) * weights, b)


def lse_tangent(dvalue: Any, ans: Any, return_sign: bool) -> Any:
    """The tangent of ``logsumexp``'s output given that of its value: with
    ``return_sign`` the pair ``(dvalue, 0)`` (the sign is piecewise constant)."""
    if return_sign:
        return (dvalue, np.zeros(np.shape(ans[1])))
    return dvalue


# --- multivariate normal -------------------------------------------------------------------


def _cov_matrix(cov: Any, d: int) -> Any:
    """SciPy's ``cov`` argument as a matrix: a scalar is isotropic, a vector diagonal."""
    if np.ndim(cov) == 0:
        return cov * np.eye(d)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return cov


def _cov_like(gc: Any, cov: Any) -> Any:
    """The cotangent of the matrix ``_cov_matrix(cov)`` as a cotangent of ``cov``."""
    if np.ndim(cov) == 0:
        return np.trace(gc)
    if np.ndim(cov) == 1:
        return np.diagonal(gc)
    return gc


def _mvn_parts(x: Any, mean: Any, cov: Any) -> Any:
    """``(d, c, xs, s)``: dimension, covariance matrix, samples as rows, ``c^-1 (x - mean)``."""
    if mean is not None:  # the dimension as SciPy infers it
        d = np.size(mean)
    elif np.ndim(cov) == 2:
        d = np.shape(cov)[0]
    else:
        d = 1
    c = _cov_matrix(cov, d)
    xs = np.reshape(x, (-1, d))
    r = xs
    if mean is not None:
        r = xs - mean
    s = np.swapaxes(np.linalg.solve(c, np.swapaxes(r, 0, 1)), 0, 1)
    return d, c, xs, s


def mvn_vjp(g: Any, x: Any, mean: Any, cov: Any, ans: Any, pdf: bool) -> Any:
    """VJP of ``multivariate_normal.logpdf`` (``pdf``: of ``pdf``) in ``(x, mean, cov)``.

    With ``s = cov^-1 (x - mean)`` per sample and ``w`` the cotangent (times the density
    for ``pdf``): ``x_bar = -w s``, ``mean_bar = sum w s``, and the symmetric
    ``cov_bar = (sum w s s^T - sum w cov^-1) / 2`` (SciPy reads one triangle of ``cov``);
    for a scalar or vector ``cov``, its trace or diagonal."""
    if is_zero(g):
        return (np.zeros(np.shape(x)), np.zeros(np.shape(mean)), np.zeros(np.shape(cov)))
    d, c, xs, s = _mvn_parts(x, mean, cov)
    w = g
    if pdf:
        w = g * ans
    w = np.reshape(w, (-1,))
    ws = np.expand_dims(w, -1) * s
    gx = np.reshape(-ws, np.shape(x))
    gmean = np.sum(ws, 0)
    if mean is None:
        gmean = 0.0
    elif np.ndim(mean) == 0:
        gmean = np.sum(gmean)
    gc = 0.5 * (np.swapaxes(ws, 0, 1) @ s) - 0.5 * np.sum(w) * np.linalg.inv(c)
    return (gx, gmean, _cov_like(gc, cov))


def mvn_entropy_vjp(g: Any, mean: Any, cov: Any) -> Any:
    """VJP of ``multivariate_normal.entropy(mean, cov)`` (``log det(2 pi e cov) / 2``) in
    ``cov``: ``g cov^-1 / 2`` (its trace or diagonal for a scalar or vector ``cov``)."""
    if is_zero(g):
        return np.zeros(np.shape(cov))
    if mean is not None:  # the dimension as SciPy infers it
        d = np.size(mean)
    elif np.ndim(cov) == 2:
        d = np.shape(cov)[0]
    else:
        d = 1
    return _cov_like(0.5 * g * np.linalg.inv(_cov_matrix(cov, d)), cov)


def signal_convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """``scipy.signal.convolve``."""
    import scipy.signal

    return scipy.signal.convolve(in1, in2, mode, method)


def signal_convolve_vjp(g: Any, in1: Any, in2: Any, mode: str, wrt: int) -> Any:
    """VJP of ``scipy.signal.convolve(in1, in2, mode)`` in input ``wrt`` (0 or 1): ``g``
    placed where its entries sit in the full-size output, correlated with the other
    input ('valid')."""
    import scipy.signal

    like = in2 if wrt else in1
    if is_zero(g):
        return np.zeros(np.shape(like))
    in1, in2 = np.asarray(in1, dtype=float), np.asarray(in2, dtype=float)
    full = [n + k - 1 for n, k in zip(np.shape(in1), np.shape(in2))]
    starts = []
    for n, k, size in zip(np.shape(in1), np.shape(in2), full):
        if mode == "full":
            starts.append(0)
        elif mode == "same":  # in1's size, centred in the full output
            starts.append((size - n) // 2)
        else:
            starts.append(min(n, k) - 1)
    placed = np.zeros(full)
    placed[tuple(slice(s0, s0 + m) for s0, m in zip(starts, np.shape(g)))] = g
    return scipy.signal.correlate(placed, in1 if wrt else in2, mode="valid")


def mvn_jvp(tx: Any, tm: Any, tc: Any, x: Any, mean: Any, cov: Any, ans: Any, pdf: bool) -> Any:
    """JVP of ``multivariate_normal.logpdf`` (``pdf``: of ``pdf``): per sample
    ``-s.dx + s.dmean + s^T dcov s / 2 - tr(cov^-1 dcov) / 2`` (``0.0``: not varied)."""
    d, c, xs, s = _mvn_parts(x, mean, cov)
    out = np.zeros(np.shape(xs)[0])
    if not is_zero(tx):
        out = out - np.sum(s * np.reshape(tx, (-1, d)), -1)
    if not is_zero(tm):
        out = out + np.sum(s * tm, -1)
    if not is_zero(tc):
        dc = _cov_matrix(tc, d)
        out = out + 0.5 * np.sum((s @ dc) * s, -1) - 0.5 * np.trace(np.linalg.solve(c, dc))
    out = np.reshape(out, np.shape(ans))
    if pdf:
        out = out * ans
    return out


def dirichlet_dx(x: Any, alpha: Any) -> Any:
    """The derivative of ``dirichlet.logpdf(x, alpha)`` in ``x``, per component (axis 0)
    and sample: ``(alpha - 1) / x`` -- less that of the last component when ``x`` omits
    it (SciPy completes it as ``1 - sum(x)``). On the full simplex only its part along
    the simplex counts (as for ``x / np.sum(x)``): the same for every extension of the
    density off it."""
    xs = np.asarray(x, dtype=float)
    k = np.shape(alpha)[0]
    shape = (k,) + (1,) * (np.ndim(xs) - 1)
    am1 = np.reshape(alpha, shape) - 1.0
    if np.shape(xs)[0] + 1 == k:
        last = 1.0 - np.sum(xs, 0, keepdims=True)
        return am1[:-1] / xs - am1[-1:] / last
    return am1 / xs


def dirichlet_score(x: Any, alpha: Any) -> Any:
    """The derivative of ``dirichlet.logpdf(x, alpha)`` in ``alpha``, per component (axis
    0) and sample: ``digamma(sum(alpha)) - digamma(alpha) + log(x)``. ``x`` may omit the
    last component (SciPy then completes it as ``1 - sum(x)``)."""
    xs = np.asarray(x, dtype=float)
    k = np.shape(alpha)[0]
    if np.shape(xs)[0] + 1 == k:
        xs = np.concatenate([xs, 1.0 - np.sum(xs, 0, keepdims=True)], 0)
    shape = (k,) + (1,) * (np.ndim(xs) - 1)
    base = digamma(np.sum(alpha)) - digamma(np.reshape(alpha, shape))
    return base + np.log(xs)
