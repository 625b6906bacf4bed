"""Helpers of the decomposition rules (:mod:`.linalg`, :mod:`.scipy_linalg`), as ``_ad.<name>``.

Plain NumPy on stacks of matrices (the last two axes), written so that the transformer can
differentiate them again from their source for higher derivatives (``FROM_SOURCE``): no
comprehensions, no ``try``. Each takes the cotangent ``g`` (or tangent ``t``) first; ``g``
may be the symbolic zero ``0.0``, and a tuple cotangent (for ``eigh``, ``svd``, ``qr``,
``slogdet``) may hold zero arrays. Tangents of those outputs are plain tuples.

Degenerate cases follow JAX: eigenvector and singular-vector gradients divide by the gaps
between eigenvalues (singular values), so they are infinite or NaN where two coincide,
unless the cotangent of the vectors is zero (then those terms are skipped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import is_zero
from .registry import nondiff
from .vjps import norm_vjp  # (vjps imports this module at its end: norm_vjp is defined)

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "cholesky_vjp",
    "cholesky_jvp",
    "eigh_vjp",
    "eigh_jvp",
    "svd_vjp",
    "svd_jvp",
    "qr_vjp",
    "qr_jvp",
    "slogdet_vjp",
    "pinv_vjp",
    "pinv_jvp",
    "lstsq_vjp_a",
    "lstsq_vjp_b",
    "lstsq_jvp",
    "matrix_power_vjp",
    "matrix_power_jvp",
    # scipy.linalg
    "sl_solve_vjp_a",
    "sl_solve_vjp_b",
    "sl_solve_jvp_a",
    "sl_solve_jvp_b",
    "cho_factor_vjp",
    "cho_factor_jvp",
    "cho_solve_vjp_c",
    "cho_solve_vjp_b",
    "cho_solve_jvp_c",
    "cho_solve_jvp_b",
    "triangular_vjp_a",
    "triangular_vjp_b",
    "triangular_jvp_a",
    "triangular_jvp_b",
    "lu_factor_vjp",
    "lu_factor_jvp",
    "lu_solve_vjp_lu",
    "lu_solve_vjp_b",
    "lu_solve_jvp_lu",
    "lu_solve_jvp_b",
    "vector_norm_vjp",
    "multi_dot_vjp",
    "multi_dot_jvp",
]
FROM_SOURCE = tuple(__all__)


def _mT(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _sym(x: Any) -> Any:
    return 0.5 * (x + _mT(x))


def _phi(x: Any) -> Any:
    """The lower triangle of ``x`` with its diagonal halved."""
    return np.tril(x) - 0.5 * x * np.eye(np.shape(x)[-1])


def _gaps(w: Any) -> Any:
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, ``0`` on it (stacks: last axis)."""
    n = np.shape(w)[-1]
    diff = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    eye = np.eye(n)
    return (1.0 - eye) / (diff + eye)


# --- Cholesky ----------------------------------------------------------------------------


def cholesky_vjp(g: Any, L: Any, upper: bool = False) -> Any:
    """VJP of ``A = L L^T`` (``L = ans``; ``upper``: ``ans`` is ``U = L^T``).

    Returns the symmetric gradient ``sym(L^-T phi(L^T g) L^-1)``: ``cholesky`` reads one
    triangle of ``A``, and this is the gradient for symmetric perturbations (as JAX)."""
    if is_zero(g):
        return np.zeros(np.shape(L))
    if upper:
        L = _mT(L)
        g = _mT(g)
    P = _phi(_mT(L) @ g)
    S = _mT(np.linalg.solve(_mT(L), _mT(np.linalg.solve(_mT(L), P))))
    return _sym(S)


def cholesky_jvp(t: Any, L: Any, upper: bool = False) -> Any:
    """JVP of ``A = L L^T``: ``dL = L phi(L^-1 dA L^-T)`` (``dA`` symmetric)."""
    if is_zero(t):
        return np.zeros(np.shape(L))
    if upper:
        L = _mT(L)
    X = np.linalg.solve(L, t)
    Y = _mT(np.linalg.solve(L, _mT(X)))
    dL = L @ _phi(Y)
    if upper:
        return _mT(dL)
    return dL


# --- symmetric eigendecomposition ----------------------------------------------------------


