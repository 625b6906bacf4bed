"""What building an instance of a user's class does, read from its source.

``GRU(a, b)`` inside a differentiated function runs ``GRU.__init__``; when that method
does more than store its parameters (``self.a, self.b = a, b``, ``self.n_out =
W.shape[1]``, ``super().__init__()``, a loop of ``self.layers.append((W, b))``, a
dataclass's ``__post_init__``), the normalizer inlines it (:mod:`s2s_ad.norm_init`): its
statements become statements of the caller on the new object's fields. This module
answers the questions that inlining asks of the class, without lowering anything:

* :func:`class_refusal`: whether the class can be built that way at all (an instance
  dict, no ``__new__``, ``__setattr__`` or container protocol of its own, a class of
  the user's code rather than of a library);
* :class:`Part`: one function inlined with ``self`` bound to the object being built
  (the ``__init__``, the base ``__init__`` it calls, a method it calls on ``self``, a
  dataclass's ``__init__`` written out as Python), found by :func:`init_part` and
  :func:`method_part`;
* :func:`chain_stores` and :func:`field_starts`: the attributes the construction
  stores, and those that need a value before it runs (stored on some paths only, or
  read before they are stored).

A construction that cannot be inlined raises :class:`NotBuilt` with the reason, which
the refusal of the call names.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import sys
import sysconfig
import types
from dataclasses import dataclass
from typing import Any

import libcst as cst

from .norm_base import lookup_name
from .source import ParsedFunction, parse_function

#: methods that make indexing or iterating an object run the class's own code
_CONTAINER_METHODS = ("__getitem__", "__iter__", "__setitem__")

#: methods whose own code would run where the inlined construction reads or writes fields
_ATTRIBUTE_HOOKS = ("__setattr__", "__getattribute__", "__delattr__")


class NotBuilt(Exception):
    """A construction the normalizer does not inline, with the reason (``GRU.__init__
    calls self.reset(), which returns before its end``)."""

    def __init__(self, reason: str, hint: str = "") -> None:
        super().__init__(reason)
        self.reason, self.hint = reason, hint


@dataclass
class Part:
    """One function inlined with ``self`` bound to the object being built.

    Attributes:
        label: How refusals name it (``GRU.__init__``).
        owner: The class that defines it (``super()`` inside it looks past this class).
        fdef: Its definition; the first parameter is ``self``.
        func: The live function (its globals, closure and defaults), ``None`` for a
            dataclass's ``__init__`` written out here.
        parsed: Its parsed source (positions of its lines), ``None`` as ``func``.
    """

    label: str
    owner: type
    fdef: cst.FunctionDef
    func: types.FunctionType | None = None
    parsed: ParsedFunction | None = None

    @property
    def self_name(self) -> str:
        params = [*self.fdef.params.posonly_params, *self.fdef.params.params]
        return params[0].name.value

    def where(self, node: cst.CSTNode) -> str:
        """``file:line`` of a node of this part's source (or the label alone)."""
        if self.parsed is None:
            return self.label
        line, _ = self.parsed.position(node)
        return f"{os.path.basename(self.parsed.filename)}:{line}"

    def global_value(self, name: str) -> Any:
        """What a name the part reads but does not assign refers to in its own scope (its
        closure, its module, the builtins): ``MISSING`` if nothing."""
        if self.func is None:
            return lookup_name((name,), {}, {})
        closure = dict(zip(self.func.__code__.co_freevars, self.func.__closure__ or ()))
        return lookup_name((name,), closure, self.func.__globals__)

    def text(self, node: cst.CSTNode) -> str:
        """The source text of a statement of this part, on one line."""
        if self.parsed is not None:
            return self.parsed.code(node)
        return cst.Module([]).code_for_node(node).strip()


def _library_paths() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib"))


def of_a_library(cls: type) -> bool:
    """Whether ``cls`` comes from an installed library, the standard library or s2s_ad
    itself (``s2s_ad.tf``'s layers)."""
    if cls.__module__.split(".")[0] == "s2s_ad":
        return True
    module = sys.modules.get(cls.__module__)
    filename = getattr(module, "__file__", None)
    if not filename:
        return False
    return os.path.realpath(filename).startswith(_library_paths())


