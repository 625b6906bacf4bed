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
    defaults={
        "axis": "None",
        "out": "None",
        "overwrite_input": "False",
        "method": "'linear'",
        "keepdims": "False",
    },
)
set_jvps(quantile, a="_ad.quantile_jvp(t, a, q, axis, keepdims, method)")
percentile = vjp_rule(
    "np.percentile",
    [np.percentile],
    ("a", "q", "axis", "out", "overwrite_input", "method", "keepdims"),
    {"a": "_ad.quantile_vjp(g, a, np.asarray(q) / 100.0, axis, keepdims, method)"},
    [(_V, 30.0), (_T, _Q * 100, 2), (_A, 50.0, {"axis": 0, "keepdims": True})],
    defaults={
        "axis": "None",
        "out": "None",
        "overwrite_input": "False",
        "method": "'linear'",
        "keepdims": "False",
    },
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
