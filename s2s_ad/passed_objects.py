"""Plain objects passed in as differentiated arguments: a model object, a list of layers.

``grad(loss)(model, x)`` where ``model`` is an instance of a user class (not a
dataclass or a namedtuple) whose attributes hold arrays: its attributes are the fields
of a record (:mod:`s2s_ad.built_objects`), read and differentiated as those of an object
built in the loss; its methods and its call are differentiated through their source.
The objects an argument holds (in lists, tuples, dicts, dataclasses and other objects'
attributes) are registered as records when the argument is checked
(:func:`register_passed`), and a tangent passed for one (``jvp``) too.

The gradient is an object of the same class made without calling ``__init__``
(``object.__new__`` and a copy of the instance dict): each attribute that holds floats
(an array, a float, a container or object holding them) is replaced by its gradient,
the others (names, integers, functions, flags) keep their values.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import sys
import sysconfig
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .built_objects import remember
from .duck import is_foreign

#: modules whose classes are not user objects (their instances stay refused)
_LIBRARIES = frozenset(
    ["builtins", "numpy", "scipy", "s2s_ad", "collections", "typing", "abc", "functools"]
)


#: types whose values are never plain objects (checked first: a model holds many)
_LEAVES = frozenset([np.ndarray, float, int, bool, str, type(None), np.float64])


def is_plain_object(value: Any) -> bool:
    """Whether ``value`` is an instance of a user class that is neither a dataclass, a
    namedtuple nor a container: an object whose attributes may hold arrays."""
    if type(value) in _LEAVES:
        return False
    if isinstance(
        value,
        (type, types.FunctionType, types.MethodType, types.ModuleType, types.BuiltinFunctionType),
    ):
        return False
    if isinstance(value, (tuple, list, dict, set, frozenset, str, bytes, np.ndarray, np.generic)):
        return False
    if isinstance(value, (int, float, complex)) or dataclasses.is_dataclass(value):
        return False
    return _user_class(type(value)) and not is_foreign(value)


@functools.lru_cache(maxsize=512)
def _user_class(cls: type) -> bool:
    """Whether ``cls`` is defined by the user's code: not in the standard library, NumPy,
    SciPy, s2s_ad or an installed package (whose objects, a pandas frame or a library's
    model, have no structure the gradient could copy)."""
    module = getattr(cls, "__module__", "") or ""
    if module.split(".")[0] in _LIBRARIES:
        return False
    path = getattr(sys.modules.get(module), "__file__", None)
    if path is None:
        return module == "__main__"
    return not os.path.realpath(path).startswith(_installed_dirs())


@functools.lru_cache(maxsize=1)
def _installed_dirs() -> tuple[str, ...]:
    """The directories of the standard library and of installed packages."""
    paths = sysconfig.get_paths()
    names = ("stdlib", "platstdlib", "purelib", "platlib")
    return tuple(sorted({os.path.realpath(paths[n]) + os.sep for n in names if n in paths}))


def holds_floats(value: Any, seen: frozenset[int] = frozenset()) -> bool:
    """Whether ``value`` is or holds floats (an attribute the gradient replaces); ``seen``
    holds the ids of the objects it is reached through."""
    if isinstance(value, (float, np.floating)):
        return True
    if isinstance(value, np.ndarray) or is_foreign(value):
        return value.dtype.kind in "fc"
    if isinstance(value, (tuple, list)):
        return any(holds_floats(v, seen) for v in value)
    if isinstance(value, dict):
        return any(holds_floats(v, seen) for v in value.values())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(holds_floats(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if is_plain_object(value) and id(value) not in seen:
        inner = seen | {id(value)}
        return any(holds_floats(v, inner) for v in getattr(value, "__dict__", {}).values())
    return False


def register_passed(name: str, value: Any, path: tuple[int, ...] = ()) -> None:
    """Register the plain objects ``value`` holds as records (their attributes fields,
    their methods and calls differentiated through their source: an activation object
    held by a layer too).

    Args:
        name: The argument's name (for messages).
        value: The argument (or a part of it).
        path: ids of the objects being walked (a cycle of objects is refused).

    Raises:
        TypeError: An object without weak references (``__slots__`` with ``__dict__``
            but not ``__weakref__``), or a cycle of objects (an attribute referring back
            to its owner).
    """
    kind = type(value)
    if kind in _LEAVES:  # the arrays and numbers of a model: nothing to walk
        return
    if isinstance(value, (tuple, list)):
        for v in value:
            register_passed(name, v, path)
        return
    if isinstance(value, dict):
        for v in value.values():
            register_passed(name, v, path)
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            register_passed(name, getattr(value, f.name), path)
        return
    if not is_plain_object(value) or not hasattr(value, "__dict__"):
        return  # (an object with __slots__ only: its attributes are refused where read)
    cls = type(value).__name__
    if id(value) in path:
        raise TypeError(
            f"argument {name!r} holds a cycle of objects (a {cls} reached again through its "
            "own attributes): its gradient cannot have its structure. Pass the parameters "
            "without the reference back to their owner"
        )
    try:
        remember(value)
    except TypeError:
        raise TypeError(
            f"argument {name!r} holds a {cls} object without weak references (__slots__ "
            "without __weakref__): it cannot be taken as a record of arrays. Add "
            "'__weakref__' to its __slots__, or pass its arrays"
        ) from None
    for v in vars(value).values():
        register_passed(name, v, (*path, id(value)))


def object_gradient(g: Any, x: Any, fix: Callable[[Any, Any], Any]) -> Any:
    """The gradient of the plain object ``x`` as an object of its class: its attributes
    that hold floats replaced by their parts of ``g`` (a dict of attribute adjoints, an
    object of the class, or zero) given the structure of each by ``fix``."""
    out = object.__new__(type(x))
    state = dict(vars(x))
    zero = g is None or (type(g) is float and g == 0.0)
    for key, value in state.items():
        if not holds_floats(value):
            continue
        if zero:
            part = 0.0
        elif isinstance(g, dict):
            part = g.get(key, 0.0)
        else:
            part = getattr(g, key, 0.0)
        state[key] = fix(0.0 if part is None else part, value)
    out.__dict__.update(state)
    return out


def tangent_parts(name: str, primal: Any, tangent: Any) -> list[tuple[str, Any, Any]]:
    """The attributes of a plain object ``primal`` that hold floats, with their parts of
    ``tangent`` (an object of the same class, or a dict): ``(name, value, part)``.

    Raises:
        ValueError: The tangent lacks one of them.
    """
    out = []
    for key, value in vars(primal).items():
        if not holds_floats(value):
            continue
        if isinstance(tangent, dict):
            if key not in tangent:
                raise ValueError(f"tangent for {name!r} has no entry {key!r}")
            part = tangent[key]
        elif key in getattr(tangent, "__dict__", {}):
            part = getattr(tangent, key)
        else:
            raise ValueError(f"tangent for {name!r} has no attribute {key!r}")
        out.append((f"{name}.{key}", value, part))
    if is_plain_object(tangent):
        register_passed(name, tangent)
    return out


def computed_attribute(obj: Any, name: str) -> str | None:
    """For an attribute read from a record that its class computes (a ``property`` or
    another descriptor that is not a method): what it is, else ``None``."""
    if name in getattr(obj, "__dict__", ()):
        return None
    found = inspect.getattr_static(type(obj), name, None)
    if found is None or isinstance(
        found, (types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType)
    ):
        return None
    if isinstance(found, property):
        return "property"
    if hasattr(type(found), "__get__") and not callable(found):
        return "descriptor"
    return None
