"""``del name`` of a local: the end of the name's life.

Deleting a name unbinds only the name (the value lives on wherever else it is held), so
the normal form keeps nothing of it: the value stays for the backward sweep, which may
need it, and the generated code releases it when nothing reads it any more. Exact as long
as the name is not read again before it is bound again (Python would raise there): a later
read is refused, as are ``del x[i]`` and ``del obj.attr`` (a container or object changed).
"""

from __future__ import annotations

import libcst as cst

from .norm_base import NormalizerBase
from .source import ParsedFunction


class Deletions(NormalizerBase):
    """Lowering of ``del`` statements (a mixin of ``Normalizer``)."""

    def delete(self, node: cst.Del) -> None:
        """``del a`` / ``del a, b``: check each name is local and not read before it is
        bound again; nothing is emitted."""
        targets = node.target.elements if isinstance(node.target, cst.Tuple) else None
        names = [el.value for el in targets] if targets is not None else [node.target]
        for name in names:
            if not isinstance(name, cst.Name):
                raise self.error(
                    "'del' of a subscript or attribute (a container or object changed)",
                    node,
                    "build the container again without the entry",
                )
            if self.inlining or name.value not in self.locals | set(self.params):
                raise self.error(f"'del {name.value}' of a name not local to the function", node)
            if _read_after(self.p, node, name.value):
                raise self.error(
                    f"'del {name.value}' with {name.value} read after it",
                    node,
                    "bind it again before reading it, or drop the 'del'",
                )


def _read_after(parsed: ParsedFunction, node: cst.Del, name: str) -> bool:
    """Whether the first use of ``name`` after ``node`` in the source is not a plain
    assignment ``name = ...`` (a read, an augmented assignment or another ``del``)."""
    line, col = parsed.position(node)
    own = {id(n) for n in _names(node)}
    stores: set[tuple[int, int]] = set()
    uses: list[tuple[int, int]] = []

    class _Uses(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            if isinstance(target.target, cst.Name) and target.target.value == name:
                pos = parsed.position(target.target)
                stores.add((pos[0], pos[1] or 0))

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name and id(n) not in own:
                pos = parsed.position(n)
                uses.append((pos[0], pos[1] or 0))

    parsed.node.visit(_Uses())
    after = sorted(u for u in uses if u > (line, col or 0))
    return bool(after) and after[0] not in stores


def _names(node: cst.CSTNode) -> list[cst.Name]:
    """The name nodes inside ``node``."""
    found: list[cst.Name] = []

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(_V())
    return found
