"""Calls lowered to ``ir.Call`` with atom arguments, and the calls rewritten first.

:meth:`CallLowering.call` resolves the callee: a partial kept in a name, a local lambda
or function (inlined, :mod:`norm_inline`), ``dict``, ``functools.reduce``, ``map`` and
``filter`` (loops, :mod:`norm_comps`), ``sorted``/``min``/``max`` (:mod:`ordering`), a
global or closure name resolved to its live object, a method of a local value (kept with
its receiver), or a value computed here. ``f(a, *xs, **kw)`` packs its starred arguments
into one sequence and one dict (:meth:`CallLowering.star_call`).

A frozen SciPy distribution (``dist = norm(mu, sigma)``, bound once) keeps its arguments
in variables of their own, and ``dist.logpdf(x)`` becomes ``norm.logpdf(x, mu, sigma)``,
which has a rule (:meth:`CallLowering.freeze`, :meth:`CallLowering.frozen_method`).
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import itertools
from typing import Any

import libcst as cst
import numpy as np

from . import ir
from .built_objects import init_attributes, record_kind
from .norm_append import lower_setdefault, setdefault_parts
from .norm_base import MISSING, NormalizerBase
from .norm_classmethod import inline_classmethod
from .norm_passed import factory_argument_call
from .norm_piecewise import lower_piecewise
from .norm_scan import binding_count
from .ordering import lower_ordering
from .partials import expand_partial
from .rules import REGISTRY
from .rules.containers import fields_dict, pack_args, pack_kwargs, replace_fields, unzip
from .runtime import along_finish, along_rows, apply_along_axis, build_record

_ORDERINGS = (builtins.sorted, builtins.min, builtins.max)  # see ordering.py


def _literal_labels(node: cst.BaseExpression) -> bool:
    """Whether ``node`` is a tuple display of string and integer literals."""
    return isinstance(node, cst.Tuple) and all(
        isinstance(el.value, (cst.SimpleString, cst.Integer)) for el in node.elements
    )


class CallLowering(NormalizerBase):
    """Lowering of calls (a mixin of ``Normalizer``)."""

    def frozen_method(self, node: cst.Call) -> cst.Call | None:
        """A method of a frozen SciPy distribution as the distribution's own method, which
        has a rule: ``norm(mu, sigma).logpdf(x)`` (frozen where it is called) and
        ``dist.logpdf(x)`` after ``dist = norm(mu, sigma)`` (see :meth:`freeze`) both read
        as ``norm.logpdf(x, mu, sigma)``, as SciPy's frozen methods compute it. Only
        methods with a rule are rewritten (``rvs``, ``mean``... take other arguments)."""
        func = node.func
        if not isinstance(func, cst.Attribute) or any(a.star or a.keyword for a in node.args):
            return None
        receiver = func.value
        if isinstance(receiver, cst.Name) and receiver.value in self._frozen:
            if receiver.value in self.env:
                return None
            callee, frozen_args = self._frozen[receiver.value]
        elif isinstance(func.value, cst.Call) and not any(a.star for a in func.value.args):
            callee, frozen_args = func.value.func, list(func.value.args)
            if self._distribution(callee) is None:
                return None
        else:
            return None
        if not self._has_rule(callee, func.attr.value):
            return None
        frozen_args = [a for a in frozen_args if not (a.keyword and a.keyword.value == "seed")]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in (*node.args, *frozen_args)]
        return cst.Call(cst.Attribute(callee, func.attr), args)

    def freeze(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> bool:
        """``dist = norm(mu, sigma)``, ``dist`` assigned nowhere else: the distribution's
        arguments are kept in variables assigned with ``dist`` (so they are the values it
        was frozen with, also in loops), which :meth:`frozen_method` passes to the methods
        called on ``dist``. ``dist`` itself is still made: any other use of it (``rvs``,
        passed to a function) is a call into SciPy, refused when differentiated.

        Returns:
            Whether the assignment was lowered here.
        """
        if len(targets) != 1 or not isinstance(targets[0], cst.Name):
            return False
        target = targets[0]
        user = self.origin.get(target, target)
        if not isinstance(value, cst.Call) or target.value in self.env:
            return False
        if not isinstance(user, cst.Name) or user.value not in self._frozen_names:
            return False
        if self._distribution(value.func) is None or any(a.star for a in value.args):
            return False
        names = self._parameter_names(value.func)
        args = []
        for k, arg in enumerate(value.args):
            atom = self.atom(arg.value)
            if isinstance(atom, ir.Var):
                # the value now (the variable may be assigned again), in a variable of its
                # own: read by the freeze and by every method call, also in later loops
                label = arg.keyword.value if arg.keyword else (names[k] if k < len(names) else k)
                kept = self.reserve(f"{target.value}_{label}")
                self.locals.add(kept)
                self.assign(kept, ir.Copy(atom))
                atom = ir.Var(kept)
            args.append(arg.with_changes(value=cst.parse_expression(str(atom))))
        self._frozen[target.value] = (value.func, args)
        self.lower_into(target.value, value.with_changes(args=args))
        return True

    def _distribution(self, func: cst.BaseExpression) -> Any:
        """The SciPy distribution ``func`` names (``scipy.stats.norm``), else ``None``."""
        parts = self.dotted(func)
        if parts is None:
            return None
        obj = self.resolve_dotted(parts)
        kinds = {k.__name__ for k in type(obj).__mro__}
        return obj if kinds & {"rv_generic", "multi_rv_generic"} else None

    def _parameter_names(self, func: cst.BaseExpression) -> tuple[str, ...]:
        """The names of a distribution's parameters (``loc``, ``scale``), from its rules."""

        dist = self._distribution(func)
        for method in ("logpdf", "logpmf"):
            rule = REGISTRY.lookup(getattr(dist, method, None))
            if rule is not None:
                return rule.params[1:]
        return ()

    def _has_rule(self, func: cst.BaseExpression, method: str) -> bool:

        bound = getattr(self._distribution(func), method, None)
        return callable(bound) and REGISTRY.lookup(bound) is not None

    @functools.cached_property
    def _frozen(self) -> dict[str, tuple[cst.BaseExpression, list[cst.Arg]]]:
        """Variable -> the distribution and the (captured) arguments it was frozen with."""
        return {}

    @functools.cached_property
    def _frozen_names(self) -> set[str]:
        """Names bound once in the whole function, by ``name = call(...)``."""
        scan = binding_count(self.p.node)
        return {n for n in scan.calls if scan.count[n] == 1}

    def itertools_call(self, node: cst.Call, chain: bool) -> ir.Expr | None:
        """``itertools.chain(a, b)`` as the list ``[*a, *b]``, ``itertools.starmap(f,
        zip(a, b))`` as ``map(f, a, b)`` (a list, see :meth:`map_call`); ``None`` for
        other forms, left to the call itself."""
        args = node.args
        if self.env or any(a.keyword is not None or a.star for a in args):
            return None
        if chain:
            if "list" in self.locals:
                return None
            shown = cst.List([cst.StarredElement(a.value) for a in args])
            self.origin[shown] = self.origin.get(node, node)
            return self.expression(shown)
        if len(args) != 2 or not isinstance(args[1].value, cst.Call):
            return None
        zipped = args[1].value
        parts = self.dotted(zipped.func)
        if parts is None or self.resolve_dotted(parts) is not builtins.zip or not zipped.args:
            return None
        mapped = cst.Call(cst.Name("map"), [args[0], *zipped.args])
        self.origin[mapped] = self.origin.get(node, node)
        return self.map_call(mapped, False) if self.resolve("map") is builtins.map else None

    def _replace_call(self, node: cst.Call) -> ir.Call | None:
        """``dataclasses.replace(obj, lr=x)``: a copy of a dataclass with fields changed, as
        the helper of ``_replace`` (its rule gives each field's adjoint to one side)."""
        args = node.args
        if not args or args[0].keyword is not None or args[0].star:
            return None
        if any(a.keyword is None or a.star for a in args[1:]):
            return None
        changes = cst.Dict(
            [cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value) for a in args[1:]]
        )
        callee = ir.Callee("_ad.replace_fields", replace_fields, resolved=True)
        return ir.Call(callee, [self.atom(args[0].value), self.atom(changes)], [])

    def namedtuple_method(self, node: cst.Call) -> ir.Call | None:
        """``q._replace(b=x)`` and ``q._asdict()`` (a namedtuple's methods, whose source
        builds the result with ``map``/``zip``) as calls of helpers with rules."""
        func = node.func
        if not isinstance(func, cst.Attribute) or self.dotted(func) is not None:
            return None
        name = func.attr.value
        if name == "_asdict" and not node.args:
            callee = ir.Callee("_ad.fields_dict", fields_dict, resolved=True)
            return ir.Call(callee, [self.atom(func.value)], [])
        if name != "_replace" or not node.args or any(a.keyword is None for a in node.args):
            return None
        changes = cst.Dict(
            [
                cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value)
                for a in node.args
                if a.keyword is not None
            ]
        )
        callee = ir.Callee("_ad.replace_fields", replace_fields, resolved=True)
        return ir.Call(callee, [self.atom(func.value), self.atom(changes)], [])

    def call(self, node: cst.Call) -> ir.Expr:
        node = self.frozen_method(node) or node
        func = node.func
        if isinstance(func, cst.Call):
            made = self.factory_result_call(node)  # make_loss(t)(h)
            if made is not None:
                return made
        if isinstance(func, cst.Attribute) and func.attr.value == "piecewise":
            lowered = lower_piecewise(self, node)
            if lowered is not None:
                return lowered
        if isinstance(func, cst.Name) and func.value in self.partials:
            if func.value not in self.env:
                return self.call(expand_partial(self, node))
        if isinstance(func, cst.Name) and func.value in self.lambdas and func.value not in self.env:
            return self.inline_lambda(self.lambdas[func.value], node)
        if isinstance(func, cst.Lambda) and not self.env:
            return self.inline_lambda(func, node)
        if isinstance(func, cst.Name) and func.value in self.nested and func.value not in self.env:
            return self.inline_def(self.nested[func.value], node)
        if isinstance(func, cst.Name) and not self.env:
            inlined = factory_argument_call(self, node)
            if inlined is not None:  # ``fixed_point(make_step, a)``: see norm_passed
                return inlined
        if any(a.star for a in node.args):
            return self.star_call(node)
        if isinstance(func, cst.Attribute) and not self.env:
            made = inline_classmethod(self, node)
            if made is not None:  # Layer.init(W): a class method building through cls
                return made
        if setdefault_parts(self, node) is not None:
            return self.expression(lower_setdefault(self, node))
        fields = self.namedtuple_method(node)
        if fields is not None:
            return fields
        parts = self.dotted(func)
        if parts is not None and self.resolve_dotted(parts) is dataclasses.replace:
            replaced = self._replace_call(node)
            if replaced is not None:
                return replaced
        if parts is not None and self.resolve_dotted(parts) is dict:
            literal = self.dict_call(node)
            if literal is not None:
                return literal
            pairs = self.dict_of_pairs(node)
            if pairs is not None:
                scoped = self._scoped(pairs)
                if scoped is not None:
                    return ir.Copy(self.comprehension(scoped))
        if parts is not None and self.resolve_dotted(parts) is functools.reduce:
            folded = self.reduce_call(node)
            if folded is not None:
                return folded
        if parts is not None and self.resolve_dotted(parts) in _ORDERINGS:
            ordered = lower_ordering(self, node, self.resolve_dotted(parts))
            if ordered is not None:
                return ordered
        if parts is not None and self.resolve_dotted(parts) is itertools.accumulate:
            running = self.accumulate_call(node)
            if running is not None:
                return running
        if parts is not None and self.resolve_dotted(parts) in (itertools.chain, itertools.starmap):
            plain = self.itertools_call(node, self.resolve_dotted(parts) is itertools.chain)
            if plain is not None:
                return plain
        if parts is not None and self.resolve_dotted(parts) in (builtins.map, builtins.filter):
            listed = self.map_call(node, self.resolve_dotted(parts) is builtins.filter)
            if listed is not None:
                return listed
        if parts is not None:
            obj = self.resolve_dotted(parts)
            static = obj is not MISSING and self._stable_root(parts[0])
            if static and obj is np.apply_along_axis:
                # the loop it runs, written in Python (s2s_ad/along.py): differentiated
                # through its source and func1d's
                lowered = self._along_axis(node)
                if lowered is not None:
                    return lowered
                obj, parts = apply_along_axis, ["_ad", "apply_along_axis"]
            if static and obj in (builtins.divmod, np.divmod) and len(node.args) == 2:
                if not any(a.keyword or a.star for a in node.args):
                    return self._divmod(node)
            if (
                static
                and record_kind(obj) is not None
                and node is not self.__dict__.get("_starred")
            ):
                built = self.record_call(obj, node)  # not ``Dense(*wb)``: called as it is
                if built is not None:
                    return built
            callee = ir.Callee(".".join(parts), obj if static else None, resolved=static)
        elif isinstance(func, cst.Attribute):
            receiver = self.atom(func.value)
            callee = ir.Callee(f"{receiver}.{func.attr.value}", None, receiver, func.attr.value)
        else:
            target = self.atom(func)
            callee = ir.Callee(
                str(target), None, var=target if isinstance(target, ir.Var) else None
            )
        args: list[ir.Atom] = []
        kwargs: list[tuple[str, ir.Atom]] = []
        dispatched = getattr(callee.obj, "_s2s_dispatched", False)
        for k, arg in enumerate(node.args):
            if dispatched and k == 1 and _literal_labels(arg.value):
                # ``_ad.vjp_apply(func, ('<defaults>',), g, ...)`` of generated code: the
                # labels stay a constant, which tells whether func carries a gradient
                args.append(ir.Const(self.p.code(arg.value)))
                continue
            value = self.atom(arg.value)
            if arg.keyword is not None:
                kwargs.append((arg.keyword.value, value))
            else:
                args.append(value)
        self.argument_writes(callee.obj, node, args, kwargs)  # norm_views
        return ir.Call(callee, args, kwargs)

    def _along_axis(self, node: cst.Call) -> ir.Expr | None:
        """``np.apply_along_axis(func1d, axis, arr, *args)`` as ``along_finish(np.stack(
        [func1d(row, *args) for row in along_rows(arr, axis)]), arr, axis)`` (a one-parameter
        lambda's body in the comprehension); ``None`` when given by keyword."""
        if len(node.args) < 3 or any(a.keyword or a.star for a in node.args):
            return None
        func, axis_node, arr_node, *extra = (a.value for a in node.args)
        arr, axis = self.atom(arr_node), self.atom(axis_node)
        rows = self.fresh("_rows")
        self.temps.add(rows)
        callee = ir.Callee("_ad.along_rows", along_rows, resolved=True)
        self.assign(rows, ir.Call(callee, [arr, axis], []))
        params = func.params if isinstance(func, cst.Lambda) else None
        if (
            params is not None
            and not extra
            and len(params.params) == 1
            and not (params.posonly_params or params.kwonly_params or params.star_arg)
            and params.star_kwarg is None
        ):
            element, row = func.body, params.params[0].name
        else:
            row = cst.Name(self.fresh("_row"))
            element = cst.Call(func, [cst.Arg(row), *(cst.Arg(e) for e in extra)])
        comp = cst.ListComp(element, cst.CompFor(target=row, iter=cst.Name(rows)))
        results = self.atom(comp)
        stacked = self.fresh()
        self.temps.add(stacked)
        self.assign(stacked, ir.Call(ir.Callee("np.stack", np.stack, resolved=True), [results], []))
        callee = ir.Callee("_ad.along_finish", along_finish, resolved=True)
        return ir.Call(callee, [ir.Var(stacked), arr, axis], [])

    def _divmod(self, node: cst.Call) -> ir.Expr:
        """``divmod(a, b)`` and ``np.divmod(a, b)`` as ``(a // b, a % b)``."""
        a, b = self.atom(node.args[0].value), self.atom(node.args[1].value)
        quotient, remainder = self.fresh(), self.fresh()
        self.assign(quotient, ir.BinOp("//", a, b))
        self.assign(remainder, ir.BinOp("%", a, b))
        return ir.Build("tuple", [ir.Var(quotient), ir.Var(remainder)])

    def record_call(self, cls: type, node: cst.Call) -> ir.Expr | None:
        """``Dense(W, b)``, ``Params(W=W, b=b)``: a namedtuple, dataclass or plain class
        whose construction only stores its arguments, built as a record
        (:mod:`s2s_ad.built_objects`); ``None`` for any other class (called as it is)."""
        try:
            init_attributes(cls)
        except ValueError:
            return None
        if any(arg.star == "**" for arg in node.args):
            return None
        pieces: list[list[ir.Atom] | ir.Atom] = [[]]  # ``Dense(*wb, act=f)``: star pieces
        named: list[ir.Atom] = []
        keys: list[str] = []
        for arg in node.args:
            value = self.atom(arg.value)
            if arg.keyword is not None:
                keys.append(arg.keyword.value)
                named.append(value)
            elif arg.star == "*":
                pieces += [value, []]
            else:
                pieces[-1].append(value)  # type: ignore[union-attr]
        kind = self.atom(node.func)
        parts = self.fresh("_parts")
        if len(pieces) == 1:
            self.assign(parts, ir.Build("tuple", pieces[0] + named))  # type: ignore[operator]
        else:
            pieces[-1] += named  # type: ignore[operator]
            atoms = [p if not isinstance(p, list) else self._tuple(p) for p in pieces if p != []]
            callee = ir.Callee("_ad.pack_args", pack_args, resolved=True)
            self.assign(parts, ir.Call(callee, atoms, []))
        callee = ir.Callee("_ad.build_record", build_record, resolved=True)
        return ir.Call(callee, [kind, ir.Var(parts), ir.Const(repr(tuple(keys)))], [])

    def _tuple(self, atoms: list[ir.Atom]) -> ir.Var:
        tmp = self.fresh()
        self.temps.add(tmp)
        self.assign(tmp, ir.Build("tuple", atoms))
        return ir.Var(tmp)

    def star_call(self, node: cst.Call) -> ir.Expr:
        """``f(a, *parts, k=v, **opts)``: the positional arguments after the first star are
        packed into one sequence (``_ad.pack_args``) and the ``**`` mappings into one dict
        (``_ad.pack_kwargs``), so the call reads ``f(a, *star, k=v, **starstar)``."""

        func = node.func
        if (
            isinstance(func, cst.Name)
            and self.resolve(func.value) is zip
            and len(node.args) == 1
            and node.args[0].star == "*"
        ):
            # ``zip(*pairs)``: the transpose of a sequence of sequences

            callee = ir.Callee("_ad.unzip", unzip, resolved=True)
            return ir.Call(callee, [self.atom(node.args[0].value)], [])
        if isinstance(func, cst.Name) and (func.value in self.nested or func.value in self.lambdas):
            raise self.error("star-call of a local function", node, "define it at module level")
        parts = self.dotted(func)
        if parts is not None and self._stable_root(parts[0]):
            obj = self.resolve_dotted(parts)
            if record_kind(obj) is not None:
                built = self.record_call(obj, node)  # ``Dense(*wb)``
                if built is not None:
                    return built
        regular = node.with_changes(args=[])
        lead: list[cst.Arg] = []
        pieces: list[list[cst.Arg] | cst.BaseExpression] = []
        keywords: list[cst.Arg] = []
        mappings: list[cst.BaseExpression] = []
        for arg in node.args:
            if arg.star == "**":
                mappings.append(arg.value)
            elif arg.keyword is not None:
                keywords.append(arg)
            elif arg.star == "*":
                pieces.append(arg.value)
            elif pieces:
                if not isinstance(pieces[-1], list):
                    pieces.append([])
                pieces[-1].append(arg)  # type: ignore[union-attr]
            else:
                lead.append(arg)
        self._starred = regular.with_changes(args=[*lead, *keywords])
        call = self.call(self._starred)
        if not isinstance(call, ir.Call):
            raise self.error("this call with * or ** arguments", node)
        atoms: list[ir.Atom] = []
        for piece in pieces:
            if isinstance(piece, list):
                elements = [cst.Element(a.value) for a in piece]
                atoms.append(self.atom(cst.Tuple(elements)))
            else:
                atoms.append(self.atom(piece))
        if len(atoms) == 1 and not isinstance(pieces[0], list):
            call.star = atoms[0]
        elif atoms:
            call.star = self._packed("_args", "_ad.pack_args", pack_args, atoms)
        if len(mappings) == 1:
            call.starstar = self.atom(mappings[0])
        elif mappings:
            parts = [self.atom(m) for m in mappings]
            call.starstar = self._packed("_kwargs", "_ad.pack_kwargs", pack_kwargs, parts)
        return call

    def _packed(self, base: str, code: str, func: Any, atoms: list[ir.Atom]) -> ir.Var:
        tmp = self.fresh(base)
        self.temps.add(tmp)
        self.assign(tmp, ir.Call(ir.Callee(code, func, resolved=True), atoms, []))
        return ir.Var(tmp)
