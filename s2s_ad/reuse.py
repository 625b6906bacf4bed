"""A NumPy elementwise function computed again reads the value computed before.

The rules write each partial derivative from the primal's operands: the adjoint of
``np.sin(x)`` is ``g * np.cos(x)``, that of ``np.cos(x)`` is ``g * -np.sin(x)``. When the
forward sweep already holds that value (``_t15 = np.cos(x)`` for the user's
``np.cos(x)``), the backward sweep computes it a second time: on a 100,000-vector each
``sin`` or ``cos`` costs as much as a dozen multiplications. This pass reuses the held
value, in straight-line code (one block, nothing compound in between):

* the value held is a NumPy ufunc (``np.sin``, ``np.exp``, ...) of names and constants,
  bound whole to a name: ``t = np.cos(x)``;
* a later call spelled the same way is replaced by ``t`` where it is an operand of an
  arithmetic operator (``g * np.cos(x)``, ``-np.sin(x)``), whose result is a new value:
  an adjoint bound to it may be updated in place without writing into ``t``;
* while neither ``t`` nor a name the call reads is bound or written again, and nothing in
  between writes in place (``v[i] = ...``, ``v += ...``: an alias may be written) or calls
  a function that may write into its arguments (anything but NumPy's functions without
  ``out=``, ``math``'s, the runtime's pure helpers that own nothing, the rules' VJP helpers and
  pure builtins).

The value read is the very one the call would compute again (same function, same
operands, same bits), so gradients do not change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from .codefacts import (
    COMPOUND,
    DEFERRED,
    PURE_BUILTINS,
    PURE_HELPERS,
    Info,
    children,
    store_targets,
)
from .rules import vjps

#: The rules' VJP helpers (``_ad.max_weight``, ``_ad.norm_vjp``...): each returns a new
#: value computed from its arguments and writes into none of them.
_RULE_HELPERS = frozenset(
    name
    for name, value in vars(vjps).items()
    if not name.startswith("_") and getattr(value, "__module__", None) == vjps.__name__
)

#: Operators whose operands can be a reused value: each makes a new value of them.
_OPERATORS = (ast.BinOp, ast.UnaryOp)


@dataclass(frozen=True)
class _Held:
    """``name = <call>``: the value of ``call`` held by ``name``; ``reads``: its operands."""

    name: str
    call: ast.Call
    reads: frozenset[str]


def _ufunc_call(value: ast.expr) -> ast.Call | None:
    """``value`` when it is ``np.<ufunc>(a, b, ...)`` of names and constants (no keywords)."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "np"
        and isinstance(getattr(np, value.func.attr, None), np.ufunc)
        and not value.keywords
        and value.args
        and all(isinstance(a, (ast.Name, ast.Constant)) for a in value.args)
    ):
        return None
    return value


