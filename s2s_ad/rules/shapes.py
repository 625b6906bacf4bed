"""NumPy's array manipulation beyond :mod:`.arrays`, and its index tricks.

``np.r_[a, b]`` and ``np.c_[a, b]`` (without slices or string directives) are rewritten by
the normalizer into ``np.r_.__getitem__((a, b))``, whose rule is here; with slices or
directives they stay subscripts, refused when they read a differentiated value.
"""

from __future__ import annotations

import numpy as np

from .registry import elementwise, nondiff, set_jvps, vjp_rule

_V = np.array([0.6, -1.3, 0.9, 2.1])
_W = np.array([1.1, -0.4, 0.7])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)

r_ = vjp_rule(
    "np.r_",
    [np.r_.__getitem__],
    ("key",),
    {"key": "_ad.r_vjp(g, key)"},
    [((_V, _W),), ((_W, 1.5, _V),), ((_A, _A[:1] * 2.0),), ((0.5, -1.0),)],
    linear=True,
)
set_jvps(r_, key="np.r_[_ad.materialize(t, key)]")
c_ = vjp_rule(
    "np.c_",
    [np.c_.__getitem__],
    ("key",),
    {"key": "_ad.c_vjp(g, key)"},
    [((_W, _W * 2.0),), ((_A.T, _W),), ((_A, _A[:, :2]),)],
    linear=True,
)
set_jvps(c_, key="np.c_[_ad.materialize(t, key)]")

# --- elementwise and copies ----------------------------------------------------------------

_REAL = np.array([[-1.2, 0.3, 0.8], [1.7, -0.4, 2.1]])
real = vjp_rule(
    "np.real", [np.real, np.conj, np.conjugate], ("val",), {"val": "g"}, [(_A,), (1.5,)],
    linear=True,
)  # fmt: skip
set_jvps(real, val="t")
# For real input (complex arguments are refused by grad) the imaginary part is zero.
imag = nondiff("np.imag of real input", [np.imag])
nan_to_num = vjp_rule(
    "np.nan_to_num",
    [np.nan_to_num],
    ("x", "copy", "nan", "posinf", "neginf"),
    {"x": "g * np.isfinite(x)"},
    [(_A,), (np.array([0.5, np.nan, np.inf, -np.inf, -1.5]),), (1.5,)],
    defaults={"copy": "True", "nan": "0.0", "posinf": "None", "neginf": "None"},
)
set_jvps(nan_to_num, x="t * np.isfinite(x)")
sinc = elementwise(
    "np.sinc",
    [np.sinc],
    ("x",),
    ("np.where(x == 0, 0.0, (np.cos(np.pi * x) - ans) / np.where(x == 0, 1.0, x))",),
    [(0.7,), (-1.3,), (_REAL,), (0.0,)],
    sympy="sinc_pi",
)

# --- cumulative and differences --------------------------------------------------------------

