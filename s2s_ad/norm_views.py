"""In-place writes through views, lowered as writes of the array viewed (a mixin).

NumPy's basic indexing, ``.T``, ``.transpose()``, ``reshape`` and ``ravel`` return views:
``v = h[1:]; v *= 1.5`` changes ``h``. The normal form keeps each name's value apart, so
the lowering keeps, statement by statement, the alias facts of :mod:`view_facts` (name ->
root array and the steps that view it) and:

* lowers a write through a view (``v op= e``, ``v[i] op= e``, ``v[i] = e``), when ``v``
  is at run time exactly what its steps make of the root (:func:`view_checks.view_of`),
  as ``_w = v.copy()``, the write into ``_w`` and ``_w`` written back into the root
  through the steps undone (``h[1:] = _w``, ``h[...] = _w.reshape(h.shape)``; a plain
  ``v op= e`` on ``v = h[idx]`` as ``h[idx] op= e``); otherwise as written (a copy or a
  scalar: no alias; another view: refused when it runs, as before);
* after a write of a root (``h[0] = 5.0``, ``h *= 2``, the write-back above) derives
  again each alias of it that is still that view (``if view_of(v, h, ...): v = h[1:]``),
  so later reads see the write; the in-place write check (``alias_check``) leaves those
  aliases out (:attr:`view_handled`);
* lowers ``for row in M`` whose body writes through ``row`` as ``for _k in
  range(len(M)): row = M[_k]`` (rows of a 2-D array are views).

A fact dies when a name it reads is bound again (the view, the root, an index's name),
and at a compound statement for the names bound anywhere in it (before a loop as well:
its next trip). Generated code (differentiated again) is left as it is.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import libcst as cst

from . import ir
from .norm_base import NormalizerBase
from .runtime import written_argument
from .source import parse_function
from .view_checks import view_of
from .view_facts import (
    Fact,
    Step,
    bound_names,
    inverse_axes,
    parameters_written,
    view_chain,
    writes_through,
)
from .view_facts import written_name as _written


class ViewWrites(NormalizerBase):
    """Writes through views (see the module's docstring); state in ``view_facts`` and
    ``view_handled`` (set by ``NormalizerBase``)."""

    def small_statement(self, node: cst.BaseSmallStatement) -> None:
        """Lower one small statement, keeping the alias facts of views (generated code,
        differentiated again: only the facts, its writes are already of the roots)."""
        outer = self.view_stmt is None
        if outer:
            self.view_stmt = node
        try:
            if self.generated or not self._write_through_view(node):
                self._lower_write(node)
            self._after(node)
        finally:
            if outer:
                self.view_stmt = None

    def alias_check(
        self, name: str, element: bool = False, node: cst.CSTNode | None = None
    ) -> None:
        """The in-place write check; for a write this module made (``h[1:] *= 1.5`` for
        ``v *= 1.5``), the other names' reads are looked for after the user's write."""
        if node is not None and id(node) not in self.scan.order and self.view_stmt is not None:
            node = self._anchor() or node
        super().alias_check(name, element, node)  # type: ignore[misc]

    def _lower_write(self, node: cst.BaseSmallStatement) -> None:
        """``node`` as written; a write of a root derives its live aliases again."""
        written = _written(node)
        base = written[0] if written is not None else None
        known = self.view_ever.get(base, ()) if self.generated and base is not None else ()
        if base is None or base in self.view_facts or not (self._aliases(base) or known):
            self.lower_small(node)
            return
        if written is not None and written[1] and not self.generated:
            # ``h op= e``: in place when h is an array (its views see it), else a new value
            test = self._is_view(base, Fact(base, (), frozenset()))
            whole = cst.parse_expression(f"{base}[...]")
            assert isinstance(node, cst.AugAssign)
            body = self._captured(lambda: self.small_statement(node.with_changes(target=whole)))
            orelse = self._captured(lambda: self.lower_small(node))
            self._guarded(test, body, orelse)
            return
        saved = self.view_handled
        self.view_handled = frozenset(self._aliases(base))
        if self.generated:  # its views of the root are derived again where they are read
            self.view_handled |= self.view_ever.get(base, set())
        try:
            self.lower_small(node)
        finally:
            self.view_handled = saved
        if not self.generated:
            self._derive_again(base)

    def statement(self, node: cst.CSTNode) -> None:
        """Lower one statement; a compound one ends the facts of the names it binds."""
        if isinstance(node, cst.SimpleStatementLine):
            self.statement_unviewed(node)
            return
        plain, aug = bound_names(node)
        self._kill(plain, aug)
        if isinstance(node, cst.For) and not self.generated:
            node = self._counted_rows(node)
        self.statement_unviewed(node)
        self._kill(plain, aug)

    # -- facts -----------------------------------------------------------------------

    def _aliases(self, root: str) -> list[str]:
        return sorted(n for n, f in self.view_facts.items() if f.root == root)

    def _fact(self, value: cst.BaseExpression) -> Fact | None:
        chain = view_chain(value)
        if chain is None:
            return None
        root, steps, reads = chain
        if root not in self.locals or root in self.params:
            return None  # a parameter: the caller's array (left to the checks as before)
        outer = self.view_facts.get(root)
        if outer is not None:
            return Fact(outer.root, outer.steps + steps, outer.reads | reads)
        return Fact(root, steps, reads)

    def _after(self, node: cst.BaseSmallStatement) -> None:
        target, fact = None, None
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            name = node.targets[0].target
            if isinstance(name, cst.Name):
                target, fact = name.value, self._fact(node.value)
        plain, aug = bound_names(node)
        self._kill(plain, aug)
        if target is not None and fact is not None:
            if target != fact.root and target not in fact.reads:
                self.view_facts[target] = fact
                self.view_ever.setdefault(fact.root, set()).add(target)

    def _kill(self, plain: set[str], aug: set[str]) -> None:
        for name, fact in list(self.view_facts.items()):
            if name in plain or fact.root in plain or fact.reads & (plain | aug):
                del self.view_facts[name]

    # -- lowering ----------------------------------------------------------------------

    def _temp(self, base: str) -> str:
        name = self.fresh(base)
        self.locals.add(name)
        return name

    def _lower_text(self, text: str) -> None:
        line = cst.parse_statement(text)
        assert isinstance(line, cst.SimpleStatementLine)
        self.small_statement(line.body[0])

    def _captured(self, lower: Callable[[], None]) -> list[ir.Stmt]:
        saved, self.out = self.out, []
        try:
            lower()
            return self.out
        finally:
            self.out = saved

    def _is_view(self, name: str, fact: Fact) -> ir.Atom:
        steps = self.atom(cst.parse_expression(fact.checks()))
        test = self.fresh("_is_view")
        callee = ir.Callee("_ad.view_of", view_of, resolved=True)
        self.assign(test, ir.Call(callee, [ir.Var(name), ir.Var(fact.root), steps], []))
        return ir.Var(test)

    def _guarded(self, test: ir.Atom, body: list[ir.Stmt], orelse: list[ir.Stmt]) -> None:
        self.emit(ir.If(self.line, self.src, self.kept_test(test, body + orelse), body, orelse))

    def _derive_again(self, root: str) -> None:
        """After a write of ``root``: each alias of it that is still its view, again."""
        anchor = self._anchor()
        for name in self._aliases(root):
            if not self.scan.live_after(name, anchor):
                continue  # not read again: nothing sees the write through it
            fact = self.view_facts[name]
            test = self._is_view(name, fact)
            text = f"{name} = {fact.source()}"
            body = self._captured(lambda text=text: self._lower_text(text))  # type: ignore[misc]
            self._guarded(test, body, [])

    def _anchor(self) -> cst.CSTNode | None:
        """The first name the user's statement being lowered writes (where a later read
        of a view would see the write), or ``None``."""
        node = self.view_stmt
        target: cst.CSTNode | None = None
        if isinstance(node, cst.AugAssign):
            target = node.target
        elif isinstance(node, cst.Assign):
            target = node.targets[0].target
        while isinstance(target, (cst.Subscript, cst.Attribute)):
            target = target.value
        return target if isinstance(target, cst.Name) else None

    def _write_through_view(self, node: cst.BaseSmallStatement) -> bool:
        written = _written(node)
        if written is None or written[0] not in self.view_facts:
            return False
        name, whole = written
        fact = self.view_facts[name]
        test = self._is_view(name, fact)
        body = self._captured(lambda: self._write_root(node, name, whole, fact))
        orelse = self._captured(lambda: self.lower_small(node))
        self._guarded(test, body, orelse)
        return True

    def _write_root(self, node: cst.BaseSmallStatement, name: str, whole: bool, fact: Fact) -> None:
        """``node`` (a write through the view ``name``) as a write of the root."""
        if whole and len(fact.steps) == 1 and fact.steps[0].kind == "[]":
            assert isinstance(node, cst.AugAssign)
            self.small_statement(node.with_changes(target=cst.parse_expression(fact.source())))
            return
        w = self._temp("_w")
        self._lower_text(f"{w} = {name}.copy()")
        if isinstance(node, cst.AugAssign):
            target = node.target
            target = (
                cst.Name(w)
                if isinstance(target, cst.Name)
                else target.with_changes(value=cst.Name(w))  # type: ignore[union-attr]
            )
            self.small_statement(node.with_changes(target=target))
        else:
            assert isinstance(node, cst.Assign)
            t = node.targets[0]
            renamed = t.target.with_changes(value=cst.Name(w))  # type: ignore[union-attr]
            self.small_statement(node.with_changes(targets=[t.with_changes(target=renamed)]))
        self._write_back(fact, w)

    def _write_back(self, fact: Fact, value: str) -> None:
        """Store ``value`` as the new value of the view ``fact`` into its root, undoing
        its steps from the last."""
        count = len(fact.steps)
        while True:
            step: Step = fact.steps[count - 1]
            parent = fact.source(count - 1)
            if step.kind == "[]":
                if count == 1:
                    self._lower_text(f"{fact.root}[{step.text}] = {value}")
                    return
                p = self._temp("_w")
                self._lower_text(f"{p} = {parent}.copy()")
                self._lower_text(f"{p}[{step.text}] = {value}")
            else:
                if step.kind == "T":
                    undone = f"{value}.T"
                elif step.kind == "transpose":
                    undone = f"{value}.transpose({inverse_axes(step.text)})"
                else:  # reshape, ravel
                    undone = f"{value}.reshape({parent}.shape)"
                if count == 1:
                    self._lower_text(f"{fact.root}[...] = {undone}")
                    return
                p = self._temp("_w")
                self._lower_text(f"{p} = {undone}")
            value, count = p, count - 1

    def _counted_rows(self, node: cst.For) -> cst.For:
        """``for row in M`` writing through ``row``: ``for _k in range(len(M)): row = M[_k]``
        (``M`` a local array or a view of one: ``for row in W.T``); any other iterable:
        ``row`` is checked as a view when it is written."""
        target, it = node.target, node.iter
        if not (isinstance(target, cst.Name) and writes_through(node.body, target.value)):
            return node
        if not (isinstance(it, cst.Name) and it.value in self.locals):
            if self._fact(it) is None:
                self.views.add(target.value)  # written when a view: refused as before
                return node
            rows = self._temp("_rows")
            self._lower_text(f"{rows} = {cst.Module([]).code_for_node(it)}")
            it = cst.Name(rows)
        k = self._temp("_k")
        first = cst.parse_statement(f"{target.value} = {it.value}[{k}]")
        body = node.body
        if isinstance(body, cst.IndentedBlock):
            body = body.with_changes(body=[first, *body.body])
        else:  # for row in M: row *= 2
            body = cst.IndentedBlock(body=[first, cst.SimpleStatementLine(body=body.body)])
        return node.with_changes(
            target=cst.Name(k), iter=cst.parse_expression(f"range(len({it.value}))"), body=body
        )

    def argument_writes(
        self, obj: object, node: cst.Call, args: list[ir.Atom], kwargs: list[tuple[str, ir.Atom]]
    ) -> None:
        """Before a call to a Python function that writes a parameter in place
        (``def scale(v): v *= 2``): refuse, when it runs, an array (list, dict) argument
        the caller may read again (``scale(h[1:])``, ``scale(h)``; not ``h = scale(h)``).
        A wrapper made for a partial (``<s2s_ad made:...>``) returns the call's result at
        once: it reads nothing again."""
        if self.generated or not isinstance(obj, types.FunctionType):
            return
        if self.p.filename.startswith("<s2s_ad made:"):
            return
        written = _parameters_written(obj)
        if not written:
            return
        code = obj.__code__
        names = code.co_varnames[: code.co_argcount]
        given = [(names[k] if k < len(names) else "", a) for k, a in enumerate(args)]
        given += kwargs
        values = [a.value for a in node.args]
        for k, (param, atom) in enumerate(given):
            if param not in written or not isinstance(atom, ir.Var):
                continue
            value = values[k] if k < len(values) else None
            if isinstance(value, cst.Name) and self._rebound_here(value.value):
                continue  # h = scale(h): the caller reads the result
            flags = [repr(obj.__qualname__), repr(param), str(written[param])]
            callee = ir.Callee("_ad.written_argument", written_argument, resolved=True)
            check = ir.Call(callee, [atom, *(ir.Const(f) for f in flags)], [])
            self.emit(ir.ExprStmt(self.line, self.src, check))

    def _rebound_here(self, name: str) -> bool:
        """Whether the user's statement being lowered binds ``name`` (``h = scale(h)``) and
        no view of it is known."""
        node = self.view_stmt
        if node is None or self._aliases(name) or any(b == name for _, b in self.viewed):
            return False
        return name in bound_names(node)[0]


@functools.lru_cache(maxsize=256)
def _written_by_code(func: types.FunctionType) -> dict[str, bool]:
    try:
        parsed = parse_function(func)
    except Exception:  # noqa: BLE001 (no source, a lambda: nothing known, nothing refused)
        return {}
    fdef = parsed.node
    return parameters_written(fdef) if isinstance(fdef, cst.FunctionDef) else {}


def _parameters_written(func: types.FunctionType) -> dict[str, bool]:
    module = getattr(func, "__module__", None) or ""
    if module.split(".")[0] in ("numpy", "scipy", "s2s_ad"):
        return {}
    return _written_by_code(func)
