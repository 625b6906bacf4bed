"""A read-only walk over libcst trees for visitors that only collect.

``CSTNode.visit`` rebuilds every node it passes (a visitor may be a transformer, so each
node is made again from its visited children and validated): on a 300-line function a
walk costs 60-100 ms. :func:`walk` reads the nodes' fields instead and makes nothing, for
the visitors of the transformer that look and do not replace (scans for names, bindings,
``return`` and ``yield`` nodes). It calls the same hooks as ``node.visit(visitor)``:

* ``on_visit``/``on_leave`` when the visitor's class overrides them, else
  ``visit_<Type>`` (returning ``False`` skips the node's children) and
  ``leave_<Type>``;
* parents before children, and children in the order of the node's fields, which is
  their order in the source except for a few expressions (``body if test else orelse``
  lists ``test`` first);
* whitespace, comments and punctuation (parentheses, commas, colons, dots) are not
  visited.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import libcst as cst

# fields holding whitespace, comments or punctuation, never an expression or statement
_SKIPPED = frozenset(
    """lpar rpar comma semicolon leading_lines lines_after_decorators newline header footer
    empty_lines colon first_colon second_colon equal dot lbracket rbracket lbrace rbrace
    relative trailing_comma asynchronous""".split()
)

_FIELDS: dict[type, tuple[str, ...]] = {}
#: visitor class -> node class -> the hooks a walk calls (see :func:`_hooks`)
_HOOKS: dict[type, dict[type, tuple[Callable[..., Any] | None, Callable[..., Any] | None]]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = tuple(
        f.name
        for f in dataclasses.fields(cls)
        if f.name not in _SKIPPED and "whitespace" not in f.name
    )
    _FIELDS[cls] = names
    return names


#: Whether a type is a libcst node (``isinstance`` against the abstract ``CSTNode`` goes
#: through ``ABCMeta`` each time: a third of a walk's cost).
_IS_NODE: dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return found


def _hook_table(
    visitor_cls: type,
) -> dict[type, tuple[Callable[..., Any] | None, Callable[..., Any] | None]]:
    """The hooks of ``visitor_cls`` by node class (filled as node classes come)."""
    table = _HOOKS.get(visitor_cls)
    if table is None:
        table = _HOOKS[visitor_cls] = {}
    return table


def _hooks(
    visitor_cls: type, node_cls: type
) -> tuple[Callable[..., Any] | None, Callable[..., Any] | None]:
    """The enter and leave hooks of ``visitor_cls`` for ``node_cls``; ``None`` for one
    the class does not define (``CSTVisitor``'s own ``visit_<Type>``/``leave_<Type>``
    are no-ops: calling them would change nothing)."""
    if visitor_cls.on_visit is not cst.CSTVisitor.on_visit:
        enter = visitor_cls.on_visit
    else:
        enter = _own(visitor_cls, f"visit_{node_cls.__name__}")
    if visitor_cls.on_leave is not cst.CSTVisitor.on_leave:
        leave = visitor_cls.on_leave
    else:
        leave = _own(visitor_cls, f"leave_{node_cls.__name__}")
    hooks = _hook_table(visitor_cls)[node_cls] = (enter, leave)
    return hooks


def _own(visitor_cls: type, name: str) -> Callable[..., Any] | None:
    """``visitor_cls``'s method ``name``, unless it is ``CSTVisitor``'s (a no-op)."""
    found = getattr(visitor_cls, name, None)
    return None if found is getattr(cst.CSTVisitor, name, None) else found


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """Visit ``node`` and its descendants with ``visitor`` (see the module docstring).

    The visitor's class should be defined once (at module level), not per call: hooks
    are looked up once per (visitor class, node class).
    """
    _walk(node, visitor, _hook_table(type(visitor)))


def _walk(node: cst.CSTNode, visitor: cst.CSTVisitor, table: dict[type, Any]) -> None:
    """:func:`walk`, with the hooks of the visitor's class (``table``)."""
    cls = type(node)
    hooks = table.get(cls)
    if hooks is None:
        hooks = _hooks(type(visitor), cls)
    enter, leave = hooks
    if enter is None or enter(visitor, node) is not False:
        fields = _FIELDS.get(cls)
        if fields is None:
            fields = _fields(cls)
        for name in fields:
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                for item in value:
                    is_node = _IS_NODE.get(type(item))
                    if is_node is None:
                        is_node = _is_node(type(item))
                    if is_node:
                        _walk(item, visitor, table)
            else:
                is_node = _IS_NODE.get(kind)
                if is_node is None:
                    is_node = _is_node(kind)
                if is_node:
                    _walk(value, visitor, table)
    if leave is not None:
        leave(visitor, node)


#: A visitor and the hooks of its class (see :func:`_hook_table`).
_Paired = tuple[cst.CSTVisitor, dict[type, Any]]


