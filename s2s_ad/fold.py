"""Generated code folded back together: temporaries, doubled and first contributions.

The sweeps write three-address code (``_t2 = x[i]``, ``_t1 = _t2 < 0``, ``if _t1:``) and
contributions one at a time; after :mod:`optimize` removed what is dead, these passes
write it the way a person would:

* a temporary (``_t3``, ``_t3_bar``, ``_t3_dot``: the user's names stay) bound once,
  read once, later in the same block, by an expression without effects is folded into
  its reader (``if x[i] < 0:``), unless something between them could change what the
  expression reads: a write of a name it reads, any in-place write (``v[i] = ...``, ``v
  += ...``: an alias may be written), a call that may have effects, or a tape push or
  pop. A value is never moved into a loop's test, a comprehension, a lambda or an
  operand evaluated conditionally (``and``, ``or``, ``... if ... else ...``), never out
  of the code of one of the user's lines (under its ``# L<n>:`` comment) into another's,
  and a line is not made longer than :data:`WIDTH`;
* a contribution added to itself (``e + e``, from ``x * x``) is written ``2.0 * e`` (the
  same value to the bit; a float, since CPython multiplies two floats faster than an
  int and a float, which matters in scalar loops);
* an adjoint set to zero and then added to (``v = 0.0`` then ``v = v + e`` or ``v += e``,
  nothing reading ``v`` in between) is assigned its first contribution (``v = e``),
  where ``e`` is an arithmetic result (a fresh value: ``v`` may be updated in place).
"""

from __future__ import annotations

import ast
import copy
import re
from collections import Counter

from .codefacts import (
    COMPOUND,
    DEFERRED,
    Info,
    children,
    nodes,
    pure,
    scan,
    statements,
    store_targets,
    written,
)
from .rewrite import text_of, width

#: The longest statement (without its indentation) folding makes.
WIDTH = 88
#: How many statements after a temporary's binding its reader is looked for.
WINDOW = 40
#: The most reads of ``t = x[i]`` spelled out as ``x[i]`` each.
COPIES = 3

#: The names of adjoints and tangents (``y_bar``, ``_t3_bar``, ``x_bar2``, ``x_dot``): only
#: their contributions are doubled as floats (``n + n`` of an int ``n`` stays an int).
_ADJOINT = re.compile(r"\w+_(?:bar|dot)\d*")
_GENERATED = re.compile(r"(?<![\w.])_\w*")
#: The temporaries the sweeps make (``_t3``, ``_t3_bar``, ``_t3_dot``): the user's names,
#: ``_`` ones too, stay.
_TEMPORARY = re.compile(r"_t\d+(?:_bar|_dot)*")


def blocks(stmts: list[ast.stmt]) -> list[list[ast.stmt]]:
    """``stmts`` and every statement list nested in it."""
    out = [stmts]
    for s in stmts:
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list) and inner:
                out.extend(blocks(inner))
    return out


