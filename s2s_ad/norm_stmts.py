"""Statements and assignments: what one line of the user's code becomes.

:meth:`StatementLowering.statement` and :meth:`StatementLowering.small_statement`
dispatch on the statement's kind and refuse, with the user's line, the ones the
transformer does not model (``with``, ``try``, ``match``, ``global``, ``del``, imports,
classes). Assignments bind an atom to their targets: names, tuples (``Unpack``; a
parallel ``a, b = b, a`` evaluates every element first; starred targets slice a
sequence), elements (``SetItem``) and attributes (``setattr``); augmented assignments
become plain ones. ``xs.append(v)`` and ``xs.pop()`` on local lists become ``Append``
and ``ListPop``. Before every in-place write, :meth:`StatementLowering.alias_check`
emits a run-time check that no other name sees the array written (a view, a copy, a
container holding it), since the generated code keeps each name's value apart.
Each statement records the user's line and source it comes from (:meth:`_locate`).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from . import ir
from .lazy_values import changed_before_use
from .norm_append import lower_entry_append, lower_setdefault, setdefault_parts
from .norm_base import NormalizerBase
from .norm_decorated import undecorate
from .norm_exprs import _literal_key
from .norm_imports import local_import
from .norm_queries import bound_to_dicts, header, target_names
from .norm_restore import restore_write, restores
from .norm_scan import names_read
from .partials import bind_partial
from .rules.containers import extend
from .runtime import not_a_view, sequence, unpack_count
from .scatter import lower_ufunc_at

_AUGOPS = {
    cst.AddAssign: "+",
    cst.SubtractAssign: "-",
    cst.MultiplyAssign: "*",
    cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//",
    cst.ModuloAssign: "%",
    cst.PowerAssign: "**",
    cst.MatrixMultiplyAssign: "@",
    cst.BitAndAssign: "&",
    cst.BitOrAssign: "|",
    cst.BitXorAssign: "^",
    cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>",
}


class StatementLowering(NormalizerBase):
    """Lowering of statements and assignments (a mixin of ``Normalizer``)."""

    def block(self, stmts: Any) -> None:
        for stmt in stmts:
            if isinstance(stmt, cst.BaseSmallStatement):
                self.small_statement(stmt)
            else:
                self.statement(stmt)

    def sub_block(self, stmts: Any) -> list[ir.Stmt]:
        saved, self.out = self.out, []
        try:
            self.block(stmts)
            return self.out
        finally:
            self.out = saved

    def _locate(self, node: cst.CSTNode) -> None:
        node = self.origin.get(node, node)
        # a function of the module inlined here (a class method): its own lines
        parsed = next((f for f in self.foreign if f.positions.get(node) is not None), self.p)
        if parsed.positions.get(node) is None:
            return  # made by the normalizer (a comprehension's loop): keep the user's line
        self.line = parsed.position(node)[0]
        if isinstance(node, cst.SimpleStatementLine):
            self.src = parsed.code(node)
        elif isinstance(node, (cst.If, cst.While, cst.For)):
            self.src = header(parsed, node)
        if self.generated is not None:
            # generated code differentiated again: comments name the user's lines
            self.line, self.src = self.generated.get(self.line, (self.line, ""))

    def statement_unviewed(self, node: cst.CSTNode) -> None:
        self._locate(node)
        self.memo = {}
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.small_statement(small)
        elif isinstance(node, cst.If):
            self.if_statement(node)
        elif isinstance(node, cst.For):
            self.for_statement(node)
        elif isinstance(node, cst.While):
            self.while_statement(node)
        elif isinstance(node, cst.FunctionDef):
            if node.name.value in self.lambdas and not node.decorators:
                # a one-expression helper: inlined where it is called (and defined as a
                # lambda too when its name is also used as a value)
                name = node.name.value
                self.lambdas[name] = self.frozen_defaults(name, node)
                self.define_local_function(name, self.lambdas[name])
                return
            made = undecorate(self, node) if node.decorators else None
            for fdef in made or [node]:  # an undecorated function, then its wrappers
                self.nested_def(fdef)
        elif isinstance(node, cst.ClassDef):
            raise self.error("class definition inside a differentiated function", node)
        elif isinstance(node, cst.With):
            if "GradientTape" in cst.Module([]).code_for_node(node.items[0]):
                raise self.error(
                    "'with' statement of a GradientTape inside a function that an outer "
                    "tape differentiates (an inner tape is supported in the outer tape's "
                    "own block)",
                    node,
                    "write the inner tape's with block, and its gradient call, in the "
                    "outer tape's block",
                )
            raise self.error("'with' statement", node)
        elif isinstance(node, (cst.Try, getattr(cst, "TryStar", cst.Try))):
            self.try_statement(node)
        elif hasattr(cst, "Match") and isinstance(node, cst.Match):
            raise self.error("'match' statement", node)
        else:
            raise self.error(type(node).__name__, node)

    def lower_small(self, node: cst.BaseSmallStatement) -> None:
        self.memo = {}
        if isinstance(node, cst.Assign):
            if isinstance(node.value, cst.Lambda) and len(node.targets) == 1:
                name = node.targets[0].target
                if isinstance(name, cst.Name) and name.value in self.rebound_lambdas:
                    self.lambdas[name.value] = node.value  # what the calls from here call
                if isinstance(name, cst.Name) and name.value in self.lambdas:
                    frozen = self.frozen_defaults(name.value, node.value)
                    self.lambdas[name.value] = frozen
                    self.define_local_function(name.value, frozen)
                    return  # inlined at its call sites
            if len(node.targets) == 1 and bind_partial(self, node.targets[0].target, node.value):
                return  # a partial kept in a name: its calls call the function
            target = node.targets[0].target
            if len(node.targets) == 1 and isinstance(target, cst.Name):
                late = changed_before_use(self.p.node, node, target.value)
                if late is not None:
                    raise self.error(
                        f"{late[0]} kept in {target.value!r} reads {late[1]!r}, which "
                        "changes before it runs",
                        node,
                        "consume it at once, or build a list ([... for ...])",
                    )
            self.assignment([t.target for t in node.targets], node.value)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.assignment([node.target], node.value)
        elif isinstance(node, cst.AugAssign):
            self.aug_assignment(node)
        elif isinstance(node, cst.Expr):
            value = node.value
            if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                return  # docstring or ...
            if isinstance(value, cst.Yield) and self.items is not None:
                if isinstance(value.value, cst.From):
                    # ``yield from xs`` as ``for v in xs: yield v``
                    v = self.fresh("_yielded")
                    self.locals.add(v)
                    each = cst.SimpleStatementLine([cst.Expr(cst.Yield(cst.Name(v)))])
                    loop = cst.For(cst.Name(v), value.value.item, cst.IndentedBlock([each]))
                    self.origin[loop] = self.origin[each] = self.origin.get(node, node)
                    line, src = self.line, self.src
                    self.statement(loop)
                    self.line, self.src = line, src
                    return
                item = self.atom(value.value) if value.value is not None else ir.Const("None")
                self.emit(ir.Append(self.line, self.src, self.items, item))
                return
            if isinstance(value, (cst.Yield, cst.Await)):
                raise self.error("'yield'" if isinstance(value, cst.Yield) else "'await'", value)
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "append"
                and isinstance(value.func.value, cst.Name)
                and value.func.value.value in self.locals
                and len(value.args) == 1
                and value.args[0].keyword is None
                and not value.args[0].star
            ):
                item = self.atom(value.args[0].value)
                if not self.generated:
                    self.alias_check(value.func.value.value, node=value.func.value)
                self.emit(ir.Append(self.line, self.src, value.func.value.value, item))
            elif self._dict_update(value):
                pass  # d.update({"k": v}) or d.update(k=v) on a local dict: item writes
            elif self._list_pop(value) is not None:
                popped = self._list_pop(value)
                assert popped is not None
                if not self.generated:
                    self.alias_check(popped, node=value.func.value)
                self.emit(ir.ListPop(self.line, self.src, popped, self.fresh()))
            elif isinstance(value, cst.Call) and lower_ufunc_at(self, value):
                pass  # np.add.at(buf, idx, v) into a local array: a scatter-add
            elif isinstance(value, cst.Call) and lower_entry_append(self, value):
                pass  # log["a"].append(v) on an entry of a local container: rebound
            elif isinstance(value, cst.Call) and setdefault_parts(self, value) is not None:
                lower_setdefault(self, value)  # d.setdefault(k, v), result unused
            elif isinstance(value, cst.Call):
                call = self.call(value)
                if self.generated and restores(call):
                    self.emit(restore_write(self.line, self.src, call))
                else:
                    self.emit(ir.ExprStmt(self.line, self.src, call))
            else:
                self.atom(value)
        elif isinstance(node, cst.Return) and self.items is not None and not self.inlining:
            if node.value is not None:
                raise self.error("'return' with a value in a generator", node)
            self.emit(ir.Return(self.line, self.src, ir.Var(self.items)))
        elif isinstance(node, cst.Return):
            self.emit(ir.Return(self.line, self.src, self.result(node.value)))
        elif isinstance(node, cst.Pass):
            pass
        elif isinstance(node, cst.Break):
            self.emit(ir.Break(self.line, self.src))
        elif isinstance(node, cst.Continue):
            self.emit(ir.Continue(self.line, self.src))
        elif isinstance(node, (cst.Assert, cst.Raise)):
            code = self.p.code(node)
            self.emit(ir.ExprStmt(self.line, self.src, ir.Opaque(code, names_read(node), "assert")))
        elif (
            isinstance(node, cst.Nonlocal)
            and self.inlining
            and all(item.name.value in self.locals for item in node.names)
        ):
            pass  # a local function inlined here: its nonlocal names are this function's
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            kind = "global" if isinstance(node, cst.Global) else "nonlocal"
            raise self.error(f"'{kind}' declaration (writes to outer variables)", node)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            self.imports.update(local_import(self, node))
        elif isinstance(node, cst.Del):
            self.delete(node)
        else:
            raise self.error(type(node).__name__, node)

    def _dict_update(self, call: cst.BaseExpression) -> bool:
        """``d.update({"a": x})`` / ``d.update(a=x)`` of a local ``d`` bound only to dicts,
        result unused, as the writes ``d["a"] = x``."""
        if not isinstance(call, cst.Call):
            return False
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "update"
            and isinstance(func.value, cst.Name)
            and func.value.value in self.locals
            and not any(a.star for a in call.args)
            and bound_to_dicts(self.p.node, func.value.value)
        ):
            return False
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        for arg in call.args:
            if arg.keyword is not None:
                pairs.append((cst.SimpleString(repr(arg.keyword.value)), arg.value))
            elif isinstance(arg.value, cst.Dict) and arg is call.args[0]:
                for el in arg.value.elements:
                    if not isinstance(el, cst.DictElement) or _literal_key(el.key) is None:
                        return False
                    pairs.append((el.key, el.value))
            else:
                return False
        values = [self.atom(value) for _, value in pairs]  # all read before any write
        for (key, _), value in zip(pairs, values):
            self.store(cst.Subscript(func.value, [cst.SubscriptElement(cst.Index(key))]), value)
        return True

    def assignment(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        if self.freeze(targets, value):
            return
        if self.factory_call(targets, value):
            return
        first = targets[0]
        if isinstance(first, cst.Name) and first.value not in self.env:
            self.lower_into(first.value, value)
            source: ir.Atom = ir.Var(first.value)
        else:
            if isinstance(first, (cst.Tuple, cst.List)) and isinstance(
                value, (cst.Tuple, cst.List)
            ):
                if len(targets) == 1 and self._parallel(first, value):
                    return
            source = self.atom(value)
            self.store(first, source)
        for target in targets[1:]:
            self.store(target, source)

    def _parallel(self, target: cst.Tuple | cst.List, value: cst.Tuple | cst.List) -> bool:
        """``a, b = b, a``: evaluate every element first, then bind."""
        tels, vels = target.elements, value.elements
        if len(tels) != len(vels) or any(isinstance(e, cst.StarredElement) for e in (*tels, *vels)):
            return False
        names = {e.value.value for e in tels if isinstance(e.value, cst.Name)}
        atoms = []
        for el in vels:
            atom = self.atom(el.value)
            if isinstance(atom, ir.Var) and atom.name in names:
                tmp = self.fresh()
                self.assign(tmp, ir.Copy(atom))
                atom = ir.Var(tmp)
            atoms.append(atom)
        for el, atom in zip(tels, atoms):
            self.store(el.value, atom)
        return True

    def store(self, target: cst.BaseExpression, value: ir.Atom) -> None:
        """Bind an already computed atom to an assignment target."""
        if isinstance(target, cst.Name):
            if value != ir.Var(target.value):
                self.assign(target.value, ir.Copy(value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, ir.Var) and value.name in target_names(target):
                # ``a, p = p``: the unpacked value gets a name of its own, so the sweeps
                # never take the rebound ``p`` for the tuple it came from
                tmp = self.fresh()
                self.assign(tmp, ir.Copy(value))
                value = ir.Var(tmp)
            if any(isinstance(el, cst.StarredElement) for el in target.elements):
                self.starred_store(target, value)
                return
            names = []
            nested = []
            for el in target.elements:
                if isinstance(el.value, cst.Name):
                    names.append(el.value.value)
                else:
                    tmp = self.fresh()
                    names.append(tmp)
                    nested.append((el.value, tmp))
            self.emit(ir.Unpack(self.line, self.src, names, value))
            for node, tmp in nested:
                self.store(node, ir.Var(tmp))
        elif isinstance(target, cst.Subscript):
            obj = target.value
            if not isinstance(obj, cst.Name) or obj.value not in self.locals:
                raise self.error(
                    "assignment into an element of a non-local or nested value",
                    target,
                    "assign into a local array (x[i, j] = ...)",
                )
            index = self.index(target)
            self.alias_check(obj.value, element=True, node=obj)
            self.emit(ir.SetItem(self.line, self.src, obj.value, index, value))
        elif isinstance(target, cst.Attribute):
            self.set_attribute(target, value)
        else:
            raise self.error(f"assignment to {type(target).__name__}", target)

    def starred_store(self, target: cst.Tuple | cst.List, value: ir.Atom) -> None:
        """``first, *rest, last = xs``: elements and a slice of ``xs`` as a sequence, the
        starred name bound to a list as Python does."""

        elements = target.elements
        stars = [k for k, el in enumerate(elements) if isinstance(el, cst.StarredElement)]
        if len(stars) > 1:
            raise self.error("multiple starred expressions in assignment", target)
        star = stars[0]
        after = len(elements) - star - 1
        seq = self.fresh("_seq")
        self.assign(seq, ir.Call(ir.Callee("_ad.sequence", sequence, resolved=True), [value], []))
        check = ir.Callee("_ad.unpack_count", unpack_count, resolved=True)
        least = ir.Const(str(len(elements) - 1))
        self.emit(ir.ExprStmt(self.line, self.src, ir.Call(check, [ir.Var(seq), least], [])))
        for k, el in enumerate(elements):
            if k == star:
                part = self.fresh()
                stop = f"-{after}" if after else ""
                self.assign(part, ir.Subscript(ir.Var(seq), ir.Index(f"{star}:{stop}")))
                item = self._builtin_call("list", [ir.Var(part)])
            else:
                item = ir.Var(self.fresh())
                index = ir.Index(str(k) if k < star else str(k - len(elements)))
                self.assign(item.name, ir.Subscript(ir.Var(seq), index))
            self.store(el.value, item)

    def set_attribute(self, target: cst.Attribute, value: ir.Atom) -> None:
        """``obj.name = value`` runs in the forward sweep as ``setattr(obj, 'name', value)``:
        state kept on objects (counters, a layer's built flag) is a side effect; a
        differentiated value stored there is refused by the call's own check."""
        obj = self.atom(target.value)
        callee = ir.Callee("setattr", setattr, resolved=True)
        name = ir.Const(repr(target.attr.value))
        self.emit(ir.ExprStmt(self.line, self.src, ir.Call(callee, [obj, name, value], [])))

    def alias_check(
        self, name: str, element: bool = False, node: cst.CSTNode | None = None
    ) -> None:
        """Before an in-place write into ``name``: refuse, when it runs, a write that another
        name would see (``v = y[1:3]; v *= 3`` changes ``y``; ``z = y; y[0] = 1`` changes
        ``z``), since the generated code keeps each name's value apart."""
        # every name a chain of plain copies may share the array with (b = c; a = b), and
        # the containers that may hold it (rows = [h]; d[k] = h), theirs too (c2 = [rows])
        partners = {name}
        held: set[str] = set()  # partners through containers and views: checked if read later
        grown = True
        while grown:
            linked = {b for a, b in self.copies if a in partners}
            linked |= {a for a, b in self.copies if b in partners}
            if not self.generated:  # generated code hands its tapes over on purpose and
                # reads a slice's old values right before writing it
                more = {a for a, b in self.holders if b in partners}
                more |= {a for a, b in self.viewed if b in partners}
                more |= {b for a, b in self.viewed if a in partners}
                if name in self.views:  # w = a[0]; w += 1: what a holds is w (a = [v])
                    more |= {b for a, b in self.holders if a in partners}
                held |= more - partners
                linked |= more
            grown = not linked <= partners
            partners |= linked
        partners = {p for p in partners if p in self.locals and p != name}
        partners -= self.view_handled  # derived again after the write (norm_views)
        # a container, view or local copy nothing reads after the write cannot show its
        # effect (a parameter can: the caller's array would change)
        partners = {
            p
            for p in partners
            if (p not in held and p in self.params)
            or p in self.default_of  # a local function's default: read by its calls
            or self.scan.live_after(p, node)
        }
        if name in self.views or partners:
            callee = ir.Callee("_ad.not_a_view", not_a_view, resolved=True)
            args = [ir.Var(name), *(ir.Var(p) for p in sorted(partners))]
            kwargs: list[tuple[str, ir.Atom]] = []
            if name in self.entries:
                kwargs.append(("entry", ir.Const("True")))
            if element and partners:
                kwargs.append(("at", self.region()))  # the entries the write covers
            self.emit(ir.ExprStmt(self.line, self.src, ir.Call(callee, args, kwargs)))

    def shared_entry_check(self, obj: cst.Name, entry: str) -> None:
        """Before ``a[k] op= v`` on a container that holds named values (``a = [v, v]``,
        ``d[k] = v``): refuse, when it runs, an update in place of an array that another
        entry or a name read later also holds (Python changes it in place)."""
        name = obj.value
        held = {b for a, b in self.holders if a == name and b != name and b in self.locals}
        if self.generated or not (held or self.has_repetition):
            return
        seen = sorted(b for b in held if b in self.params or self.scan.live_after(b, obj))
        callee = ir.Callee("_ad.not_a_view", not_a_view, resolved=True)
        args = [ir.Var(entry), *(ir.Var(b) for b in seen)]
        call = ir.Call(callee, args, [("within", ir.Var(name))])
        self.emit(ir.ExprStmt(self.line, self.src, call))

    def aug_assignment(self, node: cst.AugAssign) -> None:
        op = _AUGOPS[type(node.operator)]
        target = node.target
        if isinstance(target, cst.Name):
            right = self.atom(node.value)
            self.alias_check(target.value, node=target)
            if op == "+" and self.holds_sequence(target):
                # ``feats += [f]`` on a list: the concatenation (aliases refused above);
                # a list extended by a tuple too, as Python's ``+=`` does
                callee = ir.Callee("_ad.extend", extend, resolved=True)
                self.lower_op(target.value, ir.Call(callee, [ir.Var(target.value), right], []))
                return
            self.lower_op(target.value, ir.BinOp(op, ir.Var(target.value), right))
        elif isinstance(target, cst.Subscript):
            obj = target.value
            if not isinstance(obj, cst.Name) or obj.value not in self.locals:
                raise self.error("augmented assignment into a non-local element", target)
            index = self.index(target)
            parts = self.index_parts
            right = self.atom(node.value)
            self.index_parts = parts
            self.alias_check(obj.value, element=True, node=obj)
            old = self.fresh()
            self.assign(old, ir.Subscript(ir.Var(obj.value), index))
            self.shared_entry_check(obj, old)
            new = self.fresh()
            self.assign(new, ir.BinOp(op, ir.Var(old), right))
            self.emit(ir.SetItem(self.line, self.src, obj.value, index, ir.Var(new)))
        elif isinstance(target, cst.Attribute):
            right = self.atom(node.value)
            old = self.fresh()
            self.assign(old, ir.Attr(self.atom(target.value), target.attr.value))
            new = self.fresh()
            self.assign(new, ir.BinOp(op, ir.Var(old), right))
            self.set_attribute(target, ir.Var(new))
        else:
            raise self.error(f"augmented assignment to {type(target).__name__}", target)