def class_refusal(cls: type) -> str | None:
    """Why instances of ``cls`` cannot be built field by field, or ``None``."""
    name = cls.__name__
    for method in _CONTAINER_METHODS:
        if any(method in vars(b) for b in cls.__mro__[:-1]):
            return f"{name} defines {method} (indexing it runs its own code)"
    if cls.__dictoffset__ == 0:
        return f"{name} has __slots__ without __dict__ (its instances hold no fields)"
    if any("__new__" in vars(b) for b in cls.__mro__[:-1]):
        return f"{name} defines __new__"
    frozen = dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    for hook in _ATTRIBUTE_HOOKS:
        owners = [b for b in cls.__mro__[:-1] if hook in vars(b)]
        if owners and not (frozen and all(dataclasses.is_dataclass(b) for b in owners)):
            return f"{name} defines {hook}"
    if type(cls).__call__ is not type.__call__:
        return f"the metaclass of {name} defines __call__"
    if of_a_library(cls):
        return f"{name} is a class of the library module {cls.__module__}"
    for base in cls.__mro__[1:-1]:
        if "__init__" in vars(base) and of_a_library(base):
            return f"{name} derives from {base.__module__}.{base.__name__}, a library class"
    return None


def _parsed_part(func: Any, owner: type, label: str) -> Part:
    if not isinstance(func, types.FunctionType):
        raise NotBuilt(f"{label} is not a Python function")
    try:
        parsed = parse_function(func)
    except Exception as exc:  # no source: a TransformError saying why
        raise NotBuilt(f"the source of {label} is not available ({exc})") from None
    node = parsed.node
    if not isinstance(node, cst.FunctionDef):
        raise NotBuilt(f"{label} is not a def statement")
    return Part(label, owner, node, func, parsed)


def _dataclass_init(cls: type) -> Part:
    """The ``__init__`` ``@dataclass`` made for ``cls``, written out as Python (its
    defaults read from the names ``_dataclass_default_<field>`` and factories called as
    ``_dataclass_factory_<field>()``, see :func:`dataclass_defaults`)."""
    signature = inspect.signature(cls.__init__)  # type: ignore[misc]
    fields = {f.name: f for f in getattr(cls, "__dataclass_fields__", {}).values()}
    params, kwonly, stores = ["self"], [], []
    for name, param in list(signature.parameters.items())[1:]:
        field = fields[name]
        text = name
        if field.default is not dataclasses.MISSING:
            text += f"=_dataclass_default_{name}"
        elif field.default_factory is not dataclasses.MISSING:
            text += f"=_dataclass_factory_{name}()"
        (kwonly if param.kind is inspect.Parameter.KEYWORD_ONLY else params).append(text)
    initvars = [n for n, f in fields.items() if _is_initvar(f)]
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.init:
            stores.append(f"self.{field.name} = {field.name}")
        elif field.default is not dataclasses.MISSING:
            stores.append(f"self.{field.name} = _dataclass_default_{field.name}")
        elif field.default_factory is not dataclasses.MISSING:
            stores.append(f"self.{field.name} = _dataclass_factory_{field.name}()")
    if hasattr(cls, "__post_init__"):
        stores.append(f"self.__post_init__({', '.join(initvars)})")
    signature_text = ", ".join(params + (["*", *kwonly] if kwonly else []))
    body = "".join(f"    {s}\n" for s in stores) or "    pass\n"
    fdef = cst.parse_module(f"def __init__({signature_text}):\n{body}").body[0]
    assert isinstance(fdef, cst.FunctionDef)
    return Part(f"{cls.__name__}.__init__ (made by @dataclass)", cls, fdef)


def _is_initvar(field: dataclasses.Field[Any]) -> bool:
    kind = getattr(dataclasses, "_FIELD_INITVAR", None)
    return kind is not None and getattr(field, "_field_type", None) is kind


def dataclass_defaults(cls: type) -> dict[str, Any]:
    """The names the ``__init__`` :func:`_dataclass_init` writes reads: each field's
    default value and default factory."""
    out: dict[str, Any] = {}
    for field in getattr(cls, "__dataclass_fields__", {}).values():
        if field.default is not dataclasses.MISSING:
            out[f"_dataclass_default_{field.name}"] = field.default
        if field.default_factory is not dataclasses.MISSING:
            out[f"_dataclass_factory_{field.name}"] = field.default_factory
    return out


def init_part(cls: type) -> Part:
    """The ``__init__`` that ``cls(...)`` runs.

    Raises:
        NotBuilt: It has no Python source, or the class is a dataclass whose generated
            ``__init__`` is not the one that runs.
    """
    owner = next((b for b in cls.__mro__ if "__init__" in vars(b)), object)
    init = vars(owner).get("__init__")
    if dataclasses.is_dataclass(owner) and _made_by_dataclass(init):
        return _dataclass_init(owner)
    return _parsed_part(init, owner, f"{owner.__name__}.__init__")


