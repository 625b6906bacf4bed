"""``[x] * n`` and ``n * [x]``: a list (or tuple) literal repeated.

The result holds ``n`` references to each entry (``_ad.list_repeat``, whose adjoint sums the
adjoints of the copies). An entry updated in place (``acc = [np.zeros(3)] * 2;
acc[0] += v``) changes every copy in Python: with a repetition anywhere in the function,
each ``a[k] op= v`` checks when it runs that no other entry holds the same array, and is
refused if one does.
"""

from __future__ import annotations

import functools

import libcst as cst

from .cstwalk import walk
from .norm_base import NormalizerBase


class ListRepetition(NormalizerBase):
    """Facts about list repetition in the function (a mixin of ``Normalizer``)."""

    @functools.cached_property
    def has_repetition(self) -> bool:
        """Whether the function repeats a list or tuple literal anywhere."""
        scan = _Repetitions()
        walk(self.p.node, scan)
        return scan.found


class _Repetitions(cst.CSTVisitor):
    """Finds a list repetition."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if list_repetition(node) is not None:
            self.found = True


def list_repetition(
    node: cst.BinaryOperation,
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``[x] * n`` or ``n * [x]`` (a list or tuple literal repeated): the literal and the
    count (``None``: not a ``*`` with exactly one side a literal list or tuple)."""
    if type(node.operator) is not cst.Multiply:  # node classes: ``is`` (no subclasses)
        return None
    left = type(node.left) in _SEQUENCES
    right = type(node.right) in _SEQUENCES
    if left and not right:
        return node.left, node.right
    if right and not left:
        return node.right, node.left
    return None


_SEQUENCES = frozenset({cst.List, cst.Tuple})
