"""One name reused for unrelated values, renamed apart before lowering.

Users reuse a short name for values that have nothing to do with each other: ``g`` a
local ``def`` and later the gradient of an inner step (``g = 2.0 * (h - b)``), ``k`` the
keys of a config dict and later ``np.roll``'s shift, ``a`` a lambda and later a float.
The lowering treats a name as one variable (a name also assigned cannot be a local
function; a name that once held a differentiated value is differentiated wherever it is
read), so such programs were refused.

:func:`split_reused_names` finds each name's *webs*: the bindings linked by a read that
any of them may reach (reaching definitions over the function's structured control
flow: branches joined, loops iterated to a fixed point, so a name read in a loop before
its rebinding later in the body is one web across trips). Each binding has a kind (a
``def`` or lambda, a loop over a ``range``, a loop over anything else, an integer, any
other value, a parameter). When a name's webs hold unrelated values by their kinds (a
function and anything else; a container's items and an integer), the webs after the
first get fresh names (``g_2``): the program is the same, and each web is analysed on
its own. Other reuses (a parameter rebound to a value computed from it, a loop's item
rebound in its body) keep their name, so generated code is unchanged where nothing is
reused for unrelated values.

Conservative by construction: a name read or bound in a nested function, lambda, class
or comprehension, declared ``global``/``nonlocal``, deleted, bound by ``:=``, an import,
or mentioned inside ``try`` is never split; a function with ``with``, ``match``,
``locals()``, ``vars()``, ``eval`` or ``exec`` is left as written. A refusal names the
user's variable (``g``, through :func:`user_names`), and shows the user's line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import libcst as cst

from .cstwalk import walk
from .source import ParsedFunction

__all__ = ["split_reused_names", "user_names"]

#: a name -> the bindings that may have given its value (missing: unbound yet)
State = dict[str, frozenset[int]]

_OPAQUE = {"locals", "vars", "eval", "exec"}


class _Unsupported(Exception):
    """A construct the flow below does not model: the function is left as written."""


@dataclasses.dataclass
class _Loop:
    breaks: list[State | None] = dataclasses.field(default_factory=list)
    continues: list[State | None] = dataclasses.field(default_factory=list)


class _Flow:
    """Reaching definitions of one function body's names, recorded per ``Name`` node."""

    def __init__(self) -> None:
        self.names: list[str] = []  # binding id -> name
        self.kinds: list[str] = []  # binding id -> kind of statement
        self.by_node: dict[int, int] = {}  # id(Name node of a binding) -> binding id
        self.nodes: dict[int, cst.Name] = {}  # id -> the node (kept alive)
        self.uses: dict[int, set[int]] = {}  # id(Name node read) -> bindings reaching it
        self.merged: list[tuple[int, int]] = []  # (binding, read) of one node (x += 1)
        self.unbound: dict[str, int] = {}  # name -> its "not bound yet" pseudo binding
        self.pinned: set[str] = set()
        self.loops: list[_Loop] = []
        self.read_in: dict[int, list[cst.Name]] = {}  # id(expression) -> the names it reads

    # --- bindings and reads -----------------------------------------------------------------

    def _binding(self, node: cst.Name, kind: str) -> int:
        key = id(node)
        found = self.by_node.get(key)
        if found is None:
            found = self.by_node[key] = len(self.names)
            self.names.append(node.value)
            self.kinds.append(kind)
            self.nodes[key] = node
        return found

    def _unbound(self, name: str) -> int:
        found = self.unbound.get(name)
        if found is None:
            found = self.unbound[name] = len(self.names)
            self.names.append(name)
            self.kinds.append("")
        return found

    def reaching(self, state: State, name: str) -> frozenset[int]:
        found = state.get(name)
        return found if found is not None else frozenset([self._unbound(name)])

    def read(self, node: cst.Name, state: State) -> None:
        self.uses.setdefault(id(node), set()).update(self.reaching(state, node.value))
        self.nodes[id(node)] = node

    def bind(self, node: cst.Name, kind: str, state: State) -> State:
        out = dict(state)
        out[node.value] = frozenset([self._binding(node, kind)])
        return out

    def join(self, *states: State | None) -> State | None:
        """Where paths meet: each name may have the value of any path's bindings (states
        are never changed in place: a binding makes a new one)."""
        live = [s for s in states if s is not None]
        if not live:
            return None
        first, out = live[0], dict(live[0])
        for other in live[1:]:
            if other is first:
                continue
            for name, found in other.items():
                mine = out.get(name)
                if mine is not found:
                    out[name] = found | (mine if mine is not None else self.reaching({}, name))
            for name in out.keys() - other.keys():  # not bound yet on that path
                out[name] = out[name] | self.reaching({}, name)
        return out

    def reads(self, expr: cst.CSTNode | None, state: State) -> None:
        """Record every name ``expr`` reads (nested scopes pin theirs instead)."""
        if expr is None:
            return
        found = self.read_in.get(id(expr))
        if found is None:  # once per expression, however often a loop is walked again
            collect = _Reads(self)
            walk(expr, collect)
            found = self.read_in[id(expr)] = collect.found
        for node in found:
            self.read(node, state)

    def pin_all(self, node: cst.CSTNode) -> None:
        for name in _all_names(node):
            self.pinned.add(name)

    # --- statements -------------------------------------------------------------------------

    def block(self, stmts: Sequence[cst.CSTNode], state: State | None) -> State | None:
        for stmt in stmts:
            now = state if state is not None else {}  # code after a return: not reached
            if isinstance(stmt, cst.BaseSmallStatement):  # def f(x): return x (one line)
                state = self.small(stmt, now)
            else:
                state = self.statement(stmt, now)
        return state

    def statement(self, stmt: cst.CSTNode, state: State) -> State | None:
        if isinstance(stmt, cst.SimpleStatementLine):
            out: State | None = state
            for small in stmt.body:
                out = self.small(small, out if out is not None else {})
            return out
        if isinstance(stmt, cst.If):
            self.reads(stmt.test, state)
            then = self.block(stmt.body.body, state)
            orelse = stmt.orelse
            if isinstance(orelse, cst.If):
                other = self.statement(orelse, state)
            elif isinstance(orelse, cst.Else):
                other = self.block(orelse.body.body, state)
            else:
                other = state
            return self.join(then, other)
        if isinstance(stmt, (cst.For, cst.While)):
            return self.loop(stmt, state)
        if isinstance(stmt, cst.FunctionDef):
            for deco in stmt.decorators:
                self.pin_all(deco)
            self.pin_all(stmt.params)
            self.pin_all(stmt.body)
            return self.bind(stmt.name, "function", state)
        if isinstance(stmt, cst.ClassDef):
            self.pin_all(stmt)
            return state
        if isinstance(stmt, cst.Try):
            return self.try_(stmt, state)
        raise _Unsupported(type(stmt).__name__)

    def loop(self, stmt: cst.For | cst.While, state: State) -> State | None:
        if isinstance(stmt, cst.For):
            if stmt.asynchronous is not None:
                raise _Unsupported("async for")
            self.reads(stmt.iter, state)
            kind = "counter" if _is_range(stmt.iter) else "item"
        head: State | None = state
        while True:
            assert head is not None
            ctx = _Loop()
            self.loops.append(ctx)
            if isinstance(stmt, cst.For):
                entry = self.target(stmt.target, kind, head)
            else:
                self.reads(stmt.test, head)
                entry = head
            end = self.block(stmt.body.body, entry)
            self.loops.pop()
            new = self.join(state, end, *ctx.continues)
            if new == head:
                break
            head = new
        after = head
        if stmt.orelse is not None:
            after = self.block(stmt.orelse.body.body, head)
        return self.join(after, *ctx.breaks)

    def try_(self, stmt: cst.Try, state: State) -> State | None:
        # every name it mentions is pinned: the others keep ``state`` throughout
        self.pin_all(stmt)
        body = self.block(stmt.body.body, state)
        ends = [self.block(stmt.orelse.body.body, body) if stmt.orelse else body]
        for handler in stmt.handlers:
            self.reads(handler.type, state)
            ends.append(self.block(handler.body.body, self.join(state, body)))
        joined = self.join(*ends)
        if stmt.finalbody is None:
            return joined
        final = self.block(stmt.finalbody.body.body, self.join(state, joined))
        return final if joined is not None else None

    def small(self, stmt: cst.BaseSmallStatement, state: State) -> State | None:
        if isinstance(stmt, cst.Assign):
            self.reads(stmt.value, state)
            kind = _value_kind(stmt.value)
            for target in stmt.targets:
                state = self.target(target.target, kind, state)
            return state
        if isinstance(stmt, cst.AnnAssign):
            if stmt.value is None:
                self.pin_all(stmt.target)
                return state
            self.reads(stmt.value, state)
            return self.target(stmt.target, _value_kind(stmt.value), state)
        if isinstance(stmt, cst.AugAssign):
            self.reads(stmt.value, state)
            if not isinstance(stmt.target, cst.Name):
                self.reads(stmt.target, state)
                return state
            self.read(stmt.target, state)
            out = self.bind(stmt.target, "value", state)
            self.merged.append((self.by_node[id(stmt.target)], id(stmt.target)))
            return out
        if isinstance(stmt, (cst.Expr, cst.Return)):
            self.reads(stmt.value, state)
            return state if isinstance(stmt, cst.Expr) else None
        if isinstance(stmt, cst.Raise):
            self.reads(stmt.exc, state)
            self.reads(stmt.cause, state)
            return None
        if isinstance(stmt, cst.Assert):
            self.reads(stmt.test, state)
            self.reads(stmt.msg, state)
            return state
        if isinstance(stmt, (cst.Break, cst.Continue)):
            if not self.loops:
                raise _Unsupported("break outside a loop")
            ctx = self.loops[-1]
            (ctx.breaks if isinstance(stmt, cst.Break) else ctx.continues).append(state)
            return None
        if isinstance(stmt, (cst.Del, cst.Global, cst.Nonlocal, cst.Import, cst.ImportFrom)):
            self.pin_all(stmt)
            return state
        if isinstance(stmt, cst.Pass):
            return state
        raise _Unsupported(type(stmt).__name__)

    def target(self, target: cst.BaseExpression, kind: str, state: State) -> State:
        """Bind an assignment or loop target (names bound, subscripts and attributes read)."""
        if isinstance(target, cst.Name):
            return self.bind(target, kind, state)
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                state = self.target(element.value, "value", state)
            return state
        if isinstance(target, cst.StarredElement):
            return self.target(target.value, "value", state)
        self.reads(target, state)
        return state


