"""Helpers of the ``scipy.linalg`` decomposition rules (``svd``, ``eigh``, ``qr``,
``pinv``), reached as ``_ad.<name>``: they refuse what SciPy adds over ``np.linalg``
(generalized eigenproblems, subsets of eigenvalues, column pivoting, ``return_rank``)
and otherwise hand over to the ``np.linalg`` helpers of :mod:`.linalg_vjps`.

Plain NumPy, differentiated from their source for higher derivatives (``FROM_SOURCE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import is_zero
from .linalg_vjps import eigh_jvp, eigh_vjp, pinv_jvp, pinv_vjp, qr_jvp, qr_vjp
from .registry import nondiff

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "sl_eigh_vjp",
    "sl_eigh_jvp",
    "sl_qr_vjp",
    "sl_qr_jvp",
    "sl_pinv_vjp",
    "sl_pinv_jvp",
]
FROM_SOURCE = tuple(__all__)


def _refuse_unless(ok: bool, what: str, hint: str) -> None:
    """Raise ``TransformError`` naming ``what`` unless ``ok``."""
    if not ok:
        raise TransformError(what, hint=hint)


def _eigh_parts(a: Any, ans: Any, b: Any, lower: bool, eigvals_only: bool, subset: Any) -> Any:
    """``(w, v)`` of ``scipy.linalg.eigh(a, ...)``, refusing ``b`` and subsets."""
    _refuse_unless(
        b is None and subset is None,
        "scipy.linalg.eigh with b= or subset_by_index=/subset_by_value=",
        "differentiate the standard problem: eigh(a) of a symmetric a",
    )
    if eigvals_only:
        return np.linalg.eigh(a, "L" if lower else "U")
    return ans


def sl_eigh_vjp(
    g: Any, a: Any, ans: Any, b: Any, lower: bool, eigvals_only: bool, subset: Any
) -> Any:
    """VJP of ``scipy.linalg.eigh(a, lower=, eigvals_only=)``: that of ``np.linalg.eigh``
    (``eigvals_only``: of its values)."""
    parts = _eigh_parts(a, ans, b, lower, eigvals_only, subset)
    return eigh_vjp((g, 0.0) if eigvals_only else g, a, parts)


def sl_eigh_jvp(
    t: Any, a: Any, ans: Any, b: Any, lower: bool, eigvals_only: bool, subset: Any
) -> Any:
    """JVP of ``scipy.linalg.eigh``, in the structure of its result."""
    parts = _eigh_parts(a, ans, b, lower, eigvals_only, subset)
    out = eigh_jvp(t, a, parts)
    return out[0] if eigvals_only else out


def _qr_mode(mode: str, pivoting: bool) -> str:
    """The ``np.linalg.qr`` mode of ``scipy.linalg.qr``'s (``full`` is ``complete``,
    ``economic`` is ``reduced``), refusing ``pivoting`` and ``raw``."""
    _refuse_unless(
        not pivoting and mode != "raw",
        "scipy.linalg.qr with pivoting=True or mode='raw'",
        "differentiate mode='economic' without pivoting",
    )
    return {"full": "complete", "economic": "reduced"}.get(mode, mode)


def sl_qr_vjp(g: Any, a: Any, ans: Any, mode: str, pivoting: bool) -> Any:
    """VJP of ``scipy.linalg.qr`` (``mode='r'`` returns ``(r,)`` with the full ``m x n``
    ``r``, whose rows below the ``n``-th are zero)."""
    np_mode = _qr_mode(mode, pivoting)
    if np_mode == "r":
        n = np.shape(a)[-1]
        g_r = g[0] if isinstance(g, tuple) else g
        if not is_zero(g_r):
            g_r = np.asarray(g_r)[..., :n, :]
        return qr_vjp(g_r, a, ans[0][..., :n, :], "r")
    return qr_vjp(g, a, ans, np_mode)


def sl_qr_jvp(t: Any, a: Any, ans: Any, mode: str, pivoting: bool) -> Any:
    """JVP of ``scipy.linalg.qr``, in the structure of its result."""
    np_mode = _qr_mode(mode, pivoting)
    if np_mode == "r":
        m, n = np.shape(a)[-2:]
        d_r = qr_jvp(t, a, ans[0][..., :n, :], "r")
        below = np.zeros((*np.shape(d_r)[:-2], max(m - n, 0), n))
        return (np.concatenate([d_r, below], axis=-2),)
    return qr_jvp(t, a, ans, np_mode)


def sl_pinv_vjp(g: Any, a: Any, ans: Any, return_rank: bool) -> Any:
    """VJP of ``scipy.linalg.pinv`` (constant rank), refusing ``return_rank=True``."""
    _refuse_unless(
        not return_rank,
        "scipy.linalg.pinv(..., return_rank=True)",
        "call pinv without return_rank and np.linalg.matrix_rank apart",
    )
    return pinv_vjp(g, a, ans)


def sl_pinv_jvp(t: Any, a: Any, ans: Any, return_rank: bool) -> Any:
    """JVP of ``scipy.linalg.pinv``."""
    _refuse_unless(
        not return_rank,
        "scipy.linalg.pinv(..., return_rank=True)",
        "call pinv without return_rank and np.linalg.matrix_rank apart",
    )
    return pinv_jvp(t, a, ans)


nondiff("scipy.linalg decomposition checks", [_refuse_unless, _qr_mode])
