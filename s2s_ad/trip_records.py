"""Per-trip records of a loop in a list of its own, read back by the reversed loop.

The sweeps record an overwritten value on the tape before each overwrite and restore it
after the adjoint of the overwriting statement: in a loop, one ``_tape.append(v)`` and one
``v = _tape.pop()`` per trip. When ``v`` is assigned exactly once per trip, at the top
level of the loop, in exactly the trips the backward loop reverses (and is not the loop's
variable), the value a backward trip reads before its restore is the one that trip
assigned. The forward loop then appends each trip's value to a list of its own after the
assignment, and the backward loop reads it from there::

    _t1_tape = []                            for i in reversed(range(n)):
    for i in range(n):                           if _t1_tape[i]:
        _t1 = s > 1.0                                ...
        _t1_tape.append(_t1)
        if _t1:
            ...

A backward loop over ``reversed(range(n))`` reads entry ``i`` (trip ``i`` of the forward
loop); one whose variable nothing reads walks ``reversed(_t1_tape)`` in its header (a
``while`` loop's backward loop: the list then counts the trips, and the trip count goes);
any other binds the value with ``zip(..., reversed(_t1_tape))``.

Which trips the backward loop reverses (:func:`_every_reversed_trip`): every trip of a
``for`` loop without ``break``, so the value is assigned before any ``continue``; the
trips counted at their top (a loop with ``break``, a ``while`` loop after its test), so
no jump comes between the count and the assignment; or the trips counted at their end (a
``break`` that leaves nothing to reverse, :mod:`loop_exits`), so only a ``break`` comes
before the value and none after it. A ``while`` loop whose test records values is left
alone: the backward sweep restores them (the last test's) before its loop, so a list
pushed after the forward loop would come off the tape after them.

No pop per trip: the list goes on the tape once per run of the loop (so the sweeps may be
split into two functions, and a loop inside another gets a list per outer trip); when both
loops are at the top of the gradient function the list is just a local. The backward trip
must not read ``v`` after its restore, and ``v`` must be dead after the backward loop
(the value before the first trip is no longer recorded); liveness is taken as if the
backward loop's header bound ``v``, which it then does (or its first statement).

The function holding both sweeps decides (:func:`plan`); the separate sweeps apply the
decision (:func:`apply`), each to the loop it holds. Not in code that is differentiated
again (``Facts.per_loop``): a list of active values would have to be differentiated too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from .codefacts import (
    COMPOUND,
    Info,
    Liveness,
    Survey,
    names,
    nodes,
    pop_target,
    push_name,
    statements,
    survey,
    written,
)
from .rewrite import remove


@dataclass(frozen=True)
class TripList:
    """One recorded variable of a loop and the name of its list."""

    var: str
    records: str


def _loops(stmts: list[ast.stmt]) -> list[ast.For | ast.While]:
    out: list[ast.For | ast.While] = []
    for s in stmts:
        if isinstance(s, (ast.For, ast.While)):
            out.append(s)
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                out.extend(_loops(inner))
    return out


_JUMPS = (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom)


def _jumps(stmts: list[ast.stmt], kinds: tuple[type, ...] = _JUMPS) -> bool:
    return any(isinstance(n, kinds) for s in stmts for n in nodes(s))


def _plain(loop: ast.For | ast.While) -> bool:
    """A ``for`` loop whose every trip runs its whole top-level body (no jump, no
    ``else``): what a backward loop must be."""
    return isinstance(loop, ast.For) and not loop.orelse and not _jumps(loop.body)


def _counter(s: ast.stmt) -> bool:
    """``_tripsN += 1``: the forward sweep counting the trips the backward one reverses."""
    return (
        isinstance(s, ast.AugAssign)
        and isinstance(s.op, ast.Add)
        and isinstance(s.target, ast.Name)
        and s.target.id.startswith("_trips")
        and isinstance(s.value, ast.Constant)
        and s.value.value == 1
    )


def _every_reversed_trip(loop: ast.For | ast.While, at: int, end: int, tape: str) -> bool:
    """Whether the top-level statements ``loop.body[at:end + 1]`` run in exactly the
    trips the backward loop reverses, each once.

    Without a trip count, the backward loop reverses every trip of a ``for`` loop (it
    has no ``break``): nothing before ``end`` may leave the trip. With the count taken
    at the top of the trip (after a ``while`` loop's test), nothing between the count and
    ``end`` may. With the count taken at the end of the trip (and before each
    ``continue``: a loop whose breaking trip is not reversed, :mod:`loop_exits`), only a
    ``break`` may come before ``at`` and none after it.
    """
    body = loop.body
    if loop.orelse or _jumps(body, (ast.Return, ast.Yield, ast.YieldFrom)):
        return False
    if _jumps(body[at : end + 1]):
        return False
    counts = [k for k, s in enumerate(body) if _counter(s)]
    every = [n for s in body for n in nodes(s) if isinstance(n, ast.stmt) and _counter(n)]
    if not every:
        plain = not _jumps(body, (ast.Break,)) and not _jumps(body[:at])
        return isinstance(loop, ast.For) and plain
    if len(counts) != 1:
        return False
    c = counts[0]
    if c < at:
        # what the uncounted trip records before the count (a ``while`` loop's test) is
        # restored before the backward loop: its list would come off the tape too late
        early = any(push_name(n, tape) for n in statements(body[:c]))
        return len(every) == 1 and not early and not _jumps(body[c + 1 : at])
    return (
        c == len(body) - 1
        and not _jumps(body[:at], (ast.Continue,))
        and not _jumps(body[end + 1 :], (ast.Break,))
        and not any(_counter(n) for s in body[:at] for n in nodes(s) if isinstance(n, ast.stmt))
    )


def _written(s: ast.stmt, info: Info | None) -> set[str]:
    """:func:`codefacts.written` of ``s``, from ``info``'s facts for a simple statement
    (a compound one's facts would not follow a rewrite of a statement inside it)."""
    if info is None or isinstance(s, COMPOUND):
        return written(s)
    return info.written(s)


def _survey(s: ast.stmt, info: Info | None) -> Survey:
    """:func:`codefacts.survey` of ``s``, as :func:`_written`."""
    if info is None or isinstance(s, COMPOUND):
        return survey(s)
    return info.survey(s)


def _pushes(loop: ast.For | ast.While, tape: str, info: Info | None = None) -> set[str]:
    """Variables recorded at the top level of a forward loop that the trip then assigns
    once, by a plain assignment at the top level, both in every trip reversed."""
    out: set[str] = set()
    bound = names(loop.target, ast.Store) if isinstance(loop, ast.For) else set()
    writes: list[set[str]] = []  # of each statement of the trip, walked once
    for k, s in enumerate(loop.body):
        var = push_name(s, tape)
        if var is None or var in bound:
            continue  # (the loop's own variable is bound by its header too)
        writes = writes or [_written(t, info) for t in loop.body]
        writers = [t for t, w in zip(loop.body, writes) if var in w]
        if len(writers) == 1 and writers[0] in loop.body[k + 1 :] and _assigns(writers[0], var):
            if _every_reversed_trip(loop, k, _index(loop.body, writers[0]), tape):
                out.add(var)
    return out


def _assigns(s: ast.stmt, var: str) -> bool:
    return (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id == var
    )


def _pops(loop: ast.For | ast.While, tape: str, info: Info | None = None) -> set[str]:
    """Variables restored at the top level of a backward loop, where nothing later in the
    trip reads or writes them."""
    out: set[str] = set()
    if not isinstance(loop, ast.For) or not _plain(loop):
        return out
    found: list[Survey] = []  # of each statement of the trip, walked once
    for k, s in enumerate(loop.body):
        var = pop_target(s, tape)
        if var is None:
            continue
        found = found or [_survey(t, info) for t in loop.body]
        if any(var in f.loads or var in f.written for f in found[k + 1 :]):
            continue
        if any(var in f.written for t, f in zip(loop.body, found) if t is not s):
            continue
        if var in names(loop.target, ast.Store) or var in names(loop.iter, ast.Load):
            continue
        out.add(var)
    return out


@dataclass
class LoopTraffic:
    """What ``plan`` found on a function's tree, for ``apply`` on the same tree."""

    #: A loop's id -> the variables it records and restores (``_pushes``, ``_pops``).
    loops: dict[int, tuple[set[str], set[str]]] = field(default_factory=dict)
    #: The names the function reads (found with the plan's candidates).
    loaded: set[str] | None = None


def _traffic(
    loop: ast.For | ast.While, tape: str, found: LoopTraffic, info: Info | None = None
) -> tuple[set[str], set[str]]:
    known = found.loops.get(id(loop))
    if known is None:
        known = found.loops[id(loop)] = (_pushes(loop, tape, info), _pops(loop, tape, info))
    return known


def _names_and_traffic(
    func: ast.FunctionDef, info: Info
) -> tuple[dict[str, int], set[str], set[str]]:
    """For each variable, how many statements of ``func`` push or pop it; every name
    ``func`` uses; the names it reads. From ``info``'s facts of its simple statements
    (one walk each, made already) and the walks of its compound statements' heads."""
    traffic: dict[str, int] = {}
    taken: set[str] = set()
    loaded: set[str] = set()
    heads: list[ast.AST] = [func.args, *func.decorator_list]
    if func.returns is not None:
        heads.append(func.returns)
    for s in statements(func.body):
        for var in info.tape_use(s):
            if var is not None:
                traffic[var] = traffic.get(var, 0) + 1
        if isinstance(s, (ast.If, ast.While)):
            heads.append(s.test)
        elif isinstance(s, ast.For):
            heads += [s.target, s.iter]
        elif isinstance(s, COMPOUND) or hasattr(s, "body"):
            # ``with``, ``try``, a definition: parts that are neither heads nor statements
            return _names_and_traffic_walked(func, info.tape)
        else:
            found = info.survey(s)
            loaded |= found.loads  # (the stores' names: names written, bases read)
            taken |= found.loads
            taken |= found.written
    for n in [n for head in heads for n in nodes(head)]:
        if isinstance(n, ast.Name):
            taken.add(n.id)
            if isinstance(n.ctx, ast.Load):
                loaded.add(n.id)
    return traffic, taken, loaded


def _names_and_traffic_walked(
    func: ast.FunctionDef, tape: str
) -> tuple[dict[str, int], set[str], set[str]]:
    """:func:`_names_and_traffic` from a walk of every node of ``func``."""
    traffic: dict[str, int] = {}
    taken: set[str] = set()
    loaded: set[str] = set()
    for n in nodes(func):
        if isinstance(n, ast.Name):
            taken.add(n.id)
            if isinstance(n.ctx, ast.Load):
                loaded.add(n.id)
        elif isinstance(n, ast.stmt):
            for var in (push_name(n, tape), pop_target(n, tape)):
                if var is not None:
                    traffic[var] = traffic.get(var, 0) + 1
    return traffic, taken, loaded


def plan(func: ast.FunctionDef, tape: str, found: LoopTraffic | None = None) -> list[TripList]:
    """The records to keep in per-loop lists, decided on the function holding both sweeps.

    A variable qualifies when the function pushes and pops it once each (so the split
    sweeps find the same pair), in loops of the forms above, and nothing reads it after
    the backward loop. ``found`` keeps each loop's traffic for ``apply`` (the tree
    unchanged in between).
    """
    found = LoopTraffic() if found is None else found
    loops = _loops(func.body)
    info = Info(tape)  # (inside ``codefacts.sharing``: the optimizer's facts)
    pushed = {v: f for f in loops for v in _traffic(f, tape, found, info)[0]}
    popped = {v: b for b in loops for v in _traffic(b, tape, found, info)[1]}
    candidates = sorted(v for v in pushed if v in popped)
    if not candidates:
        return []
    traffic, taken, loaded = _names_and_traffic(func, info)
    found.loaded = loaded
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
    found: LoopTraffic | None = None,
    info: Info | None = None,
) -> None:
    """Rewrite the loops of ``func`` that record the variables of ``lists`` (forward
    loops, with their pushes; backward loops, with their pops). New and rewritten
    statements are added to ``changed`` (they are unparsed). ``found``: the loops'
    traffic ``plan`` found on the same tree; ``info``: the facts of the statements of
    ``func`` as it is (those the rewriting changes it forgets before it asks liveness),
    else liveness walks every statement again."""
    by_var = {t.var: t for t in lists}
    if not by_var:
        return
    found = LoopTraffic() if found is None else found
    work = []
    for loop in _loops(func.body):
        pushes, pops = _traffic(loop, tape, found, info)
        fwd = [by_var[v] for v in sorted(pushes) if v in by_var]
        bwd = [by_var[v] for v in sorted(pops) if v in by_var]
        work.append((loop, fwd, bwd))
    # a list made and walked by loops at the top of the same function stays a local
    top = {id(s) for s in func.body}
    made = {t.var for loop, fwd, _ in work if id(loop) in top for t in fwd}
    walked = {t.var for loop, _, bwd in work if id(loop) in top for t in bwd}
    local = made & walked
    # the names read before any rewriting: the rewriting adds reads only of a loop's own
    # index, inside the loop that binds it, and of records already read
    read = names(func, ast.Load) if found.loaded is None else found.loaded
    for loop, fwd, bwd in work:  # all decided before any rewriting
        if fwd:
            _forward(func, loop, tape, fwd, changed, notes, local)
        if bwd:
            _backward(loop, tape, bwd, changed, notes, local, func, read)
    forward = [(loop, fwd) for loop, fwd, _ in work if fwd]
    # what goes is removed at once (the statements dropped read nothing the others ask of)
    drop: set[int] = set()
    loaded: list[set[str]] = []  # the names read after the rewriting, found when asked

    def reads() -> set[str]:
        if not loaded:
            loaded.append(_loads(func, changed, info))
        return loaded[0]

    if forward:
        _flags_in_branches(func, tape, forward, changed, notes, info)
        drop |= _unread_inits(func, tape, set(by_var), changed, info)
        drop |= _unread_counts(func, notes, changed, reads)
    if local and tape not in reads():
        drop |= {id(s) for s in func.body if _assigns(s, tape)}
    if drop:
        func.body = remove(func.body, drop, notes) or [ast.Pass()]


def _flags_in_branches(
    func: ast.FunctionDef,
    tape: str,
    forward: list[tuple[ast.For, list[TripList]]],
    changed: set[int],
    notes: dict[int, str],
    info: Info | None,
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
                after = _liveness(func, tape, changed, info)
            if _live_after(after, branch, t.var):
                continue
            assert isinstance(writer, ast.Assign)
            branch.test = writer.value
            count = _trip_count(loop)
            init = _init(func, loop, t)
            if count is not None and init is not None:
                # every trip of ``for i in range(n)``: ``bytearray(n)``, the taken ones set
                assert isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)
                init.value = ast.parse(f"bytearray({ast.unparse(count)})", mode="eval").body
                changed.add(id(init))
                branch.body.insert(0, _new(f"{t.records}[{loop.target.id}] = 1", changed))
            elif init is not None:
                init.value = ast.parse("bytearray()", mode="eval").body
                changed.add(id(init))
                branch.body.insert(0, _new(f"{t.records}.append(1)", changed))
                branch.orelse.insert(0, _new(f"{t.records}.append(0)", changed))
            else:
                branch.body.insert(0, _new(f"{t.records}.append(True)", changed))
                branch.orelse.insert(0, _new(f"{t.records}.append(False)", changed))
            changed.add(id(branch))
            note = notes.pop(id(writer), None)
            if note:  # the test's ``# L<n>:`` comment goes with it
                notes[id(branch)] = note + ("\n" + notes[id(branch)] if id(branch) in notes else "")
            loop.body = [s for s in loop.body if s is not writer and s is not record]


_COUNTS = {"len", "min", "max", "int"}


def _trip_count(loop: ast.For | ast.While) -> ast.expr | None:
    """``n`` of a loop ``for i in range(n)`` that runs every trip to the end of its
    top-level ``if`` (no ``break``, no trip count) and never rebinds ``i``, when ``n`` can
    be evaluated once more before the loop to the same value (names, constants,
    attributes, subscripts, arithmetic, ``len``)."""
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name):
        return None
    count = _range_count(loop.iter)
    if count is None or _jumps(loop.body, (ast.Break, ast.Return)):
        return None
    if any(_counter(n) for n in statements(loop.body)):
        return None
    if any(loop.target.id in written(s) for s in loop.body):
        return None
    for n in nodes(count):
        if isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id in _COUNTS) or n.keywords:
                return None
        elif not isinstance(
            n,
            (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.BinOp, ast.operator),
        ):
            return None
    return count


