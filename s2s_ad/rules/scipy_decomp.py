"""``scipy.linalg`` decompositions with the derivatives of their ``np.linalg``
counterparts: ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``qr``, ``pinv``.

Loaded with :mod:`.scipy_linalg`. The conventions of :mod:`.linalg` hold (vectors up to
sign, the symmetric gradient of ``eigh``, ``qr`` of a tall or square matrix); what SciPy
adds is refused when the gradient runs (``TransformError``): ``eigh``'s generalized
problem (``b=``) and subsets, ``qr``'s pivoting and ``mode='raw'``, ``pinv``'s
``return_rank=True``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sl

from .registry import set_jvps, vjp_rule

_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
_SYM = np.array([[1.0, 0.4, -0.3], [0.4, -0.5, 0.8], [-0.3, 0.8, 2.2]])
_TALL = np.array([[0.9, -0.3], [0.4, 1.2], [-0.7, 0.5], [0.2, 0.8]])
_WIDE = _TALL.T * np.array([[1.0], [0.6]])
_CHECK = {"overwrite_a": "False", "check_finite": "True"}

svd = vjp_rule(
    "scipy.linalg.svd",
    [sl.svd],
    ("a", "full_matrices", "compute_uv", "overwrite_a", "check_finite", "lapack_driver"),
    {"a": "_ad.svd_vjp(g, a, ans, compute_uv)"},
    [(_TALL, False), (_M,), (_WIDE, {"compute_uv": False}), (_TALL, True, False)],
    defaults={"full_matrices": "True", "compute_uv": "True", **_CHECK, "lapack_driver": "'gesdd'"},
)
set_jvps(svd, a="_ad.svd_jvp(t, a, ans, compute_uv)")
svdvals = vjp_rule(
    "scipy.linalg.svdvals",
    [sl.svdvals],
    ("a", "overwrite_a", "check_finite"),
    {"a": "_ad.svd_vjp(g, a, ans, False)"},
    [(_TALL,), (_WIDE,), (_M,)],
    defaults=_CHECK,
)
set_jvps(svdvals, a="_ad.svd_jvp(t, a, ans, False)")
#: the keyword-only options ``eigh`` and ``eigvalsh`` share, with their defaults
_EIGH_OPTIONS = {
    "overwrite_a": "False",
    "overwrite_b": "False",
    "type": "1",
    "check_finite": "True",
    "subset_by_index": "None",
    "subset_by_value": "None",
    "driver": "None",
}
_EIGH = "a, ans, b, lower, eigvals_only, subset_by_index or subset_by_value"
eigh = vjp_rule(
    "scipy.linalg.eigh",
    [sl.eigh],
    ("a", "b"),
    {"a": f"_ad.sl_eigh_vjp(g, {_EIGH})"},
    [(_SYM,), (_SYM, {"eigvals_only": True}), (_SYM, {"lower": False})],
    defaults={"b": "None"},
    kwonly={"lower": "True", "eigvals_only": "False", **_EIGH_OPTIONS},
    symmetric=("a",),
)
set_jvps(eigh, a=f"_ad.sl_eigh_jvp(t, {_EIGH})")
eigvalsh = vjp_rule(
    "scipy.linalg.eigvalsh",
    [sl.eigvalsh],
    ("a", "b"),
    {"a": "_ad.sl_eigh_vjp(g, a, ans, b, lower, True, subset_by_index or subset_by_value)"},
    [(_SYM,), (_SYM, {"lower": False})],
    defaults={"b": "None"},
    kwonly={"lower": "True", **_EIGH_OPTIONS},
    symmetric=("a",),
)
set_jvps(
    eigvalsh,
    a="_ad.sl_eigh_jvp(t, a, ans, b, lower, True, subset_by_index or subset_by_value)",
)
qr = vjp_rule(
    "scipy.linalg.qr",
    [sl.qr],
    ("a", "overwrite_a", "lwork", "mode", "pivoting", "check_finite"),
    {"a": "_ad.sl_qr_vjp(g, a, ans, mode, pivoting)"},
    [(_M,), (_TALL, {"mode": "economic"}), (_TALL, {"mode": "r"}), (_M, False, None, "r")],
    defaults={
        "overwrite_a": "False",
        "lwork": "None",
        "mode": "'full'",
        "pivoting": "False",
        "check_finite": "True",
    },
)
set_jvps(qr, a="_ad.sl_qr_jvp(t, a, ans, mode, pivoting)")
pinv = vjp_rule(
    "scipy.linalg.pinv",
    [sl.pinv],
    ("a",),
    {"a": "_ad.sl_pinv_vjp(g, a, ans, return_rank)"},
    [(_TALL,), (_WIDE,), (_M, {"atol": 0.0})],
    kwonly={"atol": "None", "rtol": "None", "return_rank": "False", "check_finite": "True"},
)
set_jvps(pinv, a="_ad.sl_pinv_jvp(t, a, ans, return_rank)")
