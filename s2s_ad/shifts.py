"""Stabilising shifts: ``z - max(z)`` in a softmax or a log-softmax.

``c = np.max(z, axis=k, keepdims=True); s = z - c`` followed by ``s - log(sum(exp(s)))``
or ``exp(s) / sum(exp(s))`` computes a value that does not depend on ``c`` at all: any
``c`` constant along axis ``k`` gives the same result. Its adjoint through ``c`` is
exactly zero, so computing it (a mask of the maxima, a sum, a product) is wasted work and
adds rounding noise. :func:`stabilising_shifts` proves the independence on the normal
form and names such shifts; activity analysis then leaves them out of the data flow (no
adjoint, no tangent), as ``stop_gradient`` would.

The proof follows each value made from ``s`` through a small algebra, relative to the
shift ``c``: *covariant* values move by ``-c`` (``s`` itself; ``cov + v``, ``cov - v``,
``log(mult)``), *multiplied* values are scaled by ``exp(-c)`` (``exp(cov)``,
``mult * v``, ``mult / v``, and their ``sum`` along ``k``), and ``cov - cov`` and
``mult / mult`` are independent of ``c``. Anything else done to a covariant or multiplied
value, any other use of ``c``, or a nested block touching them, and nothing is claimed.
"""

from __future__ import annotations

import numpy as np

from . import ir
from .ir import expr_atoms, walk
from .stmt_facts import reads

_COV, _MULT = "covariant", "multiplied"


def _reduction(call: ir.Call, names: tuple[object, ...], method: str) -> tuple[ir.Atom, str, str]:
    """For ``np.<names>(x[, axis], axis=..., keepdims=...)`` or ``x.<method>(...)`` with
    nothing else passed: ``(x, axis source, keepdims source)`` (``"None"``/``"False"``
    when absent, ``"?"`` when not a constant); else a ``ValueError``."""
    if call.star is not None or call.starstar is not None:
        raise ValueError(call)
    if call.callee.method == method and call.callee.receiver is not None:
        operand, positional = call.callee.receiver, list(call.args)
    elif any(call.callee.obj is f for f in names) and call.args:
        operand, positional = call.args[0], list(call.args[1:])
    else:
        raise ValueError(call)
    given = dict(call.kwargs)
    if len(positional) > 1 or set(given) - {"axis", "keepdims"}:
        raise ValueError(call)
    if positional:
        if "axis" in given:
            raise ValueError(call)
        given["axis"] = positional[0]

    def code(key: str, absent: str) -> str:
        value = given.get(key)
        if value is None:
            return absent
        return value.code if isinstance(value, ir.Const) else "?"

    return operand, code("axis", "None"), code("keepdims", "False")


def _shift(s: ir.Stmt) -> tuple[str, str, str | None] | None:
    """For ``c = np.max(z, axis=k, keepdims=True)`` (or ``z.max(...)``, or no axis):
    ``(c, z, k)`` with ``k`` ``None`` for the maximum of all entries."""
    if not isinstance(s, ir.Assign) or not isinstance(s.value, ir.Call):
        return None
    try:
        operand, axis, keepdims = _reduction(s.value, (np.max, np.amax), "max")
    except ValueError:
        return None
    if not isinstance(operand, ir.Var) or axis == "?":
        return None
    if axis == "None":
        return s.target, operand.name, None
    return (s.target, operand.name, axis) if keepdims == "True" else None


def _classify(value: ir.Expr, cls: dict[str, str], axis: str | None) -> str | None:
    """The class of a value made from classified values (``""``: independent of the
    shift; ``None``: not modelled)."""
    kinds = [cls.get(a.name, "") if isinstance(a, ir.Var) else "" for a in expr_atoms(value)]
    if isinstance(value, ir.Copy):
        return kinds[0]
    if isinstance(value, ir.BinOp) and len(kinds) == 2:
        left, right = kinds
        table = {
            ("-", _COV, _COV): "",
            ("-", _COV, ""): _COV,
            ("+", _COV, ""): _COV,
            ("+", "", _COV): _COV,
            ("*", _MULT, ""): _MULT,
            ("*", "", _MULT): _MULT,
            ("/", _MULT, ""): _MULT,
            ("/", _MULT, _MULT): "",
        }
        return table.get((value.op, left, right))
    if isinstance(value, ir.Call) and len(kinds) >= 1:
        if any(kinds[1:]):
            return None  # a classified value as an axis or another argument
        call, first = value, kinds[0]
        if call.callee.obj is np.exp and len(call.args) == 1 and not call.kwargs:
            return _MULT if first == _COV else None
        if call.callee.obj is np.log and len(call.args) == 1 and not call.kwargs:
            return _COV if first == _MULT else None
        try:
            _, summed, keepdims = _reduction(call, (np.sum,), "sum")
        except ValueError:
            return None
        if first != _MULT or summed == "?":
            return None
        if axis is None:
            return _MULT  # a scalar shift scales every entry alike
        return _MULT if summed == axis and keepdims == "True" else None
    return None


