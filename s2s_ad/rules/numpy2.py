"""NumPy functions found missing by the sweep of JAX's tests (``tests/sweep/jax_funcs.py``):
NumPy 2's ``np.vecdot``, ``np.matvec``, ``np.vecmat``,
``np.cumulative_sum``, ``np.cumulative_prod``, and ``np.quantile``,
``np.percentile`` (linear interpolation: other methods are refused) and ``np.ldexp``.
``np.linalg.matmul`` and ``np.linalg.cross`` share the rules of ``np.matmul`` and ``np.cross``."""

from __future__ import annotations

import numpy as np

from .registry import elementwise, set_jvps, vjp_rule

_V = np.array([0.6, -1.3, 0.9])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)
_S = np.cos(np.arange(1.0, 19.0)).reshape(2, 3, 3)
_Q = np.array([0.1, 0.5, 0.95])
#: The defaults ``np.quantile`` and ``np.percentile`` share.
_QUANTILE_DEFAULTS = {
    "axis": "None",
    "out": "None",
    "overwrite_input": "False",
    "method": "'linear'",
    "keepdims": "False",
}


quantile = vjp_rule(
    "np.quantile",
    [np.quantile],
    ("a", "q", "axis", "out", "overwrite_input", "method", "keepdims"),
    {"a": "_ad.quantile_vjp(g, a, q, axis, keepdims, method)"},
    [
        (_V, 0.3),
        (_T, _Q, 1),
        (_A, 0.5, None),
        (_T, 0.7, {"axis": -1, "keepdims": True}),
        (_A, _Q, {"keepdims": True}),
        (np.array([1.0, 1.0, 2.0, 0.5]), 1.0),
    ],
    defaults=_QUANTILE_DEFAULTS,
)
set_jvps(quantile, a="_ad.quantile_jvp(t, a, q, axis, keepdims, method)")
percentile = vjp_rule(
    "np.percentile",
    [np.percentile],
    ("a", "q", "axis", "out", "overwrite_input", "method", "keepdims"),
    {"a": "_ad.quantile_vjp(g, a, np.asarray(q) / 100.0, axis, keepdims, method)"},
    [(_V, 30.0), (_T, _Q * 100, 2), (_A, 50.0, {"axis": 0, "keepdims": True})],
    defaults=_QUANTILE_DEFAULTS,
)
set_jvps(percentile, a="_ad.quantile_jvp(t, a, np.asarray(q) / 100.0, axis, keepdims, method)")
ldexp = elementwise(
    "np.ldexp",
    [np.ldexp],
    ("x1", "x2"),
    ("np.ldexp(1.0, x2)",),
    [(0.7, 3), (_A, np.array([1, -2, 0]))],
    diff=("x1",),
)

if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1
    cumulative_sum = vjp_rule(
        "np.cumulative_sum",
        [np.cumulative_sum],
        ("x",),
        {"x": "_ad.cumulative_vjp(g, x, axis, include_initial, False)"},
        [(_V,), (_T, {"axis": 1}), (_A, {"axis": -1, "include_initial": True})],
        kwonly={"axis": "None", "dtype": "None", "out": "None", "include_initial": "False"},
        linear=True,
    )
    set_jvps(
        cumulative_sum,
        x="np.cumulative_sum(t, axis=axis, include_initial=include_initial)",
    )
    cumulative_prod = vjp_rule(
        "np.cumulative_prod",
        [np.cumulative_prod],
        ("x",),
        {"x": "_ad.cumulative_vjp(g, x, axis, include_initial, True)"},
        [(_V,), (_T, {"axis": 1}), (_A, {"axis": 0, "include_initial": True})],
        kwonly={"axis": "None", "dtype": "None", "out": "None", "include_initial": "False"},
    )
    set_jvps(cumulative_prod, x="_ad.cumulative_prod_jvp(t, x, axis, include_initial)")

if hasattr(np, "matvec"):  # NumPy >= 2.2
    vecdot = vjp_rule(
        "np.vecdot",
        [np.vecdot],
        ("x1", "x2"),
        {
            "x1": "_ad.unbroadcast(np.expand_dims(g, axis) * x2, x1)",
            "x2": "_ad.unbroadcast(np.expand_dims(g, axis) * x1, x2)",
        },
        [(_A, _A[::-1]), (_T, _T[::-1], {"axis": -2}), (_A, _V)],
        kwonly={"axis": "-1"},
    )
    set_jvps(vecdot, x1="np.vecdot(t, x2, axis=axis)", x2="np.vecdot(x1, t, axis=axis)")
    matvec = vjp_rule(
        "np.matvec",
        [np.matvec],
        ("x1", "x2"),
        {
            "x1": "_ad.unbroadcast(np.expand_dims(g, -1) * np.expand_dims(x2, -2), x1)",
            "x2": "_ad.unbroadcast(np.vecmat(g, x1), x2)",
        },
        [(_A, _V), (_T, np.array([0.5, -0.2, 1.1, 0.3])), (_S, _A[::-1])],
        linear=True,
    )
    set_jvps(matvec, x1="np.matvec(t, x2)", x2="np.matvec(x1, t)")
    vecmat = vjp_rule(
        "np.vecmat",
        [np.vecmat],
        ("x1", "x2"),
        {
            "x1": "_ad.unbroadcast(np.matvec(x2, g), x1)",
            "x2": "_ad.unbroadcast(np.expand_dims(x1, -1) * np.expand_dims(g, -2), x2)",
        },
        [(_A[0, :2], _A), (_A, _S), (_V, _S)],
        linear=True,
    )
    set_jvps(vecmat, x1="np.vecmat(t, x2)", x2="np.vecmat(x1, t)")

