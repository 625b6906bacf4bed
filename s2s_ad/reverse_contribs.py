"""Adjoint contributions of one assignment in the backward sweep: rules applied.

No calculus lives here either: an operator's or a call's rule (``rules/``) gives each
differentiated operand's contribution as a template filled with the user's names;
elementwise rules multiply the cotangent by their partials and sum broadcast dimensions
out only where needed; calls of Python functions run their generated backward halves.
"""

from __future__ import annotations

import math as _math
from collections.abc import Callable

from . import ir
from .analysis import Activity, classify
from .call_plans import CallPlan
from .codegen import Item, Line
from .ir import expr_atoms
from .object_state import STATE
from .rules import REGISTRY
from .rules.defaults import DEFAULTS
from .rules.operators import BINARY, UNARY
from .rules.registry import Rule, substitute
from .simplify import fold, times_partial, to_math


class Contributions:
    """The contributions half of :class:`~s2s_ad.reverse.Reverse` (a mixin of it).

    :meth:`contributions`, :meth:`apply_rule` and :meth:`call_contribs` are the hooks
    :class:`~s2s_ad.reverse_batch.BatchedReverse` overrides for batched cotangents.
    """

    fn: ir.Function
    ad: str
    np: str
    pure: bool
    variables: bool
    activity: Activity
    scalar: set[str]
    plans: dict[int, CallPlan]
    expanded: set[str]
    zero_filled: set[str]
    owned: set[str]
    dense: set[str]
    _live_now: set[str]
    token: str | None

    def bwd_assign(self, s: ir.Assign, live: set[str]) -> list[Item]:
        target = s.target
        plan = self.plans.get(id(s))
        restore: list[Item] = self.pop(s, target)
        if plan is not None and plan.aux:
            restore = self.pop(s, plan.aux) + restore
        items: list[Item] = []
        if target in self.state_seeds and target not in live and self.activity.active(target):
            # a call made for its effect on objects (object_state): its pullback runs
            items.append(Line(f"{self.bar(target)} = 0.0"))
            live.add(target)
        if target not in live or not self.activity.active(target):
            live.discard(target)
            return restore
        self._live_now = live
        if (
            target in self.expanded
            and not _elementwise(s.value)
            and not isinstance(s.value, ir.Subscript)
        ):
            # the adjoint may still carry broadcast dimensions: sum them out here
            b = self.bar(target)
            items.append(self.line(f"{b} = {self.ad}.unbroadcast({b}, {target})"))
            self.expanded.discard(target)
        pre, contribs, scatter = self.contributions(s, plan)
        items += pre
        own = contribs.pop(target, None)
        for var, parts in contribs.items():
            items += self.accumulate(var, parts, live)
        if scatter is not None:
            var, index = scatter
            b = self.bar(var)
            g = self.bar(target)
            exact = target not in self.expanded
            if var in live and b in self.dense and self._element(var, index) and exact:
                # one element of a dense 1-d adjoint (a container's entries add by structure)
                items.append(self.line(f"{b}[{index}] += {g}"))
            elif var in live:
                fn = self._owned_call(b, f"{self.ad}.add_at")
                items.append(self.line(f"{b} = {fn}({b}, {var}, {index}, {g})"))
            else:
                items.append(self.line(f"{b} = {self.ad}.add_at(0.0, {var}, {index}, {g})"))
            self.owned.add(b)
            live.add(var)
        if own is None:
            live.discard(target)
            return items + restore
        # v = v + w: the adjoint of the old v is computed once v is restored
        b = self.bar(target)
        items += restore
        total = " + ".join(own)
        if total != b:
            items.append(self.line(f"{b} = {total}"))
        return items

    def contributions(
        self, s: ir.Assign, plan: CallPlan | None
    ) -> tuple[list[Item], dict[str, list[str]], tuple[str, str] | None]:
        """Adjoint contributions of one assignment.

        Returns:
            Lines to run first (e.g. a callee's backward sweep), the contributions per
            variable in source order, and an optional scatter ``(var, index)`` for a
            subscript read.
        """
        value = s.value
        g = self.bar(s.target)
        pre: list[Item] = []
        out: dict[str, list[str]] = {}

        def add(atom: ir.Atom | None, expr: str) -> None:
            if isinstance(atom, ir.Var) and self.activity.active(atom.name):
                out.setdefault(atom.name, []).append(self.read(expr))

        if isinstance(value, ir.Copy):
            if s.target in self.expanded and isinstance(value.value, ir.Var):
                if value.value.name in self.fn.temps:
                    self.expanded.add(value.value.name)
                    add(value.value, g)
                else:
                    add(value.value, f"{self.ad}.unbroadcast({g}, {value.value.name})")
            else:
                add(value.value, g)
        elif isinstance(value, ir.BinOp):
            rule = BINARY.get(value.op)
            if rule is not None and not rule.nondiff:
                names = {"x": self.atom(value.left), "y": self.atom(value.right)}
                self.apply_rule(rule, names, s, add, [("x", value.left), ("y", value.right)])
        elif isinstance(value, ir.UnaryOp):
            rule = UNARY.get(value.op)
            if rule is not None:
                self.apply_rule(
                    rule, {"x": self.atom(value.operand)}, s, add, [("x", value.operand)]
                )
        elif isinstance(value, ir.Call):
            self.call_contribs(s, value, plan, add, pre)
        elif isinstance(value, ir.Attr):
            rule = REGISTRY.attrs.get(value.name)
            state = self.variables == STATE and self.token is None
            if state and not self.active(value.obj) and isinstance(value.obj, ir.Var):
                # object state: the adjoint goes to the attribute's slot (state_slots)
                if rule is None or rule.vjps:
                    obj = value.obj.name
                    grad = f"{self.ad}.slot_grad({obj}, {value.name!r}, {g})"
                    pre.append(self.line(self.read(grad)))
            elif self.variables and not self.active(value.obj) and (rule is None or rule.vjps):
                # the value may be a watched Variable: its adjoint goes to the tape's table
                pre.append(self.line(self.variable_grad(s.target, g)))
            elif rule is None:
                if self.active(value.obj):
                    # a namedtuple's field: an item at the field's position (else refused
                    # when the code runs, by _ad.field_index)
                    assert isinstance(value.obj, ir.Var)
                    self.read(value.obj.name)
                    if state:  # or an attribute this run stored: to its slot
                        index = f"{self.ad}.slot_index({value.obj.name}, {value.name!r}, {g})"
                    elif self.variables and self.token is None:
                        # or an object's attribute reached from an attribute read
                        # (model.layers[0].kernel): a Variable's adjoint goes to the table
                        index = f"{self.ad}.attr_index({value.obj.name}, {value.name!r}, {g})"
                    else:
                        args = self.field_index_args(value.obj.name, value.name)
                        index = f"{self.ad}.field_index{args}"
                    return pre, out, (value.obj.name, index)
            elif rule.vjps:
                self.apply_rule(rule, {"self": self.atom(value.obj)}, s, add, [("self", value.obj)])
        elif isinstance(value, ir.Subscript):
            inside = [r for r in value.index.reads if self.active(ir.Var(r))]
            # (in variables mode every name read from outside may be a Variable: an integer
            # index array such as labels would be refused, so the check stays off there)
            if inside and not self.active(value.obj) and not self.variables:
                raise self.error(
                    f"{value.obj}[...] with a differentiated value inside the brackets "
                    "(an object's __getitem__ without a gradient rule)",
                    s,
                    "use np.concatenate / np.stack, or index an array with integers",
                )
            if self.active(value.obj):
                assert isinstance(value.obj, ir.Var)
                self.read(value.obj.name + " " + value.index.code)
                return pre, out, (value.obj.name, index_value(value.index.code, self.np))
        elif isinstance(value, ir.Build):
            keys = value.keys or [str(pos) for pos in range(len(value.elts))]
            for elt, key in zip(value.elts, keys):
                if s.target in self.zero_filled or value.kind == "dict":
                    add(elt, f"{self.ad}.getitem({g}, {key})")
                else:
                    add(elt, f"{g}[{key}]")
        elif isinstance(value, ir.Opaque) and not value.truth:
            if any(self.active(ir.Var(r)) for r in value.reads):
                raise self.error(value.what, s)
        return pre, out, None

    def apply_rule(
        self,
        rule: Rule,
        names: dict[str, str],
        s: ir.Assign,
        add: Callable[[ir.Atom | None, str], None],
        atoms: list[tuple[str, ir.Atom]],
        use_math: bool = False,
    ) -> None:
        g = self.bar(s.target)
        env = {**names, "g": g, "ans": s.target, "np": self.np, "_ad": self.ad}
        scalars = all(isinstance(a, ir.Const) or a.name in self.scalar for _, a in atoms)
        for param, atom in atoms:
            if not self.active(atom):
                continue
            partial = rule.partials.get(param)
            if partial is not None and use_math:
                # a ``math`` function: floats in and out, so its derivative uses ``math`` too
                partial = to_math(partial, "np", self.helper("math", _math))
            if partial is not None:
                add(atom, self._elementwise_contrib(rule, partial, env, g, s.target, atom, scalars))
                continue
            template = rule.vjps.get(param)
            if template is None:
                if self.no_gradient(rule, param, s):
                    continue  # an axis, a shape or a flag: no gradient whatever flows in
                raise self.error(
                    f"argument '{param}' of {rule.name} (no gradient rule for it)",
                    s,
                    "wrap it in s2s_ad.stop_gradient or register a rule with s2s_ad.defgrad",
                )
            if template.strip() in ("0", "0.0"):
                continue  # the output does not depend on this argument
            if s.target in self.zero_filled:
                # the cotangent may be the symbolic zero 0.0, which matrix products refuse
                env = {**env, "g": f"{self.ad}.materialize({env['g']}, {s.target})"}
            add(atom, _fold(substitute(template, env)))

    def _elementwise_contrib(
        self,
        rule: Rule,
        partial: str,
        env: dict[str, str],
        g: str,
        target: str,
        atom: ir.Atom,
        scalars: bool = False,
    ) -> str:
        """``g * partial``, unbroadcast only where a broadcast dimension must be summed.

        A temporary (read once) may receive its adjoint with broadcast dimensions still
        in it: they are summed where it is defined (or passed on through elementwise
        operations), which keeps the backward sweep from reading operands for their shape.
        """
        p = _fold(substitute(partial, env)).strip()
        if p in ("1", "1.0"):
            raw = g
        elif p in ("-1", "-1.0"):
            raw = f"-{g}"
        elif times_partial(g, p) is not None:
            raw = times_partial(g, p)
        elif _SIMPLE_ATOM.match(p):
            raw = f"{g} * {p}"
        else:
            raw = f"{g} * ({p})"
        # operands that are all scalars broadcast nothing; the target's own adjoint may
        # still carry dimensions its consumers broadcast it to
        maybe_expanded = (len(rule.params) > 1 and not scalars) or target in self.expanded
        assert isinstance(atom, ir.Var)
        if not maybe_expanded:
            return raw
        if atom.name in self.fn.temps:
            self.expanded.add(atom.name)
            return raw
        return f"{self.ad}.unbroadcast({raw}, {atom.name})"

    def call_contribs(
        self,
        s: ir.Assign,
        call: ir.Call,
        plan: CallPlan | None,
        add: Callable[[ir.Atom | None, str], None],
        pre: list[Item],
    ) -> None:
        if plan is None:
            return
        info = plan.info
        g = self.bar(s.target)
        if info.kind in ("rule", "method"):
            assert info.rule is not None
            rule = info.rule
            bound, pairs, extra = self.bind_rule_call(rule, info.kind, call, s)
            if any(self.active(a) for a in extra):
                if "args" not in rule.vjps:
                    raise self.error(f"variadic arguments of {rule.name}", s)
                env = {**bound, "g": g, "ans": s.target, "np": self.np, "_ad": self.ad}
                tmp = self.mint("_bars")
                pre.append(self.line(f"{tmp} = {_fold(substitute(rule.vjps['args'], env))}"))
                for pos, a in enumerate(extra):
                    add(a, f"{tmp}[{pos}]")
            use_math = getattr(call.callee.obj, "__module__", None) == "math"
            self.apply_rule(rule, bound, s, add, pairs, use_math)
            return
        name = repr(getattr(call.callee.obj, "__name__", call.callee.code))
        args = "(" + "".join(f"{self.atom(a)}, " for a in call.args).rstrip(" ") + ")"
        # what a callee saved for its backward sweep may be its arguments themselves: they
        # must hold their values of the call here (restored if the caller wrote into them)
        self.read(" ".join(str(a) for a in expr_atoms(call) if isinstance(a, ir.Var)))
        if info.kind == "user":
            head = f"{plan.bwd}({plan.aux}, {g})"
            targets = [a for _, a in plan.labels]
        elif info.kind == "dynamic" and self.pure:
            labels = ", ".join(repr(label) for label, _ in plan.labels)
            labels = f"({labels},)" if len(plan.labels) == 1 else f"({labels})"
            rest = self.call_args(call)
            apply = "vjp_apply" if self.token is None else "vjp_apply_vars"
            head = f"{self.ad}.{apply}({call.callee.code}, {labels}, {g}" + (
                f", {rest})" if rest else ")"
            )
            targets = [a for _, a in plan.labels]
            if self.token is not None:  # the gradients, then the callee's token
                tmp = self.mint("_bars")
                pre.append(self.line(f"{tmp} = {head}"))
                merged = f"{self.ad}.merge_tokens({self.token}, {tmp}[{len(targets)}])"
                pre.append(self.line(f"{self.token} = {merged}"))
                for pos, a in enumerate(targets):
                    if any(isinstance(label, tuple) for label, _ in plan.labels):
                        raise self.error("a * or ** call in an inner gradient of Variables", s)
                    add(a, f"{tmp}[{pos}]")
                return
        elif info.kind == "dynamic":
            head = f"{plan.aux}({g})"
            targets = [a for _, a in plan.labels]
        elif info.kind == "custom":
            head = f"{self.ad}.rule_grads({plan.bwd}({g}, {self.call_args(call)}), {args}, {name})"
            targets = list(call.args)
        else:
            head = f"{self.ad}.rule_grads({plan.aux}({g}), {args}, {name})"
            targets = list(call.args)
        member = -1  # ``self.l1(u)``: the callee's adjoint goes to the attribute .l1
        if info.kind == "dynamic" and call.callee.method and call.callee.receiver is not None:
            member = next((k for k, (label, _) in enumerate(plan.labels) if label == DEFAULTS), -1)
        fresh = [a for a in targets if self.active(a)]
        names = [a.name for a in fresh if isinstance(a, ir.Var)]
        if not targets:
            pre.append(self.line(head))  # run for what it adds to Variables' gradients
            return
        if (
            len(fresh) == len(targets)
            and not any(isinstance(label, tuple) for label, _ in plan.labels)
            and len(set(names)) == len(names)
            and not any(n in self._live_now for n in names)
            and info.kind in ("user", "dynamic")
            and member < 0
        ):
            lhs = ", ".join(self.bar(n) for n in names) + ("," if len(names) == 1 else "")
            pre.append(self.line(f"{lhs} = {head}"))
            self._live_now.update(names)
            return
        tmp = self.mint("_bars")
        pre.append(self.line(f"{tmp} = {head}"))
        packed = {pos for pos, (label, _) in enumerate(plan.labels) if isinstance(label, tuple)}
        for pos, a in enumerate(targets):
            if info.kind == "dynamic" and pos in packed:
                # the entries of a ``*``/``**`` argument, back in its container type
                add(a, f"{self.ad}.in_container({tmp}[{pos}], {self.atom(a)})")
            elif pos == member:
                method = call.callee.method
                add(a, f"{self.ad}.member_grad({tmp}[{pos}], {self.atom(a)}, {method!r})")
            else:
                add(a, f"{tmp}[{pos}]")


_SIMPLE_ATOM = __import__("re").compile(r"^[\w.]+$")


def _elementwise(expr: ir.Expr) -> bool:
    """Whether an expression is an elementwise operation (its adjoint may stay broadcast)."""
    if isinstance(expr, ir.BinOp):
        rule = BINARY.get(expr.op)
        return rule is not None and bool(rule.partials)
    if isinstance(expr, ir.UnaryOp):
        return expr.op in UNARY
    if isinstance(expr, ir.Copy):
        return True
    if isinstance(expr, ir.Call):
        info = classify(expr)
        return info.kind == "rule" and info.rule is not None and bool(info.rule.partials)
    return False


def index_value(code: str, np_name: str) -> str:
    """An index's source as a value: ``i`` stays, ``i, 1:3`` becomes ``np.s_[i, 1:3]``."""
    if ":" in code or "," in code or "..." in code:
        return f"{np_name}.s_[{code}]"
    return code


_fold = fold
