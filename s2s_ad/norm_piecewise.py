"""``np.piecewise(x, [c0, c1], [f0, f1, default])`` as the writes NumPy makes.

Written out as ``y = np.zeros_like(np.asarray(x))`` then ``y[c] = f(x[c])`` for each condition in
turn (a later condition overrides an earlier one, as in NumPy), ``y[c] = v`` for a
constant entry, and an entry past the conditions for where none holds. Each function
sees only the entries of its region, as NumPy's: its gradient is taken there alone (a
``sqrt`` of the negative region never sees a positive entry). Only literal lists of
conditions and of functions (lambdas, functions, constants) and no extra arguments;
any other call is left to the usual path (refused: no gradient rule).
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from . import ir

_CONSTANTS = (cst.Integer, cst.Float, cst.UnaryOperation)


def lower_piecewise(norm: Any, node: cst.Call) -> ir.Expr | None:
    """The value of a call of ``np.piecewise`` written out (see the module), or ``None``."""
    func = node.func
    if (
        norm.env
        or not isinstance(func, cst.Attribute)
        or func.attr.value != "piecewise"
        or len(node.args) != 3
        or any(a.star or a.keyword is not None for a in node.args)
    ):
        return None
    parts = norm.dotted(func)
    if parts is None or norm.resolve_dotted(parts) is not np.piecewise:
        return None
    x, conds, funcs = (a.value for a in node.args)
    if not isinstance(conds, (cst.List, cst.Tuple)) or not isinstance(funcs, (cst.List, cst.Tuple)):
        return None
    conditions = [el.value for el in conds.elements]
    pieces = [el.value for el in funcs.elements]
    if any(isinstance(el, cst.StarredElement) for el in [*conds.elements, *funcs.elements]):
        return None
    if not conditions or len(pieces) not in (len(conditions), len(conditions) + 1):
        return None
    if any(_ambiguous(norm, p) for p in pieces):
        return None
    value = norm.reserve("_piecewise_x")
    out = norm.reserve("_piecewise")
    norm.locals.update((value, out))
    asarray = cst.Attribute(value=func.value, attr=cst.Name("asarray"))
    norm.lower_into(value, _mark(norm, node, cst.Call(asarray, [cst.Arg(x)])))
    names = []
    for k, cond in enumerate(conditions):
        names.append(norm.reserve(f"_piecewise_c{k}"))
        norm.locals.add(names[-1])
        norm.lower_into(names[-1], cond)
    if len(pieces) > len(conditions):  # where no condition holds
        names.append(norm.reserve("_piecewise_else"))
        norm.locals.add(names[-1])
        norm.lower_into(names[-1], _expr(norm, node, f"~({' | '.join(names[:-1])})"))
    zeros = cst.Attribute(value=func.value, attr=cst.Name("zeros_like"))
    norm.lower_into(out, _mark(norm, node, cst.Call(zeros, [cst.Arg(cst.Name(value))])))
    for cond, piece in zip(names, pieces):
        region = cst.Subscript(cst.Name(out), [cst.SubscriptElement(cst.Index(cst.Name(cond)))])
        if isinstance(piece, _CONSTANTS):
            written: cst.BaseExpression = piece
        else:
            part = cst.Subscript(cst.Name(value), [cst.SubscriptElement(cst.Index(cst.Name(cond)))])
            written = cst.Call(piece, [cst.Arg(part)])
        stmt = cst.Assign([cst.AssignTarget(region)], written)
        norm.small_statement(_mark(norm, node, stmt))
    return ir.Copy(ir.Var(out))


def _ambiguous(norm: Any, piece: cst.BaseExpression) -> bool:
    """Whether an entry of the function list may be a value held in a variable (not a
    literal constant, a lambda, a local function or a dotted name)."""
    if isinstance(piece, (*_CONSTANTS, cst.Lambda)):
        return False
    if isinstance(piece, cst.Attribute):
        parts = norm.dotted(piece)
        return parts is None or not callable(norm.resolve_dotted(parts))
    if isinstance(piece, cst.Name):
        if piece.value in norm.nested or piece.value in norm.lambdas:
            return False
        if piece.value in norm.locals or piece.value in norm.env:
            return True
        return not callable(norm.resolve(piece.value))
    return True


def _expr(norm: Any, node: cst.Call, code: str) -> cst.BaseExpression:
    return _mark(norm, node, cst.parse_expression(code))


def _mark(norm: Any, node: cst.Call, made: cst.CSTNode) -> cst.CSTNode:
    """``made`` (a node written here) located at the user's call in refusals."""
    norm.origin[made] = norm.origin.get(node, node)
    return made
