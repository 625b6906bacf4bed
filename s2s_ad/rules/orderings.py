"""``sorted(xs, key=..., reverse=...)`` and ``min``/``max(xs, key=...)`` as an order of
positions and a pick (see :mod:`s2s_ad.ordering`, which lowers the calls).

Which positions come first is piecewise constant in the values (a key only compares), so
it carries no gradient; what the result holds are entries of ``xs``, so the gradient of
``xs`` is the result's gradient put back at the positions they came from. The helpers
are reached from generated code as ``_ad.<name>``; the rules of ``pick`` and ``pick_t``
are in :mod:`.generated_rules` (their templates call each other).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import add, is_zero, zeros_like
from .registry import nondiff


def sort_order(xs: Any, key: Callable[[Any], Any] | None, reverse: bool) -> list[int]:
    """The positions of ``xs`` in the order ``sorted(xs, key=key, reverse=reverse)`` lists
    its entries (stable, as ``sorted`` is; ``key`` called once per entry)."""
    keyed = list(xs) if key is None else [key(x) for x in xs]
    return sorted(range(len(keyed)), key=keyed.__getitem__, reverse=bool(reverse))


def extreme_index(xs: Any, key: Callable[[Any], Any] | None, largest: bool) -> int:
    """The position of the entry ``max(xs, key=key)`` (``largest``) or ``min(xs, key=key)``
    returns: the first of the extreme ones, as Python picks it."""
    best, best_key = -1, None
    for i, x in enumerate(xs):
        k = x if key is None else key(x)
        if best < 0 or (k > best_key if largest else k < best_key):
            best, best_key = i, k
    if best < 0:
        raise ValueError(f"{'max' if largest else 'min'}() arg is an empty sequence")
    return best


def pick(xs: Any, order: Any) -> Any:
    """``[xs[i] for i in order]`` (``0.0`` for a symbolic zero ``xs``)."""
    if is_zero(xs):
        return 0.0
    if isinstance(xs, (dict, set, frozenset)):
        xs = list(xs)  # ``sorted(d)``: the keys, in iteration order
    return [xs[i] for i in order]


def pick_t(g: Any, xs: Any, order: Any) -> Any:
    """Adjoint of ``xs`` from the adjoint ``g`` of ``pick(xs, order)``: each entry of ``g``
    added at the position it was picked from, in the structure of ``xs`` (``0.0`` for a
    symbolic zero ``g``; a dict's or a set's keys carry none)."""
    if is_zero(g) or isinstance(xs, (dict, set, frozenset)):
        return 0.0
    if isinstance(xs, np.ndarray):
        out = np.zeros(xs.shape, dtype=xs.dtype if xs.dtype.kind in "fc" else np.float64)
        for pos, i in enumerate(order):
            if not is_zero(g[pos]):
                out[i] += g[pos]
        return out
    entries = list(zeros_like(xs))
    for pos, i in enumerate(order):
        part = g[pos]
        if not is_zero(part):
            entries[i] = add(entries[i], part)
    return tuple(entries) if isinstance(xs, tuple) else entries


nondiff("order of sorted", [sort_order])
nondiff("position of min/max", [extreme_index])