def eigh_vjp(g: Any, a: Any, ans: Any) -> Any:
    """VJP of ``w, v = eigh(a)``: ``sym(v (diag(gw) + F * (v^T gv)) v^T)``.

    ``F[i, j] = 1 / (w[j] - w[i])``: with repeated eigenvalues the eigenvectors are not
    unique and their gradient is infinite (as in JAX); eigenvalue gradients are always
    defined. The gradient is the symmetric one (``eigh`` reads one triangle)."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    w, v = ans
    gw, gv = g
    inner = np.zeros(np.shape(a))
    if not is_zero(gw):
        inner = inner + np.expand_dims(gw, -2) * np.eye(np.shape(w)[-1])
    if not is_zero(gv) and np.any(gv != 0):
        inner = inner + _gaps(w) * (_mT(v) @ gv)
    return _sym(v @ inner @ _mT(v))


def eigh_jvp(t: Any, a: Any, ans: Any) -> Any:
    """JVP of ``w, v = eigh(a)``: ``dw = diag(v^T da v)``, ``dv = v (F * (v^T da v))``."""
    w, v = ans
    if is_zero(t):
        return (np.zeros(np.shape(w)), np.zeros(np.shape(v)))
    inner = _mT(v) @ t @ v
    dw = np.diagonal(inner, 0, -2, -1)
    dv = v @ (_gaps(w) * inner)
    return (dw, dv)


# --- singular value decomposition ----------------------------------------------------------


def _check_svd(reduced: bool, extra: bool, forward: bool) -> None:
    """Refuse gradients through the extra singular vectors of ``full_matrices=True``."""
    if reduced:
        return
    if forward:
        raise TransformError(
            "forward mode through np.linalg.svd(full_matrices=True) of a non-square matrix",
            hint="pass full_matrices=False: the extra singular vectors are not unique",
        )
    if extra:
        raise TransformError(
            "the extra singular vectors of np.linalg.svd(full_matrices=True) of a non-square "
            "matrix",
            hint="pass full_matrices=False: the extra singular vectors are not unique",
        )


def _svd_parts(g: Any, a: Any, ans: Any, compute_uv: bool) -> Any:
    """``(u, s, vh, gu, gs, gvh)``: the reduced SVD of ``a`` and the cotangents of its parts.

    With ``full_matrices=True`` the extra singular vectors of a non-square matrix are not
    unique: their cotangent must be zero (they are unused), else ``TransformError``."""
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u, s, vh, 0.0, g, 0.0
    u, s, vh = ans
    k = np.shape(s)[-1]
    gu = 0.0
    gs = 0.0
    gvh = 0.0
    if not is_zero(g):
        gu, gs, gvh = g
    reduced = np.shape(u)[-1] == k and np.shape(vh)[-2] == k
    if not reduced:
        extra_u = not is_zero(gu) and np.any(gu[..., k:] != 0)
        extra_v = not is_zero(gvh) and np.any(gvh[..., k:, :] != 0)
        _check_svd(reduced, extra_u or extra_v, False)
        u = u[..., :k]
        vh = vh[..., :k, :]
        if not is_zero(gu):
            gu = gu[..., :k]
        if not is_zero(gvh):
            gvh = gvh[..., :k, :]
    return u, s, vh, gu, gs, gvh


def svd_vjp(g: Any, a: Any, ans: Any, compute_uv: bool = True) -> Any:
    """VJP of ``u, s, vh = svd(a, full_matrices=False)`` (or of ``s`` alone).

    Townsend's formula (real case): with ``F[i, j] = 1 / (s[j]^2 - s[i]^2)``,
    ``A_bar = U [(F * (U^T gU - gU^T U)) S + diag(gs) + S (F * (V^T gV - gV^T V))] V^T``
    plus the projections of ``gU`` and ``gV`` off the span of ``U`` and ``V`` (divided by
    ``s``). Singular vectors are defined up to sign (and rotation for repeated values):
    only functions invariant to that have a gradient, infinite where values repeat or,
    for non-square ``a``, where one is zero."""
    u, s, vh, gu, gs, gvh = _svd_parts(g, a, ans, compute_uv)
    v = _mT(vh)
    eye_k = np.eye(np.shape(s)[-1])
    inner = np.zeros(np.shape(s)[:-1] + (np.shape(s)[-1], np.shape(s)[-1]))
    if not is_zero(gs):
        inner = inner + np.expand_dims(gs, -2) * eye_k
    s_row = np.expand_dims(s, -2)
    f = _gaps(s * s)
    out = np.zeros(np.shape(a))
    if not is_zero(gu) and np.any(gu != 0):
        ut_gu = _mT(u) @ gu
        inner = inner + (f * (ut_gu - _mT(ut_gu))) * s_row
        m = np.shape(a)[-2]
        if m > np.shape(s)[-1]:
            proj = gu - u @ ut_gu
            out = out + (proj / s_row) @ vh
    if not is_zero(gvh) and np.any(gvh != 0):
        gv = _mT(gvh)
        vt_gv = vh @ gv
        inner = inner + _mT(s_row) * (f * (vt_gv - _mT(vt_gv)))
        n = np.shape(a)[-1]
        if n > np.shape(s)[-1]:
            proj = gv - v @ vt_gv
            out = out + u @ _mT(proj / s_row)
    return out + u @ inner @ vh


def svd_jvp(t: Any, a: Any, ans: Any, compute_uv: bool = True) -> Any:
    """JVP of ``svd(a, full_matrices=False)``: ``ds = diag(U^T da V)`` and, for the vectors,
    ``dU = U (F * (dP S + S dP^T)) + (I - U U^T) da V / s`` (``dP = U^T da V``), ``dV``
    likewise; returned in the structure of ``ans``."""
    if compute_uv:
        u, s, vh = ans
        k = np.shape(s)[-1]
        _check_svd(np.shape(u)[-1] == k and np.shape(vh)[-2] == k, True, True)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    if is_zero(t):
        t = np.zeros(np.shape(a))
    v = _mT(vh)
    dp = _mT(u) @ t @ v
    ds = np.diagonal(dp, 0, -2, -1)
    if not compute_uv:
        return ds
    s_row = np.expand_dims(s, -2)
    f = _gaps(s * s)
    dp_s = dp * s_row
    s_dp = _mT(s_row) * dp
    du = u @ (f * (dp_s + _mT(dp_s)))
    dv = v @ (f * (s_dp + _mT(s_dp)))
    k = np.shape(s)[-1]
    if np.shape(a)[-2] > k:
        tv = t @ v
        du = du + (tv - u @ (_mT(u) @ tv)) / s_row
    if np.shape(a)[-1] > k:
        tu = _mT(t) @ u
        dv = dv + (tu - v @ (vh @ tu)) / s_row
    return (du, ds, _mT(dv))


# --- QR ----------------------------------------------------------------------------------


def _qr_check(a: Any, q: Any, mode: str) -> None:
    """Refuse ``qr`` of a wide matrix, ``mode='complete'`` of a tall one (the extra
    columns of ``q`` are not unique) and ``mode='raw'``."""
    if mode == "raw":
        raise TransformError(
            "np.linalg.qr(..., mode='raw')",
            hint="differentiate mode='reduced' (or 'r') and use q and r",
        )
    if np.shape(a)[-2] < np.shape(a)[-1] or np.shape(q)[-1] != np.shape(a)[-1]:
        raise TransformError(
            "np.linalg.qr of a wide matrix or with mode='complete'",
            hint="differentiate mode='reduced' of a matrix with at least as many rows as columns",
        )


def _qr_parts(a: Any, ans: Any, mode: str) -> Any:
    """``(q, r)`` of ``ans = qr(a, mode)`` (``mode='r'`` returns ``r`` only)."""
    if mode == "r":
        return (np.linalg.qr(a)[0], ans)
    return ans


def qr_vjp(g: Any, a: Any, ans: Any, mode: str = "reduced") -> Any:
    """VJP of ``q, r = qr(a)`` (reduced, ``m >= n``, full rank): with
    ``M = R gR^T - gQ^T Q``, ``A_bar = (gQ + Q copyltu(M)) R^-T`` where ``copyltu`` mirrors
    the lower triangle of ``M`` onto the upper one. ``mode='r'`` (``ans`` is ``r``) reads
    ``gQ = 0``."""
    q, r = _qr_parts(a, ans, mode)
    _qr_check(a, q, mode)
    if is_zero(g):
        return np.zeros(np.shape(a))
    gq, gr = (0.0, g) if mode == "r" else g
    if is_zero(gr):
        gr = np.zeros(np.shape(r))
    m = r @ _mT(gr)
    if not is_zero(gq):  # no dense zeros for gQ: mode='r' has none
        m = m - _mT(gq) @ q
    low = np.tril(m, -1)
    copyltu = low + _mT(low) + m * np.eye(np.shape(m)[-1])
    b = q @ copyltu
    if not is_zero(gq):
        b = gq + b
    return _mT(np.linalg.solve(r, _mT(b)))


def qr_jvp(t: Any, a: Any, ans: Any, mode: str = "reduced") -> Any:
    """JVP of ``q, r = qr(a)``: with ``X = Q^T da R^-1`` and ``O = tril(X, -1) - tril(X, -1)^T``,
    ``dQ = Q (O - X) + da R^-1`` and ``dR = (X - O) R`` (only ``dR`` for ``mode='r'``)."""
    q, r = _qr_parts(a, ans, mode)
    _qr_check(a, q, mode)
    if is_zero(t):
        zeros = (np.zeros(np.shape(q)), np.zeros(np.shape(r)))
        return zeros[1] if mode == "r" else zeros
    t_rinv = _mT(np.linalg.solve(_mT(r), _mT(t)))
    x = _mT(q) @ t_rinv
    low = np.tril(x, -1)
    o = low - _mT(low)
    if mode == "r":
        return (x - o) @ r
    return (q @ (o - x) + t_rinv, (x - o) @ r)


# --- slogdet, pinv, lstsq, matrix_power ----------------------------------------------------


def slogdet_vjp(g: Any, a: Any) -> Any:
    """VJP of ``sign, logabsdet = slogdet(a)``: ``g_logabsdet * a^-T`` (the sign is constant)."""
    if is_zero(g) or is_zero(g[1]):
        return np.zeros(np.shape(a))
    return np.expand_dims(g[1], (-2, -1)) * _mT(np.linalg.inv(a))


def pinv_vjp(g: Any, a: Any, ans: Any) -> Any:
    """VJP of ``p = pinv(a)`` (constant rank), the transpose of :func:`pinv_jvp`:
    ``-p^T g p^T + (I - a p) g^T p p^T + p^T p g^T (I - p a)``."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    p = ans
    eye_m = np.eye(np.shape(a)[-2])
    eye_n = np.eye(np.shape(a)[-1])
    term1 = -_mT(p) @ g @ _mT(p)
    term2 = (eye_m - a @ p) @ _mT(g) @ p @ _mT(p)
    term3 = _mT(p) @ p @ _mT(g) @ (eye_n - p @ a)
    return term1 + term2 + term3