def _made_by_dataclass(func: Any) -> bool:
    code = getattr(func, "__code__", None)
    return code is not None and code.co_filename.startswith("<")


#: how a method called on the object being built is looked up: ``("self", None)`` for
#: ``self.m(...)``, ``("super", C)`` for ``super().m(...)`` in a method of ``C``,
#: ``("base", B)`` for ``B.m(self, ...)``
Lookup = tuple[str, Any]


def method_part(cls: type, lookup: Lookup, name: str) -> Part | None:
    """The method ``name`` a call on an instance of ``cls`` runs (see :data:`Lookup`);
    ``None`` for ``object.__init__``.

    Raises:
        NotBuilt: It is not a plain function of the class (a property, a builtin).
    """
    mro = cls.__mro__
    kind, where = lookup
    if kind == "self":
        start = 0
    elif where in mro:
        start = mro.index(where) + (1 if kind == "super" else 0)
    else:
        raise NotBuilt(
            f"{where.__name__}.{name} is called on a {cls.__name__}, not one of its bases"
        )
    owner = next((b for b in mro[start:] if name in vars(b)), None)
    if owner is None or owner is object:
        if name == "__init__":
            return None
        raise NotBuilt(f"{cls.__name__} has no method {name}")
    func = vars(owner)[name]
    label = f"{owner.__name__}.{name}"
    if name == "__init__" and dataclasses.is_dataclass(owner) and _made_by_dataclass(func):
        return _dataclass_init(owner)
    if not isinstance(func, types.FunctionType):
        raise NotBuilt(f"{label} is a {type(func).__name__}, not a plain method")
    return _parsed_part(func, owner, label)


def mangled(attr: str, owner: type) -> str:
    """The attribute ``self.<attr>`` names inside a method of ``owner`` (``__x`` is
    ``_Owner__x``)."""
    if attr.startswith("__") and not attr.endswith("__"):
        return f"_{owner.__name__.lstrip('_')}{attr}"
    return attr


# --- which attributes a construction stores, and which need a value first ---------------


def self_attribute(node: cst.CSTNode, self_name: str) -> str | None:
    """``x`` for the node ``self.x``, else ``None``."""
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == self_name
    ):
        return node.attr.value
    return None


def set_attribute(call: cst.BaseExpression, self_name: str) -> tuple[str, cst.Arg] | None:
    """``("x", value)`` for ``object.__setattr__(self, "x", value)`` (a frozen
    dataclass's ``__post_init__``), else ``None``."""
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and isinstance(call.func.value, cst.Name)
        and call.func.value.value == "object"
        and call.func.attr.value == "__setattr__"
        and len(call.args) == 3
        and not any(a.keyword or a.star for a in call.args)
    ):
        return None
    obj, key, value = call.args
    if not (isinstance(obj.value, cst.Name) and obj.value.value == self_name):
        return None
    if not isinstance(key.value, cst.SimpleString) or key.value.prefix:
        return None
    return key.value.raw_value, value


class _Accesses(cst.CSTVisitor):
    """The ``self.x`` read and stored in a statement, and the methods called on ``self``
    (``self.m(...)``, ``super().m(...)``, ``Base.m(self, ...)``) as ``(lookup, name)``."""

    def __init__(self, part: Part) -> None:
        self.part, self.me = part, part.self_name
        self.reads: list[str] = []
        self.stores: list[str] = []
        self.calls: list[tuple[Lookup, str]] = []
        self._targets: set[int] = set()  # ``self.x`` nodes only stored into

    def _attr(self, node: cst.CSTNode) -> str | None:
        attr = self_attribute(node, self.me)
        return None if attr is None else mangled(attr, self.part.owner)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attr = self._attr(node)
        if attr is not None and id(node) not in self._targets:
            self.reads.append(attr)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._store(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._store(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target, read=True)

    def visit_For(self, node: cst.For) -> None:
        self._store(node.target)

    def _store(self, target: cst.BaseExpression, read: bool = False) -> None:
        attr = self._attr(target)
        if attr is not None:
            self.stores.append(attr)
            if not read:
                self._targets.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value)
        elif isinstance(target, cst.StarredElement):
            self._store(target.value)

    def visit_Call(self, node: cst.Call) -> None:
        stored = set_attribute(node, self.me)
        if stored is not None:
            self.stores.append(stored[0])
        called = self_call(node, self.part)
        if called is not None:
            self.calls.append(called[:2])


