"""``ast.unparse`` for the statements the optimizer writes back, without its visitor.

The passes over generated code unparse a few hundred small statements per transform
(folded lines, rewritten ones, loop and branch heads). ``ast.unparse`` goes through a
``NodeVisitor`` with context managers for each parenthesis; this module writes the same
text from a few functions. It follows ``ast._Unparser`` rule by rule, including where
that class keeps the precedence of a node by identity for the whole call (a node held
twice in one tree is written with the precedence last set for it). A node it does not
know (a lambda, a comprehension, an f-string, a dict display...) makes it hand the whole
tree to ``ast.unparse``: the text is always that function's.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable

# ``ast._Precedence``'s values
_TUPLE, _YIELD, _TEST, _OR, _AND, _NOT, _CMP, _EXPR = 2, 3, 4, 5, 6, 7, 8, 9
_FACTOR, _POWER, _ATOM = 15, 16, 18

_BINOPS: dict[type, tuple[str, int]] = {
    ast.Add: ("+", 13),
    ast.Sub: ("-", 13),
    ast.Mult: ("*", 14),
    ast.MatMult: ("@", 14),
    ast.Div: ("/", 14),
    ast.Mod: ("%", 14),
    ast.LShift: ("<<", 12),
    ast.RShift: (">>", 12),
    ast.BitOr: ("|", 9),
    ast.BitXor: ("^", 10),
    ast.BitAnd: ("&", 11),
    ast.FloorDiv: ("//", 14),
    ast.Pow: ("**", 16),
}
_UNOPS: dict[type, tuple[str, int]] = {
    ast.Invert: ("~", _FACTOR),
    ast.Not: ("not ", _NOT),
    ast.UAdd: ("+", _FACTOR),
    ast.USub: ("-", _FACTOR),
}
_CMPOPS: dict[type, str] = {
    ast.Eq: " == ",
    ast.NotEq: " != ",
    ast.Lt: " < ",
    ast.LtE: " <= ",
    ast.Gt: " > ",
    ast.GtE: " >= ",
    ast.Is: " is ",
    ast.IsNot: " is not ",
    ast.In: " in ",
    ast.NotIn: " not in ",
}
_INFSTR = "1e" + repr(sys.float_info.max_10_exp + 1)


class _Unknown(Exception):
    """A node this module does not write: ``ast.unparse`` writes the tree."""


def unparse(node: ast.AST) -> str:
    """``ast.unparse(node)``."""
    out: list[str] = []
    try:
        _Writer(out).node(node)
    except _Unknown:
        return ast.unparse(node)
    return "".join(out)


class _Writer:
    """One call's text and the precedences set on its nodes (by identity, as
    ``ast._Unparser`` keeps them)."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.prec: dict[int, int] = {}  # by id: the nodes are held by the tree written

    def set(self, prec: int, node: ast.AST) -> None:
        self.prec[id(node)] = prec

    def node(self, node: ast.AST) -> None:
        write = _WRITERS.get(node.__class__)
        if write is None:
            raise _Unknown
        write(self, node)

    # --- statements ---------------------------------------------------------------------

    def assign(self, node: ast.Assign) -> None:
        if node.type_comment is not None or not hasattr(node, "lineno"):
            raise _Unknown  # (``ast.unparse`` reads ``lineno`` for a type comment)
        for target in node.targets:
            self.set(_TUPLE, target)
            self.node(target)
            self.out.append(" = ")
        self.node(node.value)

    def aug_assign(self, node: ast.AugAssign) -> None:
        self.node(node.target)
        self.out.append(" " + _BINOPS[node.op.__class__][0] + "= ")
        self.node(node.value)

    def expr_stmt(self, node: ast.Expr) -> None:
        self.set(_YIELD, node.value)
        self.node(node.value)

    def return_(self, node: ast.Return) -> None:
        self.out.append("return")
        if node.value:
            self.out.append(" ")
            self.node(node.value)

    # --- expressions --------------------------------------------------------------------

    def name(self, node: ast.Name) -> None:
        self.out.append(node.id)

    def constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, tuple):
            raise _Unknown
        if value is ...:
            self.out.append("...")
            return
        if node.kind == "u":
            self.out.append("u")
        if isinstance(value, (float, complex)):
            text = repr(value).replace("inf", _INFSTR).replace("nan", f"({_INFSTR}-{_INFSTR})")
            self.out.append(text)
        else:
            self.out.append(repr(value))

    def attribute(self, node: ast.Attribute) -> None:
        value = node.value
        self.set(_ATOM, value)
        self.node(value)
        if isinstance(value, ast.Constant) and isinstance(value.value, int):
            self.out.append(" ")
        self.out.append("." + node.attr)

    def call(self, node: ast.Call) -> None:
        self.set(_ATOM, node.func)
        self.node(node.func)
        out = self.out
        out.append("(")
        comma = False
        for e in node.args:
            if comma:
                out.append(", ")
            comma = True
            self.node(e)
        for k in node.keywords:
            if comma:
                out.append(", ")
            comma = True
            out.append("**" if k.arg is None else k.arg + "=")
            self.node(k.value)
        out.append(")")

    def starred(self, node: ast.Starred) -> None:
        self.out.append("*")
        self.set(_EXPR, node.value)
        self.node(node.value)

    def _open(self, prec: int, node: ast.AST) -> bool:
        """Write ``(`` when ``node``, of precedence ``prec``, needs parentheses."""
        paren = self.prec.get(id(node), _TEST) > prec
        if paren:
            self.out.append("(")
        return paren

    def binop(self, node: ast.BinOp) -> None:
        op, prec = _BINOPS[node.op.__class__]
        paren = self._open(prec, node)
        higher = min(prec + 1, _ATOM)
        left, right = (higher, prec) if prec == _POWER else (prec, higher)
        self.set(left, node.left)
        self.node(node.left)
        self.out.append(f" {op} ")
        self.set(right, node.right)
        self.node(node.right)
        if paren:
            self.out.append(")")

    def unaryop(self, node: ast.UnaryOp) -> None:
        op, prec = _UNOPS[node.op.__class__]
        paren = self._open(prec, node)
        self.out.append(op)
        self.set(prec, node.operand)
        self.node(node.operand)
        if paren:
            self.out.append(")")

    def compare(self, node: ast.Compare) -> None:
        paren = self._open(_CMP, node)
        self.set(_CMP + 1, node.left)
        for e in node.comparators:
            self.set(_CMP + 1, e)
        self.node(node.left)
        for o, e in zip(node.ops, node.comparators):
            self.out.append(_CMPOPS[o.__class__])
            self.node(e)
        if paren:
            self.out.append(")")

    def boolop(self, node: ast.BoolOp) -> None:
        word, prec = (" and ", _AND) if isinstance(node.op, ast.And) else (" or ", _OR)
        paren = self._open(prec, node)
        for k, value in enumerate(node.values):
            if k:
                self.out.append(word)
            prec = min(prec + 1, _ATOM)
            self.set(prec, value)
            self.node(value)
        if paren:
            self.out.append(")")

    def subscript(self, node: ast.Subscript) -> None:
        self.set(_ATOM, node.value)
        self.node(node.value)
        self.out.append("[")
        index = node.slice
        if isinstance(index, ast.Tuple) and index.elts:
            self._items(index.elts)
        else:
            self.node(index)
        self.out.append("]")

    def slice(self, node: ast.Slice) -> None:
        if node.lower:
            self.node(node.lower)
        self.out.append(":")
        if node.upper:
            self.node(node.upper)
        if node.step:
            self.out.append(":")
            self.node(node.step)

    def tuple(self, node: ast.Tuple) -> None:
        paren = not node.elts or self.prec.get(id(node), _TEST) > _TUPLE
        if paren:
            self.out.append("(")
        self._items(node.elts)
        if paren:
            self.out.append(")")

    def list(self, node: ast.List) -> None:
        self.out.append("[")
        for k, e in enumerate(node.elts):
            if k:
                self.out.append(", ")
            self.node(e)
        self.out.append("]")

    def _items(self, elts: list[ast.expr]) -> None:
        """``ast._Unparser.items_view``: one item with a trailing comma."""
        if len(elts) == 1:
            self.node(elts[0])
            self.out.append(",")
            return
        for k, e in enumerate(elts):
            if k:
                self.out.append(", ")
            self.node(e)


_WRITERS: dict[type, Callable[[_Writer, ast.AST], None]] = {
    ast.Assign: _Writer.assign,
    ast.AugAssign: _Writer.aug_assign,
    ast.Expr: _Writer.expr_stmt,
    ast.Return: _Writer.return_,
    ast.Name: _Writer.name,
    ast.Constant: _Writer.constant,
    ast.Attribute: _Writer.attribute,
    ast.Call: _Writer.call,
    ast.Starred: _Writer.starred,
    ast.BinOp: _Writer.binop,
    ast.UnaryOp: _Writer.unaryop,
    ast.Compare: _Writer.compare,
    ast.BoolOp: _Writer.boolop,
    ast.Subscript: _Writer.subscript,
    ast.Slice: _Writer.slice,
    ast.Tuple: _Writer.tuple,
    ast.List: _Writer.list,
}  # type: ignore[dict-item]
