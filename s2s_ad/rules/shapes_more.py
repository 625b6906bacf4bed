"""NumPy functions autograd differentiates that the other rule modules did not cover:
``np.cross``, ``np.rollaxis``, ``np.partition``, ``np.compress``, ``np.ptp``,
``np.astype``, ``np.real_if_close`` (real input: complex arguments are refused by every
transform), ``np.fft.fftshift``/``ifftshift`` (the rest of ``np.fft`` makes complex
values, which are not modelled) and ``np.lib.stride_tricks.sliding_window_view``
(convolutions by windows)."""

from __future__ import annotations

import numpy as np

from .registry import set_jvps, vjp_rule

_V3 = np.array([0.6, -1.3, 0.9])
_W3 = np.array([1.1, -0.4, 0.7])
_P = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_Q = np.array([[-0.5, 0.9, 1.3], [0.2, -1.1, 0.6]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)

_CROSS_PARAMS = "a, b, axisa, axisb, axisc, axis"
cross = vjp_rule(
    "np.cross",
    [np.cross, *([np.linalg.cross] if hasattr(np.linalg, "cross") else [])],
    ("a", "b", "axisa", "axisb", "axisc", "axis"),
    {
        "a": f"_ad.cross_vjp_a(g, {_CROSS_PARAMS})",
        "b": f"_ad.cross_vjp_b(g, {_CROSS_PARAMS})",
    },
    [
        (_V3, _W3),
        (_P, _Q),
        (_P, _W3),
        (_P[:, :2], _Q[:, :2]),
        (_P[:, :2], _W3),
        (_V3[:2], _Q),
        (_P.T, _Q.T, {"axis": 0}),
        (_P.T, _Q, 0, 1, 0),
        (np.stack([_P, _Q]), _W3, -1, -1, 1),
    ],
    defaults={"axisa": "-1", "axisb": "-1", "axisc": "-1", "axis": "None"},
)
set_jvps(
    cross,
    a="np.cross(t, b, axisa, axisb, axisc, axis)",
    b="np.cross(a, t, axisa, axisb, axisc, axis)",
)
rollaxis = vjp_rule(
    "np.rollaxis",
    [np.rollaxis],
    ("a", "axis", "start"),
    {"a": "_ad.rollaxis_vjp(g, a, axis, start)"},
    [(_T, 2), (_T, 0, 2), (_T, 1, 3), (_T, -1, -3), (_T, 0, 3), (_P, 1)],
    defaults={"start": "0"},
    linear=True,
)
set_jvps(rollaxis, a="np.rollaxis(t, axis, start)")
_PARTITION_INDEX = "_ad.partition_index(a, kth, axis, kind, ans)"
partition = vjp_rule(
    "np.partition",
    [np.partition],
    ("a", "kth", "axis", "kind", "order"),
    {"a": f"_ad.take_along_axis_vjp(g, a, {_PARTITION_INDEX}, axis)"},
    [(_T, 2), (_T, 1, 1), (_T, (0, 2), 1), (_P, 4, None), (_W3, -1)],
    defaults={"axis": "-1", "kind": "'introselect'", "order": "None"},
    linear=True,
)
set_jvps(partition, a=f"np.take_along_axis(np.asarray(t), {_PARTITION_INDEX}, axis)")
real_if_close = vjp_rule(
    "np.real_if_close",
    [np.real_if_close],
    ("a", "tol"),
    {"a": "g"},
    [(_P,), (_T, 10.0)],
    defaults={"tol": "100"},
    linear=True,
)
set_jvps(real_if_close, a="t")
if hasattr(np, "astype"):  # NumPy >= 2.1
    astype = vjp_rule(
        "np.astype",
        [np.astype],
        ("x", "dtype"),
        {"x": "_ad.astype_vjp(g, x, dtype)"},
        [(_P, np.float64), (_T, "float64"), (_P, np.int64)],
        kwonly={"copy": "True", "device": "None"},
    )
    set_jvps(astype, x="t * np.issubdtype(np.dtype(dtype), np.inexact)")
compress = vjp_rule(
    "np.compress",
    [np.compress],
    ("condition", "a", "axis", "out"),
    {"a": "_ad.take_vjp(g, a, np.flatnonzero(condition), axis)"},
    [([True, False, True], _P, 1), ([False, True], _P), (np.array([1, 0]), _T, 0), ([1], _T, 2)],
    defaults={"axis": "None", "out": "None"},
    linear=True,
)
set_jvps(compress, a="np.compress(condition, t, axis)")
_MAX = "_ad.max_vjp({g}, a, np.max(a, axis, keepdims=keepdims), axis, keepdims)"
_MIN = "_ad.min_vjp({g}, a, np.min(a, axis, keepdims=keepdims), axis, keepdims)"
ptp = vjp_rule(
    "np.ptp",
    [np.ptp],
    ("a", "axis", "out", "keepdims"),
    {"a": f"{_MAX.format(g='g')} - {_MIN.format(g='g')}"},
    [(_P,), (_P, 1), (_T, (0, 2)), (_T, {"axis": -1, "keepdims": True}), (_V3,)],
    defaults={"axis": "None", "out": "None", "keepdims": "False"},
)
set_jvps(
    ptp,
    a=f"np.sum(t * ({_MAX.format(g='1.0')} - {_MIN.format(g='1.0')}), axis, keepdims=keepdims)",
)
fftshift = vjp_rule(
    "np.fft.fftshift",
    [np.fft.fftshift],
    ("x", "axes"),
    {"x": "np.fft.ifftshift(_ad.materialize(g, ans), axes)"},
    [(_V3,), (_T,), (_T, 1), (_T, (0, 2)), (np.arange(5.0) - 1.5, {"axes": 0})],
    defaults={"axes": "None"},
    linear=True,
)
set_jvps(fftshift, x="np.fft.fftshift(t, axes)")
ifftshift = vjp_rule(
    "np.fft.ifftshift",
    [np.fft.ifftshift],
    ("x", "axes"),
    {"x": "np.fft.fftshift(_ad.materialize(g, ans), axes)"},
    [(_V3,), (_T,), (_T, -1), (_T, (1, 2)), (np.arange(5.0) - 1.5,)],
    defaults={"axes": "None"},
    linear=True,
)
set_jvps(ifftshift, x="np.fft.ifftshift(t, axes)")
sliding_window_view = vjp_rule(
    "np.lib.stride_tricks.sliding_window_view",
    [np.lib.stride_tricks.sliding_window_view],
    ("x", "window_shape", "axis"),
    {"x": "_ad.sliding_window_view_vjp(g, x, window_shape, axis)"},
    [(_V3, 2), (_P, (2, 2)), (_P, 2, 1), (_T, (2, 3), (0, 2)), (_T, 2, -1), (_T, (1, 2, 2))],
    defaults={"axis": "None"},
    kwonly={"subok": "False", "writeable": "False"},
    linear=True,
)
set_jvps(sliding_window_view, x="_ad.sliding_window_view_jvp(t, window_shape, axis)")
