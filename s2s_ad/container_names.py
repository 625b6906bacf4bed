"""Names of a function that hold a list or tuple wherever they are read.

``c = a + b`` of two names is array addition unless both are lists or tuples; the
normalizer lowers it to the concatenation ``_ad.concat`` only when this scan proves one
side is a container. A local name qualifies when each of its bindings is a list or
tuple display, a list comprehension, a ``list(...)``/``tuple(...)``/``sorted(...)`` call
or a concatenation with a side that qualifies; a parameter when it is annotated as a
list or tuple (``list``, ``tuple[...]``, ``Sequence[...]``) or filled with ``.append`` /
``.extend`` and never rebound, and ``*args``. Any other binding (a loop target, unpacking, walrus,
``global``, a nested scope's ``nonlocal``) leaves the name out.

Two sides that may each hold a container (:func:`maybe_containers`: parameters never
rebound and not annotated as something else, and attributes such as ``self.layers``)
are joined by ``_ad.concat`` too, which adds when they turn out to be arrays: exact for
both meanings, decided when the code runs.
"""

from __future__ import annotations

import libcst as cst

from .cstwalk import walk

_CONTAINER_CALLS = {"list", "tuple", "sorted"}
_CONTAINER_TYPES = {"list", "tuple", "List", "Tuple", "Sequence", "MutableSequence"}
_FILLERS = {"append", "extend", "insert"}


