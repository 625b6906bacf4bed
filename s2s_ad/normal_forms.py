"""Normal forms made once per function: parsed, normalized and cached by code and globals.

Every transform of a function (each variant, each ``wrt``) starts from the same normal
form; it is made again only when a name it resolved (a callee, a recognised builtin) is
rebound in the function's scope. The transformer (and libcst with it) is imported by the
first transform, not by ``import s2s_ad``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from typing import Any

from .errors import TransformError
from .source import parse_function
from .targets import TRANSFORM_HINT, is_transform, primal

#: How many functions were parsed and normalized (a cache miss each).
STATS = {"transforms": 0}
NORMALIZED: dict[Any, tuple[Any, Any, dict[tuple[str, ...], Any]]] = {}


class _Same:
    """A dictionary key equal only to a key holding the very same object.

    Code objects compare by value: two modules defining the same text at the same line
    have equal code objects, but their globals (the callees the text names) differ.
    """

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


def code_key(func: Any) -> tuple[_Same, _Same]:
    """Cache key of a function's transforms: its code object and its globals, both by
    identity (the transform resolves the names the code reads in those globals)."""
    return _Same(func.__code__), _Same(func.__globals__)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while a transform builds its trees (its
    full collections over those many short-lived nodes cost more than the transform's
    own work); resumed after, unless it was already off."""
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def normalized_for(func: Any, wrt: Sequence[str]) -> tuple[Any, Any]:
    """:func:`_normalized` for a transform with respect to ``wrt``: every name in it
    must be one of ``func``'s parameters (else ``ValueError``)."""
    parsed, fn = normalized_parts(func)
    unknown = [w for w in wrt if w not in fn.params]
    if unknown:
        raise ValueError(f"{fn.name} has no parameter {unknown[0]!r}")
    return parsed, fn


def normalized_parts(func: Any) -> tuple[Any, Any]:
    """Parse and normalize once per code object and globals: every variant and ``wrt``
    starts from the same tree, while the names it resolved (callees, recognised builtins)
    still name the same objects in ``func``'s scope."""
    func = primal(func)
    if is_transform(func):
        raise TransformError(
            f"s2s_ad.{func.__name__} called inside a function being differentiated",
            hint=TRANSFORM_HINT,
        )
    key = code_key(func)
    hit = NORMALIZED.get(key)
    if hit is not None and not _still_resolves(hit[2], func):
        hit = None  # a callee (or a builtin it recognised) was rebound: lowered again
    if hit is None:
        from .normalize import normalize_resolving  # libcst: by the first transform

        STATS["transforms"] += 1
        try:
            with paused_gc():
                parsed = parse_function(func)
                hit = NORMALIZED[key] = (parsed, *normalize_resolving(parsed))
        except TransformError as exc:
            wrapped = getattr(func, "__wrapped__", None)
            if wrapped is None or exc.hint:
                raise
            raise TransformError(
                exc.construct,
                exc.filename,
                exc.lineno,
                exc.col,
                f"{func.__code__.co_name}() is the wrapper a decorator put around "
                f"{getattr(wrapped, '__qualname__', wrapped)}: the wrapper is what runs, so it "
                "is what is differentiated (give it named parameters: def wrapper(x): ...)",
                exc.line_text,
            ) from None
    return hit[0], hit[1]


def normalized(func: Any) -> Any:
    """The normal form (:class:`s2s_ad.ir.Function`) of ``func``, made once per code object.

    Raises:
        TransformError: When ``func`` is refused.
    """
    return normalized_parts(func)[1]


def _still_resolves(resolved: dict[tuple[str, ...], Any], func: Any) -> bool:
    from .normalize import still_resolves  # libcst: imported by the first transform

    return still_resolves(resolved, func)
