"""Decorated local functions, as the functions their decorators return.

``@logged def layer(u, W): ...`` inside the differentiated function, where ``logged`` (a
local function, or a plain function of the same module) returns a wrapper it defines::

    def logged(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            return fn(*args, **kwargs)
        return inner

becomes two local functions: ``layer`` undecorated under a fresh name, and the wrapper
named ``layer``, its ``fn`` renamed to that fresh name. A decorator called with
arguments (``@scaled_by(0.5)``, a function returning such a decorator) binds them to fresh
variables where the function is defined, as Python evaluates them there. Calls of
``layer`` then inline the wrapper, which inlines the function (``*args``/``**kwargs``
forwarded by ``norm_variadic``). Decorators applied bottom-up, each in turn.

Only these shapes are taken: a decorator whose body is its wrapper's ``def`` then
``return`` of it (the wrapper decorated with ``functools.wraps(fn)`` at most), a factory
whose body is the decorator's ``def`` then its ``return``. Anything else (a cache, a
registry, a counter) is refused as before.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

import libcst as cst

from . import ir
from .norm_inline import Rename
from .norm_queries import all_params
from .norm_scan import NameScan, names_read
from .source import parse_function

if TYPE_CHECKING:
    from .norm_inline import InnerFunctions


def undecorate(norm: InnerFunctions, node: cst.FunctionDef) -> list[cst.FunctionDef] | None:
    """The local functions a decorated local ``def`` stands for (the undecorated one
    first, the outermost wrapper, named as ``node``, last), or ``None`` when a decorator
    is not of the shapes above."""
    name = node.name.value
    inner = norm.reserve(f"_{name}_undecorated")
    made = [node.with_changes(name=cst.Name(inner), decorators=[])]
    norm.origin[made[0]] = norm.origin.get(node, node)
    decorators = list(node.decorators)
    for k, deco in enumerate(reversed(decorators)):
        outer = name if k == len(decorators) - 1 else norm.reserve(f"_{name}_wrapped")
        wrapper = _wrapper(norm, deco.decorator, inner, outer)
        if wrapper is None:
            return None
        made.append(wrapper)
        inner = outer
    return made


def _strip_doc(body: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a body, a leading docstring left out."""
    stmts = list(body.body) if isinstance(body, cst.IndentedBlock) else []
    if (
        stmts
        and isinstance(stmts[0], cst.SimpleStatementLine)
        and len(stmts[0].body) == 1
        and isinstance(stmts[0].body[0], cst.Expr)
        and isinstance(stmts[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    ):
        stmts = stmts[1:]
    return stmts


def _def_then_return(fdef: cst.FunctionDef) -> cst.FunctionDef | None:
    """The function ``fdef`` defines when its body is that ``def`` then ``return`` of it."""
    body = _strip_doc(fdef.body)
    if len(body) != 2 or not isinstance(body[0], cst.FunctionDef):
        return None
    last = body[1]
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1):
        return None
    ret = last.body[0]
    if not (
        isinstance(ret, cst.Return)
        and isinstance(ret.value, cst.Name)
        and ret.value.value == body[0].name.value
    ):
        return None
    return body[0]


def _definition(norm: InnerFunctions, name: str) -> tuple[cst.FunctionDef, bool] | None:
    """The ``def`` of a decorator named ``name``: a local function, or a plain function of
    the module (its source parsed, its lines then named in refusals); with whether it is
    the module's."""
    if name in norm.nested and name not in norm.env:
        return norm.nested[name], False
    if name in norm.locals:
        return None
    obj = norm.resolve(name)
    if (
        not isinstance(obj, types.FunctionType)
        or obj.__globals__ is not norm.p.globals
        or obj.__closure__
    ):
        return None
    try:
        parsed = parse_function(obj)
    except Exception:
        return None
    if not isinstance(parsed.node, cst.FunctionDef) or parsed.node.decorators:
        return None
    norm.foreign.append(parsed)
    return parsed.node, True


def _wraps(deco: cst.Decorator, fn: str) -> bool:
    """Whether a wrapper's decorator is ``functools.wraps(fn)`` (or ``wraps(fn)``)."""
    call = deco.decorator
    if not isinstance(call, cst.Call) or len(call.args) != 1:
        return False
    func = call.func
    named = (isinstance(func, cst.Name) and func.value == "wraps") or (
        isinstance(func, cst.Attribute)
        and func.attr.value == "wraps"
        and isinstance(func.value, cst.Name)
        and func.value.value == "functools"
    )
    arg = call.args[0]
    return named and not arg.star and isinstance(arg.value, cst.Name) and arg.value.value == fn


def _wrapper(
    norm: InnerFunctions, expr: cst.BaseExpression, inner: str, outer: str
) -> cst.FunctionDef | None:
    """The wrapper the decorator ``expr`` makes of the local function ``inner``, as a local
    function named ``outer``."""
    rename: dict[str, str] = {}
    if isinstance(expr, cst.Name):
        found = _definition(norm, expr.value)
        if found is None:
            return None
        deco, foreign = found
    elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        found = _definition(norm, expr.func.value)
        if found is None:
            return None
        factory, foreign = found
        made = _def_then_return(factory)
        if made is None or made.decorators:
            return None
        for param, atom in norm._bind_params(factory, expr, f"decorator {expr.func.value}"):
            rename[param] = norm.fresh(f"_{factory.name.value}_{param}")
            norm.locals.add(rename[param])
            norm.assign(rename[param], ir.Copy(atom))
        deco = made
    else:
        return None
    params = all_params(deco.params)
    wrapper = _def_then_return(deco)
    if len(params) != 1 or params[0].star or wrapper is None:
        return None
    fn = params[0].name.value
    if not all(_wraps(d, fn) for d in wrapper.decorators):
        return None
    scan = NameScan()
    wrapper.body.visit(scan)
    own = scan.assigned | {p.name.value for p in all_params(wrapper.params)}
    if own & ({fn} | rename.keys()):
        return None  # the wrapper rebinds what it closes over
    if foreign:  # a global the module's wrapper reads must not be a name of the caller
        caller = norm.locals | set(norm.nested) | set(norm.lambdas) | set(norm.partials)
        if (set(names_read(wrapper.body)) - own - {fn} - rename.keys()) & caller:
            return None
    rename[fn] = inner
    renamer = Rename(rename, norm.origin)
    made = wrapper.with_changes(
        name=cst.Name(outer),
        decorators=[],
        params=wrapper.params.visit(renamer),
        body=wrapper.body.visit(renamer),
    )
    norm.origin[made] = norm.origin.get(wrapper, wrapper)
    return made
