"""Lazy values kept in a name: a generator expression or a ``map``/``filter`` object.

The normal form evaluates ``gen = (x[i] * c for i in range(n))`` where it is written (as a
list comprehension), whereas Python runs the generator where it is consumed: the names it
reads are looked up then. The two agree unless one of those names is bound again, or its
value written into, between the two places (``c = 3.0`` before ``sum(gen)``), and
:func:`changed_before_use` finds that case, which the normalizer refuses. The first
iterable of a generator expression, and the iterables of ``map``/``filter``, are
evaluated at once in Python too.
"""

from __future__ import annotations

import libcst as cst

from .norm_scan import names_read


class _Places(cst.CSTVisitor):
    """Every node's place in the text of a function, the names bound at each place (an
    assignment, an augmented assignment, a write into an element or attribute, a loop
    variable) and the places each name appears."""

    def __init__(self) -> None:
        self.place: dict[int, int] = {}
        self.binds: list[tuple[int, str]] = []
        self.seen: dict[str, list[int]] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.place[id(node)] = len(self.place)
        if isinstance(node, cst.Name):
            self.seen.setdefault(node.value, []).append(self.place[id(node)])
        elif isinstance(node, cst.AssignTarget):
            self._bind(node.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            self._bind(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._bind(node.target)
        return True

    def _bind(self, target: cst.BaseExpression) -> None:
        here = len(self.place)
        if isinstance(target, cst.Name):
            self.binds.append((here, target.value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            base: cst.BaseExpression = target
            while isinstance(base, (cst.Subscript, cst.Attribute)):
                base = base.value
            if isinstance(base, cst.Name):
                self.binds.append((here, base.value))


def _late_names(value: cst.BaseExpression) -> set[str] | None:
    """The names a lazy value looks up when it runs (``None``: not a lazy value)."""
    if isinstance(value, cst.GeneratorExp):
        own: set[str] = set()
        late: list[str] = [*names_read(value.elt)]
        clause: cst.CompFor | None = value.for_in
        first = True
        while clause is not None:
            own |= set(names_read(clause.target))
            if not first:
                late += names_read(clause.iter)
            late += [n for cond in clause.ifs for n in names_read(cond.test)]
            first, clause = False, clause.inner_for_in
        return set(late) - own
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ("map", "filter")
        and value.args
    ):
        func = value.args[0].value
        if isinstance(func, cst.Lambda):
            params = {p.name.value for p in func.params.params}
            return set(names_read(func.body)) - params
        return set(names_read(func))
    return None


def changed_before_use(
    fdef: cst.CSTNode, statement: cst.Assign, name: str
) -> tuple[str, str] | None:
    """For ``name = <lazy value>`` (``statement``, a node of ``fdef``): the kind of lazy
    value and a name it looks up that is bound or written again before ``name``'s last
    appearance; ``None`` when there is none, or ``statement`` is not in ``fdef``'s text."""
    late = _late_names(statement.value)
    if not late:
        return None
    places = _Places()
    fdef.visit(places)
    start = places.place.get(id(statement))
    if start is None:
        return None
    end = max((p for p in places.seen.get(name, []) if p > start), default=start)
    for at, bound in places.binds:
        if start < at <= end and bound in late and bound != name:
            kind = (
                "generator expression"
                if isinstance(statement.value, cst.GeneratorExp)
                else (
                    f"{statement.value.func.value} object"  # type: ignore[attr-defined]
                )
            )
            return kind, bound
    return None
