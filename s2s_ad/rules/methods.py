"""Array methods (``x.sum()``, ``x.reshape(2, 3)``) and attributes (``x.T``).

Method rules are keyed by name; the receiver is the first parameter, ``self``.
Methods whose arguments are variadic (``x.reshape(2, 3)`` or ``x.reshape((2, 3))``,
``x.transpose(1, 0)``) bind the extra positional arguments to ``args`` (a tuple);
their templates only read ``args``, never differentiate it. Samples start with the
receiver; a trailing ``dict`` holds keyword arguments (see :mod:`.arrays`).
"""

from __future__ import annotations

import numpy as np

from .registry import attribute, method, set_jvps

_V = np.array([0.6, -1.3, 0.9, 2.1])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)
_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])

# the cotangent may be the symbolic zero 0.0 (second order: a copy of a reset adjoint)
_BACK = "np.reshape(_ad.materialize(g, self), np.shape(self))"
_REDUCE = ("self", "axis", "dtype", "out", "keepdims")
_REDUCE_DEFAULTS = {"axis": "None", "dtype": "None", "out": "None", "keepdims": "False"}
_MINMAX = ("self", "axis", "out", "keepdims")
_MINMAX_DEFAULTS = {"axis": "None", "out": "None", "keepdims": "False"}
_VAR = ("self", "axis", "dtype", "out", "ddof", "keepdims")
_VAR_DEFAULTS = {**_REDUCE_DEFAULTS, "ddof": "0"}
# n = size(self) / size(ans) elements per slice; std is zero-gradient where it is zero.
_CENTERED_DOT = "np.sum((self - np.mean(self, axis, keepdims=True)) * t, axis, keepdims=keepdims)"
_VAR_JVP = _CENTERED_DOT + " * (2.0 / (np.size(self) / np.size(ans) - ddof))"
_STD_JVP = (
    _CENTERED_DOT + " / np.where(ans > 0, (np.size(self) / np.size(ans) - ddof) * ans, np.inf)"
)
_SAMPLES = [(_A,), (_V,), (_A, 1), (_T, (0, 2)), (_T, {"axis": -1, "keepdims": True})]
_KW = [{"axis": 0}, {"axis": 1, "keepdims": True}]

# --- reductions --------------------------------------------------------------------------

