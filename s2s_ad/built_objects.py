"""Objects as records of differentiated values: namedtuples, dataclasses and plain classes.

A differentiated function may build an object from its parameters (``Dense(W, b)``,
``Params(W=W, b=b)``, ``Layer(W, b)`` of a ``typing.NamedTuple``) and read its
attributes, or call its methods, which read them. Such an object is a *record*: its
adjoint (and its tangent) is a dict from attribute name to the adjoint of that
attribute's value (a namedtuple keeps a tuple, as a tuple does). A dataclass passed as
a differentiated argument is a record too; its gradient comes back as the same
dataclass.

What the construction does to its arguments must be known: a namedtuple or a dataclass
(without ``__post_init__``) stores each argument in the field of its name; a plain
class's ``__init__`` must consist of stores ``self.name = parameter`` (optionally
``np.asarray(parameter)``), stores of values that are not parameters, and a docstring;
a class that defines ``__getitem__``, ``__iter__`` or ``__setitem__`` is no record (its
indexing runs its own code), so building it from differentiated values is refused.
Anything else is refused by :func:`init_attributes` (with the reason), which the
normalizer turns into a refusal at the user's line.

Generated code calls :func:`build_record` (``_ad.build_record``) for the construction and
:func:`record_parts` / :func:`record_tangent` in its derivatives.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import textwrap
import types
import weakref
from typing import Any

import numpy as np

#: plain objects built by generated code from differentiated values, or passed in as
#: differentiated arguments (:func:`register_passed`): their attributes are fields
_BUILT: weakref.WeakSet[Any] = weakref.WeakSet()

#: the same for objects whose class makes them unhashable (``__eq__`` without
#: ``__hash__``), which a weak set cannot hold: id -> weak reference
_UNHASHABLE: dict[int, weakref.ref[Any]] = {}


def remember(obj: Any) -> None:
    """Take ``obj`` for a record whose attributes are fields (see :func:`is_record`).

    Raises:
        TypeError: ``obj`` has no weak references (``__slots__`` without ``__weakref__``).
    """
    try:
        _BUILT.add(obj)
        return
    except TypeError:
        pass
    key = id(obj)

    def forget(ref: weakref.ref[Any]) -> None:
        if _UNHASHABLE.get(key) is ref:
            del _UNHASHABLE[key]

    _UNHASHABLE[key] = weakref.ref(obj, forget)


#: methods that make indexing or iterating an object run the class's own code
_CONTAINER_METHODS = frozenset({"__getitem__", "__iter__", "__setitem__"})

#: wrappers that leave a stored value's derivative alone (``self.W = np.asarray(W)``)
_IDENTITY = frozenset({"asarray", "array", "asanyarray", "float", "copy"})


def is_namedtuple_class(cls: Any) -> bool:
    """Whether ``cls`` is a namedtuple class (``collections`` or ``typing``)."""
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def record_kind(cls: Any) -> str | None:
    """``"namedtuple"``, ``"dataclass"`` or ``"plain"`` for a user class whose instances
    can be records, else ``None`` (builtins, NumPy, functions)."""
    if not isinstance(cls, type):
        return None
    if is_namedtuple_class(cls):
        return "namedtuple"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    module = getattr(cls, "__module__", "") or ""
    root = module.split(".")[0]
    if root in ("builtins", "numpy", "scipy", "s2s_ad", "collections", "typing", "abc"):
        return None
    init = cls.__dict__.get("__init__")
    if init is None and any("__init__" in vars(base) for base in cls.__mro__[1:-1]):
        init = next(vars(b)["__init__"] for b in cls.__mro__[1:-1] if "__init__" in vars(b))
    if not inspect.isfunction(init):
        return None
    return "plain"


@functools.lru_cache(maxsize=256)
def init_attributes(cls: type) -> dict[str, str]:
    """Parameter of ``cls(...)`` -> the attribute its value is stored in.

    Raises:
        ValueError: with the reason, when the construction is not such a record.
    """
    kind = record_kind(cls)
    if kind == "namedtuple":
        return {name: name for name in cls._fields}  # type: ignore[attr-defined]
    protocol = {m for b in cls.__mro__[:-1] for m in _CONTAINER_METHODS if m in vars(b)}
    if protocol:
        # ``P[k]`` or ``for layer in P`` runs the class's own code, which the derivative
        # of a subscript or a loop over a record does not follow
        raise ValueError(f"{cls.__name__} defines {sorted(protocol)[0]}")
    if kind == "dataclass":
        if hasattr(cls, "__post_init__"):
            raise ValueError(f"dataclass {cls.__name__} has a __post_init__")
        fields = dataclasses.fields(cls)
        return {f.name: f.name for f in fields if f.init}
    if kind != "plain":
        raise ValueError(f"{getattr(cls, '__name__', cls)!r} is not a user class")
    init = next(vars(b)["__init__"] for b in cls.__mro__ if "__init__" in vars(b))
    try:
        source = textwrap.dedent(inspect.getsource(init))
    except (OSError, TypeError) as exc:
        raise ValueError(f"the source of {cls.__name__}.__init__ is not available") from exc
    fdef = ast.parse(source).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    args = fdef.args
    if args.vararg or args.kwarg or not args.args:
        raise ValueError(f"{cls.__name__}.__init__ takes *args or **kwargs")
    self_name = args.args[0].arg
    params = {a.arg for a in [*args.posonlyargs, *args.args[1:], *args.kwonlyargs]}
    out: dict[str, str] = {}
    for stmt in fdef.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        elif isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        else:
            raise ValueError(
                f"{cls.__name__}.__init__ does more than store attributes "
                f"(line {stmt.lineno} of the method)"
            )
        for target in targets:
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
            ):
                raise ValueError(f"{cls.__name__}.__init__ assigns something other than self.x")
        read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & params
        stored = _stored_param(value)
        if stored is None and read:
            raise ValueError(
                f"{cls.__name__}.__init__ computes an attribute from its parameters "
                f"({ast.unparse(stmt)})"
            )
        if stored is not None and stored in params:
            for target in targets:
                assert isinstance(target, ast.Attribute)
                out.setdefault(stored, target.attr)
    return out


def _stored_param(value: ast.expr) -> str | None:
    """The parameter a stored value is (``W``, ``np.asarray(W)``), else ``None``."""
    if isinstance(value, ast.Name):
        return value.id
    if (
        isinstance(value, ast.Call)
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], ast.Name)
    ):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in _IDENTITY:
            return value.args[0].id
    return None


def is_record(obj: Any) -> bool:
    """Whether ``obj`` is a record whose attributes are fields (a dataclass instance, or
    a plain object generated code built)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return True
    try:
        return obj in _BUILT
    except TypeError:
        ref = _UNHASHABLE.get(id(obj))
        return ref is not None and ref() is obj


