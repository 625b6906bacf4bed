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

import itertools
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import packing, runtime
from .emit import AD
from .errors import TransformError
from .rules import REGISTRY
from .rules.defaults import DEFAULTS, explicit_defaults
from .rules.registry import substitute
from .runtime import add, is_zero

_serial = itertools.count(1)


@dataclass
class _PureVJP:
    """A callee's pullback as a generated function, and how its results map to labels."""

    fn: Any  # fn(g, *args_of(args), **kwargs) -> gradients of the callee's parameters
    args_of: Callable[[tuple[Any, ...]], tuple[Any, ...]]  # the call's positional arguments
    pos_of: Callable[[int], int]  # a position among them -> its position in args_of(...)
    to_labels: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    to_order: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    trivial: bool  # fn's results are the labels' gradients, one each, in order
    token: bool = False  # fn returns a variables-mode token after the gradients


def _apply_labels(pv: _PureVJP, labels: tuple[Any, ...]) -> tuple[Any, ...]:
    """Labels of ``vjp_apply(func, labels, g, *args)`` as labels of ``pv.fn(g, ...)``."""
    out = []
    for lab in labels:
        if isinstance(lab, int):
            if lab < 2:
                raise TransformError(
                    "derivative with respect to the function or labels of a dispatched call"
                )
            lab = 0 if lab == 2 else 1 + pv.pos_of(lab - 3)
        out.append(lab)
    return tuple(out)


def _pure_vjp(
    func: Any,
    labels: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    variables: bool = False,
) -> _PureVJP:
    import inspect

    from .api import compile_adjoint, primal
    from .dispatch import _inert, _parameters, _target

    flat, regroup, ungroup = packing.expand(labels, len(args), tuple(kwargs))
    if hasattr(type(func), "_s2s_pullback"):  # tape_nested.VariablesGradient
        raise TransformError(
            "a third derivative through an inner tape's gradient with respect to "
            "Variables reached through objects (an outer tape over two nested tapes)",
            hint="second derivatives are supported: one outer tape over one inner tape",
        )
    if getattr(func, "_s2s_dispatched", False):
        if variables or getattr(func, "_s2s_variables", False):
            raise TransformError(
                "a third derivative through an inner tape's gradient with respect to "
                "Variables reached through objects"
            )
        return _nested(flat, regroup, ungroup, args, kwargs, flat == labels)
    ruled = _rule_vjp(func, flat, args, kwargs)
    sig: Any = None
    bound: dict[str, Any] = {}
    if ruled is not None:
        fn, pre, where, order = ruled
    else:
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
        # in variables mode the pullback also returns a token (see tape_nested)
        fn = compile_adjoint(target, order, pure="vjp", variables=variables).bind(target)["grad"]
        where = dict(zip(kept, params))
        sig = inspect.signature(target, follow_wrapped=False)
        bound = sig.bind(*pre, *args, **kwargs).arguments
    trivial = (
        flat == labels
        and list(where) == list(flat)
        and all(sub is None for _, sub in where.values())
        and tuple(p for p, _ in where.values()) == tuple(order)
    )

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
        if is_zero(cotangents):  # no cotangent reached the gradients (a zero as a whole)
            return (0.0,) * len(order)
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

    npre = len(pre)
    made = _PureVJP(fn, lambda a: (*pre, *a), lambda p: p + npre, to_labels, to_order, trivial)
    made.token = variables and ruled is None
    return made


def _nested(
    flat: tuple[Any, ...],
    regroup: packing.Regroup,
    ungroup: packing.Regroup,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    plain: bool,
) -> _PureVJP:
    """The pullback of ``vjp_apply(func, labels, g, *args)`` itself (third order and up):
    ``vjp_apply`` is ``func``'s generated pullback, whose own pullback is generated in turn."""
    func, labels, g, *rest = args
    inner = _pure_vjp(func, labels, tuple(rest), kwargs)
    if not inner.trivial:
        raise TransformError(
            "third derivative through a call dispatched at run time whose arguments "
            "are *args entries or repeated"
        )
    # the callee (label 0) carries no gradient unless it is a record (its fields do): a
    # function passed in as a parameter (a helper's ``f``), followed by the activity
    # analysis because a record could have been passed in its place
    inert = () if _record_callee(func) or DEFAULTS in labels else (0,)
    kept = tuple(lab for lab in flat if lab not in inert)
    mapped = _apply_labels(inner, kept)
    outer = _pure_vjp(inner.fn, mapped, (g, *inner.args_of(tuple(rest))), kwargs)

    def to_labels(grads: tuple[Any, ...]) -> tuple[Any, ...]:
        got = iter(outer.to_labels(grads))
        return regroup(tuple(0.0 if lab in inert else next(got) for lab in flat))

    def to_order(cot: Any) -> tuple[Any, ...]:
        if is_zero(cot):
            return outer.to_order(cot)
        return outer.to_order(tuple(c for lab, c in zip(flat, ungroup(cot)) if lab not in inert))

    return _PureVJP(
        outer.fn,
        lambda a: outer.args_of((a[2], *inner.args_of(tuple(a[3:])))),
        lambda p: outer.pos_of(_apply_labels(inner, (p,))[0]),
        to_labels,
        to_order,
        plain and outer.trivial and kept == flat,
    )