class _Reads(cst.CSTVisitor):
    """The names an expression reads (nested scopes: their names pinned instead)."""

    def __init__(self, flow: _Flow) -> None:
        super().__init__()
        self.flow = flow
        self.found: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> bool:
        if node.value in _OPAQUE:
            raise _Unsupported(node.value)
        self.found.append(node)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        self.flow.pin_all(node.target)
        walk(node.value, self)
        return False

    def _scope(self, node: cst.CSTNode) -> bool:
        self.flow.pin_all(node)
        return False

    visit_Lambda = visit_ListComp = visit_SetComp = _scope
    visit_DictComp = visit_GeneratorExp = _scope


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def _all_names(node: cst.CSTNode) -> set[str]:
    names = _Names()
    walk(node, names)
    return names.found


def _is_range(expr: cst.BaseExpression) -> bool:
    func = expr.func if isinstance(expr, cst.Call) else None
    return isinstance(func, cst.Name) and func.value == "range"


def _value_kind(value: cst.BaseExpression) -> str:
    """The kind of binding ``name = value`` is: a function, an integer, any other value."""
    if isinstance(value, cst.Lambda):
        return "function"
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return "integer" if isinstance(value, cst.Integer) else "value"


def _unrelated(webs: list[set[str]]) -> bool:
    """Whether webs bound by these kinds of statement hold unrelated values: a function
    and anything else, or the items of a loop over a container and an integer (a range's
    counter, an integer literal). Other reuses (a parameter rebound to a value computed
    from it, a loop's item rebound in its body) are one variable's values, left alone."""
    classes = set()
    for kinds in webs:
        if "function" in kinds:
            classes.add("function")
        elif "item" in kinds:
            classes.add("item")
        elif kinds & {"counter", "integer"}:
            classes.add("integer")
        else:
            classes.add("value")
    return ("function" in classes and len(classes) > 1) or {"item", "integer"} <= classes