def pinv_jvp(t: Any, a: Any, ans: Any) -> Any:
    """JVP of ``p = pinv(a)`` (constant rank):
    ``dp = -p da p + p p^T da^T (I - a p) + (I - p a) da^T p^T p``."""
    if is_zero(t):
        return np.zeros(np.shape(ans))
    p = ans
    eye_m = np.eye(np.shape(a)[-2])
    eye_n = np.eye(np.shape(a)[-1])
    term1 = -p @ t @ p
    term2 = p @ _mT(p) @ _mT(t) @ (eye_m - a @ p)
    term3 = (eye_n - p @ a) @ _mT(t) @ _mT(p) @ p
    return term1 + term2 + term3


def _lstsq_grads(g: Any) -> Any:
    """``(gx, gres, gs)``: the cotangents of the solution, residuals and singular values."""
    if is_zero(g):
        return 0.0, 0.0, 0.0
    return g[0], g[1], g[3]


def lstsq_vjp_a(g: Any, a: Any, b: Any, ans: Any) -> Any:
    """VJP of ``x, res, rank, s = lstsq(a, b)`` in ``a`` (full column rank): ``x = pinv(a) b``,
    ``res = |b - a x|^2`` (whose gradient in ``x`` vanishes at the optimum) and ``s`` the
    singular values of ``a``."""
    gx, gres, gs = _lstsq_grads(g)
    out = np.zeros(np.shape(a))
    if not is_zero(gs):
        out = out + svd_vjp(gs, a, ans[3], False)
    x = ans[0]
    x2 = x[:, None] if np.ndim(x) == 1 else x
    b2 = b[:, None] if np.ndim(b) == 1 else b
    if not is_zero(gx):
        gx2 = gx[:, None] if np.ndim(gx) == 1 else gx
        p = np.linalg.pinv(a)
        out = out + pinv_vjp(gx2 @ _mT(b2), a, p)
    if not is_zero(gres) and np.size(ans[1]) > 0:
        resid = b2 - a @ x2
        out = out - 2.0 * (resid * gres) @ _mT(x2)
    return out


