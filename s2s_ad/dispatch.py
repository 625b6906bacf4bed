"""Runtime dispatch for calls whose callee is known only when the code runs.

Methods of objects (``model(x)`` whose ``__call__`` reads ``self.w``), functions passed
as arguments, and table functions passed as values all arrive here from generated code
as ``_ad.vjp_call(func, labels, *args, **kwargs)``.
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import packing, runtime
from .analysis import written_params
from .built_objects import has_fields
from .custom import CustomGradient
from .emit import AD
from .errors import TransformError
from .object_state import STATE, StoredState, container_writes, state_mode
from .rules import REGISTRY
from .rules.defaults import DEFAULTS, explicit_defaults, spread_tangent
from .rules.registry import Rule, substitute
from .runtime import is_zero, jvp_from_vjp, rule_grads
from .second_order import vjp_apply_pullback, vjp_apply_tangent, vjp_apply_vars_pullback

_TEMPLATES: dict[tuple[int, str], types.CodeType] = {}


def _target(func: Any) -> tuple[Any, tuple[Any, ...]]:
    """The Python function to transform and the arguments bound before the call's own."""
    if not isinstance(func, types.FunctionType):  # a GradientFunction: the function it calls
        func = getattr(func, "_s2s_call", func)
    if REGISTRY.opaque(func) or isinstance(func, np.vectorize):  # never its source:
        return None, ()  # a library function without a rule, NumPy's entry-by-entry calls
    if isinstance(func, types.MethodType):
        return _plain(func.__func__), (func.__self__,)
    if isinstance(func, (types.FunctionType, functools.partial, functools._lru_cache_wrapper)):
        return func, ()  # a partial or a cache: see targets.primal
    call = inspect.getattr_static(type(func), "__call__", None)
    call = getattr(call, "_s2s_call", call)  # a wrapper (``@tf.function``): what it calls
    call = _plain(call)
    if isinstance(call, types.FunctionType):
        return call, (func,)
    return None, ()


def _plain(func: Any) -> Any:
    """The differentiable twin of a method whose eager version does what generated code
    cannot (``Layer.__call__``: a ``try`` that adds the layer to an error's message, a
    name scope on the first call); the method itself for others."""
    return getattr(func, "_s2s_plain", func)


