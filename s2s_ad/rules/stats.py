"""NumPy statistics and polynomials: ``np.average``, ``np.median``, ``np.nansum``,
``np.nanmean`` (and ``nanmax nanmin nanprod nancumsum nanvar nanstd``), ``np.polyval``,
``np.polyder``, ``np.polyint``, ``np.polymul``, ``np.cov``, ``np.corrcoef``.

Templates call the helpers of :mod:`.stats_vjps` as ``_ad.<name>``. Non-differentiable
points follow JAX:

* ``np.median`` gives its gradient to the middle entry of each slice (half to each of the
  two middle entries of an even-length slice); among equal entries, to the one(s)
  ``np.argsort`` (stable) puts in the middle.
* ``np.nansum``, ``np.nanmean`` and the other ``np.nan*`` reductions give NaN entries a
  zero gradient (they are skipped).
* ``np.average(..., returned=True)`` (a tuple) and ``np.cov`` with ``fweights`` or
  ``aweights`` are refused (``TransformError``) when their gradient runs.
"""

from __future__ import annotations

import numpy as np

from .registry import set_jvps, vjp_rule

_V = np.array([0.6, -1.3, 0.9, 2.1])
_V5 = np.array([0.6, -1.3, 0.9, 2.1, -0.2])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)
_WA = np.array([[0.5, 1.5, 1.0], [2.0, 0.3, 0.7]])
_W3 = np.array([0.5, 1.5, 1.0])
_W4 = np.array([0.2, 0.9, 1.3, 0.6])
_NAN = np.array([[0.3, np.nan, 0.8], [1.5, 0.4, np.nan]])
_X = np.array([[0.3, -1.2, 0.8, 0.1, 1.4], [1.5, 0.4, -0.7, 0.9, -0.3], [0.2, 1.1, 0.5, -0.8, 0.6]])
_Y = np.array([0.7, -0.1, 1.3, 0.4, -0.9])

