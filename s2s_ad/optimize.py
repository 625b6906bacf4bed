"""Clean-up passes over generated functions: dead stores and dead tape traffic.

The sweeps are built statement by statement, each knowing only its own line; some of what
they write is never read (an adjoint initialised and then assigned, a temporary the
backward sweep does not need, a value pushed on the tape and restored where nothing reads
it). This module reads a whole generated function with :mod:`ast` (each statement's read
and write sets come from the tree), finds what is dead by liveness over the structured
code (loops to a fixpoint, ``break``/``continue``/``return`` included), and writes the
function back: kept statements keep their text and their ``# L<n>:`` comments.

Passes, repeated until nothing changes (the doubling once, at the end):

* copy propagation in straight-line code (``a = b`` then reads of ``a``);
* a contribution added to itself (``e + e``, from ``x * x``) written ``2 * e``;
* dead stores: ``name = expr`` where ``name`` is not read afterwards and ``expr`` has no
  effect (operators, subscripts, NumPy functions and the pure runtime helpers);
* dead tape traffic: a variable pushed on the tape and restored where, after every
  restoring pop, nothing reads it: its pushes and pops go together, so the tape stays
  balanced.

``ENABLED`` turns the passes off (tests compare gradients with and without them).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from .codegen import SITE

ENABLED = os.environ.get("S2S_AD_OPTIMIZE", "1") != "0"

# runtime helpers without effects (``_ad.<name>``): their result is all they give
_PURE_HELPERS = frozenset(
    """add add_at add_at_owned broadcast_like broadcast_to copy dense getitem in_container
    matmul_vjp_x matmul_vjp_y dot_vjp_a dot_vjp_b mean_vjp pack repack seed sequence sum_vjp
    tangent_parts unbroadcast unbroadcast_owned zeros_like materialize container_entries
    concat concat_vjp""".split()
)
_PURE_BUILTINS = frozenset(
    "abs len range float int bool tuple list dict min max sum reversed enumerate zip".split()
)


@dataclass
class Facts:
    """What the passes decided, shared by the functions made from the same sweeps."""

    dead_sites: set[int] = field(default_factory=set)  # tape sites whose pushes/pops go


def _names(node: ast.AST, ctx: type) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _reads(node: ast.AST) -> set[str]:
    """Names a statement (or expression) reads; a subscript or attribute store reads its
    object too (``x[i] = v`` updates ``x``)."""
    out = _names(node, ast.Load)
    for target in _store_targets(node):
        if not isinstance(target, ast.Name):
            out |= _names(target, ast.Store)  # the object written into
    if isinstance(node, ast.AugAssign):
        out |= _names(node.target, ast.Store)
    return out


def _store_targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out: list[ast.expr] = []
        for t in node.targets:
            out.extend(t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
        return out
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def _kills(node: ast.stmt) -> set[str]:
    """Names a simple statement rebinds (a whole-name assignment)."""
    if isinstance(node, ast.Assign):
        return {t.id for t in _store_targets(node) if isinstance(t, ast.Name)}
    return set()


def _pure(expr: ast.expr, tape: str) -> bool:
    """Whether evaluating ``expr`` has no effect besides its value."""
    for node in ast.walk(expr):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                if func.id not in _PURE_BUILTINS:
                    return False
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                owner = func.value.id
                if owner == "np":
                    continue
                if owner.startswith("_ad") and func.attr in _PURE_HELPERS:
                    continue
                return False
            elif isinstance(func, ast.Attribute) and _is_np_attr(func.value):
                if "random" in ast.unparse(func):
                    return False
            else:
                return False
    return tape not in _names(expr, ast.Load)


def _is_np_attr(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "np"


def _pop_target(node: ast.stmt, tape: str) -> str | None:
    """``v`` for ``v = <tape>.pop()``."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and _is_tape_call(node.value, tape, "pop")
    ):
        return node.targets[0].id
    return None


