"""Read and write sets of IR statements, from the tree (nested statements included).

Shared by the passes that ask what a block reads or assigns: the recording plan, the
temporaries the backward sweep recomputes, and the loops of the backward sweep.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ir
from .ir import walk
from .normalize import expr_atoms


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


def stmt_reads(s: ir.Stmt) -> set[str]:
    """Every variable a statement (and what it nests) reads."""
    out: set[str] = set()
    for t in walk([s]):
        atoms: list[ir.Atom] = []
        if isinstance(t, (ir.Assign, ir.ExprStmt)):
            atoms = expr_atoms(t.value)
        elif isinstance(t, ir.Unpack):
            atoms = [t.value]
        elif isinstance(t, ir.SetItem):
            atoms = [t.value, ir.Var(t.obj), *(ir.Var(r) for r in t.index.reads)]
        elif isinstance(t, ir.Append):
            atoms = [t.value, ir.Var(t.obj)]
        elif isinstance(t, ir.If):
            atoms = [t.test]
        elif isinstance(t, ir.For):
            atoms = list(t.range_args or [])
        elif isinstance(t, ir.While):
            atoms = [t.test]
        elif isinstance(t, ir.Return):
            atoms = [t.value]
        out.update(a.name for a in atoms if isinstance(a, ir.Var))
    return out


def stmt_writes(s: ir.Stmt, assigned: Callable[[ir.Stmt], list[str]]) -> set[str]:
    """Every variable a statement (and what it nests) assigns."""
    out: set[str] = set()
    for t in walk([s]):
        out.update(assigned(t))
    return out