def lstsq_vjp_b(g: Any, a: Any, b: Any, ans: Any) -> Any:
    """VJP of ``lstsq(a, b)`` in ``b``: ``pinv(a)^T gx + 2 (b - a x) gres``."""
    gx, gres, _ = _lstsq_grads(g)
    out = np.zeros(np.shape(b))
    if not is_zero(gx):
        out = out + _mT(np.linalg.pinv(a)) @ gx
    if not is_zero(gres) and np.size(ans[1]) > 0:
        resid = b - a @ ans[0]
        if np.ndim(b) == 1:
            out = out + 2.0 * resid * gres[0]
        else:
            out = out + 2.0 * resid * gres
    return out


def lstsq_jvp(ta: Any, tb: Any, a: Any, b: Any, ans: Any) -> Any:
    """JVP of ``lstsq(a, b)``: ``dx = dpinv(a) b + pinv(a) db`` and
    ``dres = 2 sum((b - a x) (db - da x))`` (``ta``/``tb``: ``0.0`` when not varied)."""
    x = ans[0]
    p = np.linalg.pinv(a)
    dx = np.zeros(np.shape(x))
    resid = b - a @ x
    dres_cols = np.zeros(np.shape(resid))
    if not is_zero(ta):
        dx = dx + pinv_jvp(ta, a, p) @ b
        dres_cols = dres_cols - ta @ x
    if not is_zero(tb):
        dx = dx + p @ tb
        dres_cols = dres_cols + tb
    dres = np.zeros(np.shape(ans[1]))
    if np.size(ans[1]) > 0:
        dres = dres + np.reshape(2.0 * np.sum(resid * dres_cols, 0), np.shape(ans[1]))
    ds = np.zeros(np.shape(ans[3]))
    if not is_zero(ta):
        ds = ds + svd_jvp(ta, a, ans[3], False)
    return (dx, dres, 0.0, ds)