def _push_name(node: ast.stmt, tape: str) -> str | None:
    """``v`` for ``<tape>.append(v)``."""
    if isinstance(node, ast.Expr) and _is_tape_call(node.value, tape, "append"):
        assert isinstance(node.value, ast.Call)
        arg = node.value.args[0] if node.value.args else None
        return arg.id if isinstance(arg, ast.Name) else None
    return None


def _is_tape_call(node: ast.expr, tape: str, method: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == tape
    )


def _statements(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement, nested ones included (no expressions)."""
    out: list[ast.stmt] = []
    for st in stmts:
        out.append(st)
        for attr in ("body", "orelse"):
            inner = getattr(st, attr, None)
            if isinstance(inner, list):
                out.extend(_statements(inner))
    return out


class _Info:
    """Read and write sets of simple statements, computed once per statement."""

    def __init__(self) -> None:
        self.reads: dict[int, set[str]] = {}
        self.kills: dict[int, set[str]] = {}
        self.loads: dict[int, set[str]] = {}
        self.removable: dict[int, bool] = {}

    def of(self, s: ast.AST) -> tuple[set[str], set[str]]:
        key = id(s)
        if key not in self.reads:
            assert isinstance(s, ast.stmt)
            self.reads[key] = _reads(s)
            self.kills[key] = _kills(s)
        return self.reads[key], self.kills[key]

    def dead_if_unread(self, s: ast.stmt, tape: str) -> bool:
        """Whether ``s`` is ``names = <pure expression>``: dropped when no name it binds
        is live after it (and then reads nothing)."""
        key = id(s)
        if key not in self.removable:
            self.removable[key] = (
                isinstance(s, ast.Assign)
                and _pop_target(s, tape) is None
                and all(isinstance(t, ast.Name) for t in _store_targets(s))
                and _pure(s.value, tape)
            )
        return self.removable[key]

    def load(self, node: ast.AST) -> set[str]:
        key = id(node)
        if key not in self.loads:
            self.loads[key] = _names(node, ast.Load)
        return self.loads[key]


class _Liveness:
    """Backward liveness over a structured function body, recording for each statement
    the names live after it."""

    def __init__(self, tape: str, info: _Info) -> None:
        self.tape, self.info = tape, info
        self.after: dict[int, set[str]] = {}

    def block(
        self, stmts: list[ast.stmt], live: set[str], brk: set[str], cont: set[str]
    ) -> set[str]:
        for s in reversed(stmts):
            live = self.stmt(s, live, brk, cont)
        return live

    def stmt(self, s: ast.stmt, live: set[str], brk: set[str], cont: set[str]) -> set[str]:
        self.after[id(s)] = set(live)
        load = self.info.load
        if isinstance(s, ast.Return):
            return load(s)
        if isinstance(s, ast.Break):
            return set(brk)
        if isinstance(s, ast.Continue):
            return set(cont)
        if isinstance(s, ast.If):
            body = self.block(s.body, live, brk, cont)
            orelse = self.block(s.orelse, live, brk, cont)
            return body | orelse | load(s.test)
        if isinstance(s, (ast.For, ast.While)):
            head = set(live)
            if isinstance(s, ast.While):
                head |= load(s.test)
            while True:
                inner = self.block(s.body, head, live, head)
                if isinstance(s, ast.For):
                    inner = inner - _names(s.target, ast.Store)
                new = head | inner
                if new == head:
                    break
                head = new
            self.after[id(s)] = set(live)
            if isinstance(s, ast.For):
                return head | load(s.iter)
            return head
        reads, kills = self.info.of(s)
        if not (kills & live) and self.info.dead_if_unread(s, self.tape):
            return live  # dropped: what it reads is not needed for it (one sweep finds chains)
        return (live - kills) | reads


def _site(s: ast.stmt, lines: list[str]) -> int | None:
    """The tape site a push or pop line is marked with (see ``codegen.SITE``)."""
    line = lines[s.lineno - 1]
    mark = line.rfind(SITE)
    return int(line[mark + len(SITE) :]) if mark >= 0 else None


def _dead(
    func: ast.FunctionDef, lines: list[str], tape: str, facts: Facts, decide: bool, info: _Info
) -> set[int]:
    """Ids of the statements to drop (and, with ``decide``, the dead tape sites)."""
    lv = _Liveness(tape, info)
    lv.block(func.body, set(), set(), set())
    drop: set[int] = set()
    pops: dict[int, bool] = {}  # site -> every pop of it is dead
    every = _statements(func.body)
    for s in every:
        if id(s) not in lv.after:
            continue
        after = lv.after[id(s)]
        target = _pop_target(s, tape)
        site = _site(s, lines) if target is not None else None
        if site is not None:
            pops[site] = pops.get(site, True) and target not in after
            continue
        if info.dead_if_unread(s, tape) and not (info.of(s)[1] & after):
            drop.add(id(s))
    if decide:
        facts.dead_sites |= {site for site, dead in pops.items() if dead}
    if facts.dead_sites:
        for s in every:
            if _pop_target(s, tape) is not None or _push_name(s, tape) is not None:
                if _site(s, lines) in facts.dead_sites:
                    drop.add(id(s))
    return drop


def _propagate(stmts: list[ast.stmt], changed: set[int], tape: str) -> bool:
    """Copy propagation in straight-line code: after ``a = b``, later reads of ``a`` in the
    same block read ``b`` until either name is bound or written again (the copy itself
    then dies). Both names hold the same object, so reads see the same value."""
    progress = False
    uses: dict[int, tuple[list[ast.Name], set[str]]] = {}  # per statement, walked once
    for i, s in enumerate(stmts):
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                progress = _propagate(inner, changed, tape) or progress
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
            if isinstance(t, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                break
            if id(t) not in uses:
                uses[id(t)] = _uses(t)
            loads, bound = uses[id(t)]
            hit = [n for n in loads if n.id == a]
            for n in hit:
                n.id = b
            if hit:
                changed.add(id(t))
                progress = True
            if a in bound or b in bound:
                break
    return progress


class _Doubled(ast.NodeTransformer):
    """``e + e`` (the same expression twice, without effects) as ``2 * e``: the two
    contributions of ``x * x`` merged."""

    def __init__(self, tape: str) -> None:
        self.tape, self.hits = tape, 0

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if (
            isinstance(node.op, ast.Add)
            and ast.dump(node.left) == ast.dump(node.right)
            and _pure(node.left, self.tape)
        ):
            self.hits += 1
            return ast.BinOp(ast.Constant(2), ast.Mult(), node.left)
        return node


def _merge_doubles(stmts: list[ast.stmt], changed: set[int], tape: str) -> None:
    for s in _statements(stmts):
        if isinstance(s, (ast.Assign, ast.AugAssign)):
            doubled = _Doubled(tape)
            s.value = doubled.visit(s.value)
            if doubled.hits:
                changed.add(id(s))


def _uses(s: ast.stmt) -> tuple[list[ast.Name], set[str]]:
    """The names a statement reads (the nodes, which propagation renames) and the names
    it binds or writes into."""
    loads: list[ast.Name] = []
    bound: set[str] = set()
    for node in ast.walk(s):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.append(node)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                bound.add(base.id)
    return loads, bound


def _remove(stmts: list[ast.stmt], drop: set[int], notes: dict[int, str]) -> list[ast.stmt]:
    """The statements kept; a dropped statement's comment moves to the next one kept."""
    out: list[ast.stmt] = []
    moving: str | None = None
    for s in stmts:
        if id(s) in drop:
            moving = _join(moving, notes.pop(id(s), None))
            continue
        if moving is not None:
            notes[id(s)] = _join(moving, notes.get(id(s))) or ""
            moving = None
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list) and inner:
                kept = _remove(inner, drop, notes)
                if attr == "body" and not kept:
                    kept = [ast.Pass()]
                setattr(s, attr, kept)
        if _hollow(s):
            moving = _join(moving, notes.pop(id(s), None))
            continue
        out.append(s)
    return out


