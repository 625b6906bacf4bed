"""Whole-function scans of the user's libcst tree, read-only, made once before lowering.

:class:`NameScan` collects every identifier, the names assigned (the locals), the local
lambdas and one-return functions (inlined where called), and the facts the in-place write
checks need: which names are plain copies of others, views of others (``v = y[1:3]``,
``B = A.T``, ``x.reshape(...)``), entries of containers (``rows = [h]``,
``d[k] = h``, ``for row in grid``), and where each name is read relative to the loops
(:meth:`NameScan.live_after`). :class:`BindingCount` counts how often each name is bound
(a frozen distribution or a factory's result must be bound once); :func:`names_read`
lists the names an expression reads.
"""

from __future__ import annotations

import collections

import libcst as cst

from .aliasing import VIEW_FUNCTIONS, VIEW_METHODS
from .container_names import Scan, container_sets
from .cstwalk import MISSING, NodeMemo, walk, walk_many
from .norm_queries import OwnNodes, single_return


class NameScan(cst.CSTVisitor):
    """Collects every identifier and the names assigned in the function (its locals)."""

    def __init__(self) -> None:
        self.all: set[str] = set()
        self.assigned: set[str] = set()
        self.bindings: collections.Counter[str] = collections.Counter()  # name -> times bound
        self.lambdas: dict[str, list[cst.Lambda | cst.FunctionDef]] = {}
        self.views: set[str] = set()
        self.entries: set[str] = set()  # names bound to an entry or attribute of another
        self.viewed: list[tuple[str, str]] = []  # (v, y) for v = y[1:3], v = y.T
        self.copies: list[tuple[str, str]] = []
        # (container, name): the container may hold the object the name is bound to
        # (``rows = [h]``, ``d[k] = h``, ``rows.append(h)``, ``for row in grid``)
        self.holders: list[tuple[str, str]] = []
        self.value_reads: set[str] = set()  # names read other than as a call's callee
        self.order: dict[int, int] = {}  # id of each Name node -> its place in the text
        self.read_at: dict[str, list[int]] = {}  # name -> places it is read
        self.loops: list[tuple[int, int]] = []  # places each loop spans
        self._loops: list[int] = []
        # name -> (place, loop start) of each plain assignment at the top level of a loop's
        # body: every trip binds the name there before it reads it further on
        self.kills: dict[str, list[tuple[int, int]]] = {}
        self._nest = 0  # compound statements around the place being read
        self._bodies: list[int] = []  # the nesting of each enclosing loop's body
        self._not_reads: set[int] = set()  # Name nodes that name a callee or define
        self._depth = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.all.add(node.value)
        self.order[id(node)] = len(self.order)
        if id(node) not in self._not_reads:
            self.value_reads.add(node.value)
            self.read_at.setdefault(node.value, []).append(self.order[id(node)])

    def visit_While(self, node: cst.While) -> None:
        self._loops.append(len(self.order))
        self._enter_loop()

    def leave_While(self, original_node: cst.While) -> None:
        self.loops.append((self._loops.pop(), len(self.order)))
        self._leave_loop()

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.append((self._loops.pop(), len(self.order)))
        self._leave_loop()

    def _enter_loop(self) -> None:
        self._nest += 1
        self._bodies.append(self._nest)

    def _leave_loop(self) -> None:
        self._bodies.pop()
        self._nest -= 1

    def visit_If(self, node: cst.If) -> None:
        self._nest += 1

    def leave_If(self, original_node: cst.If) -> None:
        self._nest -= 1

    def visit_Try(self, node: cst.Try) -> None:
        self._nest += 1

    def leave_Try(self, original_node: cst.Try) -> None:
        self._nest -= 1

    def visit_With(self, node: cst.With) -> None:
        self._nest += 1

    def leave_With(self, original_node: cst.With) -> None:
        self._nest -= 1

    def visit_Match(self, node: cst.Match) -> None:
        self._nest += 1

    def leave_Match(self, original_node: cst.Match) -> None:
        self._nest -= 1

    def leave_Assign(self, original_node: cst.Assign) -> None:
        """A plain ``name = ...`` at the top level of a loop's body binds ``name`` on every
        trip after its value is read: a read later in the body sees that binding."""
        if not self._bodies or self._bodies[-1] != self._nest:
            return
        for target in original_node.targets:
            if isinstance(target.target, cst.Name):
                place = (len(self.order), self._loops[-1])
                self.kills.setdefault(target.target.value, []).append(place)

    def live_after(self, name: str, node: cst.CSTNode | None) -> bool:
        """Whether ``name`` may be read after the Name ``node`` (a later read in the text, or
        any read in a loop around it); True when ``node`` is not of this scan."""
        at = self.order.get(id(node)) if node is not None else None
        if at is None:
            return True
        reads = self.read_at.get(name, [])
        if any(r > at for r in reads):
            return True
        # a read earlier in a loop around ``node`` sees the value of the next trip, unless
        # that trip binds the name anew before the read (``t = f.copy(); f = t``)
        kills = self.kills.get(name, [])
        return any(
            a <= at < b
            and any(
                a <= r < b and not any(start == a and k <= r for k, start in kills) for r in reads
            )
            for a, b in self.loops
        )

    def visit_Call(self, node: cst.Call) -> None:
        self._not_reads.add(id(node.func))
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _FILLING_METHODS
            and isinstance(func.value, cst.Name)
        ):
            for arg in node.args:
                self.holders += [(func.value.value, n) for n in _held(arg.value, entry=True)]

    def visit_Param(self, node: cst.Param) -> None:
        self._not_reads.add(id(node.name))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_reads.add(id(node.keyword))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_reads.add(id(node.attr))

    def _targets(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            self.assigned.add(node.value)
            self.bindings[node.value] += 1
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._targets(el.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)
        self._not_reads.add(id(node.target))

    def visit_Assign(self, node: cst.Assign) -> None:
        held = _held(node.value)
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name):
                # ``d[k] = h``: the container holds what ``h`` names
                self.holders += [(t.value.value, n) for n in _held(node.value, entry=True)]
            elif isinstance(t, cst.Name):
                self.holders += [(t.value, n) for n in held]
            elif isinstance(t, (cst.Tuple, cst.List)):
                elements = [el.value for el in t.elements]
                if isinstance(node.value, (cst.Tuple, cst.List)) and len(
                    node.value.elements
                ) == len(elements):
                    for el, v in zip(elements, node.value.elements):
                        if isinstance(el, cst.Name) and isinstance(v.value, cst.Name):
                            self.copies.append((el.value, v.value.value))  # a, b = y, z
                elif isinstance(node.value, cst.Name):
                    # ``a, b = pair``: the entries of ``pair`` are what the names see
                    self.holders += [(node.value.value, n) for n in names_read(t)]
        if isinstance(node.value, cst.Name):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.copies.append((target.target.value, node.value.value))
        if isinstance(node.value, (cst.Subscript, cst.Attribute)):
            base = _viewed_name(node.value)
            whole = isinstance(node.value, cst.Attribute)
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.views.add(target.target.value)
                    if whole:  # an object's attribute: what reads it later is not followed
                        self.entries.add(target.target.value)
                    if base is not None:  # v = y[1:3], B = A.T: a write into y changes v
                        self.viewed.append((target.target.value, base))
        named = [t.target.value for t in node.targets if isinstance(t.target, cst.Name)]
        self.copies += [(a, b) for a, b in zip(named, named[1:])]  # a = b = np.zeros(3)
        for base in _view_call_bases(node.value):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.copies.append((target.target.value, base))
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
            and isinstance(node.value, cst.Lambda)
        ):
            name = node.targets[0].target.value
            self.lambdas.setdefault(name, []).append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth += 1
        self._nest += 1
        self._not_reads.add(id(node.name))
        if self._depth > 1 and single_return(node) is not None and not node.decorators:
            self.lambdas.setdefault(node.name.value, []).append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._depth -= 1
        self._nest -= 1

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._loops.append(len(self.order))
        self._enter_loop()
        self._targets(node.target)
        # ``for row in grid`` / ``for i, row in enumerate(grid)``: the loop names are entries
        containers = [node.iter] if isinstance(node.iter, cst.Name) else []
        if isinstance(node.iter, cst.Call):
            containers = [a.value for a in node.iter.args if isinstance(a.value, cst.Name)]
        for c in containers:
            assert isinstance(c, cst.Name)
            self.holders += [(c.value, n) for n in names_read(node.target)]

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)