def same(a: object, b: object) -> bool:
    """Whether two trees (or field values) are the same expression, positions aside."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.AST):
        return all(same(getattr(a, f, None), getattr(b, f, None)) for f in a._fields)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))  # type: ignore[arg-type]
    return a == b


def _doubled(node: ast.AST, tape: str) -> int:
    """Rewrite every ``e + e`` under ``node`` (innermost first) as ``2.0 * e``; the count."""
    hits = 0
    for name, field in ast.iter_fields(node):
        items = field if isinstance(field, list) else [field]
        for k, item in enumerate(items):
            if not isinstance(item, ast.expr):
                continue
            hits += _doubled(item, tape)
            if (
                isinstance(item, ast.BinOp)
                and isinstance(item.op, ast.Add)
                and same(item.left, item.right)
                and pure(item.left, tape)
                and _reads_adjoint(item.left)
            ):
                new = ast.BinOp(ast.Constant(2.0), ast.Mult(), item.left)
                if isinstance(field, list):
                    field[k] = new
                else:
                    setattr(node, name, new)
                hits += 1
    return hits


def _reads_adjoint(node: ast.AST) -> bool:
    """Whether ``node`` reads an adjoint or a tangent (a contribution, linear in one)."""
    return any(isinstance(n, ast.Name) and _ADJOINT.fullmatch(n.id) for n in ast.walk(node))


def _to_adjoint(s: ast.stmt) -> bool:
    """Whether ``s`` writes an adjoint or a tangent (not a primal value: an int, a list)."""
    targets = s.targets if isinstance(s, ast.Assign) else [s.target]  # type: ignore[attr-defined]
    for t in targets:
        while isinstance(t, ast.Subscript):
            t = t.value
        if not (isinstance(t, ast.Name) and _ADJOINT.fullmatch(t.id)):
            return False
    return True


def merge_doubles(stmts: list[ast.stmt], changed: set[int], tape: str) -> None:
    """The two contributions of ``x * x`` merged: ``e + e`` written ``2.0 * e``. A
    statement whose text (as the sweeps wrote it) has no ``+`` is passed over unwalked
    (the passes before rename names, never add operators)."""
    for block in blocks(stmts):
        for s in block:
            if not isinstance(s, (ast.Assign, ast.AugAssign)) or not _to_adjoint(s):
                continue
            if "+" in text_of(s) and _doubled(s, tape):
                changed.add(id(s))


def _zero(s: ast.stmt) -> str | None:
    """``v`` for ``v = 0.0``."""
    if (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Constant)
        and type(s.value.value) is float
        and s.value.value == 0.0
    ):
        return s.targets[0].id
    return None


def _added(s: ast.stmt, name: str) -> ast.expr | None:
    """``e`` for ``name = name + e`` or ``name += e`` (``e`` an arithmetic result that
    does not read ``name``)."""
    if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add):
        target, e = s.target, s.value
    elif (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.value, ast.BinOp)
        and isinstance(s.value.op, ast.Add)
        and isinstance(s.value.left, ast.Name)
        and s.value.left.id == name
    ):
        target, e = s.targets[0], s.value.right
    else:
        return None
    if not (isinstance(target, ast.Name) and target.id == name):
        return None
    if not isinstance(e, (ast.BinOp, ast.UnaryOp)) or name in scan(e)[0]:
        return None
    return e


def assign_first(
    stmts: list[ast.stmt], changed: set[int], tape: str, notes: dict[int, str]
) -> set[int]:
    """``v = 0.0`` then ``v = v + e`` (``v += e``) as ``v = e`` when nothing in between
    reads or writes ``v``. Returns the ids of the zeros to drop."""
    drop: set[int] = set()
    for block in blocks(stmts):
        for i, s in enumerate(block):
            name = _zero(s)
            if name is None:
                continue
            for j in range(i + 1, min(len(block), i + 1 + WINDOW)):
                u = block[j]
                if not isinstance(u, (ast.Assign, ast.AugAssign)):
                    break
                e = _added(u, name)
                if e is not None and pure(e, tape):
                    new = ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], e), u)
                    block[j] = new
                    if id(u) in notes:
                        notes[id(new)] = notes.pop(id(u))
                    changed.add(id(new))
                    drop.add(id(s))
                    break
                if name in scan(u)[0] or name in written(u):
                    break
    return drop


class _Folder:
    """Folds single-use temporaries into their readers, one block at a time."""

    def __init__(
        self,
        func: ast.FunctionDef,
        info: Info,
        notes: dict[int, str],
        changed: set[int],
    ) -> None:
        self.tape, self.info, self.notes = info.tape, info, notes
        # how often each generated name occurs in the code kept (comments aside): a
        # temporary bound once and read once occurs twice (a string or keyword that
        # spells it makes more: it is then kept)
        spelled = _GENERATED.findall(text_of(func))  # type: ignore[arg-type]
        for st in statements(func.body):
            spelled += _generated(st, changed)
        self.occurs: Counter[str] = Counter(spelled)  # counted at once, not per statement
        self.width: dict[int, int] = {}
        self.drop: set[int] = set()
        self.facts: dict[int, tuple[set[str], bool, set[str]]] = {}

    def facts_of(self, u: ast.stmt) -> tuple[set[str], bool, set[str]]:
        """What ``u`` reads first (its head: see ``_head``), whether nothing may move past
        it whatever it reads, and the names it writes (computed once)."""
        found = self.facts.get(id(u))
        if found is None:
            info = self.info
            if isinstance(u, (ast.If, ast.For)):
                head_reads = info.load(_head(u))  # type: ignore[arg-type]
            elif isinstance(u, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)):
                head_reads = info.of(u)[0]  # a superset: a target's index too
            else:
                head_reads = set()
            writes = info.of(u)[1] if isinstance(u, ast.Assign) else set()
            found = (head_reads, _wall(u, info), writes)
            self.facts[id(u)] = found
        return found

    def text_width(self, s: ast.stmt) -> int:
        """The length of a statement's line (a compound's header) as it will be written
        (an estimate after folds; more than ``WIDTH`` for a statement on several lines)."""
        if id(s) not in self.width:
            one_line = isinstance(s, COMPOUND) or s.lineno == s.end_lineno
            self.width[id(s)] = width(s) if one_line else WIDTH + 1
        return self.width[id(s)]

    def temporary(self, s: ast.stmt) -> str | None:
        """``t`` for ``t = e``, ``t`` generated, bound here only and read once, ``e``
        without effects."""
        if not (
            isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        ):
            return None
        t = s.targets[0].id
        if not _TEMPORARY.fullmatch(t) or self.occurs[t] != 2:
            return None
        ok = self.info.effect_free(s) and self.tape not in self.info.of(s)[0]
        return t if ok and not _reduction_adjoint(s.value) else None

    def element(self, s: ast.stmt) -> tuple[str, int] | None:
        """``(t, n)`` for ``t = x[i]`` (``x`` and ``i`` the user's names, ``i`` a name or a
        constant), ``t`` generated, bound here only and read ``n`` times (2 to
        :data:`COPIES`): indexing again costs less than a name it makes the reader learn."""
        if not (
            isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        ):
            return None
        t, value = s.targets[0].id, s.value
        if not (
            _TEMPORARY.fullmatch(t)
            and 3 <= self.occurs[t] <= COPIES + 1
            and isinstance(value, ast.Subscript)
            and isinstance(value.ctx, ast.Load)
            and isinstance(value.value, ast.Name)
            and isinstance(value.slice, (ast.Name, ast.Constant))
        ):
            return None
        if any(n.startswith("_") for n in self.info.load(value)):
            return None  # a generated name read once more would no longer fold
        return t, self.occurs[t] - 1

    def fold_element(self, stmts: list[ast.stmt], i: int, t: str, n: int) -> list[ast.stmt]:
        """Spell ``t = x[i]`` out at each of its ``n`` reads, all in the heads of simple
        statements of the same user line that nothing between writes ``x`` or ``i`` (or
        anything in place); all of them or none. Returns the statements rewritten."""
        s = stmts[i]
        assert isinstance(s, ast.Assign)
        reads = self.facts_of(s)[0]
        readers: list[ast.stmt] = []
        found = 0
        for u in stmts[i + 1 : i + 1 + WINDOW]:
            if found == n or "# L" in self.notes.get(id(u), ""):
                break
            if id(u) in self.drop:
                continue
            head_reads, wall, writes = self.facts_of(u)
            if t in head_reads:
                head = _head(u)
                simple = isinstance(u, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return))
                if not simple or head is None or self.tape in head_reads:
                    return []
                if not self.info.effect_free(u) and not _effects_after(head):
                    return []
                found += _reads_of(head, t)
                readers.append(u)
            if wall or writes & reads:
                break
        if found != n or any(t in self.facts_of(u)[0] - self.info.load(_head(u)) for u in readers):
            return []  # read elsewhere too (a target's index), or past a write
        extra = len(ast.unparse(s.value)) - len(t)
        for u in readers:
            if self.text_width(u) + extra * _reads_of(_head(u), t) > WIDTH:
                return []
        for u in readers:
            head = _head(u)
            count = _reads_of(head, t)
            if isinstance(head, ast.Name):  # the whole value (``W, b = _t2``)
                u.value = head = copy.deepcopy(s.value)  # type: ignore[attr-defined]
            else:
                for _ in range(count):
                    _replace(head, t, copy.deepcopy(s.value))  # type: ignore[arg-type]
            self.info.forget(head)  # type: ignore[arg-type]
            self.width[id(u)] = self.text_width(u) + extra * count
            head_reads, wall, writes = self.facts_of(u)
            self.facts[id(u)] = ((head_reads - {t}) | reads, wall, writes)
        self.drop.add(id(s))
        return readers

    def block(self, stmts: list[ast.stmt], changed: set[int]) -> None:
        """Fold the temporaries of one statement list, first to last (a fold's result
        may fold again: its reader is a temporary later in the list)."""
        for i, s in enumerate(stmts):
            element = self.element(s)
            if element is not None:
                changed.update(id(u) for u in self.fold_element(stmts, i, *element))
                continue
            t = self.temporary(s)
            if t is None:
                continue
            assert isinstance(s, ast.Assign)
            reads = self.facts_of(s)[0]  # what folds into it so far included
            for u in stmts[i + 1 : i + 1 + WINDOW]:
                if "# L" in self.notes.get(id(u), ""):
                    break  # the block of another of the user's lines
                if id(u) in self.drop:
                    continue
                head_reads, wall, writes = self.facts_of(u)
                if t in head_reads:
                    head = _head(u)
                    assert head is not None
                    if self.fold_into(s, t, u, head):
                        changed.add(id(u))
                        self.facts[id(u)] = ((head_reads - {t}) | reads, wall, writes)
                    break
                if wall or writes & reads:
                    break

    def fold_into(self, s: ast.Assign, t: str, u: ast.stmt, head: ast.AST) -> bool:
        """Replace the read of ``t`` in ``u`` (in ``head``, what ``u`` evaluates first)
        by ``s``'s value, if that is safe and the line stays short."""
        if self.tape in self.facts_of(u)[0]:
            return False
        simple = isinstance(u, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return))
        if not (simple and self.info.effect_free(u)) and not _effects_after(head):
            return False
        width = self.text_width(u) + self.text_width(s) - 2 * len(t) - 3
        if width > WIDTH:
            return False
        if isinstance(head, ast.Name):  # the whole value, test or iterable
            field = (
                "test" if isinstance(u, ast.If) else "iter" if isinstance(u, ast.For) else "value"
            )
            setattr(u, field, s.value)
        elif isinstance(head, DEFERRED) or not _replace(head, t, s.value):
            return False
        self.width[id(u)] = width
        self.drop.add(id(s))
        return True


