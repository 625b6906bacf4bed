"""Facts about generated statements, read from their :mod:`ast` trees.

The passes over generated code (:mod:`optimize`, :mod:`fold`, :mod:`lower`) ask the same
questions of every statement: which names it reads and which it binds, whether its value
has effects, whether it is a tape push or pop, and which names are live after it. This
module answers them, from the tree and never from the text.
"""

from __future__ import annotations

import ast
import contextlib
import threading
from collections.abc import Iterator
from typing import NamedTuple

# runtime helpers without effects (``_ad.<name>``): their result is all they give
PURE_HELPERS = frozenset(
    """add add_at add_at_owned broadcast_like broadcast_to copy dense getitem in_container
    matmul_vjp_x matmul_vjp_y dot_vjp_a dot_vjp_b mean_vjp pack repack seed sequence sum_vjp
    tangent_parts unbroadcast unbroadcast_owned unbroadcast_vjp zeros_like materialize
    container_entries concat concat_vjp written keep_last sequence_part holds_keys""".split()
)
PURE_BUILTINS = frozenset(
    "abs len range float int bool tuple list dict min max sum reversed enumerate zip".split()
)
COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.Try)


#: Fields that never hold a node (names, flags, markers) or only an operator (``+``,
#: ``<``, ``not``: no pass looks at them): :func:`nodes` does not read them.
_LEAF_FIELDS = frozenset(
    """ctx id attr arg asname module level kind type_comment conversion is_async simple
    op ops""".split()
)
#: Fields that may hold something other than a node, ``None`` or a list of nodes (a name;
#: a list holding names, or ``None`` for ``**d`` in a dict display and a keyword-only
#: parameter without default): a class with one has each item checked.
_MIXED_FIELDS = frozenset("name names rest kwd_attrs keys kw_defaults".split())
#: node class -> (its fields that may hold nodes, in ``_fields`` order; whether one of
#: them is of ``_MIXED_FIELDS``)
_CHILD_FIELDS: dict[type, tuple[tuple[str, ...], bool]] = {}


def _child_fields(cls: type) -> tuple[tuple[str, ...], bool]:
    """The fields of node class ``cls`` that may hold nodes (see ``_CHILD_FIELDS``)."""
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        skip = set(_LEAF_FIELDS)
        if cls in (ast.Constant, ast.MatchSingleton, ast.TypeIgnore):
            skip.update(cls._fields)  # type: ignore[attr-defined]
        if cls in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias):
            skip.add("name")
        kept = tuple(f for f in cls._fields if f not in skip)  # type: ignore[attr-defined]
        fields = _CHILD_FIELDS[cls] = (kept, any(f in _MIXED_FIELDS for f in kept))
    return fields


def nodes(node: ast.AST) -> list[ast.AST]:
    """``node`` and every node under it (as ``ast.walk``, in another order, without the
    ``Load``/``Store`` markers and the operators; a list: the passes walk many small
    trees)."""
    out = [node]
    i = 0
    table = _CHILD_FIELDS
    extend = out.extend
    append = out.append
    while i < len(out):
        n = out[i]
        i += 1
        fields = table.get(n.__class__)
        if fields is None:
            fields = _child_fields(n.__class__)
        names, mixed = fields
        if mixed:
            extend(children(n))
            continue
        for name in names:
            v = getattr(n, name, None)
            if v.__class__ is list:
                extend(v)
            elif v is not None:
                append(v)
    return out


def children(node: ast.AST) -> list[ast.AST]:
    """The nodes directly under ``node`` (as ``ast.iter_child_nodes``, without the
    ``Load``/``Store`` markers and the operators)."""
    out: list[ast.AST] = []
    names, mixed = _CHILD_FIELDS.get(node.__class__) or _child_fields(node.__class__)
    for name in names:
        v = getattr(node, name, None)
        if v.__class__ is list:
            out.extend([x for x in v if isinstance(x, ast.AST)] if mixed else v)
        elif v is not None and (not mixed or isinstance(v, ast.AST)):
            out.append(v)
    return out


