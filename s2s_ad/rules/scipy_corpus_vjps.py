"""Helpers of the rules in :mod:`.scipy_corpus` (``scipy.linalg.toeplitz``, ``block_diag``,
``logm``, ``lu``, ``polar``), reached as ``_ad.<name>``.

Plain NumPy over :mod:`scipy.linalg` (imported on first call: importing s2s_ad never
imports SciPy), differentiated from their source for higher derivatives (``FROM_SOURCE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import add_at, is_zero
from .corpus_vjps import positions
from .linalg_vjps import lu_factor_jvp, lu_factor_vjp

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from types import ModuleType
    from typing import Any

__all__ = [
    "toeplitz_vjp",
    "toeplitz_jvp",
    "block_diag_vjp",
    "block_diag_jvp",
    "logm_frechet",
    "lu_vjp",
    "lu_jvp",
    "polar_vjp",
    "polar_jvp",
]
FROM_SOURCE = tuple(__all__)


def _linalg() -> ModuleType:
    import scipy.linalg

    return scipy.linalg


# --- toeplitz: a matrix of copies of c and r -----------------------------------------------


def _toeplitz_source(c: Any, r: Any) -> Any:
    """The positions ``toeplitz(c, r)`` copies, ``c``'s then ``r``'s numbered in a row."""
    if r is None:
        return _linalg().toeplitz(positions(np.ravel(c)))
    return _linalg().toeplitz(positions(np.ravel(c)), np.size(c) + positions(np.ravel(r)))


def toeplitz_vjp(g: Any, c: Any, r: Any, which: str) -> Any:
    """VJP of ``scipy.linalg.toeplitz(c, r)`` in ``c`` (``which == 'c'``) or ``r``: ``g``
    summed along each diagonal onto the entry it copies (``r[0]`` is never read)."""
    n = np.size(c)
    shape = np.shape(c) if which == "c" else np.shape(r)
    if is_zero(g):
        return np.zeros(shape)
    size = n if r is None else n + np.size(r)
    flat = np.zeros(size)
    out = add_at(flat, flat, np.ravel(_toeplitz_source(c, r)), np.ravel(g))
    part = out[:n] if which == "c" else out[n:]
    return np.reshape(part, shape)


def toeplitz_jvp(t: Any, c: Any, r: Any, which: str) -> Any:
    """JVP of ``scipy.linalg.toeplitz(c, r)`` in ``c`` or ``r``."""
    source = _toeplitz_source(c, r)
    if is_zero(t):
        return np.zeros(np.shape(source))
    zc = np.zeros(np.size(c))
    zr = np.zeros(0 if r is None else np.size(r))
    parts = [np.ravel(t), zr] if which == "c" else [zc, np.ravel(t)]
    return np.concatenate(parts)[source]


# --- block_diag ---------------------------------------------------------------------------------


def _block_shapes(arrs: Any) -> Any:
    """The 2-D shape each argument of ``block_diag`` takes (vectors are rows)."""
    return [np.shape(np.atleast_2d(np.asarray(a))) for a in arrs]


def block_diag_vjp(g: Any, arrs: Any) -> Any:
    """VJP of ``scipy.linalg.block_diag(*arrs)``: each argument gets its diagonal block of
    ``g`` (a tuple, one cotangent per argument)."""
    out = []
    row, col = 0, 0
    for a, (m, n) in zip(arrs, _block_shapes(arrs)):
        if is_zero(g):
            out.append(np.zeros(np.shape(a)))
        else:
            out.append(np.reshape(g[row : row + m, col : col + n], np.shape(a)))
        row, col = row + m, col + n
    return tuple(out)


def block_diag_jvp(t: Any, arrs: Any) -> Any:
    """JVP of ``scipy.linalg.block_diag(*arrs)``: the block diagonal of the tangents."""
    parts = []
    for k, a in enumerate(arrs):
        tk = 0.0 if is_zero(t) else t[k]
        parts.append(np.zeros(np.shape(a)) if is_zero(tk) else tk)
    return _linalg().block_diag(*parts)


# --- logm: the Frechet derivative by a block matrix ----------------------------------------


def logm_frechet(a: Any, e: Any) -> Any:
    """The derivative of ``logm`` at ``a`` in the direction ``e``: the top-right block of
    ``logm([[a, e], [0, a]])``. The VJP of ``logm`` is ``logm_frechet(a.T, g)``. A complex
    logarithm (a negative real eigenvalue) is refused."""
    n = np.shape(a)[-1]
    if is_zero(e):
        return np.zeros(np.shape(a))
    big = np.block([[a, e], [np.zeros(np.shape(a)), a]])
    out = _linalg().logm(big)
    if np.iscomplexobj(out):
        if np.max(np.abs(np.imag(out))) > 1e-8 * max(1.0, np.max(np.abs(out))):
            raise TransformError(
                "scipy.linalg.logm of a matrix with a complex logarithm",
                hint="differentiate logm of matrices without negative real eigenvalues",
            )
        out = np.real(out)
    return out[:n, n:]


# --- lu: the factors of lu_factor, unpacked ------------------------------------------------


def _check_square(a: Any) -> None:
    shape = np.shape(a)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise TransformError(
            "scipy.linalg.lu of a non-square matrix or a stack",
            hint="differentiate the LU factors of square matrices",
        )


def lu_vjp(g: Any, a: Any, ans: Any, permute_l: bool) -> Any:
    """VJP of ``p, l, u = scipy.linalg.lu(a)`` (``l, u`` with ``permute_l``): the factors
    are those of ``lu_factor`` (``a = P L U``); the permutation carries no gradient."""
    _check_square(a)
    if is_zero(g):
        return np.zeros(np.shape(a))
    g_l, g_u = (g[0], g[1]) if permute_l else (g[1], g[2])
    if is_zero(g_l) and is_zero(g_u):
        return np.zeros(np.shape(a))
    if permute_l and not is_zero(g_l):  # the first factor is P L
        g_l = _linalg().lu(a)[0].T @ g_l
    g_lu = 0.0
    if not is_zero(g_l):
        g_lu = g_lu + np.tril(g_l, -1)
    if not is_zero(g_u):
        g_lu = g_lu + np.triu(g_u)
    return lu_factor_vjp((g_lu, 0.0), a, _linalg().lu_factor(a))


def lu_jvp(t: Any, a: Any, ans: Any, permute_l: bool) -> Any:
    """JVP of ``scipy.linalg.lu(a)``: the tangent of ``lu_factor``, unpacked (the
    permutation, a matrix or with ``p_indices`` a vector, is constant)."""
    _check_square(a)
    if is_zero(t):
        t = np.zeros(np.shape(a))
    t_lu = lu_factor_jvp(t, a, _linalg().lu_factor(a))[0]
    t_l = np.tril(t_lu, -1)
    t_u = np.triu(t_lu)
    if permute_l:
        p = _linalg().lu(a)[0]
        return (p @ t_l, t_u)
    return (np.zeros(np.shape(ans[0])), t_l, t_u)


# --- polar: a = u p with u orthogonal, p symmetric positive semi-definite -------------------


def _polar_right(a: Any, ans: Any, side: str) -> Any:
    """``(a, u, p)`` of the right decomposition ``a = u p`` (``side='left'``, ``a = p u``,
    is the right one of ``a^T``: ``u`` transposed, ``p`` the same)."""
    shape = np.shape(a)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise TransformError(
            "scipy.linalg.polar of a non-square matrix",
            hint="differentiate the polar decomposition of square matrices",
        )
    u, p = ans
    if side == "left":
        return np.transpose(a), np.transpose(u), p
    return a, u, p


def polar_vjp(g: Any, a: Any, ans: Any, side: str) -> Any:
    """VJP of ``u, p = scipy.linalg.polar(a, side)``. With ``a = u p``, ``du = u X`` where
    ``X`` (skew) solves ``p X + X p = u^T da - da^T u`` and ``dp = u^T da - X p``; so
    ``a_bar = u (Y - Y^T + p_bar)`` with ``p Y + Y p = u^T u_bar - p_bar p``."""
    a, u, p = _polar_right(a, ans, side)
    if is_zero(g):
        return np.zeros(np.shape(a))
    g_u = np.zeros(np.shape(u)) if is_zero(g[0]) else g[0]
    g_p = np.zeros(np.shape(p)) if is_zero(g[1]) else g[1]
    if side == "left":
        g_u = np.transpose(g_u)
    y = _linalg().solve_sylvester(p, p, np.transpose(u) @ g_u - g_p @ p)
    back = u @ (y - np.transpose(y) + g_p)
    return np.transpose(back) if side == "left" else back


def polar_jvp(t: Any, a: Any, ans: Any, side: str) -> Any:
    """JVP of ``u, p = scipy.linalg.polar(a, side)`` (see :func:`polar_vjp`)."""
    a, u, p = _polar_right(a, ans, side)
    if is_zero(t):
        return (np.zeros(np.shape(u)), np.zeros(np.shape(p)))
    da = np.transpose(t) if side == "left" else t
    c = np.transpose(u) @ da
    x = _linalg().solve_sylvester(p, p, c - np.transpose(c))
    du = u @ x
    dp = c - x @ p
    return (np.transpose(du) if side == "left" else du, dp)
