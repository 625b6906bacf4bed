"""NumPy functions found missing by the autograd sweep (``tests/test_autograd_sweep.py``):
``np.correlate``, ``np.block``, ``np.choose``, ``np.diagflat``, ``np.ediff1d``,
``np.broadcast_arrays``, reshapes in Fortran or memory order (``np.reshape``,
``np.ravel``, ``x.reshape``, ``x.ravel``, ``x.flatten`` with ``order=``) and
``math.gamma``/``math.lgamma`` (their derivatives need ``scipy.special.digamma``)."""

from __future__ import annotations

import math

import numpy as np

from . import arrays, methods
from . import more_vjps as M
from .registry import REGISTRY, elementwise, set_jvps, vjp_rule

_V = np.array([0.6, -1.3, 0.9, 2.1, -0.4])
_W = np.array([1.1, -0.4, 0.7])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_B = np.array([[0.5, -0.3], [1.4, 0.6]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)

correlate = vjp_rule(
    "np.correlate",
    [np.correlate],
    ("a", "v", "mode"),
    {"a": "_ad.correlate_vjp_a(g, a, v, mode)", "v": "_ad.correlate_vjp_v(g, a, v, mode)"},
    [
        (_V, _W),
        (_W, _V),
        (_V, _W, "same"),
        (_W, _V, "full"),
        (_V, _W, "full"),
        (_W, _V[:4], "same"),
    ],
    defaults={"mode": "'valid'"},
    linear=True,
)
set_jvps(correlate, a="np.correlate(t, v, mode)", v="np.correlate(a, t, mode)")
block = vjp_rule(
    "np.block",
    [np.block],
    ("arrays",),
    {"arrays": "_ad.block_vjp(g, arrays)"},
    [
        ([_W, _V],),
        ([[_A, _B], [_W[None], _B[:1]]],),
        ([[_B, _B], [_A[:, :2], _A[:, 1:]]],),
    ],
    linear=True,
)
set_jvps(block, arrays="np.block(_ad.add(t, _ad.zeros_like(arrays)))")
# its VJP is linear in the cotangent (the blocks give only shapes): for higher derivatives
block_vjp = vjp_rule(
    "_ad.block_vjp",
    [M.block_vjp],
    ("ct", "arrays"),
    {"ct": "np.block(_ad.add(g, _ad.zeros_like(arrays)))", "arrays": "0.0"},
    [(np.ones((3, 5)), [[_A, _B], [_W[None], _B[:1]]]), (np.arange(8.0), [_W, _V])],
    linear=True,
)
set_jvps(block_vjp, ct="_ad.block_vjp(t, arrays)", arrays="0.0")
choose = vjp_rule(
    "np.choose",
    [np.choose],
    ("a", "choices", "out", "mode"),
    {"choices": "_ad.choose_vjp(g, a, choices)"},
    [
        (np.array([0, 1, 1, 0, 1]), [_V, _V[::-1]]),
        (np.array([[0, 2, 1], [1, 0, 2]]), (_A, _W, _A[::-1])),
        (np.array([[0], [1]]), [_W, _W * 2.0]),
    ],
    defaults={"out": "None", "mode": "'raise'"},
    linear=True,
)
set_jvps(choose, choices="np.choose(a, _ad.add(t, _ad.zeros_like(choices)))")
diagflat = vjp_rule(
    "np.diagflat",
    [np.diagflat],
    ("v", "k"),
    {"v": "_ad.diagflat_vjp(g, v, k)"},
    [(_V,), (_A, 1), (_B, -2), (1.5,)],
    defaults={"k": "0"},
    linear=True,
)
set_jvps(diagflat, v="np.diagflat(t, k)")
_EDIFF = "ary, to_end, to_begin"
ediff1d = vjp_rule(
    "np.ediff1d",
    [np.ediff1d],
    ("ary", "to_end", "to_begin"),
    {p: f"_ad.ediff1d_vjp(g, {_EDIFF}, '{p}')" for p in ("ary", "to_end", "to_begin")},
    [(_V,), (_A,), (_V, _W[:2], 1.5), (_A, None, _W), (_V, {"to_begin": _B})],
    defaults={"to_end": "None", "to_begin": "None"},
    linear=True,
)
set_jvps(
    ediff1d,
    **{p: f"_ad.ediff1d_jvp(t, {_EDIFF}, '{p}')" for p in ("ary", "to_end", "to_begin")},
)
broadcast_arrays = vjp_rule(
    "np.broadcast_arrays",
    [np.broadcast_arrays],
    (),
    {"args": "_ad.broadcast_arrays_vjp(g, args)"},
    [(_W, _A), (_A[:, :1], _W, 1.5), (_V,)],
    varargs=True,
    kwonly={"subok": "False"},
    linear=True,
)
set_jvps(broadcast_arrays, args="_ad.broadcast_arrays_jvp(t, args, ans)")

# --- reshapes in any order: C order keeps the plain reshape back ------------------------------


def _ordered(rule_name: str, receiver: str, jvp_shape: str) -> None:
    """Give a reshape rule an ``order`` parameter: the VJP and JVP read it."""
    rule = REGISTRY.methods.get(rule_name) or next(r for r in REGISTRY.rules if r.name == rule_name)
    back = rule.vjps[receiver]
    rule.vjps[receiver] = f"({back} if order == 'C' else _ad.reorder_vjp(g, {receiver}, order))"
    forward = rule.jvps[receiver]
    rule.jvps[receiver] = (
        f"({forward} if order == 'C' else _ad.reorder_jvp(t, {receiver}, {jvp_shape}, order))"
    )


for _rule in (arrays.reshape, arrays.ravel):
    _rule.params = (*_rule.params, "order")
    _rule.defaults["order"] = "'C'"
    _ordered(_rule.name, "a", "shape" if _rule is arrays.reshape else "-1")
# (orders 'A' and 'K' read the memory layout, which finite differences do not keep)
arrays.reshape.samples += [(_T, (4, 6), "F"), (_T, {"shape": (6, 4), "order": "F"})]
arrays.ravel.samples += [(_T, "F"), (_A, {"order": "F"})]
for _name in ("ravel", "flatten"):
    _rule = REGISTRY.methods[_name]
    _rule.params = ("self", "order")
    _rule.defaults["order"] = "'C'"
    _ordered(_name, "self", "-1")
    _rule.samples += [(_T, "F"), (_A, {"order": "F"})]
_rule = REGISTRY.methods["reshape"]
_rule.kwonly["order"] = "'C'"
_ordered("reshape", "self", "np.shape(ans)")
_rule.samples += [(_T, 4, 6, {"order": "F"}), (_T, (6, 4), {"order": "F"})]
del methods  # imported for its registrations (the method rules above)

# --- math.gamma and math.lgamma -----------------------------------------------------------------

math_gamma = elementwise(
    "math.gamma",
    [math.gamma],
    ("x",),
    ("ans * _ad.digamma(x)",),
    [(0.7,), (2.5,), (-0.5,)],
    sympy="gamma",
)
math_lgamma = elementwise(
    "math.lgamma",
    [math.lgamma],
    ("x",),
    ("_ad.digamma(x)",),
    [(0.7,), (2.5,), (-0.5,)],
    sympy="loggamma",
)
