"""NumPy functions that are not elementwise: reductions, linear algebra, shape ops.

Parameters are NumPy's own names, in NumPy's positional order (call sites bind by
position and by keyword), with NumPy's defaults as source text. Templates call the
helpers of :mod:`.vjps` as ``_ad.<name>``.

Conventions beyond one-array-in, one-adjoint-out:

* **Sequence parameters** (``np.concatenate(arrays)``, ``np.stack``, ``np.hstack``,
  ``np.vstack``, ``np.array(object)`` of a list): the template returns the adjoints in
  the container type of the argument (a list for a list, a tuple for a tuple, an array
  for an array), element ``i`` being the adjoint of element ``i``.
* **Varargs** (``np.einsum(subscripts, *operands)``): extra positional arguments are
  bound to the name ``args`` (a tuple), and the template under the key ``"args"``
  returns a tuple with one adjoint per extra argument, in order.
* **Samples**: each sample is a tuple of positional arguments; a trailing ``dict`` holds
  keyword arguments. Each entry of ``kw_samples`` is called with the positional
  arguments of the first sample. Every reduction has an ``axis`` and a
  ``keepdims=True`` sample.
* ``out=`` is listed so that positional binding matches NumPy, but never differentiated.
"""

from __future__ import annotations

import numpy as np

from .registry import elementwise, nondiff, set_jvps, vjp_rule

