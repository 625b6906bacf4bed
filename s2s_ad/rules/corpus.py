"""Functions of JAX's test corpus and of users' code that had no rule: ``np.vander``,
``np.logspace``, ``np.geomspace``, ``np.i0``, ``np.modf``, ``np.frexp``, ``np.insert``,
``np.delete``, ``np.resize``, ``np.extract``, ``np.maximum.accumulate`` and
``np.minimum.accumulate`` (running extrema), ``np.linalg.tensorinv``, ``tensorsolve``,
``cond``, ``np.polyfit``, ``statistics.mean fmean variance pvariance stdev pstdev`` and
``copy.copy``/``copy.deepcopy`` (identities: their stdlib source is not transformed).

Not here, and why: ``np.nextafter`` and ``np.spacing`` are not differentiable (JAX has no
rule either): a differentiated argument is refused. ``np.put_along_axis`` and
``np.fill_diagonal`` write into their argument: refused (index assignment ``y[i, i] = v``
is the differentiable spelling). ``np.piecewise`` calls functions: refused (``np.where``
of the pieces is the differentiable spelling).
"""

from __future__ import annotations

import copy
import statistics

import numpy as np

from .registry import elementwise, set_jvps, vjp_rule

_V = np.array([0.6, -1.3, 0.9, 2.1])
_P = np.array([0.7, 1.3, 2.2])
_A = np.array([[0.3, -1.2, 0.8, 0.1], [1.5, 0.4, -0.7, 2.0], [0.2, 0.9, -0.1, -0.6]])
_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)

# --- constructors -------------------------------------------------------------------------

vander = vjp_rule(
    "np.vander",
    [np.vander],
    ("x", "N", "increasing"),
    {"x": "_ad.vander_vjp(g, x, N, increasing)"},
    [(_V,), (_V, 3), (_P, 5, True), (_V, {"N": 2, "increasing": True})],
    defaults={"N": "None", "increasing": "False"},
)
set_jvps(vander, x="_ad.vander_jvp(t, x, N, increasing)")
_SPACE = "num, endpoint, axis"
logspace = vjp_rule(
    "np.logspace",
    [np.logspace],
    ("start", "stop", "num", "endpoint", "base", "dtype", "axis"),
    {
        "start": f"_ad.linspace_vjp_start(g * ans * np.log(base), start, {_SPACE})",
        "stop": f"_ad.linspace_vjp_stop(g * ans * np.log(base), stop, {_SPACE})",
    },
    [(0.5, 1.5), (-1.0, 0.3, 5, False, 2.0), (_P, 2.0, 4), (0.2, _P, {"num": 3, "axis": 1})],
    defaults={"num": "50", "endpoint": "True", "base": "10.0", "dtype": "None", "axis": "0"},
)
set_jvps(
    logspace,
    start="ans * np.log(base) * np.linspace(t, np.zeros(np.shape(stop)), num, endpoint, axis=axis)",
    stop="ans * np.log(base) * np.linspace(np.zeros(np.shape(start)), t, num, endpoint, axis=axis)",
)
# geomspace(a, b) = sign * exp(linspace(log|a|, log|b|)): d/da log|a| = 1/a.
geomspace = vjp_rule(
    "np.geomspace",
    [np.geomspace],
    ("start", "stop", "num", "endpoint", "dtype", "axis"),
    {
        "start": f"_ad.linspace_vjp_start(g * ans, start, {_SPACE}) / start",
        "stop": f"_ad.linspace_vjp_stop(g * ans, stop, {_SPACE}) / stop",
    },
    [(0.5, 4.0), (-2.0, -0.3, 5, False), (_P, 6.0, 4), (1.5, _P, {"num": 3, "axis": 1})],
    defaults={"num": "50", "endpoint": "True", "dtype": "None", "axis": "0"},
)
set_jvps(
    geomspace,
    start="ans * np.linspace(t / start, np.zeros(np.shape(stop)), num, endpoint, axis=axis)",
    stop="ans * np.linspace(np.zeros(np.shape(start)), t / stop, num, endpoint, axis=axis)",
)

# --- elementwise ---------------------------------------------------------------------------

