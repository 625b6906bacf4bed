"""Which names are views of which arrays, read off the user's libcst expressions.

A *view expression* is a chain of NumPy's view-making operations on a name: basic
indexing whose parts are static (integers, names, slices of them, ``None``, ``...``,
simple arithmetic, ``x.shape[k]``, ``len(x)``), ``.T``, ``.transpose()`` (no axes or
literal ones), ``.reshape(...)`` with static arguments and ``.ravel()``: ``h[1:]``,
``h.reshape(2, 3)[0]``, ``W.T``. A :class:`Fact` says that a name was bound to such a
chain of steps from a root name, and which names the steps read: it holds until one of
them is bound again (see :mod:`norm_views`). Whether NumPy actually made a view (a
``reshape`` may copy; an integer index of a vector gives a scalar) is decided when the
code runs (:func:`view_checks.view_of`).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .cstwalk import walk


@dataclass(frozen=True)
class Step:
    """One view-making operation: ``kind`` is ``"[]"`` (``text``: the index),
    ``"T"``, ``"transpose"`` (``text``: the axes), ``"reshape"`` (``text``: the
    arguments) or ``"ravel"``; ``check`` is the step as :func:`view_checks.view_of`
    takes it, as source."""

    kind: str
    text: str = ""
    check: str = ""

    def apply(self, src: str) -> str:
        """The source of this step applied to the expression ``src``."""
        if self.kind == "[]":
            return f"{src}[{self.text}]"
        if self.kind == "T":
            return f"{src}.T"
        if self.kind == "ravel":
            return f"{src}.ravel()"
        return f"{src}.{self.kind}({self.text})"


@dataclass(frozen=True)
class Fact:
    """A name bound to ``steps`` applied to the array ``root`` names; ``reads``: the
    names the steps read (indices, shapes)."""

    root: str
    steps: tuple[Step, ...]
    reads: frozenset[str]

    def source(self, count: int | None = None) -> str:
        """The source of the view (of its first ``count`` steps)."""
        src = self.root
        for step in self.steps[:count]:
            src = step.apply(src)
        return src

    def checks(self) -> str:
        """The steps as the tuple :func:`view_checks.view_of` takes, as source."""
        return "(" + "".join(f"{s.check}, " for s in self.steps) + ")"


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


_CONSTANTS = frozenset({"None", "True", "False", "Ellipsis"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)


def static_names(node: cst.BaseExpression) -> set[str] | None:
    """The names a static index part or shape reads (``i + 1``: ``{'i'}``; ``x.shape[0]``:
    ``{'x'}``), or ``None`` when ``node`` is anything else (a call, an attribute, ...)."""
    if isinstance(node, (cst.Integer, cst.Ellipsis)):
        return set()
    if isinstance(node, cst.Name):
        return set() if node.value in _CONSTANTS else {node.value}
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return static_names(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        left, right = static_names(node.left), static_names(node.right)
        return None if left is None or right is None else left | right
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.attr.value in ("shape", "ndim", "size")
    ):
        return {node.value.value}
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "shape"
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
        and isinstance(node.slice[0].slice.value, (cst.Integer, cst.UnaryOperation))
    ):
        return static_names(node.value)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "len"
        and len(node.args) == 1
        and not node.args[0].star
        and node.args[0].keyword is None
        and isinstance(node.args[0].value, cst.Name)
    ):
        return {"len", node.args[0].value.value}
    if isinstance(node, cst.Tuple):
        out: set[str] = set()
        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                return None
            names = static_names(el.value)
            if names is None:
                return None
            out |= names
        return out
    return None


def _index_step(node: cst.Subscript, reads: set[str]) -> Step | None:
    checks: list[str] = []
    for el in node.slice:
        part = el.slice
        if isinstance(part, cst.Index):
            if getattr(part, "star", None) is not None:
                return None
            names = static_names(part.value)
            if names is None:
                return None
            reads |= names
            checks.append("Ellipsis" if isinstance(part.value, cst.Ellipsis) else _code(part.value))
        elif isinstance(part, cst.Slice):
            bounds = []
            for bound in (part.lower, part.upper, part.step):
                if bound is None:
                    bounds.append("None")
                    continue
                names = static_names(bound)
                if names is None:
                    return None
                reads |= names
                bounds.append(_code(bound))
            checks.append(f"slice({', '.join(bounds)})")
        else:
            return None
    text = _code(cst.Subscript(value=cst.Name("_"), slice=node.slice))[2:-1]
    return Step("[]", text, f'("[]", ({"".join(c + ", " for c in checks)}))')


def _call_step(node: cst.Call, reads: set[str]) -> Step | None:
    assert isinstance(node.func, cst.Attribute)
    method = node.func.attr.value
    if any(a.keyword is not None or a.star for a in node.args):
        return None
    values = [a.value for a in node.args]
    if method == "ravel":
        return None if values else Step("ravel", "", '("ravel",)')
    if method == "transpose":
        if not values:
            return Step("T", "", '("T",)')
        if len(values) == 1 and isinstance(values[0], cst.Tuple):
            values = [el.value for el in values[0].elements]
        if not all(isinstance(v, cst.Integer) for v in values):
            return None
        axes = [int(v.value) for v in values if isinstance(v, cst.Integer)]
        if sorted(axes) != list(range(len(axes))):
            return None
        text = ", ".join(map(str, axes))
        return Step("transpose", text, f'("transpose", ({text},))')
    if method == "reshape":
        if not values:
            return None
        for v in values:
            names = static_names(v)
            if names is None:
                return None
            reads |= names
        text = ", ".join(_code(v) for v in values)
        shape = text if len(values) == 1 else f"({text})"
        return Step("reshape", text, f'("reshape", {shape})')
    return None


def view_chain(node: cst.BaseExpression) -> tuple[str, tuple[Step, ...], frozenset[str]] | None:
    """``(root, steps, names read)`` when ``node`` is a view expression (see the module's
    docstring) with at least one step, else ``None``."""
    steps: list[Step] = []
    reads: set[str] = set()
    while True:
        if isinstance(node, cst.Name):
            if not steps or node.value in _CONSTANTS:
                return None
            return node.value, tuple(steps[::-1]), frozenset(reads)
        step: Step | None
        if isinstance(node, cst.Subscript):
            step = _index_step(node, reads)
            node = node.value
        elif isinstance(node, cst.Attribute) and node.attr.value == "T":
            step = Step("T", "", '("T",)')
            node = node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("transpose", "reshape", "ravel")
        ):
            step = _call_step(node, reads)
            node = node.func.value
        else:
            return None
        if step is None:
            return None
        steps.append(step)


def inverse_axes(text: str) -> str:
    """The axes that undo ``transpose(text)`` (``"1, 2, 0"`` -> ``"2, 0, 1"``)."""
    axes = [int(a) for a in text.split(",")]
    back = [0] * len(axes)
    for k, a in enumerate(axes):
        back[a] = k
    return ", ".join(map(str, back))


class _Bound(cst.CSTVisitor):
    """Names a statement binds: ``plain`` (assignments, loop targets, ``with ... as``,
    ``del``, definitions, ``global``) and ``aug`` (``name op= ...``: in place for an
    array)."""

    def __init__(self) -> None:
        self.plain: set[str] = set()
        self.aug: set[str] = set()

    def _bind(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name):
            self.plain.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._bind(el.value)
        elif isinstance(node, cst.StarredElement):
            self._bind(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.aug.add(node.target.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.plain.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.plain.add(node.name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.plain |= {item.name.value for item in node.names}

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.plain |= {item.name.value for item in node.names}


def bound_names(node: cst.CSTNode) -> tuple[set[str], set[str]]:
    """``(plain, aug)``: the names ``node`` binds anywhere in it (see :class:`_Bound`)."""
    visitor = _Bound()
    walk(node, visitor)
    return visitor.plain, visitor.aug


def written_name(node: cst.BaseSmallStatement) -> tuple[str, bool] | None:
    """``(name, whole)`` for a statement that may write an array in place: ``name op= e``
    (``whole``), ``name[...] op= e`` and ``name[...] = e`` (one target); else ``None``."""
    kind = type(node)  # node classes: ``is`` (no subclasses; ``isinstance`` goes by ABCMeta)
    if kind is cst.AugAssign:
        target: cst.BaseExpression = node.target
    elif kind is cst.Assign and len(node.targets) == 1:
        target = node.targets[0].target
        if type(target) is not cst.Subscript:
            return None
    else:
        return None
    if isinstance(target, cst.Name):
        return target.value, True
    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
        return target.value.value, False
    return None


class _WritesThrough(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def _check(self, node: cst.BaseSmallStatement) -> None:
        written = written_name(node)
        if written is not None and written[0] == self.name:
            self.found = True


def writes_through(body: cst.CSTNode, name: str) -> bool:
    """Whether ``body`` writes in place through ``name`` (``name op= ...``,
    ``name[...] = ...``)."""
    visitor = _WritesThrough(name)
    walk(body, visitor)
    return visitor.found


class _ParamWrites(cst.CSTVisitor):
    def __init__(self, params: set[str]) -> None:
        self.aliases = {p: p for p in params}  # name -> the parameter it is or views
        self.rebound: set[str] = set()
        self.written: dict[str, bool] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        chain = view_chain(node.value)
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                if chain is not None and chain[0] in self.aliases:
                    self.aliases[t.target.value] = self.aliases[chain[0]]
                else:
                    self.rebound.add(t.target.value)
        self._write(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._write(node)

    def _write(self, node: cst.BaseSmallStatement) -> None:
        written = written_name(node)
        if written is not None and written[0] in self.aliases:
            name, whole = written
            param = self.aliases[name]
            self.written[param] = self.written.get(param, True) and whole and name == param


def parameters_written(fdef: cst.FunctionDef) -> dict[str, bool]:
    """The parameters a function writes in place (``v *= 2``, ``v[0] = 1``, through a
    view ``r = v[1:]; r += 1``) -> whether only as a whole (``v op= e``: in place only
    for an array); parameters it binds again are left out."""
    params = {p.name.value for p in fdef.params.params + fdef.params.kwonly_params}
    params |= {p.name.value for p in fdef.params.posonly_params}
    visitor = _ParamWrites(params)
    walk(fdef.body, visitor)
    return {p: w for p, w in visitor.written.items() if p not in visitor.rebound}


class _Sharing(cst.CSTVisitor):
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, name: str) -> str:
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def join(self, a: str, b: str) -> None:
        self.parent.setdefault(a, a)
        self.parent.setdefault(b, b)
        self.parent[self.find(a)] = self.find(b)

    def _source(self, value: cst.BaseExpression) -> str | None:
        if isinstance(value, cst.Name):
            return value.value
        chain = view_chain(value)
        return chain[0] if chain is not None else None

    def visit_Assign(self, node: cst.Assign) -> None:
        source = self._source(node.value)
        if source is not None:
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    self.join(t.target.value, source)

    def visit_For(self, node: cst.For) -> None:
        source = self._source(node.iter)
        if source is not None and isinstance(node.target, cst.Name):
            self.join(node.target.value, source)


def sharing(statements: list[cst.CSTNode]) -> dict[str, set[str]]:
    """Names that may share an array anywhere in ``statements`` (``v = h[1:]``, ``B =
    A.T``, ``z = y``, ``for row in M``): each name -> its group, itself included."""
    visitor = _Sharing()
    for s in statements:
        walk(s, visitor)
    groups: dict[str, set[str]] = {}
    for name in visitor.parent:
        groups.setdefault(visitor.find(name), set()).add(name)
    return {name: groups[visitor.find(name)] for name in visitor.parent}


class _InPlace(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        written = written_name(node)
        if written is not None:
            self.names.add(written[0])

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                self.names.add(t.target.value.value)


def written_in_place(statement: cst.CSTNode) -> set[str]:
    """The names a statement may write in place (``v *= 2``, ``v[0] = 1``), nested ones
    included."""
    visitor = _InPlace()
    walk(statement, visitor)
    return visitor.names