def _init(func: ast.FunctionDef, loop: ast.For | ast.While, t: TripList) -> ast.Assign | None:
    """The ``records = []`` just above ``loop`` (only list inits between)."""
    outer = _parent(func.body, loop)
    assert outer is not None
    for s in reversed(outer[: _index(outer, loop)]):
        if not (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and isinstance(s.value, ast.List)
            and not s.value.elts
        ):
            return None
        if s.targets[0].id == t.records:
            return s
    return None


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


def _loads(func: ast.FunctionDef, changed: set[int], info: Info | None) -> set[str]:
    """The names ``func`` reads: from the facts of ``info`` (the statements rewritten,
    ``changed``, forgotten first) or a walk of every node."""
    if info is None:
        return names(func, ast.Load)
    for s in statements(func.body):
        if id(s) in changed:
            info.forget(s)
    return _names_and_traffic(func, info)[2]


def _liveness(func: ast.FunctionDef, tape: str, changed: set[int], info: Info | None) -> Liveness:
    """Liveness over ``func``, with the facts of ``info`` (the statements rewritten,
    ``changed``, forgotten first) or facts of its own."""
    if info is None:
        return Liveness(Info(tape)).run(func.body)
    for s in statements(func.body):
        if id(s) in changed:
            info.forget(s)
    return Liveness(info).run(func.body)


