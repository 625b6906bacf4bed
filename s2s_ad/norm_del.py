"""``del name`` of a local: the end of the name's life.

Deleting a name unbinds only the name (the value lives on wherever else it is held), so
the normal form keeps nothing of it: the value stays for the backward sweep, which may
need it, and the generated code releases it when nothing reads it any more. Exact as long
as the name is not read again before it is bound again (Python would raise there): a later
read is refused, also the next trip's of a loop that does not bind the name again after the
``del``. ``del d[key]`` of a dict bound in the function is the keyed write of the marker
``_ad.DELETED`` (``restore_item`` removes the key; the backward sweep puts the entry back);
``del x[i]`` of a list (its entries shift) and ``del obj.attr`` are refused.
"""

from __future__ import annotations

import libcst as cst

from . import ir
from .norm_base import NormalizerBase
from .norm_queries import all_params
from .norm_scan import binding_count
from .source import ParsedFunction


class Deletions(NormalizerBase):
    """Lowering of ``del`` statements (a mixin of ``Normalizer``)."""

    def delete(self, node: cst.Del) -> None:
        """``del a`` / ``del a, b``: check each name is local and not read before it is
        bound again; nothing is emitted."""
        targets = node.target.elements if isinstance(node.target, cst.Tuple) else None
        names = [el.value for el in targets] if targets is not None else [node.target]
        for name in names:
            if (
                isinstance(name, cst.Subscript)
                and isinstance(name.value, cst.Name)
                and not self.inlining
                and _local_dict(self.p.node, name.value.value)
                and not any(isinstance(e.slice, cst.Slice) for e in name.slice)
            ):
                # ``del d[key]`` of a local dict: the keyed write of the marker that
                # removes the entry (undone like the write of a new key)
                obj = name.value.value
                index = self.index(name)
                self.alias_check(obj, element=True, node=name.value)
                value = ir.Const("_ad.DELETED")
                self.emit(ir.SetItem(self.line, self.src, obj, index, value, restore=True))
                continue
            if not isinstance(name, cst.Name):
                raise self.error(
                    "'del' of a subscript or attribute (a container or object changed)",
                    node,
                    "build the container again without the entry (del d[key] of a dict "
                    "bound in the function is supported)",
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
    """Whether ``name`` may be used after ``node`` before it is bound again: the first use
    after ``node`` in the source is not a plain binding (``name = ...``, a ``for`` target),
    or, in a loop whose trip does not bind it again after ``node``, the first use from
    the top of the loop's body is not one (the next trip reads it, as Python raises)."""
    here = _at(parsed.position(node))
    own = {id(n) for n in _names(node)}
    stores: set[tuple[int, int]] = set()
    uses: list[tuple[int, int]] = []
    loops: list[tuple[tuple[int, int], tuple[int, int]]] = []

    class _Uses(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            if isinstance(target.target, cst.Name) and target.target.value == name:
                stores.add(_at(parsed.position(target.target)))

        def visit_For(self, loop: cst.For) -> None:
            if isinstance(loop.target, cst.Name) and loop.target.value == name:
                stores.add(_at(parsed.position(loop.target)))
            self._loop(loop)

        def visit_While(self, loop: cst.While) -> None:
            self._loop(loop)

        def _loop(self, loop: cst.For | cst.While) -> None:
            rng = parsed.positions.get(loop)
            if rng is None:
                return
            start = _at(parsed.position(loop))
            shift = start[0] - rng.start.line
            end = (rng.end.line + shift, 1 << 30)  # (its last line, to its end)
            if start < here < end:
                loops.append((start, end))

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name and id(n) not in own:
                uses.append(_at(parsed.position(n)))

    parsed.node.visit(_Uses())
    uses.sort()
    after = [u for u in uses if u > here]
    if after and after[0] not in stores:
        return True
    for start, end in sorted(loops, reverse=True):  # the innermost loop first
        if any(here < u < end for u in uses):
            return False  # bound again later in the same trip (checked above)
        again = [u for u in uses if start <= u < here]
        if again and again[0] not in stores:
            return True
    return False


def _local_dict(fdef: cst.CSTNode, name: str) -> bool:
    """Whether every binding of ``name`` in ``fdef`` is ``name = {...}``, a dict
    comprehension or ``dict(...)`` (a dict wherever it is read; never a parameter)."""
    params = getattr(fdef, "params", None)
    if params is None or name in {p.name.value for p in all_params(params)}:
        return False
    values: list[cst.BaseExpression] = []

    class _Binds(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                if isinstance(t.target, cst.Name) and t.target.value == name:
                    values.append(node.value)

    fdef.visit(_Binds())
    if not values or binding_count(fdef).count[name] != len(values):
        return False
    return all(
        isinstance(v, (cst.Dict, cst.DictComp))
        or (isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value == "dict")
        for v in values
    )


def _at(position: tuple[int, int | None]) -> tuple[int, int]:
    return position[0], position[1] or 0


def _names(node: cst.CSTNode) -> list[cst.Name]:
    """The name nodes inside ``node``."""
    found: list[cst.Name] = []

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(_V())
    return found