_rule = method(
    "sum",
    _REDUCE,
    {"self": "_ad.sum_vjp(g, self, axis, keepdims)"},
    _SAMPLES,
    defaults=_REDUCE_DEFAULTS,
    kw_samples=_KW,
)
set_jvps(_rule, self="np.sum(t, axis, keepdims=keepdims)")
_rule = method(
    "mean",
    _REDUCE,
    {"self": "_ad.mean_vjp(g, self, axis, keepdims)"},
    _SAMPLES,
    defaults=_REDUCE_DEFAULTS,
    kw_samples=_KW,
)
set_jvps(_rule, self="np.mean(t, axis, keepdims=keepdims)")
_rule = method(
    "prod",
    _REDUCE,
    {"self": "_ad.prod_vjp(g, self, axis, keepdims)"},
    _SAMPLES,
    defaults=_REDUCE_DEFAULTS,
    kw_samples=_KW,
)
set_jvps(_rule, self="np.sum(t * _ad.prod_vjp(1.0, self, axis, True), axis, keepdims=keepdims)")
_rule = method(
    "max",
    _MINMAX,
    {"self": "_ad.max_vjp(g, self, ans, axis, keepdims)"},
    _SAMPLES,
    defaults=_MINMAX_DEFAULTS,
    kw_samples=_KW,
)
set_jvps(
    _rule, self="np.sum(t * _ad.max_vjp(1.0, self, ans, axis, keepdims), axis, keepdims=keepdims)"
)
_rule = method(
    "min",
    _MINMAX,
    {"self": "_ad.min_vjp(g, self, ans, axis, keepdims)"},
    _SAMPLES,
    defaults=_MINMAX_DEFAULTS,
    kw_samples=_KW,
)
set_jvps(
    _rule, self="np.sum(t * _ad.min_vjp(1.0, self, ans, axis, keepdims), axis, keepdims=keepdims)"
)
_rule = method(
    "var",
    _VAR,
    {"self": "_ad.var_vjp(g, self, axis, ddof, keepdims)"},
    _SAMPLES + [(_A, {"ddof": 1})],
    defaults=_VAR_DEFAULTS,
    kw_samples=_KW,
)
set_jvps(_rule, self=_VAR_JVP)
_rule = method(
    "std",
    _VAR,
    {"self": "_ad.std_vjp(g, self, ans, axis, ddof, keepdims)"},
    _SAMPLES + [(_A, {"ddof": 1})],
    defaults=_VAR_DEFAULTS,
    kw_samples=_KW,
)
set_jvps(_rule, self=_STD_JVP)
_rule = method(
    "cumsum",
    ("self", "axis", "dtype", "out"),
    {"self": "_ad.cumsum_vjp(g, self, axis)"},
    [(_A,), (_T, 1)],
    defaults={"axis": "None", "dtype": "None", "out": "None"},
)
set_jvps(_rule, self="np.cumsum(t, axis)")
_rule = method(
    "cumprod",
    ("self", "axis", "dtype", "out"),
    {"self": "_ad.cumprod_vjp(g, self, axis)"},
    [(_A,), (_T, 1), (np.array([[0.0, 1.2, -0.8], [1.5, 0.0, 0.0]]), 1)],
    defaults={"axis": "None", "dtype": "None", "out": "None"},
)
set_jvps(_rule, self="_ad.cumprod_jvp(t, self, axis)")
_rule = method(
    "take",
    ("self", "indices", "axis", "out", "mode"),
    {"self": "_ad.take_vjp(g, self, indices, axis, mode)"},
    [(_A, [0, 2, 2, 5]), (_A, np.array([[1, 0], [2, 2]]), 1), (_V, [-1, 7], None, None, "clip")],
    defaults={"axis": "None", "out": "None", "mode": "'raise'"},
)
set_jvps(_rule, self="np.take(t, indices, axis, None, mode)")
_rule = method(
    "compress",
    ("self", "condition", "axis", "out"),
    {"self": "_ad.take_vjp(g, self, np.flatnonzero(condition), axis)"},
    [(_A, [True, False, True], 1), (_A, [False, True]), (_T, np.array([1, 0]), 0)],
    defaults={"axis": "None", "out": "None"},
)
set_jvps(_rule, self="np.compress(condition, t, axis)")
_rule = method(
    "trace",
    ("self", "offset", "axis1", "axis2", "dtype", "out"),
    {"self": "_ad.trace_vjp(g, self, offset, axis1, axis2)"},
    [(_M,), (_T, 0, 2, 1)],
    defaults={"offset": "0", "axis1": "0", "axis2": "1", "dtype": "None", "out": "None"},
)
set_jvps(_rule, self="np.trace(t, offset, axis1, axis2)")
_rule = method(
    "diagonal",
    ("self", "offset", "axis1", "axis2"),
    {"self": "_ad.diagonal_vjp(g, self, offset, axis1, axis2)"},
    [(_M,), (_A, 1)],
    defaults={"offset": "0", "axis1": "0", "axis2": "1"},
)
set_jvps(_rule, self="np.diagonal(t, offset, axis1, axis2)")

# --- shape ------------------------------------------------------------------------------

_rule = method(
    "reshape", ("self",), {"self": _BACK}, [(_A, 3, 2), (_A, (6,)), (_T, -1, 4)], varargs=True
)
set_jvps(_rule, self="np.reshape(t, np.shape(ans))")
_rule = method(
    "transpose",
    ("self",),
    {"self": "_ad.transpose_vjp(g, args)"},
    [(_A,), (_T, 2, 0, 1), (_T, (1, 2, 0)), (_T, None)],
    varargs=True,
)
set_jvps(_rule, self="np.asarray(t).transpose(*args)")
_rule = method(
    "swapaxes", ("self", "axis1", "axis2"), {"self": "np.swapaxes(g, axis1, axis2)"}, [(_T, 0, 2)]
)
set_jvps(_rule, self="np.swapaxes(t, axis1, axis2)")
_rule = method("ravel", ("self",), {"self": _BACK}, [(_A,)])
set_jvps(_rule, self="np.ravel(t)")
_rule = method("flatten", ("self",), {"self": _BACK}, [(_T,)])
set_jvps(_rule, self="np.ravel(t)")
_rule = method(
    "squeeze",
    ("self", "axis"),
    {"self": _BACK},
    [(_A[None],), (_A[:, None], 1)],
    defaults={"axis": "None"},
)
set_jvps(_rule, self="np.squeeze(t, axis)")
_rule = method(
    "repeat",
    ("self", "repeats", "axis"),
    {"self": "_ad.repeat_vjp(g, self, repeats, axis)"},
    [(_A, 2), (_A, 2, 0)],
    defaults={"axis": "None"},
)
set_jvps(_rule, self="np.repeat(t, repeats, axis)")

# --- copies, conversions, products ------------------------------------------------------

