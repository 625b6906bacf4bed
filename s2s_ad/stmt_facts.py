"""Read and write sets of IR statements, from the tree (nested statements included).

Shared by the passes that ask what a block reads or assigns: the recording plan, the
temporaries the backward sweep recomputes, and the loops of the backward sweep.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ir
from .ir import expr_atoms, walk


def count(stmts: list[ir.Stmt]) -> int:
    """Number of statements in a block, nested ones included."""
    return sum(1 for _ in walk(stmts))


def indexed_vars(stmts: list[ir.Stmt]) -> set[str]:
    """Variables whose elements a block reads or writes by subscript."""
    out: set[str] = set()
    for t in walk(stmts):
        if isinstance(t, ir.SetItem):
            out.add(t.obj)
        elif isinstance(t, ir.Assign) and isinstance(t.value, ir.Subscript):
            if isinstance(t.value.obj, ir.Var):
                out.add(t.value.obj.name)
    return out


def children(s: ir.Stmt) -> list[list[ir.Stmt]]:
    """The blocks a compound statement holds (none for a simple one)."""
    if isinstance(s, ir.If):
        return [s.body, s.orelse]
    if isinstance(s, ir.For):
        return [s.body]
    if isinstance(s, ir.While):
        return [s.test_body, s.body]
    return []


def reads(s: ir.Stmt) -> set[str]:
    """Names one statement reads (nested statements not included)."""
    atoms: list[ir.Atom] = []
    if isinstance(s, (ir.Assign, ir.ExprStmt)):
        atoms = expr_atoms(s.value)
    elif isinstance(s, ir.Unpack):
        atoms = [s.value]
    elif isinstance(s, ir.SetItem):
        atoms = [s.value, ir.Var(s.obj), *(ir.Var(r) for r in s.index.reads)]
    elif isinstance(s, ir.Append):
        atoms = [s.value, ir.Var(s.obj)]
    elif isinstance(s, ir.ListPop):
        atoms = [ir.Var(s.obj)]
    elif isinstance(s, (ir.If, ir.While)):
        atoms = [s.test]
    elif isinstance(s, ir.For):
        atoms = [*(s.range_args or []), *([s.iterable] if s.iterable is not None else [])]
    elif isinstance(s, ir.Return):
        atoms = [s.value]
    return {a.name for a in atoms if isinstance(a, ir.Var)}


def stmt_reads(s: ir.Stmt) -> set[str]:
    """Every variable a statement (and what it nests) reads."""
    return {name for t in walk([s]) for name in reads(t)}


def stmt_writes(s: ir.Stmt, assigned: Callable[[ir.Stmt], list[str]]) -> set[str]:
    """Every variable a statement (and what it nests) assigns."""
    out: set[str] = set()
    for t in walk([s]):
        out.update(assigned(t))
    return out
