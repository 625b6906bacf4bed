"""Classes built inside the differentiated function: their ``__init__`` inlined.

``cell = GRU(a, b)`` where ``GRU.__init__`` does more than store its parameters (a tuple
assignment, a derived value ``self.n_out = W.shape[1]``, ``super().__init__(W)``, a loop
of ``self.layers.append((W, b))``, a check that raises, a dataclass's ``__post_init__``)
is lowered as the statements of ``__init__`` on the new object's *fields*: ``self.x``
becomes a local variable (``gru_a``), the parameters are bound to the call's arguments
(defaults filled in, ``*params[-1]`` spread), and the object is made at the end from its
fields by ``_ad.new_record(GRU, ('a', 'b'), (gru_a, gru_b))``, whose adjoint hands each
field its attribute's adjoint. The base ``__init__`` that ``super().__init__(...)`` or
``Base.__init__(self, ...)`` runs, and the methods ``__init__`` calls on ``self``, are
inlined the same way, on the same fields. The object is then a record
(:mod:`s2s_ad.built_objects`): its attribute reads and method calls are differentiated
as for any record.

A class ``__init__`` only stores parameters into keeps the plain record
(``_ad.build_record``) unless it is called with ``*args``. What cannot be inlined (see
:mod:`s2s_ad.init_facts`: ``self`` passed to other code, ``global`` stores, ``__slots__``,
``__getitem__``...) leaves the call as it is, and the reason is kept for the refusal of
that call should a differentiated value reach it; a class built from constants still
runs its own ``__init__``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import types
from typing import Any

import libcst as cst

from . import ir
from .built_objects import (
    UNSET,
    init_attributes,
    new_record,
    note_refused,
    record_kind,
)
from .errors import TransformError
from .init_facts import (
    NotBuilt,
    Part,
    chain_stores,
    class_refusal,
    dataclass_defaults,
    field_starts,
    init_part,
    is_method,
    mangled,
    method_part,
    of_a_library,
    self_attribute,
    self_call,
    set_attribute,
)
from .norm_base import MISSING, NormalizerBase
from .norm_queries import all_params
from .norm_scan import NameScan

#: what the refusal of a class call whose construction was not inlined suggests
_HINT = (
    "inside __init__, read and store self.x, compute with locals, call super().__init__ "
    "or methods of the class; or build the object outside the differentiated function "
    "and pass it in"
)

_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)


@dataclasses.dataclass
class _Building:
    """One object being built: its class, the fields made so far (attribute -> local)."""

    cls: type
    cls_node: cst.BaseExpression  # the user's expression naming the class
    anchor: cst.CSTNode  # the user's call: the line every inlined statement reports
    prefix: str
    stores: frozenset[str]
    fields: dict[str, str] = dataclasses.field(default_factory=dict)


def _snake(name: str) -> str:
    """``GRUCell`` -> ``gru_cell``: the prefix of a building's field variables."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class ClassConstruction(NormalizerBase):
    """Inlining of class constructions (a mixin of ``Normalizer``, before the lowering
    of calls, whose :meth:`call` it extends)."""

    @functools.cached_property
    def _part_calls(self) -> dict[str, tuple[Part, _Building]]:
        """The names standing for a method called on an object being built -> the method
        and the building (see :meth:`_SelfRewrite.leave_Call`)."""
        return {}

    def emit(self, stmt: ir.Stmt) -> None:
        if isinstance(stmt, ir.ExprStmt) and stmt.value == ir.Copy(ir.Const("None")):
            return  # an inlined method's ``None`` where its call stood as a statement
        super().emit(stmt)

    def call(self, node: cst.Call) -> ir.Expr:
        func = node.func
        if isinstance(func, cst.Name) and func.value in self._part_calls:
            part, building = self._part_calls[func.value]
            return self._inline(part, node, building)
        cls = self._built_class(node)
        if cls is not None:
            built = self._construct(cls, node)
            if built is not None:
                return built
        return super().call(node)  # type: ignore[misc]

    def _built_class(self, node: cst.Call) -> type | None:
        """The user's class ``node`` builds when its construction is inlined here."""
        func = node.func
        if isinstance(func, cst.Name) and (
            func.value in self.partials or func.value in self.lambdas or func.value in self.nested
        ):
            return None
        parts = self.dotted(func)
        if parts is None:
            return None
        obj = self.resolve_dotted(parts)
        if not isinstance(obj, type) or not self._stable_root(parts[0]):
            return None
        if record_kind(obj) not in ("plain", "dataclass"):
            return None
        try:
            init_attributes(obj)
        except ValueError:
            return obj
        # stores its parameters only: a plain record (norm_calls), unless given *args
        return obj if any(a.star for a in node.args) else None

    def _construct(self, cls: type, node: cst.Call) -> ir.Expr | None:
        """``cls(...)`` as its inlined construction, or ``None`` (the reason kept)."""
        reason = class_refusal(cls)
        if reason is not None:
            hint = _HINT
            if of_a_library(cls):
                hint = f"register a rule with s2s_ad.defgrad({cls.__name__}, rule)"
            note_refused(cls, reason, hint)
            return None
        mark, memo, line, src = len(self.out), dict(self.memo), self.line, self.src
        anchor = self.origin.get(node, node)
        building = None
        try:
            part = init_part(cls)
            building = _Building(cls, node.func, anchor, _snake(cls.__name__), chain_stores(cls))
            self._start_fields(building, field_starts(cls))
            self._inline(part, node, building)
        except NotBuilt as exc:
            del self.out[mark:]
            self.memo, self.line, self.src = memo, line, src
            note_refused(cls, exc.reason, exc.hint or _HINT)
            return None
        values = self.fresh("_fields")
        self.temps.add(values)
        self.assign(values, ir.Build("tuple", [ir.Var(v) for v in building.fields.values()]))
        callee = ir.Callee("_ad.new_record", new_record, resolved=True)
        names = ir.Const(repr(tuple(building.fields)))
        return ir.Call(callee, [self.atom(node.func), names, ir.Var(values)], [])

    def _start_fields(self, building: _Building, attrs: list[str]) -> None:
        """The first value of the fields stored on some paths only or read before they
        are stored: the class attribute of that name, else ``UNSET`` (left out of the
        object)."""
        for attr in attrs:
            local = self._field(building, attr)
            value = inspect.getattr_static(building.cls, attr, MISSING)
            if value is not MISSING and not hasattr(type(value), "__get__"):
                self.lower_into(local, cst.Attribute(building.cls_node, cst.Name(attr)))
            else:
                self.assign(local, ir.Copy(ir.Var(self._bound("_unset", UNSET))))

    def _field(self, building: _Building, attr: str) -> str:
        """The local variable holding the field ``attr`` of the object being built."""
        local = building.fields.get(attr)
        if local is None:
            local = building.fields[attr] = self.reserve(f"{building.prefix}_{attr}")
            self.locals.add(local)
        return local

    def _bound(self, name: str, value: Any) -> str:
        """A name the generated code receives ``value`` under (as for the function's own
        imports): ``name`` itself when the function does not use it otherwise."""
        for known, obj in self.imports.items():
            if obj is value and known.startswith(name):
                return known
        free = self.reserve(name)
        self.imports[free] = value
        return free

    def _inline(self, part: Part, call: cst.Call, building: _Building) -> ir.Expr:
        """The statements of ``part`` (``self`` the object being built) lowered here, its
        parameters bound to ``call``'s arguments; the value it returns."""
        fdef = _checked(part)
        if part.label in self.inlining:
            raise NotBuilt(f"{part.label} builds a {building.cls.__name__} again (recursion)")
        head = self._head(part)
        try:
            bound = self._bind_params(head, call, part.label)
        except TransformError as exc:
            raise NotBuilt(f"{part.label}: {exc.construct}", exc.hint) from None
        rename, given = self._renames(part, head, bound)
        rewrite = _SelfRewrite(self, part, building, rename)
        body = list(fdef.body.body)
        result: cst.BaseExpression | None = None
        last = body[-1] if body else None
        if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return):
            result = last.body[-1].value
            body[-1:] = [last.with_changes(body=last.body[:-1])] if len(last.body) > 1 else []
        env, memo, line, src, items = self.env, self.memo, self.line, self.src, self.items
        self.inlining.append(part.label)
        where = part.label
        try:
            for param, atom in bound:
                if param not in given:
                    self.assign(rename[param], ir.Copy(atom))
            self.env, self.items = {}, None
            for stmt in body:
                where = f"{part.label} ({part.where(stmt)}: {part.text(stmt)})"
                self._lower_rewritten(rewrite.statement(stmt))
            if result is None:
                return ir.Copy(ir.Const("None"))
            value = self.reserve(f"_{part.label.rsplit('.', 1)[-1].strip('_')}")
            self.locals.add(value)
            self.lower_into(value, rewrite.expression(result))
            return ir.Copy(ir.Var(value))
        except TransformError as exc:
            # what the normalizer refuses inside the method: the reason, at its line
            raise NotBuilt(f"{where}: {exc.construct}", exc.hint) from None
        finally:
            self.inlining.pop()
            self.env, self.memo, self.line, self.src, self.items = env, memo, line, src, items

    def _lower_rewritten(self, stmt: cst.BaseStatement) -> None:
        """Lower one rewritten statement of an inlined method, with its alias facts."""
        scan = NameScan()
        stmt.visit(scan)
        self.views |= scan.views
        self.entries |= scan.entries
        self.copies += scan.copies
        self.holders += scan.holders
        self.viewed += scan.viewed
        self.block([stmt])

    def _head(self, part: Part) -> cst.FunctionDef:
        """``part``'s definition without ``self``, each default a literal or a name bound
        to the default's value (as Python evaluated it where the method was defined)."""
        params = part.fdef.params
        live = {} if part.func is None else inspect.signature(part.func).parameters
        scope = dataclass_defaults(part.owner) if part.func is None else {}
        owner = part.owner.__name__

        def default(param: cst.Param) -> cst.Param:
            node = param.default
            if node is None or isinstance(node, _LITERALS) or _constant_name(node):
                return param
            name = param.name.value
            if part.func is None:  # a dataclass's: ``_dataclass_default_x`` or a factory
                assert isinstance(node, (cst.Name, cst.Call))
                ref = node if isinstance(node, cst.Name) else node.func
                assert isinstance(ref, cst.Name)
                bound = cst.Name(self._bound(f"{owner}_{name}_default", scope[ref.value]))
                value = bound if isinstance(node, cst.Name) else node.with_changes(func=bound)
                return param.with_changes(default=value)
            bound = self._bound(f"{owner}_{name}_default", live[name].default)
            return param.with_changes(default=cst.Name(bound))

        positional = [*params.posonly_params, *params.params]
        return part.fdef.with_changes(
            params=params.with_changes(
                posonly_params=[],
                params=[default(p) for p in positional[1:]],
                kwonly_params=[default(p) for p in params.kwonly_params],
            )
        )

    def _renames(
        self, part: Part, head: cst.FunctionDef, bound: list[tuple[str, ir.Atom]]
    ) -> tuple[dict[str, str], set[str]]:
        """The inlined method's parameters and locals renamed apart (a parameter bound to
        a variable and never assigned in the method read as that variable), and the names
        it reads from its module that mean something else here bound to what they mean
        there; the parameters read as the caller's variables."""
        scan = NameScan()
        part.fdef.body.visit(scan)
        params = {p.name.value for p in [*head.params.params, *head.params.kwonly_params]}
        local = (scan.assigned | params) - {part.self_name}
        owner = part.owner.__name__
        given = {
            p: atom.name
            for p, atom in bound
            if isinstance(atom, ir.Var) and p not in scan.assigned and atom.name != part.self_name
        }
        rename = {n: given.get(n) or self.reserve(f"{owner}_{n}") for n in sorted(local)}
        self.locals.update(rename.values())
        for name in sorted(_free_names(part.fdef.body) - local - {part.self_name}):
            value = part.global_value(name)
            if value is MISSING:
                raise NotBuilt(f"{part.label} reads {name}, which names nothing in its module")
            here_local = name in self.locals or name in self.nested or name in self.lambdas
            if here_local or name in self.partials or self.resolve(name) is not value:
                rename[name] = self._bound(name, value)
        return rename, set(given)


