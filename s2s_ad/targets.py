"""What is differentiated for a callable: the Python function whose source is transformed.

``primal(fun)`` answers for every kind of callable a user can hand to ``grad``:

==============================================  =============================================
callable                                        differentiated as
==============================================  =============================================
Python function                                 its own source
``functools.wraps`` wrapper (a decorator's)     the wrapper's own source: the wrapper is what
                                                runs, so a wrapper that changes the value
                                                (``2.0 * fn(x)``) changes the gradient. The
                                                wrapped function, a closure cell of the
                                                wrapper, is transformed where it is called.
                                                A wrapper whose whole body is
                                                ``return fn(*args, **kwargs)`` is ``fn``
                                                (``forwarded_to``); any other wrapper taking
                                                ``*args`` is refused, never unwrapped.
``functools.lru_cache`` / ``functools.cache``   the cached function: a cache returns the
                                                values the function computes, so unwrapping
                                                it cannot change a gradient
``staticmethod`` object                         its function
bound method                                    itself (callers pass ``__self__`` first);
                                                one with a rule (``scipy.stats.norm.logpdf``)
                                                as a library function with a rule (below)
callable object (a Python ``__call__``)         its bound ``__call__`` at the public entry
                                                points (``as_method``); elsewhere a generated
                                                function calling ``__call__`` with the
                                                instance bound (``bind_first``)
result of ``grad`` (no aux)                     its pure generated gradient (higher order)
result of ``elementwise_grad``                  a ``grad`` of the summed function, so the
                                                same as above
results of ``value_and_grad``, ``grad`` with    refused: they return tuples or matrices;
``has_aux``, ``jacobian``, ``hessian``, ``hvp``  differentiate ``grad``/``jvp`` compositions
library function with a rule, ``defgrad`` or    a generated one-line function calling it
``custom_gradient`` function                    (``def call_tanh(x): return tanh(x)``), so
                                                that the call goes through the rule or the
                                                custom gradient like any call
``functools.partial``                           a generated function calling the partial's
                                                function with its bound arguments
a class, an unbound ``classmethod``             refused
==============================================  =============================================

The generated functions are registered in ``linecache`` under ``<s2s_ad made:...>`` names,
so they are parsed and differentiated like user code.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import keyword
import linecache
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy

from .custom import CustomGradient
from .errors import TransformError
from .rules import REGISTRY
from .source import parse_function

#: Attribute naming why a function made by s2s_ad cannot be differentiated again.
REFUSE = "_s2s_refuse"
#: Attribute holding what a ``grad`` function computes (``pure_function()``).
SPEC = "_s2s_spec"

#: Modules of the transforms themselves: their source is never differentiated (a call
#: of ``s2s_ad.jvp`` inside a differentiated function is refused, not transformed).
_TRANSFORM_MODULES = frozenset({"s2s_ad.api", "s2s_ad.transforms", "s2s_ad.testing"})
_TRANSFORMS = frozenset(
    "grad value_and_grad vjp jvp jacobian hessian hvp elementwise_grad check_grads".split()
)

#: What a refusal of a transform called inside differentiated code suggests.
TRANSFORM_HINT = (
    "differentiate the composition instead: s2s_ad.hvp(f), s2s_ad.jvp(s2s_ad.grad(f), ...), "
    "s2s_ad.jacobian(s2s_ad.jacobian(f)); s2s_ad.grad(f)(x) can be called inside"
)


def is_transform(fun: Any) -> bool:
    """Whether ``fun`` is one of s2s_ad's transforms (``jvp``, ``vjp``, ``hessian`` ...):
    their own source is never differentiated."""
    return (
        isinstance(fun, types.FunctionType)
        and fun.__module__ in _TRANSFORM_MODULES
        and fun.__name__ in _TRANSFORMS
    )


_serial = itertools.count(1)
_THROUGH: weakref.WeakKeyDictionary[Any, types.FunctionType] = weakref.WeakKeyDictionary()
_THROUGH_STRONG: dict[int, tuple[Any, types.FunctionType]] = {}


def _name(fun: Any) -> str:
    return str(getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or fun)


def spec_of(fun: Any) -> Any:
    """What a ``grad`` function computes, if ``fun`` is one: the marker must be its own,
    since ``functools.wraps`` copies the marked function's ``__dict__`` into a wrapper
    (``twice(grad(f))`` is a new function, not ``grad(f)``)."""
    spec = getattr(fun, SPEC, None)
    if spec is None:
        return None
    owner = getattr(spec, "owner", None)
    if owner is fun:
        return spec
    if not isinstance(fun, types.FunctionType) and owner is getattr(fun, "_s2s_call", None):
        return spec  # api.GradientFunction around the marked function
    return None


def primal(fun: Any) -> Any:
    """The Python function whose source is differentiated for ``fun``.

    Returns a ``types.FunctionType``, or a bound method (its ``__func__`` is one).

    Raises:
        TransformError: For callables that cannot be differentiated (see the module table).
    """
    while True:
        spec = spec_of(fun)
        if spec is not None:
            return spec.pure_function()
        refusal = getattr(fun, REFUSE, None)
        if refusal:
            raise TransformError(refusal)
        if inspect.ismethod(fun):
            return call_through(fun) if _has_rule(fun) else fun
        if isinstance(fun, functools._lru_cache_wrapper):
            fun = fun.__wrapped__  # a cache returns the function's own values
            continue
        if isinstance(fun, staticmethod):
            fun = fun.__func__
            continue
        break
    if isinstance(fun, classmethod):
        raise TransformError(
            f"{_name(fun.__func__)}: an unbound classmethod",
            hint="differentiate it through its class (Class.method), which binds it",
        )
    if isinstance(fun, type):
        raise TransformError(
            f"{_name(fun)}: a class", hint="differentiate a function or a callable instance"
        )
    if isinstance(fun, types.FunctionType) and not _has_rule(fun):
        inner = forwarded_to(fun)
        if inner is None and "GradientTape" in fun.__code__.co_names:
            from .tape_inner import rewritten  # a helper that opens an inner tape

            return rewritten(fun)
        return fun if inner is None else primal(inner)
    if not callable(fun):
        raise TransformError(f"{fun!r}: not callable")
    return call_through(fun)


_FORWARDS: dict[types.CodeType, str | None] = {}


def forwarded_to(fun: types.FunctionType) -> Any:
    """The callable ``fun`` passes all its arguments to and whose value it returns, when
    its whole body is ``return inner(*args, **kwargs)`` with ``inner`` a closure cell (a
    decorator's pass-through wrapper, with or without ``functools.wraps``); else ``None``.

    Such a wrapper returns exactly what ``inner`` returns, so differentiating ``inner``
    is differentiating the wrapper. Any other statement in the wrapper (a logging call,
    a changed value) makes it a wrapper like any function: its own source is
    differentiated (and ``*args`` parameters are refused).
    """
    code = fun.__code__
    if not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    if code not in _FORWARDS:
        _FORWARDS[code] = _forwarding_name(fun)
    name = _FORWARDS[code]
    if name is None:
        return None
    if name not in code.co_freevars:
        return None  # a global could be rebound after the transform: not proven
    try:
        return fun.__closure__[code.co_freevars.index(name)].cell_contents  # type: ignore[index]
    except ValueError:
        return None  # an empty cell


def _forwarding_name(fun: types.FunctionType) -> str | None:
    """The name called in ``return name(*args, **kwargs)`` when that (after an optional
    docstring) is the whole body and the star parameters are the only parameters."""
    import libcst as cst

    try:
        node = parse_function(fun).node
    except TransformError:
        return None
    if not isinstance(node, cst.FunctionDef):
        return None
    params = node.params
    if params.params or params.posonly_params or params.kwonly_params:
        return None
    expected = []
    if isinstance(params.star_arg, cst.Param):
        expected.append(("*", params.star_arg.name.value))
    if params.star_kwarg is not None:
        expected.append(("**", params.star_kwarg.name.value))
    lines = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
    if not all(isinstance(line, cst.SimpleStatementLine) for line in lines):
        return None
    stmts = [
        small
        for line in lines
        for small in line.body  # type: ignore[union-attr]
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString))
    ]
    if len(stmts) != 1 or not isinstance(stmts[0], cst.Return):
        return None
    call = stmts[0].value
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return None
    given = [(a.star, a.value.value) for a in call.args if isinstance(a.value, cst.Name)]
    if len(call.args) != len(expected) or given != expected:
        return None
    return call.func.value


def _has_rule(fun: Any) -> bool:

    return (
        id(fun) in REGISTRY.custom
        or isinstance(fun, CustomGradient)
        or REGISTRY.lookup(fun) is not None
    )


def signature(fun: Any) -> inspect.Signature:
    """The signature of what is differentiated for ``fun`` (a bound method's without its
    first parameter). Never follows ``__wrapped__``: a wrapper's own parameters are the
    ones its generated code takes."""
    if inspect.ismethod(fun) and not _has_rule(fun):
        sig = inspect.signature(primal(fun.__func__), follow_wrapped=False)
        return sig.replace(parameters=list(sig.parameters.values())[1:])
    return inspect.signature(primal(fun), follow_wrapped=False)


def mark(made: Any, fun: Any, refusal: str | None = None) -> None:
    """Give a function made by a transform ``fun``'s name and docstring (as
    ``functools.wraps`` does), minus the markers copied from ``fun``: they describe
    ``fun``, not ``made``. With ``refusal``, ``made`` cannot be differentiated again."""
    functools.update_wrapper(made, fun)
    for attr in (SPEC, REFUSE):
        made.__dict__.pop(attr, None)
    if refusal is not None:
        setattr(made, REFUSE, refusal)


# --- generated one-line functions -------------------------------------------------------


def call_through(fun: Any) -> types.FunctionType:
    """A Python function with ``fun``'s parameters whose body calls ``fun``, made once.

    Differentiating it differentiates the call, which the transformer handles by rule,
    by custom gradient, by runtime dispatch (callable objects) or by transforming the
    function a ``functools.partial`` holds.
    """
    try:
        hit = _THROUGH.get(fun)
    except TypeError:  # not weakly referenceable (ufuncs, builtins)
        held = _THROUGH_STRONG.get(id(fun))
        hit = held[1] if held is not None and held[0] is fun else None
    if hit is not None:
        return hit
    call = inspect.getattr_static(type(fun), "__call__", None)
    if isinstance(fun, functools.partial):
        made = _partial_through(fun)
    elif isinstance(call, types.FunctionType) and not _has_rule(fun):
        # a callable object: its __call__ with the instance bound, a user-function call
        # (differentiable again, where a call dispatched at run time is not)
        made = bind_first(primal(call), fun, signature_of_call(fun), f"call_{identifier(fun)}")
    else:
        params, call = _params_and_call(fun)
        label = identifier(fun)
        # (a rule's default may be a NumPy sentinel: ``np._NoValue``)
        made = define(f"call_{label}", params, f"{{{label}}}({call})", {label: fun, "np": numpy})
    try:
        _THROUGH[fun] = made
    except TypeError:
        _THROUGH_STRONG[id(fun)] = (fun, made)
    return made


def as_method(fun: Any) -> Any:
    """A callable object as its bound ``__call__`` (the transforms' bound-method path,
    which differentiates again); a library method with a rule (``scipy.stats.norm.logpdf``)
    as the generated function calling it; anything else unchanged."""
    if isinstance(fun, types.MethodType) and _has_rule(fun):
        return call_through(fun)
    if isinstance(fun, (types.FunctionType, types.MethodType, functools.partial, type)):
        return fun
    call = inspect.getattr_static(type(fun), "__call__", None)
    if not isinstance(call, types.FunctionType) or _has_rule(fun):
        return fun
    if hasattr(fun, SPEC) or hasattr(fun, REFUSE):  # a gradient function (api.GradientFunction)
        return fun
    return types.MethodType(call, fun)


def signature_of_call(fun: Any) -> inspect.Signature:
    """The parameters of a callable object's ``__call__`` after ``self``."""
    sig = inspect.signature(type(fun).__call__, follow_wrapped=False)
    return sig.replace(parameters=list(sig.parameters.values())[1:])


