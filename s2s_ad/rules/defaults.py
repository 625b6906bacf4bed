"""Function values whose defaults hold differentiated values (``lambda z, s=s: s * z`` made
in a loop or a comprehension, kept in a list and called later).

The normalizer makes such a lambda with ``None`` for its defaults and then
``_ad.with_defaults(fn, s)``: a copy of the function with the defaults given. A function
value's adjoint (and tangent) is the tuple of its defaults' adjoints (tangents). A call of
it passes its defaults explicitly and differentiates them like arguments (the label
:data:`DEFAULTS`, see :func:`explicit_defaults`).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

from ..errors import TransformError
from ..runtime import is_zero
from ..source import user_lines, user_origin
from .registry import set_jvps, vjp_rule

#: The label of a call's callee among its differentiated arguments: the callee's defaults.
DEFAULTS = "<defaults>"


def with_defaults(fn: Any, *values: Any) -> Any:
    """A copy of the function ``fn`` whose positional defaults are ``values``."""
    out = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, values, fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__qualname__ = fn.__qualname__
    return out


def defaults_vjp(g: Any, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The adjoints of the defaults from the adjoint ``g`` of the function value (a tuple
    of them, or the symbolic zero)."""
    if is_zero(g):
        return tuple(0.0 for _ in values)
    return tuple(g)


def defaults_jvp(t: tuple[Any, ...], values: tuple[Any, ...]) -> Any:
    """The tangent of the function value: its defaults' tangents (``0.0`` if all zero)."""
    if all(is_zero(part) for part in t):
        return 0.0
    return tuple(0.0 if part is None else part for part in t)


_rule = vjp_rule(
    "_ad.with_defaults",
    [with_defaults],
    ("fn",),
    {"args": "_ad.defaults_vjp(g, args)"},
    [],
    linear=True,
    varargs=True,
)
set_jvps(_rule, args="_ad.defaults_jvp(t, args)")


def explicit_defaults(
    func: Any, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[
    tuple[Any, ...], dict[str, Any], Callable[[tuple[Any, ...]], tuple[Any, ...]], list[int]
]:
    """A call of ``func`` with its defaults passed as keywords, differentiated in place of
    the label :data:`DEFAULTS`.

    Returns:
        The labels (``DEFAULTS`` replaced by the names of the defaults the call does not
        give), the keywords with those defaults, and a function that turns the
        derivatives for those labels into the derivatives for ``labels`` (a tuple over
        every default, ``0.0`` for those the call gives), and the positions among the
        defaults of the names added to the labels.
    """
    if not isinstance(func, types.FunctionType) or not func.__defaults__:
        raise _refusal(
            f"call of {_describe(func)}, a value computed from differentiated values (only "
            "a function whose defaults hold them, lambda z, s=s: ..., is differentiated)",
            "pass the differentiated values as arguments",
        )
    code = func.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = func.__defaults__
    first = len(names) - len(defaults)
    slots: list[str | None] = []
    extra = dict(kwargs)
    for i, value in enumerate(defaults):
        name = names[first + i]
        if first + i < len(args) or name in kwargs:
            slots.append(None)  # given by the call: the default is not used
        else:
            extra[name] = value
            slots.append(name)
    given = tuple(label for label in labels if label != DEFAULTS)
    flat = given + tuple(name for name in slots if name is not None)

    def regroup(parts: tuple[Any, ...]) -> tuple[Any, ...]:
        by_label = dict(zip(flat, parts))
        out = []
        for label in labels:
            if label == DEFAULTS:
                out.append(tuple(0.0 if n is None else by_label[n] for n in slots))
            else:
                out.append(by_label[label])
        return tuple(out)

    return flat, extra, regroup, [i for i, name in enumerate(slots) if name is not None]


def spread_tangent(
    func: Any, labels: tuple[Any, ...], tangents: tuple[Any, ...], args: Any, kwargs: Any
) -> tuple[tuple[Any, ...], tuple[Any, ...], dict[str, Any]]:
    """:func:`explicit_defaults` for forward mode: the labels, their tangents (the
    defaults' tangent spread over the names of the defaults) and the keywords."""
    flat, extra, _, picks = explicit_defaults(func, labels, args, kwargs)
    by_label = dict(zip(labels, tangents))
    dt = by_label.pop(DEFAULTS)
    spread = [0.0 if is_zero(dt) else dt[i] for i in picks]
    return flat, tuple(by_label[label] for label in flat[: len(by_label)]) + tuple(spread), extra


def _describe(func: Any) -> str:
    if isinstance(func, types.FunctionType):
        return f"the function {func.__qualname__}"
    return f"a {type(func).__name__} object"


def _refusal(construct: str, hint: str) -> TransformError:
    """A ``TransformError`` at the user's line of the nearest generated code calling."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<s2s_ad:"):
            path, line = user_origin(filename, 0).rsplit(":", 1)
            where = user_lines(filename).get(frame.f_lineno)
            if where is None:  # code under no line comment: the function's own line
                return TransformError(construct, path, int(line), hint=hint)
            return TransformError(construct, path, where[0], hint=hint, line_text=where[1])
        frame = frame.f_back
    return TransformError(construct, hint=hint)