_NONZERO = np.array([[0.5, -1.2, 0.8], [1.5, 0.4, -0.7]])
_ZEROS = np.array([[0.5, 0.0, 0.8, -1.1], [0.0, 0.4, 0.0, 1.3], [1.2, -0.6, 0.9, 0.0]])
# exact at zeros: the helpers divide by nothing when ``a`` has a zero
cumprod = vjp_rule(
    "np.cumprod",
    [np.cumprod],
    ("a", "axis", "dtype", "out"),
    {"a": "_ad.cumprod_vjp(g, a, axis)"},
    [
        (_NONZERO,),
        (_NONZERO, 1),
        (_NONZERO[0],),
        (_T + 1.5, {"axis": -1}),
        (_ZEROS,),
        (_ZEROS, 0),
        (_ZEROS, 1),
        (np.array([0.0, 0.0, 0.7, 1.2]),),
    ],
    defaults={"axis": "None", "dtype": "None", "out": "None"},
)
set_jvps(cumprod, a="_ad.cumprod_jvp(t, a, axis)")
diff = vjp_rule(
    "np.diff",
    [np.diff],
    ("a", "n", "axis", "prepend", "append"),
    {
        "a": "_ad.diff_vjp(g, a, n, axis, prepend, append)",
        "prepend": "_ad.diff_vjp_edge(g, a, n, axis, prepend, append, 'prepend')",
        "append": "_ad.diff_vjp_edge(g, a, n, axis, prepend, append, 'append')",
    },
    [
        (_V,),
        (_A, 1, 0),
        (_T, 2),
        (_V, 1, -1, 0.5),
        (_A, {"axis": 0, "append": _W[None, :]}),
        (_V, {"n": 2, "prepend": _V[:2], "append": 1.0}),
        (_A, 2, 1, _A[:, :2], 0.7),
    ],
    defaults={"n": "1", "axis": "-1", "prepend": "np._NoValue", "append": "np._NoValue"},
    linear=True,
)
set_jvps(
    diff,
    a="_ad.diff_jvp(t, a, n, axis, prepend, append)",
    prepend="_ad.diff_jvp_edge(t, a, n, axis, prepend, append, 'prepend')",
    append="_ad.diff_jvp_edge(t, a, n, axis, prepend, append, 'append')",
)
gradient = vjp_rule(
    "np.gradient",
    [np.gradient],
    ("f",),
    {"f": "_ad.gradient_vjp(g, f, args, axis, edge_order)"},
    [
        (_V,),
        (_V, 0.5),
        (_A,),
        (np.cos(np.arange(5.0)), np.array([0.0, 0.3, 1.0, 1.2, 2.0])),
        (np.cos(np.arange(12.0)).reshape(3, 4), 0.5, 2.0, {"edge_order": 2}),
        (_T, {"axis": (0, 2)}),
        (_T, 0.3, {"axis": -1}),
    ],
    varargs=True,
    kwonly={"axis": "None", "edge_order": "1"},
    linear=True,
)
set_jvps(gradient, f="np.gradient(t, *args, axis=axis, edge_order=edge_order)")

# --- rotations and rearrangements ------------------------------------------------------------

rot90 = vjp_rule(
    "np.rot90",
    [np.rot90],
    ("m", "k", "axes"),
    {"m": "np.rot90(g, -k, axes)"},
    [(_A,), (_A, 3), (_T, 2, (1, 2)), (_T, {"k": -1, "axes": (2, 0)})],
    defaults={"k": "1", "axes": "(0, 1)"},
    linear=True,
)
set_jvps(rot90, m="np.rot90(t, k, axes)")
append = vjp_rule(
    "np.append",
    [np.append],
    ("arr", "values", "axis"),
    {
        "arr": "_ad.concatenate_vjp(g, (arr, values), axis)[0]",
        "values": "_ad.concatenate_vjp(g, (arr, values), axis)[1]",
    },
    [(_V, _W), (_A, 1.5), (_A, _A[:1], 0), (_A, {"values": _A[:, :2], "axis": 1})],
    defaults={"axis": "None"},
    linear=True,
)
set_jvps(
    append,
    arr="np.append(t, np.zeros(np.shape(values)), axis)",
    values="np.append(np.zeros(np.shape(arr)), t, axis)",
)
for _fn in (np.split, np.array_split):
    _rule = vjp_rule(
        f"np.{_fn.__name__}",
        [_fn],
        ("ary", "indices_or_sections", "axis"),
        {"ary": "np.concatenate(_ad.materialize(g, ans), axis)"},
        [(_V, 2), (_A, 3, 1), (_T, [1, 3], -1), (_V, {"indices_or_sections": [1]})],
        defaults={"axis": "0"},
        linear=True,
    )
    set_jvps(_rule, ary=f"np.{_fn.__name__}(t, indices_or_sections, axis)")
dstack = vjp_rule(
    "np.dstack",
    [np.dstack],
    ("tup",),
    {"tup": "_ad.dstack_vjp(g, tup)"},
    [([_A, _A * 2.0],), ((_W, _W[::-1]),), ([_T, _A],)],
    linear=True,
)
set_jvps(dstack, tup="np.dstack(_ad.materialize(t, tup))")
column_stack = vjp_rule(
    "np.column_stack",
    [np.column_stack],
    ("tup",),
    {"tup": "_ad.c_vjp(g, tup)"},
    [([_W, _W * 2.0],), ((_A.T, _W),)],
    linear=True,
)
set_jvps(column_stack, tup="np.column_stack(_ad.materialize(t, tup))")
for _fn, _join, _samples in (
    (np.hsplit, "np.hstack", [(_V, 2), (_A, 3), (_T, [1])]),
    (np.vsplit, "np.vstack", [(_A, 2), (_T, [1])]),
    (np.dsplit, "np.dstack", [(_T, 2), (_T, [1, 3])]),
):
    _rule = vjp_rule(
        f"np.{_fn.__name__}",
        [_fn],
        ("ary", "indices_or_sections"),
        {"ary": f"{_join}(_ad.materialize(g, ans))"},
        _samples,
        linear=True,
    )
    set_jvps(_rule, ary=f"np.{_fn.__name__}(t, indices_or_sections)")
