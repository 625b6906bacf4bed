"""Rules for the helpers generated code calls (``_ad.<name>``), for higher derivatives.

``grad(grad(f))``, ``jvp(grad(f))`` and ``hessian`` differentiate generated code, which
calls the helpers of :mod:`s2s_ad.runtime` and :mod:`s2s_ad.rules.vjps`. Each rule here
states, for every float parameter of one helper, its VJP and its JVP.

Conventions (beyond those of :mod:`s2s_ad.rules.registry`):

* Parameter names are the helper's own, except that a helper's cotangent argument ``g``
  is called ``ct``, its ``ans`` argument ``res`` and its ``args`` argument ``rest`` here
  (``g``, ``ans`` and ``args`` mean something else in templates). Generated code calls
  helpers positionally, so only the positions matter; a keyword call such as
  ``_ad.sum_vjp(g=...)`` does not bind.
* Parameters that carry only a shape, a structure or an equality pattern (``sum_vjp``'s
  ``a``, ``max_vjp``'s ``a`` and ``res``, ``unbroadcast``'s ``x``) have the template
  ``0.0`` in both modes: the output does not depend on their values (the tie pattern of
  a max is piecewise constant). Integer, index, axis, dtype and order parameters have no
  template at all: they are never differentiated.
* Adjoints may be the symbolic zero ``0.0`` (or ``None``). Templates accept it for ``g``
  and ``t`` (``_ad.materialize`` gives dense zeros where a shape is needed), and, for the
  helpers whose structural argument may itself be a symbolic zero (``getitem``,
  ``add_at``, ``zero_at``, ``add``, ``drop_last``, ``append_bar``), they return ``0.0``
  as that argument's cotangent (``_ad.unless_zero``). The VJPs of the parameters generated
  code passes as tuple literals (``pack``'s ``parts``, ``einsum_vjp``'s ``operands``)
  return a tuple even for a zero cotangent: the reverse pass indexes them.
* Samples are mostly consistent calls (``res`` the value it stands for); ``max``-like
  helpers are sampled where the extremum of every slice is infinite: there the tie
  pattern does not change under small perturbations, so finite differences can confirm
  the ``0.0`` templates.

Not registered (see ``SKIPPED``): in-place and dynamic variants that code generated for
higher derivatives does not contain. ``runtime.sequence`` and ``runtime.not_a_view`` are
registered by :mod:`s2s_ad.custom`. The second-order pieces at the end of
:mod:`.vjps` (``prod_hvp`` ... ``solve_vjp_a_dct``) appear only in second-order code and
are left unregistered: a third derivative transforms their source.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import runtime as rt
from . import orderings as O
from . import vjps as V
from .registry import Rule, elementwise, nondiff, set_jvps, vjp_rule

RULES: list[Rule] = []

# Runtime helpers without a rule, and why.
SKIPPED = {
    "add_at_owned": "in-place variant of add_at; not emitted in code to be differentiated",
    "zero_at_owned": "in-place variant of zero_at; not emitted in code to be differentiated",
    "dense": "fresh writable adjoint for in-place loops; not emitted there",
    "vjp_call": "dynamic call (returns a pullback); differentiated through dispatch",
    "restore_item": "undoes an overwrite in the backward sweep; returns nothing",
}
# Second-order pieces of vjps.py: their source is transformed for a third derivative.
FROM_SOURCE = (
    "prod_hvp",
    "norm_vjp_dx",
    "einsum_jvp",
    "einsum_vjp_dops",
    "einsum_parts_vjp",
    "solve_dual",
    "solve_vjp_a_dct",
    # helpers of the rules in their own modules (SciPy, np.linalg, shapes)
    *V.FROM_SOURCE,
)


def _rule(
    func: Any,
    params: str,
    vjps: dict[str, str],
    jvps: dict[str, str],
    samples: list[tuple[Any, ...]],
    *,
    defaults: dict[str, str] | None = None,
    linear: bool = False,
) -> Rule:
    assert set(vjps) == set(jvps), func
    rule = vjp_rule(
        "_ad." + func.__name__,
        [func],
        tuple(params.split()),
        vjps,
        samples,
        defaults=defaults,
        linear=linear,
    )
    set_jvps(rule, **jvps)
    RULES.append(rule)
    return rule


def _values(shape: Any, seed: float = 0.0) -> Any:
    """A deterministic float sample of ``shape`` (a float for ``()``)."""
    shape = np.shape(np.empty(shape)) if not isinstance(shape, tuple) else shape
    size = int(np.prod(shape))
    out = np.cos(0.7 * np.arange(size) + seed + 0.3) + 0.1 * (seed + 1.0)
    return float(out[0]) if shape == () else out.reshape(shape)


def _like(value: Any, seed: float = 0.0) -> Any:
    """A deterministic cotangent with the structure of ``value``."""
    if isinstance(value, (list, tuple)):
        return type(value)(_like(v, seed + i) for i, v in enumerate(value))
    return _values(np.shape(value), seed)


_V = np.array([0.6, -1.3, 0.9, 2.1])
_W = np.array([1.1, -0.4, 0.7])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_B = np.array([[0.5, -0.3, 1.1, 0.2], [1.4, 0.6, -0.9, 0.8], [-0.2, 0.7, 0.3, -1.0]])
_T = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)
_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])
_MS = np.stack([_M, _M.T + np.eye(3) * 0.5])
_ZEROS = np.array([[0.0, 1.2, -0.8], [1.5, 0.0, 0.0], [0.0, 0.0, 0.0]])
_INF = np.inf

# --- runtime helpers ----------------------------------------------------------------------

_rule(
    rt.unbroadcast,
    "ct x",
    {"ct": "_ad.unbroadcast_vjp(g, ct)", "x": "0.0"},
    {"ct": "_ad.unbroadcast(t, x)", "x": "0.0"},
    [
        (_T, np.ones((3, 1))),
        (_A, 1.5),
        (_A, _A[::-1]),
        (1.5, _W),
        (_A, np.ones((1, 3))),
        (_T, np.ones((2, 1, 4))),
    ],
    linear=True,
)
_rule(
    rt.unbroadcast_vjp,
    "ct like",
    {"ct": "_ad.unbroadcast(g, ct)", "like": "0.0"},
    {"ct": "_ad.unbroadcast_vjp(t, like)", "like": "0.0"},
    [(_W, _A), (1.5, _W), (_A, _A), (np.ones((1, 3)), _T[0].T), ((0.5, _W), (1.5, _W))],
    linear=True,
)
_rule(
    rt.getitem,
    "ct index",
    {"ct": "_ad.add_at(0.0, ct, index, _ad.unless_zero(g, ct))"},
    {"ct": "_ad.getitem(t, index)"},
    [
        (_A, 1),
        (_V, 2),
        (_T, (0, slice(1, 3))),
        ([0.5, 1.2, -0.3], 1),
        (_V, np.array([0, 2, 2])),
        (_A, (slice(None), 1)),
    ],
    linear=True,
)
# points for add_at and its transpose add_at_t (same argument layout)
_ADD_AT_POINTS = [
    (_A * 0.5, _A, 1, _W),
    (_V * 2.0, _V, np.array([0, 2, 2]), np.array([0.5, 0.25, 1.0])),
    (_A + 1.0, _A, 0, np.array([[0.1, 0.2, 0.3], [0.5, -0.4, 0.2]])),
    ([0.5, 1.0], [1.5, -2.0], 1, 0.7),
    ([_W, 0.5 * _W, -_W], [_W, _W, _W], slice(0, 2), [_W * 2.0, _W * 3.0]),
]
_rule(
    rt.add_at,
    "acc x index ct",
    {"acc": "_ad.unless_zero(g, acc)", "x": "0.0", "ct": "_ad.add_at_t(g, x, index, ct)"},
    {"acc": "t", "x": "0.0", "ct": "_ad.add_at(0.0, x, index, t)"},
    _ADD_AT_POINTS,
    linear=True,
)
_rule(
    rt.scatter_add,
    "a index b",
    {"a": "g", "b": "_ad.unbroadcast(_ad.getitem(g, index), b)"},
    {"a": "t", "b": "_ad.scatter_add(_ad.zeros_like(a), index, t)"},
    [
        (_V, np.array([0, 2, 2]), np.array([0.5, 0.25, 1.0])),
        (_A, np.array([1, 1, 0]), _W),
        (_A, np.array([1, 0, 1, 1]), np.array([[0.5], [1.5], [-0.2], [0.7]])),
        (_V, 2, 1.5),
        (_A, (np.array([0, 0, 1]), np.array([2, 2, 0])), np.array([0.3, -0.6, 0.9])),
    ],
    linear=True,
)
# points for pick and its transpose pick_t (pick_t's first argument: an adjoint of pick's
# result)
_ORDERS = [
    ([0.5, -1.5, 2.0], [2, 0, 1]),
    ((_W, 0.5 * _W), [1, 0]),
    (_V, [3, 1, 0, 2]),
    ([(1.5, _W), (-0.5, 2.0 * _W)], [1, 0]),
]
_rule(
    O.pick,
    "xs order",
    {"xs": "_ad.pick_t(g, xs, order)"},
    {"xs": "_ad.pick(t, order)"},
    _ORDERS,
    linear=True,
)
_rule(
    O.pick_t,
    "ct xs order",
    {"ct": "_ad.pick(g, order)", "xs": "0.0"},
    {"ct": "_ad.pick_t(t, xs, order)", "xs": "0.0"},
    [(O.pick(xs, order), xs, order) for xs, order in _ORDERS],
    linear=True,
)
# a write through an index that repeats an entry keeps its last value (runtime.written)
_REPEATS = [
    (_V, np.array([0, 2, 2, 1])),
    (_A, np.array([1, 0, 1])),
    (_A, (slice(None), np.array([2, 0, 2]))),
    (_V, np.array([-1, 3, 0])),
    (_A, 1),
]
_rule(
    rt.written,
    "ct index",
    {"ct": "_ad.add_at(0.0, ct, index, _ad.keep_last(_ad.unless_zero(g, ct), ct, index))"},
    {"ct": "_ad.written(t, index)"},
    _REPEATS,
    linear=True,
)
_rule(
    rt.keep_last,
    "part y index",
    {"part": "_ad.keep_last(g, y, index)", "y": "0.0"},
    {"part": "_ad.keep_last(t, y, index)", "y": "0.0"},
    [(rt.getitem(y, index) * 1.5, y, index) for y, index in _REPEATS],
    linear=True,
)
_rule(
    rt.zero_at,
    "acc index",
    {"acc": "_ad.zero_at(_ad.unless_zero(g, acc), index)"},
    {"acc": "_ad.zero_at(t, index)"},
    [(_A, 1), (_V, np.array([0, 3])), ([0.5, 1.5, -0.2], 1), (_T, (0, slice(1, 3)))],
    linear=True,
)
_rule(
    rt.add,
    "a b",
    {
        "a": "_ad.unless_zero(_ad.unbroadcast(g, a), a)",
        "b": "_ad.unless_zero(_ad.unbroadcast(g, b), b)",
    },
    {"a": "t", "b": "t"},
    [(_A, _A[::-1]), (1.5, -0.3), ([_W, 1.5], [_W * 2.0, 0.5]), ((0.3, _V), (1.2, _V * 2.0))],
    linear=True,
)
_rule(
    rt.pack,
    "x parts",
    {"x": "0.0", "parts": "_ad.pack_t(g, x, parts)"},
    {"x": "0.0", "parts": "_ad.repack(t, x, parts)"},
    [
        (_A, (_W, _W * 2.0)),
        (_A, (1.5, _W)),
        (_V, (0.5, 1.5, -0.3, 2.0)),
        ([1.5, _W], (0.3, _W * 2.0)),
        ((1.5, 2.5), [0.5, -1.0]),
    ],
    linear=True,
)
_rule(
    rt.append_bar,
    "acc xs last",
    {
        "acc": "_ad.unless_zero(_ad.drop_last(g), acc)",
        "xs": "0.0",
        "last": "_ad.unless_zero(_ad.getitem(g, -1), last)",
    },
    {
        # a symbolic-zero acc is a constant: no tangent (materialize would make it 0-d)
        "acc": "_ad.append_bar(_ad.unless_zero(_ad.materialize(t, acc), acc), xs, "
        "_ad.zeros_like(last))",
        "xs": "0.0",
        "last": "_ad.append_bar(0.0, xs, t)",
    },
    [([0.5, -1.2], [2.0, 3.0], 0.7), ([_W, 0.5 * _W], [_W, _W], _W * 3.0)],
    linear=True,
)
_rule(
    rt.drop_last,
    "acc",
    {"acc": "_ad.add_at(0.0, acc, slice(None, -1), _ad.unless_zero(g, acc))"},
    {"acc": "_ad.drop_last(_ad.unless_zero(_ad.materialize(t, acc), acc))"},
    [([0.5, -1.2, 2.0],), ([_W, _W * 2.0],)],
    linear=True,
)
_rule(
    rt.as_grads,
    "grads n",
    {"grads": "_ad.as_grads_t(g, grads, n)"},
    {"grads": "_ad.as_grads(_ad.materialize(t, grads), n)"},
    [((_W,), 1), (_A, 1), ((1.5, _W), 2), ([0.5, _A], 2)],
    linear=True,
)
_rule(rt.copy, "x", {"x": "g"}, {"x": "t"}, [(_A,), (1.5,), ([0.5, 1.5],)], linear=True)
_rule(
    rt.old_item,
    "obj index",
    {"obj": "_ad.old_item_vjp(obj, index, g)"},
    {"obj": "_ad.getitem(t, index)"},
    [(_A, 1), (_V, 2), ([0.5, -1.5, 2.0], 1), (_T, (1, slice(0, 2))), ({"a": _V}, "a")],
    linear=True,
)
nondiff("_ad: adjoint seeds, zeros and tests", [rt.seed, rt.zeros_like, rt.is_zero])

# variables mode differentiated again (s2s_ad/tape_nested.py): the token ``acc`` carries
# what a gradient adds to Variables' gradients; the adjoint of ``grad`` is the outer
# cotangent of its Variable's gradient (zero outside that backward sweep). Reverse mode
# only: their tangents are zero, and forward mode is not run over such code.
_rule(
    rt.variable_grad_acc,
    "acc value grad",
    {"acc": "g", "value": "0.0", "grad": "_ad.variable_cotangent(value, grad)"},
    {"acc": "t", "value": "0.0", "grad": "0.0"},
    [(0.0, _V, _V), (1.5, _A, 2.0)],
)
_rule(
    rt.merge_tokens,
    "acc token",
    {"acc": "g", "token": "g"},
    {"acc": "t", "token": "t"},
    [(0.0, 0.0), (1.5, -0.5)],
)

# --- helpers for higher derivatives (vjps.py), linear in their first argument ------------

_rule(
    V.materialize,
    "v like",
    {"v": "_ad.unless_zero(g, v)", "like": "0.0"},
    {"v": "_ad.materialize(t, like)", "like": "0.0"},
    [(_A, _A), ([0.5, _W], [1.0, _W]), (1.5, 2.0)],
    linear=True,
)
_rule(
    V.unless_zero,
    "v guard",
    {"v": "_ad.unless_zero(g, guard)", "guard": "0.0"},
    {"v": "_ad.unless_zero(t, guard)", "guard": "0.0"},
    [(_A, _A[::-1]), ([0.5, -1.5], 2.0), (1.5, _W)],
    linear=True,
)
_rule(
    V.add_at_t,
    "ct x index ref",
    {"ct": "_ad.add_at(0.0, x, index, _ad.unless_zero(g, ref))", "x": "0.0", "ref": "0.0"},
    {"ct": "_ad.add_at_t(t, x, index, ref)", "x": "0.0", "ref": "0.0"},
    _ADD_AT_POINTS,
    linear=True,
)
_rule(
    V.pack_t,
    "ct x parts",
    {"ct": "_ad.repack(g, x, parts)", "x": "0.0", "parts": "0.0"},
    {"ct": "_ad.pack_t(t, x, parts)", "x": "0.0", "parts": "0.0"},
    [
        (_A, _A, (_W, _W * 2.0)),
        (_A, _A, (1.5, _W)),
        (_V, _V, (0.5, 1.5, -0.3, 2.0)),
        ([0.5, _W], [1.5, _W], (0.3, _W * 2.0)),
    ],
    linear=True,
)
_rule(
    V.repack,
    "ct x parts",
    {"ct": "_ad.pack_t(g, x, parts)", "x": "0.0", "parts": "0.0"},
    {"ct": "_ad.repack(t, x, parts)", "x": "0.0", "parts": "0.0"},
    [
        ((_W, _W * 2.0), _A, (_W, _W)),
        ((0.3, _W), [1.5, _W], (0.1, _W)),
        ((0.5, 1.5, -0.3, 2.0), _V, (0.1, 0.2, 0.3, 0.4)),
    ],
    linear=True,
)
_rule(
    V.as_grads_t,
    "ct grads n",
    {"ct": "_ad.as_grads(_ad.materialize(g, grads), n)", "grads": "0.0"},
    {"ct": "_ad.as_grads_t(t, grads, n)", "grads": "0.0"},
    [((_W,), _W, 1), ((_A,), (_A,), 1), ((1.5, _W), (0.5, _W), 2), ((0.5, _A), [1.0, _A], 2)],
    linear=True,
)
_rule(
    V.transpose_axes,
    "ct axes",
    {"ct": "_ad.transpose_vjp(g, axes)"},
    {"ct": "_ad.transpose_axes(t, axes)"},
    [(_T, (2, 0, 1)), (_A, None), (_T, [1, -1, 0]), (_T, ((1, 2, 0),)), (_A, ())],
    linear=True,
)
_rule(
    V.sort_take,
    "ct a axis",
    {"ct": "_ad.sort_vjp(g, a, axis)", "a": "0.0"},
    {"ct": "_ad.sort_take(t, a, axis)", "a": "0.0"},
    [(_V[::-1], _V, -1), (_A[::-1], _A, 0), (_T[::-1], _T, None), (_T, _T[:, ::-1], 1)],
    linear=True,
)
_rule(
    V.item_take,
    "ct x rest",
    {"ct": "_ad.item_vjp(g, x, rest)", "x": "0.0"},
    {"ct": "_ad.item_take(t, x, rest)", "x": "0.0"},
    [(_A[::-1], _A, (4,)), (_A, _A, (1, 2)), (_V[1:2], _V[1:2], ()), (_A, _A, ((0, 1),))],
    linear=True,
)
_rule(
    V.array_vjp_t,
    "ct ref obj dtype",
    {"ct": "_ad.array_vjp(_ad.unless_zero(g, ref), obj, dtype)", "ref": "0.0", "obj": "0.0"},
    {"ct": "_ad.array_vjp_t(t, ref, obj, dtype)", "ref": "0.0", "obj": "0.0"},
    [
        ([0.5, 1.2, -0.3], np.ones(3), [0.5, 1.2, -0.3], None),
        ([_W, _W * 2.0], np.ones((2, 3)), [_W, _W], None),
        (_W, np.ones((1, 3)), _W, None),
        ((1.5, -0.5), np.ones(2), (1.5, 0.5), float),
        (_W, np.ones(3), _W, int),
    ],
    linear=True,
)

# --- building blocks ----------------------------------------------------------------------

_rule(
    V.mT,
    "x",
    {"x": "_ad.mT(_ad.materialize(g, ans))"},
    {"x": "_ad.mT(_ad.materialize(t, x))"},
    [(_A,), (_T,)],
    linear=True,
)
safe_log = elementwise(
    "_ad.safe_log",
    [V.safe_log],
    ("x",),
    ("np.where(x > 0, 1.0 / np.where(x > 0, x, 1.0), 0.0)",),
    [(np.array([0.5, 1.5, -2.0, 3.0]),), (1.7,), (-0.5,)],
)
RULES.append(safe_log)
nondiff("_ad: masks and weights", [V.max_weight, V.min_weight, V.clip_mask, V.norm_order])
nondiff("_ad: einsum's subscripts from the interleaved form", [V.einsum_subscripts])

# --- reductions ---------------------------------------------------------------------------
#
# Each reduction helper is linear in its cotangent ``ct``: its transpose sums ``g`` times
# the helper's weights (the helper applied to a cotangent of ones) over the reduced axes.

_REDUCE = [(_A, None, False), (_V, None, False), (_A, 1, False), (_T, (0, 2), False)]
_REDUCE += [(_T, -1, True), (_A, 0, True)]
_SUM = "np.sum(_ad.materialize(g, a), axis=axis, keepdims=keepdims)"


def _reduced(func: Any, configs: list[tuple[Any, Any, bool]], seed: float = 0.0) -> list:
    """Samples ``(ct, a, axis, keepdims)`` with ``ct`` shaped like ``func(a, axis)``."""
    out = []
    for i, (a, axis, keepdims) in enumerate(configs):
        out.append((_like(func(a, axis=axis, keepdims=keepdims), seed + i), a, axis, keepdims))
    return out


_rule(
    V.sum_vjp,
    "ct a axis keepdims",
    {"ct": _SUM, "a": "0.0"},
    {"ct": "_ad.sum_vjp(t, a, axis, keepdims)", "a": "0.0"},
    _reduced(np.sum, _REDUCE),
    linear=True,
)
_rule(
    V.mean_vjp,
    "ct a axis keepdims",
    {"ct": _SUM.replace("np.sum", "np.mean"), "a": "0.0"},
    {"ct": "_ad.mean_vjp(t, a, axis, keepdims)", "a": "0.0"},
    _reduced(np.mean, _REDUCE),
    linear=True,
)
_rule(
    V.prod_vjp,
    "ct a axis keepdims",
    {
        "ct": "np.sum(g * _ad.prod_vjp(1.0, a, axis, True), axis=axis, keepdims=keepdims)",
        "a": "_ad.prod_hvp(g * _ad.sum_vjp(ct, a, axis, keepdims), a, axis)",
    },
    {
        "ct": "_ad.prod_vjp(t, a, axis, keepdims)",
        "a": "_ad.sum_vjp(ct, a, axis, keepdims) * _ad.prod_hvp(t, a, axis)",
    },
    _reduced(np.prod, _REDUCE + [(_ZEROS, None, False), (_ZEROS, 1, True), (_ZEROS, 0, False)]),
)


def _extremum(func: Any, configs: list[tuple[Any, Any, bool]]) -> list:
    """Samples ``(ct, a, res, axis, keepdims)`` with ``res = func(a, axis)``."""
    out = []
    for i, (a, axis, keepdims) in enumerate(configs):
        res = func(a, axis=axis, keepdims=keepdims)
        out.append((_like(res, i), a, res, axis, keepdims))
    return out


# every slice attains its extremum at an infinite entry (two of them: a tie)
_TOP = np.array([[_INF, -1.2, _INF], [1.5, _INF, -0.7]])
_TOP3 = np.where(np.arange(24).reshape(2, 3, 4) % 5 == 0, _INF, _T)
_MAX = [(_TOP, None, False), (_TOP, 1, False), (_TOP3, (0, 2), False), (_TOP, 1, True)]
_MIN = [(-a, axis, keepdims) for a, axis, keepdims in _MAX]
for _func, _helper, _configs in ((np.max, V.max_vjp, _MAX), (np.min, V.min_vjp, _MIN)):
    _name = _helper.__name__
    _rule(
        _helper,
        "ct a res axis keepdims",
        {
            "ct": f"np.sum(g * _ad.{_name}(np.ones(np.shape(res)), a, res, axis, keepdims), "
            "axis=axis, keepdims=keepdims)",
            "a": "0.0",
            "res": "0.0",
        },
        {"ct": f"_ad.{_name}(t, a, res, axis, keepdims)", "a": "0.0", "res": "0.0"},
        _extremum(_func, _configs),
        linear=True,
    )


def _lse(a: Any, axis: Any = 0, keepdims: bool = False) -> Any:
    return np.logaddexp.reduce(a, axis=axis, keepdims=keepdims)


_rule(
    V.logsumexp_vjp,
    "ct a res axis keepdims",
    {
        "ct": "np.sum(g * _ad.logsumexp_vjp(np.ones(np.shape(res)), a, res, axis, keepdims), "
        "axis=axis, keepdims=keepdims)",
        "a": "g * ans",
        "res": "-np.sum(g * ans, axis=axis, keepdims=keepdims)",
    },
    {
        "ct": "_ad.logsumexp_vjp(t, a, res, axis, keepdims)",
        "a": "t * ans",
        "res": "-ans * _ad.sum_vjp(t, a, axis, keepdims)",
    },
    _extremum(_lse, [(_A, 0, False), (_V, None, False), (_T, 1, False), (_T, (0, 2), True)]),
)


def _spread(func: Any, configs: list[tuple[Any, Any, int, bool]], res: bool) -> list:
    """Samples ``(ct, a, [res,] axis, ddof, keepdims)`` for ``np.var``/``np.std``."""
    out = []
    for i, (a, axis, ddof, keepdims) in enumerate(configs):
        value = func(a, axis=axis, ddof=ddof, keepdims=keepdims)
        head = (_like(value, i), a, value) if res else (_like(value, i), a)
        out.append((*head, axis, ddof, keepdims))
    return out


_SPREAD = [(_A, None, 0, False), (_V, None, 1, False), (_A, 1, 1, False), (_T, (0, 2), 0, True)]
_rule(
    V.var_vjp,
    "ct a axis ddof keepdims",
    {
        "ct": "np.sum(g * _ad.var_vjp(np.ones(np.shape(ct)), a, axis, ddof, keepdims), "
        "axis=axis, keepdims=keepdims)",
        "a": "_ad.var_vjp(ct, _ad.materialize(g, a), axis, ddof, keepdims)",
    },
    {
        "ct": "_ad.var_vjp(t, a, axis, ddof, keepdims)",
        "a": "_ad.var_vjp(ct, _ad.materialize(t, a), axis, ddof, keepdims)",
    },
    _spread(np.var, _SPREAD, res=False),
)
_INV_RES = "np.where(res > 0, res, np.inf)"  # 1 / res, and 0 where res == 0
_rule(
    V.std_vjp,
    "ct a res axis ddof keepdims",
    {
        "ct": "np.sum(g * _ad.std_vjp(np.ones(np.shape(res)), a, res, axis, ddof, keepdims), "
        "axis=axis, keepdims=keepdims)",
        "a": "_ad.std_vjp(ct, _ad.materialize(g, a), res, axis, ddof, keepdims)",
        "res": f"-np.sum(g * ans, axis=axis, keepdims=keepdims) / {_INV_RES}",
    },
    {
        "ct": "_ad.std_vjp(t, a, res, axis, ddof, keepdims)",
        "a": "_ad.std_vjp(ct, _ad.materialize(t, a), res, axis, ddof, keepdims)",
        "res": f"-ans * _ad.sum_vjp(t / {_INV_RES}, a, axis, keepdims)",
    },
    _spread(np.std, _SPREAD, res=True),
)


def _norms(configs: list[tuple[Any, Any, Any, bool]]) -> list:
    """Samples ``(ct, x, res, ord, axis, keepdims)`` with ``res = np.linalg.norm(...)``."""
    out = []
    for i, (x, ord, axis, keepdims) in enumerate(configs):
        res = np.linalg.norm(x, ord, axis, keepdims)
        out.append((_like(res, i), x, res, ord, axis, keepdims))
    return out


_INF_V = np.array([0.6, -_INF, 0.9, -_INF])
_INF_A = np.array([[0.3, -1.2, _INF], [-_INF, 0.4, -0.7]])
_rule(
    V.norm_vjp,
    "ct x res ord axis keepdims",
    {
        "ct": "np.sum(g * _ad.norm_vjp(np.ones(np.shape(res)), x, res, ord, axis, keepdims), "
        "axis=axis, keepdims=keepdims)",
        "x": "_ad.norm_vjp_dx(_ad.materialize(g, x), ct, x, res, ord, axis, keepdims)",
        "res": "-_ad.norm_order(x, ord, axis) * np.sum(g * ans, axis=axis, keepdims=keepdims) "
        f"/ {_INV_RES}",
    },
    {
        "ct": "_ad.norm_vjp(t, x, res, ord, axis, keepdims)",
        "x": "_ad.norm_vjp_dx(_ad.materialize(t, x), ct, x, res, ord, axis, keepdims)",
        "res": "-_ad.norm_order(x, ord, axis) * ans "
        f"* _ad.sum_vjp(t / {_INV_RES}, x, axis, keepdims)",
    },
    _norms(
        [
            (_A, None, None, False),
            (_V, None, None, False),
            (_V, 1, None, False),
            (_V, 3, None, False),
            (_V, 0.5, None, False),
            (_V, 0, None, False),
            (_INF_V, _INF, None, False),
            (np.array([_INF, -_INF, _INF]), -_INF, None, False),
            (_A, "fro", None, False),
            (_INF_A, 1, None, False),
            (_INF_A.T, _INF, None, False),
            (_A, None, 1, False),
            (_A, 3, 1, True),
            (_T, None, (1, 2), False),
            (_T, "fro", (2, 0), True),
        ]
    ),
)
_rule(
    V.cumsum_vjp,
    "ct a axis",
    {"ct": "np.cumsum(_ad.materialize(g, a), axis)", "a": "0.0"},
    {"ct": "_ad.cumsum_vjp(t, a, axis)", "a": "0.0"},
    [(_values(6), _A, None), (_values((2, 3, 4)), _T, 1), (_values(4), _V, -1)],
    linear=True,
)
_rule(
    V.sort_vjp,
    "ct a axis",
    {"ct": "_ad.sort_take(g, a, axis)", "a": "0.0"},
    {"ct": "_ad.sort_vjp(t, a, axis)", "a": "0.0"},
    [(_values(4), _V, -1), (_values((2, 3)), _A, 0), (_values(24), _T, None)],
    linear=True,
)

# --- linear algebra -------------------------------------------------------------------------
#
# A VJP helper of a bilinear primal is bilinear in (cotangent, other operand): its
# transpose in ``ct`` is the primal's JVP, and its derivative in the other operand is the
# other VJP helper with ``g`` in place of the first operand.


def _bilinear(
    func: Any,
    pairs: list[tuple[Any, ...]],
    seed: float = 0.0,
) -> list:
    out = []
    for i, (a, b, *rest) in enumerate(pairs):
        out.append((_like(func(a, b, *rest), seed + i), a, b, *rest))
    return out


_TD = [
    (_T, np.cos(np.arange(24.0)).reshape(3, 4, 2) + 0.1, 2),
    (_A, _B, 1),
    (_W, _A, 0),
    (_T, np.cos(np.arange(60.0)).reshape(4, 3, 5), ([1, 2], [1, 0])),
    (_T, np.cos(np.arange(15.0)).reshape(3, 5), (1, 0)),
]
_rule(
    V.tensordot_vjp_a,
    "ct a b axes",
    {
        "ct": "np.tensordot(_ad.materialize(g, a), b, axes)",
        "a": "0.0",
        "b": "_ad.tensordot_vjp_b(ct, _ad.materialize(g, a), b, axes)",
    },
    {
        "ct": "_ad.tensordot_vjp_a(t, a, b, axes)",
        "a": "0.0",
        "b": "_ad.tensordot_vjp_a(ct, a, _ad.materialize(t, b), axes)",
    },
    _bilinear(np.tensordot, _TD),
)
_rule(
    V.tensordot_vjp_b,
    "ct a b axes",
    {
        "ct": "np.tensordot(a, _ad.materialize(g, b), axes)",
        "a": "_ad.tensordot_vjp_a(ct, a, _ad.materialize(g, b), axes)",
        "b": "0.0",
    },
    {
        "ct": "_ad.tensordot_vjp_b(t, a, b, axes)",
        "a": "_ad.tensordot_vjp_b(ct, _ad.materialize(t, a), b, axes)",
        "b": "0.0",
    },
    _bilinear(np.tensordot, _TD, 1.0),
)
_DOT = [
    (_W, _W[::-1]),
    (_A, _W),
    (_W[:2], _A),
    (_A, _B),
    (_T, _V),
    (1.5, _A),
    (_A, 2.0),
    (_T, np.sin(np.arange(60.0)).reshape(3, 4, 5)),
]
_INNER = [(_W, _W[::-1]), (_A, _B.T), (_T, _V), (1.5, _A)]
_MATMUL = [(_A, _B), (_W, _B), (_B, _V), (_MS, _M), (_M, _MS), (_W, _W[::-1]), (_MS, _W)]
for _op, _name, _fx, _fy, _pairs in (
    ("np.dot", "dot", V.dot_vjp_a, V.dot_vjp_b, _DOT),
    ("np.inner", "inner", V.inner_vjp_a, V.inner_vjp_b, _INNER),
):
    _rule(
        _fx,
        "ct a b",
        {
            "ct": f"{_op}(_ad.materialize(g, a), b)",
            "a": "0.0",
            "b": f"_ad.{_name}_vjp_b(ct, _ad.materialize(g, a), b)",
        },
        {
            "ct": f"_ad.{_name}_vjp_a(t, a, b)",
            "a": "0.0",
            "b": f"_ad.{_name}_vjp_a(ct, a, _ad.materialize(t, b))",
        },
        _bilinear(getattr(np, _name), _pairs),
    )
    _rule(
        _fy,
        "ct a b",
        {
            "ct": f"{_op}(a, _ad.materialize(g, b))",
            "a": f"_ad.{_name}_vjp_a(ct, a, _ad.materialize(g, b))",
            "b": "0.0",
        },
        {
            "ct": f"_ad.{_name}_vjp_b(t, a, b)",
            "a": f"_ad.{_name}_vjp_b(ct, _ad.materialize(t, a), b)",
            "b": "0.0",
        },
        _bilinear(getattr(np, _name), _pairs, 1.0),
    )
_rule(
    V.matmul_vjp_x,
    "ct x y",
    {
        "ct": "_ad.materialize(g, x) @ y",
        "x": "0.0",
        "y": "_ad.matmul_vjp_y(ct, _ad.materialize(g, x), y)",
    },
    {
        "ct": "_ad.matmul_vjp_x(t, x, y)",
        "x": "0.0",
        "y": "_ad.matmul_vjp_x(ct, x, _ad.materialize(t, y))",
    },
    _bilinear(np.matmul, _MATMUL),
)
_rule(
    V.matmul_vjp_y,
    "ct x y",
    {
        "ct": "x @ _ad.materialize(g, y)",
        "x": "_ad.matmul_vjp_x(ct, x, _ad.materialize(g, y))",
        "y": "0.0",
    },
    {
        "ct": "_ad.matmul_vjp_y(t, x, y)",
        "x": "_ad.matmul_vjp_y(ct, _ad.materialize(t, x), y)",
        "y": "0.0",
    },
    _bilinear(np.matmul, _MATMUL, 1.0),
)


def _einsums(cases: list[tuple[Any, ...]]) -> list:
    out = []
    for i, (subscripts, *operands) in enumerate(cases):
        out.append((_like(np.einsum(subscripts, *operands), i), subscripts, tuple(operands)))
    return out


_rule(
    V.einsum_vjp,
    "ct subscripts operands",
    {
        "ct": "_ad.einsum_jvp(subscripts, operands, g)",
        "operands": "_ad.einsum_vjp_dops(g, ct, subscripts, operands)",
    },
    {
        "ct": "_ad.einsum_vjp(t, subscripts, operands)",
        "operands": "_ad.einsum_vjp_dops(t, ct, subscripts, operands)",
    },
    _einsums(
        [
            ("ij,jk->ik", _A, _B),
            ("ij,ij->", _A, _A[::-1]),
            ("ii->i", _M),
            ("i,j", _W, _V),
            ("...ij,...jk->...ik", _MS, _B[:, :2]),
            ("ij,j->i", _A, _W),
            ("iij->j", _MS.T),
            ("i,i->i", _W, np.array([2.0])),
            ("ij,jk,kl->il", _A, _B, _B.T[:, :2]),
        ]
    ),
)
_rule(
    V.diagonal_vjp,
    "ct a offset axis1 axis2",
    {"ct": "np.diagonal(_ad.materialize(g, a), offset, axis1, axis2)", "a": "0.0"},
    {"ct": "_ad.diagonal_vjp(t, a, offset, axis1, axis2)", "a": "0.0"},
    [
        (_like(np.diagonal(a, *rest)), a, *rest)
        for a, *rest in [(_M, 0, 0, 1), (_B, 1, 0, 1), (_T, -1, 2, 1), (_B, -1, 1, 0)]
    ],
    linear=True,
)
_rule(
    V.trace_vjp,
    "ct a offset axis1 axis2",
    {"ct": "np.trace(_ad.materialize(g, a), offset, axis1, axis2)", "a": "0.0"},
    {"ct": "_ad.trace_vjp(t, a, offset, axis1, axis2)", "a": "0.0"},
    [
        (_like(np.trace(a, *rest)), a, *rest)
        for a, *rest in [(_M, 0, 0, 1), (_A, 1, 0, 1), (_T, 0, 1, 2), (_T, -1, 2, 0)]
    ],
    linear=True,
)
_rule(
    V.diag_vjp,
    "ct v k",
    {"ct": "np.diag(_ad.materialize(g, v), k)", "v": "0.0"},
    {"ct": "_ad.diag_vjp(t, v, k)", "v": "0.0"},
    [(_like(np.diag(v, k)), v, k) for v, k in [(_W, 0), (_W, -1), (_B, 0), (_B, 2), (_A, -1)]],
    linear=True,
)
_INV_T = "_ad.mT(np.linalg.inv(a))"
_rule(
    V.det_vjp,
    "ct a res",
    {
        "ct": f"res * np.sum(g * {_INV_T}, axis=(-2, -1))",
        "a": f"-({_INV_T} @ _ad.mT(_ad.materialize(g, a)) @ ans)",
        "res": f"ct * np.sum(g * {_INV_T}, axis=(-2, -1))",
    },
    {
        "ct": "_ad.det_vjp(t, a, res)",
        "a": f"-(ans @ _ad.mT(_ad.materialize(t, a)) @ {_INV_T})",
        "res": "_ad.det_vjp(ct, a, t)",
    },
    [(0.7, _M, np.linalg.det(_M)), (_values(2), _MS, np.linalg.det(_MS))],
)
_SOLVE = [(_M, _W), (_M, _B[:, :2]), (_MS, _B[None, :, 1:]), (_MS, _W)]
_rule(
    V.solve_vjp_b,
    "ct a b",
    {
        "ct": "np.linalg.solve(a, _ad.materialize(g, b))",
        "a": "_ad.solve_vjp_a(ct, a, _ad.materialize(g, b), "
        "np.linalg.solve(a, _ad.materialize(g, b)))",
        "b": "0.0",
    },
    {
        "ct": "_ad.solve_vjp_b(t, a, b)",
        "a": "_ad.solve_vjp_b(_ad.solve_dual(t, ct, a, b), a, b)",
        "b": "0.0",
    },
    _bilinear(np.linalg.solve, _SOLVE),
)
_rule(
    V.solve_vjp_a,
    "ct a b res",
    {
        "ct": "_ad.solve_vjp_a_dct(g, a, b, res)",
        "a": "_ad.solve_vjp_a(ct, a, b, _ad.solve_vjp_a_dct(g, a, b, res))",
        "b": "0.0",
        "res": "_ad.solve_dual(g, ct, a, b)",
    },
    {
        "ct": "_ad.solve_vjp_a(t, a, b, res)",
        "a": "_ad.solve_vjp_a(_ad.solve_dual(t, ct, a, b), a, b, res)",
        "b": "0.0",
        "res": "_ad.solve_vjp_a(ct, a, b, _ad.materialize(t, res))",
    },
    [(ct, a, b, np.linalg.solve(a, b) + 0.1) for ct, a, b in _bilinear(np.linalg.solve, _SOLVE)],
)

# --- shape and copy operations ------------------------------------------------------------

_rule(
    V.transpose_vjp,
    "ct axes",
    {"ct": "_ad.transpose_axes(g, axes)"},
    {"ct": "_ad.transpose_vjp(t, axes)"},
    [
        (_values((4, 2, 3)), (2, 0, 1)),
        (_A.T, None),
        (_values((3, 4, 2)), [1, -1, 0]),
        (_values((4, 2, 3)), ((1, 2, 0),)),
        (_A, ()),
    ],
    linear=True,
)


def _joined(func: Any, cases: list[tuple[Any, ...]]) -> list:
    return [(_like(func(*case), i), *case) for i, case in enumerate(cases)]


_rule(
    V.concatenate_vjp,
    "ct arrays axis",
    {"ct": "np.concatenate(_ad.materialize(g, arrays), axis)", "arrays": "0.0"},
    {"ct": "_ad.concatenate_vjp(t, arrays, axis)", "arrays": "0.0"},
    _joined(
        np.concatenate,
        [([_W, _V], 0), ((_A, _B.T[:2]), 1), ([_A, _W], None), (_A, 0), (_T, -1)],
    ),
    linear=True,
)
_rule(
    V.stack_vjp,
    "ct arrays axis",
    {"ct": "np.stack(_ad.materialize(g, arrays), axis)", "arrays": "0.0"},
    {"ct": "_ad.stack_vjp(t, arrays, axis)", "arrays": "0.0"},
    _joined(np.stack, [([_W, _W * 2.0], 0), ((_A, _A[::-1]), -1), ([1.5, -0.5, 2.0], 0), (_A, 1)]),
    linear=True,
)
for _helper, _func, _cases in (
    (V.hstack_vjp, np.hstack, [([_W, _V],), ((_A, _B[:2]),), ([1.5, _W],)]),
    (V.vstack_vjp, np.vstack, [([_W, _W[::-1]],), ((_A, _B.T),), ([_V, _B[0]],)]),
):
    _rule(
        _helper,
        "ct tup",
        {"ct": f"np.{_func.__name__}(_ad.materialize(g, tup))", "tup": "0.0"},
        {"ct": f"_ad.{_helper.__name__}(t, tup)", "tup": "0.0"},
        _joined(_func, _cases),
        linear=True,
    )
_rule(
    V.tile_vjp,
    "ct A reps",
    {"ct": "np.tile(_ad.materialize(g, A), reps)", "A": "0.0"},
    {"ct": "_ad.tile_vjp(t, A, reps)", "A": "0.0"},
    [(_like(np.tile(A, r)), A, r) for A, r in [(_W, 2), (_A, (2, 1, 3)), (_T, (2, 1)), (1.5, 3)]],
    linear=True,
)
_rule(
    V.repeat_vjp,
    "ct a repeats axis",
    {"ct": "np.repeat(_ad.materialize(g, a), repeats, axis)", "a": "0.0"},
    {"ct": "_ad.repeat_vjp(t, a, repeats, axis)", "a": "0.0"},
    _joined(
        np.repeat,
        [(_A, 2, None), (_A, 3, 1), (_A, [1, 0, 2], -1), (_W, np.array([2, 1, 3]), None)],
    )
    + [(_values(2), 1.5, 2, None)],
    linear=True,
)
# ``linspace_vjp_*`` do not see the other endpoint: where it broadcasts against this one,
# the transpose in ``ct`` comes out broadcastable to ``ct`` rather than shaped like it.
_rule(
    V.linspace_vjp_start,
    "ct start num endpoint axis",
    {
        "ct": "np.linspace(_ad.materialize(g, start), 0.0, num, endpoint=endpoint, axis=axis)",
        "start": "0.0",
    },
    {"ct": "_ad.linspace_vjp_start(t, start, num, endpoint, axis)", "start": "0.0"},
    [
        (_values(50), 0.5, 50, True, 0),
        (_values(7), 0.5, 7, False, 0),
        (_values((4, 3)), _W, 4, True, 0),
        (_values((3, 5)), _W, 5, True, 1),
    ],
    linear=True,
)
_rule(
    V.linspace_vjp_stop,
    "ct stop num endpoint axis",
    {
        "ct": "np.linspace(0.0, _ad.materialize(g, stop), num, endpoint=endpoint, axis=axis)",
        "stop": "0.0",
    },
    {"ct": "_ad.linspace_vjp_stop(t, stop, num, endpoint, axis)", "stop": "0.0"},
    [
        (_values(50), 2.0, 50, True, 0),
        (_values(7), -2.0, 7, False, 0),
        (_values((4, 3)), _W, 4, True, 0),
        (_values((3, 5)), _W, 5, False, 1),
    ],
    linear=True,
)
_rule(
    V.arange_vjp_start,
    "ct stop",
    {"ct": "_ad.sum_vjp(g, ct, None, False) * (stop is not None)", "stop": "0.0"},
    {"ct": "_ad.arange_vjp_start(t, stop)", "stop": "0.0"},
    [(_values(4), 3.0), (_values(3), None), (_values(5), 0.0)],
    linear=True,
)
_rule(
    V.arange_vjp_step,
    "ct",
    {"ct": "g * np.arange(np.size(ct))"},
    {"ct": "_ad.arange_vjp_step(t)"},
    [(_values(4),), (_values(1),)],
    linear=True,
)
_rule(
    V.array_vjp,
    "ct obj dtype",
    {"ct": "_ad.array_vjp_t(g, ct, obj, dtype)", "obj": "0.0"},
    {"ct": "_ad.array_vjp(t, obj, dtype)", "obj": "0.0"},
    [
        (_values((2, 3)), _A, None),
        (_values(3), [0.5, 1.2, -0.3], None),
        (_values((2, 2)), [[0.5, 1.2], [0.3, -2.0]], None),
        (_values((2, 3)), [_W, _W * 2.0], None),
        (_values(2), (1.5, _W[0]), None),
        (0.7, 1.5, None),
        (_values((1, 3)), _W, None),
        (_values(3), _W, float),
        (_values(3), _W, int),
    ],
    defaults={"dtype": "None"},  # np.copy's template omits it
    linear=True,
)
_rule(
    V.astype_vjp,
    "ct x dtype",
    {"ct": "_ad.astype_vjp(g, x, dtype)", "x": "0.0"},
    {"ct": "_ad.astype_vjp(t, x, dtype)", "x": "0.0"},
    [(_values((2, 3)), _A, np.float64), (_values((2, 3)), _A, "float64"), (_values(3), _W, int)],
    linear=True,
)
_rule(
    V.item_vjp,
    "ct x rest",
    {"ct": "_ad.item_take(g, x, rest)", "x": "0.0"},
    {"ct": "_ad.item_vjp(t, x, rest)", "x": "0.0"},
    [(1.5, _A, (4,)), (0.7, _A, (1, 2)), (0.3, _V[1:2], ()), (0.9, _A, ((0, 1),))],
    linear=True,
)
_rule(
    V.tolist_vjp,
    "ct x",
    {"ct": "_ad.unless_zero(_ad.materialize(g, x).tolist(), ct)", "x": "0.0"},
    {"ct": "_ad.tolist_vjp(_ad.materialize(t, ct), x)", "x": "0.0"},
    [(np.cos(_A).tolist(), _A), (np.cos(_V).tolist(), _V)],
    linear=True,
)

# --- Python builtins ----------------------------------------------------------------------

_rule(
    V.builtin_sum_vjp,
    "ct iterable",
    {"ct": "sum(_ad.materialize(g, iterable))", "iterable": "0.0"},
    {"ct": "_ad.builtin_sum_vjp(t, iterable)", "iterable": "0.0"},
    [
        (1.5, [1.5, -0.3, 2.0]),
        (_values(3), [_W, _W * 2.0, 1.5]),
        (_values(3), _A),
        (0.7, (1.5, 0.5)),
    ],
    linear=True,
)
# the extremal arguments are infinite: ties stay ties under small perturbations
_EXTREMA = [
    (0.7, _INF, 0.5, (), _INF),
    (0.7, 0.5, _INF, (-1.0, _INF), _INF),
    (1.2, [0.3, _INF, -0.2], None, (), _INF),
    (1.2, (0.3, _INF, _INF), None, (), _INF),
    (0.4, np.array([0.3, _INF, _INF]), None, (), _INF),
]
_ARGS_EXTREMA = [(0.7, _INF, 0.5, (-1.0, _INF, 0.2), _INF), (0.3, 0.5, 0.2, (_INF,), _INF)]


def _negate(samples: list[tuple[Any, ...]]) -> list:
    out = []
    for ct, a, b, rest, res in samples:
        a = -np.asarray(a) if isinstance(a, np.ndarray) else a
        a = type(a)(-v for v in a) if isinstance(a, (list, tuple)) else a
        a = -a if isinstance(a, float) else a
        b = None if b is None else -b
        out.append((ct, a, b, tuple(-v for v in rest), -res))
    return out


for _helper, _weights, _samples in (
    (V.builtin_max_vjp, "builtin_max_vjp", _EXTREMA),
    (V.builtin_min_vjp, "builtin_min_vjp", _negate(_EXTREMA)),
    (V.builtin_max_args_vjp, "builtin_max_args_vjp", _ARGS_EXTREMA),
    (V.builtin_min_args_vjp, "builtin_min_args_vjp", _negate(_ARGS_EXTREMA)),
):
    _like_of = "rest" if "args" in _weights else "a"
    _rule(
        _helper,
        "ct a b rest res",
        {
            "ct": f"np.sum(np.multiply(_ad.materialize(g, {_like_of}), "
            f"_ad.{_weights}(1.0, a, b, rest, res)))",
            "a": "0.0",
            "b": "0.0",
            "rest": "0.0",
            "res": "0.0",
        },
        {
            "ct": f"_ad.{_weights}(t, a, b, rest, res)",
            "a": "0.0",
            "b": "0.0",
            "rest": "0.0",
            "res": "0.0",
        },
        _samples,
        linear=True,
    )
_rule(
    V.seq_prod_vjp,
    "ct seq res",
    {
        "ct": "np.sum(np.multiply(_ad.materialize(g, seq), _ad.seq_prod_vjp(1.0, seq, res)))",
        "seq": "_ad.array_vjp(ct * _ad.prod_hvp(_ad.materialize(g, seq), seq, None), seq)",
        "res": "0.0",
    },
    {
        "ct": "_ad.seq_prod_vjp(t, seq, res)",
        "seq": "_ad.array_vjp(ct * _ad.prod_hvp(_ad.materialize(t, seq), seq, None), seq)",
        "res": "0.0",
    },
    [(0.7, [1.5, -0.3, 2.0], -0.9), (1.2, (0.5, 0.0, 2.0), 0.0), (0.4, [0.0, 0.0, 3.0, 1.5], 0.0)],
)
_DIST = "np.where(res > 0, res, np.inf)"
_rule(
    V.dist_vjp,
    "ct p q res",
    {
        "ct": "np.sum(np.multiply(_ad.materialize(g, p), _ad.dist_vjp(1.0, p, q, res)))",
        "p": "_ad.dist_vjp(ct, _ad.materialize(g, p), _ad.zeros_like(p), res)",
        "q": "_ad.dist_vjp(ct, _ad.zeros_like(q), _ad.materialize(g, p), res)",
        "res": f"-np.sum(np.multiply(_ad.materialize(g, p), ans)) / {_DIST}",
    },
    {
        "ct": "_ad.dist_vjp(t, p, q, res)",
        "p": "_ad.dist_vjp(ct, _ad.materialize(t, p), _ad.zeros_like(p), res)",
        "q": "_ad.dist_vjp(ct, _ad.zeros_like(p), _ad.materialize(t, q), res)",
        "res": f"_ad.dist_vjp(-ct * t / {_DIST}, p, q, res)",
    },
    [(0.7, [1.5, -0.3], [0.2, 1.0], 1.64), (1.2, (0.5, 2.0, -1.0), (1.0, 0.0, 0.5), 2.55)],
)
