"""``Layer.init(W)``: a class method of the same module, inlined where it is called.

A factory class method (``@classmethod def init(cls, W): return cls(W * 1.0)``) builds
the object through ``cls``, a value only the call knows. Inlined at the call, with
``cls`` read as the class's name there, the construction is one the normalizer models
(``Layer(...)``: the new object's fields, its ``__init__`` inlined) and the method's
other locals are renamed apart as a local function's are (:meth:`inline_def`).

Only a method of a class named by a plain global name at the call, defined in the
caller's module, whose free names the caller does not also bind, is inlined; any other
call keeps the run-time dispatch (where ``cls(...)`` is refused).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

import libcst as cst

from . import ir
from .norm_base import lookup_name
from .norm_inline import Rename
from .norm_queries import all_params
from .norm_scan import NameScan, names_read
from .source import parse_function

if TYPE_CHECKING:  # pragma: no cover
    from .normalize import Normalizer


def inline_classmethod(norm: Normalizer, node: cst.Call) -> ir.Expr | None:
    """Inline ``C.method(...)`` when ``method`` is a class method of the class ``C`` (see
    the module's docstring); ``None`` (nothing emitted) for any other call."""
    func = node.func
    if not (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value not in norm.locals
        and func.value.value not in norm.env
        and func.value.value not in norm.params
    ):
        return None
    name = func.value.value
    if not isinstance(lookup_name((name,), norm.p.closure, norm.p.globals), type):
        return None  # (looked up without recording it: only a class is resolved here)
    owner = norm.resolve(name)
    method = getattr(owner, func.attr.value, None) if isinstance(owner, type) else None
    if not (
        isinstance(method, types.MethodType)
        and method.__self__ is owner
        and isinstance(method.__func__, types.FunctionType)
        and method.__func__.__globals__ is norm.p.globals
        and not method.__func__.__closure__
    ):
        return None
    fdef = _method_def(norm, method.__func__, func.value.value)
    if fdef is None or not _free_names_kept(norm, fdef):
        return None
    return norm.inline_def(fdef, node)


def _method_def(norm: Normalizer, func: types.FunctionType, owner: str) -> cst.FunctionDef | None:
    """The method's definition without its decorator and first parameter, ``cls`` read as
    ``owner``; ``None`` when it cannot be read so."""
    try:
        parsed = parse_function(func)
    except Exception:
        return None
    fdef = parsed.node
    norm.foreign.append(parsed)  # refusals in its body name its own lines
    if not isinstance(fdef, cst.FunctionDef) or len(fdef.decorators) != 1:
        return None
    params = fdef.params
    if not params.params or params.posonly_params:
        return None
    first = params.params[0].name.value
    scan = NameScan()
    fdef.body.visit(scan)
    if first in scan.assigned or owner in scan.assigned or owner in names_read(fdef.body):
        return None  # cls rebound, or the class's name used for something else

    body = fdef.body.visit(Rename({first: owner}, norm.origin))
    assert isinstance(body, cst.BaseSuite)
    return fdef.with_changes(
        name=cst.Name(f"{owner}_{fdef.name.value}"),
        decorators=[],
        params=params.with_changes(params=params.params[1:]),
        body=body,
    )


def _free_names_kept(norm: Normalizer, fdef: cst.FunctionDef) -> bool:
    """Whether the names the method reads from its module are not names of the caller
    (inlined, they would read the caller's)."""
    scan = NameScan()
    fdef.body.visit(scan)
    own = scan.assigned | {p.name.value for p in all_params(fdef.params)}
    free = set(names_read(fdef.body)) - own
    return not (free & (norm.scan.assigned | norm.locals | set(norm.params)))