def _constant_name(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("None", "True", "False")


def _checked(part: Part) -> cst.FunctionDef:
    """``part``'s definition, when it can be inlined.

    Raises:
        NotBuilt: A decorated, async, generator method, one with ``*args`` or without
            ``self``, or an ``__init__`` that returns a value.
    """
    fdef = part.fdef
    params = fdef.params
    if fdef.decorators:
        raise NotBuilt(f"{part.label} is decorated")
    if fdef.asynchronous is not None:
        raise NotBuilt(f"{part.label} is async")
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        raise NotBuilt(f"{part.label} takes *args or **kwargs")
    if not [*params.posonly_params, *params.params]:
        raise NotBuilt(f"{part.label} takes no self")
    return fdef


class _FreeNames(cst.CSTVisitor):
    """The names a body reads or binds (attribute names and keywords aside), and those
    its comprehensions and lambdas bind for themselves."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.own: set[str] = set()

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.own |= _FreeNames.of(node.target)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.own |= {p.name.value for p in all_params(node.params)}

    @staticmethod
    def of(node: cst.CSTNode) -> set[str]:
        scan = _FreeNames()
        node.visit(scan)
        return scan.names

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        if node.default is not None:
            node.default.visit(self)
        return False


def _free_names(body: cst.CSTNode) -> set[str]:
    scan = _FreeNames()
    body.visit(scan)
    return scan.names - scan.own


class _SelfRewrite(cst.CSTTransformer):
    """One inlined method's statements on the fields of the object being built:
    ``self.x`` -> the field's variable (a class attribute's read of the class, a method's
    call a stand-in name :meth:`ClassConstruction.call` inlines), locals renamed apart.

    Raises:
        NotBuilt: The method uses ``self`` otherwise (passes it on, deletes an attribute),
            stores into globals, defines functions, yields, or returns early.
    """

    def __init__(
        self, norm: ClassConstruction, part: Part, building: _Building, rename: dict[str, str]
    ) -> None:
        super().__init__()
        self.norm, self.part, self.building, self.rename = norm, part, building, rename
        self.me = part.self_name
        self.label = part.label
        self._methods: set[int] = set()  # ``self.m`` nodes of methods: callees only
        self._stmt: cst.CSTNode | None = None

    def statement(self, stmt: cst.BaseStatement) -> cst.BaseStatement:
        self._stmt = stmt
        new = stmt.visit(self)
        assert isinstance(new, cst.BaseStatement)
        self._finish(stmt, new)
        return new

    def expression(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        new = expr.visit(self)
        assert isinstance(new, cst.BaseExpression)
        self._finish(expr, new)
        return new

    def _finish(self, user: cst.CSTNode, new: cst.CSTNode) -> None:
        if self._methods:
            self._methods.clear()
            raise self._refuse("reads a method of self as a value")
        if self.me in _free_names(new):
            raise self._refuse("uses self other than through its attributes", user)

    def _refuse(self, what: str, node: cst.CSTNode | None = None) -> NotBuilt:
        node = node or self._stmt
        where = f" ({self.part.where(node)}: {self.part.text(node)})" if node is not None else ""
        return NotBuilt(f"{self.label} {what}{where}")

    # --- what is refused --------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        raise self._refuse("defines a function inside it")

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        raise self._refuse("defines a class inside it")

    def visit_Global(self, node: cst.Global) -> bool:
        raise self._refuse("stores into a global variable")

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        raise self._refuse("stores into an outer function's variable")

    def visit_Yield(self, node: cst.Yield) -> bool:
        raise self._refuse("yields")

    def visit_Await(self, node: cst.Await) -> bool:
        raise self._refuse("awaits")

    def visit_Return(self, node: cst.Return) -> bool:
        raise self._refuse("returns before its end")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        self._frozen_store(node.target)
        return True

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        self._frozen_store(node.target)
        return True

    def _frozen_store(self, target: cst.BaseExpression) -> None:
        cls = self.building.cls
        frozen = dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        if frozen and self.part.func is not None:
            if any(self_attribute(t, self.me) for t in _targets(target)):
                raise self._refuse("stores into a frozen dataclass (FrozenInstanceError)")

    def visit_Del(self, node: cst.Del) -> bool:
        if any(self_attribute(n, self.me) for n in _targets(node.target)):
            raise self._refuse("deletes an attribute of self")
        return True

    # --- names, attributes, calls -----------------------------------------------------

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.rename.get(original_node.value)
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        attr = self_attribute(original_node, self.me)
        if attr is None:
            return updated_node.with_changes(attr=original_node.attr)
        attr = mangled(attr, self.part.owner)
        building = self.building
        if attr in building.stores:
            return cst.Name(self.norm._field(building, attr))
        value = inspect.getattr_static(building.cls, attr, MISSING)
        if value is MISSING:
            raise self._refuse(f"reads self.{attr}, which it never stores")
        if isinstance(value, types.FunctionType):
            self._methods.add(id(original_node))
        elif not isinstance(value, (staticmethod, classmethod)) and hasattr(type(value), "__get__"):
            kind = type(value).__name__
            raise self._refuse(f"reads self.{attr}, a {kind} of {building.cls.__name__}")
        return cst.Attribute(building.cls_node, cst.Name(attr))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        called = self_call(original_node, self.part)
        if called is None:
            return updated_node
        lookup, name, skip = called
        if lookup[0] == "self" and not is_method(self.building.cls, name):
            return updated_node  # a field holding a function, a static or class method
        self._methods.discard(id(original_node.func))
        part = method_part(self.building.cls, lookup, name)
        if part is None:  # object.__init__
            if len(original_node.args) > skip:
                raise self._refuse("passes arguments to object.__init__")
            return cst.Name("None")
        marker = self.norm.reserve(f"_inline_{name.strip('_')}")
        self.norm._part_calls[marker] = (part, self.building)
        return cst.Call(cst.Name(marker), updated_node.args[skip:])

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> Any:
        stored = set_attribute(original_node.value, self.me)
        if stored is None:
            return updated_node
        assert isinstance(updated_node.value, cst.Call)
        field = self.norm._field(self.building, stored[0])
        target = cst.AssignTarget(cst.Name(field))
        return cst.Assign([target], updated_node.value.args[2].value)

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        result = super().on_leave(original_node, updated_node)
        if isinstance(result, cst.CSTNode):
            # positions: every statement reports the user's line that builds the object
            self.norm.origin[result] = self.building.anchor
        return result


def _targets(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [t for e in node.elements for t in _targets(e.value)]
    return [node]