def _rule_pullback(
    rule: Rule, func: Any, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    ans = func(*args, **kwargs)
    names = {p: f"_a{i}" for i, p in enumerate((*rule.params, *rule.kwonly))}
    names["args"] = "_varargs"  # positional arguments beyond the parameters (varargs rules)
    env: dict[str, Any] = {"_varargs": tuple(args[len(rule.params) :])}
    for i, value in enumerate(args):
        if i < len(rule.params):
            env[f"_a{i}"] = value
    for key, value in kwargs.items():
        env[names[key]] = value
    import numpy as np

    defaults = {**rule.defaults, **rule.kwonly}
    for p in (*rule.params, *rule.kwonly):
        if names[p] not in env:
            env[names[p]] = eval(defaults[p], {"np": np, "None": None})  # noqa: S307

    def pullback(g: Any) -> tuple[Any, ...]:
        out = []
        for label in labels:
            extra = isinstance(label, int) and label >= len(rule.params)
            if extra:  # one of ``*args``: its entry of the "args" template's tuple
                param = "args"
            else:
                param = rule.params[label] if isinstance(label, int) else label
            key = (id(rule), param)
            code = _TEMPLATES.get(key)
            if code is None:
                template = rule.vjps.get(param)
                if template is None:
                    raise TransformError(f"argument '{param}' of {rule.name} (no gradient rule)")
                code = compile(substitute(template, names), f"<rule {rule.name}>", "eval")
                _TEMPLATES[key] = code
            grad = eval(code, {"np": np, "_ad": AD, "g": g, "ans": ans, **env})  # noqa: S307
            out.append(grad[label - len(rule.params)] if extra else grad)
        return tuple(out)

    return ans, pullback


def _array_method(func: Any) -> tuple[Rule, Any, Any] | None:
    """The method rule, the unbound method and the array of a bound array method."""
    import numpy as np

    owner = getattr(func, "__self__", None)
    if not isinstance(owner, (np.ndarray, np.generic)) or isinstance(func, types.MethodType):
        return None
    rule = REGISTRY.methods.get(getattr(func, "__name__", ""))
    if rule is None:
        return None
    return rule, getattr(type(owner), func.__name__), owner


_INERT = (
    type,
    str,
    bytes,
    bool,
    int,
    type(None),
    types.ModuleType,
    types.BuiltinFunctionType,
    np.dtype,
    np.integer,
    np.bool_,
)


def _inert(value: Any) -> bool:
    """Whether a value can carry no gradient (a type, a string, an integer...)."""
    return isinstance(value, _INERT)


# per class: its ``_s2s_pullback`` and ``_s2s_forward`` (``None`` when it has none). A
# missing attribute looked up on a class costs an exception made and dropped, at every
# dispatched call; the library's classes define these hooks in their bodies.
_HOOKS: dict[type, tuple[Any, Any]] = {}


def _hooks(kind: type) -> tuple[Any, Any]:
    """The ``_s2s_pullback`` and ``_s2s_forward`` a class has or inherits."""
    found = _HOOKS.get(kind)
    if found is None:
        found = (getattr(kind, "_s2s_pullback", None), getattr(kind, "_s2s_forward", None))
        if len(_HOOKS) > 4096:  # classes made at run time: do not keep them all
            _HOOKS.clear()
        _HOOKS[kind] = found
    return found


def _refuse_draw(func: Any, labels: tuple[Any, ...]) -> None:
    """Refuse a random generator's draw without a rule (``rng.choice(x)``,
    ``rng.poisson(lam)``) that a differentiated value reaches: its value is not a
    differentiable function of its arguments (the location-scale draws have rules)."""
    owner = getattr(func, "__self__", None)
    if labels and isinstance(owner, (np.random.Generator, np.random.RandomState)):
        name = getattr(func, "__name__", "draw")
        raise TransformError(
            f"random draw {type(owner).__name__}.{name} of a differentiated argument "
            "(its value is not a differentiable function of its arguments)",
            hint="pass the argument through s2s_ad.stop_gradient, or draw standard "
            "variates and transform them yourself",
        )


def _refuse_vectorized(func: Any, labels: tuple[Any, ...]) -> None:
    """Refuse ``np.vectorize(f)(x)`` of a differentiated ``x``: NumPy calls ``f`` entry by
    entry through its object-array machinery, which is not differentiated."""
    if labels and isinstance(func, np.vectorize):
        name = getattr(func.pyfunc, "__name__", "f")
        raise TransformError(
            f"np.vectorize({name}) called on a differentiated value",
            hint=f"write {name} with array operations (np.where for its branches), or "
            "loop over the entries in the differentiated function",
        )


def every_value(
    pre: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any], labels: Any
) -> list[Any]:
    """The values of the differentiated arguments ``labels`` names, in order."""
    return [
        (*pre, *args)[lab + len(pre)] if isinstance(lab, int) else kwargs[lab] for lab in labels
    ]


