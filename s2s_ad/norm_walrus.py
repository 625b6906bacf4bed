"""Assignment expressions (``:=``), lowered where Python evaluates them.

``if (n := np.linalg.norm(g)) > 1.0:`` becomes ``n = np.linalg.norm(g)`` then the test
reading ``n``; in a ``while`` test the assignment joins the statements the test runs on
every trip; in the right operand of ``and``/``or`` it runs only when that operand does (the
chain is then lowered as branches, not as one opaque test); in a comprehension it binds
the enclosing function's name, as in Python. What cannot be lowered exactly (a ``:=``
inside code kept opaque or inside an inlined lambda, or binding one name twice in one
statement) is refused with the user's line.
"""

from __future__ import annotations

import libcst as cst

from . import ir
from .norm_base import NormalizerBase


class NamedExpressions(NormalizerBase):
    """Lowering of ``name := value`` (a mixin of ``Normalizer``)."""

    def named_expression(self, node: cst.NamedExpr) -> ir.Atom:
        """Evaluate ``value`` into ``name`` here and read ``name`` as the expression's value."""
        target = node.target
        if not isinstance(target, cst.Name):  # the grammar allows only a name
            raise self.error("assignment expression (:=) to a non-name", node)
        name = target.value
        if self.env:
            raise self.error("assignment expression (:=) inside an inlined lambda", node)
        seen = self.__dict__.setdefault("_walrus_bound", set())
        key = (self.line, self.src, name)
        if key in seen:
            raise self.error(
                f"assignment expression (:=) binding {name} twice in one statement",
                node,
                "bind it once per statement",
            )
        seen.add(key)
        self.locals.add(name)
        self.lower_into(name, node.value)
        return ir.Var(name)


def walrus_in(node: cst.CSTNode) -> cst.NamedExpr | None:
    """The first assignment expression anywhere in ``node`` (``None``: there is none)."""
    found: list[cst.NamedExpr] = []

    class _V(cst.CSTVisitor):
        def visit_NamedExpr(self, n: cst.NamedExpr) -> bool:
            found.append(n)
            return False

    node.visit(_V())
    return found[0] if found else None
