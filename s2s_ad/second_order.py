"""Derivatives of ``_ad.vjp_apply``: second order through calls dispatched at run time.

A gradient that will be differentiated again cannot keep a pullback closure for a call
whose callee is known only when it runs (a method, a function passed as an argument, a
star-call): it calls ``_ad.vjp_apply(func, labels, g, *args)`` in its backward sweep
instead. Differentiating that call again needs the pullback of ``func`` as a Python
function with source: the callee's generated gradient with the cotangent as its first
parameter (``compile_adjoint(..., pure="vjp")``), which the dispatcher then
differentiates like any user function, to any order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import packing
from .errors import TransformError


@dataclass
class _PureVJP:
    """A callee's pullback as a generated function, and how its results map to labels."""

    fn: Any  # fn(g, *pre, *args, **kwargs) -> gradients of ``order``
    pre: tuple[Any, ...]  # arguments bound before the call's own (a method's self)
    to_labels: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    to_order: Callable[[tuple[Any, ...]], tuple[Any, ...]]


def _pure_vjp(
    func: Any, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> _PureVJP:
    import inspect

    from .api import compile_adjoint, primal
    from .dispatch import _inert, _parameters, _target

    flat, regroup, ungroup = packing.expand(labels, len(args), tuple(kwargs))
    target, pre = _target(func)
    if target is not None:
        target = primal(target)
    if target is None or not hasattr(target, "__code__"):
        name = getattr(func, "__qualname__", None) or type(func).__name__
        raise TransformError(
            f"second derivative through {name}, called at run time (no Python source)"
        )
    value = {lab: args[lab] if isinstance(lab, int) else kwargs[lab] for lab in flat}
    kept = tuple(lab for lab in flat if not _inert(value[lab]))
    params, order = _parameters(target, pre, args, kwargs, kept)
    fn = compile_adjoint(target, order, pure="vjp").bind(target)["grad"]
    where = dict(zip(kept, params))
    sig = inspect.signature(target, follow_wrapped=False)
    bound = sig.bind(*pre, *args, **kwargs).arguments

    def to_labels(grads: tuple[Any, ...]) -> tuple[Any, ...]:
        by_param = dict(zip(order, grads))
        out = []
        for lab in flat:
            if lab in where:
                param, sub = where[lab]
                out.append(packing.entry(by_param[param], sub))
            else:
                out.append(0.0)
        return regroup(tuple(out))

    def to_order(cotangents: tuple[Any, ...]) -> tuple[Any, ...]:
        from .runtime import add

        plain: dict[str, Any] = {}
        entries: dict[str, dict[Any, Any]] = {}
        for lab, cot in zip(flat, ungroup(cotangents)):
            if lab not in where or cot is None:
                continue
            param, sub = where[lab]
            if sub is None:
                plain[param] = add(plain[param], cot) if param in plain else cot
            else:
                entries.setdefault(param, {})[sub] = cot
        for param, subs in entries.items():
            plain[param] = packing.packed_tangent(sig, param, subs, bound[param])
        return tuple(plain.get(p, 0.0) for p in order)

    return _PureVJP(fn, pre, to_labels, to_order)


def _shift(labels: tuple[Any, ...], npre: int) -> tuple[Any, ...]:
    """Labels of ``vjp_apply(func, labels, g, *args)`` as labels of ``fn(g, *pre, *args)``."""
    out = []
    for lab in labels:
        if isinstance(lab, int):
            if lab < 2:
                raise TransformError(
                    "derivative with respect to the function or labels of a dispatched call"
                )
            lab = 0 if lab == 2 else lab - 2 + npre
        out.append(lab)
    return tuple(out)


def vjp_apply_pullback(
    labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """Value and pullback of ``vjp_apply(*args, **kwargs)`` for its arguments ``labels``."""
    from .dispatch import call_with_pullback

    func, inner, g, *rest = args
    pv = _pure_vjp(func, inner, tuple(rest), kwargs)
    full = (g, *pv.pre, *rest)
    grads, pullback = call_with_pullback(pv.fn, _shift(labels, len(pv.pre)), full, kwargs)
    return pv.to_labels(grads), lambda cot: pullback(pv.to_order(cot))


def vjp_apply_tangent(
    labels: tuple[Any, ...],
    tangents: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, Any]:
    """Value and tangent of ``vjp_apply(*args, **kwargs)`` (forward over reverse)."""
    from .dispatch import call_with_tangent

    func, inner, g, *rest = args
    pv = _pure_vjp(func, inner, tuple(rest), kwargs)
    full = (g, *pv.pre, *rest)
    shifted = _shift(labels, len(pv.pre))
    grads, dots = call_with_tangent(pv.fn, shifted, tangents, full, kwargs)
    return pv.to_labels(grads), pv.to_labels(dots)
