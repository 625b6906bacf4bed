"""``np.linalg`` beyond ``inv det solve norm``: decompositions, ``slogdet``, ``pinv``,
``lstsq``, ``matrix_power``.

Templates call the helpers of :mod:`.linalg_vjps`, whose docstrings state the formulas
and the degenerate cases. Conventions for what is not unique or not smooth (as in JAX):

* ``cholesky``, ``eigh``, ``eigvalsh`` read one triangle of their input; their gradient
  is the symmetric one, valid for symmetric perturbations (``symmetric=`` in the rule).
* ``eigh`` and ``svd``: vectors are defined up to sign (up to rotation for repeated
  values), so only functions invariant to that choice have a gradient; the vector terms
  divide by the gaps between values and are infinite where two values coincide (the
  value terms are always defined). With ``full_matrices=True`` (the default) the extra
  vectors of a non-square matrix are not unique: a gradient reaching them raises a
  ``TransformError`` when it runs (forward mode: always); values and the first
  ``min(m, n)`` vectors are fine.
* ``qr``: reduced mode of a matrix with at least as many rows as columns, full rank.
* ``pinv`` and ``lstsq``: constant (full) rank.
"""

from __future__ import annotations

import numpy as np

from .registry import set_jvps, vjp_rule

_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
_SPD = _M @ _M.T + np.eye(3)
_SPD2 = np.stack([_SPD, np.array([[1.5, 0.2, 0.0], [0.2, 2.5, 0.7], [0.0, 0.7, 1.9]])])
_SYM = np.array([[1.0, 0.4, -0.3], [0.4, -0.5, 0.8], [-0.3, 0.8, 2.2]])
_TALL = np.array([[0.9, -0.3], [0.4, 1.2], [-0.7, 0.5], [0.2, 0.8]])
_WIDE = _TALL.T * np.array([[1.0], [0.6]])
_SQ = np.array([[1.3, -0.4, 0.2], [0.5, 0.9, -0.8], [-0.6, 0.3, 2.0]])
_STACK = np.stack([_TALL, _TALL[::-1] * 1.3])
# Samples of eigh and svd are chosen where LAPACK's sign choice for the vectors does not
# change under small perturbations (it may: vectors are defined up to sign).

