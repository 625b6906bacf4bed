"""Reverse mode: the forward sweep (with tape pushes) and the backward sweep.

No calculus lives here: each statement's adjoint comes from a rule in ``rules/`` whose
template is filled with the user's names. The pass tracks which adjoints are live (a
first contribution is an assignment, later ones accumulate), restores overwritten
values from the tape (only those the backward sweep reads) and reverses branches and
loops using recorded trip counts and branch conditions.
"""

from __future__ import annotations

import ast
import math as _math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import ir
from .analysis import classify, outside_names, walk
from .call_plans import CallPlan
from .codefacts import pure
from .codegen import Comment, Item, Line, Pop, Push, Suite, identifiers
from .normalize import expr_atoms
from .records import JUMP, RECOMPUTE, RecordPlan
from .reverse_calls import plan_calls
from .rules import REGISTRY
from .rules.operators import BINARY, UNARY
from .rules.registry import Rule, substitute
from .simplify import fold, to_math
from .stmt_facts import children, count, indexed_vars, stmt_reads, stmt_writes
from .sweep_base import STRUCTURAL, Resolver, SweepBase
from .value_kinds import scalar_call, vector_vars

_NUMERIC_OPS = {"+", "-", "*", "/", "**", "@", "%"}
#: ``a = ...`` or ``a, b = ...``: the names a plain assignment binds.
_BINDING = re.compile(r"\s*((?:[^\W\d]\w*\s*,\s*)*[^\W\d]\w*\s*,?)\s*=(?!=)")


@dataclass
class Sweeps:
    """The result of the reverse pass, ready for emission."""

    fwd: list[Item]
    bwd: list[Item]
    pushed: set[int]
    saved: list[str]
    grads: list[str]
    output: str
    seed_name: str
    bindings: dict[str, Any]
    none_init: list[str]
    uses_tape: bool
    copies: list[str]
    none_saved: list[str]
    restored: set[str]