# --- ufunc methods: outer products and running reductions -------------------------------------
# ``np.multiply.outer(a, b)[i..., j...] = a[i...] * b[j...]``: each cotangent contracts over
# the other operand's axes (``np.add.outer``: sums over them).
_B = np.array([[0.5, -0.3], [1.4, 0.6]])
_OUTER_SAMPLES = [(_V, _A[0]), (_A, _V), (_V, _B), (0.7, _V)]
multiply_outer = vjp_rule(
    "np.multiply.outer",
    [np.multiply.outer],
    ("A", "B"),
    {
        "A": "(0.0 if _ad.is_zero(g) else np.tensordot(g, B, np.ndim(B)))",
        "B": "(0.0 if _ad.is_zero(g) else np.tensordot(A, g, np.ndim(A)))",
    },
    _OUTER_SAMPLES,
    linear=True,
)
set_jvps(multiply_outer, A="np.multiply.outer(t, B)", B="np.multiply.outer(A, t)")
_AXES_OF_B = "tuple(range(np.ndim(A), np.ndim(A) + np.ndim(B)))"
add_outer = vjp_rule(
    "np.add.outer",
    [np.add.outer],
    ("A", "B"),
    {
        "A": f"(0.0 if _ad.is_zero(g) else np.sum(g, {_AXES_OF_B}))",
        "B": "(0.0 if _ad.is_zero(g) else np.sum(g, tuple(range(np.ndim(A)))))",
    },
    _OUTER_SAMPLES,
    linear=True,
)
set_jvps(
    add_outer,
    A="np.add.outer(t, np.zeros(np.shape(B)))",
    B="np.add.outer(np.zeros(np.shape(A)), t)",
)
_ACCUMULATE = ("array", "axis", "dtype", "out")
add_accumulate = vjp_rule(
    "np.add.accumulate",
    [np.add.accumulate],
    _ACCUMULATE,
    {"array": "_ad.cumsum_vjp(g, array, axis)"},
    [(_V,), (_T, 1), (_A, {"axis": -1})],
    defaults={"axis": "0", "dtype": "None", "out": "None"},
    linear=True,
)
set_jvps(add_accumulate, array="np.cumsum(t, axis)")
multiply_accumulate = vjp_rule(
    "np.multiply.accumulate",
    [np.multiply.accumulate],
    _ACCUMULATE,
    {"array": "_ad.cumprod_vjp(g, array, axis)"},
    [(_V,), (_T, 1), (np.array([[0.5, 0.0, 0.8], [0.0, 0.4, -0.7]]), {"axis": -1})],
    defaults={"axis": "0", "dtype": "None", "out": "None"},
)
set_jvps(multiply_accumulate, array="_ad.cumprod_jvp(t, array, axis)")
# unwrap adds multiples of the period, constant between jumps: the identity's derivative
unwrap = vjp_rule(
    "np.unwrap",
    [np.unwrap],
    ("p", "discont", "axis"),
    {"p": "g"},
    [
        (np.array([0.1, 3.0, -2.9, 0.4, 6.0]),),
        (np.array([[0.2, 3.1, 6.5], [1.0, -2.5, 0.3]]), None, 0),
    ],
    defaults={"discont": "None", "axis": "-1"},
    kwonly={"period": "6.283185307179586"},
    linear=True,
)
set_jvps(unwrap, p="t")

if hasattr(np, "unstack"):  # NumPy >= 2.1: the slices along an axis, as a tuple
    unstack = vjp_rule(
        "np.unstack",
        [np.unstack],
        ("x",),
        {"x": "np.stack(_ad.add(g, _ad.zeros_like(ans)), axis)"},
        [(_A,), (_T, {"axis": 1}), (_T, {"axis": -1})],
        kwonly={"axis": "0"},
        linear=True,
    )
    set_jvps(unstack, x="np.unstack(t, axis=axis)")