cholesky = vjp_rule(
    "np.linalg.cholesky",
    [np.linalg.cholesky],
    ("a", "upper"),
    {"a": "_ad.cholesky_vjp(g, ans, upper)"},
    [(_SPD,), (_SPD2,), (_SPD, {"upper": True})],
    defaults={"upper": "False"},
    symmetric=("a",),
)
set_jvps(cholesky, a="_ad.cholesky_jvp(t, ans, upper)")
eigh = vjp_rule(
    "np.linalg.eigh",
    [np.linalg.eigh],
    ("a", "UPLO"),
    {"a": "_ad.eigh_vjp(g, a, ans)"},
    [(_SYM,), (np.stack([_SYM, _SPD]),), (_SYM, "U")],
    defaults={"UPLO": "'L'"},
    symmetric=("a",),
)
set_jvps(eigh, a="_ad.eigh_jvp(t, a, ans)")
eigvalsh = vjp_rule(
    "np.linalg.eigvalsh",
    [np.linalg.eigvalsh],
    ("a", "UPLO"),
    {"a": "_ad.eigh_vjp((g, 0.0), a, np.linalg.eigh(a, UPLO))"},
    [(_SYM,), (_SPD2,)],
    defaults={"UPLO": "'L'"},
    symmetric=("a",),
)
set_jvps(eigvalsh, a="_ad.eigh_jvp(t, a, np.linalg.eigh(a, UPLO))[0]")
svd = vjp_rule(
    "np.linalg.svd",
    [np.linalg.svd],
    ("a", "full_matrices", "compute_uv", "hermitian"),
    {"a": "_ad.svd_vjp(g, a, ans, compute_uv)"},
    [
        (_TALL, False),
        (_WIDE, False),
        (_SQ,),
        (_STACK, False),
        (_TALL, {"compute_uv": False}),
        (_WIDE, True, False),
        (_SQ, {"full_matrices": False}),
        (_TALL, {"full_matrices": True, "compute_uv": False}),
    ],
    defaults={"full_matrices": "True", "compute_uv": "True", "hermitian": "False"},
)
set_jvps(svd, a="_ad.svd_jvp(t, a, ans, compute_uv)")
qr = vjp_rule(
    "np.linalg.qr",
    [np.linalg.qr],
    ("a", "mode"),
    {"a": "_ad.qr_vjp(g, a, ans, mode)"},
    [(_TALL,), (_SQ,), (_STACK, "reduced"), (_TALL, "r"), (_SQ, "complete")],
    defaults={"mode": "'reduced'"},
)
set_jvps(qr, a="_ad.qr_jvp(t, a, ans, mode)")
slogdet = vjp_rule(
    "np.linalg.slogdet",
    [np.linalg.slogdet],
    ("a",),
    {"a": "_ad.slogdet_vjp(g, a)"},
    [(_SQ,), (_SPD2,), (-_SPD,)],
)
set_jvps(
    slogdet,
    a="(np.zeros(np.shape(ans[0])), np.trace(np.linalg.solve(a, t), 0, -2, -1))",
)
pinv = vjp_rule(
    "np.linalg.pinv",
    [np.linalg.pinv],
    ("a", "rcond", "hermitian", "rtol"),
    {"a": "_ad.pinv_vjp(g, a, ans)"},
    [(_TALL,), (_WIDE,), (_SQ,), (_STACK,)],
    defaults={"rcond": "None", "hermitian": "False", "rtol": "None"},
)
set_jvps(pinv, a="_ad.pinv_jvp(t, a, ans)")
lstsq = vjp_rule(
    "np.linalg.lstsq",
    [np.linalg.lstsq],
    ("a", "b", "rcond"),
    {"a": "_ad.lstsq_vjp_a(g, a, b, ans)", "b": "_ad.lstsq_vjp_b(g, a, b, ans)"},
    [
        (_TALL, np.array([0.3, -1.1, 0.8, 0.5]), None),
        (_TALL, np.array([[0.3, 1.0], [-1.1, 0.2], [0.8, 0.4], [0.5, -0.9]]), None),
        (_SQ, np.array([0.3, -1.1, 0.8])),
    ],
    defaults={"rcond": "None"},
)
set_jvps(
    lstsq,
    a="_ad.lstsq_jvp(t, 0.0, a, b, ans)",
    b="_ad.lstsq_jvp(0.0, t, a, b, ans)",
)
matrix_power = vjp_rule(
    "np.linalg.matrix_power",
    [np.linalg.matrix_power],
    ("a", "n"),
    {"a": "_ad.matrix_power_vjp(g, a, n)"},
    [(_SQ, 3), (_SQ, 1), (_SQ, 0), (_SQ, -2), (_SPD2, 2)],
)
set_jvps(matrix_power, a="_ad.matrix_power_jvp(t, a, n)")


# --- NumPy 2's array-API functions in np.linalg ------------------------------------------------

