"""``try``/``except``/``else``/``finally`` lowered to a recorded branch.

The sweeps replay straight-line code and recorded branches; an exception that cuts a
block short has no such replay. The common uses of ``try`` in a loss do not need one:
the body either runs to its end or raises at once, and a handler computes a fallback
(``np.linalg.solve`` falling back to ``lstsq``). So a ``try`` statement becomes

* a probe: the body, compiled as a plain function of the locals it reads, run on the
  primal values by :func:`s2s_ad.runtime.try_path`, which answers which path runs
  (``0`` when the body raises nothing, ``k`` when the ``k``-th handler catches what it
  raised; an exception no handler catches propagates, as in Python);
* an ``if``/``elif`` chain on that answer: the body followed by the ``else:`` block, or
  the handler that caught; its branch is recorded like any ``if``;
* the ``finally:`` block after the chain.

The body so runs twice on the path without exception (once in the probe, once
differentiated). What would make the two runs differ is refused with the user's line:
stores into subscripts or attributes, mutating methods (``append``, ``update``, ...),
random draws, ``del``/``global``/``nonlocal``, local functions the normalizer inlines,
``break``/``continue`` leaving the body, ``yield``, ``return`` together with
``finally``, and the exception bound by ``except E as e`` read in the handler.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from . import ir
from .cstwalk import walk
from .norm_base import NormalizerBase
from .norm_scan import names_read
from .runtime import register_try_probe, try_path

#: methods that change their receiver in place: run twice, they would do it twice
_MUTATING = frozenset(
    "append extend insert pop remove clear update setdefault popitem sort reverse fill "
    "resize put itemset add discard sort_values".split()
)


class _Unmodelled(cst.CSTVisitor):
    """Finds the first construct of a ``try`` body that running it twice would change."""

    def __init__(self) -> None:
        self.found: tuple[str, cst.CSTNode] | None = None
        self._loops = 0

    def _hit(self, what: str, node: cst.CSTNode) -> None:
        if self.found is None:
            self.found = (what, node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._hit("a function defined inside a 'try' body", node)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._hit("a class defined inside a 'try' body", node)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_For(self, node: cst.For) -> None:
        self._loops += 1

    def leave_For(self, original_node: cst.For) -> None:
        self._loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self._loops += 1

    def leave_While(self, original_node: cst.While) -> None:
        self._loops -= 1

    def visit_Break(self, node: cst.Break) -> None:
        if not self._loops:
            self._hit("'break' out of a 'try' body", node)

    def visit_Continue(self, node: cst.Continue) -> None:
        if not self._loops:
            self._hit("'continue' out of a 'try' body", node)

    def visit_Yield(self, node: cst.Yield) -> None:
        self._hit("'yield' inside a 'try' body", node)

    def visit_Del(self, node: cst.Del) -> None:
        self._hit("'del' inside a 'try' body", node)

    def visit_Global(self, node: cst.Global) -> None:
        self._hit("'global' inside a 'try' body", node)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._hit("'nonlocal' inside a 'try' body", node)

    def _target(self, target: cst.BaseExpression, node: cst.CSTNode) -> None:
        if isinstance(target, (cst.Subscript, cst.Attribute)):
            self._hit("a store into a subscript or attribute inside a 'try' body", node)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._target(el.value, node)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._target(t.target, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MUTATING:
            self._hit(f"the in-place method .{func.attr.value}() inside a 'try' body", node)
        code = cst.Module([]).code_for_node(func)
        if "random" in code.split("."):
            self._hit("a random draw inside a 'try' body", node)


class _InPlaceAsPlain(cst.CSTTransformer):
    """``x += v`` as ``x = x + v`` in the probe: the probe must not update the caller's
    arrays in place (it only tells whether the body raises)."""

    def leave_AugAssign(
        self, original_node: cst.AugAssign, updated_node: cst.AugAssign
    ) -> cst.BaseSmallStatement:
        op = type(updated_node.operator).__name__.removesuffix("Assign")
        binop = getattr(cst, op)()
        value = cst.BinaryOperation(updated_node.target, binop, updated_node.value)
        return cst.Assign([cst.AssignTarget(updated_node.target)], value)


class TryLowering(NormalizerBase):
    """Lowering of ``try`` statements (a mixin of ``Normalizer``)."""

    def try_statement(self, node: cst.CSTNode) -> None:
        """Lower ``try`` as a probe of its body and a recorded branch (module docstring)."""
        if not isinstance(node, cst.Try):
            raise self.error("'try' statement with 'except*'", node)
        self._refuse_unmodelled(node)
        line = self.line
        src = self.src = "try:"
        reads = [n for n in _read_first(node.body) if n in self.locals or n in self.p.closure]
        for name in reads:
            if name in self.nested or name in self.lambdas or name in self.partials:
                raise self.error(
                    f"local function {name!r} called inside a 'try' body",
                    node,
                    "define the function at module level, or move the call out of the try",
                )
        key = register_try_probe(self._probe_source(node, reads), self.p.globals)
        kinds: list[ir.Atom] = []
        for handler in node.handlers:
            kind = handler.type if handler.type is not None else cst.Name("BaseException")
            kinds.append(self.atom(kind))
        self.line, self.src = line, src
        kinds_var = self.fresh("_caught")
        self.assign(kinds_var, ir.Build("tuple", kinds))
        args = [ir.Const(str(key)), ir.Var(kinds_var)]
        args += [self.atom(cst.Name(n)) for n in reads]
        path = self.fresh("_path")
        callee = ir.Callee("_ad.try_path", try_path, resolved=True)
        self.assign(path, ir.Call(callee, args, []))
        blocks = [list(node.body.body) + (list(node.orelse.body.body) if node.orelse else [])]
        blocks += [list(h.body.body) for h in node.handlers]
        chain = self._chain(path, blocks, line, src)
        self.out.extend(chain)
        if node.finalbody is not None:
            self.block(node.finalbody.body.body)

    def _chain(
        self, path: str, blocks: list[list[cst.CSTNode]], line: int, src: str
    ) -> list[ir.Stmt]:
        """``if path == 0: blocks[0] elif path == 1: blocks[1] ...`` (the last one as
        ``else``)."""
        if len(blocks) == 1:
            return self.sub_block(blocks[0])
        k = len(blocks) - 1
        orelse = self.sub_block(blocks[k])
        for k in range(len(blocks) - 2, -1, -1):
            test = self.fresh()
            saved, self.out = self.out, []
            self.line, self.src = line, src
            self.assign(test, ir.Compare(ir.Var(path), ["=="], [ir.Const(str(k))]))
            body = self.sub_block(blocks[k])
            self.emit(ir.If(line, src, ir.Var(test), body, orelse))
            orelse, self.out = self.out, saved
        return orelse

    def _refuse_unmodelled(self, node: cst.Try) -> None:
        """Refuse what the probe and the branch would not run as Python does."""
        finder = _Unmodelled()
        walk(node.body, finder)
        if finder.found is not None:
            what, where = finder.found
            raise self.error(
                what,
                where,
                "the body of a try runs twice (once to find whether it raises): keep it "
                "to assignments of local names, or move the rest out of the try",
            )
        exits = _Exits()
        for part in [node.body, node.orelse, *node.handlers]:
            if part is not None:
                walk(part, exits)
        if node.finalbody is not None and exits.found is not None:
            raise self.error(
                "'return' inside a 'try' with a 'finally' block",
                exits.found,
                "assign the result and return after the try statement",
            )
        for handler in node.handlers:
            if handler.name is None:
                continue
            bound = handler.name.name
            if isinstance(bound, cst.Name) and bound.value in names_read(handler.body):
                raise self.error(
                    f"the exception {bound.value!r} read in its handler",
                    handler,
                    "the handler may run a fallback, but not read the exception object",
                )

    def _probe_source(self, node: cst.Try, reads: list[str]) -> str:
        """The body as the source of a function of the locals it reads."""
        body = node.body.visit(_InPlaceAsPlain())
        assert isinstance(body, cst.IndentedBlock)
        text = cst.Module(body=list(body.body)).code
        params = ", ".join(reads)
        return f"def _try_body({params}):\n" + textwrap.indent(text, "    ")


def _read_first(body: cst.BaseSuite) -> list[str]:
    """The names the statements of ``body`` read before one of them binds them (what the
    probe takes as arguments: a name the body binds first may be unbound before it)."""
    bound: set[str] = set()
    out: list[str] = []
    for stmt in getattr(body, "body", ()):
        loads = _Loads()
        walk(stmt, loads)
        for name in loads.names:
            if name not in bound and name not in out:
                out.append(name)
        stores = _Stores()
        walk(stmt, stores)
        bound |= stores.names
    return out


class _Loads(cst.CSTVisitor):
    """The names a statement reads, in order (names only bound are left out)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._target(el.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)
        elif not isinstance(target, cst.Name):
            walk(target, self)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        self._target(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        walk(node.iter, self)
        self._target(node.target)
        walk(node.body, self)
        if node.orelse is not None:
            walk(node.orelse, self)
        return False


class _Stores(cst.CSTVisitor):
    """The plain names a statement binds."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)


class _Exits(cst.CSTVisitor):
    """The first ``return`` of a block (not inside a nested function)."""

    def __init__(self) -> None:
        self.found: cst.CSTNode | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        if self.found is None:
            self.found = node