_V = np.array([0.6, -1.3, 0.9, 2.1])
_W = np.array([1.1, -0.4, 0.7])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_B = np.array([[0.5, -0.3, 1.1, 0.2], [1.4, 0.6, -0.9, 0.8], [-0.2, 0.7, 0.3, -1.0]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)
_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
_MS = np.stack([_M, _M.T + np.eye(3) * 0.5])
_ZEROS = np.array([[0.0, 1.2, -0.8], [1.5, 0.0, 0.0]])

_REDUCE = dict(axis="None", dtype="None", out="None", keepdims="False")
_REDUCE_KW = [{"axis": 0}, {"axis": 1, "keepdims": True}, {"axis": (0, 1), "keepdims": True}]
_REDUCE_SAMPLES = [
    (_A,),
    (_V,),
    (1.5,),
    (_A, 1),
    (_T, {"axis": (0, 2)}),
    (_T, {"axis": -1, "keepdims": True}),
]

# --- reductions ----------------------------------------------------------------------

# ``initial=`` adds a constant. (``where=`` is refused: a conditional template would keep
# the batched backward sweep of ``reverse_batch`` from recognizing ``_ad.sum_vjp``.)
sum_ = vjp_rule(
    "np.sum",
    [np.sum],
    ("a", "axis", "dtype", "out", "keepdims", "initial"),
    {"a": "_ad.sum_vjp(g, a, axis, keepdims)"},
    _REDUCE_SAMPLES + [(_A, 1, None, None, False, 2.5)],
    defaults=dict(_REDUCE, initial="np._NoValue"),
    kw_samples=_REDUCE_KW,
    linear=True,
)
set_jvps(sum_, a="np.sum(t, axis, keepdims=keepdims)")
mean = vjp_rule(
    "np.mean",
    [np.mean],
    ("a", "axis", "dtype", "out", "keepdims"),
    {"a": "_ad.mean_vjp(g, a, axis, keepdims)"},
    _REDUCE_SAMPLES,
    defaults=_REDUCE,
    kw_samples=_REDUCE_KW,
    linear=True,
)
set_jvps(mean, a="np.mean(t, axis, keepdims=keepdims)")
prod = vjp_rule(
    "np.prod",
    [np.prod],
    ("a", "axis", "dtype", "out", "keepdims"),
    {"a": "_ad.prod_vjp(g, a, axis, keepdims)"},
    _REDUCE_SAMPLES + [(_ZEROS,), (_ZEROS, 1)],
    defaults=_REDUCE,
    kw_samples=_REDUCE_KW,
)
set_jvps(prod, a="np.sum(t * _ad.prod_vjp(1.0, a, axis, True), axis, keepdims=keepdims)")
# ``initial=`` may be the extremum: then no entry is, and none gets a gradient.
_MINMAX = dict(axis="None", out="None", keepdims="False", initial="np._NoValue")
_EXTREME_SAMPLES = _REDUCE_SAMPLES + [(_A, 0, None, False, 1.0), (_T, {"axis": 1, "initial": 0.5})]
amax = vjp_rule(
    "np.max",
    [np.max, np.amax],
    ("a", "axis", "out", "keepdims", "initial"),
    {"a": "_ad.max_vjp(g, a, ans, axis, keepdims)"},
    _EXTREME_SAMPLES,
    defaults=_MINMAX,
    kw_samples=_REDUCE_KW,
)
set_jvps(amax, a="np.sum(t * _ad.max_vjp(1.0, a, ans, axis, keepdims), axis, keepdims=keepdims)")
amin = vjp_rule(
    "np.min",
    [np.min, np.amin],
    ("a", "axis", "out", "keepdims", "initial"),
    {"a": "_ad.min_vjp(g, a, ans, axis, keepdims)"},
    _EXTREME_SAMPLES,
    defaults=_MINMAX,
    kw_samples=_REDUCE_KW,
)
set_jvps(amin, a="np.sum(t * _ad.min_vjp(1.0, a, ans, axis, keepdims), axis, keepdims=keepdims)")
# n = size(a) / size(ans) elements per slice; std is zero-gradient where it is zero.
_CENTERED_DOT = "np.sum((a - np.mean(a, axis, keepdims=True)) * t, axis, keepdims=keepdims)"
_VAR_JVP = _CENTERED_DOT + " * (2.0 / (np.size(a) / np.size(ans) - ddof))"
_STD_JVP = _CENTERED_DOT + " / np.where(ans > 0, (np.size(a) / np.size(ans) - ddof) * ans, np.inf)"
_VAR = dict(axis="None", dtype="None", out="None", ddof="0", keepdims="False")
_VAR_SAMPLES = [(_A,), (_V,), (_T, {"axis": (0, 2), "ddof": 1}), (_A, 1, None, None, 1, True)]
var = vjp_rule(
    "np.var",
    [np.var],
    ("a", "axis", "dtype", "out", "ddof", "keepdims"),
    {"a": "_ad.var_vjp(g, a, axis, ddof, keepdims)"},
    _VAR_SAMPLES,
    defaults=_VAR,
    kw_samples=_REDUCE_KW,
)
set_jvps(var, a=_VAR_JVP)
std = vjp_rule(
    "np.std",
    [np.std],
    ("a", "axis", "dtype", "out", "ddof", "keepdims"),
    {"a": "_ad.std_vjp(g, a, ans, axis, ddof, keepdims)"},
    _VAR_SAMPLES,
    defaults=_VAR,
    kw_samples=_REDUCE_KW,
)
set_jvps(std, a=_STD_JVP)
norm = vjp_rule(
    "np.linalg.norm",
    [np.linalg.norm],
    ("x", "ord", "axis", "keepdims"),
    {"x": "_ad.norm_vjp(g, x, ans, ord, axis, keepdims)"},
    [
        (_A,),
        (_V,),
        (_V, 1),
        (_V, np.inf),
        (_V, -np.inf),
        (_V, 3),
        (_V, 0.5),
        (_A, "fro"),
        (_A, "nuc"),
        (_A, 2),
        (_A, -2),
        (_A, 1),
        (_A, -1),
        (_A, np.inf),
        (_A, -np.inf),
        (_T,),
        (_A, None, 1),
        (_A, 1, 0, True),
        (_T, None, (1, 2)),
        (_T, "nuc", (2, 0)),
        (_T, 2, (0, 1), True),
        (_T, {"ord": np.inf, "axis": -1}),
        (_A, "fro", (0, 1)),
        (_A, "nuc", (1, 0)),
    ],
    defaults={"ord": "None", "axis": "None", "keepdims": "False"},
    kw_samples=[{"axis": 1}, {"axis": 0, "keepdims": True}, {"axis": (0, 1), "keepdims": True}],
)
set_jvps(
    norm,
    x="np.sum(t * _ad.norm_vjp(np.ones(np.shape(ans)), x, ans, ord, axis, keepdims), axis, "
    "keepdims=keepdims)",
)
cumsum = vjp_rule(
    "np.cumsum",
    [np.cumsum],
    ("a", "axis", "dtype", "out"),
    {"a": "_ad.cumsum_vjp(g, a, axis)"},
    [(_A,), (_T, 1), (_V, {"axis": -1})],
    defaults={"axis": "None", "dtype": "None", "out": "None"},
    linear=True,
)
set_jvps(cumsum, a="np.cumsum(t, axis)")
sort = vjp_rule(
    "np.sort",
    [np.sort],
    ("a", "axis", "kind", "order"),
    {"a": "_ad.sort_vjp(g, a, axis)"},
    [(_V,), (_A, 0), (_T, None), (_T, {"axis": 1})],
    defaults={"axis": "-1", "kind": "None", "order": "None"},
)
set_jvps(sort, a="np.take_along_axis(np.asarray(t), np.argsort(a, axis, 'stable'), axis)")

# ``ufunc.reduce`` is a new bound method at each attribute access, so ``REGISTRY.lookup``
# must match these by ``(func.__self__, func.__name__)`` rather than by identity.
_UFUNC_REDUCE = ("array", "axis", "dtype", "out", "keepdims")
_UFUNC_DEFAULTS = {"axis": "0", "dtype": "None", "out": "None", "keepdims": "False"}
_UFUNC_SAMPLES = [(_A,), (_V,), (_T, 1), (_T, None), (_T, {"axis": (0, 2), "keepdims": True})]
# Their JVPs weigh ``t`` by the VJP of a unit cotangent (exact at zeros and ties).
_ONES = "np.ones(np.shape(ans))"
for _ufunc, _template, _jvp in [
    (
        np.logaddexp,
        "_ad.logsumexp_vjp(g, array, ans, axis, keepdims)",
        f"np.sum(t * _ad.logsumexp_vjp({_ONES}, array, ans, axis, keepdims), axis, "
        "keepdims=keepdims)",
    ),
    (np.add, "_ad.sum_vjp(g, array, axis, keepdims)", "np.sum(t, axis, keepdims=keepdims)"),
    (
        np.multiply,
        "_ad.prod_vjp(g, array, axis, keepdims)",
        "np.sum(t * _ad.prod_vjp(1.0, array, axis, True), axis, keepdims=keepdims)",
    ),
    (
        np.maximum,
        "_ad.max_vjp(g, array, ans, axis, keepdims)",
        "np.sum(t * _ad.max_vjp(1.0, array, ans, axis, keepdims), axis, keepdims=keepdims)",
    ),
    (
        np.minimum,
        "_ad.min_vjp(g, array, ans, axis, keepdims)",
        "np.sum(t * _ad.min_vjp(1.0, array, ans, axis, keepdims), axis, keepdims=keepdims)",
    ),
]:
    _rule = vjp_rule(
        f"np.{_ufunc.__name__}.reduce",
        [_ufunc.reduce],
        _UFUNC_REDUCE,
        {"array": _template},
        _UFUNC_SAMPLES,
        defaults=_UFUNC_DEFAULTS,
        kw_samples=[{"axis": 1, "keepdims": True}],
        linear=_ufunc is np.add,
    )
    set_jvps(_rule, array=_jvp)

# --- linear algebra --------------------------------------------------------------------

dot = vjp_rule(
    "np.dot",
    [np.dot],
    ("a", "b", "out"),
    {"a": "_ad.dot_vjp_a(g, a, b)", "b": "_ad.dot_vjp_b(g, a, b)"},
    [
        (_W, _W[::-1]),
        (_A, _W),
        (_W[:2], _A),
        (_A, _B),
        (_T, _V),
        (_T, _B.T @ _B[:, :3]),
        (1.5, _A),
        (_A, 2.0),
        (_T, np.sin(np.arange(60.0)).reshape(3, 4, 5)),
    ],
    defaults={"out": "None"},
    linear=True,
)
set_jvps(dot, a="np.dot(t, b)", b="np.dot(a, t)")
vdot = vjp_rule(
    "np.vdot",
    [np.vdot],
    ("a", "b"),
    {
        "a": "np.reshape(g * np.ravel(b), np.shape(a))",
        "b": "np.reshape(g * np.ravel(a), np.shape(b))",
    },
    [(_W, _W[::-1]), (_A, _A[::-1])],
    linear=True,
)
set_jvps(vdot, a="np.vdot(t, b)", b="np.vdot(a, t)")
tensordot = vjp_rule(
    "np.tensordot",
    [np.tensordot],
    ("a", "b", "axes"),
    {"a": "_ad.tensordot_vjp_a(g, a, b, axes)", "b": "_ad.tensordot_vjp_b(g, a, b, axes)"},
    [
        (_T, np.cos(np.arange(24.0)).reshape(3, 4, 2) + 0.1),
        (_A, _B, 1),
        (_W, _A, 0),
        (_T, np.cos(np.arange(60.0)).reshape(4, 3, 5), ([1, 2], [1, 0])),
        (_T, np.cos(np.arange(15.0)).reshape(3, 5), (1, 0)),
    ],
    defaults={"axes": "2"},
    linear=True,
)
set_jvps(tensordot, a="np.tensordot(t, b, axes)", b="np.tensordot(a, t, axes)")
einsum = vjp_rule(
    "np.einsum",
    [np.einsum],
    ("subscripts",),
    {
        # the interleaved form np.einsum(x, [0, 1], y, [1, 2]) has an operand first
        "subscripts": "_ad.einsum_parts_vjp(g, subscripts, args)[0]",
        "args": "_ad.einsum_parts_vjp(g, subscripts, args)[1:]",
    },
    [
        ("ij,jk->ik", _A, _B),
        ("ij,ij->", _A, _A[::-1]),
        ("ii->", _M),
        ("ii->i", _M),
        ("ij->", _A),
        ("i,j", _W, _V),
        ("ji", _A),
        ("...ij,...jk->...ik", _MS, _B[:, :2]),
        ("bij,jk", _T, _B.T),
        ("i,i", _W, _W + 1.0),
        ("ij,j->i", _A, _W),
        ("iij->j", _MS.T),
        ("ij,kj->jik", _A, _B[:, :3]),
        ("i,i->i", _W, np.array([2.0])),
        (_A, [0, 1], _B, [1, 2], [0, 2]),
        (_MS, [Ellipsis, 0, 1], _B[:, :2], [1, 2]),
        (_M, [0, 0]),
    ],
    varargs=True,
    kwonly={"optimize": "False"},  # the contraction order changes no value
    linear=True,
)
# One einsum per differentiated operand (``t`` holds 0.0 for the others).
set_jvps(
    einsum,
    subscripts="np.einsum(t, *args)",
    args="np.sum([np.einsum(subscripts, *(args[:i] + (ti,) + args[i + 1 :])) "
    "for i, ti in enumerate(t) if not _ad.is_zero(ti)], 0)",
)
outer = vjp_rule(
    "np.outer",
    [np.outer],
    ("a", "b", "out"),
    {
        "a": "(0.0 if _ad.is_zero(g) else np.reshape(g @ np.ravel(b), np.shape(a)))",
        "b": "(0.0 if _ad.is_zero(g) else np.reshape(np.ravel(a) @ g, np.shape(b)))",
    },
    [(_W, _V), (_A, _W)],
    defaults={"out": "None"},
    linear=True,
)
set_jvps(outer, a="np.outer(t, b)", b="np.outer(a, t)")
inner = vjp_rule(
    "np.inner",
    [np.inner],
    ("a", "b"),
    {"a": "_ad.inner_vjp_a(g, a, b)", "b": "_ad.inner_vjp_b(g, a, b)"},
    [(_W, _W[::-1]), (_A, _B.T), (_T, _V), (1.5, _A)],
    linear=True,
)
set_jvps(inner, a="np.inner(t, b)", b="np.inner(a, t)")
_TRACE = {"offset": "0", "axis1": "0", "axis2": "1"}
trace = vjp_rule(
    "np.trace",
    [np.trace],
    ("a", "offset", "axis1", "axis2", "dtype", "out"),
    {"a": "_ad.trace_vjp(g, a, offset, axis1, axis2)"},
    [(_M,), (_A, 1), (_A, -1), (_T, 0, 1, 2), (_T, {"axis1": 2, "axis2": 0})],
    defaults={**_TRACE, "dtype": "None", "out": "None"},
    linear=True,
)
set_jvps(trace, a="np.trace(t, offset, axis1, axis2)")
diagonal = vjp_rule(
    "np.diagonal",
    [np.diagonal],
    ("a", "offset", "axis1", "axis2"),
    {"a": "_ad.diagonal_vjp(g, a, offset, axis1, axis2)"},
    [(_M,), (_B, 1), (_T, -1, 2, 1)],
    defaults=_TRACE,
    linear=True,
)
set_jvps(diagonal, a="np.diagonal(t, offset, axis1, axis2)")
diag = vjp_rule(
    "np.diag",
    [np.diag],
    ("v", "k"),
    {"v": "_ad.diag_vjp(g, v, k)"},
    [(_W,), (_W, -1), (_B,), (_B, 2), (_A, -1)],
    defaults={"k": "0"},
    linear=True,
)
set_jvps(diag, v="np.diag(t, k)")
triu = vjp_rule(
    "np.triu",
    [np.triu],
    ("m", "k"),
    {"m": "np.triu(g, k)"},
    [(_M,), (_B, -1)],
    defaults={"k": "0"},
    linear=True,
)
set_jvps(triu, m="np.triu(t, k)")
tril = vjp_rule(
    "np.tril",
    [np.tril],
    ("m", "k"),
    {"m": "np.tril(g, k)"},
    [(_M,), (_B, 1)],
    defaults={"k": "0"},
    linear=True,
)
set_jvps(tril, m="np.tril(t, k)")
inv = vjp_rule(
    "np.linalg.inv",
    [np.linalg.inv],
    ("a",),
    {"a": "(0.0 if _ad.is_zero(g) else -_ad.mT(ans) @ g @ _ad.mT(ans))"},
    [(_M,), (_MS,)],
)
set_jvps(inv, a="-ans @ t @ ans")
det = vjp_rule(
    "np.linalg.det", [np.linalg.det], ("a",), {"a": "_ad.det_vjp(g, a, ans)"}, [(_M,), (_MS,)]
)
set_jvps(det, a="ans * np.trace(np.linalg.solve(a, t), 0, -2, -1)")
solve = vjp_rule(
    "np.linalg.solve",
    [np.linalg.solve],
    ("a", "b"),
    {"a": "_ad.solve_vjp_a(g, a, b, ans)", "b": "_ad.solve_vjp_b(g, a, b)"},
    [(_M, _W), (_M, _B[:, :2]), (_MS, _B[None, :, 1:]), (_MS, _W)],
)
# d(a^-1 b) = a^-1 (db - da x); a 1-D ``b`` is one vector (NumPy 2), made a column here.
set_jvps(
    solve,
    a="-np.reshape(np.linalg.solve(a, t @ (ans[..., None] if np.ndim(b) == 1 else ans)), "
    "np.shape(ans))",
    b="np.linalg.solve(a, t)",
)

# --- shape operations --------------------------------------------------------------------

# the cotangent may be the symbolic zero 0.0 (second order: a copy of a reset adjoint)
_BACK = "np.reshape(_ad.materialize(g, a), np.shape(a))"
transpose = vjp_rule(
    "np.transpose",
    [np.transpose],
    ("a", "axes"),
    {"a": "_ad.transpose_vjp(g, axes)"},
    [(_A,), (_T,), (_T, (2, 0, 1)), (_T, [1, -1, 0])],
    defaults={"axes": "None"},
    linear=True,
)
set_jvps(transpose, a="np.transpose(t, axes)")
swapaxes = vjp_rule(
    "np.swapaxes",
    [np.swapaxes],
    ("a", "axis1", "axis2"),
    {"a": "np.swapaxes(_ad.materialize(g, ans), axis1, axis2)"},
    [(_A, 0, 1), (_T, -1, 0)],
    linear=True,
)
set_jvps(swapaxes, a="np.swapaxes(t, axis1, axis2)")
moveaxis = vjp_rule(
    "np.moveaxis",
    [np.moveaxis],
    ("a", "source", "destination"),
    {"a": "np.moveaxis(_ad.materialize(g, ans), destination, source)"},
    [(_T, 0, -1), (_T, (0, 1), (2, 0))],
    linear=True,
)
set_jvps(moveaxis, a="np.moveaxis(t, source, destination)")
reshape = vjp_rule(
    "np.reshape",
    [np.reshape],
    ("a", "shape"),
    {"a": _BACK},
    [(_A, (3, 2)), (_T, -1), (_V, (2, 1, 2)), (_A, {"shape": (6,)})],
    linear=True,
)
set_jvps(reshape, a="np.reshape(t, shape)")
ravel = vjp_rule("np.ravel", [np.ravel], ("a",), {"a": _BACK}, [(_A,), (_T,)], linear=True)
set_jvps(ravel, a="np.ravel(t)")
expand_dims = vjp_rule(
    "np.expand_dims",
    [np.expand_dims],
    ("a", "axis"),
    {"a": _BACK},
    [(_A, 0), (_A, -1), (_W, (0, 2))],
    linear=True,
)
set_jvps(expand_dims, a="np.expand_dims(t, axis)")
squeeze = vjp_rule(
    "np.squeeze",
    [np.squeeze],
    ("a", "axis"),
    {"a": _BACK},
    [(_A[:, None, :],), (_W[None, :, None], 0)],
    defaults={"axis": "None"},
    linear=True,
)
set_jvps(squeeze, a="np.squeeze(t, axis)")
concatenate = vjp_rule(
    "np.concatenate",
    [np.concatenate],
    ("arrays", "axis", "out"),
    {"arrays": "_ad.concatenate_vjp(g, arrays, axis)"},
    [([_W, _V],), ((_A, _B.T[:2]), 1), ([_A, _B[:, :3]], 0), ([_A, _W], None), (_A, 0), (_T, -1)],
    defaults={"axis": "0", "out": "None"},
    linear=True,
)
set_jvps(concatenate, arrays="np.concatenate(_ad.add(t, _ad.zeros_like(arrays)), axis)")
stack = vjp_rule(
    "np.stack",
    [np.stack],
    ("arrays", "axis", "out"),
    {"arrays": "_ad.stack_vjp(g, arrays, axis)"},
    [([_W, _W * 2.0],), ((_A, _A[::-1]), -1), ([1.5, -0.5, 2.0],), (_A, 1)],
    defaults={"axis": "0", "out": "None"},
    linear=True,
)
set_jvps(stack, arrays="np.stack(_ad.add(t, _ad.zeros_like(arrays)), axis)")
hstack = vjp_rule(
    "np.hstack",
    [np.hstack],
    ("tup",),
    {"tup": "_ad.hstack_vjp(g, tup)"},
    [([_W, _V],), ((_A, _B[:2]),), ([1.5, _W],)],
    linear=True,
)
set_jvps(hstack, tup="np.hstack(_ad.add(t, _ad.zeros_like(tup)))")
vstack = vjp_rule(
    "np.vstack",
    [np.vstack],
    ("tup",),
    {"tup": "_ad.vstack_vjp(g, tup)"},
    [([_W, _W[::-1]],), ((_A, _B.T),), ([_V, _B[0]],)],
    linear=True,
)
set_jvps(vstack, tup="np.vstack(_ad.add(t, _ad.zeros_like(tup)))")
broadcast_to = vjp_rule(
    "np.broadcast_to",
    [np.broadcast_to],
    ("array", "shape", "subok"),
    {"array": "_ad.unbroadcast(g, array)"},
    [(_W, (2, 3)), (_A[:, :1], (4, 2, 3)), (1.5, (2,))],
    defaults={"subok": "False"},
    linear=True,
)
set_jvps(broadcast_to, array="np.broadcast_to(t, shape)")
tile = vjp_rule(
    "np.tile",
    [np.tile],
    ("A", "reps"),
    {"A": "_ad.tile_vjp(g, A, reps)"},
    [(_W, 2), (_A, (2, 1, 3)), (_T, (2, 1)), (1.5, 3)],
    linear=True,
)
set_jvps(tile, A="np.tile(t, reps)")
repeat = vjp_rule(
    "np.repeat",
    [np.repeat],
    ("a", "repeats", "axis"),
    {"a": "_ad.repeat_vjp(g, a, repeats, axis)"},
    [(_A, 2), (_A, 3, 1), (_A, [1, 0, 2], -1), (_W, np.array([2, 1, 3])), (1.5, 2)],
    defaults={"axis": "None"},
    linear=True,
)
set_jvps(repeat, a="np.repeat(t, repeats, axis)")
flip = vjp_rule(
    "np.flip",
    [np.flip],
    ("m", "axis"),
    {"m": "np.flip(g, axis)"},
    [(_A,), (_T, 1), (_T, (0, 2))],
    defaults={"axis": "None"},
    linear=True,
)
set_jvps(flip, m="np.flip(t, axis)")
fliplr = vjp_rule("np.fliplr", [np.fliplr], ("m",), {"m": "np.fliplr(g)"}, [(_A,)], linear=True)
set_jvps(fliplr, m="np.fliplr(t)")
flipud = vjp_rule("np.flipud", [np.flipud], ("m",), {"m": "np.flipud(g)"}, [(_A,)], linear=True)
set_jvps(flipud, m="np.flipud(t)")
roll = vjp_rule(
    "np.roll",
    [np.roll],
    ("a", "shift", "axis"),
    {"a": "np.roll(g, np.negative(shift), axis)"},
    [(_V, 1), (_A, -1, 1), (_T, (1, 2), (0, 2))],
    defaults={"axis": "None"},
    linear=True,
)
set_jvps(roll, a="np.roll(t, shift, axis)")

# --- copies and conversions ---------------------------------------------------------------

array = vjp_rule(
    "np.array",
    [np.array],
    ("object", "dtype", "copy", "order", "subok", "ndmin"),
    {"object": "_ad.array_vjp(g, object, dtype)"},
    [
        (_A,),
        ([0.5, 1.2, -0.3],),
        ([[0.5, 1.2], [0.3, -2.0]],),
        ([_W, _W * 2],),
        ((1.5, _W[0]),),
        (1.5,),
        (_W, {"ndmin": 2}),
        (_W, {"dtype": float}),
    ],
    defaults={"dtype": "None", "copy": "True", "order": "'K'", "subok": "False", "ndmin": "0"},
    linear=True,
)
set_jvps(
    array,
    object="np.array(_ad.add(t, _ad.zeros_like(object)), ndmin=ndmin) * "
    "np.issubdtype(np.dtype(dtype), np.inexact)",
)
asarray = vjp_rule(
    "np.asarray",
    [np.asarray, np.asanyarray, np.asarray_chkfinite],
    ("a", "dtype", "order"),
    {"a": "_ad.array_vjp(g, a, dtype)"},
    [(_A,), ([0.5, 1.2, -0.3],), ((_W, _W),)],
    defaults={"dtype": "None", "order": "None"},
    linear=True,
)
set_jvps(
    asarray,
    a="np.asarray(_ad.add(t, _ad.zeros_like(a))) * np.issubdtype(np.dtype(dtype), np.inexact)",
)
ascontiguousarray = vjp_rule(
    "np.ascontiguousarray",
    [np.ascontiguousarray],
    ("a", "dtype"),
    {"a": "_ad.array_vjp(g, a, dtype)"},
    [(_A.T,)],
    defaults={"dtype": "None"},
    linear=True,
)
set_jvps(
    ascontiguousarray,
    a="np.ascontiguousarray(_ad.add(t, _ad.zeros_like(a))) * "
    "np.issubdtype(np.dtype(dtype), np.inexact)",
)
copy = vjp_rule(
    "np.copy",
    [np.copy],
    ("a", "order", "subok"),
    {"a": "_ad.array_vjp(g, a)"},
    [(_A,), ([0.5, 1.2],)],
    defaults={"order": "'K'", "subok": "False"},
    linear=True,
)
set_jvps(copy, a="np.array(_ad.add(t, _ad.zeros_like(a)))")
float64 = elementwise("np.float64", [np.float64, np.float32], ("x",), ("1",), [(1.5,), (_A,)])

# --- constructors -------------------------------------------------------------------------

full = vjp_rule(
    "np.full",
    [np.full],
    ("shape", "fill_value", "dtype", "order"),
    {"fill_value": "_ad.unbroadcast(g, fill_value)"},
    [((2, 3), 1.5), ((2, 3), _W), (4, -0.5)],
    defaults={"dtype": "None", "order": "'C'"},
    linear=True,
)
set_jvps(full, fill_value="np.full(shape, t)")
full_like = vjp_rule(
    "np.full_like",
    [np.full_like],
    ("a", "fill_value", "dtype", "order", "subok", "shape"),
    {"a": "0.0", "fill_value": "_ad.unbroadcast(g, fill_value)"},
    [(_A, 1.5), (_A, _W)],
    defaults={"dtype": "None", "order": "'K'", "subok": "True", "shape": "None"},
    linear=True,
)
set_jvps(full_like, a="0.0", fill_value="np.full(np.shape(ans), t)")
linspace = vjp_rule(
    "np.linspace",
    [np.linspace],
    ("start", "stop", "num", "endpoint", "retstep", "dtype", "axis"),
    {
        "start": "_ad.linspace_vjp_start(g, start, num, endpoint, axis)",
        "stop": "_ad.linspace_vjp_stop(g, stop, num, endpoint, axis)",
    },
    [
        (0.5, 2.0),
        (0.5, 2.0, 7, False),
        (_W, 3.0, 4),
        (_W, _W * 2.0, 5, True, False, None, 1),
        (1.0, -2.0, {"num": 3, "endpoint": False}),
    ],
    defaults={"num": "50", "endpoint": "True", "retstep": "False", "dtype": "None", "axis": "0"},
    linear=True,
)
set_jvps(
    linspace,
    start="np.linspace(t, np.zeros(np.shape(stop)), num, endpoint, retstep, None, axis)",
    stop="np.linspace(np.zeros(np.shape(start)), t, num, endpoint, retstep, None, axis)",
)
arange = vjp_rule(
    "np.arange",
    [np.arange],
    ("start", "stop", "step", "dtype"),
    {
        "start": "_ad.arange_vjp_start(g, stop)",
        "stop": "0.0",
        "step": "_ad.arange_vjp_step(g)",
    },
    [(0.5, 3.0, 0.7), (0.3, 2.0), (2.5,), (-1.0, {"stop": 1.5, "step": 0.4})],
    defaults={"stop": "None", "step": "1", "dtype": "None"},
)
# ``np.arange(stop)`` binds the stop to ``start``: the values do not depend on it.
set_jvps(
    arange,
    start="np.full(np.shape(ans), t) * (stop is not None)",
    stop="0.0",
    step="t * np.arange(np.size(ans))",
)
# Values that do not depend on the inputs' values. (np.logspace and np.geomspace are
# left unregistered: with differentiated endpoints they are refused, not zeroed.)
constructors = nondiff(
    "constructors",
    [
        np.zeros,
        np.ones,
        np.empty,
        np.zeros_like,
        np.ones_like,
        np.empty_like,
        np.eye,
        np.identity,
        np.tri,
        np.indices,
    ],
)

# --- promotion to at least n dimensions --------------------------------------------

for _fn, _name in (
    (np.atleast_1d, "np.atleast_1d"),
    (np.atleast_2d, "np.atleast_2d"),
    (np.atleast_3d, "np.atleast_3d"),
):
    _rule = vjp_rule(
        _name,
        [_fn],
        ("arys",),
        {"arys": "np.reshape(g, np.shape(arys))"},
        [(0.7,), (np.array([0.5, -1.5]),)],
        linear=True,
    )
    set_jvps(_rule, arys=f"{_name}(t)")