select = vjp_rule(
    "np.select",
    [np.select],
    ("condlist", "choicelist", "default"),
    {
        "choicelist": "_ad.select_vjp(g, condlist, choicelist)",
        "default": "_ad.unbroadcast(np.select(condlist, [np.zeros(np.shape(ans))] * len(condlist), "
        "g), default)",
    },
    [
        ([_A > 0, _A < -1], [_A * 2.0, np.cos(_A)]),
        ([_A > 0.5, _A > 0], [_A, _W], np.sin(_A)),
        ((_V > 0,), (_V**2,), 0.5),
    ],
    defaults={"default": "0"},
)
set_jvps(
    select,
    choicelist="np.select(condlist, _ad.materialize(t, choicelist), 0.0)",
    default="np.select(condlist, [np.zeros(np.shape(ans))] * len(condlist), t)",
)
take = vjp_rule(
    "np.take",
    [np.take],
    ("a", "indices", "axis", "out", "mode"),
    {"a": "_ad.take_vjp(g, a, indices, axis, mode)"},
    [
        (_A, [0, 2, 2, 5]),
        (_A, np.array([[1, 0], [2, 2]]), 1),
        (_T, [0, -1], 0),
        (_V, 3),
        (_V, [-1, 5, 1, 1], None, None, "clip"),
        (_A, np.array([[4, -1], [2, 7]]), 1, None, "wrap"),
    ],
    defaults={"axis": "None", "out": "None", "mode": "'raise'"},
    linear=True,
)
set_jvps(take, a="np.take(t, indices, axis, None, mode)")
take_along_axis = vjp_rule(
    "np.take_along_axis",
    [np.take_along_axis],
    ("arr", "indices", "axis"),
    {"arr": "_ad.take_along_axis_vjp(g, arr, indices, axis)"},
    [
        (_A, np.array([[0, 0, 2], [1, 2, 1]]), 1),
        (_A, np.argsort(_A, 0), 0),
        (_V, np.array([3, 3, 0]), None),
        (_T, np.zeros((2, 3, 1), dtype=int), -1),
    ],
    defaults={"axis": "-1"},  # NumPy >= 2.3; required before
    linear=True,
)
set_jvps(take_along_axis, arr="np.take_along_axis(t, indices, axis)")

# --- interpolation, convolution, products, grids, padding -------------------------------------

