"""Find the generated function a ``s2s_ad.grad`` wrapper actually calls (diagnosis only).

s2s_ad generates variants of the gradient specialized on which arguments are scalars and
picks one per call; ``grad_fn.__wrapped__`` (and ``s2s_ad.source``) is the general one.
This looks into s2s_ad internals, best effort, and falls back to ``__wrapped__``.
"""

from __future__ import annotations

from typing import Any


def _find_variants(fn: Any, depth: int = 0) -> Any:
    """The object holding s2s_ad's per-argument-type variants, found in ``fn``'s closures.

    Best effort: this looks into s2s_ad internals (an object with ``by_mask`` and ``get``)
    and returns ``None`` when they change.
    """
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if hasattr(value, "by_mask") and callable(getattr(value, "get", None)):
            return value
        if depth < 3 and callable(value) and getattr(value, "__closure__", None):
            found = _find_variants(value, depth + 1)
            if found is not None:
                return found
    return None


def code_run_by(df: Any, args: tuple[Any, ...]) -> Any:
    """The generated function ``df(*args)`` calls: its type-specialized variant if one can
    be found, else ``df.__wrapped__`` (the general code ``s2s_ad.source`` shows)."""
    try:
        variants = getattr(df, "_s2s_variants", None) or _find_variants(df)
        if variants is not None:
            fn = variants.get(list(args))
            if callable(fn):
                return fn
    except Exception:  # noqa: BLE001  (internals changed: fall back)
        pass
    return getattr(df, "__wrapped__", None)