def _generated(s: ast.stmt, changed: set[int]) -> list[str]:
    """The generated (``_``-prefixed) names a statement spells (a compound statement: its
    header), once per occurrence."""
    if not hasattr(s, "lineno"):
        return []  # a ``pass`` standing for an emptied body
    if id(s) not in changed:
        return _GENERATED.findall(text_of(s))
    if isinstance(s, (ast.If, ast.While)):
        parts: list[ast.AST] = [s.test]
    elif isinstance(s, ast.For):
        parts = [s.target, s.iter]
    else:
        parts = [s]
    return [
        n.id for p in parts for n in nodes(p) if isinstance(n, ast.Name) and n.id.startswith("_")
    ]


def _reduction_adjoint(value: ast.expr) -> bool:
    """``_ad.sum_vjp(...)`` or ``_ad.mean_vjp(...)``: kept bound to its name, where
    lowering may keep a whole reduction's adjoint a scalar (``lower._scalar_adjoints``)."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id.startswith("_ad")
        and value.func.attr in ("sum_vjp", "mean_vjp")
    )


def _wall(u: ast.stmt, info: Info) -> bool:
    """Whether no value may be moved past ``u``, whatever it reads: a compound statement,
    an in-place write (an alias of what the value reads may be written), a call that may
    have effects, a tape push or pop."""
    if isinstance(u, COMPOUND) or not isinstance(u, (ast.Assign, ast.Expr)):
        return True  # AugAssign, Return, loops ...
    if any(not isinstance(t, ast.Name) for t in store_targets(u)):
        return True  # v[i] = ...
    return info.tape in info.of(u)[0] or not info.effect_free(u)


def _head(u: ast.stmt) -> ast.AST | None:
    """What a statement evaluates (once, first): a simple statement's value, an ``if``'s
    test, a ``for``'s iterable (a ``while``'s test runs every trip: none)."""
    if isinstance(u, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)):
        return u.value
    if isinstance(u, ast.If):
        return u.test
    if isinstance(u, ast.For):
        return u.iter
    return None


def _effects_after(head: ast.AST | None) -> bool:
    """Whether every effect in ``head`` happens after all its operands are evaluated: it
    has none, or it is one call whose operands have none."""
    if head is None:
        return False
    if scan(head)[1]:
        return True
    if not isinstance(head, ast.Call) or not scan(head.func)[1]:
        return False
    return all(scan(a)[1] for a in [*head.args, *(k.value for k in head.keywords)])


def _reads_of(node: ast.AST | None, t: str) -> int:
    """How often ``node`` reads ``t``, not counting reads under a lambda, a comprehension
    or a conditionally evaluated operand (``-WIDTH``: such a read is never replaced)."""
    if node is None:
        return 0
    if isinstance(node, ast.Name):
        return int(node.id == t and isinstance(node.ctx, ast.Load))
    if isinstance(node, DEFERRED):
        return -WIDTH if t in {n.id for n in nodes(node) if isinstance(n, ast.Name)} else 0
    return sum(_reads_of(child, t) for child in children(node))


def _replace(node: ast.AST, t: str, value: ast.expr) -> bool:
    """Replace the one read of ``t`` under ``node`` by ``value`` (not under a lambda, a
    comprehension or a conditionally evaluated operand)."""
    for name, field in ast.iter_fields(node):
        items = field if isinstance(field, list) else [field]
        for k, item in enumerate(items):
            if isinstance(item, ast.Name) and item.id == t and isinstance(item.ctx, ast.Load):
                if isinstance(field, list):
                    field[k] = value
                else:
                    setattr(node, name, value)
                return True
            if isinstance(item, ast.AST) and not isinstance(item, DEFERRED):
                if _replace(item, t, value):
                    return True
    return False


def fold_temporaries(
    func: ast.FunctionDef, info: Info, notes: dict[int, str], changed: set[int]
) -> set[int]:
    """Fold single-use temporaries into their readers (see the module's docstring), never
    from the code of one of the user's lines (a ``# L<n>:`` comment) into another's.
    ``info`` holds the facts of the statements not rewritten since it was made. Returns
    the ids of the bindings folded away."""
    folder = _Folder(func, info, notes, changed)
    for block in blocks(func.body):
        folder.block(block, changed)
    return folder.drop