_XP = np.array([0.0, 0.5, 1.3, 2.0])
_FP = np.array([1.0, -0.5, 0.7, 2.2])
_ZFP = "np.zeros(np.shape(fp))"
interp = vjp_rule(
    "np.interp",
    [np.interp],
    ("x", "xp", "fp", "left", "right", "period"),
    {
        "x": "_ad.interp_vjp_x(g, x, xp, fp, left, right, period)",
        "fp": "_ad.interp_vjp_fp(g, x, xp, fp, left, right, period)",
        "left": f"np.sum(g * np.interp(x, xp, {_ZFP}, 1.0, 0.0, period))",
        "right": f"np.sum(g * np.interp(x, xp, {_ZFP}, 0.0, 1.0, period))",
    },
    [
        (np.array([0.2, 0.9, 1.7, -0.5, 2.4]), _XP, _FP),
        (0.7, _XP, _FP),
        (_A + 0.95, _XP, _FP),
        (np.array([0.2, 0.9, 1.7, -0.5, 2.4]), _XP, _FP, -0.3, 1.4),
        (np.array([-0.5, 2.4, 1.1]), _XP, _FP, None, 0.6),
        (np.array([0.2, 2.9, 4.4, -0.6, -3.1]), _XP, _FP, None, None, 2.5),
        (np.array([0.2, 1.9, 0.05, -0.7]), np.array([0.1, 0.6, 1.2, 2.7]), _FP, {"period": 2.0}),
    ],
    defaults={"left": "None", "right": "None", "period": "None"},
)
set_jvps(
    interp,
    x="t * _ad.interp_vjp_x(1.0, x, xp, fp, left, right, period)",
    fp="np.interp(x, xp, t, 0.0 if left is not None else None, "
    "0.0 if right is not None else None, period)",
    left=f"np.interp(x, xp, {_ZFP}, t, 0.0, period)",
    right=f"np.interp(x, xp, {_ZFP}, 0.0, t, period)",
)
convolve = vjp_rule(
    "np.convolve",
    [np.convolve],
    ("a", "v", "mode"),
    {"a": "_ad.convolve_vjp(g, a, v, mode)", "v": "_ad.convolve_vjp(g, v, a, mode)"},
    [(_V, _W), (_W, _V, "same"), (_V, _W[:2], "valid"), (_V, _W, "same"), (_W, _V, "valid")],
    defaults={"mode": "'full'"},
    linear=True,
)
set_jvps(convolve, a="np.convolve(t, v, mode)", v="np.convolve(a, t, mode)")
kron = vjp_rule(
    "np.kron",
    [np.kron],
    ("a", "b"),
    {"a": "_ad.kron_vjp_a(g, a, b)", "b": "_ad.kron_vjp_b(g, a, b)"},
    [(_A, _A.T), (_W, _V), (_A, _W), (_V[:2], _A), (1.5, _A), (_T[:, :2, :2], _A), (_W, _T)],
    linear=True,
)
set_jvps(kron, a="np.kron(t, b)", b="np.kron(a, t)")
meshgrid = vjp_rule(
    "np.meshgrid",
    [np.meshgrid],
    (),
    {"args": "_ad.meshgrid_vjp(g, args, indexing, sparse)"},
    [(_W, _V), (_W, _V[:2], _V, {"indexing": "ij"}), (_W, _V, {"sparse": True}), (_V,)],
    varargs=True,
    kwonly={"copy": "True", "sparse": "False", "indexing": "'xy'"},
    linear=True,
)
set_jvps(
    meshgrid,
    args="np.meshgrid(*_ad.materialize(t, args), copy=copy, sparse=sparse, indexing=indexing)",
)
_PAD = "array, pad_width, mode, reflect_type, stat_length"
pad = vjp_rule(
    "np.pad",
    [np.pad],
    ("array", "pad_width", "mode", "constant_values", "reflect_type", "end_values", "stat_length"),
    {"array": f"_ad.pad_vjp(g, {_PAD})"},
    [
        (_A, 1),
        (_A, ((1, 0), (2, 1)), "edge"),
        (_V, 3, "reflect"),
        (_V, (2, 5), "symmetric"),
        (_A, {"pad_width": 2, "mode": "wrap"}),
        (_T, ((0, 1), (1, 1), (2, 0))),
        (_A, ((1, 2), (2, 0)), "mean"),
        (_T, 2, "linear_ramp", {"end_values": 0.5}),
        (_A, 2, "mean", {"stat_length": 2}),
        (_V, (1, 3), {"mode": "linear_ramp", "end_values": (1.0, -2.0)}),
        (_A, ((1, 2), (2, 1)), "maximum"),
        (_T, 1, "minimum", {"stat_length": 2}),
        (_V, (2, 1), "median", {"stat_length": (2, 3)}),
    ],
    defaults={
        "mode": "'constant'",
        "constant_values": "0",
        "reflect_type": "'even'",
        "end_values": "0",
        "stat_length": "None",
    },
    linear=True,
)
set_jvps(pad, array=f"_ad.pad_jvp(t, {_PAD})")

if hasattr(np, "trapezoid"):  # NumPy >= 2.0 (np.trapz before)
    _XS = np.array([0.0, 0.4, 1.1, 1.5])
    trapezoid = vjp_rule(
        "np.trapezoid",
        [np.trapezoid],
        ("y", "x", "dx", "axis"),
        {
            "y": "_ad.trapezoid_vjp_y(g, y, x, dx, axis)",
            "x": "_ad.trapezoid_vjp_x(g, y, x, axis)",
        },
        [
            (_V,),
            (_V, _XS),
            (_A, None, 0.5, 0),
            (_T, _XS),
            (_T, np.cos(_T), 1.0, 1),
            (_A.T, _W, 1.0, 0),
        ],
        defaults={"x": "None", "dx": "1.0", "axis": "-1"},
    )
    set_jvps(
        trapezoid,
        y="np.trapezoid(t, x, dx, axis)",
        x="_ad.trapezoid_jvp_x(t, y, x, axis)",
    )
