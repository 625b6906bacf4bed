"""``sorted(xs, key=..., reverse=...)`` and ``min``/``max`` with a key, lowered to an order
of positions (no gradient) and a pick of the entries (a gradient, put back where each
entry came from)::

    s = sorted(xs, key=k)      ->  _seq = _ad.sequence(xs)
                                   _order = _ad.sort_order(_seq, k, False)
                                   s = _ad.pick(_seq, _order)
    best = min(xs, key=k)      ->  _seq = _ad.sequence(xs)
                                   _pos = _ad.extreme_index(_seq, k, False)
                                   best = _seq[_pos]

``min(a, b, key=k)`` picks among the tuple ``(a, b)``. ``min``/``max`` without a key keep
their own rule (ties share the gradient, as ``np.maximum`` does); ``default=`` and star
arguments keep the call as it is. Helpers and rules: :mod:`s2s_ad.rules.orderings`.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import libcst as cst

from . import ir
from .rules.orderings import extreme_index, pick, sort_order
from .runtime import sequence

if TYPE_CHECKING:  # pragma: no cover
    from .normalize import Normalizer


def _helper(name: str, func: Any, args: list[ir.Atom]) -> ir.Call:
    return ir.Call(ir.Callee(f"_ad.{name}", func, resolved=True), args, [])


def lower_ordering(norm: Normalizer, node: cst.Call, func: Any) -> ir.Expr | None:
    """The normal form of ``sorted(...)``, or of ``min``/``max(..., key=...)``, with the
    order computed into ``norm``'s output; ``None`` (nothing emitted) for other forms.

    Args:
        norm: The normalizer lowering the enclosing function.
        node: The call.
        func: What the callee resolved to (``sorted``, ``min`` or ``max``).

    Returns:
        The expression whose value is the call's, or ``None``.
    """
    if any(a.star for a in node.args):
        return None
    positional = [a.value for a in node.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if func is builtins.sorted:
        if len(positional) != 1 or not set(keywords) <= {"key", "reverse"}:
            return None
    elif func in (builtins.min, builtins.max):
        if set(keywords) != {"key"} or not positional:
            return None
    else:
        return None
    atoms = [norm.atom(value) for value in positional]
    seq = norm.fresh("_seq")
    if len(atoms) == 1:
        norm.assign(seq, _helper("sequence", sequence, atoms))
    else:
        norm.assign(seq, ir.Build("tuple", atoms))
    key = norm.atom(keywords["key"]) if "key" in keywords else ir.Const("None")
    if func is builtins.sorted:
        reverse = norm.atom(keywords["reverse"]) if "reverse" in keywords else ir.Const("False")
        order = norm.fresh("_order")
        norm.assign(order, _helper("sort_order", sort_order, [ir.Var(seq), key, reverse]))
        return _helper("pick", pick, [ir.Var(seq), ir.Var(order)])
    where = norm.fresh("_pos")
    largest = ir.Const(str(func is builtins.max))
    norm.assign(where, _helper("extreme_index", extreme_index, [ir.Var(seq), key, largest]))
    return ir.Subscript(ir.Var(seq), ir.Index(where, (where,)))