def _harmless(call: ast.Call) -> bool:
    """Whether ``call`` writes into none of its arguments (see the module's docstring)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in PURE_BUILTINS
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    owner, attr = func.value.id, func.attr
    if owner == "np":
        return not any(k.arg == "out" for k in call.keywords) and not attr.startswith(
            ("copyto", "put", "place", "fill")
        )
    if owner == "math":
        return True
    if not owner.startswith("_ad") or "owned" in attr:
        return False
    return attr in PURE_HELPERS or attr in _RULE_HELPERS


def _stops_all(s: ast.stmt, fresh: set[str], info: Info) -> bool:
    """Whether nothing held before ``s`` may be reused after it: ``s`` is compound, writes
    in place into something other than a fresh value (``fresh``: names of operator
    results no other name can alias), or calls a function that may write into its
    arguments."""
    if isinstance(s, ast.AugAssign):
        if not (isinstance(s.target, ast.Name) and s.target.id in fresh):
            return True
    elif isinstance(s, COMPOUND) or not isinstance(s, (ast.Assign, ast.Expr, ast.Return)):
        return True  # loops, branches, ...
    if any(not isinstance(t, ast.Name) for t in store_targets(s)):
        return True  # v[i] = ..., v.a = ...
    found = info.survey(s)
    known = info.stops.get(id(found))
    if known is not None and known[0] is found:  # the same survey: the statement as it was
        return known[1]
    stops = found.suspends or not all(_harmless(call) for call in found.calls)
    info.stops[id(found)] = (found, stops)
    return stops


def _escaping(node: ast.AST, parent: ast.AST | None = None) -> set[str]:
    """Names read under ``node`` other than as an operand of an operator (passed to a
    function, copied, put in a tuple...): another name may then hold the same object."""
    out: set[str] = set()
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and not isinstance(parent, (*_OPERATORS, ast.Compare)):
            out.add(node.id)
        return out
    for child in children(node):
        out |= _escaping(child, node)
    return out


def _same(a: ast.Call, b: ast.Call) -> bool:
    """Whether two ufunc calls of names and constants are spelled the same."""
    fa, fb = a.func, b.func
    assert isinstance(fa, ast.Attribute) and isinstance(fb, ast.Attribute)
    if fa.attr != fb.attr or len(a.args) != len(b.args):
        return False
    for x, y in zip(a.args, b.args):
        if isinstance(x, ast.Name) and isinstance(y, ast.Name):
            if x.id != y.id:
                return False
        elif isinstance(x, ast.Constant) and isinstance(y, ast.Constant):
            if type(x.value) is not type(y.value) or x.value != y.value:
                return False
        else:
            return False
    return True


def _substitute(node: ast.AST, held: list[_Held]) -> bool:
    """Replace, under ``node``, each operand of an operator spelled like a held call by
    the name holding it. Returns whether anything was replaced."""
    hit = False
    for child in children(node):
        if isinstance(child, DEFERRED):
            continue
        if isinstance(node, _OPERATORS):
            call = _ufunc_call(child) if isinstance(child, ast.Call) else None
            match = next((h for h in held if _same(h.call, call)), None) if call else None
            if match is not None:
                for field in ("operand", "left", "right"):
                    if getattr(node, field, None) is child:
                        setattr(node, field, ast.Name(match.name, ast.Load()))
                hit = True
                continue
        hit = _substitute(child, held) or hit
    return hit


def _may_reuse(s: ast.stmt, held: list[_Held], info: Info) -> bool:
    """Whether ``s`` calls a function some held call calls (else :func:`_substitute`
    finds nothing to replace: a match is a call spelled the same)."""
    attrs = {h.call.func.attr for h in held}  # type: ignore[attr-defined]
    return any(
        isinstance(c.func, ast.Attribute) and c.func.attr in attrs for c in info.survey(s).calls
    )


def reuse_calls(blocks: list[list[ast.stmt]], changed: set[int], info: Info) -> bool:
    """Reuse held ufunc values in each of ``blocks`` (statement lists; see the module's
    docstring). Adds the ids of the statements rewritten to ``changed`` (and forgets them
    in ``info``, which must know no statement as it was before a rewrite); returns
    whether there were any."""
    tape = info.tape
    progress = False
    for block in blocks:
        held: list[_Held] = []
        fresh: set[str] = set()  # bound to an operator's result, never passed on since
        for s in block:
            value = getattr(s, "value", None)
            if fresh:
                if not isinstance(value, ast.AST):
                    fresh.clear()
                elif not fresh.isdisjoint(info.survey(s).loads):  # (a walk when it may tell)
                    fresh -= _escaping(value)
            if _stops_all(s, fresh, info):
                held = []
                fresh.clear()
                continue
            bound = info.written(s)  # (a substitution below rewrites only reads)
            if (
                held
                and value is not None
                and _may_reuse(s, held, info)
                and _substitute(value, held)
            ):
                changed.add(id(s))
                info.forget(s)
                progress = True
            held = [h for h in held if h.name not in bound and not h.reads & bound]
            if not isinstance(s, ast.AugAssign):
                fresh -= bound
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
                continue
            target = s.targets[0]
            if not isinstance(target, ast.Name) or target.id == tape:
                continue
            if isinstance(s.value, _OPERATORS):
                fresh.add(target.id)
            call = _ufunc_call(s.value)
            if call is not None:
                reads = frozenset(a.id for a in call.args if isinstance(a, ast.Name))
                if target.id not in reads:
                    held.append(_Held(target.id, call, reads))
    return progress