i0 = elementwise("np.i0", [np.i0], ("x",), ("_ad.i1(x)",), [(0.7,), (_V,), (0.0,)], sympy="i0")
modf = vjp_rule(
    "np.modf",
    [np.modf],
    ("x",),
    {"x": "_ad.tuple_first_vjp(g, x)"},
    [(_V + 0.05,), (2.3,), (_A * 3.1,)],
)
set_jvps(modf, x="(t + np.zeros(np.shape(x)), np.zeros(np.shape(x)))")
frexp = vjp_rule(
    "np.frexp",
    [np.frexp],
    ("x",),
    {"x": "_ad.frexp_vjp(g, x, ans)"},
    [(_V + 0.05,), (2.3,), (_A * 3.1,)],
)
set_jvps(frexp, x="(t * np.ldexp(1.0, -ans[1]), np.zeros(np.shape(x)))")

# --- copies of entries ---------------------------------------------------------------------

insert = vjp_rule(
    "np.insert",
    [np.insert],
    ("arr", "obj", "values", "axis"),
    {
        "arr": "_ad.insert_vjp(g, arr, obj, values, axis, 'arr')",
        "values": "_ad.insert_vjp(g, arr, obj, values, axis, 'values')",
    },
    [(_V, 1, 0.7), (_A, [0, 2], _V, 0), (_A, 1, _P, 1), (_V, 2, _P[:2]), (_A, 3, 1.5)],
    defaults={"axis": "None"},
    linear=True,
)
set_jvps(
    insert,
    arr="_ad.insert_jvp(t, arr, obj, values, axis, 'arr')",
    values="_ad.insert_jvp(t, arr, obj, values, axis, 'values')",
)
delete = vjp_rule(
    "np.delete",
    [np.delete],
    ("arr", "obj", "axis"),
    {"arr": "_ad.moved_vjp(g, arr, np.delete(_ad.positions(arr), obj, axis))"},
    [(_V, 1), (_A, [0, 2], 1), (_T, slice(0, 2), 2), (_A, 0, 0)],
    defaults={"axis": "None"},
    linear=True,
)
set_jvps(delete, arr="_ad.moved_jvp(t, arr, np.delete(_ad.positions(arr), obj, axis))")
resize = vjp_rule(
    "np.resize",
    [np.resize],
    ("a", "new_shape"),
    {"a": "_ad.moved_vjp(g, a, np.resize(_ad.positions(a), new_shape))"},
    [(_A, (3, 5)), (_V, 7), (_A, (2, 2))],
    linear=True,
)
set_jvps(resize, a="_ad.moved_jvp(t, a, np.resize(_ad.positions(a), new_shape))")
extract = vjp_rule(
    "np.extract",
    [np.extract],
    ("condition", "arr"),
    {"arr": "_ad.moved_vjp(g, arr, np.extract(condition, _ad.positions(arr)))"},
    [(_A > 0.0, _A), (np.array([True, False, True, True]), _V)],
    linear=True,
)
set_jvps(extract, arr="_ad.moved_jvp(t, arr, np.extract(condition, _ad.positions(arr)))")
_RUNNING = dict(axis="0", dtype="None", out="None")
_RUN_SAMPLES = [(_V,), (_A, 1), (_T, {"axis": 2}), (_A, -2)]
running_max = vjp_rule(
    "np.maximum.accumulate",
    [np.maximum.accumulate],
    ("array", "axis", "dtype", "out"),
    {"array": "_ad.moved_vjp(g, array, _ad.running_source(array, ans, axis, True))"},
    _RUN_SAMPLES,
    defaults=_RUNNING,
)
set_jvps(running_max, array="_ad.moved_jvp(t, array, _ad.running_source(array, ans, axis, True))")
running_min = vjp_rule(
    "np.minimum.accumulate",
    [np.minimum.accumulate],
    ("array", "axis", "dtype", "out"),
    {"array": "_ad.moved_vjp(g, array, _ad.running_source(array, ans, axis, False))"},
    _RUN_SAMPLES,
    defaults=_RUNNING,
)
set_jvps(running_min, array="_ad.moved_jvp(t, array, _ad.running_source(array, ans, axis, False))")

# --- np.linalg.tensorinv, tensorsolve, cond; np.polyfit ------------------------------------

