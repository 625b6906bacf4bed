"""Reverse mode: the forward sweep (with tape pushes) and the backward sweep.

No calculus lives here: each statement's adjoint comes from a rule in ``rules/`` whose
template is filled with the user's names. The pass tracks which adjoints are live (a
first contribution is an assignment, later ones accumulate), restores overwritten
values from the tape (only those the backward sweep reads) and reverses branches and
loops using recorded trip counts and branch conditions.

This module drives the pass and holds the backward sweep's core (liveness, accumulation,
restores, container writes). The rest has its own module: call planning
(:mod:`~s2s_ad.reverse_calls`), the recording plan (:mod:`~s2s_ad.records`), the
recording forward sweep (:mod:`~s2s_ad.reverse_fwd`), contributions from rules
(:mod:`~s2s_ad.reverse_contribs`), branches and loops (:mod:`~s2s_ad.reverse_control`),
recomputed temporaries (:mod:`~s2s_ad.recompute`); naming and rendering are shared with
forward mode (:mod:`~s2s_ad.sweep_base`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Any

from . import ir
from .analysis import outside_names, stored_value, walk
from .call_plans import CallPlan
from .codegen import Comment, Item, Line, Pop, identifiers
from .hoist import hoist_pushes
from .object_state import STATE
from .recompute import rematerializable, subst_names
from .records import JUMP, RecordPlan
from .reverse_calls import plan_calls
from .reverse_contribs import Contributions, index_value
from .reverse_control import ControlFlow
from .reverse_fwd import RecordingSweep
from .sweep_base import SweepBase
from .value_kinds import Queried, numeric_vars, vector_vars


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
    #: the forward sweep's temporaries already folded (``fold_early``, by emission)
    folded: bool = False


class Reverse(RecordingSweep, Contributions, ControlFlow, SweepBase):
    """Builds both sweeps for one function and one set of ``wrt`` parameters.

    Hooks :class:`~s2s_ad.reverse_batch.BatchedReverse` overrides for cotangents with a
    batch axis: :meth:`render_expr`, :meth:`contributions`, :meth:`apply_rule`,
    :meth:`call_contribs`, :meth:`zero`, and :attr:`dense` (the adjoints held as dense
    arrays that one element at a time is added to in place).
    """

    def setup(self) -> None:
        fn = self.fn
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
        # per loop being written forward: its trip counter when counted at the trip's end
        self._counting_at_end: list[str | None] = []
        self.tape = self.mint("_tape")
        # pure code in variables mode (an inner tape's gradient with respect to Variables,
        # differentiated again): what it adds to Variables' gradients is threaded through
        # a token it returns last, so that the outer derivative sees it (see tape_nested)
        self.token = self.mint("_vgrads") if self.pure and self.variables else None
        self.records: RecordPlan  # made by run(), once the call plans are known
        body = self.body
        self.numeric = numeric_vars(self.body)
        self.vectors = Queried(vector_vars(self.body, set(fn.params), self.vector_params))
        self.dicts = {
            s.target
            for s in walk(self.body)
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Build) and s.value.kind == "dict"
        }
        self.remat = rematerializable(self)
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

    # --- driver -------------------------------------------------------------------------

    def run(self) -> Sweeps:
        self.plans = plan_calls(self, self.token)
        self.records = RecordPlan(self.body, self.fn.params, self.assigned)
        fwd = self.fwd_block(self.body)
        live: set[str] = set()
        bwd: list[Item] = []
        seed = self.bar(self.output)
        if self.activity.active(self.output):
            live.add(self.output)
        if self.token is not None:
            bwd.append(self.line(f"{self.token} = 0.0"))
        bwd += self.bwd_block(self.body, live)
        if self.variables:
            # globals read here may be watched Variables: hand their adjoints to the tape
            for name in sorted(outside_names(self.fn) & live):
                bwd.append(self.line(self.variable_grad(name, self.bar(name))))
        grads = []
        for p in self.wrt:
            if p in live:
                grads.append(self.bar(p))
            else:
                grads.append(f"{self.ad}.zeros_like({p})")
                self.cur = -1
                self.read(p)
        if self.token is not None:
            grads.append(self.token)
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

    def variable_grad(self, name: str, g: str) -> str:
        """The statement that hands the adjoint ``g`` of ``name`` (perhaps a Variable) to
        the tape; in pure code, threaded through the token."""
        if self.token is None:
            return f"{self.ad}.variable_grad({name}, {g})"
        return f"{self.token} = {self.ad}.variable_grad_acc({self.token}, {name}, {g})"

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

    # --- backward sweep ------------------------------------------------------------------

    def read(self, text: str) -> str:
        if self.remat and any(name in text for name in self.remat):  # (most lines: none)
            text = subst_names(text, self.remat)
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
            read = next(
                (f for f in ("getitem(", "written(") if rhs.startswith(f"{self.ad}.{f}")), None
            )
            if read is not None and lhs not in identifiers(rhs):
                # the adjoint read keeps its array: getitem (and written) copies an array's
                # part (a container's entry it returns as is, which the name now shares, so
                # not when the name read is the one rebound: ``t_bar = _ad.getitem(t_bar, k)``)
                keep = rhs[len(self.ad) + 1 + len(read) :].split(",", 1)[0]
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
        # (not numeric: a container's parts, ``layers + layers``, add by structure)
        total = reduce(
            lambda a, c: f"{a} + {c}" if var in self.numeric else f"{self.ad}.add({a}, {c})",
            contribs,
        )
        if var in live:
            if var in self.numeric:
                if b in self.owned and not self.pure:
                    # b holds an array no other name shares: add in place
                    return [self.line(f"{b} += {total}")]
                # one statement's contributions summed first: ``e + e`` (``x * x``) then
                # merges exactly into ``2.0 * e``
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
            self._check_assigned_call(s)
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
            stored = self._stored_value(s)
            if (
                stored is not None
                and self.variables == STATE
                and stored_value(s.value) is s.value.args[2]
            ):
                # object state: what the reads of the attribute since added to its slot
                obj, name = (self.atom(a) for a in s.value.args[:2])
                grad = self.read(f"{self.ad}.slot_gradient({obj}, {name}, {stored})")
                return self.accumulate(stored, [grad], live)
            if stored is not None:  # what read the attribute since: handed back by the table
                grad = self.read(f"{self.ad}.stored_gradient({stored})")
                return self.accumulate(stored, [grad], live)
            if self.variables == STATE and self._state_write(s) and s.value.callee.obj is setattr:
                # a value without adjoint stored: what read it since goes nowhere (the
                # slot starts again from zero for the stores before it)
                args = ", ".join(self.atom(a) for a in s.value.args)
                return [self.line(self.read(f"{self.ad}.slot_gradient({args})"))]
            return []
        return []

    def _stored_value(self, s: ir.ExprStmt) -> str | None:
        """``obj.a = v`` in variables mode (not pure code), ``v`` differentiated: the
        name ``v``, whose adjoint is what the reads of the attribute added to the tape's
        table (see ``runtime.store_attribute``)."""
        if not self._state_write(s) or self.token is not None:
            return None
        call = s.value
        assert isinstance(call, ir.Call)
        value = stored_value(call)
        if isinstance(value, ir.Var) and self.activity.active(value.name):
            return value.name
        return None

    def pop(self, s: ir.Stmt, var: str) -> list[Item]:
        site = self.records.site(s, var)
        if self.records.site_info[site].kind == "jump":
            if site in self.records.exit_sites():
                return []  # set back to false at the end of the backward trip
            return [Pop(var, JUMP + site, f"{var} = False")]
        return [Pop(var, site)]

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
        if s.restore or self._keyed(s.obj, s.index.code):
            pop.text = f"{self.ad}.restore_item({s.obj}, {index}, {self.tape}.pop())"
        items: list[Item] = []
        if s.obj in live and self.activity.active(s.obj):
            b = self.bar(s.obj)
            index = index_value(s.index.code, self.np)
            self.read(s.index.code)
            if self.active(s.value):
                assert isinstance(s.value, ir.Var)
                if self._element(s.obj, index) and b in self.dense:
                    # one element of a dense 1-d adjoint: a scalar, a copy, exact
                    part = f"{b}[{index}]"
                else:
                    # an index array may repeat an entry: only its last write is kept
                    read = "getitem" if self._basic_index(index) else "written"
                    part = f"{self.ad}.{read}({b}, {index})"
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

    def _element(self, obj: str, index: str) -> bool:
        """Whether ``obj[index]`` is one element of a 1-d array (a scalar)."""
        return obj in self.vectors and self._int_index(index)

    def _keyed(self, obj: str, code: str) -> bool:
        """Whether ``obj[code] = ...`` may add an entry (a dict key, not an array index)."""
        return code.startswith(("'", '"')) or obj in self.dicts

    def _basic_index(self, code: str) -> bool:
        """Whether an index selects each entry once: an integer, or slices and integers
        (``np.s_[1:3]``, ``np.s_[i, :]``)."""
        if self._int_index(code):
            return True
        prefix = f"{self.np}.s_["
        if not (code.startswith(prefix) and code.endswith("]")):
            return False
        parts = code[len(prefix) : -1].split(",")
        return all(":" in p or self._int_index(p.strip()) for p in parts)

    def _int_index(self, code: str) -> bool:
        """Whether an index is a single integer (a range loop variable, arithmetic on one)."""
        return code.isdigit() or (code.isidentifier() and code in self.scalar)


# parameters that take integers, axes, shapes or flags: never differentiated