def _unread_inits(
    func: ast.FunctionDef, tape: str, recorded: set[str], changed: set[int], info: Info | None
) -> set[int]:
    """``v = None`` at the top of the function, there for the first push of ``v``'s old
    value: to go (their ids) when nothing reads it any more."""
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
        return set()
    after = _liveness(func, tape, changed, info)
    return {id(s) for s in inits if not _live_after(after, s, s.targets[0].id)}


def _unread_counts(
    func: ast.FunctionDef,
    notes: dict[int, str],
    changed: set[int],
    loaded: Callable[[], set[str]],
) -> set[int]:
    """A trip count nothing reads any more (``loaded``: the names the function reads; its
    backward loop walks its lists): its ``_tripsN = 0`` and ``_tripsN += 1`` to go (their
    ids), a ``while`` loop that counted after its test given its test back."""
    drop: set[int] = set()
    for s in statements(func.body):
        if _counter(s):
            assert isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name)
            var = s.target.id
        elif (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id.startswith("_trips")
            and isinstance(s.value, ast.Constant)
            and s.value.value == 0
        ):
            var = s.targets[0].id
        else:
            continue
        if var not in loaded():
            drop.add(id(s))
    if drop:
        for loop in _loops(func.body):
            if isinstance(loop, ast.While) and any(id(s) in drop for s in loop.body):
                _test_in_header(loop, notes, changed)
    return drop


