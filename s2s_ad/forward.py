"""Forward mode: the primal, each line followed by the line of its tangent (``x_dot``).

Tangents flow with the primal values, so control flow needs no tape: branches and loops
are the primal's own, with tangent lines inside. Elementwise rules give the tangent
from their partials (the same ones reverse mode uses), other rules from their JVP
templates; a rule without one multiplies by the Jacobian its VJP builds (exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import ir
from .analysis import classify, walk
from .built_objects import unknown_call_refusal
from .codegen import Item, Line, Suite
from .ir import expr_atoms
from .reverse_calls import rule_takes
from .rules import REGISTRY
from .rules.defaults import DEFAULTS
from .rules.operators import BINARY, UNARY
from .rules.registry import Rule, substitute
from .simplify import fold, times_partial, to_math
from .sweep_base import Resolver, SweepBase, ident

TANGENTS = "_tangents_"  # where per_column puts the tangents in a pattern


@dataclass
class Tangents:
    """The result of the forward pass, ready for emission."""

    body: list[Item]
    output: str
    output_dot: str
    tangent_params: dict[str, str]
    bindings: dict[str, Any]


class Forward(SweepBase):
    """Builds the tangent program for one function and one set of ``wrt`` parameters.

    A sibling of the reverse pass on :class:`~s2s_ad.sweep_base.SweepBase`: the same
    normal form, activity analysis, naming and rendering.
    """

    reads_again = False  # one sweep: a state write is seen by what follows it only
    comment_pairs = True

    def __init__(
        self,
        fn: ir.Function,
        wrt: list[str],
        resolver: Resolver,
        user_globals: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(fn, wrt, resolver, False, frozenset(), user_globals)
        self._dots: dict[str, str] = {}
        self._entries: set[str] = set()  # values read from a container (their tangent may be 0.0)
        self.guard_flags = _guard_only_flags(self.body)
        self.bound_at_loops = _bound_at_loops(self.body, set(fn.params))
        self.loop_reads = _loop_reads(self.body)

    batched = False

    # --- what batched tangents change (see forward_batch.BatchedForward) ----------------

    def runtime(self, name: str) -> str:
        """The runtime helper ``name`` of tangent programs."""
        return f"{self.ad}.{name}"

    def operand_tangent(self, t: str, atom: ir.Atom, s: ir.Assign, rule: Rule) -> str:
        """The tangent of an elementwise rule's operand, ready to multiply by its partial."""
        return t

    def elementwise_total(self, total: str, s: ir.Assign, rule: Rule) -> str:
        """An elementwise rule's summed contributions, shaped like its value."""
        if len(rule.params) > 1:
            # x + z with only x differentiated: x_dot has x's shape, the value z's
            return f"{self.ad}.broadcast_like({total}, {s.target})"
        return total

    def template_part(self, rule: Rule, param: str, env: dict[str, str], t: str) -> str:
        """The contribution of the tangent ``t`` of ``param`` from the rule's JVP template."""
        return fold(substitute(rule.jvps[param], {**env, "t": t}))

    def per_column(self, pattern: str, ts: list[str], tuple_: bool = False) -> str:
        """``pattern`` (with :data:`TANGENTS` where the tangents go, comma-separated)
        applied to the tangents ``ts``."""
        joined = ", ".join(ts) + ("," if tuple_ and len(ts) == 1 else "")
        return pattern.replace(TANGENTS, joined)

    def dot(self, var: str) -> str:
        if var not in self._dots:
            self._dots[var] = self.mint(f"{var}_dot")
        return self._dots[var]

    def tangent(self, atom: ir.Atom | None, has: set[str]) -> str | None:
        """The tangent of an atom, or ``None`` when it is zero."""
        if isinstance(atom, ir.Var) and atom.name in has and self.activity.active(atom.name):
            return self.dot(atom.name)
        return None

    def run_forward(self) -> Tangents:
        params = {p: self.dot(p) for p in self.wrt}
        has = set(self.wrt)
        body = self.block(self.body, has)
        out = self.output
        out_dot = self.dot(out) if out in has else "0.0"
        return Tangents(body, out, out_dot, params, self.bindings)

    # --- statements ------------------------------------------------------------------

    def block(self, stmts: list[ir.Stmt], has: set[str]) -> list[Item]:
        return self.commented(stmts, lambda s: self.stmt(s, has))

    def stmt(self, s: ir.Stmt, has: set[str]) -> list[Item]:
        if isinstance(s, ir.Assign):
            if s.target in self.guard_flags:
                return []  # a jump flag only the backward sweep would read
            self._check_assigned_call(s)
            return self.assign(s, has)
        if isinstance(s, ir.Unpack):
            items: list[Item] = [Line(self._unpack_line(s))]
            t = self.tangent(s.value, has)
            targets = [v for v in s.targets if self.activity.active(v)]
            if t is not None and targets:
                dots = ", ".join(self.dot(v) if v in targets else "_" for v in s.targets)
                dots += "," if len(s.targets) == 1 else ""
                items.append(Line(f"{dots} = {self.runtime('tangent_parts')}({t}, {s.value})"))
                has.update(targets)
            else:
                for v in s.targets:
                    items += self.kill(v, has)
            return items
        if isinstance(s, ir.SetItem) and s.restore:  # forward mode over a backward sweep
            key = ir.Const(s.index.code)
            return self.restore_stmt(ir.Var(s.obj), key, s.value, has)
        if isinstance(s, ir.SetItem):
            line = Line(f"{s.obj}[{s.index.code}] = {self.atom(s.value)}")
            t = self.tangent(s.value, has)
            if not self.activity.active(s.obj) or (t is None and s.obj not in has):
                return [line]
            d = self.dot(s.obj)
            old = d if s.obj in has else "0.0"
            has.add(s.obj)
            index = _index(s.index.code, self.np)
            expr = f"{d} = {self.runtime('set_tangent')}({old}, {s.obj}, {index}, {t or '0.0'})"
            return [line, Line(expr)]
        if isinstance(s, ir.Append):
            line = Line(f"{s.obj}.append({self.atom(s.value)})")
            t = self.tangent(s.value, has)
            if not self.activity.active(s.obj) or (t is None and s.obj not in has):
                return [line]
            d = self.dot(s.obj)
            old = d if s.obj in has else "0.0"
            has.add(s.obj)
            return [line, Line(f"{d} = {self.ad}.append_tangent({old}, {s.obj}, {t or '0.0'})")]
        if isinstance(s, ir.ListPop):
            line = Line(f"{s.target} = {s.obj}.pop()")
            if s.obj not in has:
                return [line, *self.kill(s.target, has)]
            d = self.dot(s.obj)
            has.add(s.target)
            value = "" if self.batched else f", {s.target}"  # (batched: a leading axis)
            pop = f"{self.ad}.pop_tangent({d}{value})"
            return [line, Line(f"{self.dot(s.target)}, {d} = {pop}")]
        if isinstance(s, ir.ExprStmt):
            self._check_discarded_call(s)
            if isinstance(s.value, ir.Opaque):
                return [Line(s.value.code)]
            return [Line(self.render_expr(s.value))]
        if isinstance(s, ir.If):
            return self.if_stmt(s, has)
        if isinstance(s, ir.For):
            return self.for_stmt(s, has)
        if isinstance(s, ir.While):
            return self.while_stmt(s, has)
        if isinstance(s, ir.Break):
            return [Line("break")]
        if isinstance(s, ir.Continue):
            return [Line("continue")]
        return []

    def restore_stmt(self, obj: ir.Var, key: ir.Atom, old: ir.Atom, has: set[str]) -> list[Item]:
        """``_ad.restore_item(obj, key, old)`` (a backward sweep undoing ``obj[key] = ...``)
        and the same for the tangent of ``obj``."""
        args = f"{obj.name}, {self.atom(key)}, {self.helper_atom(old)}"
        line = Line(f"{self.ad}.restore_item({args})")
        # (the value put back is read through ``obj`` only: activity does not follow it)
        t = self.dot(old.name) if isinstance(old, ir.Var) and old.name in has else None
        if not isinstance(obj, ir.Var) or not self.activity.active(obj.name):
            return [line]
        if t is None and obj.name not in has:
            return [line]
        d = self.dot(obj.name)
        prev = d if obj.name in has else "0.0"
        has.add(obj.name)
        helper = self.runtime("restore_tangent")
        args = f"{prev}, {obj.name}, {self.atom(key)}, {self.helper_atom(old)}, {t or '0.0'}"
        return [line, Line(f"{d} = {helper}({args})")]

    def kill(self, var: str, has: set[str]) -> list[Item]:
        """A variable overwritten by a value without tangent: its tangent is zero from here.

        Set at once (a ``break`` right after must not leave the old tangent behind).
        Dense zeros when a loop may read the variable before assigning it (``h = x`` in
        an outer loop, then ``h = h @ W`` in an inner one): a matrix product reads its
        tangent as an array.
        """
        if var not in has or var in self.fn.all_temps:
            has.discard(var)
            return []
        if var in self.loop_reads and not self.batched:
            return [Line(f"{self.dot(var)} = {self.ad}.zeros_like({var})")]
        # no tangent from here: the reads that follow leave it out (a matrix product
        # cannot take the symbolic zero); merges and loop ends zero it again as needed
        has.discard(var)
        return [Line(f"{self.dot(var)} = 0.0")]

    def _unpack_line(self, s: ir.Unpack) -> str:
        lhs = ", ".join(s.targets) + ("," if len(s.targets) == 1 else "")
        return f"{lhs} = {self.atom(s.value)}"

    def if_stmt(self, s: ir.If, has: set[str]) -> list[Item]:
        if s.guard:
            return self.block(s.orelse, has)
        left, right = set(has), set(has)
        body = self.block(s.body, left)
        orelse = self.block(s.orelse, right)
        # a temporary made inside one branch is used up there; one both branches assign
        # (a conditional expression's value) lives on
        both = {t for t in _assigns(s.body) & _assigns(s.orelse)}
        union = {v for v in left | right if v in has or v not in self.fn.all_temps or v in both}
        bound = has | self.bound_at_loops.get(id(s), set())
        body += [self._merge_zero(v, bound, s.body) for v in sorted(union - left)]
        orelse += [self._merge_zero(v, bound, s.orelse) for v in sorted(union - right)]
        has.clear()
        has.update(union)
        return [Suite(f"if {self.atom(s.test)}:", body, orelse)]

    def _merge_zero(self, v: str, bound: set[str], branch: list[ir.Stmt]) -> Line:
        """The zero tangent of ``v`` at the end of a branch that gave it none, while the
        other branch did: shaped like ``v`` where ``v`` is bound there (a reduction with an
        axis or a matrix product after the merge reads it as an array)."""
        if self.batched or (v not in bound and v not in _assigns(branch)):
            return Line(f"{self.dot(v)} = 0.0")
        return Line(f"{self.dot(v)} = {self.ad}.zeros_like({v})")

    def _loop_body(
        self, stmts: list[ir.Stmt], has: set[str], bound: str | None = None
    ) -> tuple[list[Item], set[str]]:
        """A loop body's tangent code, the same on every trip (``bound``: a ``range``
        loop's counter, an integer each trip: no tangent inside, zero after a trip)."""
        head = set(has) - self.fn.all_temps
        while True:
            saved = set(self.reserved)
            end = set(head)
            end.discard(bound)
            items = self.block(stmts, end)
            end -= self.fn.all_temps  # used up within the trip that made them
            if end <= head:
                break
            head |= end
            self.reserved = saved
        items += [Line(f"{self.dot(v)} = 0.0") for v in sorted(head - end)]
        return items, head

    def _loop_entry(self, new: set[str], loop: ir.For | ir.While) -> list[Item]:
        """Tangents a loop gives to variables that had none before it: dense zeros for the
        ones bound before the loop that its first trip reads (a matrix product reads them
        as arrays), the symbolic zero for the others."""
        body = loop.body if isinstance(loop, ir.For) else loop.test_body + loop.body
        exposed = _read_first(body) & self.bound_at_loops.get(id(loop), set())
        return [
            Line(f"{self.dot(v)} = {self.ad}.zeros_like({v})")
            if v in exposed and not self.batched
            else Line(f"{self.dot(v)} = 0.0")
            for v in sorted(new)
        ]

    def for_stmt(self, s: ir.For, has: set[str]) -> list[Item]:
        entry = set(has)
        body, head = self._loop_body(s.body, has, s.target)
        pre = self._loop_entry(head - entry, s)
        has.clear()
        has.update(head | (entry & self.fn.all_temps))  # made before the loop, used after
        args = ", ".join(self.atom(a) for a in (s.range_args or []))
        return [*pre, Suite(f"for {s.target} in range({args}):", body, keep_empty=True)]

    def while_stmt(self, s: ir.While, has: set[str]) -> list[Item]:
        entry = set(has)
        _, head = self._loop_body(s.test_body + s.body, has)
        pre = self._loop_entry(head - entry, s)
        cur = set(head)
        test = self.block(s.test_body, cur)
        body = self.block(s.body, cur)
        body += [Line(f"{self.dot(v)} = 0.0") for v in sorted(head - cur)]
        has.clear()
        has.update(head | (entry & self.fn.all_temps))
        if not test:
            return [*pre, Suite(f"while {self.atom(s.test)}:", body)]
        guard = Suite(f"if not {self.atom(s.test)}:", [Line("break")])
        return [*pre, Suite("while True:", [*test, guard, *body])]

    # --- assignments -------------------------------------------------------------------

    def assign(self, s: ir.Assign, has: set[str]) -> list[Item]:
        value = s.value
        items: list[Item] = []
        active = self.activity.active(s.target)
        tangents = {
            a.name: t
            for a in expr_atoms(value)
            if isinstance(a, ir.Var) and (t := self.tangent(a, has)) is not None
        }
        if isinstance(value, ir.Call) and active and tangents and value.callee.resolved:
            rule = REGISTRY.custom_jvp.get(id(value.callee.obj))
            if rule is not None:
                name = self.bind(f"{ident(value.callee.obj)}_jvp_rule", rule)
                ts = [self.tangent(a, has) or "0.0" for a in value.args]
                items.append(Line(f"{s.target} = {self.render_expr(value)}"))
                call = f"{name}(({TANGENTS}), {self.call_args(value)})"
                expr = self.per_column(call, ts, tuple_=True)
                items.append(Line(f"{self.dot(s.target)} = {expr}"))
                has.add(s.target)
                return items
        if isinstance(value, ir.Call) and active and tangents:
            info = classify(value)
            packed = value.star is not None or value.starstar is not None
            if packed and info.kind == "method":
                raise self.error(
                    f"method call .{value.callee.method}() with * or ** arguments on "
                    "differentiated values",
                    s,
                    "pass the arguments one by one",
                )
            foreign = (  # a method of what is not differentiated: anp.sum(x), A.dot(x)
                info.kind == "method"
                and self.tangent(value.callee.receiver, has) is None
                and (
                    hasattr(np.ndarray, value.callee.method or "")
                    or not rule_takes(info.rule, value, lambda a: self.tangent(a, has) is not None)
                )
            )
            if info.kind in ("user", "dynamic") or (packed and info.kind == "rule") or foreign:
                return self.call_through(s, value, has)
            if info.kind == "custom_gradient":
                grad_fn = self.mint("_grad_fn")
                args = self.call_args(value)
                items.append(Line(f"{s.target}, {grad_fn} = {value.callee.code}.forward({args})"))
                expr = self._custom(value, grad_fn, has).replace("ans_placeholder", s.target)
                items.append(Line(f"{self.dot(s.target)} = {expr}"))
                has.add(s.target)
                return items
        items.append(Line(f"{s.target} = {self.render_expr(value)}"))
        if not active or not tangents:
            return items + self.kill(s.target, has)
        expr = self.tangent_expr(s, has)
        if expr is None:
            return items + self.kill(s.target, has)
        items.append(Line(f"{self.dot(s.target)} = {expr}"))
        has.add(s.target)
        return items

    def tangent_expr(self, s: ir.Assign, has: set[str]) -> str | None:
        """The tangent of one assignment's value, or ``None`` when it is zero."""
        value = s.value
        if isinstance(value, ir.Copy):
            return self.tangent(value.value, has)
        if isinstance(value, ir.BinOp):
            rule = BINARY.get(value.op)
            if rule is None or rule.nondiff:
                return None
            names = {"x": self.atom(value.left), "y": self.atom(value.right)}
            return self.rule_tangent(rule, names, s, [("x", value.left), ("y", value.right)], has)
        if isinstance(value, ir.UnaryOp):
            rule = UNARY.get(value.op)
            if rule is None:
                return None
            return self.rule_tangent(
                rule, {"x": self.atom(value.operand)}, s, [("x", value.operand)], has
            )
        if isinstance(value, ir.Subscript):
            t = self.tangent(value.obj, has)
            if t is None:
                return None
            self._entries.add(s.target)
            return f"{self.runtime('getitem')}({t}, {_index(value.index.code, self.np)})"
        if isinstance(value, ir.Attr):
            rule = REGISTRY.attrs.get(value.name)
            if rule is None:
                t = self.tangent(value.obj, has)
                if t is None:
                    return None
                # a namedtuple's field (anything else refused by _ad.field_index)
                args = self.field_index_args(self.atom(value.obj), value.name)
                index = f"{self.runtime('field_index')}{args}"
                return f"{self.runtime('getitem')}({t}, {index})"
            if rule.nondiff:
                return None
            return self.rule_tangent(
                rule, {"self": self.atom(value.obj)}, s, [("self", value.obj)], has
            )
        if isinstance(value, ir.Build):
            parts = [self.tangent(e, has) or "0.0" for e in value.elts]
            if value.kind == "dict":
                return "{" + ", ".join(f"{k}: {p}" for k, p in zip(value.keys, parts)) + "}"
            inner = ", ".join(parts)
            if value.kind == "tuple":
                return f"({inner},)" if len(parts) == 1 else f"({inner})"
            return f"[{inner}]"
        if isinstance(value, ir.Call):
            return self.call_tangent(s, value, has)
        if isinstance(value, ir.Opaque) and not value.truth:
            if any(self.tangent(ir.Var(r), has) for r in value.reads):
                raise self.error(value.what, s)
        return None

    def rule_tangent(
        self,
        rule: Rule,
        names: dict[str, str],
        s: ir.Assign,
        atoms: list[tuple[str, ir.Atom]],
        has: set[str],
        use_math: bool = False,
    ) -> str | None:
        """Sum over the differentiated parameters of each one's contribution."""
        env = {**names, "ans": s.target, "np": self.np, "_ad": self.ad}
        parts: list[str] = []
        missing: list[tuple[str, str]] = []
        for param, atom in atoms:
            t = self.tangent(atom, has)
            if t is None:
                continue
            partial = rule.partials.get(param)
            if partial is not None:
                t = self.operand_tangent(t, atom, s, rule)
                if use_math:
                    partial = to_math(partial, "np", self.helper("math", __import__("math")))
                p = fold(substitute(partial, env)).strip()
                if p in ("1", "1.0"):
                    parts.append(t)
                elif p in ("-1", "-1.0"):
                    parts.append(f"-{t}")
                elif times_partial(t, p) is not None:
                    parts.append(times_partial(t, p))
                elif p.replace(".", "").replace("_", "").isalnum():
                    parts.append(f"{t} * {p}")
                else:
                    parts.append(f"{t} * ({p})")
                continue
            template = rule.jvps.get(param)
            if template is not None:
                if template.strip() in ("0", "0.0"):
                    continue  # the output does not depend on this argument
                if not self.batched and isinstance(atom, ir.Var) and atom.name in self._entries:
                    # a container's entry may have no tangent (pair[1] @ pair[0], W not
                    # differentiated): a matrix product reads zeros, not the scalar zero
                    t = f"{self.ad}.entry_tangent({t}, {names[param]})"
                parts.append(self.template_part(rule, param, env, t))
                continue
            if param not in rule.vjps:
                if self.no_gradient(rule, param, s):
                    continue
                raise self.error(f"argument '{param}' of {rule.name} (no derivative rule)", s)
            if rule.vjps[param].strip() in ("0", "0.0"):
                continue
            missing.append((param, t))
        if missing:
            parts.append(self._from_vjp(rule, env, missing))
        if not parts:
            return None
        if rule.partials or len(parts) == 1:
            total = " + ".join(parts)
        else:
            # a non-elementwise rule may return a tuple or list: add entry by entry
            total = parts[0]
            for part in parts[1:]:
                total = f"{self.ad}.add({total}, {part})"
        operands = [a for _, a in atoms]
        if rule.partials and not all(
            isinstance(a, ir.Const) or a.name in self.scalar for a in operands
        ):
            return self.elementwise_total(total, s, rule)
        return total

    def _from_vjp(self, rule: Rule, env: dict[str, str], missing: list[tuple[str, str]]) -> str:
        """J t built from the rule's VJP, one output entry at a time (exact)."""
        pulls = ", ".join(fold(substitute(rule.vjps[p], {**env, "g": "_g"})) for p, _ in missing)
        tangents = ", ".join(t for _, t in missing)
        if len(missing) == 1:
            pulls += ","
            tangents += ","
        return f"{self.runtime('jvp_from_vjp')}(lambda _g: ({pulls}), {env['ans']}, ({tangents}))"

    def call_tangent(self, s: ir.Assign, call: ir.Call, has: set[str]) -> str | None:
        info = classify(call)
        if info.kind == "nondiff":
            return None
        if info.kind in ("rule", "method"):
            assert info.rule is not None
            rule = info.rule
            bound, pairs, extra = self.bind_rule_call(rule, info.kind, call, s)
            parts = []
            main = self.rule_tangent(
                rule,
                bound,
                s,
                pairs,
                has,
                use_math=getattr(call.callee.obj, "__module__", None) == "math",
            )
            if main is not None:
                parts.append(main)
            if any(self.tangent(a, has) for a in extra):
                template = rule.jvps.get("args")
                if template is None:
                    raise self.error(f"variadic arguments of {rule.name} in forward mode", s)
                ts = [self.tangent(a, has) or "0.0" for a in extra]
                env = {**bound, "ans": s.target, "np": self.np, "_ad": self.ad}
                pattern = fold(substitute(template, {**env, "t": f"({TANGENTS},)"}))
                parts.append(self.per_column(pattern, ts))
            return " + ".join(parts) if parts else None
        if info.kind == "custom":
            name = self.bind(f"{ident(call.callee.obj)}_rule", info.func)
            return self._custom(call, name, has, rule=True).replace("ans_placeholder", s.target)
        construct, hint = unknown_call_refusal(call.callee.code, call.callee.obj)
        raise self.error(construct, s, hint)

    def _custom(self, call: ir.Call, pull_fn: str, has: set[str], rule: bool = False) -> str:
        """A user rule (``defgrad``/``custom_gradient``) in forward mode: J t from its VJP."""
        tangents = ", ".join(self.tangent(a, has) or "0.0" for a in call.args)
        tangents += "," if len(call.args) == 1 else ""
        n = len(call.args)
        inner = f"{pull_fn}(_g, {self.call_args(call)})" if rule else f"{pull_fn}(_g)"
        pull = f"lambda _g: {self.ad}.as_grads({inner}, {n})"
        return f"{self.runtime('jvp_from_vjp')}({pull}, ans_placeholder, ({tangents}))"

    def call_through(self, s: ir.Assign, call: ir.Call, has: set[str]) -> list[Item]:
        """A call to a Python function: its own tangent program, made on first use."""
        labels = []
        callee = self.tangent(call.callee.var, has)
        receiver = self.tangent(call.callee.receiver, has)
        if callee is None and receiver is not None and call.callee.method:
            # ``self.l1(u)``: the tangent of the attribute (a sublayer), or of the object
            # whose bound method is called
            got, method = call.callee.receiver, call.callee.method
            callee = f"{self.ad}.member_tangent({receiver}, {got}, {method!r})"
        elif callee is None:
            callee = receiver
        if callee is not None:  # a function value with differentiated defaults, or a
            labels.append((DEFAULTS, callee))  # method of an object built from them
        for pos, a in enumerate(call.args):
            t = self.tangent(a, has)
            if t is not None:
                labels.append((pos, t))
        for key, a in call.kwargs:
            t = self.tangent(a, has)
            if t is not None:
                labels.append((key, t))
        star = self.tangent(call.star, has)
        if star is not None:  # the entries of ``*parts`` from position len(args) on
            labels.append((("*", len(call.args)), star))
        starstar = self.tangent(call.starstar, has)
        if starstar is not None:
            labels.append((("**", tuple(k for k, _ in call.kwargs)), starstar))
        keys = ", ".join(repr(k) for k, _ in labels) + ("," if len(labels) == 1 else "")
        dots = ", ".join(t for _, t in labels) + ("," if len(labels) == 1 else "")
        args = self.call_args(call)
        line = (
            f"{s.target}, {self.dot(s.target)} = "
            f"{self.runtime('jvp_call')}({call.callee.code}, ({keys}), ({dots})"
            + (f", {args})" if args else ")")
        )
        has.add(s.target)
        return [Line(line)]


