"""``scipy.linalg`` functions of JAX's test corpus: ``toeplitz``, ``block_diag``, ``logm``
and ``lu``.

Loaded with :mod:`.scipy_linalg`. ``toeplitz`` and ``block_diag`` copy entries (linear);
``logm`` differentiates through its Frechet derivative (a block ``logm`` of twice the size,
real logarithms only); ``lu`` unpacks ``lu_factor``'s factors (square matrices, the
pivoting held fixed; the permutation carries no gradient); ``polar`` of square matrices
through a Sylvester equation (``p X + X p = u^T da - da^T u``).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from .registry import set_jvps, vjp_rule

_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
_SPD = _M @ _M.T + np.eye(3)
_W = np.array([1.1, -0.4, 0.7])
_V = np.array([0.6, -1.3, 0.9, 2.1])
_B = np.array([[0.5, -0.3], [1.4, 0.6], [-0.2, 0.7]])

toeplitz = vjp_rule(
    "scipy.linalg.toeplitz",
    [sl.toeplitz],
    ("c", "r"),
    {"c": "_ad.toeplitz_vjp(g, c, r, 'c')", "r": "_ad.toeplitz_vjp(g, c, r, 'r')"},
    [(_W,), (_W, _V), (_V, {"r": _W})],
    defaults={"r": "None"},
    linear=True,
)
set_jvps(toeplitz, c="_ad.toeplitz_jvp(t, c, r, 'c')", r="_ad.toeplitz_jvp(t, c, r, 'r')")
block_diag = vjp_rule(
    "scipy.linalg.block_diag",
    [sl.block_diag],
    (),
    {"args": "_ad.block_diag_vjp(g, args)"},
    [(_M, _B), (_W, 1.5, _B.T), (_M,)],
    varargs=True,
    linear=True,
)
set_jvps(block_diag, args="_ad.block_diag_jvp(t, args)")
logm = vjp_rule(
    "scipy.linalg.logm",
    [sl.logm],
    ("A", "disp"),
    {"A": "_ad.logm_frechet(np.swapaxes(A, -1, -2), g)"},
    [(_SPD,), (_M,), (np.array([[1.5, 0.4], [-0.3, 2.0]]),)],
    defaults={"disp": "True"},
)
set_jvps(logm, A="_ad.logm_frechet(A, t)")
lu = vjp_rule(
    "scipy.linalg.lu",
    [sl.lu],
    ("a", "permute_l", "overwrite_a", "check_finite", "p_indices"),
    {"a": "_ad.lu_vjp(g, a, ans, permute_l)"},
    [
        (_M,),
        (np.array([[0.1, 2.0, 0.3], [1.5, -0.4, 0.8], [0.2, 0.7, -1.1]]),),
        (_M, True),
        (_SPD, {"p_indices": True}),
    ],
    defaults={
        "permute_l": "False",
        "overwrite_a": "False",
        "check_finite": "True",
        "p_indices": "False",
    },
)
set_jvps(lu, a="_ad.lu_jvp(t, a, ans, permute_l)")
polar = vjp_rule(
    "scipy.linalg.polar",
    [sl.polar],
    ("a", "side"),
    {"a": "_ad.polar_vjp(g, a, ans, side)"},
    [(_M,), (_SPD, "left"), (np.array([[0.3, 2.0], [-1.5, 0.4]]), {"side": "left"})],
    defaults={"side": "'right'"},
)
set_jvps(polar, a="_ad.polar_jvp(t, a, ans, side)")
