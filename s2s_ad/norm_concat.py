"""``a + b`` of locals bound by calls, or of slices of parameters: lists or arrays.

``enc = encoder_layers(); dec = decoder_layers(); enc + dec`` and ``net[:1] + net[1:]``
on an unannotated parameter list: the normalizer cannot tell whether the two sides are
lists (``+`` concatenates) or arrays (``+`` adds). Like two parameters that may hold
containers (:func:`~s2s_ad.container_names.maybe_containers`), such sides are joined by
``_ad.concat``, which decides when the code runs and is exact either way.

A side qualifies when it is

* a slice ``x[a:b]`` of a name or attribute that may hold a list (or surely does), or
* a local name, never a parameter nor an operand of other arithmetic, each of whose
  bindings is a call of a Python function of the user's (not NumPy's, SciPy's or one
  with a rule), a method call on a local object that arrays do not have
  (``self.encoder_layers()``), or such a slice.
"""

from __future__ import annotations

import types
from typing import Any

import libcst as cst
import numpy as np

from .container_names import call_bound
from .rules import REGISTRY

_LIBRARIES = ("numpy", "scipy", "math", "builtins", "autograd", "jax")


def sliced(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The sequence ``x`` of a one-slice subscript ``x[a:b]``, else ``None``."""
    if (
        isinstance(node, cst.Subscript)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Slice)
    ):
        return node.value
    return None


def user_call(norm: Any, node: cst.BaseExpression) -> bool:
    """Whether ``node`` calls a function of the user's, or a method arrays do not have on
    a local object: what it returns may be a list."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute):
        root: cst.BaseExpression = func
        while isinstance(root, cst.Attribute):
            root = root.value
        return (
            isinstance(root, cst.Name)
            and root.value in norm.locals
            and not hasattr(np.ndarray, func.attr.value)
        )
    if not isinstance(func, cst.Name) or func.value in norm.locals:
        return False
    obj = norm.resolve(func.value)
    return (
        isinstance(obj, types.FunctionType)
        and not str(getattr(obj, "__module__", "") or "").startswith(_LIBRARIES)
        and REGISTRY.lookup(obj) is None
    )


def sliced_container(norm: Any, node: cst.BaseExpression) -> bool:
    """Whether ``node`` is a slice ``x[a:b]`` of a parameter that may hold a list, a name
    that does, or an attribute of a local object (``self.layers[1:]``)."""
    seq = sliced(node)
    if isinstance(seq, cst.Name):
        return seq.value in norm.maybe_containers or seq.value in norm.containers
    if isinstance(seq, cst.Attribute) and norm.dotted(seq) is None:
        root: cst.BaseExpression = seq
        while isinstance(root, cst.Attribute):
            root = root.value
        return isinstance(root, cst.Name) and root.value in norm.locals
    return False


def bound_by_calls(norm: Any, name: str) -> bool:
    """Whether the local ``name`` is bound only by user calls or slices (see above)."""
    if name in norm.params or name not in norm.locals:
        return False
    table = norm.__dict__.get("_call_bound")
    if table is None:
        table = norm.__dict__["_call_bound"] = call_bound(norm.p.node)
    values = table.get(name)
    if not values:
        return False
    return all(user_call(norm, v) or sliced_container(norm, v) for v in values)