def walk_many(
    node: cst.CSTNode,
    visitors: list[cst.CSTVisitor],
    inner: tuple[cst.CSTNode, cst.CSTVisitor] | None = None,
) -> None:
    """:func:`walk` with several visitors in one pass over the tree: each is called as
    :func:`walk` would call it alone (a visitor's ``False`` skips the children for it
    only), so they must not depend on one another. ``inner``: a node under ``node`` and a
    visitor that walks only that node's subtree (found by identity; walked alone if the
    pass does not reach it)."""
    paired = [(v, _hook_table(type(v))) for v in visitors]
    within = None if inner is None else (inner[0], (inner[1], _hook_table(type(inner[1]))))
    reached = _walk_many(node, paired, within)
    if inner is not None and not reached:
        walk(inner[0], inner[1])


def _walk_many(
    node: cst.CSTNode,
    visitors: list[_Paired],
    inner: tuple[cst.CSTNode, _Paired] | None,
) -> bool:
    """:func:`walk_many` of ``node``: whether ``inner``'s node was reached."""
    reached = False
    if inner is not None and node is inner[0]:
        visitors = [*visitors, inner[1]]
        inner, reached = None, True
    cls = type(node)
    active = visitors  # a new list once a visitor skips the children
    leaves: list[tuple[Callable[..., Any], cst.CSTVisitor]] | None = None
    for k, pair in enumerate(visitors):
        visitor, table = pair
        hooks = table.get(cls)
        if hooks is None:
            hooks = _hooks(type(visitor), cls)
        enter, leave = hooks
        if enter is not None and enter(visitor, node) is False:
            if active is visitors:
                active = visitors[:k]
        elif active is not visitors:
            active.append(pair)
        if leave is not None:
            if leaves is None:
                leaves = []
            leaves.append((leave, visitor))
    if active:
        fields = _FIELDS.get(cls)
        if fields is None:
            fields = _fields(cls)
        for name in fields:
            value = getattr(node, name)
            kind = type(value)
            items = value if kind is tuple or kind is list else (value,)
            for item in items:
                is_node = _IS_NODE.get(type(item))
                if is_node is None:
                    is_node = _is_node(type(item))
                if is_node and _walk_many(item, active, inner):
                    reached, inner = True, None
    if leaves is not None:
        for leave, visitor in leaves:
            leave(visitor, node)
    return reached


def holds(node: cst.CSTNode, table: KindTable) -> bool:
    """Whether ``node`` or a node under it is of ``table``'s kinds (the nodes :func:`walk`
    visits; one loop, no visitor: a query that only looks for a kind stops at the first)."""
    todo = [node]
    pop, push = todo.pop, todo.append
    while todo:
        n = pop()
        cls = type(n)
        if table[cls]:
            return True
        fields = _FIELDS.get(cls)
        if fields is None:
            fields = _fields(cls)
        for name in fields:
            value = getattr(n, name)
            kind = type(value)
            for item in value if kind is tuple or kind is list else (value,):
                is_node = _IS_NODE.get(type(item))
                if is_node is None:
                    is_node = _is_node(type(item))
                if is_node:
                    push(item)
    return False


class KindTable(dict[type, bool]):
    """Node type -> whether it is one of ``kinds`` (a type or tuple of types), filled as
    types come: ``table[type(node)]`` answers ``isinstance(node, kinds)`` with a dict
    lookup. libcst's node classes are abstract base classes, so each ``isinstance`` goes
    through ``ABCMeta.__instancecheck__`` (once per class of a tuple), while the answer
    depends only on the node's type."""

    def __init__(self, kinds: type | tuple[type, ...]) -> None:
        super().__init__()
        self.kinds = kinds

    def __missing__(self, cls: type) -> bool:
        found = self[cls] = issubclass(cls, self.kinds)
        return found


_TABLES: dict[Any, KindTable] = {}


def kind_table(kinds: type | tuple[type, ...]) -> KindTable:
    """The :class:`KindTable` of ``kinds``, one per ``kinds`` (a hashable type or tuple)."""
    table = _TABLES.get(kinds)
    if table is None:
        table = _TABLES[kinds] = KindTable(kinds)
    return table


#: what :meth:`NodeMemo.get` returns for a node it holds no answer for
MISSING: Any = object()


class NodeMemo:
    """The answers of one read-only query, per node (libcst nodes are immutable, so an
    answer holds as long as the node lives).

    Keyed by identity (nodes do not support weak references): each entry holds its node,
    so an ``id`` is not reused while its entry stands. The memo empties itself when it
    reaches ``limit`` entries: it holds the trees of the last few transforms, not every
    tree it ever saw.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[int, tuple[cst.CSTNode, Any]] = {}

    def get(self, node: cst.CSTNode) -> Any:
        """The answer stored for ``node``, else :data:`MISSING`."""
        entry = self._entries.get(id(node))
        if entry is None or entry[0] is not node:
            return MISSING
        return entry[1]

    def put(self, node: cst.CSTNode, answer: Any) -> None:
        """Store ``answer`` for ``node``."""
        if len(self._entries) >= self.limit:
            self._entries.clear()
        self._entries[id(node)] = (node, answer)