def _rule_vjp(
    func: Any, flat: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[Any, Any], tuple[str, ...]] | None:
    """For a function with a gradient rule (``np.sum`` reached as ``anp.sum``, ``A.dot``):
    its VJP templates as a generated Python function, which is differentiated again like
    any other (the helpers the templates call have rules of their own)."""
    from .dispatch import _array_method

    method = _array_method(func)
    if method is not None:
        rule, call, owner = method
        pre: tuple[Any, ...] = (owner,)
    else:
        rule = REGISTRY.lookup(func) or REGISTRY.lookup(getattr(func, "__func__", None))
        call, pre = func, ()
        if rule is None:
            return None
    names = list(rule.params)
    full = (*pre, *args)
    if rule.nondiff or len(full) > len(names) or "g" in names or "ans" in names:
        raise TransformError(f"second derivative through {rule.name}, called at run time")
    given = [p for p in names[: len(full)]] + [k for k in kwargs if k not in names[: len(full)]]
    missing = {p: d for p, d in {**rule.defaults, **rule.kwonly}.items() if p not in given}
    wanted = []
    for lab in flat:
        param = names[lab + len(pre)] if isinstance(lab, int) else lab
        if param not in rule.vjps:
            raise TransformError(f"argument '{param}' of {rule.name} (no gradient rule)")
        if rule.name.startswith("np.random.") and re.search(r"\bans\b", rule.vjps[param]):
            # the template reads the value drawn, which calling again would draw anew
            raise TransformError(
                f"second derivative in argument '{param}' of the random draw {rule.name}, "
                "called at run time (its derivative reads the value drawn, which would be "
                "drawn again)",
                hint="draw the standard variate and scale it yourself (loc + scale * z)",
            )
        wanted.append(param)
    order = tuple(dict.fromkeys(wanted))
    fn = _define_rule_vjp(rule.name, call, names[: len(full)], list(kwargs), missing, order, rule)
    return fn, pre, {lab: (param, None) for lab, param in zip(flat, wanted)}, order


def _define_rule_vjp(
    name: str,
    call: Any,
    positional: list[str],
    keywords: list[str],
    missing: dict[str, str],
    order: tuple[str, ...],
    rule: Any,
) -> Any:
    """Compile ``def <name>_vjp(g, <params>): return (<template>, ...)`` with source."""
    import linecache

    import numpy as np

    label = "".join(c if c.isalnum() else "_" for c in name).strip("_") or "rule"
    args = ", ".join([*positional, *(f"{k}={k}" for k in keywords)])
    env = {"ans": f"_fn({args})", **{p: f"({d})" for p, d in missing.items()}}
    parts = [substitute(rule.vjps[p], env) for p in order]
    body = "(" + ", ".join(parts) + ",)"
    params = ", ".join(["g", *positional, *(f"{k}=None" for k in keywords)])
    source = f"def {label}_vjp({params}):\n    return {body}\n"
    filename = f"<s2s_ad made:{label}_vjp:{next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"np": np, "_ad": AD, "_fn": call, "__builtins__": __builtins__}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    return namespace[f"{label}_vjp"]


def _inert_label(lab: Any, args: tuple[Any, ...]) -> bool:
    """Whether label ``lab`` of ``vjp_apply(func, labels, g, *rest)`` names an argument
    that carries no gradient: the callee, or a tuple of labels (``func``'s or, when
    ``func`` is ``vjp_apply`` again, its own callee's). A sweep that kept them on a tape
    it differentiates takes them for differentiated values."""
    if not isinstance(lab, int):
        return False
    nested = getattr(args[0], "_s2s_dispatched", False)
    if lab == 0 or (nested and lab == 3):
        return True
    if lab == 1 or (nested and lab == 4):
        value = args[lab]
        return isinstance(value, tuple) and all(isinstance(v, (int, str)) for v in value)
    return False


