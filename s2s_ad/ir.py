"""The normal form the transformer works on: three-address statements.

``normalize`` lowers a libcst function body into these classes. Every operand of an
operation is an *atom*: a variable name or a constant's source text. Every statement
remembers the user's line number and source, which become the ``# L<line>:`` comments
of the generated code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Var:
    """A local variable (parameter, user variable or temporary)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const:
    """A constant, kept as its source text (``2.0``, ``None``, ``'mean'``)."""

    code: str

    def __str__(self) -> str:
        return self.code


Atom = Var | Const


@dataclass
class Index:
    """A subscript's index as source text over atoms (``i, 1:3``) and the names it reads."""

    code: str
    reads: tuple[str, ...] = ()


# --- expressions (right-hand sides) -------------------------------------------------


@dataclass
class Copy:
    """``target = atom``."""

    value: Atom


@dataclass
class BinOp:
    """``target = left <op> right`` with op one of ``+ - * / // % ** @``."""

    op: str
    left: Atom
    right: Atom


@dataclass
class UnaryOp:
    """``target = <op> operand`` with op one of ``- + ~ not``."""

    op: str
    operand: Atom


@dataclass
class Compare:
    """``target = left <op1> c1 <op2> c2 ...``: never differentiable."""

    left: Atom
    ops: list[str]
    comparators: list[Atom]


@dataclass
class Callee:
    """What a call calls.

    Attributes:
        code: Source text of the callee (``np.sin``, ``g``, ``x.sum``).
        obj: The live object when resolved at transform time, else ``None``.
        receiver: For a method call on a local value, the receiver atom.
        method: The method name for such calls.
        var: For a call of a function held in a local variable, that variable.
    """

    code: str
    obj: Any = None
    receiver: Atom | None = None
    method: str | None = None
    resolved: bool = False
    var: Atom | None = None


@dataclass
class Call:
    """``target = callee(args..., key=value...)``."""

    callee: Callee
    args: list[Atom]
    kwargs: list[tuple[str, Atom]]
    star: Atom | None = None  # ``*star`` after the positional arguments
    starstar: Atom | None = None  # ``**starstar`` after the keyword arguments


@dataclass
class Attr:
    """``target = obj.name``."""

    obj: Atom
    name: str


@dataclass
class Subscript:
    """``target = obj[index]``."""

    obj: Atom
    index: Index


@dataclass
class Build:
    """``target = (a, b)`` / ``[a, b]`` / ``{'k': a}``: kind is ``tuple``, ``list`` or ``dict``."""

    kind: str
    elts: list[Atom]
    keys: list[str] = field(default_factory=list)


@dataclass
class Opaque:
    """An expression kept verbatim and treated as non-differentiable (comprehensions...)."""

    code: str
    reads: tuple[str, ...]
    what: str
    #: a truth test (``a > 0 and b > 0``): its value is a bool, which carries no gradient
    truth: bool = False


Expr = Copy | BinOp | UnaryOp | Compare | Call | Attr | Subscript | Build | Opaque


# --- statements -------------------------------------------------------------------


@dataclass
class Stmt:
    """Base of all statements: the user's line number and source line."""

    line: int
    src: str


@dataclass
class Assign(Stmt):
    """``target = value``.

    ``kind`` marks assignments the normalizer made with a known restore: ``element``
    (a loop variable read from its sequence: recomputed in the backward sweep) and
    ``jump`` (a jump flag set to true: it was false just before).
    """

    target: str
    value: Expr
    kind: str = ""


@dataclass
class Unpack(Stmt):
    """``t1, t2, ... = value`` for a tuple/list value."""

    targets: list[str]
    value: Atom


@dataclass
class SetItem(Stmt):
    """``obj[index] = value`` (in-place write of an array or list element).

    ``restore`` marks ``_ad.restore_item(obj, index, value)`` of a backward sweep being
    differentiated: the same write, except that the marker ``old_item`` returns for a
    key a dict did not hold removes the key again.
    """

    obj: str
    index: Index
    value: Atom
    restore: bool = False