def matrix_power_vjp(g: Any, a: Any, n: int) -> Any:
    """VJP of ``a^n``: ``sum_k (a^T)^k g (a^T)^(n-1-k)``; negative ``n`` through ``inv(a)``."""
    if is_zero(g) or n == 0:
        return np.zeros(np.shape(a))
    if n < 0:
        b = np.linalg.inv(a)
        gb = matrix_power_vjp(g, b, -n)
        return -_mT(b) @ gb @ _mT(b)
    at = _mT(a)
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1]), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ at)
    out = np.zeros(np.shape(a))
    for k in range(n):
        out = out + powers[k] @ g @ powers[n - 1 - k]
    return out


def matrix_power_jvp(t: Any, a: Any, n: int) -> Any:
    """JVP of ``a^n``: ``sum_k a^k t a^(n-1-k)``; negative ``n`` through ``inv(a)``."""
    if is_zero(t) or n == 0:
        return np.zeros(np.shape(a))
    if n < 0:
        b = np.linalg.inv(a)
        return matrix_power_jvp(-b @ t @ b, b, -n)
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1]), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    out = np.zeros(np.shape(a))
    for k in range(n):
        out = out + powers[k] @ t @ powers[n - 1 - k]
    return out


# --- scipy.linalg (plain NumPy: no SciPy needed to run the derivatives) --------------------


def _col(x: Any, vector: bool) -> Any:
    if vector:
        return np.expand_dims(x, -1)
    return x


def _uncol(x: Any, vector: bool) -> Any:
    if vector:
        return x[..., 0]
    return x


def sl_solve_vjp_a(g: Any, a: Any, b: Any, ans: Any, transposed: bool) -> Any:
    """VJP of ``x = scipy.linalg.solve(a, b, transposed=...)`` in ``a``: ``-lam x^T`` with
    ``lam = op(a)^-T g`` (transposed back when ``op(a) = a^T``)."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    vector = np.ndim(b) == 1
    op = _mT(a) if transposed else a
    lam = np.linalg.solve(_mT(op), _col(g, vector))
    grad = -lam @ _mT(_col(ans, vector))
    if transposed:
        return _mT(grad)
    return grad


def sl_solve_vjp_b(g: Any, a: Any, b: Any, transposed: bool) -> Any:
    """VJP of ``scipy.linalg.solve`` in ``b``: ``op(a)^-T g``."""
    if is_zero(g):
        return np.zeros(np.shape(b))
    vector = np.ndim(b) == 1
    op = _mT(a) if transposed else a
    return _uncol(np.linalg.solve(_mT(op), _col(g, vector)), vector)


def sl_solve_jvp_a(t: Any, a: Any, b: Any, ans: Any, transposed: bool) -> Any:
    """JVP of ``scipy.linalg.solve`` in ``a``: ``-op(a)^-1 op(t) x``."""
    vector = np.ndim(b) == 1
    op = _mT(a) if transposed else a
    top = _mT(t) if transposed else t
    return _uncol(-np.linalg.solve(op, top @ _col(ans, vector)), vector)


def sl_solve_jvp_b(t: Any, a: Any, b: Any, transposed: bool) -> Any:
    """JVP of ``scipy.linalg.solve`` in ``b``: ``op(a)^-1 t``."""
    vector = np.ndim(b) == 1
    op = _mT(a) if transposed else a
    return _uncol(np.linalg.solve(op, _col(t, vector)), vector)


def _triangle(x: Any, lower: bool, unit: bool = False) -> Any:
    """The lower or upper triangle of ``x`` (without the diagonal when ``unit``)."""
    if lower:
        return np.tril(x, -1 if unit else 0)
    return np.triu(x, 1 if unit else 0)


def cho_factor_vjp(g: Any, a: Any, ans: Any) -> Any:
    """VJP of ``(c, lower) = cho_factor(a)``: the Cholesky VJP of ``c``'s triangle, plus
    the other triangle's cotangent unchanged (SciPy leaves ``a``'s entries there)."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    c, lower = ans
    gc = g[0]
    if is_zero(gc):
        return np.zeros(np.shape(a))
    tri = _triangle(gc, lower)
    return cholesky_vjp(tri, _triangle(c, lower), not lower) + (gc - tri)


