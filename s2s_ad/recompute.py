"""Temporaries the backward sweep recomputes from their operands instead of recording.

``x = xs[i]``, ``a.T`` and scalar arithmetic inside loops are cheaper to redo than to
push and pop, and read better; the backward sweep spells them out where it reads them
(:func:`subst_names`).
"""

from __future__ import annotations

import re

from . import ir
from .ir import expr_atoms, walk
from .object_state import STATE
from .stmt_facts import children, reads, stmt_reads, stmt_writes
from .sweep_base import SweepBase
from .value_kinds import scalar_call


def rematerializable(sweep: SweepBase) -> dict[str, str]:
    """Temporaries the backward sweep recomputes instead of recording (``x[i]``, ``a.T``).

    Valid when none of the operands is reassigned between the temporary's definition
    and its last reader (the tape restores them everywhere else); recomputing is
    cheaper than a push and a pop, and reads better.
    """

    def is_scalar(atom: ir.Atom) -> bool:
        return not isinstance(atom, ir.Var) or atom.name in sweep.scalar

    counts: dict[str, int] = {}
    for st in walk(sweep.body):
        for var in sweep.assigned(st):
            counts[var] = counts.get(var, 0) + 1
    out: dict[str, str] = {}
    base: dict[str, set[str]] = {}
    tests = _branch_tests(sweep.body)

    loop_writes: dict[int, set[str]] = {}

    def written_in(loop: ir.Stmt) -> set[str]:
        """What a trip of ``loop`` may assign (its header's variable not included)."""
        if id(loop) not in loop_writes:
            blocks = children(loop)
            loop_writes[id(loop)] = {
                v for block in blocks for t in block for v in stmt_writes(t, sweep.assigned)
            }
        return loop_writes[id(loop)]

    def scan(stmts: list[ir.Stmt], loop: ir.Stmt | None) -> None:
        in_loop = loop is not None
        for k, st in enumerate(stmts):
            for inner in children(st):
                scan(inner, st if isinstance(st, (ir.For, ir.While)) else loop)
            if not isinstance(st, ir.Assign) or st.target not in sweep.fn.all_temps:
                continue
            if counts.get(st.target) != 1:
                continue
            value = st.value
            if isinstance(value, ir.Subscript) and isinstance(value.obj, ir.Var):
                text = f"{value.obj.name}[{value.index.code}]"
                operands = {value.obj.name, *value.index.reads}
            elif (
                isinstance(value, ir.Attr)
                and isinstance(value.obj, ir.Var)
                and sweep.variables != STATE  # object state: the attribute may be stored
            ):
                text = f"{value.obj.name}.{value.name}"
                operands = {value.obj.name}
            elif (
                isinstance(value, (ir.BinOp, ir.UnaryOp, ir.Compare))
                and st.target in sweep.scalar
                and in_loop
            ):
                # scalar arithmetic (and a comparison) costs less to redo than to record
                text = f"({sweep.render_expr(value)})"
                operands = {a.name for a in expr_atoms(value) if isinstance(a, ir.Var)}
            elif (
                isinstance(value, (ir.Compare, ir.UnaryOp))
                and st.target in tests
                and loop is not None
                and not _expand(value, base) & written_in(loop)
            ):
                # a branch's test read by nothing but its ``if``, from values no trip of
                # its loop changes (``x[i] > 0``): the backward trip tests again instead
                # of recording which branch ran (a truth value: its operands are scalars
                # or one-element arrays)
                text = f"({sweep.render_expr(value)})"
                operands = {a.name for a in expr_atoms(value) if isinstance(a, ir.Var)}
            elif (
                isinstance(value, ir.Call)
                and st.target in sweep.scalar
                and in_loop
                and scalar_call(value, is_scalar)
            ):
                # so does a math function of scalars (a tape entry per trip saved)
                text = sweep.render_expr(value)
                operands = {a.name for a in value.args if isinstance(a, ir.Var)}
            else:
                continue
            # a recomputed operand brings its own operands along
            operands = set().union(*(base.get(v, {v}) for v in operands))
            later = stmts[k + 1 :]
            last = max((j for j, t in enumerate(later) if st.target in stmt_reads(t)), default=-1)
            written = set()
            for t in later[: last + 1]:
                written |= stmt_writes(t, sweep.assigned)
            if not written & operands:
                out[st.target] = text
                base[st.target] = operands

    scan(sweep.body, None)
    for name in list(out):
        out[name] = subst_names(out[name], out)
    return out


def _expand(value: ir.Expr, base: dict[str, set[str]]) -> set[str]:
    """The variables ``value`` reads, recomputed temporaries replaced by their operands."""
    atoms = {a.name for a in expr_atoms(value) if isinstance(a, ir.Var)}
    return set().union(*(base.get(v, {v}) for v in atoms))


def _branch_tests(body: list[ir.Stmt]) -> set[str]:
    """Variables read as an ``if``'s test and by nothing else (not a guard's test, nor
    that of an ``if`` ending in ``break``: the backward sweep reads the exit flag there)."""
    tests: set[str] = set()
    readers: dict[str, int] = {}
    for st in walk(body):
        if (
            isinstance(st, ir.If)
            and isinstance(st.test, ir.Var)
            and not st.guard
            and not (st.body and isinstance(st.body[-1], ir.Break))
        ):
            tests.add(st.test.name)
        for name in reads(st):
            readers[name] = readers.get(name, 0) + 1
    return {name for name in tests if readers[name] == 1}


def subst_names(text: str, names: dict[str, str]) -> str:
    """Replace whole identifiers (not attributes, not adjoint names) by source text."""

    def repl(m: re.Match[str]) -> str:
        return names.get(m.group(0), m.group(0))

    return re.sub(r"(?<![\w.])[^\W\d]\w*(?![\w])", repl, text)
