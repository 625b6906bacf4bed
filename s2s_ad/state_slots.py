"""Run-time helpers of object state (see :mod:`s2s_ad.object_state`): attributes as slots.

Each ``obj.name = v`` that code generated in state mode runs makes the slot
``(id(obj), name)`` a variable of the gradient's table (``runtime.VARIABLE_GRADS``): the
reads of the attribute after it add their adjoints to the slot (:func:`slot_grad`), the
backward sweep takes them out where the store happened (:func:`slot_gradient`) and hands
them to ``v``. A slot stored several times is reset between stores, as a local variable
overwritten; reads of an attribute no store of the call wrote read the caller's state,
a constant: their adjoints are dropped. The table keeps the objects alive, so their ids
stay theirs while it runs.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

from . import runtime
from .errors import TransformError

_MISSING = object()

#: (class, attribute) -> what the class does with the attribute besides keeping it in the
#: instance's dict (a property, a descriptor, its own ``__setattr__``), or ``None``
_COMPUTED: dict[tuple[type, str], str | None] = {}


def computed(cls: type, name: str) -> str | None:
    """What ``cls`` does with ``obj.name`` other than keep the value in the instance dict:
    ``"a property"``, ``"a descriptor"``, ``"its own __setattr__"``, else ``None``."""
    key = (cls, name)
    found = _COMPUTED.get(key, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[return-value]
    what = None
    attr = inspect.getattr_static(cls, name, None)
    if isinstance(attr, property):
        what = "a property"
    elif (
        attr is not None
        and hasattr(type(attr), "__set__")
        and not isinstance(attr, types.MemberDescriptorType)
    ):
        what = "a descriptor"
    elif getattr(cls, "__setattr__", object.__setattr__) is not object.__setattr__:
        what = "its own __setattr__"
    _COMPUTED[key] = what
    return what


def _holds_floats(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_floats(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_floats(v) for v in value.values())
    return runtime._floating(value)


def store_slot(obj: Any, name: str, value: Any) -> None:
    """``obj.name = value`` in the forward sweep of state-mode code.

    Raises:
        TransformError: (at the user's line) a float value stored through a property, a
            descriptor or a class's own ``__setattr__``: what reads give back is not
            known to be the value stored.
    """
    cls = type(obj)
    how = _COMPUTED.get((cls, name), _MISSING)
    if how is _MISSING:
        how = computed(cls, name)
    if how is not None and _holds_floats(value):
        raise runtime._refusal_here(
            f"a differentiated value stored in the attribute .{name} of {cls.__name__}, "
            f"which {how} handles",
            "store it in a plain attribute (one the instance's __dict__ holds)",
        )
    setattr(obj, name, value)
    table = runtime.VARIABLE_GRADS
    if table is None:
        return
    slots = getattr(table, "slots", None)
    if slots is None:
        slots = table.slots = {}
        table.owners = set()
    table.owners.add(id(obj))
    key = (id(obj), name)
    entry = slots.get(key)
    if entry is None:
        slots[key] = [1, obj]  # the object kept alive: its id stays its own
    else:
        entry[0] += 1
    if key not in table:
        table[key] = 0.0


def slot_grad(obj: Any, name: str, g: Any) -> None:
    """Adjoint ``g`` of a read of ``obj.name``: added to its slot when a store of this
    run wrote it (else the read saw the caller's state, a constant)."""
    table = runtime.VARIABLE_GRADS
    if table is None or runtime.is_zero(g):
        return
    key = (id(obj), name)
    old = table.get(key)
    if old is None:
        if id(obj) in getattr(table, "owners", ()) and name not in getattr(obj, "__dict__", ()):
            how = computed(type(obj), name)
            if how == "a property" or how == "a descriptor":
                raise runtime._refusal_here(
                    f"a read of .{name}, {how} of {type(obj).__name__}, from an object whose "
                    "attributes the function stores (what it computes from them is not "
                    "differentiated)",
                    "read the stored attributes themselves",
                )
        return
    table[key] = g if runtime.is_zero(old) else runtime.add(old, g)


def slot_index(obj: Any, name: str, g: Any) -> Any:
    """Adjoint of ``obj.name`` read from a differentiated record in state mode: into the
    slot when this run stored the attribute (``runtime.HANDED``), else the record's
    field (``runtime.attr_index``)."""
    table = runtime.VARIABLE_GRADS
    if table is not None and (id(obj), name) in table:
        slot_grad(obj, name, g)
        return runtime.HANDED
    return runtime.attr_index(obj, name, g)


def slot_gradient(obj: Any, name: str, value: Any) -> Any:
    """The adjoint of ``value`` in ``obj.name = value`` (backward sweep): what the reads
    of the attribute after the store added to its slot.

    Raises:
        TransformError: The adjoint's structure differs from the value's (a list held
            in the attribute was changed in place after the store).
    """
    table = runtime.VARIABLE_GRADS
    slots = getattr(table, "slots", None)
    key = (id(obj), name)
    entry = None if slots is None else slots.get(key)
    if entry is None:
        return 0.0
    g = table.get(key, 0.0)
    entry[0] -= 1
    if entry[0] <= 0:  # the first store of the run: reads before it saw the caller's state
        table.pop(key, None)
        del slots[key]
    else:
        table[key] = 0.0
    if runtime.is_zero(g):
        return 0.0
    if isinstance(value, (list, tuple)) and (
        not isinstance(g, (list, tuple)) or len(g) != len(value)
    ):
        raise TransformError(
            f"a list stored in the attribute .{name} of {type(obj).__name__} and changed in "
            "place afterwards",
            hint=f"store a new list instead (obj.{name} = obj.{name} + [v])",
        )
    return g