# per function: its parameters for each way of calling it, its bound generated code
_MEMO: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _parameters(
    target: Any, pre: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any], labels: Any
) -> tuple[list[packing.Packed], tuple[str, ...]]:
    """The parameters (and entries of ``*args``/``**kwargs``) the differentiated arguments
    bind to, and the parameters in order."""
    sig = inspect.signature(target, follow_wrapped=False)
    marks = [object() for _ in (*pre, *args)]
    kmarks = {k: object() for k in kwargs}
    where = packing.bind(target, sig, marks, kmarks)
    params = []
    for label in labels:
        mark = marks[label + len(pre)] if isinstance(label, int) else kmarks[label]
        params.append(where[id(mark)])
    order = tuple(sorted({p for p, _ in params}, key=list(sig.parameters).index))

    written = written_params(target)
    if written and state_mode(runtime.VARIABLE_GRADS) == STATE:
        written = container_writes(target)  # attribute stores are modelled there
    for param in set(order) & written:
        value = next(
            (v for v, (p, _) in zip(every_value(pre, args, kwargs, labels), params) if p == param),
            None,
        )
        if has_fields(value):  # ``self.calls += 1``, ``self.cache = h`` on a model object
            error = StoredState if param not in container_writes(target) else TransformError
            raise error(
                f"call to {target.__qualname__}, which writes an attribute of its "
                f"differentiated argument {param!r} (a {type(value).__name__}: state such as "
                "a counter or a cache)",
                hint="keep counters and caches outside the differentiated function, or "
                "return the value instead of storing it",
            )
        raise TransformError(
            f"call to {target.__qualname__}, which writes into its differentiated argument "
            f"{param!r} in place",
            hint=f"copy it first inside {target.__qualname__} ({param} = {param}.copy())",
        )
    return params, order


# a Python function or method called again as before (a layer's ``__call__`` at every
# step): its generated code, found without resolving the callee again. Per function (the
# ``__func__`` of a method, the class's ``__call__`` of a callable object), per way of
# calling it; valid while the registry has the same rules and the code the same object.
# (keyed by id, the function kept with its entries; cleared when it grows large, as
# closures made at each call would make it grow)
_FAST: dict[int, tuple[Any, dict[Any, _Fast]]] = {}


class _Fast:
    """What a call resolved to: the bound generated code and the parameters it feeds."""

    __slots__ = ("code", "version", "fns", "params", "order", "same_order", "checked")

    def __init__(
        self, code: Any, fns: Any, params: list[packing.Packed], order: tuple[str, ...]
    ) -> None:
        self.code = code
        self.version = REGISTRY.version
        self.fns = fns
        self.params = params
        self.order = order
        # each label its own parameter, in order (no ``*args`` entries)
        self.same_order = list(order) == [p for p, _ in params] and all(
            sub is None for _, sub in params
        )
        # ids of the objects (or methods' owners) bound first that have no rule of their
        # own at this version (the registry keeps the callables it has rules for alive,
        # so an id seen here cannot come back as one with a rule registered earlier)
        self.checked: set[int] = set()


def _callee(func: Any) -> tuple[Any, tuple[Any, ...]]:
    """The Python function a call of ``func`` runs and the arguments bound before the
    call's own, without resolving rules (``(None, ())`` for other callables)."""
    kind = type(func)
    if kind is types.MethodType:
        return _plain(func.__func__), (func.__self__,)
    if kind is types.FunctionType:
        return func, ()
    call = _plain(kind.__dict__.get("__call__") or _class_call(kind))
    return (call, (func,)) if type(call) is types.FunctionType else (None, ())


def _class_call(kind: type) -> Any:
    """The ``__call__`` a class inherits (looked up along its MRO, no descriptors run)."""
    for klass in kind.__mro__[1:]:
        found = klass.__dict__.get("__call__")
        if found is not None:
            return found
    return None


def _nondiff_call(kind: type) -> Rule | None:
    """The rule saying the ``__call__`` a class has or inherits carries no gradient (a
    Keras metric's), if there is one."""
    call = kind.__dict__.get("__call__") or _class_call(kind)
    rule = REGISTRY.lookup(call) if type(call) is types.FunctionType else None
    return rule if rule is not None and rule.nondiff else None


