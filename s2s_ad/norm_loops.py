"""``if``, ``for`` and ``while`` statements as the IR's ``If``, ``For`` and ``While``.

``elif`` chains nest as ``else`` blocks. A ``for`` over ``range(...)`` keeps its bounds;
any other ``for`` becomes a loop over indices: the iterable is made an indexable
sequence first (``reversed(xs)`` read backwards), ``enumerate(xs[, start])`` gives the
index, ``zip(xs, ys)`` iterates in step up to the shortest, and each element is read as
``xs[k]`` into the loop's target (:meth:`ControlFlowLowering.iteration`). A ``while``
keeps the statements computing its test as a block of their own, evaluated before each
trip. A loop's ``else:`` block is attached to the loop (it runs unless a ``break`` did;
:mod:`norm_exits` makes that explicit).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import libcst as cst

from . import ir
from .norm_base import NormalizerBase
from .runtime import sequence, sequence_now


class ControlFlowLowering(NormalizerBase):
    """Lowering of branches and loops (a mixin of ``Normalizer``)."""

    def if_statement(self, node: cst.If) -> None:
        test = self.atom(node.test)
        line, src = self.line, self.src
        body = self.sub_block(node.body.body)
        orelse: list[ir.Stmt] = []
        if isinstance(node.orelse, cst.If):
            saved, self.out = self.out, []
            self.statement(node.orelse)
            orelse, self.out = self.out, saved
        elif isinstance(node.orelse, cst.Else):
            orelse = self.sub_block(node.orelse.body.body)
        self.emit(ir.If(line, src, self.kept_test(test, body + orelse), body, orelse))

    def for_statement(self, node: cst.For) -> None:
        if node.asynchronous is not None:
            raise self.error("'async for'", node)
        line, src = self.line, self.src
        it = node.iter
        range_args = None
        if (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "range"
            and it.func.value not in self.locals
            and all(a.keyword is None and not a.star for a in it.args)
        ):
            range_args = [self.atom(a.value) for a in it.args]
        if range_args is not None:
            if isinstance(node.target, cst.Name):
                target = node.target.value
                body = self.sub_block(node.body.body)
            else:
                target = self.fresh()
                saved, self.out = self.out, []
                self.store(node.target, ir.Var(target))
                self.block(node.body.body)
                body, self.out = self.out, saved
            self.emit(ir.For(line, src, target, body, range_args))
            self._loop_else(node)
            return
        self.iteration(node, line, src)
        self._loop_else(node)

    def _loop_else(self, node: cst.For | cst.While) -> None:
        """Attach an ``else:`` block to the loop just emitted (it runs unless a break did)."""
        if node.orelse is not None:
            loop = self.out[-1]
            assert isinstance(loop, (ir.For, ir.While))
            loop.orelse = self.sub_block(node.orelse.body.body)

    def _builtin_call(self, name: str, args: list[ir.Atom]) -> ir.Atom:
        tmp = self.fresh()
        self.assign(tmp, ir.Call(ir.Callee(name, getattr(builtins, name), resolved=True), args, []))
        return ir.Var(tmp)

    def _sequence(self, node: cst.BaseExpression, now: bool = False) -> ir.Atom:
        """What a ``for`` iterates over, as an indexable sequence; ``reversed(xs)`` as the
        sequence of ``xs`` read backwards (``[::-1]``); ``now``: a copy of it as it is
        (read at each trip of a loop that writes into it)."""

        backwards = (
            self._builtin_iter(node, "reversed")
            and isinstance(node, cst.Call)
            and len(node.args) == 1
        )
        if backwards:
            assert isinstance(node, cst.Call)
            node = node.args[0].value
        seq = self.fresh("_seq")
        callee = (
            ir.Callee("_ad.sequence_now", sequence_now, resolved=True)
            if now
            else ir.Callee("_ad.sequence", sequence, resolved=True)
        )
        self.assign(seq, ir.Call(callee, [self.atom(node)], []))
        if backwards:
            back = self.fresh("_seq")
            self.assign(back, ir.Subscript(ir.Var(seq), ir.Index("::-1")))
            return ir.Var(back)
        return ir.Var(seq)

    def _builtin_iter(self, it: cst.BaseExpression, name: str) -> bool:
        return (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == name
            and self.resolve(name) is getattr(builtins, name)
            and all(a.keyword is None and not a.star for a in it.args)
        )

    def _enumerate_start(self, it: cst.BaseExpression) -> cst.BaseExpression | None | bool:
        """For ``enumerate(xs)``: ``None``; ``enumerate(xs, s)`` or ``enumerate(xs, start=s)``:
        the start ``s``; any other expression: ``False``."""
        if not (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "enumerate"
            and self.resolve("enumerate") is builtins.enumerate
            and it.func.value not in self.locals
            and 1 <= len(it.args) <= 2
            and not any(a.star for a in it.args)
            and it.args[0].keyword is None
        ):
            return False
        if len(it.args) == 1:
            return None
        second = it.args[1]
        if second.keyword is not None and second.keyword.value != "start":
            return False
        return second.value

    def _split_iteration(
        self, it: cst.BaseExpression, target: cst.BaseExpression
    ) -> tuple[
        list[cst.BaseExpression],
        cst.BaseExpression | None,
        list[cst.BaseExpression],
        cst.BaseExpression | None,
    ]:
        """Iterables read in step, the index target (``enumerate``), element targets and
        the start of the count (``enumerate(xs, start=1)``)."""
        start = self._enumerate_start(it)
        if (
            start is not False
            and isinstance(it, cst.Call)
            and isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == 2
        ):
            seqs, inner_index, parts, _ = self._split_iteration(
                it.args[0].value, target.elements[1].value
            )
            if inner_index is None:
                return seqs, target.elements[0].value, parts, start or None
        if (
            self._builtin_iter(it, "zip")
            and isinstance(it, cst.Call)
            and isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == len(it.args)
        ):
            return [a.value for a in it.args], None, [e.value for e in target.elements], None
        return [it], None, [target], None

    def iteration(self, node: cst.For, line: int, src: str) -> None:
        """``for x in xs`` (and over ``enumerate``/``zip``) as a loop over indices."""
        iterables, index_target, parts, start = self._split_iteration(node.iter, node.target)
        seqs = [self._sequence(it) for it in iterables]
        offset = None if start is None else self.atom(start)
        lengths = [self._builtin_call("len", [s]) for s in seqs]
        count = lengths[0] if len(lengths) == 1 else self._builtin_call("min", lengths)
        if isinstance(index_target, cst.Name) and offset is None:
            index = index_target.value
        else:
            index = self.fresh("_k")
        saved, self.out = self.out, []
        if offset is not None:
            assert index_target is not None
            counted = self.fresh("_n")
            self.assign(counted, ir.BinOp("+", ir.Var(index), offset))
            self.store(index_target, ir.Var(counted))
        elif index_target is not None and not isinstance(index_target, cst.Name):
            self.store(index_target, ir.Var(index))
        # an array the body writes into in place is read as it is at each trip, as
        # Python's iterator does (h[i + 1] += h[i]: a running update)
        self.memo = {}  # (not the value read before the loop)
        writes = [_writes(it, node.body.body) for it in iterables]
        if any(w.resized for w in writes):
            raise self.error(
                "a for loop over a list its body appends to or removes from (Python's "
                "iterator visits the entries added)",
                node.iter,
                "iterate over a copy (for v in list(items)), or use a while loop over an index",
            )
        if any(w.in_place and w.rebound for w in writes):
            # the iterator keeps the first array: updated in place until the name is rebound
            raise self.error(
                "a for loop over an array its body both updates in place and rebinds "
                "(for v in z: z += ...; z = ...)",
                node.iter,
                "loop over range(len(z)) and read z[k], or copy the array before the loop",
            )
        seqs = [
            self._sequence(it, now=True) if w.in_place else seq
            for it, seq, w in zip(iterables, seqs, writes)
        ]
        for seq, part in zip(seqs, parts):
            item = ir.Subscript(seq, ir.Index(index, (index,)))
            if isinstance(part, cst.Name):
                self.emit(ir.Assign(self.line, self.src, part.value, item, kind="element"))
                continue
            elt = self.fresh()
            self.emit(ir.Assign(self.line, self.src, elt, item, kind="element"))
            self.store(part, ir.Var(elt))
        self.block(node.body.body)
        body, self.out = self.out, saved
        self.emit(ir.For(line, src, index, body, [count]))

    def while_statement(self, node: cst.While) -> None:
        line, src = self.line, self.src
        saved, self.out = self.out, []
        test = self.atom(node.test)
        test_body, self.out = self.out, saved
        body = self.sub_block(node.body.body)
        self.emit(ir.While(line, src, test_body, test, body))
        self._loop_else(node)


def _root(node: cst.BaseExpression) -> str | None:
    """The name an iterable reads through: ``h`` of ``h``, ``h[:-1]``, ``reversed(h)``,
    ``h.T``; ``None`` for anything else (a call makes a new value)."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Attribute) and node.attr.value == "T":
            node = node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "reversed"
            and len(node.args) == 1
        ):
            node = node.args[0].value
        else:
            return None


def _writes(iterable: cst.BaseExpression, body: Sequence[cst.CSTNode]) -> _Writes:
    """Whether ``body`` writes into the array ``iterable`` reads through (``h[k] = ...``,
    ``h[k] += ...``, ``h += ...``), and whether it rebinds its name."""
    finder = _Writes(_root(iterable))
    if finder.name is not None:
        for stmt in body:
            stmt.visit(finder)
    return finder


_RESIZING = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})


class _Writes(cst.CSTVisitor):
    """In-place writes into a name, and rebindings of it, outside nested functions."""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.in_place = False
        self.rebound = False
        self.resized = False  # items.append(v), items.pop(), ... on the list iterated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _target(self, target: cst.BaseExpression, augmented: bool) -> None:
        if isinstance(target, cst.Name) and target.value == self.name:
            if augmented:
                self.in_place = True
            else:
                self.rebound = True
        elif isinstance(target, cst.Subscript) and _root(target) == self.name:
            self.in_place = True
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value, augmented)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target, False)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, True)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _RESIZING
            and isinstance(func.value, cst.Name)
            and func.value.value == self.name
        ):
            self.resized = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target, False)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target, False)