class _Find:
    """Union-find over binding ids."""

    def __init__(self, size: int) -> None:
        self.up = list(range(size))

    def root(self, item: int) -> int:
        while self.up[item] != item:
            self.up[item] = self.up[self.up[item]]
            item = self.up[item]
        return item

    def union(self, items: Iterable[int]) -> None:
        items = list(items)
        for item in items[1:]:
            self.up[self.root(item)] = self.root(items[0])


def _new_names(flow: _Flow, node: cst.FunctionDef) -> dict[int, str]:
    """id(Name node) -> its new name, for the webs after the first of each split name."""
    find = _Find(len(flow.names))
    for reached in flow.uses.values():
        find.union(reached)
    for binding, read in flow.merged:
        find.union([binding, *flow.uses[read]])
    webs: dict[str, dict[int, list[int]]] = {}  # name -> web root -> binding ids, in order
    used_unbound = {b for reached in flow.uses.values() for b in reached}
    for binding, name in enumerate(flow.names):
        if name in flow.pinned or (not flow.kinds[binding] and binding not in used_unbound):
            continue
        webs.setdefault(name, {}).setdefault(find.root(binding), []).append(binding)
    renamed: dict[int, str] = {}  # web root -> its new name
    taken: set[str] | None = None
    for name, by_root in webs.items():
        if not _unrelated([{flow.kinds[b] for b in bs} for bs in by_root.values()]):
            continue
        taken = _all_names(node) if taken is None else taken
        ordered = sorted(by_root, key=lambda root: _first(by_root[root], flow))
        for number, root in enumerate(ordered[1:], start=2):
            new = f"{name}_{number}"
            while new in taken:
                new += "_"
            taken.add(new)
            renamed[root] = new
    if not renamed:
        return {}
    out: dict[int, str] = {}
    for key, binding in flow.by_node.items():
        new = renamed.get(find.root(binding))
        if new is not None:
            out[key] = new
    for key, reached in flow.uses.items():
        new = renamed.get(find.root(next(iter(reached))))
        if new is not None:
            out[key] = new
    return out