def _bound(s: ir.Stmt) -> list[str]:
    """Names one statement binds (nested statements not included)."""
    if isinstance(s, ir.Assign):
        return [s.target]
    if isinstance(s, ir.Unpack):
        return list(s.targets)
    if isinstance(s, ir.ListPop):
        return [s.target]
    if isinstance(s, ir.For):
        return [s.target]
    return []


class _Body:
    """Where the top-level statements of a function bind and read names: per position,
    the names bound anywhere in that statement (nested ones too) and the names read by
    the statements nested in it."""

    def __init__(self, body: list[ir.Stmt]) -> None:
        self.body = body
        self.bound: list[set[str]] = []
        self.nested_reads: list[set[str]] = []
        self.reads: list[set[str]] = [reads(s) for s in body]
        for s in body:
            inner = list(walk([s]))
            self.bound.append({t for t in map(_bound, inner) for t in t})
            self.nested_reads.append({n for t in inner[1:] for n in reads(t)})

    def live(self, name: str, at: int) -> range | None:
        """The positions that can read the value ``name`` gets at position ``at``: up to
        and including the next top-level statement binding it again (which reads it
        first). ``None`` when a nested statement reads it or binds it in that range."""
        for i in range(at + 1, len(self.body)):
            if name in self.nested_reads[i]:
                return None
            if name in self.bound[i]:
                if name not in _bound(self.body[i]):
                    return None  # bound inside a nested block
                return range(at + 1, i + 1)
        return range(at + 1, len(self.body))

    def readers(self, name: str, at: int) -> list[int] | None:
        """The positions reading the value ``name`` gets at ``at`` (``None``: not only
        top-level statements read it)."""
        span = self.live(name, at)
        return None if span is None else [i for i in span if name in self.reads[i]]


def stabilising_shifts(fn: ir.Function) -> set[str]:
    """Names of shifts the function's result provably does not depend on (see module)."""
    body = _Body(fn.body)
    out: set[str] = set()
    for p, s in enumerate(fn.body):
        found = _shift(s)
        if found is None:
            continue
        c, z, axis = found
        uses = body.readers(c, p)
        if uses is None or len(uses) != 1:
            continue
        q = uses[0]
        sub = fn.body[q]
        if not (
            isinstance(sub, ir.Assign)
            and isinstance(sub.value, ir.BinOp)
            and sub.value.op == "-"
            and sub.value.left == ir.Var(z)
            and sub.value.right == ir.Var(c)
        ):
            continue
        if any(z in body.bound[i] for i in range(p + 1, q)):
            continue  # z rebound between the maximum and the shift
        if _independent(body, q, sub.target, axis):
            out.add(c)
    return out


def _independent(body: _Body, start: int, shifted: str, axis: str | None) -> bool:
    """Whether every value made from ``shifted`` (assigned at position ``start``) ends
    independent of the shift in the straight-line code after it."""
    if body.live(shifted, start) is None:
        return False
    cls = {shifted: _COV}
    for i in range(start + 1, len(body.body)):
        s = body.body[i]
        if not body.reads[i] & cls.keys():
            for name in _bound(s):
                cls.pop(name, None)  # rebound to a value independent of the shift
            continue
        if not isinstance(s, ir.Assign):
            return False  # returned, written in place, tested, passed to a call...
        kind = _classify(s.value, cls, axis)
        if kind is None or body.live(s.target, i) is None:
            return False
        if kind:
            cls[s.target] = kind
        else:
            cls.pop(s.target, None)  # rebound to a value independent of the shift
    return True