def _fast_path(
    func: Any, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[_Fast, tuple[Any, ...]] | None:
    """The generated code a call of ``func`` resolved to last time, if nothing changed."""
    if type(func) is types.MethodType:  # (the common case: ``layer.call``, inline)
        raw = func.__func__
        raw = getattr(raw, "_s2s_plain", raw)
        pre: tuple[Any, ...] = (func.__self__,)
    else:
        raw, pre = _callee(func)
    found = _FAST.get(id(raw))
    if found is None or found[0] is not raw:
        return None
    hit = found[1].get(
        (len(pre), len(args), tuple(kwargs), labels, runtime.VARIABLE_GRADS is not None)
    )
    if hit is None or raw.__code__ is not hit.code:
        return None
    if hit.version != REGISTRY.version:
        return None
    if pre and id(pre[0]) not in hit.checked:
        if id(func) in REGISTRY.custom or REGISTRY.lookup(func) is not None:
            return None  # this object or method has a rule of its own
        hit.checked.add(id(pre[0]))
    for label in labels:
        value = args[label] if isinstance(label, int) else kwargs[label]
        if not isinstance(value, np.ndarray) and _inert(value):
            return None
    return hit, pre


def _remember(
    func: Any,
    labels: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    entry: _Fast,
    variables: bool,
) -> None:
    """Keep what a call resolved to, for :func:`_fast_path`."""
    raw, pre = _callee(func)
    if raw is None or raw.__closure__:
        return  # a closure's backward sweep is bound to its cells as they are at the call
    found = _FAST.get(id(raw))
    if found is None or found[0] is not raw:
        if len(_FAST) > 4096:
            _FAST.clear()
        found = _FAST[id(raw)] = (raw, {})
    found[1][(len(pre), len(args), tuple(kwargs), labels, variables)] = entry


def _pullback(
    hit: _Fast, saved: Any, bwd: Callable[..., Any] | None = None
) -> Callable[[Any], tuple[Any, ...]]:
    bwd = hit.fns["bwd"] if bwd is None else bwd
    if hit.same_order:
        return lambda g: tuple(bwd(saved, g))
    order, params = hit.order, hit.params

    def pullback(g: Any) -> tuple[Any, ...]:
        grads = dict(zip(order, bwd(saved, g)))
        return tuple(packing.entry(grads[p], sub) for p, sub in params)

    return pullback


# per class whose calls only ever reach :func:`call_with_pullback`'s ``_s2s_forward`` branch
# (no ``_s2s_pullback``, not a builtin, not ``_s2s_dispatched``): that hook, so that a
# repeated call of one of its objects (a Keras layer in ``Sequential.call``) goes straight
# to the redirect and the generated code the last call resolved to
_FORWARDED: dict[type, Any] = {}


def _note_forwarded(kind: type, forward: Any) -> None:
    """Remember ``kind``'s ``_s2s_forward`` for :func:`_forwarded_call` (a class whose
    calls could take an earlier branch of :func:`call_with_pullback` is not kept)."""
    if kind in _FORWARDED or issubclass(kind, (types.BuiltinFunctionType, types.MethodType)):
        return
    if getattr(kind, "_s2s_dispatched", False) or issubclass(kind, types.FunctionType):
        return
    if len(_FORWARDED) > 4096:  # classes made at run time: do not keep them all
        _FORWARDED.clear()
    _FORWARDED[kind] = forward


def _forwarded_call(
    forward: Any,
    func: Any,
    labels: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]] | None:
    """A call of an object whose class redirects it (``_s2s_forward``) to generated code
    already compiled for the redirect; ``None`` when anything differs (the full dispatch
    then runs, and compiles)."""
    for label in labels:
        if label == DEFAULTS or type(label) is tuple:
            return None  # the object differentiated, or a star-call's entries
    if "_s2s_dispatched" in getattr(func, "__dict__", ()):
        return None
    redirected = forward(func, labels, args, kwargs)
    if redirected is None:
        return None
    target, targs, tkwargs = redirected
    fast = _fast_path(target, labels, targs, tkwargs)
    if fast is None:
        return None
    hit, pre = fast
    ans, saved = hit.fns["fwd"](*pre, *targs, **tkwargs)
    return ans, _pullback(hit, saved)