def has_fields(obj: Any) -> bool:
    """Whether ``obj`` is a record or a namedtuple: a value whose methods (and call) are
    differentiated through their source with the object as an argument."""
    return is_record(obj) or (isinstance(obj, tuple) and hasattr(obj, "_fields"))


def _bound(cls: type, parts: tuple[Any, ...], keys: tuple[str, ...]) -> dict[str, int]:
    """Parameter name -> position in ``parts`` of the argument bound to it."""
    n = len(parts) - len(keys)
    params = list(inspect.signature(cls).parameters)
    out = {name: k for k, name in enumerate(params[:n])}
    out.update({key: n + k for k, key in enumerate(keys)})
    return out


def build_record(cls: type, parts: tuple[Any, ...], keys: tuple[str, ...]) -> Any:
    """``cls(*positional, **named)`` where the last ``len(keys)`` of ``parts`` are passed
    by those keywords; a plain object is remembered as a record."""
    n = len(parts) - len(keys)
    obj = cls(*parts[:n], **dict(zip(keys, parts[n:])))
    if record_kind(cls) == "plain":
        try:
            _BUILT.add(obj)
        except TypeError:  # no weak references (__slots__): its attributes are refused
            pass
    return obj


def record_parts(g: Any, cls: type, parts: tuple[Any, ...], keys: tuple[str, ...]) -> Any:
    """Adjoint of the arguments ``parts`` of :func:`build_record` from the record's
    adjoint ``g`` (a dict of attribute adjoints, or a tuple for a namedtuple)."""
    out: list[Any] = [0.0] * len(parts)
    if g is None or (type(g) is float and g == 0.0):
        return tuple(out)
    attrs = init_attributes(cls)
    fields = getattr(cls, "_fields", None) if is_namedtuple_class(cls) else None
    for name, pos in _bound(cls, parts, keys).items():
        attr = attrs.get(name)
        if attr is None:
            continue
        if fields is not None:
            out[pos] = g[fields.index(attr)]
        elif isinstance(g, dict):
            out[pos] = g.get(attr, 0.0)
        else:
            out[pos] = getattr(g, attr, 0.0)
    return tuple(out)


def record_tangent(t: Any, cls: type, parts: tuple[Any, ...], keys: tuple[str, ...]) -> Any:
    """Tangent of :func:`build_record` from the tangents ``t`` of its arguments: a dict
    of attribute tangents (a tuple for a namedtuple)."""
    attrs = init_attributes(cls)
    zero = t is None or (type(t) is float and t == 0.0)
    bound = _bound(cls, parts, keys)

    def part(pos: int) -> Any:
        # a zero tangent of an array argument as zeros of its shape: the tangent code
        # of the class's methods (``x @ self.W``) needs the shape
        got = 0.0 if zero else t[pos]
        if (got is None or (type(got) is float and got == 0.0)) and isinstance(
            parts[pos], np.ndarray
        ):
            return np.zeros(parts[pos].shape)
        return got

    if is_namedtuple_class(cls):
        fields = cls._fields  # type: ignore[attr-defined]
        return tuple(0.0 if f not in bound else part(bound[f]) for f in fields)
    return {attr: part(bound[name]) for name, attr in attrs.items() if name in bound}