def cho_factor_jvp(t: Any, a: Any, ans: Any) -> Any:
    """JVP of ``cho_factor``: the Cholesky JVP in ``c``'s triangle, ``t`` in the other."""
    c, lower = ans
    if is_zero(t):
        return (np.zeros(np.shape(c)), 0.0)
    tri = _triangle(cholesky_jvp(t, _triangle(c, lower), not lower), lower)
    return (tri + t - _triangle(t, lower), 0.0)


def _cho_matrix(c_and_lower: Any) -> Any:
    """``(a, factor, lower)``: the matrix ``L L^T`` (or ``U^T U``) of a ``cho_factor`` result."""
    c, lower = c_and_lower
    f = _triangle(c, lower)
    if lower:
        return f @ _mT(f), f, lower
    return _mT(f) @ f, f, lower


def cho_solve_vjp_b(g: Any, c_and_lower: Any, b: Any) -> Any:
    """VJP of ``x = cho_solve((c, lower), b)`` in ``b``: ``a^-1 g`` (``a`` symmetric)."""
    if is_zero(g):
        return np.zeros(np.shape(b))
    a, f, lower = _cho_matrix(c_and_lower)
    return sl_solve_vjp_b(g, a, b, False)


def cho_solve_vjp_c(g: Any, c_and_lower: Any, b: Any, ans: Any) -> Any:
    """VJP of ``cho_solve`` in ``(c, lower)``: with ``a_bar = -a^-1 g x^T``, the factor's
    cotangent is ``tril((a_bar + a_bar^T) L)`` (``triu(U (a_bar + a_bar^T))`` for upper);
    returned as ``(c_bar, 0.0)``."""
    c = c_and_lower[0]
    if is_zero(g):
        return (np.zeros(np.shape(c)), 0.0)
    a, f, lower = _cho_matrix(c_and_lower)
    abar = sl_solve_vjp_a(g, a, b, ans, False)
    both = abar + _mT(abar)
    if lower:
        return (np.tril(both @ f), 0.0)
    return (np.triu(f @ both), 0.0)


def cho_solve_jvp_b(t: Any, c_and_lower: Any, b: Any) -> Any:
    """JVP of ``cho_solve`` in ``b``: ``a^-1 t``."""
    a, f, lower = _cho_matrix(c_and_lower)
    return sl_solve_jvp_b(t, a, b, False)


def cho_solve_jvp_c(t: Any, c_and_lower: Any, b: Any, ans: Any) -> Any:
    """JVP of ``cho_solve`` in ``(c, lower)``: ``-a^-1 da x`` with ``da = dL L^T + L dL^T``
    (``dL`` the factor's triangle of the tangent ``t[0]``)."""
    a, f, lower = _cho_matrix(c_and_lower)
    if is_zero(t) or is_zero(t[0]):
        return np.zeros(np.shape(ans))
    df = _triangle(t[0], lower)
    if lower:
        da = df @ _mT(f) + f @ _mT(df)
    else:
        da = _mT(df) @ f + _mT(f) @ df
    return sl_solve_jvp_a(da, a, b, ans, False)


def _tri_op(a: Any, trans: Any, lower: bool, unit: bool) -> Any:
    """``(op(A), transposed)`` for ``solve_triangular``: ``A`` is ``a``'s triangle (unit
    diagonal when ``unit``), transposed for ``trans`` in ``1, 'T', 2, 'C'``."""
    m = _triangle(a, lower, unit)
    if unit:
        m = m + np.eye(np.shape(a)[-1])
    transposed = trans in (1, 2, "T", "C")
    return m, transposed


def triangular_vjp_a(
    g: Any, a: Any, b: Any, ans: Any, trans: Any, lower: bool, unit_diagonal: bool
) -> Any:
    """VJP of ``x = solve_triangular(a, b, trans, lower, unit_diagonal)`` in ``a``: the solve
    VJP restricted to the triangle the solver reads."""
    if is_zero(g):
        return np.zeros(np.shape(a))
    m, transposed = _tri_op(a, trans, lower, unit_diagonal)
    return _triangle(sl_solve_vjp_a(g, m, b, ans, transposed), lower, unit_diagonal)