def _star_call(
    func: Any, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """:func:`call_with_pullback` for labels that name entries of ``*args``/``**kwargs``."""
    flat, regroup, _ = packing.expand(labels, len(args), tuple(kwargs))
    ans, inner = call_with_pullback(func, flat, args, kwargs)
    return ans, lambda g: regroup(inner(g))


def _holds_nothing(func: Any) -> bool:
    """Whether a callee read from a differentiated value (an attribute of an object built
    from them: ``self.activation``) can hold none of them: a ufunc, a builtin, a class,
    or a function without defaults or closure."""
    if isinstance(func, types.BuiltinFunctionType):  # ``math.exp``, not ``d.pop``
        return _container(func) is None
    if isinstance(func, (np.ufunc, type)):
        return True
    return isinstance(func, types.FunctionType) and not func.__defaults__ and not func.__closure__


def _container(func: Any) -> Any:
    """The dict, list, tuple or set a builtin method is bound to (``d.pop``), else ``None``."""
    if not isinstance(func, types.BuiltinFunctionType):
        return None  # a namedtuple's own methods are Python functions
    owner = func.__self__
    return owner if isinstance(owner, (dict, list, tuple, set)) else None


def container_method(func: Any, labels: tuple[Any, ...]) -> None:
    """Refuse a method of a container holding differentiated values (``d.pop("a")``,
    ``xs.remove(v)``) that reached the dispatcher: what it changes or returns is not
    known to the sweeps. ``copy`` is let through (its caller differentiates it)."""
    owner = _container(func)
    if DEFAULTS in labels and owner is not None and func.__name__ != "copy":
        raise TransformError(
            f"method call .{func.__name__}() of a {type(owner).__name__} holding "
            "differentiated values",
            hint="index the container (v = d['a']) and build a new one instead of "
            "changing it in place",
        )


def _state_owner(func: Any) -> bool:
    """Whether ``func`` is a method of a plain object (not a record) called under a
    gradient's object state table: its receiver carries no adjoint of its own."""
    if state_mode(runtime.VARIABLE_GRADS) != STATE:
        return False
    if isinstance(func, types.MethodType):
        return not has_fields(func.__self__)
    # a plain object's call (``layer(h)``, ``layer`` read from ``self.layers``)
    return not isinstance(func, (types.FunctionType, functools.partial)) and not has_fields(func)


def record_method(func: Any, labels: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """The call ``obj(*args)`` of a record (an object built from differentiated values,
    :mod:`s2s_ad.built_objects`) as ``type(obj).__call__(obj, *args)``, and
    ``obj.method(*args)`` as ``type(obj).method(obj, *args)``: that function and the
    labels with ``obj`` (the label ``DEFAULTS``) at position 0."""
    if isinstance(func, types.MethodType):
        method: Any = func.__func__
        if not has_fields(func.__self__):
            raise TransformError(
                f"method call .{func.__name__}() on a differentiated value (a "
                f"{type(func.__self__).__name__})",
                hint="only NumPy array methods, and methods of namedtuples, dataclasses and "
                "objects built from differentiated values, are supported on them",
            )
    else:
        method = inspect.getattr_static(type(func), "__call__", None)
    if not isinstance(method, types.FunctionType):
        raise TransformError(
            f"call of a {type(func).__name__} object built from differentiated values "
            "(its class has no __call__ method with source)",
            hint="call a method with source, or pass the arrays themselves",
        )
    shifted = tuple(
        0 if label == DEFAULTS else label + 1 if isinstance(label, int) else label
        for label in labels
    )
    return method, shifted


def call_with_pullback(
    func: Any, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """Run ``func(*args, **kwargs)``; return its value and a pullback for ``labels``.

    A callable object whose class has ``_s2s_forward(self, labels, args, kwargs)`` may
    name what its call does instead (a built Keras layer: its ``call``), as ``(func,
    args, kwargs)`` with the differentiated arguments at the same positions and
    keywords, or ``None`` to be called as it is.
    """
    forward = _FORWARDED.get(type(func))
    if forward is not None:  # a layer called again: its call's generated code, if known
        found = _forwarded_call(forward, func, labels, args, kwargs)
        if found is not None:
            return found
    container_method(func, labels)
    if DEFAULTS in labels and _container(func) is not None:  # ``e = d.copy()``
        return func(*args, **kwargs), lambda g: tuple(
            g if label == DEFAULTS else 0.0 for label in labels
        )
    if DEFAULTS in labels and (_holds_nothing(func) or _state_owner(func)):
        # ``self.activation(z)`` (np.tanh), or an object's method under object state
        # (its attributes' adjoints go to their slots)
        at = labels.index(DEFAULTS)
        kept = labels[:at] + labels[at + 1 :]
        ans, inner = call_with_pullback(func, kept, args, kwargs)
        return ans, lambda g: (lambda got: (*got[:at], 0.0, *got[at:]))(tuple(inner(g)))
    if DEFAULTS in labels and (has_fields(func) or isinstance(func, types.MethodType)):
        method, shifted = record_method(func, labels)  # ``layer(x)``, ``model.predict(x)``
        owner = getattr(func, "__self__", func)
        return call_with_pullback(method, shifted, (owner, *args), kwargs)
    if DEFAULTS in labels:  # a function value whose defaults are differentiated
        flat, extra, regroup, _ = explicit_defaults(func, labels, args, kwargs)
        ans, inner = call_with_pullback(func, flat, args, extra)
        return ans, lambda g: regroup(inner(g))
    for label in labels:
        if type(label) is tuple:  # a star-call's entries
            return _star_call(func, labels, args, kwargs)
    if getattr(func, "_s2s_dispatched", False):  # _ad.vjp_apply, differentiated again
        if getattr(func, "_s2s_variables", False):  # _ad.vjp_apply_vars
            return vjp_apply_vars_pullback(labels, args, kwargs)
        return vjp_apply_pullback(labels, args, kwargs)
    own, forward = _hooks(type(func))
    if own is not None:  # an object that differentiates its own call (tape_nested)
        return own(func, labels, args, kwargs)
    if forward is not None:
        _note_forwarded(type(func), forward)
        redirected = forward(func, labels, args, kwargs)
        if redirected is not None:
            func, args, kwargs = redirected
    fast = _fast_path(func, labels, args, kwargs)
    if fast is not None:
        hit, pre = fast
        ans, saved = hit.fns["fwd"](*pre, *args, **kwargs)
        return ans, _pullback(hit, saved)
    from .api import compile_adjoint, primal

    custom = REGISTRY.custom.get(id(func))
    if custom is not None:
        ans = func(*args, **kwargs)

        def custom_pullback(g: Any) -> tuple[Any, ...]:

            name = getattr(func, "__name__", "rule")
            grads = rule_grads(custom(g, *args, **kwargs), tuple(args), name)
            return tuple(grads[label] for label in labels)

        return ans, custom_pullback
    if isinstance(func, CustomGradient):
        ans, grad_fn = func.forward(*args, **kwargs)

        def cg_pullback(g: Any) -> tuple[Any, ...]:

            grads = rule_grads(grad_fn(g), tuple(args), getattr(func, "__name__", "rule"))
            return tuple(grads[label] for label in labels)

        return ans, cg_pullback
    rule = REGISTRY.lookup(func) or REGISTRY.lookup(getattr(func, "__func__", None))
    if rule is None and not isinstance(func, (types.FunctionType, types.MethodType)):
        rule = _nondiff_call(type(func))  # ``metric(y, p)``: its class's call carries none
    if rule is not None and rule.nondiff:
        ans = func(*args, **kwargs)  # no gradient flows (a draw, Variable.assign...)
        return ans, lambda g: tuple(0.0 for _ in labels)
    if rule is not None:
        return _rule_pullback(rule, func, labels, args, kwargs)
    # arguments that cannot carry a gradient (``a.astype(float)``: a type) are not
    # differentiated: variables mode takes every name read from outside as possibly varied
    inert = {
        label
        for label in labels
        if _inert(args[label] if isinstance(label, int) else kwargs[label])
    }
    if inert:
        kept = tuple(label for label in labels if label not in inert)
        ans, inner = call_with_pullback(func, kept, args, kwargs)

        def partial_pullback(g: Any) -> tuple[Any, ...]:
            got = dict(zip(kept, inner(g)))
            return tuple(got.get(label, 0.0) for label in labels)

        return ans, partial_pullback
    method = _array_method(func)
    if method is not None:  # ``A.dot(x)`` with ``A`` not differentiated: its method rule
        rule, unbound, owner = method
        shifted = tuple(label + 1 if isinstance(label, int) else label for label in labels)
        if rule.nondiff:
            return func(*args, **kwargs), lambda g: tuple(0.0 for _ in labels)
        return _rule_pullback(rule, unbound, shifted, (owner, *args), kwargs)
    _refuse_draw(func, labels)
    _refuse_vectorized(func, labels)
    target, pre = _target(func)
    raw, raw_pre = _callee(func)
    same = target is not None and target is raw and len(pre) == len(raw_pre)
    same = same and all(a is b for a, b in zip(pre, raw_pre))
    if target is not None:
        target = primal(target)
    if target is None and not labels:
        return func(*args, **kwargs), lambda g: ()  # nothing to differentiate
    if target is None:
        name = getattr(func, "__qualname__", None) or type(func).__name__
        raise TransformError(
            f"call to {name} (no source and no gradient rule)",
            hint=f"register a rule with s2s_ad.defgrad({name}, rule)",
        )
    full = (*pre, *args)
    memo = _MEMO.setdefault(target, {})
    shape = (len(pre), len(args), tuple(kwargs), labels, state_mode(runtime.VARIABLE_GRADS))
    if shape not in memo:
        memo[shape] = _parameters(target, pre, args, kwargs, labels)
    params, order = memo[shape]
    variables = state_mode(runtime.VARIABLE_GRADS)  # inside a tape's gradient, or grad's
    compiled = compile_adjoint(target, order, variables=variables)
    hit = memo.get(id(compiled))
    if hit is None or hit[0] is not compiled:
        hit = memo[id(compiled)] = (compiled, compiled.bind(target))
    fns = hit[1]
    entry = _Fast(target.__code__, fns, params, order)
    if same and target is raw:  # the same function and bound arguments as _callee finds
        _remember(func, labels, args, kwargs, entry, variables)
    ans, saved = fns["fwd"](*full, **kwargs)
    if target.__closure__:  # ``lambda u: u * k`` with ``k`` rebound before the pullback runs
        return ans, _pullback(entry, saved, compiled.bind_one("bwd", _frozen(target)))
    return ans, _pullback(entry, saved)


def _frozen(func: types.FunctionType) -> types.FunctionType:
    """``func`` with new closure cells holding what its cells hold now: the backward sweep
    bound to them reads the values the forward sweep read, whatever is bound later."""
    cells = []
    for cell in func.__closure__ or ():
        try:
            cells.append(types.CellType(cell.cell_contents))
        except ValueError:  # not bound yet
            cells.append(cell)
    return types.FunctionType(
        func.__code__, func.__globals__, func.__name__, func.__defaults__, tuple(cells)
    )


def call_with_tangent(
    func: Any,
    labels: tuple[Any, ...],
    tangents: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, Any]:
    """Run ``func(*args, **kwargs)`` and return its value and the tangent of the value."""
    container_method(func, labels)
    if DEFAULTS in labels and _container(func) is not None:  # ``e = d.copy()``
        return func(*args, **kwargs), tangents[labels.index(DEFAULTS)]
    if DEFAULTS in labels and _holds_nothing(func):  # ``self.activation(z)``: np.tanh
        at = labels.index(DEFAULTS)
        labels, tangents = labels[:at] + labels[at + 1 :], tangents[:at] + tangents[at + 1 :]
    if DEFAULTS in labels and (has_fields(func) or isinstance(func, types.MethodType)):
        method, shifted = record_method(func, labels)  # ``layer(x)``, ``model.predict(x)``
        owner = getattr(func, "__self__", func)
        return call_with_tangent(method, shifted, tangents, (owner, *args), kwargs)
    if DEFAULTS in labels:  # a function value whose defaults are differentiated
        labels, tangents, kwargs = spread_tangent(func, labels, tangents, args, kwargs)
    if any(isinstance(label, tuple) for label in labels):  # a star-call's entries
        labels, tangents = packing.expand_tangents(labels, tangents, len(args), tuple(kwargs))
    if getattr(func, "_s2s_variables", False) or hasattr(type(func), "_s2s_pullback"):
        raise TransformError(
            "forward mode through an inner tape's gradient with respect to Variables "
            "reached through objects",
            hint="use an outer GradientTape (reverse mode) over the inner tape",
        )
    if getattr(func, "_s2s_dispatched", False):  # _ad.vjp_apply, differentiated again
        return vjp_apply_tangent(labels, tangents, args, kwargs)
    from .api import compile_forward, primal

    custom_jvp = REGISTRY.custom_jvp.get(id(func))
    if custom_jvp is not None:
        by_position = [0.0] * len(args)
        for label, tangent in zip(labels, tangents):
            if not isinstance(label, int):
                raise TransformError(f"keyword argument {label!r} of a defjvp rule's function")
            by_position[label] = tangent
        return func(*args, **kwargs), custom_jvp(tuple(by_position), *args, **kwargs)
    target, pre = _target(func)
    if (
        target is None
        or REGISTRY.custom.get(id(func)) is not None
        or isinstance(func, CustomGradient)
        or REGISTRY.lookup(func) is not None
        or _array_method(func) is not None
    ):
        ans, pullback = call_with_pullback(func, labels, args, kwargs)
        return ans, jvp_from_vjp(pullback, ans, tangents)
    target = primal(target)
    full = (*pre, *args)
    sig = inspect.signature(target, follow_wrapped=False)
    marks = [object() for _ in full]
    kmarks = {k: object() for k in kwargs}
    where = packing.bind(target, sig, marks, kmarks)
    given: dict[str, Any] = {}
    entries: dict[str, dict[Any, Any]] = {}
    for label, tangent in zip(labels, tangents):
        mark = marks[label + len(pre)] if isinstance(label, int) else kmarks[label]
        param, sub = where[id(mark)]
        if sub is None:
            if is_zero(tangent):
                continue  # the symbolic zero (an object's, ``self``): no tangent at all
            given[param] = tangent
        else:
            entries.setdefault(param, {})[sub] = tangent
    if entries:
        values = sig.bind(*full, **kwargs).arguments
        for param, subs in entries.items():
            given[param] = packing.packed_tangent(sig, param, subs, values[param])
    order = tuple(sorted(given, key=list(sig.parameters).index))
    if not order:
        return func(*args, **kwargs), 0.0
    compiled = compile_forward(target, order)
    fns = compiled.bind(target)
    dots = {compiled.tangent_params[p]: given[p] for p in order}
    ans, tangent = fns["jvp"](*full, **kwargs, **dots)
    if type(tangent) is float and tangent == 0.0 and isinstance(ans, np.ndarray):
        # an array made from constants (``np.zeros(self.n)``): its zero tangent as zeros
        # of its shape, which the tangent code it is passed to (``h @ W``) needs
        tangent = np.zeros(ans.shape)
    return ans, tangent