@dataclass
class Append(Stmt):
    """``obj.append(value)`` on a local list."""

    obj: str
    value: Atom


@dataclass
class ListPop(Stmt):
    """``target = obj.pop()`` on a local list (the last element)."""

    obj: str
    target: str


@dataclass
class ExprStmt(Stmt):
    """A call evaluated for its side effects (``print(x)``, ``xs.append(y)``)."""

    value: Expr


@dataclass
class If(Stmt):
    """``if test: body else: orelse`` with ``test`` a variable.

    A *guard* (``guard=True``, empty body) protects the statements after a ``break``
    or ``continue``: the forward sweep runs ``orelse`` unguarded (the jump already skips
    it), the backward sweep reverses it only when the flag ``test`` is false.
    """

    test: Atom
    body: list[Stmt]
    orelse: list[Stmt]
    guard: bool = False


@dataclass
class For(Stmt):
    """``for target in iter: body``.

    ``range_args`` is set for ``range(...)`` loops (the bounds are atoms evaluated once),
    otherwise ``iterable`` holds the sequence iterated over.
    """

    target: str
    body: list[Stmt]
    range_args: list[Atom] | None = None
    iterable: Atom | None = None
    trips: str | None = None
    brk: str | None = None
    orelse: list[Stmt] = field(default_factory=list)


@dataclass
class While(Stmt):
    """``while True:`` whose body computes and tests its own exit (``test`` block first)."""

    test_body: list[Stmt]
    test: Atom
    body: list[Stmt]
    trips: str = ""
    brk: str | None = None
    orelse: list[Stmt] = field(default_factory=list)


@dataclass
class Break(Stmt):
    """``break`` out of the innermost loop."""


@dataclass
class Continue(Stmt):
    """``continue`` the innermost loop."""


@dataclass
class Return(Stmt):
    """``return value`` (normalized code has exactly one, at the end)."""

    value: Atom


@dataclass
class Pass(Stmt):
    """A statement with no effect (kept only for readability of the forward sweep)."""


@dataclass
class Function:
    """A normalized function.

    Attributes:
        name: The user's function name.
        params: Parameter names in order.
        body: Normalized statements; the last one is the single ``Return``.
        names: Every identifier the source uses (reserved against collisions).
        filename: The user's file.
        first_line: The ``def`` line.
        param_defaults: Default value source per parameter.
        temps: Temporaries holding one subexpression each: read once, right after.
        all_temps: Every temporary holding a subexpression (some read more than once).
        imports: Names the function's own ``import`` statements bind, and the modules or
            objects they bind (the generated code receives them as free variables).
        user_names: A name reused for unrelated values renamed apart -> the user's name
            (refusals show the user's).
    """

    name: str
    params: list[str]
    body: list[Stmt]
    names: set[str]
    filename: str
    first_line: int
    param_defaults: dict[str, str] = field(default_factory=dict)
    temps: set[str] = field(default_factory=set)
    all_temps: set[str] = field(default_factory=set)
    imports: dict[str, Any] = field(default_factory=dict)
    user_names: dict[str, str] = field(default_factory=dict)


def expr_atoms(expr: Expr) -> list[Atom]:
    """The atoms an expression reads (a call's receiver and callee variable, its packed
    arguments; an index's names)."""
    if isinstance(expr, Copy):
        return [expr.value]
    if isinstance(expr, BinOp):
        return [expr.left, expr.right]
    if isinstance(expr, UnaryOp):
        return [expr.operand]
    if isinstance(expr, Compare):
        return [expr.left, *expr.comparators]
    if isinstance(expr, Call):
        extra = [expr.callee.receiver] if expr.callee.receiver is not None else []
        if expr.callee.var is not None:
            extra.append(expr.callee.var)
        packed = [a for a in (expr.star, expr.starstar) if a is not None]
        return [*extra, *expr.args, *(v for _, v in expr.kwargs), *packed]
    if isinstance(expr, Attr):
        return [expr.obj]
    if isinstance(expr, Subscript):
        return [expr.obj, *(Var(n) for n in expr.index.reads)]
    if isinstance(expr, Build):
        return list(expr.elts)
    if isinstance(expr, Opaque):
        return [Var(n) for n in expr.reads]
    raise TypeError(expr)