_AVG = "a, axis, weights, returned, keepdims"
average = vjp_rule(
    "np.average",
    [np.average],
    ("a", "axis", "weights", "returned"),
    {
        "a": f"_ad.average_vjp_a(g, {_AVG})",
        "weights": f"_ad.average_vjp_w(g, {_AVG}, ans)",
    },
    [
        (_A,),
        (_V, 0, _W4),
        (_A, None, _WA),
        (_A, 1, _W3),
        (_A, 0, np.array([0.4, 1.7])),
        (_T, (0, 2)),
        (_T, 1, np.array([0.3, 0.8, 1.1]), {"keepdims": True}),
    ],
    defaults={"axis": "None", "weights": "None", "returned": "False"},
    kwonly={"keepdims": "False"},
)
set_jvps(
    average,
    a="np.average(t, axis, weights, keepdims=keepdims)",
    weights="_ad.average_jvp_w(t, a, axis, weights, keepdims, ans)",
)
median = vjp_rule(
    "np.median",
    [np.median],
    ("a", "axis", "out", "overwrite_input", "keepdims"),
    {"a": "_ad.median_vjp(g, a, axis, keepdims)"},
    [(_A,), (_V,), (_V5,), (_A, 1), (_A, 0), (_T, (0, 2)), (_T, {"axis": -1, "keepdims": True})],
    defaults={"axis": "None", "out": "None", "overwrite_input": "False", "keepdims": "False"},
)
set_jvps(median, a="np.sum(t * _ad.median_weights(a, axis), axis, keepdims=keepdims)")
_REDUCE = dict(axis="None", dtype="None", out="None", keepdims="False")
_NAN_SAMPLES = [(_NAN,), (_NAN, 1), (_NAN, 0), (_T,), (_NAN, {"axis": -1, "keepdims": True})]
nansum = vjp_rule(
    "np.nansum",
    [np.nansum],
    ("a", "axis", "dtype", "out", "keepdims"),
    {"a": "_ad.sum_vjp(g, a, axis, keepdims) * _ad.nan_mask(a)"},
    _NAN_SAMPLES,
    defaults=_REDUCE,
)
set_jvps(nansum, a="np.sum(np.where(np.isnan(a), 0.0, t), axis, keepdims=keepdims)")
nanmean = vjp_rule(
    "np.nanmean",
    [np.nanmean],
    ("a", "axis", "dtype", "out", "keepdims"),
    {"a": "_ad.nanmean_vjp(g, a, axis, keepdims)"},
    _NAN_SAMPLES,
    defaults=_REDUCE,
)
set_jvps(
    nanmean,
    a="np.sum(np.where(np.isnan(a), 0.0, t), axis, keepdims=keepdims)"
    " / np.sum(_ad.nan_mask(a), axis, keepdims=keepdims)",
)
polyval = vjp_rule(
    "np.polyval",
    [np.polyval],
    ("p", "x"),
    {"p": "_ad.polyval_vjp_p(g, p, x)", "x": "g * _ad.polyval_dx(p, x)"},
    [(_W3, 0.7), (_V, _A), (np.array([1.3]), _Y), (_W4, _T)],
)
set_jvps(polyval, p="np.polyval(t, x)", x="t * _ad.polyval_dx(p, x)")
# Linear maps of coefficient vectors: polyder multiplies coefficient i by the product of
# the m powers it passes, polyint divides by them (np.polyder and np.polyint of ones give
# those weights); polymul is a convolution, whose transpose is a valid correlation.
polyder = vjp_rule(
    "np.polyder",
    [np.polyder],
    ("p", "m"),
    {
        "p": "(0.0 if _ad.is_zero(g) else np.concatenate([g * np.polyder(np.ones(np.size(p)), m), "
        "np.zeros(m)]))"
    },
    [(_V,), (_V5, 2), (_W3, 1)],
    defaults={"m": "1"},
    linear=True,
)
set_jvps(polyder, p="np.polyder(t, m)")
polyint = vjp_rule(
    "np.polyint",
    [np.polyint],
    ("p", "m", "k"),
    {
        "p": "(0.0 if _ad.is_zero(g) else np.asarray(g)[: np.size(p)] "
        "* np.polyint(np.ones(np.size(p)), m)[: np.size(p)])"
    },
    [(_V,), (_V5, 2), (_W3, 1, 0.5)],
    defaults={"m": "1", "k": "None"},
    linear=True,
)
set_jvps(polyint, p="np.polyint(t, m)")
# np.polymul strips leading zero coefficients (as np.poly1d does), so its result is the
# full convolution without its leading zeros: the cotangent pads back to the full length.
_FULL = "(np.size(a1) - 1 + np.size(a2))"
_G_FULL = f"np.concatenate([np.zeros({_FULL} - np.size(g)), g])"
polymul = vjp_rule(
    "np.polymul",
    [np.polymul],
    ("a1", "a2"),
    {
        "a1": f"(0.0 if _ad.is_zero(g) else np.correlate({_G_FULL}, a2, 'valid'))",
        "a2": f"(0.0 if _ad.is_zero(g) else np.correlate({_G_FULL}, a1, 'valid'))",
    },
    [(_V, _W3), (_W3, _V5), (np.array([1.5]), _V)],
    linear=True,
)
set_jvps(
    polymul,
    a1=f"np.convolve(t, a2)[{_FULL} - np.size(ans) :]",
    a2=f"np.convolve(a1, t)[{_FULL} - np.size(ans) :]",
)
_COV = "m, y, rowvar, bias, ddof, fweights, aweights"
cov = vjp_rule(
    "np.cov",
    [np.cov],
    ("m", "y", "rowvar", "bias", "ddof", "fweights", "aweights"),
    {"m": f"_ad.cov_vjp(g, {_COV}, 0)", "y": f"_ad.cov_vjp(g, {_COV}, 1)"},
    [
        (_X,),
        (_Y,),
        (_X, _Y),
        (_X.T, {"rowvar": False}),
        (_X.T, _Y, False),
        (_X, None, True, True),
        (_X, {"ddof": 2}),
    ],
    defaults={
        "y": "None",
        "rowvar": "True",
        "bias": "False",
        "ddof": "None",
        "fweights": "None",
        "aweights": "None",
    },
    kwonly={"dtype": "None"},
)
set_jvps(cov, m=f"_ad.cov_jvp(t, {_COV}, 0, ans)", y=f"_ad.cov_jvp(t, {_COV}, 1, ans)")
corrcoef = vjp_rule(
    "np.corrcoef",
    [np.corrcoef],
    ("x", "y", "rowvar"),
    {
        "x": "_ad.corrcoef_vjp(g, x, y, rowvar, 0)",
        "y": "_ad.corrcoef_vjp(g, x, y, rowvar, 1)",
    },
    [(_X,), (_X, _Y), (_X.T, {"rowvar": False}), (_Y, _Y * _Y)],
    defaults={"y": "None", "rowvar": "True"},
    kwonly={"dtype": "None"},
)
set_jvps(
    corrcoef,
    x="_ad.corrcoef_jvp(t, x, y, rowvar, 0, ans)",
    y="_ad.corrcoef_jvp(t, x, y, rowvar, 1, ans)",
)