def identifier(fun: Any) -> str:
    """``fun``'s name as a Python identifier for generated text (``function`` when it
    cannot be one)."""
    name = getattr(fun, "__name__", None) or type(fun).__name__
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))
    if not name.isidentifier() or keyword.iskeyword(name) or name == "np":
        name = "function"
    return name


def _params_and_call(fun: Any) -> tuple[list[inspect.Parameter], str]:
    """``fun``'s parameters (from its gradient rule when it has one) and the argument
    list that passes them on."""

    rule = REGISTRY.lookup(fun)
    if rule is not None:
        params = []
        for p in rule.params:
            if p == "out":
                continue  # an output buffer: a gradient function takes none
            default = rule.defaults.get(p)
            params.append(
                inspect.Parameter(
                    p,
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    default=inspect.Parameter.empty if default is None else _Text(default),
                )
            )
        call = ", ".join(
            p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.name}" for p in params
        )
        return params, call
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        raise TransformError(
            f"{_name(fun)}: no signature to differentiate it by",
            hint=f"register a gradient rule with s2s_ad.defgrad({_name(fun)}, rule)",
        ) from None
    params = list(sig.parameters.values())
    return params, _forwarded(fun, params)


def _forwarded(fun: Any, params: list[inspect.Parameter]) -> str:
    """The arguments of a call passing each parameter on (``a, b, k=k``)."""
    parts = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TransformError(
                f"{_name(fun)}: *args/**kwargs parameters",
                hint="differentiate a function with named parameters that calls it",
            )
        parts.append(p.name if p.kind != p.KEYWORD_ONLY else f"{p.name}={p.name}")
    return ", ".join(parts)