def names(node: ast.AST, ctx: type) -> set[str]:
    """The names under ``node`` used in context ``ctx`` (``ast.Load``, ``ast.Store``)."""
    return {n.id for n in nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def store_targets(node: ast.AST) -> list[ast.expr]:
    """The targets an assignment stores into, tuples unpacked."""
    if isinstance(node, ast.Assign):
        out: list[ast.expr] = []
        for t in node.targets:
            out.extend(t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
        return out
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def kills(node: ast.stmt) -> set[str]:
    """Names a simple statement rebinds (a whole-name assignment)."""
    if isinstance(node, ast.Assign):
        return {t.id for t in store_targets(node) if isinstance(t, ast.Name)}
    return set()


def written(node: ast.stmt) -> set[str]:
    """Names a statement binds or writes into (``x[i] = v`` and ``x += v`` write ``x``)."""
    return survey(node).written


class Survey(NamedTuple):
    """What one walk of a tree finds (see :func:`survey`)."""

    #: the names read
    loads: set[str]
    #: the ``Name`` nodes that read them (which passes rename)
    load_nodes: list[ast.Name]
    #: the names bound or written into (see :func:`written`)
    written: set[str]
    #: the calls
    calls: list[ast.Call]
    #: no call but to pure functions (:func:`pure_call`), no ``yield``, ``await``, ``:=``
    effect_free: bool
    #: a ``yield``, ``await`` or ``:=`` is there
    suspends: bool


_SUSPENDING = frozenset({ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr})


def survey(node: ast.AST) -> Survey:
    """The facts the passes ask of a statement, from one walk of its tree (the nodes of
    :func:`nodes`, in another order)."""
    loads: set[str] = set()
    load_nodes: list[ast.Name] = []
    out: set[str] = set()
    calls: list[ast.Call] = []
    effect_free = True
    suspends = False
    name_cls, load_cls, call_cls = ast.Name, ast.Load, ast.Call
    sub_cls, attr_cls, const_cls = ast.Subscript, ast.Attribute, ast.Constant
    table = _CHILD_FIELDS
    todo = [node]
    pop, push, extend = todo.pop, todo.append, todo.extend
    while todo:
        sub = pop()
        cls = sub.__class__
        if cls is name_cls:
            if sub.ctx.__class__ is load_cls:  # type: ignore[attr-defined]
                loads.add(sub.id)  # type: ignore[attr-defined]
                load_nodes.append(sub)  # type: ignore[arg-type]
            else:
                out.add(sub.id)  # type: ignore[attr-defined]
            continue  # nothing under a name
        if cls is const_cls:
            continue
        if cls is call_cls:
            calls.append(sub)  # type: ignore[arg-type]
            effect_free = effect_free and pure_call(sub)  # type: ignore[arg-type]
        elif cls is sub_cls or cls is attr_cls:
            if sub.ctx.__class__ is not load_cls:  # type: ignore[attr-defined]
                base = sub.value  # type: ignore[attr-defined]
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name):
                    out.add(base.id)
        elif cls in _SUSPENDING:
            effect_free = False
            suspends = True
        fields = table.get(cls)
        if fields is None:
            fields = _child_fields(cls)
        if fields[1]:
            extend(children(sub))
            continue
        for name in fields[0]:
            v = getattr(sub, name, None)
            if v.__class__ is list:
                extend(v)
            elif v is not None:
                push(v)
    return Survey(loads, load_nodes, out, calls, effect_free, suspends)


def pure(expr: ast.expr, tape: str) -> bool:
    """Whether evaluating ``expr`` has no effect besides its value (and reads no tape)."""
    under = nodes(expr)
    for node in under:
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            return False
        if isinstance(node, ast.Call) and not pure_call(node):
            return False
    return not any(
        isinstance(n, ast.Name) and n.id == tape and isinstance(n.ctx, ast.Load) for n in under
    )


#: Expressions evaluated later or conditionally: nothing under them is folded or reused.
DEFERRED = (
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.BoolOp,
    ast.IfExp,
)


# NumPy functions that write into an argument (besides any call given ``out=``)
NP_WRITERS = frozenset(
    {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", "at", "seed"}
)


def pure_call(call: ast.Call) -> bool:
    """Whether ``call`` neither writes into its arguments nor has another effect: pure
    builtins, pure runtime helpers, ``math`` and NumPy functions other than the random
    module, the functions that write into an argument (``np.copyto``, ``np.add.at``...)
    and any call given ``out=``."""
    if any(k.arg == "out" for k in call.keywords):
        return False
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in NP_WRITERS and is_np_attr(func.value):
        return False
    return _pure_callee(func)


def _pure_callee(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in PURE_BUILTINS
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        owner = func.value.id
        # every function of the math module is pure (the random module is not under it)
        return owner in ("np", "math") or (owner.startswith("_ad") and func.attr in PURE_HELPERS)
    if isinstance(func, ast.Attribute) and is_np_attr(func.value):
        return "random" not in ast.unparse(func)
    return False


def is_np_attr(node: ast.expr) -> bool:
    """Whether ``node`` is ``np`` or an attribute path under it (``np.linalg``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "np"


def is_tape_call(node: ast.AST, tape: str, method: str, arity: int | None = None) -> bool:
    """Whether ``node`` is ``<tape>.<method>(...)``, with ``arity`` positional arguments
    when given."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == tape
        and (arity is None or len(node.args) == arity)
    )


def pop_target(node: ast.stmt, tape: str) -> str | None:
    """``v`` for ``v = <tape>.pop()``."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and is_tape_call(node.value, tape, "pop")
    ):
        return node.targets[0].id
    return None


def push_name(node: ast.stmt, tape: str) -> str | None:
    """``v`` for ``<tape>.append(v)``."""
    if isinstance(node, ast.Expr) and is_tape_call(node.value, tape, "append"):
        assert isinstance(node.value, ast.Call)
        arg = node.value.args[0] if node.value.args else None
        return arg.id if isinstance(arg, ast.Name) else None
    return None


def statements(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement, nested ones included (no expressions)."""
    out: list[ast.stmt] = []
    for st in stmts:
        out.append(st)
        for attr in ("body", "orelse"):
            inner = getattr(st, attr, None)
            if isinstance(inner, list):
                out.extend(statements(inner))
    return out


def scan(node: ast.AST) -> tuple[set[str], bool]:
    """The names ``node`` reads and whether it is free of effects (no call but to pure
    functions, no ``yield``, ``await`` or ``:=``), from one walk of the tree."""
    found = survey(node)
    return found.loads, found.effect_free


#: The attribute holding a statement's :func:`survey` made before the optimizer runs
#: (taken by the first :meth:`Info.survey` of it: a statement rewritten since is
#: forgotten and walked again).
SURVEYED = "s2s_survey"


class Info:
    """Read and write sets of simple statements, computed once per statement (one walk
    of its tree).

    Inside :func:`sharing` an ``Info`` made for the same tape shares the facts of the one
    shared (passes that make their own, such as :mod:`trip_records`, then do not walk
    every statement again).
    """

    def __init__(self, tape: str) -> None:
        self.tape = tape
        stack = _SHARED.stack
        active = stack[-1] if stack else None
        if active is not None and active.tape == tape:
            self.__dict__.update(active.__dict__)  # the same dictionaries
            return
        self.facts: dict[int, tuple[set[str], set[str], bool, bool]] = {}
        self.loads: dict[int, set[str]] = {}
        self.surveys: dict[int, Survey] = {}
        self.tape_uses: dict[int, tuple[str | None, str | None]] = {}
        #: name -> its bit in the masks :class:`Liveness` computes with
        self.bits: dict[str, int] = {}
        self.masks: dict[int, tuple[int, int, bool]] = {}
        self.load_masks: dict[int, int] = {}
        self.known: list[ast.AST] = []  # the nodes described: their ids are not reused
        #: id of a statement's survey -> (the survey, whether it stops every reuse of a
        #: held value, see ``reuse``): the survey is held, so its id is not reused, and a
        #: statement rewritten is surveyed again (a new key)
        self.stops: dict[int, tuple[Survey, bool]] = {}

    def _facts(self, s: ast.stmt) -> tuple[set[str], set[str], bool, bool]:
        key = id(s)
        found = self.facts.get(key)
        if found is None:
            walked = self.survey(s)
            loads, effect_free = walked.loads, walked.effect_free
            targets = store_targets(s)
            s_reads = loads
            if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                s_reads = loads | {s.target.id}
            removable = (
                isinstance(s, ast.Assign)
                and effect_free
                and self.tape not in loads
                and all(isinstance(t, ast.Name) for t in targets)
            )
            found = (s_reads, kills(s), removable, effect_free)
            self.facts[key] = found
        return found

    def survey(self, s: ast.stmt) -> Survey:
        """:func:`survey` of ``s``, walked once (shared: do not change what it holds)."""
        key = id(s)
        found = self.surveys.get(key)
        if found is None:
            # the survey made as the statement was emitted (``fold_early``), taken once
            found = s.__dict__.pop(SURVEYED, None) or survey(s)
            self.surveys[key] = found
            self.known.append(s)
        return found

    def tape_use(self, s: ast.stmt) -> tuple[str | None, str | None]:
        """:func:`pop_target` and :func:`push_name` of ``s`` (computed once)."""
        key = id(s)
        found = self.tape_uses.get(key)
        if found is None:
            found = self.tape_uses[key] = (pop_target(s, self.tape), push_name(s, self.tape))
            self.known.append(s)
        return found

    def of(self, s: ast.AST) -> tuple[set[str], set[str]]:
        """``(reads, kills)`` of a simple statement."""
        assert isinstance(s, ast.stmt)
        s_reads, s_kills, _, _ = self._facts(s)
        return s_reads, s_kills

    def effect_free(self, s: ast.stmt) -> bool:
        """Whether a simple statement calls nothing that may have effects (see ``scan``)."""
        return self._facts(s)[3]

    def written(self, s: ast.stmt) -> set[str]:
        """:func:`written` of ``s``, walked once (the set is shared: do not change it)."""
        return self.survey(s).written

    def pure_value(self, s: ast.Assign) -> bool:
        """:func:`pure` of the value of ``s``, an assignment to one name."""
        return self._facts(s)[3] and self.tape not in self.survey(s).loads

    def forget(self, s: ast.AST) -> None:
        """Drop what is known of ``s`` (after it was rewritten), and of a compound
        statement's head (its test or iterable)."""
        self.facts.pop(id(s), None)
        self.loads.pop(id(s), None)
        self.surveys.pop(id(s), None)
        self.tape_uses.pop(id(s), None)
        self.masks.pop(id(s), None)
        self.load_masks.pop(id(s), None)
        for attr in ("test", "iter"):
            head = getattr(s, attr, None)
            if head is not None:
                self.loads.pop(id(head), None)
                self.load_masks.pop(id(head), None)

    def mask(self, names: set[str] | frozenset[str]) -> int:
        """The names as a bit mask (each name its own bit, given at its first use)."""
        bits = self.bits
        out = 0
        for name in names:
            bit = bits.get(name)
            if bit is None:
                bit = bits[name] = 1 << len(bits)
            out |= bit
        return out

    def of_masks(self, s: ast.stmt) -> tuple[int, int, bool]:
        """:meth:`of` as bit masks, and :meth:`dead_if_unread`."""
        key = id(s)
        found = self.masks.get(key)
        if found is None:
            reads, kills, removable, _ = self._facts(s)
            found = self.masks[key] = (self.mask(reads), self.mask(kills), removable)
        return found

    def load_mask(self, node: ast.AST) -> int:
        """:meth:`load` as a bit mask."""
        key = id(node)
        found = self.load_masks.get(key)
        if found is None:
            found = self.load_masks[key] = self.mask(self.load(node))
        return found

    def dead_if_unread(self, s: ast.stmt) -> bool:
        """Whether ``s`` is ``names = <pure expression>`` (not a tape pop): dropped when
        no name it binds is live after it (and then reads nothing)."""
        return self._facts(s)[2]

    def load(self, node: ast.AST) -> set[str]:
        """The names an expression (or a compound statement's head) reads."""
        key = id(node)
        if key not in self.loads:
            self.loads[key] = names(node, ast.Load)
            self.known.append(node)
        return self.loads[key]


#: The statements :class:`Liveness` follows the control flow of (any other is read as a
#: whole, with its reads and kills).
_FLOW = frozenset({ast.Return, ast.Break, ast.Continue, ast.If, ast.For, ast.While})


class _Shared(threading.local):
    def __init__(self) -> None:
        self.stack: list[Info] = []


#: Per thread: the :class:`Info` whose facts new ones share (transforms in two threads
#: each see their own).
_SHARED = _Shared()


@contextlib.contextmanager
def sharing(info: Info) -> Iterator[None]:
    """Every :class:`Info` made for ``info``'s tape in this block shares its facts.

    Whoever rewrites a statement in the block must :meth:`Info.forget` it, as with
    ``info`` itself.
    """
    stack = _SHARED.stack
    stack.append(info)
    try:
        yield
    finally:
        stack.pop()


class Liveness:
    """Backward liveness over a structured function body, recording for each statement
    the names live after it (``after``, by statement id, as a bit mask of
    :meth:`Info.mask`; ask :meth:`live_after`).

    A statement that :meth:`Info.dead_if_unread` allows to drop, and whose names are
    not live after it, reads nothing: one sweep finds chains of dead stores. Sets of
    names are bit masks (Python integers): a 2,000-line function has a few hundred live
    names at a time, which set operations would copy at every statement.
    """

    def __init__(self, info: Info) -> None:
        self.info = info
        self.after: dict[int, int] = {}

    def run(self, body: list[ast.stmt]) -> Liveness:
        """Liveness over a whole function body (nothing live at its end)."""
        self.block(body, 0, 0, 0)
        return self

    def live_after(self, s: ast.stmt, name: str) -> bool:
        """Whether ``name`` is live after statement ``s`` (which the sweep reached)."""
        bit = self.info.bits.get(name)
        return bit is not None and bool(self.after[id(s)] & bit)

    def any_live_after(self, s: ast.stmt, mask: int) -> bool:
        """Whether a name of ``mask`` is live after statement ``s``."""
        return bool(self.after[id(s)] & mask)

    def block(self, stmts: list[ast.stmt], live: int, brk: int, cont: int) -> int:
        """The names live before ``stmts`` given those live after them, at a ``break``
        (``brk``) and at a ``continue`` (``cont``)."""
        for s in reversed(stmts):
            live = self.stmt(s, live, brk, cont)
        return live

    def stmt(self, s: ast.stmt, live: int, brk: int, cont: int) -> int:
        """The names live before ``s`` (see :meth:`block`)."""
        self.after[id(s)] = live
        info = self.info
        if s.__class__ not in _FLOW:  # a simple statement (or one read as a whole)
            key = id(s)
            found = info.masks.get(key)
            if found is None:
                found = info.of_masks(s)
            s_reads, s_kills, removable = found
            if removable and not (s_kills & live):
                return live
            return (live & ~s_kills) | s_reads
        if isinstance(s, ast.Return):
            return info.load_mask(s)
        if isinstance(s, ast.Break):
            return brk
        if isinstance(s, ast.Continue):
            return cont
        if isinstance(s, ast.If):
            body = self.block(s.body, live, brk, cont)
            orelse = self.block(s.orelse, live, brk, cont)
            return body | orelse | info.load_mask(s.test)
        if isinstance(s, (ast.For, ast.While)):
            head = live | info.load_mask(s.test) if isinstance(s, ast.While) else live
            target = info.mask(names(s.target, ast.Store)) if isinstance(s, ast.For) else 0
            while True:
                inner = self.block(s.body, head, live, head) & ~target
                if not (inner & ~head):
                    break
                head = head | inner
            self.after[id(s)] = live
            if isinstance(s, ast.For):
                return head | info.load_mask(s.iter)
            return head
        raise AssertionError(f"not a control statement: {s!r}")


def uses(s: ast.stmt) -> tuple[list[ast.Name], set[str]]:
    """The names a statement reads (the nodes, which passes rename) and the names it
    binds or writes into."""
    found = survey(s)
    return found.load_nodes, found.written