_FILLING_METHODS = frozenset("append insert extend add setdefault update __setitem__".split())


def _held(node: cst.BaseExpression, entry: bool = False) -> list[str]:
    """Names whose objects a container built by ``node`` holds as entries: the names and
    the arrays viewed (``y[:2]``, ``y.T``) among the entries of a list, tuple, set or dict
    display, nested displays too. With ``entry``, ``node`` is itself an entry (the value of
    ``d[k] = node`` or ``xs.append(node)``)."""
    if entry:
        base = _viewed_name(node)
        if base is not None:
            return [base]
    kind = type(node)  # node classes: ``is`` (no subclasses; ``isinstance`` goes by ABCMeta)
    if kind is cst.List or kind is cst.Tuple or kind is cst.Set:
        return [n for el in node.elements for n in _held(el.value, entry=True)]
    if kind is cst.Dict:
        return [
            n
            for el in node.elements
            if isinstance(el, (cst.DictElement, cst.StarredDictElement))
            for n in _held(el.value, entry=True)
        ]
    return []


def _viewed_name(node: cst.BaseExpression) -> str | None:
    """The name whose object ``node`` is, or may be a view of (``y``, ``y[1:]``, ``y.T``,
    ``y.reshape(-1)``, ``np.ravel(y)``); ``None`` for anything else."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
            continue
        bases = _view_call_bases(node)
        return bases[0] if bases else None


#: Keywords under which NumPy's view functions take the array (``np.flip(m=y)``).
_ARRAY_KEYWORDS = frozenset({"a", "m", "x", "arr", "ary", "array"})


def _view_call_bases(value: cst.BaseExpression) -> list[str]:
    """Names of the arrays a call may return a view of (``x`` in ``x.reshape(...)``, in
    ``np.ravel(x)``, in ``flip(x)`` imported from NumPy and in ``np.flip(m=x)``): a write
    into one is seen through the other. A bare name is taken by its spelling (a function
    of the user's called ``flip`` counts too: a write is then refused, never missed)."""
    if not isinstance(value, cst.Call):
        return []
    func, out = value.func, []
    if isinstance(func, cst.Attribute):
        if func.attr.value in VIEW_METHODS and isinstance(func.value, cst.Name):
            out.append(func.value.value)  # a method (or a module's ``np.reshape``: not local)
        name = func.attr.value
    elif isinstance(func, cst.Name):
        name = func.value
    else:
        return out
    if name in VIEW_FUNCTIONS:
        for k, arg in enumerate(value.args):
            if arg.star or not isinstance(arg.value, cst.Name):
                continue
            keyword = arg.keyword.value if arg.keyword is not None else None
            if (keyword is None and k == 0) or keyword in _ARRAY_KEYWORDS:
                out.append(arg.value.value)
    return out


class _Reads(cst.CSTVisitor):
    """The names read (see :func:`names_read`)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.names:
            self.names.append(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False


def names_read(node: cst.CSTNode) -> tuple[str, ...]:
    """The names ``node`` reads, in order of first appearance (not attribute names)."""
    visitor = _Reads()
    walk(node, visitor)
    return tuple(visitor.names)


def binding_count(node: cst.CSTNode) -> BindingCount:
    """A :class:`BindingCount` of ``node``, one walk per tree (read it, do not change it:
    the frozen-distribution and factory checks both ask)."""
    scan = _COUNTS.get(node)
    if scan is MISSING:
        scan = BindingCount()
        walk(node, scan)
        _COUNTS.put(node, scan)
    return scan


class BindingCount(cst.CSTVisitor):
    """How often each name is bound anywhere in a function (nested functions included),
    and the names bound by ``name = call(...)`` (candidates for a frozen distribution)."""

    def __init__(self) -> None:
        self.count: collections.Counter[str] = collections.Counter()
        self.calls: set[str] = set()

    def _bind(self, node: cst.CSTNode, times: int = 1) -> None:
        if isinstance(node, cst.Name):
            self.count[node.value] += times
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._bind(el.value, times)
        elif isinstance(node, cst.StarredElement):
            self._bind(node.value, times)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target)
        if len(node.targets) == 1 and isinstance(node.value, cst.Call):
            target = node.targets[0].target
            if isinstance(target, cst.Name):
                self.calls.add(target.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target, 2)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name, 2)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name, 2)


_COUNTS = NodeMemo(limit=1_000)


class Prescan:
    """The scans the normalizer makes of a function before lowering it, from one walk of
    its tree (:func:`cstwalk.walk_many`): its :class:`NameScan` (``names``), its
    ``container_names.containers`` (``containers``, ``maybe_containers``), whether it is
    a generator (a ``yield`` of its own), and its :class:`BindingCount` (kept for
    :func:`binding_count`)."""

    def __init__(self, node: cst.CSTNode) -> None:
        self.names = NameScan()
        counts = _COUNTS.get(node)
        visitors: list[cst.CSTVisitor] = [self.names]
        if counts is MISSING:
            counts = BindingCount()
            visitors.append(counts)
        yields: OwnNodes | None = None
        inner: tuple[cst.CSTNode, cst.CSTVisitor] | None = None
        scan: Scan | None = None
        if isinstance(node, cst.FunctionDef):
            yields = OwnNodes(node, cst.Yield)
            scan = Scan()
            visitors.append(yields)
            inner = (node.body, scan)
        walk_many(node, visitors, inner)
        if len(visitors) > 1 and visitors[1] is counts:
            _COUNTS.put(node, counts)
        self.containers: set[str] = set()
        self.maybe_containers: set[str] = set()
        if isinstance(node, cst.FunctionDef) and scan is not None:
            self.containers, self.maybe_containers = container_sets(node, scan)
        self.generator = yields is not None and bool(yields.found)
