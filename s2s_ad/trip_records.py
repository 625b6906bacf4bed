"""Per-trip records of a loop in a list of its own, walked backwards by the reversed loop.

The sweeps record an overwritten value on the tape before each overwrite and restore it
after the adjoint of the overwriting statement: in a loop, one ``_tape.append(v)`` and one
``v = _tape.pop()`` per trip. When ``v`` is assigned exactly once per trip, at the top
level of a ``for`` loop without ``break``, ``continue`` or ``else`` (and is not the loop's
variable), the value a backward trip reads before its restore is the one that trip
assigned. The forward loop then appends each trip's value to a list of its own after the
assignment, and the backward loop walks the list in its header::

    _t1_tape = []                            _t1_tape = _tape.pop()
    for i in range(n):                       for i, _t1 in zip(reversed(range(n)),
        _t1 = s > 1.0                                          reversed(_t1_tape)):
        _t1_tape.append(_t1)                     if _t1:
        if _t1:                                      ...
            ...
    _tape.append(_t1_tape)

No pop per trip: the list goes on the tape once per run of the loop (so the sweeps may be
split into two functions, and a loop inside another gets a list per outer trip); when both
loops are at the top of the gradient function the list is just a local. The backward trip
must not read ``v`` after its restore, and ``v`` must be dead after the backward loop
(the value before the first trip is no longer recorded); liveness is taken as if the
backward loop's header bound ``v``, which it then does.

The function holding both sweeps decides (:func:`plan`); the separate sweeps apply the
decision (:func:`apply`), each to the loop it holds. Not in code that is differentiated
again (``Facts.per_loop``): a list of active values would have to be differentiated too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .codefacts import Info, Liveness, names, nodes, pop_target, push_name, written
from .rewrite import remove


@dataclass(frozen=True)
class TripList:
    """One recorded variable of a loop and the name of its list."""

    var: str
    records: str


def _loops(stmts: list[ast.stmt]) -> list[ast.For]:
    out: list[ast.For] = []
    for s in stmts:
        if isinstance(s, ast.For):
            out.append(s)
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                out.extend(_loops(inner))
    return out


def _plain(loop: ast.For) -> bool:
    """A loop whose every trip runs its whole top-level body (no jump, no ``else``)."""
    if loop.orelse:
        return False
    return not any(
        isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom))
        for s in loop.body
        for n in nodes(s)
    )


def _pushes(loop: ast.For, tape: str) -> set[str]:
    """Variables recorded at the top level of a forward loop that the trip then assigns
    once, by a plain assignment at the top level."""
    out: set[str] = set()
    for k, s in enumerate(loop.body):
        var = push_name(s, tape)
        if var is None or var in names(loop.target, ast.Store):
            continue  # (the loop's own variable is bound by its header too)
        writers = [t for t in loop.body if var in written(t)]
        if len(writers) == 1 and writers[0] in loop.body[k + 1 :] and _assigns(writers[0], var):
            out.add(var)
    return out


def _assigns(s: ast.stmt, var: str) -> bool:
    return (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id == var
    )


def _pops(loop: ast.For, tape: str) -> set[str]:
    """Variables restored at the top level of a backward loop, where nothing later in the
    trip reads or writes them."""
    out: set[str] = set()
    for k, s in enumerate(loop.body):
        var = pop_target(s, tape)
        if var is None:
            continue
        later = loop.body[k + 1 :]
        if any(var in names(t, ast.Load) or var in written(t) for t in later):
            continue
        if any(var in written(t) for t in loop.body if t is not s):
            continue
        if var in names(loop.target, ast.Store) or var in names(loop.iter, ast.Load):
            continue
        out.add(var)
    return out


def plan(func: ast.FunctionDef, tape: str) -> list[TripList]:
    """The records to keep in per-loop lists, decided on the function holding both sweeps.

    A variable qualifies when the function pushes and pops it once each (so the split
    sweeps find the same pair), in loops of the forms above, and nothing reads it after
    the backward loop.
    """
    loops = [f for f in _loops(func.body) if _plain(f)]
    pushed = {v: f for f in loops for v in _pushes(f, tape)}
    popped = {v: b for b in loops for v in _pops(b, tape)}
    candidates = sorted(v for v in pushed if v in popped)
    if not candidates:
        return []
    traffic: dict[str, int] = {}
    for n in nodes(func):
        if isinstance(n, ast.stmt):
            for var in (push_name(n, tape), pop_target(n, tape)):
                if var is not None:
                    traffic[var] = traffic.get(var, 0) + 1
    # liveness as if each backward loop bound its candidates in its header (as it will):
    # a loop inside another then reads its own trips' values, not the restored ones
    targets = {id(b): b.target for b in popped.values()}
    for b in popped.values():
        bound = [ast.Name(v, ast.Store()) for v in candidates if popped[v] is b]
        b.target = ast.Tuple([targets[id(b)], *bound], ast.Store())
    try:
        liveness = Liveness(Info(tape)).run(func.body)
    finally:
        for b in popped.values():
            b.target = targets[id(b)]
    taken = {n.id for n in nodes(func) if isinstance(n, ast.Name)}
    taken |= {a.arg for a in func.args.args} | {"_saved"}
    out: list[TripList] = []
    for var in candidates:
        if traffic[var] != 2 or _live_after(liveness, popped[var], var):
            continue  # more traffic, or read after the backward loop (its old value)
        name = f"{var}_tape" if var.startswith("_") else f"_{var}_tape"
        while name in taken:
            name += "_"
        taken.add(name)
        out.append(TripList(var, name))
    return out


def apply(
    func: ast.FunctionDef,
    tape: str,
    lists: list[TripList],
    changed: set[int],
    notes: dict[int, str],
) -> None:
    """Rewrite the loops of ``func`` that record the variables of ``lists`` (forward
    loops, with their pushes; backward loops, with their pops). New and rewritten
    statements are added to ``changed`` (they are unparsed)."""
    by_var = {t.var: t for t in lists}
    if not by_var:
        return
    work = []
    for loop in _loops(func.body):
        if _plain(loop):
            fwd = [by_var[v] for v in sorted(_pushes(loop, tape)) if v in by_var]
            bwd = [by_var[v] for v in sorted(_pops(loop, tape)) if v in by_var]
            work.append((loop, fwd, bwd))
    # a list made and walked by loops at the top of the same function stays a local
    top = {id(s) for s in func.body}
    made = {t.var for loop, fwd, _ in work if id(loop) in top for t in fwd}
    walked = {t.var for loop, _, bwd in work if id(loop) in top for t in bwd}
    local = made & walked
    for loop, fwd, bwd in work:  # all decided before any rewriting
        if fwd:
            _forward(func, loop, tape, fwd, changed, notes, local)
        if bwd:
            _backward(func, loop, tape, bwd, changed, notes, local)
    forward = [(loop, fwd) for loop, fwd, _ in work if fwd]
    if forward:
        _flags_in_branches(func, tape, forward, changed, notes)
        _drop_unread_inits(func, tape, set(by_var), notes)
    if local and tape not in names(func, ast.Load):
        func.body = remove(func.body, {id(s) for s in func.body if _assigns(s, tape)}, notes)


def _flags_in_branches(
    func: ast.FunctionDef,
    tape: str,
    forward: list[tuple[ast.For, list[TripList]]],
    changed: set[int],
    notes: dict[int, str],
) -> None:
    """A recorded branch flag read by nothing but its ``if`` (and, backwards, its list):
    ``v = test; records.append(v); if v:`` becomes ``if test:`` with each branch
    recording the constant it stands for (``records.append(True)``, ``False``)."""
    after: Liveness | None = None
    for loop, lists in forward:
        for t in lists:
            found = _flag_pattern(loop, t)
            if found is None:
                continue
            writer, record, branch = found
            if any(t.var in names(s, ast.Load) for s in branch.body + branch.orelse):
                continue
            if after is None:
                after = Liveness(Info(tape)).run(func.body)
            if _live_after(after, branch, t.var):
                continue
            assert isinstance(writer, ast.Assign)
            branch.test = writer.value
            branch.body.insert(0, _new(f"{t.records}.append(True)", changed))
            branch.orelse.insert(0, _new(f"{t.records}.append(False)", changed))
            changed.add(id(branch))
            note = notes.pop(id(writer), None)
            if note:  # the test's ``# L<n>:`` comment goes with it
                notes[id(branch)] = note + ("\n" + notes[id(branch)] if id(branch) in notes else "")
            loop.body = [s for s in loop.body if s is not writer and s is not record]


def _flag_pattern(loop: ast.For, t: TripList) -> tuple[ast.stmt, ast.stmt, ast.If] | None:
    """``(v = test, records.append(v), if v:)`` in a row in ``loop``'s body, if there."""
    body = loop.body
    for k in range(len(body) - 2):
        writer, record, branch = body[k], body[k + 1], body[k + 2]
        if (
            _assigns(writer, t.var)
            and isinstance(record, ast.Expr)
            and ast.unparse(record) == f"{t.records}.append({t.var})"
            and isinstance(branch, ast.If)
            and isinstance(branch.test, ast.Name)
            and branch.test.id == t.var
        ):
            return writer, record, branch
    return None


