"""Temporaries the backward sweep recomputes from their operands instead of recording.

``x = xs[i]``, ``a.T`` and scalar arithmetic inside loops are cheaper to redo than to
push and pop, and read better; the backward sweep spells them out where it reads them
(:func:`subst_names`).
"""

from __future__ import annotations

import re

from . import ir
from .ir import expr_atoms, walk
from .stmt_facts import children, stmt_reads, stmt_writes
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

    def scan(stmts: list[ir.Stmt], in_loop: bool) -> None:
        for k, st in enumerate(stmts):
            for inner in children(st):
                scan(inner, in_loop or isinstance(st, (ir.For, ir.While)))
            if not isinstance(st, ir.Assign) or st.target not in sweep.fn.all_temps:
                continue
            if counts.get(st.target) != 1:
                continue
            value = st.value
            if isinstance(value, ir.Subscript) and isinstance(value.obj, ir.Var):
                text = f"{value.obj.name}[{value.index.code}]"
                operands = {value.obj.name, *value.index.reads}
            elif isinstance(value, ir.Attr) and isinstance(value.obj, ir.Var):
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

    scan(sweep.body, False)
    for name in list(out):
        out[name] = subst_names(out[name], out)
    return out


def subst_names(text: str, names: dict[str, str]) -> str:
    """Replace whole identifiers (not attributes, not adjoint names) by source text."""

    def repl(m: re.Match[str]) -> str:
        return names.get(m.group(0), m.group(0))

    return re.sub(r"(?<![\w.])[^\W\d]\w*(?![\w])", repl, text)