class Scan(cst.CSTVisitor):
    """Bindings of the function's own scope (nested scopes only spoil names).

    Run with :func:`cstwalk.walk` (read only: ``node.visit`` would rebuild every node).
    """

    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression]] = {}
        self.spoiled: set[str] = set()
        self.filled: set[str] = set()
        self.arithmetic: set[str] = set()  # operands of ``-``, ``*``, ``@``, ``**``, ...
        self.depth = 0

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name) and value is not None and self.depth == 0:
            self.values.setdefault(target.value, []).append(value)
            return
        for name in _names(target):
            self.spoiled.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, None)

    def visit_Param(self, node: cst.Param) -> None:
        self.spoiled.add(node.name.value)  # a nested def's or lambda's parameter

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name, None)

    def visit_Global(self, node: cst.Global) -> None:
        self.spoiled.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.spoiled.update(n.name.value for n in node.names)

    def visit_Del(self, node: cst.Del) -> None:
        self.spoiled.update(_names(node.target))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is not cst.Add:
            for side in (node.left, node.right):
                if type(side) is cst.Name:
                    self.arithmetic.add(side.value)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.expression, cst.Name) and not isinstance(node.operator, cst.Not):
            self.arithmetic.add(node.expression.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _FILLERS
            and isinstance(func.value, cst.Name)
        ):
            self.filled.add(func.value.value)

    def _enter(self, node: cst.CSTNode) -> None:
        self.depth += 1

    def _leave(self, node: cst.CSTNode) -> None:
        self.depth -= 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave(original_node)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._enter(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._leave(original_node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._enter(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._leave(original_node)


def _names(node: cst.CSTNode) -> set[str]:
    """Every name under a binding target."""
    if isinstance(node, cst.Name):
        return {node.value}
    out: set[str] = set()
    for child in node.children:
        out |= _names(child)
    return out


def _annotated(param: cst.Param) -> bool:
    """Whether a parameter's annotation names a list or tuple type."""
    if param.annotation is None:
        return False
    ann = param.annotation.annotation
    if isinstance(ann, cst.Subscript):
        ann = ann.value
    if isinstance(ann, cst.Attribute):
        return ann.attr.value in _CONTAINER_TYPES
    return isinstance(ann, cst.Name) and ann.value in _CONTAINER_TYPES


def is_sequence(node: cst.BaseExpression, known: set[str]) -> bool:
    """Whether ``node`` evaluates to a list or tuple given the names in ``known``.

    Node types are compared with ``is`` (libcst's concrete node classes have no
    subclasses, and ``isinstance`` against them goes through ``ABCMeta``: this query runs
    for every operand of every ``+``)."""
    kind = type(node)
    if kind is cst.List or kind is cst.Tuple or kind is cst.ListComp:
        return True
    if kind is cst.Name:
        return node.value in known
    if kind is cst.Call:
        func = node.func
        return type(func) is cst.Name and func.value in _CONTAINER_CALLS
    if kind is cst.BinaryOperation:
        op = type(node.operator)
        left, right = node.left, node.right
        if op is cst.Add:
            return is_sequence(left, known) or is_sequence(right, known)
        if op is cst.Multiply:  # ``[x] * n``: a list repeated
            return type(left) in _LITERALS or type(right) in _LITERALS
    return False


#: list and tuple displays
_LITERALS = frozenset({cst.List, cst.Tuple})


def container_names(node: cst.FunctionDef | cst.Lambda) -> set[str]:
    """Names of ``node``'s own scope that hold a list or tuple wherever they are read."""
    if not isinstance(node, cst.FunctionDef):
        return set()
    return _container_names(node, _scan(node))


def _scan(node: cst.FunctionDef) -> Scan:
    """The bindings, fillers and arithmetic operands of ``node``'s body."""
    scan = Scan()
    walk(node.body, scan)
    return scan


def _container_names(node: cst.FunctionDef, scan: Scan) -> set[str]:
    params = node.params
    all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
    known: set[str] = set()
    for p in all_params:
        name = p.name.value
        if name in scan.values or name in scan.spoiled:
            continue
        if _annotated(p) or name in scan.filled:
            known.add(name)
    star = params.star_arg
    if isinstance(star, cst.Param) and star.name.value not in scan.spoiled:
        if star.name.value not in scan.values:
            known.add(star.name.value)  # ``*args`` is a tuple
    # a parameter rebound later holds what the caller passed before: never a candidate
    every = [*all_params, star, params.star_kwarg]
    bound = {p.name.value for p in every if isinstance(p, cst.Param)}
    candidates = {k: v for k, v in scan.values.items() if k not in scan.spoiled and k not in bound}
    changed = True
    while changed:  # a concatenation qualifies once a side does
        changed = False
        for name, values in candidates.items():
            if name not in known and all(is_sequence(v, known) for v in values):
                known.add(name)
                changed = True
    return known


def maybe_containers(node: cst.FunctionDef | cst.Lambda) -> set[str]:
    """Parameters of ``node`` that may hold a list or tuple: never rebound, never an
    operand of arithmetic other than ``+`` (``x * w``: an array), and either unannotated
    or annotated as a container (``enc + dec`` of two of them is joined by
    ``_ad.concat``, which tells concatenation from addition when it runs)."""
    if not isinstance(node, cst.FunctionDef):
        return set()
    return _maybe_containers(node, _scan(node))


def _maybe_containers(node: cst.FunctionDef, scan: Scan) -> set[str]:
    params = node.params
    out: set[str] = set()
    for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
        name = p.name.value
        if name in scan.values or name in scan.spoiled or name in scan.arithmetic:
            continue
        if p.annotation is None or _annotated(p):
            out.add(name)
    return out


def containers(node: cst.FunctionDef | cst.Lambda) -> tuple[set[str], set[str]]:
    """:func:`container_names` and :func:`maybe_containers` of ``node`` from one scan."""
    if not isinstance(node, cst.FunctionDef):
        return set(), set()
    return container_sets(node, _scan(node))


def container_sets(node: cst.FunctionDef, scan: Scan) -> tuple[set[str], set[str]]:
    """:func:`containers` of ``node`` given the :class:`Scan` of its body (made by a
    walk shared with other scans)."""
    return _container_names(node, scan), _maybe_containers(node, scan)


def call_bound(node: cst.FunctionDef | cst.Lambda) -> dict[str, list[cst.BaseExpression]]:
    """Names of ``node``'s own scope (not its parameters) bound only by plain assignments
    and never an operand of arithmetic other than ``+``, with the values bound to them
    (``enc = encoder_layers()``: see ``norm_concat``)."""
    if not isinstance(node, cst.FunctionDef):
        return {}
    scan = _scan(node)
    params = node.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    bound = {p.name.value for p in every}
    return {
        k: v
        for k, v in scan.values.items()
        if k not in scan.spoiled and k not in scan.arithmetic and k not in bound
    }
