"""Python builtins (``abs sum min max pow float list tuple``) and ``math.fsum``.

``max``/``min`` have two forms: ``max(a, b, *args)`` (values; those equal to the
result share the gradient equally, as ``np.maximum`` does for ties; the adjoints of
``args`` come as a tuple) and ``max(a)`` over an iterable (``b`` is then ``None``;
the adjoint of ``a`` is a list/tuple/array with ``g`` at the maximal elements).
``sum(iterable)`` gives every element the cotangent (unbroadcast to its shape).
``list(xs)``/``tuple(xs)`` hand the element adjoints back in the structure of ``xs``
(without a rule, calls to these types would count as non-differentiable).
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .elementwise import PAIRS, R
from .registry import elementwise, set_jvps, vjp_rule

_W = np.array([1.1, -0.4, 0.7])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])

abs_ = elementwise("abs", [builtins.abs, operator.abs], ("x",), ("np.sign(x)",), R, sympy="Abs")
pow_ = elementwise(
    "pow",
    [builtins.pow],
    ("base", "exp", "mod"),
    ("exp * base ** (exp - 1)", "ans * _ad.safe_log(base)"),
    [(1.3, 0.7), (np.array([0.5, 1.5, 2.0]), 2.5), (2.0, np.array([[0.5], [-1.5]]))],
    sympy="Pow",
    defaults={"mod": "None"},
    diff=("base", "exp"),
)
float_ = elementwise("float", [builtins.float], ("x",), ("1",), [(1.5,), (np.float64(-0.5),)])
sum_ = vjp_rule(
    "sum",
    [builtins.sum],
    ("iterable", "start"),
    {"iterable": "_ad.builtin_sum_vjp(g, iterable)", "start": "_ad.unbroadcast(g, start)"},
    [([1.5, -0.3, 2.0],), ((1.5, 0.5), 2.5), ([_W, _W * 2.0, 1.5],), (_A,), (_A, _W)],
    defaults={"start": "0"},
    linear=True,
)
# The elements may broadcast against each other and against ``start``.
set_jvps(
    sum_,
    iterable="(0.0 if _ad.holds_keys(iterable) else "
    "np.sum(np.broadcast_arrays(np.zeros(np.shape(ans)), *t), 0))",
    start="np.broadcast_to(t, np.shape(ans))",
)
fsum = vjp_rule(
    "math.fsum",
    [math.fsum],
    ("seq",),
    {"seq": "_ad.builtin_sum_vjp(g, seq)"},
    [([1.5, -0.3, 2.0],), (_W,)],
    linear=True,
)
set_jvps(fsum, seq="np.sum(t)")
_EXTREMA = [
    *PAIRS[:2],
    (0.3, -1.2, 2.5, 0.1),
    (0.3, 1.7, -0.4),
    (2.0, 0.5, 1.0),
    ([0.3, 1.7, -0.2],),
    ((0.3, -1.7, 0.9),),
    (_W,),
]
max_ = vjp_rule(
    "max",
    [builtins.max],
    ("a", "b"),
    {
        "a": "_ad.builtin_max_vjp(g, a, b, args, ans)",
        "b": "_ad.builtin_max_vjp(g, b, a, args, ans)",
        "args": "_ad.builtin_max_args_vjp(g, a, b, args, ans)",
    },
    _EXTREMA,
    defaults={"b": "None"},
    varargs=True,
)
# Tangents weighed by the VJP of a unit cotangent: ties share as in reverse mode. Both
# forms (``max(a, b, *args)`` of scalars, ``max(a)`` of an iterable) sum the products.
set_jvps(
    max_,
    a="(0.0 if _ad.holds_keys(a) else "
    "np.sum(np.multiply(t, _ad.builtin_max_vjp(1.0, a, b, args, ans))))",
    b="np.sum(np.multiply(t, _ad.builtin_max_vjp(1.0, b, a, args, ans)))",
    args="np.sum(np.multiply(t, _ad.builtin_max_args_vjp(1.0, a, b, args, ans)))",
)
min_ = vjp_rule(
    "min",
    [builtins.min],
    ("a", "b"),
    {
        "a": "_ad.builtin_min_vjp(g, a, b, args, ans)",
        "b": "_ad.builtin_min_vjp(g, b, a, args, ans)",
        "args": "_ad.builtin_min_args_vjp(g, a, b, args, ans)",
    },
    _EXTREMA,
    defaults={"b": "None"},
    varargs=True,
)
set_jvps(
    min_,
    a="(0.0 if _ad.holds_keys(a) else "
    "np.sum(np.multiply(t, _ad.builtin_min_vjp(1.0, a, b, args, ans))))",
    b="np.sum(np.multiply(t, _ad.builtin_min_vjp(1.0, b, a, args, ans)))",
    args="np.sum(np.multiply(t, _ad.builtin_min_args_vjp(1.0, a, b, args, ans)))",
)
sequence = vjp_rule(
    "list",
    [builtins.list, builtins.tuple],
    ("iterable",),
    {"iterable": "_ad.sequence_part(_ad.pack(iterable, g), iterable)"},
    [([1.5, -0.3],), ((1.5, _W),), (_A,)],
    defaults={"iterable": "()"},
    linear=True,
)
# ``list(xs)`` / ``tuple(xs)``: the element tangents (0.0 entries kept) in that container.
set_jvps(sequence, iterable="_ad.sequence_part(type(ans)(t), iterable)")
math_prod = vjp_rule(
    "math.prod",
    [math.prod],
    ("iterable",),
    {"iterable": "_ad.seq_prod_vjp(g, iterable, ans)"},
    [([1.5, -0.3, 2.0],)],
)
set_jvps(
    math_prod,
    iterable="np.sum(np.broadcast_arrays(*[ti * wi for ti, wi in "
    "zip(t, _ad.seq_prod_vjp(1.0, iterable, ans))]), 0)",
)
math_dist = vjp_rule(
    "math.dist",
    [math.dist],
    ("p", "q"),
    {"p": "_ad.dist_vjp(g, p, q, ans)", "q": "_ad.dist_vjp(g, q, p, ans)"},
    [([1.5, -0.3], [0.2, 1.0])],
)
set_jvps(
    math_dist,
    p="np.sum(np.multiply(t, _ad.dist_vjp(1.0, p, q, ans)))",
    q="np.sum(np.multiply(t, _ad.dist_vjp(1.0, q, p, ans)))",
)