def _partial_through(fun: functools.partial) -> types.FunctionType:
    """``functools.partial(f, *args, **kw)`` as ``def f(rest): return f(args, rest, kw)``:
    the partial's function is called directly, its bound arguments as constants."""
    inner = fun.func
    sig = inspect.signature(fun)
    label = identifier(inner)
    env: dict[str, Any] = {label: inner}
    bound = []
    for k, value in enumerate(fun.args):
        env[f"arg{k}"] = value
        bound.append(f"{{arg{k}}}")
    params = list(sig.parameters.values())
    if params and params[-1].kind == inspect.Parameter.VAR_KEYWORD:
        # keywords bound into ``**kwargs`` are no parameters of the partial: keyword-only
        # ones of the function made, which a call may override as it may the partial's
        absorbed = [
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=value)
            for key, value in fun.keywords.items()
            if key not in sig.parameters
        ]
        params[-1:-1] = absorbed
    parts = list(bound)
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            # passed on as a star-call: f(arg0, a, *rest, k=k, **opts)
            parts.append(("*" if p.kind == p.VAR_POSITIONAL else "**") + p.name)
            continue
        keyword_passed = p.kind == p.KEYWORD_ONLY or p.name in fun.keywords
        parts.append(f"{p.name}={p.name}" if keyword_passed else p.name)
    return define(f"call_{label}", params, f"{{{label}}}(" + ", ".join(parts) + ")", env)