_rule = method("copy", ("self", "order"), {"self": "g"}, [(_A,)], defaults={"order": "'C'"})
set_jvps(_rule, self="_ad.copy(t)")  # a dict or list too (d.copy())
for _name in ("conj", "conjugate"):  # of a real array (complex ones are refused): itself
    _rule = method(_name, ("self",), {"self": "g"}, [(_A,)])
    set_jvps(_rule, self="t")
_rule = method(
    "astype",
    ("self", "dtype", "order", "casting", "subok", "copy"),
    {"self": "_ad.astype_vjp(g, self, dtype)"},
    [(_A, np.float64), (_A, "float64")],
    defaults={"order": "'K'", "casting": "'unsafe'", "subok": "True", "copy": "True"},
)
set_jvps(_rule, self="t * np.issubdtype(np.dtype(dtype), np.inexact)")
_rule = method(
    "item",
    ("self",),
    {"self": "_ad.item_vjp(g, self, args)"},
    [(_A, 4), (_A, 1, 2), (_V[1:2],), (_A, (0, 1))],
    varargs=True,
)
set_jvps(_rule, self="np.asarray(t).item(*args)")
_rule = method("tolist", ("self",), {"self": "_ad.tolist_vjp(g, self)"}, [(_A,), (_V,)])
set_jvps(_rule, self="np.asarray(t).tolist()")
_rule = method(
    "dot",
    ("self", "b", "out"),
    {"self": "_ad.dot_vjp_a(g, self, b)", "b": "_ad.dot_vjp_b(g, self, b)"},
    [(_A, _M), (_V, _V[::-1]), (_T, _V)],
    defaults={"out": "None"},
)
set_jvps(_rule, self="np.dot(t, b)", b="np.dot(self, t)")
_rule = method(
    "clip",
    ("self", "min", "max"),
    {
        "self": "_ad.unbroadcast(g * _ad.clip_mask(self, min, max), self)",
        "min": "_ad.unbroadcast(g * _ad.clip_mask(self, min, max, 'a_min'), min)",
        "max": "_ad.unbroadcast(g * _ad.clip_mask(self, min, max, 'a_max'), max)",
    },
    [
        (_A, -0.5, 1.0),
        (_A, None, 0.5),
        (_A, {"min": np.array([-1.0, 0.0, 0.5])}),
        (_A, np.array([-1.0, 0.5, 2.5]), np.array([1.7, 0.8, 0.3])),  # crossed bounds
    ],
    defaults={"min": "None", "max": "None"},
)
set_jvps(
    _rule,
    self="t * _ad.clip_mask(self, min, max)",
    min="t * _ad.clip_mask(self, min, max, 'a_min')",
    max="t * _ad.clip_mask(self, min, max, 'a_max')",
)

# --- no gradient ---------------------------------------------------------------------------

for _name, _params, _defaults in [
    ("argmax", ("self", "axis", "out", "keepdims"), _MINMAX_DEFAULTS),
    ("argmin", ("self", "axis", "out", "keepdims"), _MINMAX_DEFAULTS),
    ("argsort", ("self", "axis", "kind", "order"), {"axis": "-1", "kind": "None", "order": "None"}),
    ("nonzero", ("self",), {}),
    ("any", ("self", "axis", "out", "keepdims"), _MINMAX_DEFAULTS),
    ("all", ("self", "axis", "out", "keepdims"), _MINMAX_DEFAULTS),
    ("round", ("self", "decimals", "out"), {"decimals": "0", "out": "None"}),
    ("searchsorted", ("self", "v", "side", "sorter"), {"side": "'left'", "sorter": "None"}),
]:
    method(_name, _params, {}, [], defaults=_defaults, nondiff=True)

# --- attributes ----------------------------------------------------------------------------

# (a tangent restored from a tape may be the symbolic zero: transposed, it would be a 0-d
# array that is not recognised as zero any more)
set_jvps(
    attribute("T", "np.transpose(g)", [(_A,), (_T,)]),
    self="np.transpose(_ad.materialize(t, self))",
)
set_jvps(attribute("mT", "_ad.mT(g)", [(_T,)]), self="_ad.mT(_ad.materialize(t, self))")
set_jvps(attribute("real", "g", [(_A,)]), self="np.real(t)")
# ``M.flat[i]`` reads (an iterator over the entries in C order, indexed like ``M.ravel()``)
set_jvps(
    attribute("flat", "np.reshape(g, np.shape(self))", [(_A,), (_T,)]),
    self="np.ravel(_ad.materialize(t, self))",
)
for _name in ("shape", "ndim", "size", "dtype", "nbytes", "itemsize", "strides"):
    attribute(_name, None)