def _test_in_header(loop: ast.While, notes: dict[int, str], changed: set[int]) -> None:
    """``while True: if not test: break`` (the form that counted the trips after the
    test) back to ``while test:``."""
    first = loop.body[0] if loop.body else None
    if (
        loop.orelse
        or not (isinstance(loop.test, ast.Constant) and loop.test.value is True)
        or not isinstance(first, ast.If)
        or first.orelse
        or len(first.body) != 1
        or not isinstance(first.body[0], ast.Break)
        or not isinstance(first.test, ast.UnaryOp)
        or not isinstance(first.test.op, ast.Not)
        or id(first) in notes
    ):
        return
    loop.test = first.test.operand
    loop.body = loop.body[1:] or [ast.Pass()]
    changed.add(id(loop))


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
    loop: ast.For,
    tape: str,
    lists: list[TripList],
    changed: set[int],
    notes: dict[int, str],
    local: set[str],
    func: ast.FunctionDef,
    read: set[str],
) -> None:
    """``records = tape.pop()`` before the loop, each trip's value read from its list,
    the pops gone.

    A loop over ``reversed(range(n))`` counts its trips from 0: trip ``i`` reads
    ``records[i]`` (in place of its one read of ``v``, else bound at the top of the
    trip); a loop whose variable nothing reads walks ``reversed(records)``; any other
    binds ``v`` in its header with ``zip(..., reversed(records))``.
    """
    mine = {t.var for t in lists}
    loop.body = [s for s in loop.body if pop_target(s, tape) not in mine] or [ast.Pass()]
    records: list[ast.expr] = [
        ast.Call(ast.Name("reversed", ast.Load()), [ast.Name(t.records, ast.Load())], [])
        for t in lists
    ]
    bound = [ast.Name(t.var, ast.Store()) for t in lists]
    index = _trip_index(loop)
    if _unused_count(loop, read):
        loop.target = bound[0] if len(bound) == 1 else ast.Tuple(bound, ast.Store())
        one = len(records) == 1
        loop.iter = records[0] if one else ast.Call(ast.Name("zip", ast.Load()), records, [])
        changed.add(id(loop))
    elif index is not None:
        binds: list[ast.stmt] = []
        for t in lists:
            if not _read_in_place(loop, t, index, changed):
                binds.append(_new(f"{t.var} = {t.records}[{index}]", changed))
        loop.body[:0] = binds
    else:
        loop.target = ast.Tuple([loop.target, *bound], ast.Store())
        loop.iter = ast.Call(ast.Name("zip", ast.Load()), [loop.iter, *records], [])
        changed.add(id(loop))
    outer = _parent(func.body, loop)
    assert outer is not None
    at = _index(outer, loop)
    pops = [_new(f"{t.records} = {tape}.pop()", changed) for t in reversed(lists)]
    _above(outer, at, [p for p, t in zip(pops, reversed(lists)) if t.var not in local], notes)


