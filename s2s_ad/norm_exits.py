"""Rewrites of a lowered body that finish the normal form, on the IR alone.

* :func:`single_exit`: one ``Return``, the last statement; earlier returns assign
  ``_ret`` and set a flag that breaks out of loops and guards what follows them;
* :func:`reversible_jumps`: loops get trip counters, and ``break``/``continue`` set
  flags that guard the rest of the trip, so the backward sweep reverses exactly the
  statements that ran;
* :func:`bound_alias_checks`: each in-place write check names only the partners bound
  when it runs.
"""

from __future__ import annotations

from . import ir
from .norm_base import NormalizerBase


def _ends(stmts: list[ir.Stmt]) -> bool:
    """Whether every path through the block ends in a return."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ir.Return):
        return True
    if isinstance(last, ir.If):
        return _ends(last.body) and _ends(last.orelse)
    return False


def _has_return(stmts: list[ir.Stmt]) -> bool:
    """Whether a ``return`` stands anywhere in the block, loops and branches included."""
    for s in stmts:
        if isinstance(s, ir.Return):
            return True
        if isinstance(s, ir.If) and (_has_return(s.body) or _has_return(s.orelse)):
            return True
        if isinstance(s, ir.For) and _has_return(s.body):
            return True
        if isinstance(s, ir.While) and (_has_return(s.body) or _has_return(s.test_body)):
            return True
    return False


def single_exit(
    body: list[ir.Stmt], norm: NormalizerBase, into: str | None = None
) -> list[ir.Stmt]:
    """Rewrite returns so that the function has one ``Return``, at the end.

    A block whose every path returns needs no flag: each return becomes an assignment
    of ``_ret``. Returns inside loops, or followed by code on other paths, set the flag
    ``_returned``, break out of loops, and guard the statements after them.

    With ``into``, ``body`` is a local function's body inlined at a call: each return
    assigns ``into`` instead, and no ``Return`` ends the block (the caller goes on).
    """
    line, src = norm.line, norm.src
    if into is None and body and isinstance(body[-1], ir.Return) and not _has_return(body[:-1]):
        return body
    ret = into or norm.fresh("_ret")
    flag = norm.fresh("_returned")
    state = {"flag": False}

    def rewrite(stmts: list[ir.Stmt], in_loop: bool) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for pos, s in enumerate(stmts):
            rest = stmts[pos + 1 :]
            if isinstance(s, ir.Return):
                out.append(ir.Assign(s.line, s.src, ret, ir.Copy(s.value)))
                return out + _exit(s, in_loop)
            if isinstance(s, ir.If) and (_has_return(s.body) or _has_return(s.orelse)):
                s.body = rewrite(s.body, in_loop)
                s.orelse = rewrite(s.orelse, in_loop)
                out.append(s)
                if _ends(s.body) and _ends(s.orelse):
                    return out
                if rest:
                    return out + _guard(s, rewrite(rest, in_loop), in_loop)
                return out
            if isinstance(s, (ir.For, ir.While)) and _has_return(s.body):
                s.body = rewrite(s.body, True)
                out.append(s)
                if rest or in_loop:
                    return out + _guard(s, rewrite(rest, in_loop), in_loop)
                return out
            out.append(s)
        return out

    def _exit(s: ir.Stmt, in_loop: bool) -> list[ir.Stmt]:
        if in_loop:
            state["flag"] = True
            return [
                ir.Assign(s.line, s.src, flag, ir.Copy(ir.Const("True"))),
                ir.Break(s.line, s.src),
            ]
        state["flag"] = True
        return [ir.Assign(s.line, s.src, flag, ir.Copy(ir.Const("True")))]

    def _guard(s: ir.Stmt, rest: list[ir.Stmt], in_loop: bool) -> list[ir.Stmt]:
        state["flag"] = True
        if in_loop:
            rest = [ir.If(s.line, s.src, ir.Var(flag), [ir.Break(s.line, s.src)], []), *rest]
            return rest
        if not rest:
            return []
        seen = norm.fresh()
        return [
            ir.Assign(s.line, s.src, seen, ir.Copy(ir.Var(flag))),
            ir.If(s.line, s.src, ir.Var(seen), [], rest),
        ]

    falls_through = not _ends(body)
    new = rewrite(body, False)
    head: list[ir.Stmt] = []
    first = norm.p.first_line if into is None else line
    if falls_through:
        head.append(ir.Assign(first, "", ret, ir.Copy(ir.Const("None"))))
    if state["flag"]:
        head.append(ir.Assign(first, "", flag, ir.Copy(ir.Const("False"))))
    if into is not None:
        return [*head, *new]
    return [*head, *new, ir.Return(line, src, ir.Var(ret))]


def _jumps(stmts: list[ir.Stmt], kind: type) -> bool:
    """Whether the block (outside nested loops) contains a ``break``/``continue``."""
    for s in stmts:
        if isinstance(s, kind):
            return True
        if isinstance(s, ir.If) and (_jumps(s.body, kind) or _jumps(s.orelse, kind)):
            return True
    return False


def reversible_jumps(body: list[ir.Stmt], norm: NormalizerBase) -> list[ir.Stmt]:
    """Give loops trip counters and make ``break``/``continue`` reversible.

    In a loop body, the statements after an ``if`` that may jump are wrapped in a guard
    with a flag of its own; every jump sets the flags of the guards around it. A flag
    a ``continue`` may set is reset at the start of each trip, so the backward sweep
    reverses exactly the statements that ran; one only a ``break`` sets is set to false
    once before the loop (it can be true on the last trip only, and the backward sweep
    sets it back to false when it reverses the ``break``: nothing is recorded per trip).
    Loops with a ``break`` (and every ``while``) count trips.
    """

    def block(
        stmts: list[ir.Stmt], flags: list[str], loop_flags: list[tuple[str, bool]]
    ) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for pos, s in enumerate(stmts):
            if isinstance(s, (ir.Break, ir.Continue)):
                out += [
                    ir.Assign(s.line, s.src, f, ir.Copy(ir.Const("True")), kind="jump")
                    for f in flags
                ]
                out.append(s)
                return out
            if isinstance(s, ir.If):
                rest = stmts[pos + 1 :]
                jumps = (
                    _jumps(s.body, ir.Break)
                    or _jumps(s.body, ir.Continue)
                    or _jumps(s.orelse, ir.Break)
                    or _jumps(s.orelse, ir.Continue)
                )
                continues = _jumps(s.body, ir.Continue) or _jumps(s.orelse, ir.Continue)
                if jumps and rest:
                    flag = norm.fresh("_jumped")
                    loop_flags.append((flag, continues))
                    s.body = block(s.body, [*flags, flag], loop_flags)
                    s.orelse = block(s.orelse, [*flags, flag], loop_flags)
                    out.append(s)
                    inner = block(rest, flags, loop_flags)
                    out.append(ir.If(s.line, s.src, ir.Var(flag), [], inner, guard=True))
                    return out
                if jumps and not continues and s.body and isinstance(s.body[-1], ir.Break):
                    # the last statement: no guard, but the flag tells the backward sweep
                    # which branch the last trip took (nothing recorded per trip)
                    flag = norm.fresh("_jumped")
                    loop_flags.append((flag, False))
                    s.body = block(s.body, [*flags, flag], loop_flags)
                    s.orelse = block(s.orelse, [*flags, flag], loop_flags)
                    out.append(s)
                    return out
                s.body = block(s.body, flags, loop_flags)
                s.orelse = block(s.orelse, flags, loop_flags)
            elif isinstance(s, (ir.For, ir.While)):
                lowered, tail = loop(s)
                out += lowered
                if tail:
                    # the loop's ``else:`` runs in this block: its break or continue
                    # (``for ...: ... else: continue``) jumps in the enclosing loop
                    return out + block([*tail, *stmts[pos + 1 :]], flags, loop_flags)
                continue
            out.append(s)
        return out

    def loop(s: ir.For | ir.While) -> tuple[list[ir.Stmt], list[ir.Stmt]]:
        """The loop made reversible, and what its ``else:`` becomes after it (left for
        the enclosing block to make reversible)."""
        has_break = _jumps(s.body, ir.Break)
        loop_flags: list[tuple[str, bool]] = []
        flags: list[str] = []
        orelse = s.orelse
        s.orelse = []
        if has_break and (isinstance(s, ir.While) or orelse):
            s.brk = norm.fresh("_broke")
            flags.append(s.brk)
        s.body = block(s.body, flags, loop_flags)

        def false(flag: str) -> ir.Stmt:
            return ir.Assign(s.line, s.src, flag, ir.Copy(ir.Const("False")))

        s.body[:0] = [false(f) for f, continues in loop_flags if continues]
        before = [false(f) for f, continues in loop_flags if not continues]
        if isinstance(s, ir.While) or has_break:
            s.trips = norm.fresh("_trips")
        if not s.brk:
            return [*before, s], orelse
        out: list[ir.Stmt] = [*before, false(s.brk), s]
        if not orelse:
            return out, []
        # ``else:`` runs when no break did: the flag as it stands after the loop
        seen = norm.fresh()
        tail: list[ir.Stmt] = [
            ir.Assign(s.line, s.src, seen, ir.Copy(ir.Var(s.brk))),
            ir.If(s.line, s.src, ir.Var(seen), [], orelse),
        ]
        return out, tail

    return block(body, [], [])


def bound_alias_checks(body: list[ir.Stmt], params: set[str]) -> list[ir.Stmt]:
    """Keep in each ``_ad.not_a_view(v, *partners)`` only the partners bound when it runs.

    A partner first assigned later (``a -= b; s = a``) cannot share ``v`` yet and is
    dropped; one bound on some paths only (in a branch, or on an earlier trip of the
    enclosing loop) is bound to ``None`` at the start, so the check never reads an
    unbound name.
    """
    unbound_first: set[str] = set()

    def visit(s: ir.Stmt, definite: set[str], possible: set[str]) -> None:
        if isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call):
            call = s.value
            if call.callee.code == "_ad.not_a_view":
                head, *partners = call.args
                kept = [a for a in partners if isinstance(a, ir.Var) and a.name in possible]
                unbound_first.update(a.name for a in kept if a.name not in definite)
                call.args = [head, *kept]

    ir.scan_bound(body, params, visit)
    if not unbound_first:
        return body
    first = body[0]
    inits: list[ir.Stmt] = [
        ir.Assign(first.line, first.src, name, ir.Copy(ir.Const("None")))
        for name in sorted(unbound_first)
    ]
    return inits + body