def _drop_unread_inits(
    func: ast.FunctionDef, tape: str, recorded: set[str], notes: dict[int, str]
) -> None:
    """``v = None`` at the top of the function, there for the first push of ``v``'s old
    value: gone when nothing reads it any more."""
    inits = [
        s
        for s in func.body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id in recorded
        and isinstance(s.value, ast.Constant)
        and s.value.value is None
    ]
    if not inits:
        return
    after = Liveness(Info(tape)).run(func.body)
    drop = {id(s) for s in inits if not _live_after(after, s, s.targets[0].id)}
    if drop:
        func.body = remove(func.body, drop, notes) or [ast.Pass()]


def _live_after(liveness: Liveness, s: ast.stmt, var: str) -> bool:
    """Whether ``var`` may be live after ``s`` (a statement the sweep did not reach counts
    as live)."""
    return id(s) not in liveness.after or liveness.live_after(s, var)


def _parent(stmts: list[ast.stmt], target: ast.stmt) -> list[ast.stmt] | None:
    if any(s is target for s in stmts):
        return stmts
    for s in stmts:
        for attr in ("body", "orelse", "handlers", "finalbody"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                found = _parent(inner, target)
                if found is not None:
                    return found
    return None


def _index(stmts: list[ast.stmt], target: ast.stmt) -> int:
    return next(k for k, s in enumerate(stmts) if s is target)


def _above(stmts: list[ast.stmt], at: int, new: list[ast.stmt], notes: dict[int, str]) -> None:
    """Insert ``new`` before ``stmts[at]``, under its comment."""
    if not new:
        return
    note = notes.pop(id(stmts[at]), None)
    if note:
        notes[id(new[0])] = note
    stmts[at:at] = new


def _new(text: str, changed: set[int]) -> ast.stmt:
    node = ast.parse(text).body[0]
    changed.add(id(node))
    return node


def _forward(
    func: ast.FunctionDef,
    loop: ast.For,
    tape: str,
    lists: list[TripList],
    changed: set[int],
    notes: dict[int, str],
    local: set[str],
) -> None:
    """``records = []`` before the loop, ``records.append(v)`` after ``v``'s assignment
    instead of the push before it, ``tape.append(records)`` after the loop."""
    for t in lists:
        push = next(s for s in loop.body if push_name(s, tape) == t.var)
        at = _index(loop.body, push)
        writer = next(s for s in loop.body[at + 1 :] if _assigns(s, t.var))
        loop.body.insert(
            _index(loop.body, writer) + 1, _new(f"{t.records}.append({t.var})", changed)
        )
        del loop.body[at]
        note = notes.pop(id(push), None)
        if note:  # the push's ``# L<n>:`` comment goes to the statement that followed it
            after = loop.body[at]
            notes[id(after)] = note + ("\n" + notes[id(after)] if id(after) in notes else "")
    outer = _parent(func.body, loop)
    assert outer is not None
    at = _index(outer, loop)
    outer[at + 1 : at + 1] = [
        _new(f"{tape}.append({t.records})", changed) for t in lists if t.var not in local
    ]
    _above(outer, at, [_new(f"{t.records} = []", changed) for t in lists], notes)


def _backward(
    func: ast.FunctionDef,
    loop: ast.For,
    tape: str,
    lists: list[TripList],
    changed: set[int],
    notes: dict[int, str],
    local: set[str],
) -> None:
    """``records = tape.pop()`` before the loop, ``v`` bound by its header from
    ``reversed(records)``, the pops gone."""
    mine = {t.var for t in lists}
    loop.body = [s for s in loop.body if pop_target(s, tape) not in mine] or [ast.Pass()]
    target = ast.Tuple([loop.target, *(ast.Name(t.var, ast.Store()) for t in lists)], ast.Store())
    records = [
        ast.Call(ast.Name("reversed", ast.Load()), [ast.Name(t.records, ast.Load())], [])
        for t in lists
    ]
    loop.target = target
    loop.iter = ast.Call(ast.Name("zip", ast.Load()), [loop.iter, *records], [])
    changed.add(id(loop))
    outer = _parent(func.body, loop)
    assert outer is not None
    at = _index(outer, loop)
    pops = [_new(f"{t.records} = {tape}.pop()", changed) for t in reversed(lists)]
    _above(outer, at, [p for p, t in zip(pops, reversed(lists)) if t.var not in local], notes)