def _bound_at_loops(body: list[ir.Stmt], params: set[str]) -> dict[int, set[str]]:
    """For each loop and ``if`` (by ``id``), the names bound on every path that reaches it."""
    out: dict[int, set[str]] = {}

    def visit(s: ir.Stmt, definite: set[str], possible: set[str]) -> None:
        if isinstance(s, (ir.For, ir.While, ir.If)):
            out[id(s)] = set(definite)

    ir.scan_bound(body, params, visit)
    return out


def _loop_reads(body: list[ir.Stmt]) -> set[str]:
    """Variables some loop of ``body`` may read before its body assigns them."""
    out: set[str] = set()
    for s in walk(body):
        if isinstance(s, ir.For):
            out |= _read_first(s.body)
        elif isinstance(s, ir.While):
            out |= _read_first(s.test_body + s.body)
    return out


def _read_first(stmts: list[ir.Stmt]) -> set[str]:
    """Variables a block may read before it assigns them (on some path)."""
    exposed: set[str] = set()
    written: set[str] = set()
    for s in walk(stmts):
        reads: list[str] = []
        if isinstance(s, (ir.Assign, ir.ExprStmt)):
            reads = [a.name for a in expr_atoms(s.value) if isinstance(a, ir.Var)]
        elif isinstance(s, (ir.Unpack, ir.SetItem, ir.Append)):
            reads = [s.value.name] if isinstance(s.value, ir.Var) else []
            reads += [s.obj] if isinstance(s, (ir.SetItem, ir.Append)) else []
        exposed.update(r for r in reads if r not in written)
        if isinstance(s, ir.Assign) and not _nested_in_branch(s, stmts):
            written.add(s.target)
    return exposed