def _join(first: str | None, second: str | None) -> str | None:
    """Comments moving onto a statement: a ``# L<n>`` line of a statement dropped entirely
    gives way to the one that follows (``# forward sweep`` and such are kept)."""
    if first is None:
        return second
    if second is None:
        return first
    kept = [c for c in first.split("\n") if not c.startswith("# L")]
    return "\n".join([*kept, second])


def _hollow(s: ast.stmt) -> bool:
    """An ``if`` or ``for`` left with nothing to do (its test or iterable has no effect)."""
    if isinstance(s, ast.If):
        return _empty(s.body) and _empty(s.orelse) and _pure(s.test, "")
    if isinstance(s, ast.For):
        return _empty(s.body) and not s.orelse and _pure(s.iter, "")
    return False


def _render(
    stmts: list[ast.stmt], source: str, notes: dict[int, str], pad: str, changed: set[int]
) -> list[str]:
    """Statements back to text: a kept statement's own text, its comment above it."""
    lines = source.split("\n")
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ast.Pass) and not hasattr(s, "lineno"):
            out.append(pad + "pass")
            continue
        note = notes.get(id(s))
        if note:
            out.extend(pad + part for part in note.split("\n"))
        if isinstance(s, ast.If) and _empty(s.body) and s.orelse:
            # ``if c: pass else: body`` (what remains when a branch empties)
            test = ast.get_source_segment(source, s.test) or ast.unparse(s.test)
            out.append(f"{pad}if not ({test}):")
            out.extend(_render(s.orelse, source, notes, pad + "    ", changed))
            continue
        if id(s) in changed and not isinstance(s, (ast.If, ast.For, ast.While)):
            out.append(pad + ast.unparse(s))
        else:
            out.append(pad + _unmarked(lines[s.lineno - 1]).strip())
        if isinstance(s, (ast.If, ast.For, ast.While)):
            out.extend(_render(s.body, source, notes, pad + "    ", changed) or [pad + "    pass"])
            if s.orelse:
                out.append(pad + "else:")
                out.extend(_render(s.orelse, source, notes, pad + "    ", changed))
    return out