def parameter_list(
    params: list[inspect.Parameter], default: Callable[[int, inspect.Parameter], str]
) -> str:
    """The parameter list of a ``def`` for ``params`` (``a, /, b=d1, *c, k, **kw``).

    Args:
        params: The parameters, in order.
        default: ``default(k, param)`` -> the text of the default of the ``k``-th
            parameter (called for those that have one).
    """
    parts = []
    star = False
    for k, p in enumerate(params):
        if p.kind == p.VAR_POSITIONAL:
            star = True
        if p.kind == p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.default is not p.empty:
            text += "=" + default(k, p)
        parts.append(text)
        last_positional = p.kind == p.POSITIONAL_ONLY and (
            k + 1 == len(params) or params[k + 1].kind != p.POSITIONAL_ONLY
        )
        if last_positional:
            parts.append("/")
    return ", ".join(parts)


class _Text(str):
    """A default given as source text (a rule's default), written as is."""


def define(
    name: str, params: list[inspect.Parameter], body: str, env: dict[str, Any]
) -> types.FunctionType:
    """Compile ``def name(params): return body`` with readable source.

    ``body`` names the objects of ``env`` as ``{key}``; they become globals of the new
    function under names that no parameter uses. Defaults are kept (as globals too).
    The text is registered in ``linecache`` under a ``<s2s_ad made:...>`` file name, so it
    is parsed and differentiated like any user function.
    """
    taken = {p.name for p in params}
    names: dict[str, str] = {}
    namespace: dict[str, Any] = {"__builtins__": __builtins__}
    for key, value in env.items():
        glob = key
        while glob in taken or glob in names.values():
            glob = "_" + glob
        names[key] = glob
        namespace[glob] = value

    def default(k: int, p: inspect.Parameter) -> str:
        if isinstance(p.default, _Text):
            return str(p.default)
        glob = f"_default{k}"
        while glob in taken or glob in namespace:
            glob = "_" + glob
        namespace[glob] = p.default
        return glob

    source = f"def {name}({parameter_list(params, default)}):\n    return {body.format(**names)}\n"
    filename = f"<s2s_ad made:{name}:{next(_serial)}>"  # not emit's "<s2s_ad:" names
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    made = namespace[name]
    assert isinstance(made, types.FunctionType)
    return made


