"""Arguments that reach ``*args``/``**kwargs``: labels of star-calls and packed parameters.

Generated code names the differentiated arguments of a call it dispatches at run time by
labels: a position, a keyword, or for a star-call ``("*", n)`` (every positional argument
from position ``n`` on, the entries of ``*parts``) and ``("**", given)`` (every keyword
not among the ``given`` ones, the entries of ``**opts``). The dispatcher works on plain
positions and keywords; this module expands the packed labels before and regroups the
gradients after. It also binds arguments to a callee's parameters when some of them land
in its ``*args`` tuple or ``**kwargs`` dict: the callee is differentiated with respect to
the whole tuple or dict and each argument takes its entry.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import TransformError
from .runtime import is_zero, zeros_like

Packed = tuple[str, Any]


Regroup = Callable[[tuple[Any, ...]], tuple[Any, ...]]


def expand(
    labels: tuple[Any, ...], nargs: int, keys: tuple[str, ...]
) -> tuple[tuple[Any, ...], Regroup, Regroup]:
    """Plain labels for ``labels`` and functions regrouping their gradients and back.

    Args:
        labels: Positions, keywords and packed labels (``("*", n)``, ``("**", given)``).
        nargs: How many positional arguments the call had.
        keys: The call's keywords.

    Returns:
        The plain labels, ``regroup(grads)`` giving one gradient per label of ``labels``
        (a tuple for ``("*", n)``, a dict for ``("**", given)``), and ``ungroup``, its
        inverse (a symbolic zero for a packed label: zeros for its entries).
    """
    flat: list[Any] = []
    spans: list[tuple[str, int, Any]] = []
    for label in labels:
        if isinstance(label, tuple) and label[0] == "*":
            spans.append(("*", len(flat), nargs - label[1]))
            flat.extend(range(label[1], nargs))
        elif isinstance(label, tuple) and label[0] == "**":
            rest = tuple(k for k in keys if k not in label[1])
            spans.append(("**", len(flat), rest))
            flat.extend(rest)
        else:
            spans.append(("", len(flat), 1))
            flat.append(label)

    def regroup(grads: tuple[Any, ...]) -> tuple[Any, ...]:
        out: list[Any] = []
        for kind, start, size in spans:
            if kind == "*":
                out.append(tuple(grads[start : start + size]))
            elif kind == "**":
                out.append(dict(zip(size, grads[start : start + len(size)])))
            else:
                out.append(grads[start])
        return tuple(out)

    def ungroup(grouped: tuple[Any, ...]) -> tuple[Any, ...]:

        out: list[Any] = []
        for (kind, _, size), value in zip(spans, grouped):
            if kind == "*":
                out.extend([0.0] * size if is_zero(value) else list(value))
            elif kind == "**":
                out.extend(0.0 if is_zero(value) else value.get(k, 0.0) for k in size)
            else:
                out.append(value)
        return tuple(out)

    return tuple(flat), regroup, ungroup


def expand_tangents(
    labels: tuple[Any, ...], tangents: tuple[Any, ...], nargs: int, keys: tuple[str, ...]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Plain labels and tangents for packed ones: a ``*`` tangent holds one tangent per
    entry, a ``**`` tangent one per key (a symbolic zero: no tangent at all)."""

    flat, dots = [], []
    for label, tangent in zip(labels, tangents):
        if isinstance(label, tuple) and label[0] in ("*", "**"):
            if is_zero(tangent):
                continue
            if label[0] == "*":
                entries = list(zip(range(label[1], nargs), tangent))
            else:
                entries = [(k, tangent.get(k, 0.0)) for k in keys if k not in label[1]]
            for sub, t in entries:
                if t is not None and not is_zero(t):
                    flat.append(sub)
                    dots.append(t)
        else:
            flat.append(label)
            dots.append(tangent)
    return tuple(flat), tuple(dots)


def bind(
    target: Any, sig: inspect.Signature, full: list[Any], kmarks: dict[str, Any]
) -> dict[int, Packed]:
    """Where each argument mark lands: ``id(mark) -> (parameter, entry)``, the entry
    being ``None`` for a plain parameter, an index into ``*args`` or a key of ``**kwargs``."""
    try:
        bound = sig.bind(*full, **kmarks)
    except TypeError as exc:
        raise TransformError(f"call to {target.__qualname__} ({exc})") from None
    where: dict[int, Packed] = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            where.update({id(m): (name, i) for i, m in enumerate(value)})
        elif kind is inspect.Parameter.VAR_KEYWORD:
            where.update({id(m): (name, k) for k, m in value.items()})
        else:
            where[id(value)] = (name, None)
    return where


def entry(grad: Any, sub: Any) -> Any:
    """The gradient of one entry of a packed parameter's gradient (``sub`` ``None``: the
    parameter's own)."""

    if sub is None:
        return grad
    if is_zero(grad):
        return 0.0
    value = grad[sub] if not isinstance(grad, dict) else grad.get(sub, 0.0)
    return 0.0 if value is None else value


def packed_tangent(sig: inspect.Signature, name: str, given: dict[Any, Any], value: Any) -> Any:
    """The tangent of a packed parameter from its entries' tangents (zeros elsewhere)."""

    def zero(entry: Any) -> Any:  # dense for arrays: matrix products read the tangent
        return zeros_like(entry) if hasattr(entry, "shape") and np.ndim(entry) else 0.0

    if sig.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
        return tuple(given[i] if i in given else zero(v) for i, v in enumerate(value))
    return {k: given[k] if k in given else zero(value[k]) for k in value}