if hasattr(np.linalg, "vector_norm"):  # NumPy >= 2.0
    svdvals = vjp_rule(
        "np.linalg.svdvals",
        [np.linalg.svdvals],
        ("x",),
        {"x": "_ad.svd_vjp(g, x, ans, False)"},
        [(_TALL,), (_WIDE,), (_STACK,)],
    )
    set_jvps(svdvals, x="_ad.svd_jvp(t, x, ans, False)")
    vector_norm = vjp_rule(
        "np.linalg.vector_norm",
        [np.linalg.vector_norm],
        ("x",),
        {"x": "_ad.vector_norm_vjp(g, x, ans, ord, axis, keepdims)"},
        [(_SQ,), (_STACK, {"axis": (0, 2)}), (_STACK, {"axis": -1, "keepdims": True, "ord": 3})],
        kwonly={"axis": "None", "keepdims": "False", "ord": "2"},
    )
    set_jvps(
        vector_norm,
        x="np.sum(t * _ad.vector_norm_vjp(np.ones(np.shape(ans)), x, ans, ord, axis, keepdims), "
        "axis, keepdims=keepdims)",
    )
    matrix_norm = vjp_rule(
        "np.linalg.matrix_norm",
        [np.linalg.matrix_norm],
        ("x",),
        {"x": "_ad.norm_vjp(g, x, ans, ord, (-2, -1), keepdims)"},
        [(_SQ,), (_STACK, {"ord": "nuc"}), (_TALL, {"ord": 2, "keepdims": True})],
        kwonly={"keepdims": "False", "ord": "'fro'"},
    )
    set_jvps(
        matrix_norm,
        x="np.sum(t * _ad.norm_vjp(np.ones(np.shape(ans)), x, ans, ord, (-2, -1), keepdims), "
        "(-2, -1), keepdims=keepdims)",
    )
    outer = vjp_rule(
        "np.linalg.outer",
        [np.linalg.outer],
        ("x1", "x2"),
        {"x1": "(0.0 if _ad.is_zero(g) else g @ x2)", "x2": "(0.0 if _ad.is_zero(g) else x1 @ g)"},
        [(_SQ[0], _TALL[:, 0])],
        linear=True,
    )
    set_jvps(outer, x1="np.linalg.outer(t, x2)", x2="np.linalg.outer(x1, t)")
    trace = vjp_rule(
        "np.linalg.trace",
        [np.linalg.trace],
        ("x",),
        {"x": "_ad.trace_vjp(g, x, offset, -2, -1)"},
        [(_SQ,), (_STACK, {"offset": 1})],
        kwonly={"offset": "0", "dtype": "None"},
        linear=True,
    )
    set_jvps(trace, x="np.linalg.trace(t, offset=offset)")
    diagonal = vjp_rule(
        "np.linalg.diagonal",
        [np.linalg.diagonal],
        ("x",),
        {"x": "_ad.diagonal_vjp(g, x, offset, -2, -1)"},
        [(_SQ,), (_STACK, {"offset": -1})],
        kwonly={"offset": "0"},
        linear=True,
    )
    set_jvps(diagonal, x="np.linalg.diagonal(t, offset=offset)")
    matrix_transpose = vjp_rule(
        "np.linalg.matrix_transpose",
        [np.linalg.matrix_transpose],
        ("x",),
        {"x": "_ad.mT(g)"},
        [(_TALL,), (_STACK,)],
        linear=True,
    )
    set_jvps(matrix_transpose, x="_ad.mT(t)")
    vecdot = vjp_rule(
        "np.linalg.vecdot",
        [np.linalg.vecdot],
        ("x1", "x2"),
        {
            "x1": "_ad.unbroadcast(np.expand_dims(g, axis) * x2, x1)",
            "x2": "_ad.unbroadcast(np.expand_dims(g, axis) * x1, x2)",
        },
        [(_TALL, _TALL[::-1]), (_STACK, _STACK[::-1], {"axis": -2}), (_SQ, _SQ[0])],
        kwonly={"axis": "-1"},
    )
    set_jvps(
        vecdot,
        x1="np.linalg.vecdot(t, x2, axis=axis)",
        x2="np.linalg.vecdot(x1, t, axis=axis)",
    )

multi_dot = vjp_rule(
    "np.linalg.multi_dot",
    [np.linalg.multi_dot],
    ("arrays", "out"),
    {"arrays": "_ad.multi_dot_vjp(g, arrays)"},
    [([_SQ, _SQ.T, _SQ],), ([_TALL[:, 0], _TALL, _SQ[:2]],), ((_SQ[0], _SQ, _SQ[:, 1]),)],
    defaults={"out": "None"},
    linear=True,
)
set_jvps(multi_dot, arrays="_ad.multi_dot_jvp(t, arrays)")