def vjp_apply_pullback(
    labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """Value and pullback of ``vjp_apply(*args, **kwargs)`` for its arguments ``labels``."""
    from .dispatch import call_with_pullback

    func, inner, g, *rest = args
    if DEFAULTS in inner:
        held = _held_callee(labels, args)
        if held is not None:  # a method of an object built from differentiated values
            return vjp_apply_pullback(*held, kwargs)
        dropped = _dropped_callee(labels, args)
        if dropped is not None:  # ``self.activation``: a callee holding none of them
            at, kept, short = dropped
            value, inner_pullback = vjp_apply_pullback(kept, short, kwargs)

            def without(cot: Any) -> tuple[Any, ...]:
                cot = tuple(cot[:at]) + tuple(cot[at + 1 :])
                got = dict(zip(kept, inner_pullback(cot)))
                return tuple(got.get(lab, 0.0) for lab in labels)

            return (*value[:at], 0.0, *value[at:]), without
        return _defaults_pullback(labels, args, kwargs)  # differentiated defaults
    if 0 in labels and _record_callee(func):  # ``model(x)`` of a gradient wrt x, wrt model
        return vjp_apply_pullback(*_held_callee(labels, args), kwargs)  # type: ignore[misc]
    pv = _pure_vjp(func, inner, tuple(rest), kwargs)
    full = (g, *pv.args_of(tuple(rest)))
    every = labels
    variables = runtime.VARIABLE_GRADS is not None
    # variables mode: the callee is an object read from outside (``layer`` of a loop over
    # ``self._layers``); its Variables are reached by the attribute reads of its own code,
    # which the pure pullback, differentiated in variables mode, hands to the table. Only
    # the cotangent and the arguments are differentiated by label.
    labels = tuple(
        lab
        for lab in labels
        if not _inert_label(lab, args) and not (variables and isinstance(lab, int) and lab < 2)
    )
    if not labels:
        return pv.to_labels(tuple(pv.fn(*full, **kwargs))), lambda cot: (0.0,) * len(every)
    grads, inner_pullback = call_with_pullback(pv.fn, _apply_labels(pv, labels), full, kwargs)
    if len(every) == len(labels):
        return pv.to_labels(grads), lambda cot: inner_pullback(pv.to_order(cot))

    def by_label(cot: Any) -> tuple[Any, ...]:
        got = dict(zip(labels, inner_pullback(pv.to_order(cot))))
        return tuple(got.get(lab, 0.0) for lab in every)

    return pv.to_labels(grads), by_label


def _record_callee(func: Any) -> bool:
    """Whether ``func`` is a record's call or method (its object carries gradients)."""
    from .built_objects import has_fields

    return has_fields(
        getattr(func, "__self__", func) if isinstance(func, types.MethodType) else func
    )


def _held_callee(
    labels: tuple[Any, ...], args: tuple[Any, ...]
) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """``vjp_apply``'s labels and arguments with a record's call (``layer(x)``,
    ``model.predict(x)``, see :func:`dispatch.record_method`) made a call of its class's
    function on the record; ``None`` for another callee."""
    from .built_objects import has_fields
    from .dispatch import record_method

    func, inner, g, *rest = args
    if not (has_fields(func) or isinstance(func, types.MethodType)):
        return None
    method, shifted = record_method(func, inner)
    owner = getattr(func, "__self__", func)
    moved = tuple(
        3 if lab == 0 else lab + 1 if isinstance(lab, int) and lab >= 3 else lab for lab in labels
    )
    return moved, (method, shifted, g, owner, *rest)


def _dropped_callee(
    labels: tuple[Any, ...], args: tuple[Any, ...]
) -> tuple[int, tuple[Any, ...], tuple[Any, ...]] | None:
    """For a callee that holds no differentiated value (``np.tanh`` read from a record's
    attribute): the position of ``DEFAULTS`` among its labels, and ``vjp_apply``'s
    labels and arguments without it; ``None`` for another callee."""
    from .dispatch import _holds_nothing

    func, inner, g, *rest = args
    if not _holds_nothing(func):
        return None
    at = inner.index(DEFAULTS)
    short = (func, inner[:at] + inner[at + 1 :], g, *rest)
    return at, tuple(lab for lab in labels if lab != 0), short


def _defaults_pullback(
    labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """:func:`vjp_apply_pullback` of a call whose callee's defaults are differentiated
    (the label ``DEFAULTS``): they are passed explicitly, and the function value's own
    label (``0``) stands for them."""
    func, inner, g, *rest = args
    flat, extra, regroup, picks = explicit_defaults(func, inner, tuple(rest), kwargs)
    names = flat[len(flat) - len(picks) :]
    outer: list[Any] = []
    for lab in labels:
        outer += list(names) if lab == 0 else [lab]
    value, inner_pullback = vjp_apply_pullback(tuple(outer), (func, flat, g, *rest), extra)

    def pullback(cot: Any) -> tuple[Any, ...]:
        if isinstance(cot, (tuple, list)):  # the cotangents of the gradients, for ``flat``
            by_label: dict[Any, Any] = {}
            for lab, part in zip(inner, cot):
                if lab == DEFAULTS:
                    for name, i in zip(names, picks):
                        by_label[name] = 0.0 if is_zero(part) else part[i]
                else:
                    by_label[lab] = part
            cot = tuple(by_label[lab] for lab in flat)
        grads = inner_pullback(cot)
        out: list[Any] = []
        k = 0
        for lab in labels:
            if lab == 0:  # the function value's adjoint: a tuple over its defaults
                full: list[Any] = [0.0] * len(func.__defaults__)
                for i, part in zip(picks, grads[k : k + len(names)]):
                    full[i] = part
                out.append(tuple(full))
                k += len(names)
            else:
                out.append(grads[k])
                k += 1
        return tuple(out)

    return regroup(tuple(value)), pullback


def vjp_apply_vars_pullback(
    labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """Value and pullback of ``vjp_apply_vars(*args, **kwargs)``: the callee's pullback
    generated in variables mode, whose token carries what it adds to Variables'
    gradients (an outer tape over an inner tape's gradient of Variables)."""
    from .dispatch import call_with_pullback

    func, inner, g, *rest = args
    # the callee and the labels (objects read from outside, in variables mode): their
    # Variables are reached by the attribute reads of the callee's own code
    every, labels = labels, tuple(lab for lab in labels if not (isinstance(lab, int) and lab < 2))
    pv = _pure_vjp(func, inner, tuple(rest), kwargs, variables=True)
    full = (g, *pv.args_of(tuple(rest)))
    out, inner_pullback = call_with_pullback(pv.fn, _apply_labels(pv, labels), full, kwargs)
    if len(every) == len(labels):
        pullback = inner_pullback
    else:

        def pullback(cot: Any) -> tuple[Any, ...]:
            got = dict(zip(labels, inner_pullback(cot)))
            return tuple(got.get(lab, 0.0) for lab in every)

    if pv.token:
        grads, token = tuple(out[:-1]), out[-1]
    else:
        grads, token = tuple(out), 0.0
    value = (*pv.to_labels(grads), token)

    def vars_pullback(cot: Any) -> tuple[Any, ...]:
        if not isinstance(cot, (tuple, list)):  # a symbolic zero for all of them
            cot = (0.0,) * len(value)
        given = pv.to_order(tuple(cot[:-1]))
        return pullback((*given, cot[-1]) if pv.token else given)

    return value, vars_pullback


def vjp_apply_tangent(
    labels: tuple[Any, ...],
    tangents: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, Any]:
    """Value and tangent of ``vjp_apply(*args, **kwargs)`` (forward over reverse)."""
    from .dispatch import call_with_tangent

    func, inner, g, *rest = args
    held = (
        _held_callee(labels, args)
        if DEFAULTS in inner or (0 in labels and _record_callee(func))
        else None
    )
    if held is not None:  # a method of an object built from differentiated values
        new_labels, new_args = held
        return vjp_apply_tangent(new_labels, tangents, new_args, kwargs)
    dropped = _dropped_callee(labels, args) if DEFAULTS in inner else None
    if dropped is not None:  # ``self.activation``: a callee holding none of them
        at, kept, short = dropped
        dots = tuple(t for lab, t in zip(labels, tangents) if lab in kept)
        value, dot = vjp_apply_tangent(kept, dots, short, kwargs)
        return (*value[:at], 0.0, *value[at:]), (*dot[:at], 0.0, *dot[at:])
    if DEFAULTS in inner:  # the callee's differentiated defaults, passed explicitly
        flat, extra, regroup, picks = explicit_defaults(func, inner, tuple(rest), kwargs)
        names = flat[len(flat) - len(picks) :]
        outer: list[Any] = []
        dots: list[Any] = []
        for lab, t in zip(labels, tangents):
            if lab == 0:  # the function value's tangent: its defaults'
                outer += names
                dots += [0.0 if is_zero(t) else t[i] for i in picks]
            else:
                outer.append(lab)
                dots.append(t)
        value, dot = vjp_apply_tangent(tuple(outer), tuple(dots), (func, flat, g, *rest), extra)
        return regroup(tuple(value)), regroup(tuple(dot))
    # the function and its labels look differentiated when read back from a tape (a
    # gradient taken in a loop): with a zero tangent they are left out
    pairs = [
        (lab, t)
        for lab, t in zip(labels, tangents)
        if not (isinstance(lab, int) and lab < 2 and is_zero(t))
    ]
    labels, tangents = tuple(lab for lab, _ in pairs), tuple(t for _, t in pairs)
    pv = _pure_vjp(func, inner, tuple(rest), kwargs)
    full = (g, *pv.args_of(tuple(rest)))
    grads, dots = call_with_tangent(pv.fn, _apply_labels(pv, labels), tangents, full, kwargs)
    if not isinstance(dots, (tuple, list)):  # a symbolic zero for all (W.dot(x) in x)
        dots = (dots,) * len(grads)
    return pv.to_labels(grads), pv.to_labels(dots)
