"""``functools.partial`` kept in a local variable and called later, lowered to direct calls,
and lambdas whose defaults capture the function's values (see :func:`lambda_value`).

::

    loss_w = functools.partial(loss, w, scale=0.5)   ->  _p1 = w
    ...                                                  (nothing else)
    a = loss_w(x)                                    ->  a = loss(_p1, x, scale=0.5)

The bound arguments are evaluated where the partial is made (into temporaries, so a later
rebinding of ``w`` does not reach them, as with the partial's own references); each call
becomes a call of the function with the bound arguments first and the call's keywords
overriding the bound ones, as ``partial.__call__`` does. That call is then lowered like
any other: a local function or lambda is inlined, a module function transformed, so the
gradient reaches the bound arguments.

Only a name bound once, to a partial, and only ever called is lowered; a partial used as a
value (passed on, stored, returned) stays a call of ``functools.partial``, refused when it
binds a differentiated value.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from . import ir
from .rules.defaults import with_defaults

if TYPE_CHECKING:  # pragma: no cover
    from .normalize import Normalizer


@dataclass
class Bound:
    """A partial made in the function: the callee and its bound arguments as expressions
    of temporaries (or constants)."""

    func: cst.BaseExpression
    args: list[cst.BaseExpression]
    keywords: list[tuple[str, cst.BaseExpression]]


def bind_partial(norm: Normalizer, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """Lower ``name = functools.partial(f, *args, **kwargs)`` when ``name`` is bound only
    here and only called: the bound arguments into temporaries, ``name`` recorded in
    ``norm.partials``. ``False`` (nothing emitted) otherwise."""
    if not (isinstance(target, cst.Name) and isinstance(value, cst.Call)) or norm.env:
        return False
    name = target.value
    scan = norm.scan
    if scan.bindings[name] != 1 or name in scan.value_reads or name in norm.nested:
        return False
    parts = norm.dotted(value.func)
    if parts is None or norm.resolve_dotted(parts) is not functools.partial:
        return False
    args = value.args
    if not args or any(a.star for a in args) or args[0].keyword is not None:
        return False
    func = args[0].value
    if not _static_callee(norm, func):
        func = _frozen(norm, func)
    bound, keywords = [], []
    for arg in args[1:]:
        if arg.keyword is None:
            bound.append(_frozen(norm, arg.value))
        else:
            keywords.append((arg.keyword.value, _frozen(norm, arg.value)))
    norm.partials[name] = Bound(func, bound, keywords)
    if not (isinstance(func, cst.Name) and func.value in norm.nested):
        # the partial itself too, for code kept as it is (refused there if the gradient
        # would flow through it)
        text = [_code(p) for p in (func, *bound)] + [f"{k}={_code(v)}" for k, v in keywords]
        code = f"{_code(value.func)}({', '.join(text)})"
        reads = tuple(n for n in _names(value.func, func, *bound, *(v for _, v in keywords)))
        norm.locals.add(name)
        norm.assign(name, ir.Opaque(code, reads, f"partial {name!r} used as a value"))
    return True


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _names(*nodes: cst.BaseExpression) -> list[str]:
    """The local names the expressions read (temporaries and the callee's name)."""
    out: list[str] = []
    for node in nodes:
        if isinstance(node, cst.Name) and node.value not in out:
            out.append(node.value)
    return out


def expand_partial(norm: Normalizer, call: cst.Call) -> cst.Call:
    """The call ``name(...)`` of a recorded partial as a call of its function."""
    assert isinstance(call.func, cst.Name)
    bound = norm.partials[call.func.value]
    given = {a.keyword.value for a in call.args if a.keyword is not None}
    positional = [a for a in call.args if a.keyword is None]
    named = [a for a in call.args if a.keyword is not None]
    args = [cst.Arg(value=v) for v in bound.args] + positional
    args += [cst.Arg(keyword=cst.Name(k), value=v) for k, v in bound.keywords if k not in given]
    expanded = cst.Call(func=bound.func, args=[*args, *named])
    norm.origin[expanded] = norm.origin.get(call, call)
    return expanded


def _static_callee(norm: Normalizer, func: cst.BaseExpression) -> bool:
    """Whether ``func`` names the same function wherever the partial is called: a local
    function or lambda, or a module-level name."""
    if isinstance(func, cst.Name) and (func.value in norm.nested or func.value in norm.lambdas):
        return norm.scan.bindings[func.value] <= 1
    return norm.dotted(func) is not None


def _frozen(norm: Normalizer, node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` evaluated now: a constant as it is, anything else into a temporary."""
    atom = norm.atom(node)
    if isinstance(atom, ir.Const):
        return node
    temp = norm.fresh("_bound")
    norm.locals.add(temp)
    norm.assign(temp, ir.Copy(atom))
    return cst.Name(temp)


def lambda_value(norm: Normalizer, node: cst.Lambda) -> ir.Expr | None:
    """A lambda used as a value whose positional defaults read the function's variables
    (``[lambda z, s=s: s * z for s in scales]``): made with ``None`` defaults, then
    ``_ad.with_defaults(fn, s)``, so that the defaults' gradients flow through the function
    value (see :mod:`s2s_ad.rules.defaults`). ``None`` for other lambdas (kept opaque)."""
    params = node.params
    positional = [*params.posonly_params, *params.params]
    defaulted = [p for p in positional if p.default is not None]
    if norm.env or not any(_reads_names(p.default) for p in defaulted if p.default is not None):
        return None
    values = [norm.atom(p.default) for p in defaulted if p.default is not None]
    none = cst.Name("None")

    def bare(p: cst.Param) -> cst.Param:
        return p.with_changes(default=none) if p.default is not None else p

    lifted = node.with_changes(
        params=params.with_changes(
            posonly_params=[bare(p) for p in params.posonly_params],
            params=[bare(p) for p in params.params],
        )
    )
    fn = ir.Var(norm.fresh())
    norm.assign(fn.name, opaque_lambda(norm, lifted))
    callee = ir.Callee("_ad.with_defaults", with_defaults, resolved=True)
    return ir.Call(callee, [fn, *values], [])


def opaque_lambda(norm: Normalizer, node: cst.Lambda) -> ir.Opaque:
    """A lambda kept as it is: it reads the names its body and defaults read but its own
    parameters (an outer ``s`` is not read by ``lambda z, s=None: s * z``)."""
    made = norm.opaque(node, "lambda used as a value")
    params = node.params
    own = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            own.add(star.name.value)
    defaults = [p.default for p in (*params.posonly_params, *params.params) if p.default]
    default_reads = {n for d in defaults for n in _names_in(d)}
    made.reads = tuple(r for r in made.reads if r not in own or r in default_reads)
    return made


def _names_in(node: cst.BaseExpression) -> list[str]:
    found: list[str] = []

    class _Find(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n.value)

    node.visit(_Find())
    return found


def _reads_names(node: cst.BaseExpression) -> bool:
    """Whether an expression reads a variable (not only constants)."""
    found: list[str] = []

    class _Find(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value not in ("True", "False", "None"):
                found.append(n.value)

    node.visit(_Find())
    return bool(found)