def triangular_vjp_b(g: Any, a: Any, b: Any, trans: Any, lower: bool, unit_diagonal: bool) -> Any:
    """VJP of ``solve_triangular`` in ``b``: ``op(A)^-T g``."""
    m, transposed = _tri_op(a, trans, lower, unit_diagonal)
    return sl_solve_vjp_b(g, m, b, transposed)


def triangular_jvp_a(
    t: Any, a: Any, b: Any, ans: Any, trans: Any, lower: bool, unit_diagonal: bool
) -> Any:
    """JVP of ``solve_triangular`` in ``a``: ``-op(A)^-1 op(dA) x`` (``dA`` the triangle)."""
    m, transposed = _tri_op(a, trans, lower, unit_diagonal)
    return sl_solve_jvp_a(_triangle(t, lower, unit_diagonal), m, b, ans, transposed)


def triangular_jvp_b(t: Any, a: Any, b: Any, trans: Any, lower: bool, unit_diagonal: bool) -> Any:
    """JVP of ``solve_triangular`` in ``b``: ``op(A)^-1 t``."""
    m, transposed = _tri_op(a, trans, lower, unit_diagonal)
    return sl_solve_jvp_b(t, m, b, transposed)


def _lu_perm(piv: Any) -> Any:
    """The row order ``perm`` of LAPACK pivots: ``a[perm] = L U``."""
    perm = list(range(len(piv)))
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return np.array(perm)


def _lu_parts(lu: Any, piv: Any) -> Any:
    """``(L, U, perm, inverse)`` of a ``lu_factor`` result (``a[perm] = L U``)."""
    n = np.shape(lu)[-1]
    low = np.tril(lu, -1) + np.eye(n)
    up = np.triu(lu)
    perm = _lu_perm(piv)
    return low, up, perm, np.argsort(perm)


def lu_factor_vjp(g: Any, a: Any, ans: Any) -> Any:
    """VJP of ``lu, piv = lu_factor(a)`` (``a[perm] = L U``, ``L`` unit lower): with
    ``X_bar = tril(L^T L_bar, -1) + triu(U_bar U^T)``, ``a_bar[perm] = L^-T X_bar U^-T``."""
    if is_zero(g) or is_zero(g[0]):
        return np.zeros(np.shape(a))
    lu, piv = ans
    low, up, perm, inverse = _lu_parts(lu, piv)
    glu = g[0]
    xbar = np.tril(_mT(low) @ glu, -1) + np.triu(glu @ _mT(up))
    y = _mT(np.linalg.solve(up, _mT(np.linalg.solve(_mT(low), xbar))))
    return y[inverse]


def lu_factor_jvp(t: Any, a: Any, ans: Any) -> Any:
    """JVP of ``lu_factor``: with ``X = L^-1 da[perm] U^-1``, ``dL = L tril(X, -1)`` and
    ``dU = triu(X) U``, packed like ``lu`` (the pivots do not change)."""
    lu, piv = ans
    if is_zero(t):
        return (np.zeros(np.shape(lu)), np.zeros(np.shape(piv)))
    low, up, perm, inverse = _lu_parts(lu, piv)
    x = _mT(np.linalg.solve(_mT(up), _mT(np.linalg.solve(low, t[perm]))))
    dlow = low @ np.tril(x, -1)
    dup = np.triu(x) @ up
    return (np.tril(dlow, -1) + dup, np.zeros(np.shape(piv)))


def _lu_matrix(lu_and_piv: Any) -> Any:
    """``(a, L, U, perm, inverse)``: the matrix a ``lu_factor`` result factors."""
    lu, piv = lu_and_piv
    low, up, perm, inverse = _lu_parts(lu, piv)
    return (low @ up)[inverse], low, up, perm, inverse


def lu_solve_vjp_b(g: Any, lu_and_piv: Any, b: Any, trans: Any) -> Any:
    """VJP of ``x = lu_solve((lu, piv), b, trans)`` in ``b``: ``op(a)^-T g``."""
    a, low, up, perm, inverse = _lu_matrix(lu_and_piv)
    return sl_solve_vjp_b(g, a, b, trans in (1, 2, "T", "C"))


def lu_solve_vjp_lu(g: Any, lu_and_piv: Any, b: Any, ans: Any, trans: Any) -> Any:
    """VJP of ``lu_solve`` in ``(lu, piv)``: the solve VJP ``a_bar`` taken back through
    ``a[perm] = L U``: ``L_bar = tril(a_bar[perm] U^T, -1)``, ``U_bar = triu(L^T a_bar[perm])``;
    returned as ``(lu_bar, 0)``."""
    lu, piv = lu_and_piv
    if is_zero(g):
        return (np.zeros(np.shape(lu)), np.zeros(np.shape(piv)))
    a, low, up, perm, inverse = _lu_matrix(lu_and_piv)
    abar = sl_solve_vjp_a(g, a, b, ans, trans in (1, 2, "T", "C"))[perm]
    return (np.tril(abar @ _mT(up), -1) + np.triu(_mT(low) @ abar), np.zeros(np.shape(piv)))