# --- the other NaN-skipping reductions (JAX's tests differentiate them) ---------------------
# NaN entries get a zero gradient, as in np.nansum; a NaN never equals the maximum.
_NAN_MINMAX = dict(axis="None", out="None", keepdims="False")
nanmax = vjp_rule(
    "np.nanmax",
    [np.nanmax],
    ("a", "axis", "out", "keepdims"),
    {"a": "_ad.max_vjp(g, a, ans, axis, keepdims)"},
    _NAN_SAMPLES,
    defaults=_NAN_MINMAX,
)
set_jvps(
    nanmax,
    a="np.sum(np.where(np.isnan(a), 0.0, t) * _ad.max_vjp(1.0, a, ans, axis, keepdims), axis, "
    "keepdims=keepdims)",
)
nanmin = vjp_rule(
    "np.nanmin",
    [np.nanmin],
    ("a", "axis", "out", "keepdims"),
    {"a": "_ad.min_vjp(g, a, ans, axis, keepdims)"},
    _NAN_SAMPLES,
    defaults=_NAN_MINMAX,
)
set_jvps(
    nanmin,
    a="np.sum(np.where(np.isnan(a), 0.0, t) * _ad.min_vjp(1.0, a, ans, axis, keepdims), axis, "
    "keepdims=keepdims)",
)
_ONES_AT_NAN = "np.where(np.isnan(a), 1.0, a)"
nanprod = vjp_rule(
    "np.nanprod",
    [np.nanprod],
    ("a", "axis", "dtype", "out", "keepdims"),
    {"a": f"_ad.prod_vjp(g, {_ONES_AT_NAN}, axis, keepdims) * _ad.nan_mask(a)"},
    _NAN_SAMPLES,
    defaults=_REDUCE,
)
set_jvps(
    nanprod,
    a=f"np.sum(np.where(np.isnan(a), 0.0, t) * _ad.prod_vjp(1.0, {_ONES_AT_NAN}, axis, True), "
    "axis, keepdims=keepdims)",
)
nancumsum = vjp_rule(
    "np.nancumsum",
    [np.nancumsum],
    ("a", "axis", "dtype", "out"),
    {"a": "_ad.cumsum_vjp(g, a, axis) * _ad.nan_mask(a)"},
    [(_NAN,), (_NAN, 1), (_T, 0)],
    defaults={"axis": "None", "dtype": "None", "out": "None"},
    linear=True,
)
set_jvps(nancumsum, a="np.cumsum(np.where(np.isnan(a), 0.0, t), axis)")
# d var = 2 (a - mean) / (count - ddof) on the numbers; d std = d var / (2 std)
_NAN_CENTERED = (
    "(a - np.nanmean(a, axis, keepdims=True)) / (np.sum(_ad.nan_mask(a), axis, keepdims=True)"
    " - ddof)"
)
_NANVAR = dict(axis="None", dtype="None", out="None", ddof="0", keepdims="False")
_NANVAR_SAMPLES = [(_NAN,), (_NAN, 1), (_T, 0), (_NAN, {"axis": 1, "ddof": 1, "keepdims": True})]
nanvar = vjp_rule(
    "np.nanvar",
    [np.nanvar],
    ("a", "axis", "dtype", "out", "ddof", "keepdims"),
    {
        "a": "np.where(np.isnan(a), 0.0, "
        f"_ad.sum_vjp(g, a, axis, keepdims) * (2.0 * {_NAN_CENTERED}))"
    },
    _NANVAR_SAMPLES,
    defaults=_NANVAR,
)
nanstd = vjp_rule(
    "np.nanstd",
    [np.nanstd],
    ("a", "axis", "dtype", "out", "ddof", "keepdims"),
    {
        "a": "np.where(np.isnan(a), 0.0, "
        f"_ad.sum_vjp(g / np.where(ans > 0, ans, np.inf), a, axis, keepdims) * {_NAN_CENTERED})"
    },
    _NANVAR_SAMPLES,
    defaults=_NANVAR,
)
_NAN_DOT = f"np.sum(np.where(np.isnan(a), 0.0, t * {_NAN_CENTERED}), axis, keepdims=keepdims)"
set_jvps(nanvar, a=f"2.0 * {_NAN_DOT}")
set_jvps(nanstd, a=f"{_NAN_DOT} / np.where(ans > 0, ans, np.inf)")