class Reverse(SweepBase):
    """Builds both sweeps for one function and one set of ``wrt`` parameters."""

    def __init__(
        self,
        fn: ir.Function,
        wrt: list[str],
        resolver: Resolver,
        has_aux: bool = False,
        scalars: frozenset[str] = frozenset(),
        user_globals: dict[str, Any] | None = None,
        vectors: frozenset[str] = frozenset(),
        pure: bool = False,
        variables: bool = False,
    ) -> None:
        super().__init__(
            fn, wrt, resolver, has_aux, scalars, user_globals, vectors, pure, variables
        )
        self._bars: dict[str, str] = {}
        self.plans: dict[int, CallPlan] = {}
        self.reads: set[str] = set()
        self.zero_filled: set[str] = set()
        self.expanded: set[str] = set()
        self.owned: set[str] = set()
        self.dense: set[str] = set()
        self._live_now: set[str] = set()
        self.reads_at: dict[int, set[str]] = {}
        self.cur = -1
        self._enclosing: tuple[int, str] | None = None
        self.tape = self.mint("_tape")
        body = self.body
        self.numeric = self._numeric_vars()
        self.vectors = vector_vars(self.body, set(fn.params), vectors)
        self.dicts = {
            s.target
            for s in walk(self.body)
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Build) and s.value.kind == "dict"
        }
        self.remat = self._rematerializable()
        writes = (ir.SetItem, ir.Append, ir.ListPop)
        self.mutated = {s.obj for s in walk(body) if isinstance(s, writes)}

    def call_plans(self) -> dict[int, CallPlan]:
        return self.plans

    def arrange_pushes(self, items: list[Item]) -> list[Item]:
        return hoist_pushes(items, self.tape)

    # --- names -----------------------------------------------------------------------

    def bar(self, var: str) -> str:
        if var not in self._bars:
            self._bars[var] = self.mint(f"{var}_bar")
        return self._bars[var]

    def _numeric_vars(self) -> set[str]:
        numeric: set[str] = set()
        for s in walk(self.body):
            if isinstance(s, ir.Assign):
                v = s.value
                if isinstance(v, (ir.BinOp, ir.UnaryOp)) and (
                    getattr(v, "op", "") in _NUMERIC_OPS or isinstance(v, ir.UnaryOp)
                ):
                    numeric.add(s.target)
                    numeric.update(a.name for a in expr_atoms(v) if isinstance(a, ir.Var))
                elif isinstance(v, ir.Call) and classify(v).kind in ("rule", "method"):
                    rule = classify(v).rule
                    if rule is not None and rule.partials:
                        numeric.add(s.target)
                        numeric.update(a.name for a in v.args if isinstance(a, ir.Var))
        return numeric

    def _rematerializable(self) -> dict[str, str]:
        """Temporaries the backward sweep recomputes instead of recording (``x[i]``, ``a.T``).

        Valid when none of the operands is reassigned between the temporary's definition
        and its last reader (the tape restores them everywhere else); recomputing is
        cheaper than a push and a pop, and reads better.
        """
        counts: dict[str, int] = {}
        for st in walk(self.body):
            for var in self.assigned(st):
                counts[var] = counts.get(var, 0) + 1
        out: dict[str, str] = {}
        base: dict[str, set[str]] = {}

        def scan(stmts: list[ir.Stmt], in_loop: bool) -> None:
            for k, st in enumerate(stmts):
                for inner in children(st):
                    scan(inner, in_loop or isinstance(st, (ir.For, ir.While)))
                if not isinstance(st, ir.Assign) or st.target not in self.fn.all_temps:
                    continue
                if counts.get(st.target) != 1:
                    continue
                value = st.value
                if isinstance(value, ir.Subscript) and isinstance(value.obj, ir.Var):
                    text = f"{value.obj.name}[{value.index.code}]"
                    operands = {value.obj.name, *value.index.reads}
                elif isinstance(value, ir.Attr) and isinstance(value.obj, ir.Var):
                    text = f"{value.obj.name}.{value.name}"
                    operands = {value.obj.name}
                elif (
                    isinstance(value, (ir.BinOp, ir.UnaryOp, ir.Compare))
                    and st.target in self.scalar
                    and in_loop
                ):
                    # scalar arithmetic (and a comparison) costs less to redo than to record
                    text = f"({self.render_expr(value)})"
                    operands = {a.name for a in expr_atoms(value) if isinstance(a, ir.Var)}
                elif (
                    isinstance(value, ir.Call)
                    and st.target in self.scalar
                    and in_loop
                    and scalar_call(value, self._scalar_atom)
                ):
                    # so does a math function of scalars (a tape entry per trip saved)
                    text = self.render_expr(value)
                    operands = {a.name for a in value.args if isinstance(a, ir.Var)}
                else:
                    continue
                # a recomputed operand brings its own operands along
                operands = set().union(*(base.get(v, {v}) for v in operands))
                later = stmts[k + 1 :]
                last = max(
                    (j for j, t in enumerate(later) if st.target in stmt_reads(t)), default=-1
                )
                written = set()
                for t in later[: last + 1]:
                    written |= stmt_writes(t, self.assigned)
                if not written & operands:
                    out[st.target] = text
                    base[st.target] = operands

        scan(self.body, False)
        for name in list(out):
            out[name] = _subst_names(out[name], out)
        return out

    def _scalar_atom(self, atom: ir.Atom) -> bool:
        return not isinstance(atom, ir.Var) or atom.name in self.scalar

    # --- sites (which assignments may overwrite a value) -------------------------------

    # --- driver -------------------------------------------------------------------------

    def run(self) -> Sweeps:
        self.plans = plan_calls(self)
        self.records = RecordPlan(self.body, self.fn.params, self.assigned)
        fwd = self.fwd_block(self.body)
        live: set[str] = set()
        bwd: list[Item] = []
        seed = self.bar(self.output)
        if self.activity.active(self.output):
            live.add(self.output)
        bwd += self.bwd_block(self.body, live)
        if self.variables:
            # globals read here may be watched Variables: hand their adjoints to the tape
            for name in sorted(outside_names(self.fn) & live):
                bwd.append(self.line(f"{self.ad}.variable_grad({name}, {self.bar(name)})"))
        grads = []
        for p in self.wrt:
            if p in live:
                grads.append(self.bar(p))
            else:
                grads.append(f"{self.ad}.zeros_like({p})")
                self.cur = -1
                self.read(p)
        pushed = {
            site
            for site in self.records.site_info
            if self.records.needs_push(site, self.reads, self.reads_at)
        }
        restored = self.records.restores(pushed, self.reads_at)
        none_init = sorted(
            {
                self.records.site_info[s].var
                for s in pushed
                if not self.records.site_info[s].definite
            }
            - set(self.fn.params)
        )
        primal = self._primal_names()
        saved = sorted((self.reads & primal) - {self.tape})
        definite_end = self._definite_at_end()
        none_saved = sorted(set(saved) - definite_end - set(self.fn.params) - set(none_init))
        copies = sorted(self.mutated & set(self.fn.params))
        return Sweeps(
            fwd,
            bwd,
            pushed | restored,
            saved,
            grads,
            self.output,
            seed,
            self.bindings,
            none_init,
            bool(pushed),
            copies,
            none_saved,
            {self.records.site_info[p].var for p in pushed},
        )

    def _definite_at_end(self) -> set[str]:
        definite = set(self.fn.params)
        for s in self.body:
            if isinstance(s, ir.If):
                a = {v for t in walk(s.body) for v in self.assigned(t)}
                b = {v for t in walk(s.orelse) for v in self.assigned(t)}
                definite |= a & b
            elif isinstance(s, ir.For):
                definite.update(v for v in (s.trips,) if v)
            elif isinstance(s, ir.While):
                definite.add(s.trips)
            else:
                definite.update(self.assigned(s))
        return definite

    # --- forward sweep -------------------------------------------------------------------

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
            items.append(Line(self.fwd_assign(s, plan)))
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
            if self._keyed(s.obj, s.index.code):
                old = f"{self.ad}.old_item({s.obj}, {s.index.code})"
            else:
                old = f"{self.ad}.copy({s.obj}[{s.index.code}])"
                if self._element(s.obj, s.index.code):
                    old = f"{s.obj}[{s.index.code}]"  # an element of a 1-d array is a copy
            return [
                Push(old, self.records.site(s, s.obj)),
                Line(f"{s.obj}[{s.index.code}] = {self.atom(s.value)}"),
            ]
        if isinstance(s, ir.ExprStmt):
            if isinstance(s.value, ir.Opaque):
                return [Line(s.value.code)]
            if self._state_write(s):
                args = ", ".join(self.atom(a) for a in s.value.args)
                return [Line(f"{self.ad}.set_attribute({args})")]
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
            return [Line("continue")]
        if isinstance(s, ir.Pass):
            return []
        raise self.error(type(s).__name__, s)

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

    def fwd_for(self, s: ir.For) -> list[Item]:
        items: list[Item] = [self.push(s, s.target)]
        trips = getattr(s, "trips", None)
        if trips:
            items += [self.push(s, trips), Line(f"{trips} = 0")]
        args = ", ".join(self.atom(a) for a in (s.range_args or []))
        body = self.fwd_block(s.body)
        if trips:
            body.insert(0, Line(f"{trips} += 1"))
        items.append(Suite(f"for {s.target} in range({args}):", body, keep_empty=True))
        return items

    def fwd_while(self, s: ir.While) -> list[Item]:
        trips = s.trips
        items: list[Item] = [self.push(s, trips), Line(f"{trips} = 0")]
        test = self.fwd_block(s.test_body)
        body = [Line(f"{trips} += 1"), *self.fwd_block(s.body)]
        if not test:
            items.append(Suite(f"while {self.atom(s.test)}:", body))
        else:
            guard = Suite(f"if not {self.atom(s.test)}:", [Line("break")])
            items.append(Suite("while True:", [*test, guard, *body]))
        return items

    # --- backward sweep ------------------------------------------------------------------

    def read(self, text: str) -> str:
        if self.remat:
            text = _subst_names(text, self.remat)
        names = identifiers(text)
        self.reads |= names
        self.reads_at.setdefault(self.cur, set()).update(names)
        return text

    def line(self, text: str) -> Line:
        text = self.read(text)
        lhs, sep, rhs = text.partition(" = ")
        in_place = rhs.startswith(
            (f"{self.ad}.add_at_owned({lhs},", f"{self.ad}.zero_at_owned({lhs},")
        )
        if sep and lhs in self.dense and not in_place:
            self.dense.discard(lhs)  # rebound: no longer the dense array made for a loop
        if sep and self.owned:
            # an adjoint mentioned on a right-hand side may be aliased from now on
            prefixes = tuple(
                f"{self.ad}.{fn}({lhs},"
                for fn in ("add_at", "zero_at", "add_at_owned", "zero_at_owned")
            )
            keep = lhs if rhs.startswith((*prefixes, f"{lhs} + ")) else None
            if rhs.startswith(f"{self.ad}.getitem(") and lhs != identifiers(rhs):
                # getitem copies: it never aliases the adjoint it reads
                keep = rhs[len(self.ad) + 9 :].split(",", 1)[0]
            for name in identifiers(rhs) & self.owned:
                if name != keep:
                    self.owned.discard(name)
        return Line(text)

    def _owned_call(self, b: str, call: str) -> str:
        """``add_at``/``zero_at`` in place when ``b`` owns its array, else on a copy."""
        return f"{call}_owned" if b in self.owned and not self.pure else call

    def bwd_block(self, stmts: list[ir.Stmt], live: set[str]) -> list[Item]:
        out: list[Item] = []
        last = outer_key = self._enclosing
        outer = self.cur
        for s in reversed(stmts):
            self.cur = self.records.pos[id(s)]
            self._enclosing = (s.line, s.src)
            items = self.bwd_stmt(s, live)
            self._enclosing = last if last is not None else None
            self.cur = self.records.pos[id(s)]
            if not items:
                continue
            key = (s.line, s.src)
            has_code = any(not isinstance(i, (Pop,)) for i in items)
            if has_code and key != last and s.src:
                out.append(Comment(f"# L{s.line}: {s.src}"))
                last = key
            out.extend(items)
        self.cur = outer
        self._enclosing = outer_key
        return out

    def accumulate(self, var: str, contribs: list[str], live: set[str]) -> list[Item]:
        if not contribs:
            return []
        b = self.bar(var)
        total = " + ".join(contribs)
        if var in live:
            if var in self.numeric:
                if b in self.owned and not self.pure:
                    # b holds an array no other name shares: add in place
                    return [self.line(f"{b} += {total}")]
                # one statement's contributions summed first: ``e + e`` (``x * x``) then
                # merges exactly into ``2 * e``
                summed = f"({total})" if len(contribs) > 1 else total
                line = self.line(f"{b} = {b} + {summed}")
                self.owned.add(b)
                return [line]
            return [self.line(f"{b} = {self.ad}.add({b}, {total})")]
        live.add(var)
        line = self.line(f"{b} = {total}")
        self.owned.discard(b)
        return [line]

    def bwd_stmt(self, s: ir.Stmt, live: set[str]) -> list[Item]:
        if isinstance(s, ir.Assign):
            return self.bwd_assign(s, live)
        if isinstance(s, ir.Unpack):
            return self.bwd_unpack(s, live)
        if isinstance(s, ir.SetItem):
            return self.bwd_setitem(s, live)
        if isinstance(s, ir.Append):
            return self.bwd_append(s, live)
        if isinstance(s, ir.ListPop):
            return self.bwd_list_pop(s, live)
        if isinstance(s, ir.If):
            return self.bwd_if(s, live)
        if isinstance(s, ir.For):
            return self.bwd_for(s, live)
        if isinstance(s, ir.While):
            return self.bwd_while(s, live)
        if isinstance(s, ir.ExprStmt):
            self._check_discarded_call(s)
            return []
        return []

    def pop(self, s: ir.Stmt, var: str) -> list[Item]:
        site = self.records.site(s, var)
        if self.records.site_info[site].kind == "jump":
            if site in self.records.exit_sites():
                return []  # set back to false at the end of the backward trip
            return [Pop(var, JUMP + site, f"{var} = False")]
        return [Pop(var, site)]

    def exit_restores(self, s: ir.For | ir.While) -> list[Item]:
        """``flag = False`` for the exit flags of loop ``s``, ending each backward trip."""
        body = s.body if isinstance(s, ir.For) else s.test_body + s.body
        p = self.records.pos[id(s)]
        span = (p + 1, p + count(body))
        items: list[Item] = []
        seen: set[str] = set()
        for site, inner in sorted(self.records.exit_sites().items()):
            var = self.records.site_info[site].var
            if inner == span and var not in seen:
                seen.add(var)
                items.append(Pop(var, JUMP + site, f"{var} = False"))
        return items

    def recompute_elements(self, body: list[ir.Stmt]) -> list[Item]:
        """``x = xs[k]`` for the loop variables the backward trip reads (no tape needed)."""
        items: list[Item] = []
        for st in body:
            if isinstance(st, ir.Assign) and st.kind == "element":
                site = self.records.site(st, st.target)
                if self.records.site_info[site].kind != "element":
                    continue
                value = self.read(self.render_expr(st.value))
                items.append(Pop(st.target, RECOMPUTE + site, f"{st.target} = {value}"))
        return items

    def bwd_assign(self, s: ir.Assign, live: set[str]) -> list[Item]:
        target = s.target
        plan = self.plans.get(id(s))
        restore: list[Item] = self.pop(s, target)
        if plan is not None and plan.aux:
            restore = self.pop(s, plan.aux) + restore
        if target not in live or not self.activity.active(target):
            live.discard(target)
            return restore
        self._live_now = live
        items: list[Item] = []
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
                self._apply_rule(rule, names, s, add, [("x", value.left), ("y", value.right)])
        elif isinstance(value, ir.UnaryOp):
            rule = UNARY.get(value.op)
            if rule is not None:
                self._apply_rule(
                    rule, {"x": self.atom(value.operand)}, s, add, [("x", value.operand)]
                )
        elif isinstance(value, ir.Call):
            self._call_contribs(s, value, plan, add, pre)
        elif isinstance(value, ir.Attr):
            rule = REGISTRY.attrs.get(value.name)
            if self.variables and not self.active(value.obj) and (rule is None or rule.vjps):
                # the value may be a watched Variable: its adjoint goes to the tape's table
                pre.append(self.line(f"{self.ad}.variable_grad({s.target}, {g})"))
            elif rule is None:
                if self.active(value.obj):
                    # a namedtuple's field: an item at the field's position (else refused
                    # when the code runs, by _ad.field_index)
                    assert isinstance(value.obj, ir.Var)
                    self.read(value.obj.name)
                    index = f"{self.ad}.field_index({value.obj.name}, {value.name!r})"
                    return pre, out, (value.obj.name, index)
            elif rule.vjps:
                self._apply_rule(
                    rule, {"self": self.atom(value.obj)}, s, add, [("self", value.obj)]
                )
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
                return pre, out, (value.obj.name, _index_value(value.index.code, self.np))
        elif isinstance(value, ir.Build):
            keys = value.keys or [str(pos) for pos in range(len(value.elts))]
            for elt, key in zip(value.elts, keys):
                if s.target in self.zero_filled or value.kind == "dict":
                    add(elt, f"{self.ad}.getitem({g}, {key})")
                else:
                    add(elt, f"{g}[{key}]")
        elif isinstance(value, ir.Opaque):
            if any(self.active(ir.Var(r)) for r in value.reads):
                raise self.error(value.what, s)
        return pre, out, None

    def _apply_rule(
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
                if param in STRUCTURAL:
                    continue  # an index, axis or shape: an integer whatever flows into it
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

    def _call_contribs(
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
            self._apply_rule(rule, bound, s, add, pairs, use_math)
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
            head = f"{self.ad}.vjp_apply({call.callee.code}, {labels}, {g}" + (
                f", {rest})" if rest else ")"
            )
            targets = [a for _, a in plan.labels]
        elif info.kind == "dynamic":
            head = f"{plan.aux}({g})"
            targets = [a for _, a in plan.labels]
        elif info.kind == "custom":
            head = f"{self.ad}.rule_grads({plan.bwd}({g}, {self.call_args(call)}), {args}, {name})"
            targets = list(call.args)
        else:
            head = f"{self.ad}.rule_grads({plan.aux}({g}), {args}, {name})"
            targets = list(call.args)
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
            else:
                add(a, f"{tmp}[{pos}]")

    def zero(self, var: str, dense: bool = False) -> Line:
        b = self.bar(var)
        self.zero_filled.add(var)
        self.owned.add(b)
        if dense and not self.pure:
            self.dense.add(b)
            return self.line(f"{b} = {self.ad}.dense(0.0, {var})")
        self.dense.discard(b)
        return Line(f"{b} = 0.0")

    def bwd_unpack(self, s: ir.Unpack, live: set[str]) -> list[Item]:
        pops: list[Item] = [p for t in reversed(s.targets) for p in self.pop(s, t)]
        parts = [
            self.bar(t) if t in live and self.activity.active(t) else "None" for t in s.targets
        ]
        for t in s.targets:
            live.discard(t)
        if not self.active(s.value) or all(p == "None" for p in parts):
            return pops
        assert isinstance(s.value, ir.Var)
        inner = ", ".join(parts) + ("," if len(parts) == 1 else "")
        expr = self.read(f"{self.ad}.pack({s.value.name}, ({inner}))")
        return self.accumulate(s.value.name, [expr], live) + pops

    def bwd_setitem(self, s: ir.SetItem, live: set[str]) -> list[Item]:
        site = self.records.site(s, s.obj)
        # the undo reads the index (recomputed temporaries spelled out, as everywhere in
        # the backward sweep) and must reach this very array
        index = self.read(s.index.code)
        pop = Pop(f"{s.obj}[{index}]", site)
        if self.records.shared_with_recorded(site, None):
            self.read(s.obj)
        if self._keyed(s.obj, s.index.code):
            pop.text = f"{self.ad}.restore_item({s.obj}, {index}, {self.tape}.pop())"
        items: list[Item] = []
        if s.obj in live and self.activity.active(s.obj):
            b = self.bar(s.obj)
            index = _index_value(s.index.code, self.np)
            self.read(s.index.code)
            if self.active(s.value):
                assert isinstance(s.value, ir.Var)
                if self._element(s.obj, index) and b in self.dense:
                    # one element of a dense 1-d adjoint: a scalar, a copy, exact
                    part = f"{b}[{index}]"
                else:
                    part = f"{self.ad}.getitem({b}, {index})"
                    if s.value.name in self.fn.temps:
                        self.expanded.add(s.value.name)
                    else:
                        part = f"{self.ad}.unbroadcast({part}, {s.value.name})"
                items += self.accumulate(s.value.name, [self.read(part)], live)
            if b in self.dense and self._int_index(index):
                items.append(self.line(f"{b}[{index}] = 0.0"))
            else:
                fn = self._owned_call(b, f"{self.ad}.zero_at")
                items.append(self.line(f"{b} = {fn}({b}, {index})"))
                self.owned.add(b)
        return [*items, pop]

    def bwd_append(self, s: ir.Append, live: set[str]) -> list[Item]:
        undo = Pop(s.obj, self.records.site(s, s.obj), f"{s.obj}.pop()")
        if s.obj not in live or not self.activity.active(s.obj):
            return [undo]
        b = self.bar(s.obj)
        items: list[Item] = []
        if self.active(s.value):
            assert isinstance(s.value, ir.Var)
            items += self.accumulate(s.value.name, [f"{self.ad}.getitem({b}, -1)"], live)
        items.append(self.line(f"{b} = {self.ad}.drop_last({b})"))
        return [*items, undo]

    def bwd_list_pop(self, s: ir.ListPop, live: set[str]) -> list[Item]:
        undo: list[Item] = [
            Pop(s.obj, self.records.site(s, s.obj), f"{s.obj}.append({self.tape}.pop())"),
            *self.pop(s, s.target),
        ]
        took = s.target in live and self.activity.active(s.target)
        items: list[Item] = []
        if (took or s.obj in live) and self.activity.active(s.obj):
            b = self.bar(s.obj)
            acc = b if s.obj in live else "0.0"
            last = self.bar(s.target) if took else "None"
            items.append(self.line(f"{b} = {self.ad}.append_bar({acc}, {s.obj}, {last})"))
            live.add(s.obj)
        live.discard(s.target)
        return [*items, *undo]

    def _fixpoint(self, stmts: list[ir.Stmt], live: set[str]) -> tuple[list[Item], set[str]]:
        """Backward sweep of a loop body whose live adjoints are the same on every trip."""
        head = set(live)
        entry_owned = set(self.owned)
        entry_dense = set(self.dense)
        indexed = indexed_vars(stmts)
        lost: set[str] = set()
        lost_dense: set[str] = set()
        while True:
            owned_head = (entry_owned | {self.bar(v) for v in head - live}) - lost
            dense_head = entry_dense | {self.bar(v) for v in (head - live) & indexed}
            dense_head = (dense_head & owned_head) - lost_dense
            if self.pure:
                dense_head = set()
            saved = (
                set(self.reads),
                set(self.reserved),
                set(self.zero_filled),
                {k: set(v) for k, v in self.reads_at.items()},
                set(self.expanded),
            )
            end = set(head)
            self.owned = set(owned_head)
            self.dense = set(dense_head)
            items = self.bwd_block(stmts, end)
            zeros = {self.bar(v) for v in head - end}
            owned_end = self.owned | zeros
            dense_end = self.dense | {self.bar(v) for v in (head - end) & indexed}
            if end <= head and owned_head <= owned_end and dense_head <= dense_end:
                break
            head |= end
            lost |= owned_head - owned_end
            lost_dense |= dense_head - dense_end
            self.reads, self.reserved, self.zero_filled, self.reads_at, self.expanded = saved
        items += [self.zero(v, v in indexed) for v in sorted(head - end)]
        # after the loop the adjoints are in their loop-head state (the body may run 0 times)
        self.owned = owned_head
        self.dense = dense_head
        return items, head

    def bwd_if(self, s: ir.If, live: set[str]) -> list[Item]:
        left, right = set(live), set(live)
        owned, dense = set(self.owned), set(self.dense)
        body = self.bwd_block(s.body, left)
        owned_left, dense_left = self.owned, self.dense
        self.owned, self.dense = set(owned), set(dense)
        orelse = self.bwd_block(s.orelse, right)
        owned_right, dense_right = self.owned, self.dense
        union = left | right
        filled_left, filled_right = sorted(union - left), sorted(union - right)
        body += [self._zero_line(v) for v in filled_left]
        orelse += [self._zero_line(v) for v in filled_right]
        # after the branch an adjoint is owned (dense) only if both branches leave it so;
        # a zero fill owns its 0.0 and is not dense
        bars_left = {self.bar(v) for v in filled_left}
        bars_right = {self.bar(v) for v in filled_right}
        self.owned = (owned_left | bars_left) & (owned_right | bars_right)
        self.dense = (dense_left - bars_left) & (dense_right - bars_right)
        live.clear()
        live.update(union)
        return [Suite(self.read(f"if {self._backward_test(s)}:"), body, orelse)]

    def _backward_test(self, s: ir.If) -> str:
        """The test that picks the branch to reverse: the forward test, or what tells the
        same at no cost on the tape.

        An ``if`` whose branch always leaves the trip sets a jump flag there and nowhere
        else: the flag is true exactly when the test was. An exit flag (``break``: true on
        the last trip only, see ``RecordPlan.exit_sites``) stands for the test; a ``continue``
        flag's guard reads the test instead, when the guarded statements change neither
        the test nor what it is recomputed from.
        """
        exits = {self.records.site_info[site].var for site in self.records.exit_sites()}
        flags = self.records.jump_ifs()
        for flag in flags.get(id(s), ()):
            if flag in exits:
                return flag
        test = s.test
        if s.guard and isinstance(test, ir.Var) and test.name not in exits:
            jump = self.records.flag_if().get(test.name)
            if jump is not None and isinstance(jump.test, ir.Var):
                name = jump.test.name
                needed = {name} | identifiers(self.remat.get(name, ""))
                written: set[str] = set()
                for st in walk(s.orelse):
                    written |= stmt_writes(st, self.assigned)
                if not needed & written:
                    return name
        return self.atom(test)

    def _zero_line(self, var: str) -> Line:
        self.zero_filled.add(var)
        return Line(f"{self.bar(var)} = 0.0")

    def _own_before_loop(self, body: list[ir.Stmt], live: set[str]) -> list[Item]:
        """Copy the live adjoints a loop updates element by element, so it can do so in place."""
        items: list[Item] = []
        if self.pure:
            return items
        for var in sorted(indexed_vars(body) & live):
            b = self.bar(var)
            if b not in self.dense:
                items.append(self.line(f"{b} = {self.ad}.dense({b}, {var})"))
                self.owned.add(b)
                self.dense.add(b)
        return items

    def _element(self, obj: str, index: str) -> bool:
        """Whether ``obj[index]`` is one element of a 1-d array (a scalar)."""
        return obj in self.vectors and self._int_index(index)

    def _keyed(self, obj: str, code: str) -> bool:
        """Whether ``obj[code] = ...`` may add an entry (a dict key, not an array index)."""
        return code.startswith(("'", '"')) or obj in self.dicts

    def _int_index(self, code: str) -> bool:
        """Whether an index is a single integer (a range loop variable, arithmetic on one)."""
        return code.isdigit() or (code.isidentifier() and code in self.scalar)

    def bwd_for(self, s: ir.For, live: set[str]) -> list[Item]:
        entry = set(live)
        own = self._own_before_loop(s.body, live)
        body, head = self._fixpoint(s.body, live)
        body[:0] = self.recompute_elements(s.body)
        body += self.exit_restores(s)
        indexed = indexed_vars(s.body)
        pre = [self.zero(v, v in indexed) for v in sorted(head - entry)]
        live.clear()
        live.update(head)
        args = [self.atom(a) for a in (s.range_args or [])]
        if s.trips is None:
            header = f"for {s.target} in reversed(range({self.read(', '.join(args))})):"
        elif len(args) == 1:
            header = f"for {s.target} in reversed(range({self.read(s.trips)})):"
        else:
            k = self.mint("_k")
            header = f"for {k} in reversed(range({self.read(s.trips)})):"
            start = args[0]
            step = f" * {args[2]}" if len(args) == 3 else ""
            body.insert(0, self.line(f"{s.target} = {start} + {k}{step}"))
        pops: list[Item] = self.pop(s, s.trips) if s.trips else []
        pops += self.pop(s, s.target)
        return [*own, *pre, Suite(header, body), *pops]

    def bwd_while(self, s: ir.While, live: set[str]) -> list[Item]:
        entry = set(live)
        own = self._own_before_loop(s.body, live)
        last_test = self.bwd_block(s.test_body, live)
        body, head = self._fixpoint(s.test_body + s.body, live)  # a trip: test, then body
        body += self.exit_restores(s)
        indexed = indexed_vars(s.body)
        pre = [self.zero(v, v in indexed) for v in sorted(head - entry)]
        live.clear()
        live.update(head)
        if s.brk is not None and last_test:
            last_test = [Suite(self.read(f"if {s.brk}:"), [], last_test)]
        k = self.mint("_k")
        loop = Suite(f"for {k} in range({self.read(s.trips)}):", body)
        return [*own, *pre, *last_test, loop, *self.pop(s, s.trips)]


# parameters that take integers, axes, shapes or flags: never differentiated
_SIMPLE_ATOM = __import__("re").compile(r"^[\w.]+$")


def hoist_pushes(items: list[Item], tape: str) -> list[Item]:
    """Move each push above the plain assignments before it that leave what it saves
    alone: the code of one user line (``_t3 = s * _t4; _t6 = ...; s = _t3 + _t6``) saves
    ``s`` first, so the optimizer can fold the line back together.

    A push keeps its place among pushes (the tape's order) and never crosses a compound
    statement, a comment, a restore or any other use of ``tape``. A push of a name (a
    reference: what an assignment does to other names cannot change it) moves above any
    assignment that does not bind the name; a push of a copy (``_ad.copy(y[i])``) only
    above assignments of pure values to names it does not read.
    """
    out: list[Item] = []
    for item in items:
        k = len(out)
        if isinstance(item, Push):
            reads = identifiers(item.code)
            by_name = item.code.isidentifier()
            while k > 0 and isinstance(out[k - 1], Line):
                text = out[k - 1].text  # type: ignore[union-attr]
                stores = _line_stores(text, tape, pure_only=not by_name)
                if stores is None or stores & reads:
                    break
                k -= 1
        out.insert(k, item)
    return out


def _line_stores(text: str, tape: str, pure_only: bool) -> set[str] | None:
    """Names a one-line statement binds (``None`` when it is not names bound to a value,
    when it uses ``tape``, or with ``pure_only`` when the value may have effects)."""
    match = _BINDING.match(text)
    if match is None or ":=" in text or _BINDING.match(text, match.end()):
        return None  # not an assignment, or one binding more names (``a = b = e``)
    if tape in identifiers(text):
        return None
    if pure_only:
        try:
            stmt = ast.parse(text).body[0]
        except SyntaxError:
            return None
        if not (isinstance(stmt, ast.Assign) and pure(stmt.value, tape)):
            return None
    return {name.strip() for name in match.group(1).split(",")} - {""}


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


def _subst_names(text: str, names: dict[str, str]) -> str:
    """Replace whole identifiers (not attributes, not adjoint names) by source text."""
    import re

    def repl(m: re.Match[str]) -> str:
        return names.get(m.group(0), m.group(0))

    return re.sub(r"(?<![\w.])[^\W\d]\w*(?![\w])", repl, text)


def _index_value(code: str, np_name: str) -> str:
    """An index's source as a value: ``i`` stays, ``i, 1:3`` becomes ``np.s_[i, 1:3]``."""
    if ":" in code or "," in code or "..." in code:
        return f"{np_name}.s_[{code}]"
    return code


_fold = fold
