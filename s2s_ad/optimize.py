"""Clean-up passes over generated functions: dead stores and dead tape traffic.

The sweeps are built statement by statement, each knowing only its own line; some of what
they write is never read (an adjoint initialised and then assigned, a temporary the
backward sweep does not need, a value pushed on the tape and restored where nothing reads
it). This module is the driver: it reads a whole generated function with :mod:`ast` (the
statements' read and write sets and liveness come from :mod:`codefacts`), finds what is
dead by liveness over the structured code (loops to a fixpoint,
``break``/``continue``/``return`` included), and writes the function back with
:mod:`rewrite`: kept statements keep their text and their ``# L<n>:`` comments.

First the contributions of one user line to one adjoint are brought together
(:mod:`gather`). Then passes, repeated until nothing changes (the doubling once, at the end):

* copy propagation in straight-line code (``a = b`` then reads of ``a``);
* a contribution added to itself (``e + e``, from ``x * x``) written ``2.0 * e``;
* dead stores: ``name = expr`` where ``name`` is not read afterwards and ``expr`` has no
  effect (operators, subscripts, NumPy functions and the pure runtime helpers);
* dead tape traffic: a variable pushed on the tape and restored where, after every
  restoring pop, nothing reads it: its pushes and pops go together, so the tape stays
  balanced;
* last, a NumPy ufunc computed again (``g * np.cos(x)`` after ``_t15 = np.cos(x)``)
  reads the value held (:mod:`reuse`).

``ENABLED`` turns the passes off (tests compare gradients with and without them).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from .codefacts import (
    COMPOUND,
    Info,
    Liveness,
    sharing,
    statements,
)
from .fold import assign_first, blocks, fold_temporaries, merge_doubles
from .gather import gather
from .reuse import reuse_calls
from .rewrite import Unparsed, attach, remove, render, site, text_of
from .trip_records import LoopTraffic, TripList, apply, plan

ENABLED = os.environ.get("S2S_AD_OPTIMIZE", "1") != "0"


@dataclass
class Facts:
    """What the passes decided, shared by the functions made from the same sweeps."""

    dead_sites: set[int] = field(default_factory=set)  # tape sites whose pushes/pops go
    trip_lists: list[TripList] = field(default_factory=list)  # records kept per loop
    per_loop: bool = True  # allow per-loop record lists (not in code differentiated again)
    untripped: str = ""  # the first function before its records went into per-loop lists


def _dead(
    func: ast.FunctionDef, tape: str, facts: Facts, decide: bool, info: Info
) -> tuple[set[int], bool]:
    """Ids of the statements to drop (and, with ``decide``, the dead tape sites), and
    whether tape traffic is among them."""
    lv = Liveness(info).run(func.body)
    after, masks = lv.after, info.masks
    drop: set[int] = set()
    pops: dict[int, bool] = {}  # site -> every pop of it is dead
    every = statements(func.body)
    traffic_stmts: list[ast.stmt] = []  # the pushes and pops (asked again below)
    for s in every:
        popped, pushed = info.tape_use(s)
        if popped is not None or pushed is not None:
            traffic_stmts.append(s)
        live = after.get(id(s))
        if live is None:
            continue
        target = popped
        mark = site(s) if target is not None else None
        if mark is not None:
            pops[mark] = pops.get(mark, True) and not lv.live_after(s, target)  # type: ignore[arg-type]
            continue
        found = masks.get(id(s))  # (reads, kills, dead if unread): a simple statement's
        if found is not None and found[2] and not (live & found[1]):
            drop.add(id(s))
    if decide:
        facts.dead_sites |= {mark for mark, dead in pops.items() if dead}
    traffic = False
    if facts.dead_sites:
        for s in traffic_stmts:
            if site(s) in facts.dead_sites:
                drop.add(id(s))
                traffic = True
    return drop, traffic


def _propagate(stmts: list[ast.stmt], changed: set[int], info: Info) -> bool:
    """Copy propagation in straight-line code: after ``a = b``, later reads of ``a`` in the
    same block read ``b`` until either name is bound or written again (the copy itself
    then dies). Both names hold the same object, so reads see the same value. The
    statements rewritten go into ``changed`` (and are to be forgotten in ``info``)."""
    progress = False
    tape = info.tape
    for i, s in enumerate(stmts):
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                progress = _propagate(inner, changed, info) or progress
        if not (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and isinstance(s.value, ast.Name)
            and tape not in (s.targets[0].id, s.value.id)
            and s.targets[0].id.startswith("_")  # a temporary: names from the user stay
        ):
            continue
        a, b = s.targets[0].id, s.value.id
        if a == b:
            continue
        for t in stmts[i + 1 :]:
            if isinstance(t, COMPOUND):
                break
            # the nodes reading a name, and the names written (renaming a read keeps both)
            found = info.survey(t)
            hit = [n for n in found.load_nodes if n.id == a]
            for n in hit:
                n.id = b
            if hit:
                changed.add(id(t))
                progress = True
            if a in found.written or b in found.written:
                break
    return progress


def _forget(func: ast.FunctionDef, changed: set[int], info: Info) -> None:
    """Forget in ``info`` the statements of ``func`` that were rewritten (``changed``)."""
    for s in statements(func.body):
        if id(s) in changed:
            info.forget(s)


def optimize_function(
    text: str,
    tape: str,
    facts: Facts,
    decide_tape: bool = False,
    plan_trips: bool = False,
    built: Callable[[], tuple[ast.FunctionDef, dict[int, str]]] | None = None,
) -> str:
    """One generated function (``def ...:`` and its body) with dead code removed.

    Args:
        text: The function's source, one statement per line.
        tape: The tape's name.
        facts: Decisions shared with the functions made from the same sweeps.
        decide_tape: Decide which tape traffic is dead here (the function holding both
            sweeps); the others apply the decision.
        plan_trips: Decide which records go into per-loop lists here (as ``decide_tape``
            does, for a function holding both sweeps that no other is made from).
        built: Makes the function's statements as the sweeps built them (each with its
            text and tape site, see ``codegen.Builder``) and their comments; without it
            ``text`` is parsed.
    """
    if not ENABLED:
        return text
    if built is not None:
        func, notes = built()
    else:
        func = ast.parse(text).body[0]
        assert isinstance(func, ast.FunctionDef)
        notes = attach(func, text.split("\n"))
    info = Info(tape)
    changed: set[int] = set()
    gathered = gather(func.body, info, tape, notes, changed)
    if gathered:
        func.body = remove(func.body, gathered, notes) or [ast.Pass()]
    again = True
    for _ in range(10):
        touched: set[int] = set()
        copied = _propagate(func.body, touched, info)
        if not copied and not again:
            break
        for s in statements(func.body):
            if id(s) in touched:
                info.forget(s)  # its read set changed
        changed |= touched
        drop, traffic = _dead(func, tape, facts, decide_tape, info)
        if not drop and not copied:
            break
        hollowed: list[ast.stmt] = []
        func.body = remove(func.body, drop, notes, hollowed) or [ast.Pass()]
        # one liveness sweep finds every dead store, chains included: another is needed
        # only where a statement that read something went without being found dead
        # (tape pushes, an emptied ``if``'s test) or a copy was propagated
        again = traffic or bool(hollowed)
    merge_doubles(func.body, changed, tape)
    drop = assign_first(func.body, changed, tape, notes)
    _forget(func, changed, info)
    reuse_calls(blocks(func.body), changed, info)  # before folding: holders stay named
    drop |= fold_temporaries(func, info, notes, changed)
    if drop:
        func.body = remove(func.body, drop, notes) or [ast.Pass()]
    _forget(func, changed, info)
    reuse_calls(blocks(func.body), changed, info)  # adjoints folded into fresh values
    header = text_of(func)  # type: ignore[arg-type]
    unparsed: Unparsed = {}  # statements rendered twice are unparsed once
    if facts.per_loop and (decide_tape or plan_trips or facts.trip_lists):
        found = LoopTraffic()  # the loops' traffic, found once for plan and rewriting
        if decide_tape or plan_trips:
            _forget(func, changed, info)  # what the second reuse rewrote
            with sharing(info):  # the liveness sweeps of the plan: the facts known
                facts.trip_lists = plan(func, tape, found)
            if facts.trip_lists:  # what shape variants lower (then plan again)
                facts.untripped = "\n".join(
                    [header, *render(func.body, notes, "    ", changed, unparsed)]
                )
        # the rewriting asks liveness of the statements it rewrites: it forgets them first
        _forget(func, changed, info)
        touched: set[int] = set()
        apply(func, tape, facts.trip_lists, touched, notes, found, info)
        for key in touched:
            unparsed.pop(key, None)
        changed |= touched
    return "\n".join([header, *render(func.body, notes, "    ", changed, unparsed)])
