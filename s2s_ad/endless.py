"""Endless iterators that a ``for`` loop may iterate (``zip(itertools.count(), xs)``).

Generated code iterates over indexable sequences (``for _k in range(len(seq))``), so an
iterator is first turned into a list; an endless one never ends that way. A count is
an arithmetic progression, so it becomes :class:`Counting`, an indexable sequence whose
length is the largest a Python sequence may have: ``zip`` stops at its shorter partner
and a lone ``for i in itertools.count()`` at its ``break``. The other endless iterators
(``cycle``, ``repeat`` without a count) are refused rather than run forever.
"""

from __future__ import annotations

import ast
import itertools
import operator
import sys
from typing import Any

from .errors import TransformError


class Counting:
    """``itertools.count(start, step)`` as an indexable sequence of endless length."""

    __slots__ = ("start", "step")

    def __init__(self, start: Any, step: Any) -> None:
        self.start = start
        self.step = step

    def __len__(self) -> int:
        return sys.maxsize

    def __getitem__(self, k: int) -> Any:
        if isinstance(k, slice):
            raise TransformError("a slice of itertools.count() (an endless iterator)")
        return self.start + k * self.step

    def __repr__(self) -> str:
        return f"Counting({self.start!r}, {self.step!r})"


def endless(xs: Any) -> Counting | None:
    """The sequence ``xs`` iterates when it is an endless iterator, ``None`` otherwise.

    Raises:
        TransformError: For an endless iterator other than a count of numbers.
    """
    if isinstance(xs, itertools.count):
        # its state shows only in its repr: count(5) or count(0.5, 2)
        try:
            args = ast.literal_eval(repr(xs)[len("count") :].rstrip(")") + ",)")
        except (ValueError, SyntaxError):
            args = None
        if isinstance(args, tuple) and all(isinstance(a, (int, float)) for a in args):
            return Counting(args[0], args[1] if len(args) > 1 else 1)
        raise TransformError(
            f"iteration over {xs!r} (a count of other than int or float numbers)",
            hint="zip with range(len(xs)) instead",
        )
    if isinstance(xs, itertools.cycle) or (
        isinstance(xs, itertools.repeat) and operator.length_hint(xs, -1) < 0
    ):
        raise TransformError(
            f"iteration over {type(xs).__name__}() (an endless iterator)",
            hint="iterate over a list of the values instead",
        )
    return None