def _nested_in_branch(target: ir.Stmt, stmts: list[ir.Stmt]) -> bool:
    """Whether ``target`` sits inside a branch or loop of ``stmts`` (not at the top)."""
    return not any(s is target for s in stmts)


def _assigns(stmts: list[ir.Stmt]) -> set[str]:
    """The names ``stmts`` assign on every path: their assignments, and those both
    branches of a nested ``if`` make (``a if c else (b if d else e)``)."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Assign):
            out.add(s.target)
        elif isinstance(s, ir.If) and not s.guard:
            out |= _assigns(s.body) & _assigns(s.orelse)
    return out


def _index(code: str, np_name: str) -> str:
    if ":" in code or "," in code or "..." in code:
        return f"{np_name}.s_[{code}]"
    return code


def _guard_only_flags(body: list[ir.Stmt]) -> set[str]:
    """Jump flags read only by the guards of the backward sweep (forward mode skips them)."""
    flags = {s.target for s in walk(body) if isinstance(s, ir.Assign) and s.kind == "jump"}
    guards: set[str] = set()
    other: set[str] = set()
    for s in walk(body):
        if isinstance(s, ir.If) and s.guard and isinstance(s.test, ir.Var):
            guards.add(s.test.name)
        elif isinstance(s, ir.Assign):
            other.update(a.name for a in expr_atoms(s.value) if isinstance(a, ir.Var))
        elif isinstance(s, (ir.If, ir.While)) and isinstance(s.test, ir.Var):
            other.add(s.test.name)
    return (flags & guards) - other
