"""Which variables surely hold scalars, and which 1-d arrays (facts both sweeps read).

A variable is a scalar when every definition of it is one given that the others are
(the largest such set: a greatest fixpoint); likewise for 1-d arrays. The sweeps use
them to leave out ``unbroadcast`` for scalar operands, to recompute scalar arithmetic
instead of recording it, and to update one element of a 1-d adjoint in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import ir
from .analysis import classify, walk
from .ir import expr_atoms
from .rules import REGISTRY


class Queried:
    """A set of names that the sweeps only ask ``name in ...`` of, remembering every
    answer it gave: a pass that reads it no other way writes the same code for any other
    set that gives the same answers (variants share their reverse pass, see
    ``api._compile_adjoint``). Any other use fails loudly (it has no other methods)."""

    __slots__ = ("names", "asked")

    def __init__(self, names: set[str]) -> None:
        self.names = frozenset(names)
        self.asked: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        found = name in self.names
        self.asked[name] = found  # type: ignore[index]
        return found

    def agrees(self, names: frozenset[str]) -> bool:
        """Whether ``names`` gives every answer this set gave."""
        return all((name in names) == found for name, found in self.asked.items())


_NUMERIC_OPS = {"+", "-", "*", "/", "**", "@", "%"}

_SCALAR_BUILTINS = {"abs", "float", "int", "round", "min", "max", "len", "pow", "bool"}


def scalar_call(call: ir.Call, is_scalar: Callable[[ir.Atom], bool]) -> bool:
    """Whether a call surely returns a scalar when its arguments are scalars."""
    callee = call.callee
    if not callee.resolved or call.kwargs:
        return False
    obj = callee.obj
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__name__", "")
    if module == "math" or (module == "builtins" and name in _SCALAR_BUILTINS):
        return bool(call.args) and all(is_scalar(a) for a in call.args)
    rule = REGISTRY.lookup(obj)
    if rule is not None and rule.partials and isinstance(obj, np.ufunc):
        return all(is_scalar(a) for a in call.args)
    return False


_VECTOR_MAKERS = {"zeros_like", "ones_like", "empty_like", "copy", "array", "asarray"}


def _greatest(
    candidates: set[str],
    defs: dict[str, list[Any]],
    params: set[str],
    holds: Callable[[Any], bool],
) -> set[str]:
    """The largest subset of ``candidates`` whose every definition ``holds`` (a parameter
    holds on entry, so only its reassignments count; ``holds`` reads the current set)."""
    changed = True
    while changed:
        changed = False
        for var in list(candidates):
            entry = [] if var in params else [None]
            if not all(holds(d) for d in defs.get(var, entry)):
                candidates.discard(var)
                changed = True
    return candidates


def vector_vars(body: list[ir.Stmt], params: set[str], vectors: frozenset[str]) -> set[str]:
    """Variables that hold a 1-d array whenever the ``vectors`` parameters do."""
    defs: dict[str, list[Any]] = {}
    for s in walk(body):
        if isinstance(s, ir.Assign):
            defs.setdefault(s.target, []).append(s.value)
        elif isinstance(s, (ir.SetItem, ir.Append)):
            continue  # element writes keep the array's shape
        else:
            for var in _assigned_plain(s):
                defs.setdefault(var, []).append(None)
    candidates = {v for v in defs if v not in params} | set(vectors)

    def vector_def(d: Any) -> bool:
        if isinstance(d, ir.Copy):
            return isinstance(d.value, ir.Var) and d.value.name in candidates
        if isinstance(d, ir.Call) and len(d.args) == 1 and not d.kwargs:
            arg = d.args[0]
            obj = d.callee.obj
            is_np = getattr(obj, "__name__", "") in _VECTOR_MAKERS and (
                getattr(obj, "__module__", "") or ""
            ).startswith("numpy")
            method = d.callee.method == "copy" and not d.args
            return is_np and isinstance(arg, ir.Var) and arg.name in candidates or method
        if isinstance(d, ir.Call) and d.callee.method == "copy" and not d.args:
            recv = d.callee.receiver
            return isinstance(recv, ir.Var) and recv.name in candidates
        return False

    return _greatest(candidates, defs, params, vector_def)


def scalar_vars(
    body: list[ir.Stmt],
    params: set[str],
    scalars: frozenset[str],
    vectors: frozenset[str] = frozenset(),
) -> set[str]:
    """Variables that hold a Python or NumPy scalar whenever the ``scalars`` parameters do
    (and the ``vectors`` parameters hold 1-d arrays, whose elements are scalars)."""
    vecs = vector_vars(body, params, vectors)
    defs: dict[str, list[Any]] = {}
    for s in walk(body):
        if isinstance(s, ir.Assign):
            defs.setdefault(s.target, []).append(s.value)
        elif isinstance(s, ir.For) and s.range_args is not None:
            defs.setdefault(s.target, []).append("int")
        else:
            for var in _assigned_plain(s):
                defs.setdefault(var, []).append(None)
    candidates = {v for v, ds in defs.items() if v not in params} | set(scalars)

    def is_scalar(a: ir.Atom) -> bool:
        if isinstance(a, ir.Const):
            return a.code.lstrip("-").replace(".", "", 1).replace("e", "", 1).isdigit() or (
                a.code in ("True", "False")
            )
        return a.name in candidates

    def scalar_def(d: Any) -> bool:
        if d == "int":
            return True
        if isinstance(d, ir.Copy):
            return is_scalar(d.value)
        if isinstance(d, ir.BinOp):
            return d.op != "@" and is_scalar(d.left) and is_scalar(d.right)
        if isinstance(d, ir.UnaryOp):
            return is_scalar(d.operand)
        if isinstance(d, ir.Compare):
            return is_scalar(d.left) and all(is_scalar(c) for c in d.comparators)
        if isinstance(d, ir.Call):
            return scalar_call(d, is_scalar)
        if isinstance(d, ir.Subscript):
            index = d.index.code
            return (
                isinstance(d.obj, ir.Var)
                and d.obj.name in vecs
                and (index.isdigit() or (index.isidentifier() and index in candidates))
            )
        if isinstance(d, ir.Attr) and d.name in ("size", "ndim"):
            return True
        return False

    return _greatest(candidates, defs, params, scalar_def)


def _assigned_plain(s: ir.Stmt) -> list[str]:
    if isinstance(s, ir.Unpack):
        return list(s.targets)
    if isinstance(s, (ir.SetItem, ir.Append)):
        return [s.obj]
    if isinstance(s, ir.For):
        return [s.target]
    return []


def numeric_vars(body: list[ir.Stmt]) -> set[str]:
    """Variables that take part in arithmetic or elementwise rules (their adjoints are
    numbers or arrays, which ``+`` adds; other adjoints are added by ``_ad.add``)."""
    numeric: set[str] = set()
    for s in walk(body):
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, (ir.BinOp, ir.UnaryOp)) and (
                getattr(v, "op", "") in _NUMERIC_OPS or isinstance(v, ir.UnaryOp)
            ):
                numeric.add(s.target)
                numeric.update(a.name for a in expr_atoms(v) if isinstance(a, ir.Var))
            elif isinstance(v, ir.Call):
                info = classify(v)
                rule = info.rule
                if info.kind in ("rule", "method") and rule is not None and rule.partials:
                    numeric.add(s.target)
                    numeric.update(a.name for a in v.args if isinstance(a, ir.Var))
    return numeric - _iterated_containers(body)


#: Method calls that only a dict answers: their receiver is a container.
_DICT_VIEWS = frozenset({"values", "items", "keys"})


def _iterated_containers(body: list[ir.Stmt]) -> set[str]:
    """Names the function also iterates as a sequence, unpacks or reads as a dict
    (``for v in t``, ``W, b = t``, ``t.values()``): a recursive helper that takes arrays
    on one branch and lists or dicts on another (a tree walk, an ``isinstance``
    dispatch) has container adjoints there, which ``+`` cannot add."""
    found: set[str] = set()
    for s in walk(body):
        if isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var):
            found.add(s.value.name)
        if not isinstance(s, ir.Assign) or not isinstance(s.value, ir.Call):
            continue
        callee = s.value.callee
        if callee.code.endswith(".sequence") and s.value.args:
            arg = s.value.args[0]
            if isinstance(arg, ir.Var):
                found.add(arg.name)
        elif callee.method in _DICT_VIEWS and isinstance(callee.receiver, ir.Var):
            found.add(callee.receiver.name)
    return found
