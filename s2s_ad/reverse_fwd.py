"""The reverse pass's forward sweep: the primal, with the values it overwrites recorded.

Each assignment site the recording plan (:mod:`s2s_ad.records`) marks is preceded by a
``Push`` of the old value (emission drops the pushes nobody pops); loops count their
trips; calls planned in :mod:`s2s_ad.reverse_calls` run their forward halves and keep
their residuals.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from . import ir
from .call_plans import CallPlan
from .codegen import Item, Line, Push, Suite
from .object_state import STATE
from .records import RecordPlan


class RecordingSweep:
    """The forward-sweep half of :class:`~s2s_ad.reverse.Reverse` (a mixin of it)."""

    ad: str
    pure: bool
    plans: dict[int, CallPlan]
    records: RecordPlan
    _counting_at_end: list[str | None]

    def fwd_block(self, stmts: list[ir.Stmt]) -> list[Item]:
        return self.commented(stmts, self.fwd_stmt)

    def push(self, stmt: ir.Stmt, var: str) -> Push:
        return Push(var, self.records.site(stmt, var))

    def fwd_stmt(self, s: ir.Stmt) -> list[Item]:
        if isinstance(s, ir.Assign):
            items: list[Item] = [self.push(s, s.target)]
            plan = self.plans.get(id(s))
            if plan is not None and plan.aux:
                items.append(self.push(s, plan.aux))
            items.append(Line(self.fwd_assign(s, plan), self.fwd_assign_tree(s, plan)))
            return items
        if isinstance(s, ir.Unpack):
            items = [self.push(s, t) for t in s.targets]
            lhs = ", ".join(s.targets) + ("," if len(s.targets) == 1 else "")
            return [*items, Line(f"{lhs} = {self.atom(s.value)}")]
        if isinstance(s, ir.Append):
            return [Line(f"{s.obj}.append({self.atom(s.value)})")]
        if isinstance(s, ir.ListPop):
            return [
                self.push(s, s.target),
                Line(f"{s.target} = {s.obj}.pop()"),
                Push(s.target, self.records.site(s, s.obj)),  # the element, to put back
            ]
        if isinstance(s, ir.SetItem):
            if s.restore or self._keyed(s.obj, s.index.code):
                old = f"{self.ad}.old_item({s.obj}, {s.index.code})"
            else:
                old = f"{self.ad}.copy({s.obj}[{s.index.code}])"
                if self._element(s.obj, s.index.code):
                    old = f"{s.obj}[{s.index.code}]"  # an element of a 1-d array is a copy
            write = f"{s.obj}[{s.index.code}] = {self.atom(s.value)}"
            if s.restore:  # ``del d[key]``, or a backward sweep's undo differentiated again
                value = self.helper_atom(s.value)
                write = f"{self.ad}.restore_item({s.obj}, {s.index.code}, {value})"
            return [Push(old, self.records.site(s, s.obj)), Line(write)]
        if isinstance(s, ir.ExprStmt):
            if isinstance(s.value, ir.Opaque):
                return [Line(s.value.code)]
            if self._state_write(s) and s.value.callee.method == "add_loss":
                value = self.atom(s.value.args[0]) if len(s.value.args) == 1 else "None"
                if self.token is not None:  # pure code: refused when a float is stored
                    check = f"{self.ad}.check_state_call({s.value.callee.code}, {value})"
                    return [Line(check), Line(self.render_expr(s.value))]
                # a loss the model collects: its later reads go to the tape's table
                return [Line(f"{self.ad}.note_stored({value})"), Line(self.render_expr(s.value))]
            if self._state_write(s):
                args = ", ".join(self.atom(a) for a in s.value.args)
                # outside pure code, a float value's later reads go to the tape's table
                store = "set_attribute" if self.token is not None else "store_attribute"
                if store == "store_attribute" and self.variables == STATE:
                    store = "store_slot"  # object state: the attribute is a slot
                return [Line(f"{self.ad}.{store}({args})")]
            if self._state_call(s):
                varied = [self.atom(a) for a in s.value.args if self._varied(a)]
                check = f"{self.ad}.check_state_call({', '.join([s.value.callee.code, *varied])})"
                return [Line(check), Line(self.render_expr(s.value))]
            return [Line(self.render_expr(s.value))]
        if isinstance(s, ir.If):
            if s.guard:
                return self.fwd_block(s.orelse)
            return [
                Suite(f"if {self.atom(s.test)}:", self.fwd_block(s.body), self.fwd_block(s.orelse))
            ]
        if isinstance(s, ir.For):
            return self.fwd_for(s)
        if isinstance(s, ir.While):
            return self.fwd_while(s)
        if isinstance(s, ir.Break):
            return [Line("break")]
        if isinstance(s, ir.Continue):
            if self._counting_at_end and self._counting_at_end[-1]:
                return [Line(f"{self._counting_at_end[-1]} += 1"), Line("continue")]
            return [Line("continue")]
        if isinstance(s, ir.Pass):
            return []
        raise self.error(type(s).__name__, s)

    def counted_body(
        self, s: ir.For | ir.While, block: Callable[[list[ir.Stmt]], list[Item]]
    ) -> list[Item]:
        """A loop's forward body with its trip count: taken at the start of each trip, or
        at its end and before each ``continue`` when the breaking trip is not reversed
        (``loop_exits``)."""
        trips = s.trips
        at_end = bool(trips) and id(s) in self._quiet_loops()
        self._counting_at_end.append(trips if at_end else None)
        body = block(s.body)
        self._counting_at_end.pop()
        if not trips:
            return body
        count = Line(f"{trips} += 1")
        return [*body, count] if at_end else [count, *body]

    def fwd_assign(self, s: ir.Assign, plan: CallPlan | None) -> str:
        value = s.value
        if plan is None or not isinstance(value, ir.Call):
            return f"{s.target} = {self.render_expr(value)}"
        kind = plan.info.kind
        if kind == "user":
            return f"{s.target}, {plan.aux} = {plan.fwd}({self.call_args(value)})"
        if kind == "dynamic" and self.pure:
            # differentiated again: the pullback is recomputed in the backward sweep by
            # _ad.vjp_apply, which has a derivative (a closure would not)
            return f"{s.target} = {self.render_expr(value)}"
        if kind == "dynamic":
            labels = ", ".join(repr(label) for label, _ in plan.labels)
            labels = f"({labels},)" if len(plan.labels) == 1 else f"({labels})"
            args = self.call_args(value)
            return f"{s.target}, {plan.aux} = {self.ad}.vjp_call({value.callee.code}, {labels}" + (
                f", {args})" if args else ")"
            )
        if kind == "custom_gradient":
            return f"{s.target}, {plan.aux} = {value.callee.code}.forward({self.call_args(value)})"
        return f"{s.target} = {self.render_expr(value)}"

    def fwd_assign_tree(
        self, s: ir.Assign, plan: CallPlan | None
    ) -> Callable[[], list[ast.stmt] | None] | None:
        """What builds ``fwd_assign``'s statement as a tree, where its text is the
        target and the right-hand side (see ``SweepBase.assign_tree``)."""
        value = s.value
        if plan is not None and isinstance(value, ir.Call):
            kind = plan.info.kind
            if kind in ("user", "custom_gradient") or (kind == "dynamic" and not self.pure):
                return None
        return self.assign_tree(s.target, value)

    def fwd_for(self, s: ir.For) -> list[Item]:
        items: list[Item] = [self.push(s, s.target)]
        trips = getattr(s, "trips", None)
        if trips:
            items += [self.push(s, trips), Line(f"{trips} = 0")]
        args = ", ".join(self.atom(a) for a in (s.range_args or []))
        body = self.counted_body(s, self.fwd_block)
        items.append(Suite(f"for {s.target} in range({args}):", body, keep_empty=True))
        return items

    def fwd_while(self, s: ir.While) -> list[Item]:
        trips = s.trips
        items: list[Item] = [self.push(s, trips), Line(f"{trips} = 0")]
        test = self.fwd_block(s.test_body)
        body = self.counted_body(s, self.fwd_block)
        if not test:
            items.append(Suite(f"while {self.atom(s.test)}:", body))
        else:
            guard = Suite(f"if not {self.atom(s.test)}:", [Line("break")])
            items.append(Suite("while True:", [*test, guard, *body]))
        return items
