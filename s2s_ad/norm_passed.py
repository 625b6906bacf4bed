"""A function of the module called with a function factory as an argument, inlined.

``fixed_point(newton_sqrt_iter, a, x0)``, where ``fixed_point`` (a function of the same
module) calls its parameter ``make_step(a)`` and ``newton_sqrt_iter`` returns a closure
of ``a``: compiled on its own, ``fixed_point`` would only learn which factory it calls
when it runs, and the closure of a differentiated value it gets back is refused. Here
its body is inlined at the call, the factory parameter renamed to the factory's own
global name, so that ``step = make_step(a)`` is the factory call the normalizer already
inlines (:meth:`~s2s_ad.norm_inline.InnerFunctions.factory_call`) and ``step(x)`` the
local function it made.

Only when inlining is exact: the callee is a plain function of the caller's module (no
decorator, closure, ``*args``/``**kwargs``, generator, nested definition, early
return, recursion), the factory parameter is only ever called and never rebound, and no
global the callee reads is shadowed by a name of the caller. Any other call is left to
the usual path (compiled on its own).
"""

from __future__ import annotations

import types
from typing import Any

import libcst as cst

from . import ir
from .norm_inline import Rename, factory_of
from .norm_queries import all_params, early_return, inner_defs, own_nodes
from .norm_scan import NameScan, binding_count
from .source import parse_function


def _plain_function(obj: Any, globals_: dict[str, Any]) -> bool:
    """A function of the module whose globals are ``globals_``, without a closure,
    ``*args``/``**kwargs`` or ``yield``."""
    return (
        isinstance(obj, types.FunctionType)
        and obj.__globals__ is globals_
        and not obj.__closure__
        and not obj.__code__.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200)
    )


def _callee_def(obj: Any) -> cst.FunctionDef | None:
    """The definition of ``obj`` when its body can be inlined as it stands."""
    try:
        node = parse_function(obj).node
    except Exception:
        return None
    if (
        not isinstance(node, cst.FunctionDef)
        or node.decorators
        or node.asynchronous is not None
        or inner_defs(node)
        or early_return(node)
        or own_nodes(node, cst.Yield)
    ):
        return None
    return node


def _arguments(fdef: cst.FunctionDef, call: cst.Call) -> dict[str, cst.Arg] | None:
    """The call's arguments by parameter name (``None`` when they do not fit plainly)."""
    params = [*fdef.params.posonly_params, *fdef.params.params]
    names = [p.name.value for p in params]
    keyword = {p.name.value for p in fdef.params.kwonly_params} | {
        p.name.value for p in fdef.params.params
    }
    out: dict[str, cst.Arg] = {}
    for pos, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            if pos >= len(names):
                return None
            key = names[pos]
        else:
            key = arg.keyword.value
            if key not in keyword:
                return None
        if key in out:
            return None
        out[key] = arg
    return out


def _plain_callee(norm: Any, call: cst.Call) -> tuple[cst.FunctionDef, dict[str, cst.Arg]] | None:
    """The definition of the plain module function ``call`` calls (not one being inlined)
    and its arguments by parameter name, or ``None``."""
    callee = norm.resolve(call.func.value)
    if not _plain_function(callee, norm.p.globals):
        return None
    fdef = _callee_def(callee)
    if fdef is None or fdef.name.value in norm.inlining:
        return None
    given = _arguments(fdef, call)
    return None if given is None else (fdef, given)


