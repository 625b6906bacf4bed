"""Loops whose ``break`` leaves nothing to reverse: the trip count tells the exit.

A loop with a ``break`` counts its trips for the backward sweep. When the count is taken
at the start of a trip, the trip that breaks is counted too, and the backward sweep needs
the exit flags to reverse only the part of it that ran (``if not _jumped: ...``). When
nothing that runs before a ``break`` in its trip has anything to reverse, the trip can be
counted at its end instead (and before each ``continue``): the breaking trip is then not
counted, every trip the backward sweep reverses ran to its end or to a ``continue``, and
each exit flag of the loop is false in all of them, so the backward sweep reads none.

"Nothing to reverse" is decided on the normal form, before the sweeps are built, and on
the safe side: every statement that comes before the loop's last ``break`` (in program
order, the trip's other paths included) is a plain assignment whose value no statement
after that point reads (so it has no adjoint and is never recorded), a loop variable read
from its sequence that nothing outside the loop reads (recomputed, never recorded), a
call whose result is dropped, a jump, or an ``if`` the backward sweep skips because its
test is one of the loop's exit flags. A ``while`` loop's test block runs again in the
breaking trip; the backward sweep reverses it after the loop as it does the last test.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ir, stmt_facts
from .codegen import identifiers


def _trip(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
    """The statements of a loop body in program order, not those of nested loops."""
    out: list[ir.Stmt] = []
    for s in stmts:
        out.append(s)
        if isinstance(s, ir.If):
            out += _trip(s.body) + _trip(s.orelse)
    return out


def exit_flags(loop: ir.For | ir.While, exits: set[str]) -> set[str]:
    """The exit flags (of ``exits``) that a ``break`` of ``loop`` sets."""
    return {
        s.target
        for s in _trip(loop.body)
        if isinstance(s, ir.Assign) and s.kind == "jump" and s.target in exits
    }


def quiet_exit(
    loop: ir.For | ir.While,
    function_body: list[ir.Stmt],
    flags: set[str],
    test_reads: Callable[[ir.If], set[str] | None],
    plain: Callable[[ir.Assign | ir.Unpack], bool],
    element: Callable[[ir.Assign], bool],
    recomputed: dict[str, str],
) -> bool:
    """Whether nothing before a ``break`` of ``loop`` needs reversing (module docstring).

    Args:
        loop: a loop with at least one ``break`` (the normal form after ``_loop_exits``).
        function_body: the whole function, to find who reads what the trip assigns.
        flags: the exit flags of ``loop`` (``exit_flags``); none may be empty.
        test_reads: what the backward sweep reads to pick an ``if``'s branch; None when
            it skips the ``if`` once ``flags`` are false.
        plain: whether an assignment calls nothing the sweeps treat apart (a user
            function's forward sweep, a recorded pullback).
        element: whether an assignment is a loop variable the backward sweep recomputes.
        recomputed: temporaries the backward sweep recomputes, with the code it reads
            instead (never recorded; the code must read nothing the trip assigns).
    """
    trip = _trip(loop.body)
    last = max((k for k, s in enumerate(trip) if isinstance(s, ir.Break)), default=-1)
    if last < 0 or not flags:
        return False
    before = trip[:last]
    inside = {id(s) for s in ir.walk(loop.body)}
    mine = {id(s) for s in before}
    written: dict[str, bool] = {}  # variable -> read only inside the loop may do
    redone: set[str] = set()
    tested: set[str] = set()  # read by the backward sweep in the trips it reverses
    for s in before:
        if isinstance(s, (ir.Break, ir.Continue, ir.Pass, ir.ExprStmt)):
            continue
        if isinstance(s, ir.If):
            tested |= test_reads(s) or set()
            continue
        if isinstance(s, ir.Assign) and s.kind == "jump":
            if s.target not in flags and not s.target.startswith("_jumped"):
                return False
            continue
        if isinstance(s, ir.Assign) and s.kind == "element" and element(s):
            written[s.target] = True
            continue
        if isinstance(s, ir.Assign) and s.target in recomputed and plain(s):
            redone |= identifiers(recomputed[s.target])
            continue
        if isinstance(s, (ir.Assign, ir.Unpack)) and plain(s):
            for var in s.targets if isinstance(s, ir.Unpack) else [s.target]:
                written.setdefault(var, False)
            continue
        return False
    if (redone | tested) & written.keys():
        return False
    if not written:
        return True
    for s in ir.walk(function_body):
        if id(s) in mine:
            continue
        reads = (test_reads(s) or set()) if isinstance(s, ir.If) else stmt_facts.reads(s)
        for var in reads & written.keys():
            if not (written[var] and id(s) in inside):
                return False
    return True
