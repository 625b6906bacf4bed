"""Transforms of functions with a ``*args`` parameter: one fixed-arity function per call.

``grad`` differentiates positions inside ``*args`` itself (the gradient of the whole tuple,
from which each position takes its entry). The other transforms (``jvp``, ``vjp``,
``jacobian``, ``hessian``, ``hvp``, ``elementwise_grad``) work on named parameters; for
them a call ``f(a, x0, x1)`` of ``def f(a, *xs)`` goes through the generated function
``def f_3(a, xs_0, xs_1): return f(a, xs_0, xs_1)``, made once per number of positional
arguments (and names of extra keywords), and differentiated like any caller of ``f``.
Positions count the arguments of the call, as in JAX and autograd.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any

from .targets import define, signature

_FIXED: weakref.WeakKeyDictionary[Any, dict[tuple[int, tuple[str, ...]], Any]] = (
    weakref.WeakKeyDictionary()
)


def star_index(fun: Any) -> int | None:
    """The position of ``fun``'s ``*args`` parameter (``None`` when it has none)."""
    code = getattr(getattr(fun, "__func__", fun), "__code__", None)
    if code is not None and not code.co_flags & inspect.CO_VARARGS:
        return None
    try:
        params = list(signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    for k, p in enumerate(params):
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return k
    return None


def fixed_arity(fun: Any, count: int, keywords: tuple[str, ...] = ()) -> Any:
    """``fun`` as a function of ``count`` named positional parameters (``fun`` itself when
    ``count`` does not reach its ``*args``): the entries of ``*name`` are ``name_0``,
    ``name_1`` ...; keyword-only parameters are kept; ``keywords`` are the extra keywords
    a ``**kwargs`` parameter receives in the call."""
    k = star_index(fun)
    if k is None or count <= k:
        return fun
    key = (count, tuple(sorted(keywords)))
    try:
        per_fun = _FIXED.setdefault(fun, {})
    except TypeError:  # not weakly referenceable: made each time
        per_fun = {}
    hit = per_fun.get(key)
    if hit is None:
        hit = per_fun[key] = _make(fun, k, count, key[1])
    return hit


def _make(fun: Any, k: int, count: int, keywords: tuple[str, ...]) -> Any:
    params = list(signature(fun).parameters.values())
    star = params[k].name
    taken = {p.name for p in params}
    entries = []
    for i in range(count - k):
        name = f"{star}_{i}"
        while name in taken:
            name = "_" + name
        entries.append(name)
    new = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params[:k]]
    new += [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in entries]
    new += [p for p in params[k + 1 :] if p.kind is inspect.Parameter.KEYWORD_ONLY]
    extra = [n for n in keywords if n not in taken]
    new += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in extra]
    passed = [p.name for p in params[:k]] + entries
    passed += [f"{p.name}={p.name}" for p in new if p.kind is inspect.Parameter.KEYWORD_ONLY]
    label = getattr(fun, "__name__", "fun")
    label = label if label.isidentifier() else "fun"
    made = define(f"{label}_{count}", new, "{fun}(" + ", ".join(passed) + ")", {"fun": fun})
    made.__doc__ = getattr(fun, "__doc__", None)
    return made


def per_call(
    fun: Any, transform: Callable[[Any], Callable[..., Any]], trailing: int = 0
) -> Callable[..., Any]:
    """``transform(fun)`` for a function with ``*args``: at each call, ``transform`` of
    the fixed-arity function for that call (made and transformed once per arity).

    Args:
        fun: The function with a ``*args`` parameter.
        transform: Makes the transformed function of a function of named parameters.
        trailing: Positional arguments of the call that are not ``fun``'s (``hvp``'s
            vector).
    """
    made: dict[tuple[int, tuple[str, ...]], Callable[..., Any]] = {}

    def call(*args: Any, **kwargs: Any) -> Any:
        key = (len(args) - trailing, tuple(sorted(kwargs)))
        transformed = made.get(key)
        if transformed is None:
            transformed = made[key] = transform(fixed_arity(fun, *key))
        return transformed(*args, **kwargs)

    return call
