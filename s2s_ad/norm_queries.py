"""Questions the normalizer asks of libcst nodes, read-only: a function's single
returned expression, its parameters, the nodes of one kind in its own scope (its
``return`` and ``yield`` nodes), the definitions nested in it, whether it returns early
or loops forever, whether an expression is pure, the names a target binds, the header
text of a compound statement.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from .cstwalk import holds, kind_table, walk
from .source import ParsedFunction


def inner_defs(node: cst.FunctionDef) -> list[cst.CSTNode]:
    """Function and class definitions nested in ``node``'s body."""
    found: list[cst.CSTNode] = []

    class Visit(cst.CSTVisitor):
        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            found.append(n)
            return False

        def visit_ClassDef(self, n: cst.ClassDef) -> bool:
            found.append(n)
            return False

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

    node.body.visit(Visit())
    return found


def early_return(node: cst.FunctionDef) -> bool:
    """Whether a ``return`` stands anywhere but as the function's last statement."""
    returns: list[cst.Return] = []

    class Visit(cst.CSTVisitor):
        def visit_Return(self, n: cst.Return) -> None:
            returns.append(n)

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

    node.body.visit(Visit())
    last = node.body.body[-1] if node.body.body else None
    final = (
        last.body[-1]
        if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)
        else None
    )
    return any(r is not final for r in returns)


def all_params(params: cst.Parameters) -> list[cst.Param]:
    """Every parameter of a signature, ``*args`` and ``**kwargs`` included."""
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def single_return(node: cst.FunctionDef) -> cst.BaseExpression | None:
    """The returned expression of a function whose body is one ``return`` (after a docstring)."""
    if not isinstance(node.body, cst.IndentedBlock):
        stmts = list(node.body.body)
    else:
        stmts = []
        for line in node.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                return None
            stmts.extend(line.body)
    if stmts and isinstance(stmts[0], cst.Expr) and isinstance(stmts[0].value, cst.SimpleString):
        stmts = stmts[1:]
    if len(stmts) == 1 and isinstance(stmts[0], cst.Return) and stmts[0].value is not None:
        return stmts[0].value
    return None


_IMPURE = (
    cst.Call,
    cst.Lambda,
    cst.Yield,
    cst.Await,
    cst.NamedExpr,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.IfExp,
    cst.BooleanOperation,
)
_IMPURE_TYPES = kind_table(_IMPURE)


#: the expressions ``is_pure`` looks into (any other is taken as impure)
_COMPOUND_TYPES = kind_table(
    (cst.Subscript, cst.Attribute, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)
)


def is_pure(node: cst.BaseExpression) -> bool:
    """Whether an expression is free of calls and side effects (safe to compute once)."""
    if not _COMPOUND_TYPES[type(node)]:
        return False
    return not holds(node, _IMPURE_TYPES)


def header(parsed: ParsedFunction, node: cst.If | cst.For | cst.While) -> str:
    """The first line of a compound statement (``for i in range(n):``), for comments."""
    if isinstance(node, cst.If):
        return f"if {parsed.code(node.test)}:"
    if isinstance(node, cst.While):
        return f"while {parsed.code(node.test)}:"
    return f"for {parsed.code(node.target)} in {parsed.code(node.iter)}:"


def endless_loop(fdef: cst.FunctionDef) -> cst.While | None:
    """A ``while True:`` loop of a generator that neither breaks nor returns: run to its
    end at once (as generators are here), it would never stop."""
    for loop in own_nodes(fdef, cst.While):
        assert isinstance(loop, cst.While)
        test = loop.test
        if not (isinstance(test, cst.Name) and test.value == "True"):
            continue
        if not (_inside(loop, cst.Break) or _inside(loop, cst.Return)):
            return loop
    return None


def _inside(node: cst.CSTNode, kind: type[cst.CSTNode]) -> bool:
    """Whether ``node`` holds a node of type ``kind`` outside nested functions."""
    found: list[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, kind):
                found.append(n)
            return not isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef))

    walk(node, _Find())
    return bool(found)


def own_nodes(fdef: cst.FunctionDef, kind: type[cst.CSTNode]) -> list[cst.CSTNode]:
    """The nodes of type ``kind`` in a function's own scope (not in nested functions,
    lambdas or classes): its ``return`` statements, its ``yield`` expressions."""
    own = OwnNodes(fdef, kind)
    walk(fdef, own)
    return own.found


class OwnNodes(cst.CSTVisitor):
    """The nodes of one kind in a function's own scope (see ``own_nodes``)."""

    def __init__(self, fdef: cst.FunctionDef, kind: type[cst.CSTNode]) -> None:
        self.fdef, self.kind = fdef, kind
        self.is_kind = kind_table(kind)
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.is_kind[type(node)]:
            self.found.append(node)
        if _SCOPE_TYPES[type(node)]:
            return node is self.fdef
        return True


_SCOPE_TYPES = kind_table((cst.FunctionDef, cst.Lambda, cst.ClassDef))


def yields_in(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The ``yield`` expressions anywhere in ``node``."""
    found: list[cst.CSTNode] = []

    class _V(cst.CSTVisitor):
        def visit_Yield(self, n: cst.Yield) -> None:
            found.append(n)

    node.visit(_V())
    return iter(found)


def target_names(target: cst.BaseExpression) -> set[str]:
    """The names an assignment target binds, nested tuples and starred entries included."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(target_names(el.value) for el in target.elements))
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def declared_nonlocal(fdef: cst.FunctionDef) -> set[str]:
    """The names a function's own body declares ``nonlocal`` (not its nested scopes')."""
    return {
        item.name.value
        for node in own_nodes(fdef, cst.Nonlocal)
        if isinstance(node, cst.Nonlocal)
        for item in node.names
    }


def bound_to_dicts(fdef: cst.CSTNode, name: str) -> bool:
    """Whether every binding of ``name`` in ``fdef`` (at least one; a parameter has
    none) is ``name = `` a dict display, a dict comprehension or a call of ``dict``."""
    values: list[cst.BaseExpression] = []
    other = False

    class Bindings(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal other
            for t in node.targets:
                if isinstance(t.target, cst.Name) and t.target.value == name:
                    values.append(node.value)
                elif name in target_names(t.target):
                    other = True

        def visit_Param(self, node: cst.Param) -> None:
            nonlocal other
            other = other or node.name.value == name

        def visit_For(self, node: cst.For) -> None:
            nonlocal other
            other = other or name in target_names(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            nonlocal other
            other = other or name in target_names(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            nonlocal other
            other = other or name in target_names(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            nonlocal other
            other = other or name in target_names(node.target)

    fdef.visit(Bindings())

    def is_dict(v: cst.BaseExpression) -> bool:
        if isinstance(v, (cst.Dict, cst.DictComp)):
            return True
        return isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value == "dict"

    return not other and bool(values) and all(is_dict(v) for v in values)