def _statement_kinds(stmts: Sequence[cst.CSTNode]) -> set[str]:
    """The kinds of binding among ``stmts`` and the statements nested in them (not in
    nested functions), each kind once: what :func:`_unrelated` could split at most."""
    kinds: set[str] = set()
    todo = list(stmts)
    while todo:
        stmt = todo.pop()
        kind = type(stmt)
        if kind is cst.SimpleStatementLine:
            for small in stmt.body:  # type: ignore[attr-defined]
                if type(small) in (cst.Assign, cst.AnnAssign) and small.value is not None:
                    kinds.add(_value_kind(small.value))
            continue
        if kind is cst.FunctionDef:
            kinds.add("function")
            continue
        if kind is cst.For:
            kinds.add("counter" if _is_range(stmt.iter) else "item")  # type: ignore[attr-defined]
        for part in _PARTS.get(kind, ()):
            child = getattr(stmt, part)
            if child is None:
                continue
            if isinstance(child, (list, tuple)):
                todo.extend(child)
            elif isinstance(child.body, (list, tuple)):
                todo.extend(child.body)
            else:
                todo.append(child)
    return kinds


#: compound statement -> the fields holding its blocks
_PARTS: dict[type, tuple[str, ...]] = {
    cst.If: ("body", "orelse"),
    cst.Else: ("body",),
    cst.IndentedBlock: ("body",),
    cst.SimpleStatementSuite: ("body",),
    cst.For: ("body", "orelse"),
    cst.While: ("body", "orelse"),
    cst.Try: ("body", "handlers", "orelse", "finalbody"),
    cst.ExceptHandler: ("body",),
    cst.Finally: ("body",),
    cst.With: ("body",),
}