def bind_first(
    func: types.FunctionType, first: Any, sig: inspect.Signature, name: str | None = None
) -> types.FunctionType:
    """``def f(params): return func(first, params)`` with ``first`` a constant: a bound
    method as a Python function whose call of ``func`` is differentiated like any call of
    a user function (a bound method's call is dispatched when the code runs)."""
    params = list(sig.parameters.values())
    label = identifier(func)
    body = f"{{{label}}}({{self}}, " + _forwarded(func, params) + ")"
    return define(name or f"{label}_bound", params, body, {label: func, "self": first})


_SUMMED: weakref.WeakKeyDictionary[Any, types.FunctionType] = weakref.WeakKeyDictionary()


def summed(fun: Callable[..., Any]) -> types.FunctionType:
    """``def f(params): return np.sum(f(params))``: what ``elementwise_grad`` differentiates
    (made once per ``fun`` that can be weakly referenced, so its transform is cached)."""
    try:
        hit = _SUMMED.get(fun)
    except TypeError:  # not weakly referenceable or not hashable: made each time
        return _make_summed(fun)
    if hit is None:
        hit = _SUMMED[fun] = _make_summed(fun)
    return hit


_WEIGHTED: weakref.WeakKeyDictionary[Any, types.FunctionType] = weakref.WeakKeyDictionary()

#: The keyword-only parameter of :func:`weighted` functions.
WEIGHT = "s2s_weight"


def weighted(fun: Callable[..., Any]) -> types.FunctionType:
    """``def f(params, *, s2s_weight): return np.sum(f(params) * s2s_weight)``: one output
    entry of ``fun`` (a one-hot weight) as a scalar function, what the Jacobian of a
    Jacobian differentiates twice (made once per ``fun`` that can be weakly referenced)."""
    try:
        hit = _WEIGHTED.get(fun)
    except TypeError:
        return _make_summed(fun, weight=True)
    if hit is None:
        hit = _WEIGHTED[fun] = _make_summed(fun, weight=True)
    return hit


def _make_summed(fun: Callable[..., Any], weight: bool = False) -> types.FunctionType:
    sig = signature(fun)
    params = list(sig.parameters.values())
    call = _forwarded(fun, params)
    import numpy as np

    if inspect.ismethod(fun) and not _has_rule(fun):
        callee = bind_first(primal(fun.__func__), fun.__self__, sig)
    else:
        callee = fun if isinstance(fun, types.FunctionType) else primal(fun)
    label = identifier(fun)
    value = f"{{{label}}}(" + call + ")"
    if not weight:
        body = f"{{np}}.sum({value})"
        return define(f"{label}_summed", params, body, {label: callee, "np": np})
    params.append(inspect.Parameter(WEIGHT, inspect.Parameter.KEYWORD_ONLY))
    body = f"{{np}}.sum({value} * {WEIGHT})"
    return define(f"{label}_weighted", params, body, {label: callee, "np": np})