def factory_argument_call(
    norm: Any, call: cst.Call, passed_names: frozenset[str] = frozenset()
) -> ir.Expr | None:
    """Inline ``call`` when it passes a function factory of the module (or a lambda bound
    to one of ``passed_names``) to a function of the module that only calls it (see the
    module's docstring); ``None`` otherwise."""
    func = call.func
    if norm.env or not isinstance(func, cst.Name) or func.value in norm.locals:
        return None
    globals_ = norm.p.globals
    factories = {
        arg.value.value
        for arg in call.args
        if isinstance(arg.value, cst.Name)
        and arg.value.value not in norm.locals
        and factory_of(norm.resolve(arg.value.value), globals_) is not None
    }
    local = {
        arg.value.value
        for arg in call.args
        if isinstance(arg.value, cst.Name)
        and (arg.value.value in norm.nested or arg.value.value in norm.lambdas)
        and arg.value.value not in norm.env
    }
    passed_names = passed_names | local  # ``rk4(rhs, y0, ...)`` of a local ``def rhs``
    factories |= passed_names
    if not factories and any(isinstance(arg.value, cst.Lambda) for arg in call.args):
        return _lambda_argument_call(norm, call)
    if not factories:
        return None
    found = _plain_callee(norm, call)
    if found is None:
        return None
    fdef, given = found
    passed = {
        name: arg.value.value
        for name, arg in given.items()
        if isinstance(arg.value, cst.Name) and arg.value.value in factories
    }
    scan = NameScan()
    fdef.body.visit(scan)
    own = {p.name.value for p in all_params(fdef.params)} | scan.assigned
    if any(p in scan.assigned or p in scan.value_reads for p in passed):
        return None  # the factory parameter is rebound or used other than by a call
    caller = (
        norm.locals | set(norm.nested) | set(norm.lambdas) | set(norm.partials)
    ) - passed_names
    outside = (scan.all - own) | set(passed.values())
    if outside & caller:
        return None  # a global of the callee would read the caller's name
    # the parameter becomes the factory's global name; the call passes the others
    renamed = fdef.body.visit(Rename(passed, norm.origin))
    kept = [p for p in fdef.params.params if p.name.value not in passed]
    lone = [p for p in fdef.params.posonly_params if p.name.value not in passed]
    params = fdef.params.with_changes(params=kept, posonly_params=lone)
    inlined = fdef.with_changes(params=params, body=renamed)
    args = [
        a.with_changes(keyword=cst.Name(k), equal=cst.AssignEqual())
        for k, a in given.items()
        if k not in passed
    ]
    plain = call.with_changes(args=args)
    rename = norm.renames.get(inlined.name.value)
    if rename is None:
        local = sorted(scan.assigned | {p.name.value for p in all_params(params)})
        rename = {n: norm.reserve(f"{inlined.name.value}_{n}") for n in local}
        norm.renames[inlined.name.value] = rename
    # ``step = make_step(a)`` bound once in the callee: a factory call where inlined
    counts = binding_count(fdef)
    norm._frozen_names.update(
        rename[n] for n in counts.calls if counts.count[n] == 1 and n in rename
    )
    return norm.inline_def(inlined, plain)


def _lambda_argument_call(norm: Any, call: cst.Call) -> ir.Expr | None:
    """``euler(lambda y: -k * y, y0, dt, n)``: a lambda written in the call, passed to a
    plain function of the module that only calls it (an ODE right-hand side, a
    function to minimise), inlined as a factory is: the lambda is bound to a fresh local
    name the inlined body calls, where it is inlined in turn."""
    found = _plain_callee(norm, call)
    if found is None:
        return None
    fdef, given = found
    lambdas = {k: a.value for k, a in given.items() if isinstance(a.value, cst.Lambda)}
    if any(
        isinstance(lam.params.star_arg, cst.Param) or lam.params.star_kwarg is not None
        for lam in lambdas.values()
    ):
        return None
    scan = NameScan()
    fdef.body.visit(scan)
    if any(p in scan.assigned or p in scan.value_reads for p in lambdas):
        return None  # the function parameter is rebound or used other than by a call
    names = {k: norm.reserve(f"_{fdef.name.value}_{k}") for k in lambdas}
    args = [a.with_changes(value=cst.Name(names[k])) if k in names else a for k, a in given.items()]
    for k, lam in lambdas.items():
        norm.lambdas[names[k]] = lam
    # the lambdas' names are globals of the callee for factory_argument_call's checks
    return factory_argument_call(norm, call.with_changes(args=args), frozenset(names.values()))