def _range_count(it: ast.expr) -> ast.expr | None:
    """``n`` of ``range(n)`` (one argument)."""
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and not it.keywords
    ):
        return it.args[0]
    return None


def _reversed_arg(it: ast.expr) -> ast.expr | None:
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "reversed"
        and len(it.args) == 1
    ):
        return it.args[0]
    return None


def _trip_index(loop: ast.For) -> str | None:
    """``i`` of ``for i in reversed(range(n))``: the number of the forward trip reversed."""
    inner = _reversed_arg(loop.iter)
    if inner is None or _range_count(inner) is None or not isinstance(loop.target, ast.Name):
        return None
    return loop.target.id


def _unused_count(loop: ast.For, read: set[str]) -> bool:
    """A loop over ``range(n)`` (or its reverse) whose variable nothing reads (``read``:
    the names the function reads): it only counts the trips, as many as its lists hold."""
    it = _reversed_arg(loop.iter) or loop.iter
    if _range_count(it) is None or not isinstance(loop.target, ast.Name):
        return False
    return loop.target.id not in read


def _read_in_place(loop: ast.For, t: TripList, index: str, changed: set[int]) -> bool:
    """Replace the one read of ``t.var`` in the trip by ``records[index]`` (the trip's
    index never rebound in it); whether done."""
    reads = [
        n
        for n in nodes(loop)
        if isinstance(n, ast.Name) and n.id == t.var and isinstance(n.ctx, ast.Load)
    ]
    if len(reads) != 1 or any(index in written(s) for s in loop.body):
        return False
    item = ast.Subscript(ast.Name(t.records, ast.Load()), ast.Name(index, ast.Load()), ast.Load())
    swap = _Swap(reads[0], item)
    for s in statements(loop.body):
        own = [(k, v) for k, v in ast.iter_fields(s) if k not in ("body", "orelse")]
        parts = [p for _, v in own for p in (v if isinstance(v, list) else [v])]
        if not any(reads[0] is n for p in parts if isinstance(p, ast.AST) for n in nodes(p)):
            continue
        for k, v in own:
            if isinstance(v, ast.AST):
                setattr(s, k, swap.visit(v))
            elif isinstance(v, list):
                setattr(s, k, [swap.visit(x) if isinstance(x, ast.AST) else x for x in v])
        changed.add(id(s))
        return True
    return False


class _Swap(ast.NodeTransformer):
    """Puts ``item`` where ``read`` was."""

    def __init__(self, read: ast.Name, item: ast.expr) -> None:
        self.read, self.item = read, item

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.item if node is self.read else node