def lu_solve_jvp_b(t: Any, lu_and_piv: Any, b: Any, trans: Any) -> Any:
    """JVP of ``lu_solve`` in ``b``: ``op(a)^-1 t``."""
    a, low, up, perm, inverse = _lu_matrix(lu_and_piv)
    return sl_solve_jvp_b(t, a, b, trans in (1, 2, "T", "C"))


def lu_solve_jvp_lu(t: Any, lu_and_piv: Any, b: Any, ans: Any, trans: Any) -> Any:
    """JVP of ``lu_solve`` in ``(lu, piv)``: ``da = (dL U + L dU)[inverse]`` into the solve."""
    if is_zero(t) or is_zero(t[0]):
        return np.zeros(np.shape(ans))
    a, low, up, perm, inverse = _lu_matrix(lu_and_piv)
    da = (np.tril(t[0], -1) @ up + low @ np.triu(t[0]))[inverse]
    return sl_solve_jvp_a(da, a, b, ans, trans in (1, 2, "T", "C"))


# --- np.linalg.vector_norm, np.linalg.multi_dot ----------------------------------------------


def vector_norm_vjp(g: Any, x: Any, ans: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """VJP of ``np.linalg.vector_norm``: the reduced axes (any number of them) are merged
    into one and the vector-norm VJP of ``np.linalg.norm`` applied along it."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    nd = np.ndim(x)
    if axis is None:
        axes = list(range(nd))
    elif np.ndim(axis) == 0:
        axes = [axis % nd]
    else:
        axes = sorted([ax % nd for ax in axis])
    rest = [i for i in range(nd) if i not in axes]
    order = rest + axes
    moved = np.transpose(x, order)
    kept = [np.shape(x)[i] for i in rest]
    merged = np.reshape(moved, tuple(kept) + (-1,))
    adj = norm_vjp(np.reshape(g, tuple(kept)), merged, np.reshape(ans, tuple(kept)), ord, -1, False)
    return np.transpose(np.reshape(adj, np.shape(moved)), np.argsort(order))


def _chain(arrays: Any) -> Any:
    """``multi_dot``'s operands as matrices (a 1-D first one a row, a 1-D last one a column)."""
    mats = list(arrays)
    if np.ndim(mats[0]) == 1:
        mats[0] = np.reshape(mats[0], (1, -1))
    if np.ndim(mats[-1]) == 1:
        mats[-1] = np.reshape(mats[-1], (-1, 1))
    return mats


def _product(mats: Any, start: int, stop: int, n: int) -> Any:
    out = np.eye(n)
    for k in range(start, stop):
        out = out @ mats[k]
    return out


def multi_dot_vjp(g: Any, arrays: Any) -> Any:
    """VJP of ``np.linalg.multi_dot(arrays)``: operand ``k`` gets
    ``(A_0 ... A_k-1)^T g (A_k+1 ... A_n-1)^T``, in the container of ``arrays``."""
    mats = _chain(arrays)
    n = len(mats)
    rows = np.shape(mats[0])[0]
    cols = np.shape(mats[-1])[1]
    parts = []
    for k in range(n):
        if is_zero(g):
            parts.append(np.zeros(np.shape(arrays[k])))
            continue
        g2 = np.reshape(g, (rows, cols))
        left = _product(mats, 0, k, rows)
        right = _product(mats, k + 1, n, np.shape(mats[k])[1])
        parts.append(np.reshape(_mT(left) @ g2 @ _mT(right), np.shape(arrays[k])))
    if isinstance(arrays, list):
        return parts
    return tuple(parts)


def multi_dot_jvp(t: Any, arrays: Any) -> Any:
    """JVP of ``np.linalg.multi_dot``: the sum over operands of the product with one operand
    replaced by its tangent (``0.0`` entries skipped)."""
    out = 0.0
    for k in range(len(arrays)):
        if is_zero(t) or is_zero(t[k]):
            continue
        ops = list(arrays)
        ops[k] = t[k]
        out = out + np.linalg.multi_dot(ops)
    if is_zero(out):
        return np.zeros(np.shape(np.linalg.multi_dot(list(arrays))))
    return out


# The checks raise or return nothing: no gradient flows through them.
nondiff("linalg checks", [_check_svd, _qr_check, _lu_perm])