_TENSOR = np.sin(np.arange(1.0, 37.0)).reshape(2, 3, 6) + 3.0 * np.eye(6).reshape(2, 3, 6)
tensorinv = vjp_rule(
    "np.linalg.tensorinv",
    [np.linalg.tensorinv],
    ("a", "ind"),
    {"a": "_ad.tensorinv_vjp(g, a, ans, ind)"},
    [(_M, 1), (_TENSOR,), (_TENSOR.transpose(2, 0, 1), {"ind": 1})],
    defaults={"ind": "2"},
)
set_jvps(tensorinv, a="_ad.tensorinv_jvp(t, a, ans, ind)")
tensorsolve = vjp_rule(
    "np.linalg.tensorsolve",
    [np.linalg.tensorsolve],
    ("a", "b", "axes"),
    {
        "a": "_ad.tensorsolve_vjp_a(g, a, b, ans, axes)",
        "b": "_ad.tensorsolve_vjp_b(g, a, b, ans, axes)",
    },
    [(_TENSOR, _A[:2, :3]), (_M, _P)],
    defaults={"axes": "None"},
)
set_jvps(
    tensorsolve,
    a="_ad.tensorsolve_jvp_a(t, a, b, ans, axes)",
    b="_ad.tensorsolve_jvp_b(t, a, b, ans, axes)",
)
cond = vjp_rule(
    "np.linalg.cond",
    [np.linalg.cond],
    ("x", "p"),
    {"x": "_ad.cond_vjp(g, x, p, ans)"},
    [(_M,), (_M, 2), (_M, -2), (_M, "fro"), (_M, 1), (_M, np.inf), (np.stack([_M, _M.T]),)],
    defaults={"p": "None"},
)
set_jvps(cond, x="np.sum(t * _ad.cond_vjp(np.ones(np.shape(ans)), x, p, ans), (-2, -1))")
_FIT = "x, y, deg, w, full, cov"
polyfit = vjp_rule(
    "np.polyfit",
    [np.polyfit],
    ("x", "y", "deg", "rcond", "full", "w", "cov"),
    {"x": f"_ad.polyfit_vjp_x(g, {_FIT}, ans)", "y": f"_ad.polyfit_vjp_y(g, {_FIT})"},
    [
        (np.linspace(0.0, 1.0, 6), np.cos(np.arange(6.0)), 2),
        (np.array([0.1, 0.5, 0.9, 1.4, 2.0]), np.sin(np.arange(10.0)).reshape(5, 2), 1),
        (_V, _V**2 + 0.3, 2, {"w": np.array([1.0, 0.5, 2.0, 1.5])}),
    ],
    defaults={"rcond": "None", "full": "False", "w": "None", "cov": "False"},
)
set_jvps(
    polyfit,
    x=f"_ad.polyfit_jvp_x(t, {_FIT}, ans)",
    y="np.polyfit(x, t, deg, rcond, full, w, cov)",
)

# --- statistics; copy ------------------------------------------------------------------------

_DATA = [0.7, -1.2, 2.5, 0.4]
stat_mean = vjp_rule(
    "statistics.mean",
    [statistics.mean],
    ("data",),
    {"data": "_ad.stat_mean_vjp(g, data)"},
    [(_DATA,), ([1.5, 2.0],)],
    linear=True,
)
set_jvps(stat_mean, data="_ad.stat_dot(t, _ad.stat_mean_vjp(1.0, data))")
stat_fmean = vjp_rule(
    "statistics.fmean",
    [statistics.fmean],
    ("data", "weights"),
    {"data": "_ad.stat_mean_vjp(g, data, weights)"},
    [(_DATA,), (_DATA, [1.0, 2.0, 0.5, 1.5])],
    defaults={"weights": "None"},
    linear=True,
)
set_jvps(stat_fmean, data="_ad.stat_dot(t, _ad.stat_mean_vjp(1.0, data, weights))")
for _name, _ddof, _root, _given in (
    ("variance", 1, False, "xbar"),
    ("pvariance", 0, False, "mu"),
    ("stdev", 1, True, "xbar"),
    ("pstdev", 0, True, "mu"),
):
    _scale = " / (2.0 * ans)" if _root else ""
    _rule = vjp_rule(
        f"statistics.{_name}",
        [getattr(statistics, _name)],
        ("data", _given),
        {"data": f"_ad.stat_variance_vjp(g{_scale}, data, {_given}, {_ddof})"},
        [(_DATA,), ([1.5, 2.0, -0.5],)],
        defaults={_given: "None"},
    )
    _slopes = f"_ad.stat_variance_vjp(1.0, data, {_given}, {_ddof})"
    set_jvps(_rule, data=f"_ad.stat_dot(t, {_slopes}){_scale}")
copies = vjp_rule(
    "copy.copy",
    [copy.copy],
    ("x",),
    {"x": "g"},
    [(_V,), ([_V, _P],)],
    linear=True,
)
set_jvps(copies, x="t")
deep_copies = vjp_rule(
    "copy.deepcopy",
    [copy.deepcopy],
    ("x", "memo"),
    {"x": "g"},
    [(_V,), ([_V, [_P, 1.5]],)],
    defaults={"memo": "None"},
    linear=True,
)
set_jvps(deep_copies, x="t")