def _first(bindings: list[int], flow: _Flow) -> int:
    """Source order of a web: parameters and "unbound yet" first, then its first binding."""
    return min(-1 if flow.kinds[b] in ("", "param") else b for b in bindings)


class _Rename(cst.CSTTransformer):
    """Give the chosen ``Name`` nodes their new names, remembering each changed node's
    original (for positions and the ``# L`` comments)."""

    def __init__(self, names: dict[int, str], origin: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.names, self.origin = names, origin

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.names.get(id(original_node))
        return updated_node.with_changes(value=new) if new else updated_node

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        result = super().on_leave(original_node, updated_node)
        if isinstance(result, cst.CSTNode) and result is not original_node:
            self.origin[result] = original_node
        return result


class _Positions:
    """The positions of the user's nodes, asked through renamed nodes."""

    def __init__(self, positions: Any, origin: dict[cst.CSTNode, cst.CSTNode]) -> None:
        self._positions, self._origin = positions, origin

    def get(self, node: cst.CSTNode, default: Any = None) -> Any:
        return self._positions.get(self._origin.get(node, node), default)

    def __getitem__(self, node: cst.CSTNode) -> Any:
        return self._positions[self._origin.get(node, node)]

    def line_text(self, node: cst.CSTNode) -> str | None:
        return self._positions.line_text(self._origin.get(node, node))

    def returns_value(self, node: cst.FunctionDef) -> bool | None:
        return self._positions.returns_value(self._origin.get(node, node))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._positions, name)


def split_reused_names(
    parsed: ParsedFunction,
) -> tuple[ParsedFunction, dict[cst.CSTNode, cst.CSTNode]]:
    """``parsed`` with each name reused for unrelated values renamed apart (see the
    module's docstring), and the map from each changed node to the user's node; ``parsed``
    itself and an empty map when nothing is renamed."""
    node = parsed.node
    if not isinstance(node, cst.FunctionDef) or parsed.filename.startswith("<s2s_ad"):
        return parsed, {}
    kinds = _statement_kinds(node.body.body)
    if "function" not in kinds and not ("item" in kinds and kinds & {"counter", "integer"}):
        return parsed, {}  # no bindings of the kinds a split needs: the common case, fast
    flow = _Flow()
    state: State = {}
    params = node.params
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    starstar = [params.star_kwarg] if params.star_kwarg is not None else []
    for param in (*params.posonly_params, *params.params, *star, *params.kwonly_params):
        state = flow.bind(param.name, "param", state)
    for param in starstar:
        state = flow.bind(param.name, "param", state)
    try:
        flow.block(node.body.body, state)
    except _Unsupported:
        return parsed, {}
    names = _new_names(flow, node)
    if not names:
        return parsed, {}
    origin: dict[cst.CSTNode, cst.CSTNode] = {}
    renamed = node.visit(_Rename(names, origin))
    assert isinstance(renamed, cst.FunctionDef)
    positions = _Positions(parsed.positions, origin)
    return dataclasses.replace(parsed, node=renamed, positions=positions), origin


def user_names(origin: dict[cst.CSTNode, cst.CSTNode]) -> dict[str, str]:
    """Each new name of :func:`split_reused_names`' map ``origin`` -> the user's name."""
    return {
        new.value: old.value
        for new, old in origin.items()
        if isinstance(new, cst.Name) and isinstance(old, cst.Name) and new.value != old.value
    }