def record_fields(obj: Any) -> list[str]:
    """The attributes of a record that its adjoint may hold."""
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj)]
    return list(vars(obj))


# --- objects built field by field (an inlined ``__init__``, see norm_init.py) -----------


class _Unset:
    """The value of a field an inlined construction stores on some paths only, on a path
    that does not store it: :func:`new_record` leaves the attribute out."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()


def new_record(cls: type, names: tuple[str, ...], values: tuple[Any, ...]) -> Any:
    """An instance of ``cls`` whose attributes ``names`` hold ``values``, made without
    running ``__init__`` (whose statements the generated code ran on the fields); a
    plain object is remembered as a record."""
    obj = object.__new__(cls)
    obj.__dict__.update((n, v) for n, v in zip(names, values) if v is not UNSET)
    if not dataclasses.is_dataclass(cls):
        remember(obj)
    return obj


def new_record_parts(g: Any, names: tuple[str, ...], values: tuple[Any, ...]) -> Any:
    """Adjoint of the fields ``values`` of :func:`new_record` from the record's adjoint
    ``g`` (a dict of attribute adjoints)."""
    if g is None or (type(g) is float and g == 0.0):
        return (0.0,) * len(values)
    if isinstance(g, dict):
        return tuple(g.get(n, 0.0) for n in names)
    return tuple(getattr(g, n, 0.0) for n in names)


def new_record_tangent(t: Any, names: tuple[str, ...], values: tuple[Any, ...]) -> Any:
    """Tangent of :func:`new_record` from the tangents ``t`` of its fields: a dict of
    attribute tangents (a zero tangent of an array field as zeros of its shape, which
    the tangent code of the class's methods needs)."""
    zero = t is None or (type(t) is float and t == 0.0)
    return {
        name: _dense(0.0 if zero else t[k], value)
        for k, (name, value) in enumerate(zip(names, values))
        if value is not UNSET
    }


def _dense(t: Any, value: Any) -> Any:
    """The tangent ``t`` of ``value`` with each zero standing for an array (also inside
    lists, tuples and dicts) as zeros of its shape."""
    if t is None or (type(t) is float and t == 0.0):
        if isinstance(value, np.ndarray):
            return np.zeros(value.shape)
        if type(value) in (list, tuple) and _holds_array(value):
            return type(value)(_dense(0.0, v) for v in value)
        if type(value) is dict and _holds_array(value):
            return {k: _dense(0.0, v) for k, v in value.items()}
        return t
    if type(value) in (list, tuple) and type(t) in (list, tuple) and len(t) == len(value):
        return type(t)(_dense(d, v) for d, v in zip(t, value))
    if type(value) is dict and type(t) is dict:
        return {k: _dense(t.get(k, 0.0), v) for k, v in value.items()}
    return t


def _holds_array(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return True
    if type(value) in (list, tuple):
        return any(_holds_array(v) for v in value)
    if type(value) is dict:
        return any(_holds_array(v) for v in value.values())
    return False


#: classes whose construction from differentiated values is not followed -> why
_REFUSED: weakref.WeakKeyDictionary[type, tuple[str, str]] = weakref.WeakKeyDictionary()


def note_refused(cls: type, reason: str, hint: str) -> None:
    """Remember why building ``cls`` was not inlined (for :func:`construction_refusal`)."""
    try:
        _REFUSED[cls] = (reason, hint)
    except TypeError:
        pass


def construction_refusal(cls: Any) -> tuple[str, str] | None:
    """``(reason, hint)`` when ``cls(...)`` is a class call whose construction the
    normalizer did not inline, else ``None``."""
    try:
        return _REFUSED.get(cls)
    except TypeError:
        return None


def unknown_call_refusal(code: str, callee: Any) -> tuple[str, str]:
    """The construct and hint refusing a call without a gradient rule that reaches a
    differentiated value: for a class whose construction was not inlined, the reason."""
    refused = construction_refusal(callee)
    if refused is not None:
        return f"building {code} from differentiated values: {refused[0]}", refused[1]
    return f"call to {code} (no gradient rule)", f"register one with s2s_ad.defgrad({code}, rule)"


def super_method(cls: type, obj: Any, name: str) -> Any:
    """The function ``super(cls, obj).name`` finds (as a plain function, called with
    ``obj`` as its first argument: see norm_super.py), or the bound value when it is
    not a plain function of a class."""
    for base in type(obj).__mro__[type(obj).__mro__.index(cls) + 1 :]:
        if name in vars(base):
            value = vars(base)[name]
            if isinstance(value, types.FunctionType):
                return value
            break
    bound = getattr(super(cls, obj), name)
    return lambda _obj, *args, **kwargs: bound(*args, **kwargs)
