"""Comprehensions, and the builtins that build a container by iterating, as loops.

``[e for v in xs if c]`` becomes a loop appending to a fresh list and ``{k: e for ...}``
one storing into a fresh dict (:meth:`ContainerLowering.comprehension`), the loop
variables renamed apart first where they clash with the function's names, since a
comprehension has a scope of its own (:meth:`ContainerLowering._scoped`). On the same
footing: ``map(f, xs, ys)`` and ``filter(f, xs)`` (as list comprehensions, so each call
of ``f`` is differentiated where it is made), ``functools.reduce(f, xs[, init])`` (a loop
``acc = f(acc, x)``), ``dict(zip(keys, values))`` and ``dict(d.items())`` (dict
comprehensions), ``dict(a=x)`` and ``dict([("a", x)])`` (dict literals).
"""

from __future__ import annotations

import builtins
import functools

import libcst as cst

from . import ir
from .norm_base import MISSING, NormalizerBase
from .norm_inline import Rename
from .norm_scan import names_read
from .runtime import reduce_start

_Comp = cst.ListComp | cst.GeneratorExp | cst.DictComp


class ContainerLowering(NormalizerBase):
    """Comprehensions and container-building builtins as loops (a mixin of ``Normalizer``)."""

    def _scoped(self, node: _Comp) -> _Comp | None:
        """``node`` with its loop variables renamed apart from the function's names, so
        that it can become a loop (``None`` when it cannot).

        A comprehension has its own scope: in ``for W in Ws: ...`` followed by
        ``sum(np.sum(W**2) for W in Ws)`` the second ``W`` is not the first.
        """
        if self.env:
            return None
        names: list[str] = []
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            if comp.asynchronous is not None:
                return None
            names.extend(n for n in names_read(comp.target) if n not in names)
            comp = comp.inner_for_in
        taken = (self.locals - self.comp_names) | set(self.params)
        clashes = {
            n: self.fresh(n)
            for n in names
            if n in taken or n in self.nested or self.resolve(n) is not MISSING
        }
        if not clashes:
            return node
        rename = Rename(clashes, self.origin)
        outer = node.for_in
        # the outermost iterable is evaluated in the enclosing scope: left as it is
        for_in = outer.with_changes(
            target=outer.target.visit(rename),
            ifs=[cond.visit(rename) for cond in outer.ifs],
            inner_for_in=outer.inner_for_in.visit(rename) if outer.inner_for_in else None,
        )
        if isinstance(node, cst.DictComp):
            renamed = node.with_changes(
                key=node.key.visit(rename), value=node.value.visit(rename), for_in=for_in
            )
        else:
            renamed = node.with_changes(elt=node.elt.visit(rename), for_in=for_in)
        self.origin[renamed] = self.origin.get(node, node)
        return renamed

    def comprehension(self, node: _Comp) -> ir.Atom:
        """``[e for v in xs if c]`` as a loop appending to a fresh list; ``{k: e for ...}``
        as a loop storing into a fresh dict."""
        append: cst.BaseStatement
        if isinstance(node, cst.DictComp):
            out = self.fresh("_dict")
            self.locals.add(out)
            self.assign(out, ir.Build("dict", [], []))
            store = cst.AssignTarget(
                cst.Subscript(cst.Name(out), [cst.SubscriptElement(cst.Index(node.key))])
            )
            append = cst.SimpleStatementLine([cst.Assign([store], node.value)])
        else:
            out = self.fresh("_list")
            self.locals.add(out)
            self.assign(out, ir.Build("list", []))
            call = cst.Call(cst.Attribute(cst.Name(out), cst.Name("append")), [cst.Arg(node.elt)])
            append = cst.SimpleStatementLine([cst.Expr(call)])

        def nest(comp: cst.CompFor) -> cst.BaseStatement:
            body: cst.BaseStatement = (
                nest(comp.inner_for_in) if comp.inner_for_in is not None else append
            )
            for cond in reversed(comp.ifs):
                body = cst.If(test=cond.test, body=cst.IndentedBlock([body]))
            self.locals.update(names_read(comp.target))
            self.comp_names.update(names_read(comp.target))
            return cst.For(target=comp.target, iter=comp.iter, body=cst.IndentedBlock([body]))

        line, src = self.line, self.src
        memo = self.memo
        self.statement(nest(node.for_in))
        self.line, self.src, self.memo = line, src, memo
        return ir.Var(out)

    def reduce_call(self, node: cst.Call) -> ir.Expr | None:
        """``functools.reduce(f, xs[, init])`` as a loop ``acc = f(acc, x)`` over ``xs``
        (``f`` a lambda or a named function; ``None`` for other forms)."""
        args = node.args
        if not 2 <= len(args) <= 3 or any(a.keyword is not None or a.star for a in args):
            return None
        fn = args[0].value
        if not isinstance(fn, (cst.Lambda, cst.Name)) and self.dotted(fn) is None:
            return None
        if isinstance(fn, cst.Name) and fn.value in self.locals and fn.value not in self.lambdas:
            return None  # a function value computed here: called as it is, not unrolled

        line, src = self.line, self.src
        seq = self._sequence(args[1].value)
        acc = self.fresh("_acc")
        self.locals.add(acc)
        count = self._builtin_call("len", [seq])
        if len(args) == 3:
            self.assign(acc, ir.Copy(self.atom(args[2].value)))
            start: ir.Atom = ir.Const("0")
        else:
            check = ir.Callee("_ad.reduce_start", reduce_start, resolved=True)
            self.emit(ir.ExprStmt(line, src, ir.Call(check, [count], [])))
            self.assign(acc, ir.Subscript(seq, ir.Index("0")))
            start = ir.Const("1")
        k = self.fresh("_k")
        item = self.fresh("_item")
        self.locals.add(item)
        saved, self.out = self.out, []
        memo, self.memo = self.memo, {}
        self.assign(item, ir.Subscript(seq, ir.Index(k, (k,))))
        step = cst.Call(func=fn, args=[cst.Arg(cst.Name(acc)), cst.Arg(cst.Name(item))])
        self.origin[step] = self.origin.get(node, node)
        self.lower_into(acc, step)
        body, self.out = self.out, saved
        self.line, self.src, self.memo = line, src, memo
        self.emit(ir.For(line, src, k, body, [start, count]))
        return ir.Copy(ir.Var(acc))

    def accumulate_call(self, node: cst.Call) -> ir.Expr | None:
        """``itertools.accumulate(xs[, f][, initial=v])`` as the list of the running
        results (``acc + x``, or ``f(acc, x)`` for a lambda or a named function) built by
        a loop over ``xs``; ``None`` for other forms. A list where Python gives an
        iterator: the same items, in the same order."""
        args = node.args
        positional = [a.value for a in args if a.keyword is None]
        named = {a.keyword.value: a.value for a in args if a.keyword is not None}
        if any(a.star for a in args) or not 1 <= len(positional) <= 2:
            return None
        if set(named) - {"func", "initial"} or (len(positional) == 2 and "func" in named):
            return None
        fn = positional[1] if len(positional) == 2 else named.get("func")
        if fn is not None and not (
            isinstance(fn, (cst.Lambda, cst.Name)) or self.dotted(fn) is not None
        ):
            return None
        if isinstance(fn, cst.Name) and fn.value in self.locals and fn.value not in self.lambdas:
            return None  # a function value computed here: called as it is

        line, src = self.line, self.src
        seq = self._sequence(positional[0])
        out, acc, item = self.fresh("_accs"), self.fresh("_acc"), self.fresh("_item")
        self.locals.update((out, acc, item))
        count = self._builtin_call("len", [seq])
        self.assign(out, ir.Build("list", []))
        if "initial" in named:
            self.assign(acc, ir.Copy(self.atom(named["initial"])))
            self.emit(ir.Append(line, src, out, ir.Var(acc)))
            start: ir.Atom = ir.Const("0")
        else:  # the first item as it is, when there is one
            some = self.fresh()
            self.assign(some, ir.Compare(count, [">"], [ir.Const("0")]))
            saved, self.out = self.out, []
            self.assign(acc, ir.Subscript(seq, ir.Index("0")))
            self.emit(ir.Append(line, src, out, ir.Var(acc)))
            first, self.out = self.out, saved
            self.emit(ir.If(line, src, ir.Var(some), first, []))
            start = ir.Const("1")
        k = self.fresh("_k")
        saved, self.out = self.out, []
        memo, self.memo = self.memo, {}
        self.assign(item, ir.Subscript(seq, ir.Index(k, (k,))))
        if fn is None:
            step: cst.BaseExpression = cst.BinaryOperation(cst.Name(acc), cst.Add(), cst.Name(item))
        else:
            step = cst.Call(func=fn, args=[cst.Arg(cst.Name(acc)), cst.Arg(cst.Name(item))])
        self.origin[step] = self.origin.get(node, node)
        self.lower_into(acc, step)
        self.emit(ir.Append(line, src, out, ir.Var(acc)))
        body, self.out = self.out, saved
        self.line, self.src, self.memo = line, src, memo
        self.emit(ir.For(line, src, k, body, [start, count]))
        return ir.Copy(ir.Var(out))

    def map_call(self, node: cst.Call, keep: bool) -> ir.Expr | None:
        """``map(f, xs, ys)`` as the list ``[f(x, y) for x, y in zip(xs, ys)]`` and
        ``filter(f, xs)`` as ``[x for x in xs if f(x)]`` (``keep``), so that each call of
        ``f`` is differentiated where it is made. ``f`` is a lambda, a name, a dotted name
        or ``functools.partial(g, ...)`` of one (the bound arguments evaluated once, before
        the loop, as ``partial`` does). ``None`` for other forms, left to the call itself.

        The result is a list where Python gives an iterator: the same items, in the same
        order, each computed once.
        """
        args = node.args
        if self.env or len(args) < 2 or any(a.keyword is not None or a.star for a in args):
            return None
        if keep and len(args) != 2:
            return None
        if len(args) > 2 and self.resolve("zip") is not builtins.zip:
            return None
        fn = args[0].value
        lead: list[cst.Arg] = []
        tail: list[cst.Arg] = []
        if isinstance(fn, cst.Call):
            parts = self.dotted(fn.func)
            if parts is None or self.resolve_dotted(parts) is not functools.partial:
                return None
            if not fn.args or any(a.star for a in fn.args) or fn.args[0].keyword is not None:
                return None
            inner = fn.args[0].value
            if not isinstance(inner, cst.Name) and self.dotted(inner) is None:
                return None
            for arg in fn.args[1:]:
                atom = self.atom(arg.value)  # evaluated once, when the partial is made
                value = cst.parse_expression(str(atom))
                if arg.keyword is None:
                    lead.append(cst.Arg(value))
                else:
                    tail.append(cst.Arg(value, keyword=arg.keyword))
            fn = inner
        elif not isinstance(fn, (cst.Lambda, cst.Name)) and self.dotted(fn) is None:
            return None
        if keep and isinstance(fn, cst.Name) and fn.value == "None":
            fn = None
        names = [self.fresh("_item") for _ in args[1:]]
        items = [cst.Arg(cst.Name(n)) for n in names]
        if fn is None:
            call: cst.BaseExpression = cst.Name(names[0])
        else:
            call = cst.Call(func=fn, args=[*lead, *items, *tail])
            self.origin[call] = self.origin.get(node, node)
        if len(names) == 1:
            target: cst.BaseAssignTargetExpression = cst.Name(names[0])
            it = args[1].value
        else:
            target = cst.Tuple([cst.Element(cst.Name(n)) for n in names])
            it = cst.Call(func=cst.Name("zip"), args=[cst.Arg(a.value) for a in args[1:]])
        ifs = [cst.CompIf(test=call)] if keep else []
        elt = cst.Name(names[0]) if keep else call
        comp = cst.ListComp(elt=elt, for_in=cst.CompFor(target=target, iter=it, ifs=ifs))
        self.origin[comp] = self.origin.get(node, node)
        return ir.Copy(self.comprehension(comp))

    def dict_of_pairs(self, node: cst.Call) -> cst.DictComp | None:
        """``dict(zip(keys, values))`` or ``dict(d.items())`` as the comprehension
        ``{k: v for k, v in ...}`` (else ``None``)."""
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return None
        pairs = node.args[0].value
        if not isinstance(pairs, cst.Call) or any(a.keyword or a.star for a in pairs.args):
            return None
        func = pairs.func
        parts = self.dotted(func)
        zipped = parts is not None and self.resolve_dotted(parts) is builtins.zip
        items = isinstance(func, cst.Attribute) and func.attr.value == "items" and not pairs.args
        if not (zipped and len(pairs.args) == 2) and not items:
            return None
        key, value = cst.Name(self.fresh("_key")), cst.Name(self.fresh("_value"))
        target = cst.Tuple([cst.Element(key), cst.Element(value)], lpar=[], rpar=[])
        comp = cst.DictComp(key=key, value=value, for_in=cst.CompFor(target=target, iter=pairs))
        self.origin[comp] = self.origin.get(node, node)
        return comp

    def dict_call(self, node: cst.Call) -> ir.Build | None:
        """``dict(a=x)`` or ``dict([("a", x), ...])`` as a dict literal (else ``None``)."""
        keys: list[str] = []
        values: list[cst.BaseExpression] = []
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) > 1:
            return None
        if positional:
            pairs = positional[0].value
            if not isinstance(pairs, (cst.List, cst.Tuple)):
                return None
            for el in pairs.elements:
                pair = el.value
                if (
                    not isinstance(pair, cst.Tuple)
                    or len(pair.elements) != 2
                    or not isinstance(pair.elements[0].value, (cst.SimpleString, cst.Integer))
                ):
                    return None
                keys.append(pair.elements[0].value.value)
                values.append(pair.elements[1].value)
        for arg in node.args:
            if arg.keyword is not None:
                keys.append(repr(arg.keyword.value))
                values.append(arg.value)
        if len(set(keys)) != len(keys):
            return None  # a repeated key: the call (refused if differentiated) decides
        return ir.Build("dict", [self.atom(v) for v in values], keys)