def _unmarked(line: str) -> str:
    mark = line.rfind(SITE)
    return line[:mark] if mark >= 0 else line


def _empty(stmts: list[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Pass) for s in stmts)


def _comments(func: ast.FunctionDef, lines: list[str]) -> dict[int, str]:
    """``# ...`` comment lines, keyed by the id of the statement that follows them."""
    by_line: dict[int, str] = {}
    pending: list[str] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text.startswith("#"):
            pending.append(text)
        elif text and pending:
            by_line[number] = "\n".join(pending)
            pending = []
    return {id(s): by_line[s.lineno] for s in _statements(func.body) if s.lineno in by_line}


def optimize_function(text: str, tape: str, facts: Facts, decide_tape: bool = False) -> str:
    """One generated function (``def ...:`` and its body) with dead code removed.

    Args:
        text: The function's source, one statement per line.
        tape: The tape's name.
        facts: Decisions shared with the functions made from the same sweeps.
        decide_tape: Decide which tape traffic is dead here (the function holding both
            sweeps); the others apply the decision.
    """
    if not ENABLED:
        return text
    lines = text.split("\n")
    tree = ast.parse(text)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    notes = _comments(func, lines)
    info = _Info()
    changed: set[int] = set()
    for _ in range(10):
        copied = _propagate(func.body, changed, tape)
        if copied:
            info = _Info()  # read sets changed
        drop = _dead(func, lines, tape, facts, decide_tape, info)
        if not drop and not copied:
            break
        func.body = _remove(func.body, drop, notes) or [ast.Pass()]
    _merge_doubles(func.body, changed, tape)
    header = lines[func.lineno - 1]
    return "\n".join([header, *_render(func.body, text, notes, "    ", changed)])
