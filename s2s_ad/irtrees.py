"""Normal-form statements as :mod:`ast` trees, built without parsing their text.

The forward sweep copies most of the user's statements as they are (one operation each,
in normal form); :func:`assign` builds the tree of ``target = <expression>`` from the
normal form's own parts, the same tree ``ast.parse`` gives for the text
``sweep_base.render_expr`` writes. Source snippets the normal form keeps as text (a
constant, an index, a callee) are parsed once per text and copied. Where the text would
not parse into the composed tree (a negative constant before ``**``, a callee that is
not a dotted name, NumPy's ``np.r_[...]``) ``None`` says so, and the text is parsed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from . import ir

_BINOPS: dict[str, ast.operator] = {
    "+": ast.Add(),
    "-": ast.Sub(),
    "*": ast.Mult(),
    "/": ast.Div(),
    "//": ast.FloorDiv(),
    "%": ast.Mod(),
    "**": ast.Pow(),
    "@": ast.MatMult(),
    "<<": ast.LShift(),
    ">>": ast.RShift(),
    "|": ast.BitOr(),
    "&": ast.BitAnd(),
    "^": ast.BitXor(),
}
_UNARY: dict[str, ast.unaryop] = {
    "-": ast.USub(),
    "+": ast.UAdd(),
    "~": ast.Invert(),
    "not": ast.Not(),
}
_COMPARE: dict[str, ast.cmpop] = {
    "==": ast.Eq(),
    "!=": ast.NotEq(),
    "<": ast.Lt(),
    "<=": ast.LtE(),
    ">": ast.Gt(),
    ">=": ast.GtE(),
    "is": ast.Is(),
    "is not": ast.IsNot(),
    "in": ast.In(),
    "not in": ast.NotIn(),
}
_LOAD, _STORE = ast.Load(), ast.Store()

#: Snippets parsed once: text -> its expression (``None``: not one on its own).
_PARSED: dict[tuple[str, str], ast.expr | None] = {}
#: Kept at most this many snippets (and callees) before starting again.
_KEEP = 1 << 13


class _Unsafe(Exception):
    """The composed tree might differ from the parsed text: parse the text."""


def _parsed(text: str, wrap: str = "{}") -> ast.expr:
    key = (text, wrap)
    node = _PARSED.get(key, ...)
    if node is ...:
        try:
            node = ast.parse(wrap.format(text), mode="eval").body
        except SyntaxError:
            node = None
        if len(_PARSED) >= _KEEP:
            _PARSED.clear()
        _PARSED[key] = node
    if node is None:
        raise _Unsafe
    return node  # type: ignore[return-value]


def _clone(node: ast.AST) -> ast.AST:
    """A fresh copy of a small tree (the optimizer rewrites trees in place)."""
    if isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
        return node  # shared, as ``ast.parse`` shares them
    values = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            value = _clone(value)
        elif isinstance(value, list):
            value = [_clone(v) if isinstance(v, ast.AST) else v for v in value]
        values.append(value)
    return type(node)(*values)


def _atom(atom: ir.Atom, text: Callable[[ir.Atom], str]) -> ast.expr:
    code = text(atom)
    if isinstance(atom, ir.Var) and code == atom.name:
        return ast.Name(code, _LOAD)
    node = _parsed(code)
    if isinstance(node, ast.Name):
        return ast.Name(node.id, _LOAD)
    if isinstance(node, ast.Constant) and (
        # a plain constant composes as it parses (``-1`` would not: ``-1 ** 2``)
        not isinstance(node.value, (int, float, complex))
        or code[:1].isdigit()
        or code in ("True", "False")
    ):
        return ast.Constant(node.value, node.kind)
    raise _Unsafe


#: Callees by their text: the names of the attribute chain (``np.linalg.norm``).
_CHAINS: dict[str, tuple[str, ...] | None] = {}


def _dotted(code: str) -> ast.expr:
    """A callee: a name or a chain of attributes of one."""
    chain = _CHAINS.get(code, ())
    if chain == ():
        node, names = _parsed(code), []
        while isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        chain = (node.id, *reversed(names)) if isinstance(node, ast.Name) else None
        if len(_CHAINS) >= _KEEP:
            _CHAINS.clear()
        _CHAINS[code] = chain
    if chain is None:
        raise _Unsafe
    out: ast.expr = ast.Name(chain[0], _LOAD)
    for attr in chain[1:]:
        out = ast.Attribute(out, attr, _LOAD)
    return out


def _expr(expr: ir.Expr, text: Callable[[ir.Atom], str], callee: str | None) -> ast.expr:
    if isinstance(expr, ir.Copy):
        return _atom(expr.value, text)
    if isinstance(expr, ir.BinOp):
        op = _BINOPS.get(expr.op)
        if op is None:
            raise _Unsafe
        return ast.BinOp(_atom(expr.left, text), op, _atom(expr.right, text))
    if isinstance(expr, ir.UnaryOp):
        uop = _UNARY.get(expr.op)
        if uop is None:
            raise _Unsafe
        return ast.UnaryOp(uop, _atom(expr.operand, text))
    if isinstance(expr, ir.Compare):
        ops = [_COMPARE[op] for op in expr.ops if op in _COMPARE]
        if len(ops) != len(expr.ops):
            raise _Unsafe
        return ast.Compare(_atom(expr.left, text), ops, [_atom(c, text) for c in expr.comparators])
    if isinstance(expr, ir.Call):
        args: list[ast.expr] = [_atom(a, text) for a in expr.args]
        if expr.star is not None:
            args.append(ast.Starred(_atom(expr.star, text), _LOAD))
        keywords = [ast.keyword(k, _atom(v, text)) for k, v in expr.kwargs]
        if expr.starstar is not None:
            keywords.append(ast.keyword(None, _atom(expr.starstar, text)))
        func = _dotted(callee if callee is not None else expr.callee.code)
        return ast.Call(func, args, keywords)
    if isinstance(expr, ir.Attr):
        if not isinstance(expr.obj, ir.Var):
            raise _Unsafe
        return ast.Attribute(_atom(expr.obj, text), expr.name, _LOAD)
    if isinstance(expr, ir.Subscript):
        if not isinstance(expr.obj, ir.Var):
            raise _Unsafe
        index = _parsed(expr.index.code, "_[{}]")
        assert isinstance(index, ast.Subscript)
        return ast.Subscript(_atom(expr.obj, text), _clone(index.slice), _LOAD)
    if isinstance(expr, ir.Build):
        elts = [_atom(e, text) for e in expr.elts]
        if expr.kind == "tuple":
            return ast.Tuple(elts, _LOAD)
        if expr.kind == "list":
            return ast.List(elts, _LOAD)
        if expr.kind == "dict":
            keys = [_clone(_parsed(k)) for k in expr.keys]
            return ast.Dict(keys, elts)
        raise _Unsafe
    if isinstance(expr, ir.Opaque):
        return _clone(_parsed(expr.code))  # type: ignore[return-value]
    raise _Unsafe


def assign(
    target: str,
    expr: ir.Expr,
    text: Callable[[ir.Atom], str] = str,
    callee: str | None = None,
) -> Callable[[], list[ast.stmt]] | None:
    """A maker of the tree of ``target = <expr>`` (fresh each call), atoms written by
    ``text`` and a call's callee as ``callee`` when given; ``None`` where the composed
    tree might not be the parsed text's."""
    if not target.isidentifier():
        return None

    def make() -> list[ast.stmt] | None:
        try:
            value = _expr(expr, text, callee)
        except _Unsafe:
            return None
        s = ast.Assign(targets=[ast.Name(id=target, ctx=_STORE)], value=value, type_comment=None)
        s.lineno = s.end_lineno = 1
        s.col_offset = 0
        return [s]

    return make