def self_call(call: cst.Call, part: Part) -> tuple[Lookup, str, int] | None:
    """``(lookup, name, skip)`` for a call of a method on the object being built:
    ``self.m(...)``, ``super().m(...)`` and ``super(C, self).m(...)``, ``Base.m(self, ...)``
    (``skip`` is 1: ``self`` is its first argument), else ``None``."""
    me = part.self_name
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    name = func.attr.value
    receiver = func.value
    if isinstance(receiver, cst.Name) and receiver.value == me:
        return ("self", None), mangled(name, part.owner), 0
    if (
        isinstance(receiver, cst.Call)
        and isinstance(receiver.func, cst.Name)
        and receiver.func.value == "super"
        and (
            not receiver.args
            or (
                len(receiver.args) == 2
                and isinstance(receiver.args[1].value, cst.Name)
                and receiver.args[1].value.value == me
            )
        )
    ):
        return ("super", part.owner), mangled(name, part.owner), 0
    if (
        isinstance(receiver, cst.Name)
        and call.args
        and isinstance(call.args[0].value, cst.Name)
        and call.args[0].value.value == me
        and not call.args[0].keyword
        and not call.args[0].star
    ):
        base = part.global_value(receiver.value)
        if isinstance(base, type) and base in part.owner.__mro__ and base is not object:
            return ("base", base), name, 1
    return None


def _parts_called(cls: type, calls: list[tuple[Lookup, str]]) -> list[Part]:
    out = []
    for lookup, name in calls:
        if lookup[0] == "self" and not is_method(cls, name):
            continue
        try:
            found = method_part(cls, lookup, name)
        except NotBuilt:
            continue  # refused where the inlining meets it
        if found is not None:
            out.append(found)
    return out


def is_method(cls: type, name: str) -> bool:
    """Whether ``self.name`` is a plain method of the class (not a field, a static or
    class method)."""
    if not any(name in vars(b) for b in cls.__mro__[:-1]):
        return False
    return isinstance(inspect.getattr_static(cls, name), types.FunctionType)


@functools.lru_cache(maxsize=256)
def chain_stores(cls: type) -> frozenset[str]:
    """Every attribute ``cls(...)``'s ``__init__`` and the methods it calls on ``self``
    may store (read from the source: a store on some path only counts)."""
    found: set[str] = set()
    todo, seen = [init_part(cls)], set()
    while todo:
        part = todo.pop()
        if part.label in seen:
            continue
        seen.add(part.label)
        scan = _Accesses(part)
        part.fdef.body.visit(scan)
        found.update(scan.stores)
        todo.extend(_parts_called(cls, scan.calls))
    return frozenset(found)


def field_starts(cls: type) -> list[str]:
    """The attributes that need a value before ``cls(...)``'s inlined construction runs:
    those stored on some paths only, or read before any store (a class attribute
    ``count = 0`` then ``self.count += 1``). The others are stored, on every path,
    before they are read."""
    walk = _FieldOrder(cls)
    walk.part(init_part(cls), definite=True)
    stored = chain_stores(cls)
    return [a for a in walk.needs if a in stored]


class _FieldOrder:
    """A walk of a construction's statements in the order they run, following the
    methods called on ``self`` at the top level of a body: which attributes are stored
    before they are read on every path (``done``), and which are not (``needs``)."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.done: set[str] = set()
        self.needs: list[str] = []
        self._active: list[str] = []

    def _need(self, attrs: list[str]) -> None:
        for attr in attrs:
            if attr not in self.done and attr not in self.needs:
                self.needs.append(attr)

    def part(self, part: Part, definite: bool) -> None:
        if part.label in self._active:
            return
        self._active.append(part.label)
        try:
            self.statements(part, part.fdef.body.body, definite)
        finally:
            self._active.pop()

    def statements(self, part: Part, body: Any, definite: bool) -> None:
        for stmt in body:
            self.statement(part, stmt, definite)

    def statement(self, part: Part, stmt: cst.CSTNode, definite: bool) -> None:
        if isinstance(stmt, cst.If) and definite and stmt.orelse is not None:
            scan = _Accesses(part)
            stmt.test.visit(scan)
            self._need(scan.reads)
            before = set(self.done)
            self.statements(part, stmt.body.body, True)
            after_body, self.done = self.done, before
            orelse = stmt.orelse
            self.statements(
                part, [orelse] if isinstance(orelse, cst.If) else orelse.body.body, True
            )
            self.done &= after_body
            return
        scan = _Accesses(part)
        stmt.visit(scan)
        self._need(scan.reads)
        simple = isinstance(stmt, cst.SimpleStatementLine)
        for called in _parts_called(self.cls, scan.calls):
            self.part(called, definite and simple)
        if definite and simple:
            self.done.update(scan.stores)
        else:
            self._need(scan.stores)
