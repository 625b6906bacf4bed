"""``scipy.linalg``: ``solve cholesky cho_factor cho_solve solve_triangular lu_factor
lu_solve det inv expm sqrtm solve_sylvester``.

Loaded only once the user has imported :mod:`scipy.linalg` (see ``REGISTRY.defer``). The
derivatives are plain NumPy (:mod:`.linalg_vjps`). Conventions:

* Solvers that read one triangle (``cholesky``, ``cho_factor``, ``cho_solve``,
  ``solve_triangular``) give no gradient to the other one. ``cholesky`` and
  ``cho_factor`` state the symmetric gradient, valid for symmetric perturbations (as
  ``np.linalg.cholesky``). ``cho_factor`` leaves ``a``'s entries in the unused triangle
  of ``c``; they are differentiated as such (a copy).
* ``solve(..., assume_a='pos')`` and the like read one triangle too; the gradient stated is
  the general one, equal to the symmetric one along symmetric perturbations.
* ``lu_factor`` differentiates the factors for fixed pivots (the pivoting is piecewise
  constant); ``lu_solve`` reads ``L`` and ``U`` from ``lu`` and gives ``piv`` no gradient.
* ``expm`` differentiates through the Frechet derivative (a block ``expm`` of twice the
  size, :mod:`.scipy_linalg_vjps`); ``sqrtm`` (real square roots only: a complex result is
  refused) through a Sylvester equation ``X dX + dX X = dA``.
* Any other SciPy function is refused (SciPy's source is never differentiated).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from . import scipy_linalg_vjps as L
from .registry import set_jvps, vjp_rule

_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
_SPD = _M @ _M.T + np.eye(3)
_W = np.array([1.1, -0.4, 0.7])
_B = np.array([[0.5, -0.3], [1.4, 0.6], [-0.2, 0.7]])
_CHECK = {"check_finite": "True"}

solve = vjp_rule(
    "scipy.linalg.solve",
    [sl.solve],
    ("a", "b", "lower", "overwrite_a", "overwrite_b", "check_finite", "assume_a", "transposed"),
    {
        "a": "_ad.sl_solve_vjp_a(g, a, b, ans, transposed)",
        "b": "_ad.sl_solve_vjp_b(g, a, b, transposed)",
    },
    [(_M, _W), (_M, _B), (_M, _B, {"transposed": True}), (_M, _W, {"assume_a": "gen"})],
    defaults={
        "lower": "False",
        "overwrite_a": "False",
        "overwrite_b": "False",
        **_CHECK,
        "assume_a": "None",
        "transposed": "False",
    },
)
set_jvps(
    solve,
    a="_ad.sl_solve_jvp_a(t, a, b, ans, transposed)",
    b="_ad.sl_solve_jvp_b(t, a, b, transposed)",
)
cholesky = vjp_rule(
    "scipy.linalg.cholesky",
    [sl.cholesky],
    ("a", "lower", "overwrite_a", "check_finite"),
    {"a": "_ad.cholesky_vjp(g, ans, not lower)"},
    [(_SPD,), (_SPD, True), (_SPD, {"lower": False})],
    defaults={"lower": "False", "overwrite_a": "False", **_CHECK},
    symmetric=("a",),
)
set_jvps(cholesky, a="_ad.cholesky_jvp(t, ans, not lower)")
cho_factor = vjp_rule(
    "scipy.linalg.cho_factor",
    [sl.cho_factor],
    ("a", "lower", "overwrite_a", "check_finite"),
    {"a": "_ad.cho_factor_vjp(g, a, ans)"},
    [(_SPD,), (_SPD, True)],
    defaults={"lower": "False", "overwrite_a": "False", **_CHECK},
    symmetric=("a",),
)
set_jvps(cho_factor, a="_ad.cho_factor_jvp(t, a, ans)")
_C_LOW = (np.linalg.cholesky(_SPD) + np.triu(_M, 1), True)
_C_UP = (np.linalg.cholesky(_SPD).T - np.tril(_M, -1), False)
cho_solve = vjp_rule(
    "scipy.linalg.cho_solve",
    [sl.cho_solve],
    ("c_and_lower", "b", "overwrite_b", "check_finite"),
    {
        "c_and_lower": "_ad.cho_solve_vjp_c(g, c_and_lower, b, ans)",
        "b": "_ad.cho_solve_vjp_b(g, c_and_lower, b)",
    },
    [(_C_LOW, _W), (_C_UP, _B), (_C_UP, _W)],
    defaults={"overwrite_b": "False", **_CHECK},
)
set_jvps(
    cho_solve,
    c_and_lower="_ad.cho_solve_jvp_c(t, c_and_lower, b, ans)",
    b="_ad.cho_solve_jvp_b(t, c_and_lower, b)",
)
_TRI = ("a", "b", "trans", "lower", "unit_diagonal", "overwrite_b", "check_finite")
_TRI_ARGS = "trans, lower, unit_diagonal"
solve_triangular = vjp_rule(
    "scipy.linalg.solve_triangular",
    [sl.solve_triangular],
    _TRI,
    {
        "a": f"_ad.triangular_vjp_a(g, a, b, ans, {_TRI_ARGS})",
        "b": f"_ad.triangular_vjp_b(g, a, b, {_TRI_ARGS})",
    },
    [
        (_M, _W),
        (_M, _B, 0, True),
        (_M, _W, "T", False),
        (_M, _B, 1, True, True),
        (_M, _B, {"lower": True, "trans": "T"}),
    ],
    defaults={
        "trans": "0",
        "lower": "False",
        "unit_diagonal": "False",
        "overwrite_b": "False",
        **_CHECK,
    },
)
set_jvps(
    solve_triangular,
    a=f"_ad.triangular_jvp_a(t, a, b, ans, {_TRI_ARGS})",
    b=f"_ad.triangular_jvp_b(t, a, b, {_TRI_ARGS})",
)
det = vjp_rule(
    "scipy.linalg.det",
    [sl.det],
    ("a", "overwrite_a", "check_finite"),
    {"a": "_ad.det_vjp(g, a, ans)"},
    [(_M,), (np.stack([_M, _SPD]),)],
    defaults={"overwrite_a": "False", **_CHECK},
)
set_jvps(det, a="ans * np.trace(np.linalg.solve(a, t), 0, -2, -1)")
inv = vjp_rule(
    "scipy.linalg.inv",
    [sl.inv],
    ("a", "overwrite_a", "check_finite"),
    {"a": "(0.0 if _ad.is_zero(g) else -_ad.mT(ans) @ g @ _ad.mT(ans))"},
    [(_M,), (_SPD,)],
    defaults={"overwrite_a": "False", **_CHECK},
)
set_jvps(inv, a="-ans @ t @ ans")
_LU = sl.lu_factor(_M)
lu_factor = vjp_rule(
    "scipy.linalg.lu_factor",
    [sl.lu_factor],
    ("a", "overwrite_a", "check_finite"),
    {"a": "_ad.lu_factor_vjp(g, a, ans)"},
    [(_M,), (_SPD,), (np.array([[0.1, 2.0, 0.3], [1.5, -0.4, 0.8], [0.2, 0.7, -1.1]]),)],
    defaults={"overwrite_a": "False", **_CHECK},
)
set_jvps(lu_factor, a="_ad.lu_factor_jvp(t, a, ans)")
lu_solve = vjp_rule(
    "scipy.linalg.lu_solve",
    [sl.lu_solve],
    ("lu_and_piv", "b", "trans", "overwrite_b", "check_finite"),
    {
        "lu_and_piv": "_ad.lu_solve_vjp_lu(g, lu_and_piv, b, ans, trans)",
        "b": "_ad.lu_solve_vjp_b(g, lu_and_piv, b, trans)",
    },
    [(_LU, _W), (_LU, _B, 1), (sl.lu_factor(_SPD), _B, {"trans": 1}), (_LU, _W, 2)],
    defaults={"trans": "0", "overwrite_b": "False", **_CHECK},
)
set_jvps(
    lu_solve,
    lu_and_piv="_ad.lu_solve_jvp_lu(t, lu_and_piv, b, ans, trans)",
    b="_ad.lu_solve_jvp_b(t, lu_and_piv, b, trans)",
)
expm = vjp_rule(
    "scipy.linalg.expm",
    [sl.expm, L.expm],
    ("A",),
    {"A": "_ad.expm_frechet(np.swapaxes(A, -1, -2), g)"},
    [(_M,), (0.3 * _SPD,), (np.array([[0.0, 1.2], [-1.2, 0.0]]),), (np.stack([_M, -_M.T]),)],
)
set_jvps(expm, A="_ad.expm_frechet(A, t)")
sqrtm = vjp_rule(
    "scipy.linalg.sqrtm",
    [sl.sqrtm],
    ("A",),
    {"A": "_ad.sqrtm_vjp(g, ans)"},
    [(_M,), (_SPD,), (np.array([[4.0, 1.0], [0.5, 3.0]]),)],
)
set_jvps(sqrtm, A="_ad.sqrtm_jvp(t, ans)")
_SYL = "_ad.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), g)"
solve_sylvester = vjp_rule(
    "scipy.linalg.solve_sylvester",
    [sl.solve_sylvester, L.solve_sylvester],
    ("a", "b", "q"),
    {"a": f"-{_SYL} @ ans.T", "b": f"-ans.T @ {_SYL}", "q": _SYL},
    [(_M, _SPD, _B @ _B.T), (_M, np.array([[1.5, 0.2], [-0.3, 0.9]]), _B)],
)
set_jvps(
    solve_sylvester,
    a="_ad.solve_sylvester(a, b, -t @ ans)",
    b="_ad.solve_sylvester(a, b, -ans @ t)",
    q="_ad.solve_sylvester(a, b, t)",
)
from . import scipy_corpus, scipy_decomp  # noqa: E402, F401  (loaded with this module)