def bound_names(stmts: list[Stmt]) -> set[str]:
    """Every name a block (nested blocks too) binds."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, Assign):
            out.add(s.target)
        elif isinstance(s, (Unpack,)):
            out.update(s.targets)
        elif isinstance(s, ListPop):
            out.add(s.target)
        elif isinstance(s, If):
            out |= bound_names(s.body) | bound_names(s.orelse)
        elif isinstance(s, For):
            out |= {s.target} | bound_names(s.body)
        elif isinstance(s, While):
            out |= bound_names(s.test_body) | bound_names(s.body)
    return out


def scan_bound(body: list[Stmt], params: set[str], visit: Any) -> None:
    """Call ``visit(stmt, definite, possible)`` before each statement, in program order.

    ``definite`` holds the names bound on every path that reaches the statement,
    ``possible`` those bound on some path (an earlier trip of an enclosing loop counts).
    """

    def scan(stmts: list[Stmt], definite: set[str], possible: set[str]) -> set[str]:
        for s in stmts:
            visit(s, definite, possible)
            if isinstance(s, If):
                left = scan(s.body, set(definite), possible)
                right = scan(s.orelse, set(definite), possible)
                definite = definite | (left & right)
            elif isinstance(s, (For, While)):
                possible |= bound_names([s])
                if isinstance(s, For):
                    scan(s.body, definite | {s.target}, possible)
                else:
                    scan(s.test_body + s.body, set(definite), possible)
            else:
                names = bound_names([s])
                definite = definite | names
                possible |= names
        return definite

    scan(body, set(params), set(params))


def walk(stmts: list[Stmt]) -> Iterator[Stmt]:
    """Every statement, nested ones included, in program order."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk(s.body)
            yield from walk(s.orelse)
        elif isinstance(s, For):
            yield from walk(s.body)
        elif isinstance(s, While):
            yield from walk(s.test_body)
            yield from walk(s.body)


def call_args_source(call: Call, atom: Callable[[Atom], str] = str) -> str:
    """The source of a call's arguments (``x, *rest, k=v, **opts``), atoms by ``atom``."""
    parts = [atom(x) for x in call.args]
    if call.star is not None:
        parts.append(f"*{atom(call.star)}")
    parts += [f"{k}={atom(v)}" for k, v in call.kwargs]
    if call.starstar is not None:
        parts.append(f"**{atom(call.starstar)}")
    return ", ".join(parts)


def expr_source(expr: Expr, atom: Callable[[Atom], str] = str) -> str:
    """The source of a normal-form right-hand side, atoms rendered by ``atom``."""
    if isinstance(expr, Copy):
        return atom(expr.value)
    if isinstance(expr, BinOp):
        return f"{atom(expr.left)} {expr.op} {atom(expr.right)}"
    if isinstance(expr, UnaryOp):
        sep = " " if expr.op == "not" else ""
        return f"{expr.op}{sep}{atom(expr.operand)}"
    if isinstance(expr, Compare):
        parts = [atom(expr.left)]
        for op, right in zip(expr.ops, expr.comparators, strict=True):
            parts += [op, atom(right)]
        return " ".join(parts)
    if isinstance(expr, Call):
        return f"{expr.callee.code}({call_args_source(expr, atom)})"
    if isinstance(expr, Attr):
        return f"{atom(expr.obj)}.{expr.name}"
    if isinstance(expr, Subscript):
        return f"{atom(expr.obj)}[{expr.index.code}]"
    if isinstance(expr, Build):
        if expr.kind == "dict":
            inner = ", ".join(f"{k}: {atom(v)}" for k, v in zip(expr.keys, expr.elts, strict=True))
            return "{" + inner + "}"
        inner = ", ".join(atom(e) for e in expr.elts)
        if expr.kind == "tuple":
            return f"({inner},)" if len(expr.elts) == 1 else f"({inner})"
        return f"[{inner}]"
    if isinstance(expr, Opaque):
        return expr.code
    raise TypeError(expr)
