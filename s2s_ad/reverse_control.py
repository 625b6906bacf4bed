"""Branches and loops in the backward sweep.

A branch is reversed by the test that chose it (or a jump flag that tells the same); a
loop runs its trips backwards, as many as the forward sweep counted, with the adjoints
live at its head the same on every trip (a fixpoint over the body). Exit flags are set
back to false at the end of each backward trip, loop elements recomputed at its start.
"""

from __future__ import annotations

import functools

from . import ir, loop_exits
from .analysis import walk
from .call_plans import CallPlan
from .codegen import Item, Line, Pop, Suite, identifiers
from .recompute import subst_names
from .records import JUMP, RECOMPUTE, RecordPlan
from .stmt_facts import count, indexed_vars, stmt_writes


def _bare(test: str) -> str:
    """``test`` without parentheses around the whole of it (a recomputed test comes
    parenthesized)."""
    while test.startswith("(") and test.endswith(")"):
        depth = 0
        for k, ch in enumerate(test):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(test) - 1:
                return test  # ``(a) + (b)``: the first one closes early
        test = test[1:-1]
    return test


class ControlFlow:
    """The branch and loop half of :class:`~s2s_ad.reverse.Reverse` (a mixin of it)."""

    ad: str
    pure: bool
    body: list[ir.Stmt]
    plans: dict[int, CallPlan]
    records: RecordPlan
    remat: dict[str, str]
    reads: set[str]
    reads_at: dict[int, set[str]]
    reserved: set[str]
    expanded: set[str]
    zero_filled: set[str]
    owned: set[str]
    dense: set[str]

    def bwd_if(self, s: ir.If, live: set[str]) -> list[Item]:
        if any(self._backward_test(s) in flags for flags in self._quiet_loops().values()):
            return self.bwd_block(s.orelse, live)  # a jump not taken in the trips reversed
        left, right = set(live), set(live)
        owned, dense, expanded = set(self.owned), set(self.dense), set(self.expanded)
        body = self.bwd_block(s.body, left)
        owned_left, dense_left, expanded_left = self.owned, self.dense, self.expanded
        # each branch starts from the adjoints as they are after the if (one branch summing
        # out a broadcast adjoint's dimensions does not do it for the other)
        self.owned, self.dense, self.expanded = set(owned), set(dense), set(expanded)
        orelse = self.bwd_block(s.orelse, right)
        owned_right, dense_right = self.owned, self.dense
        self.expanded = expanded_left | self.expanded
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
        test = _bare(self.read(self._backward_test(s)))
        return [Suite(f"if {test}:", body, orelse)]

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

    def _fixpoint(
        self, stmts: list[ir.Stmt], live: set[str], bound: str | None = None
    ) -> tuple[list[Item], set[str]]:
        """Backward sweep of a loop body whose live adjoints are the same on every trip
        (``bound``: a name each trip binds to a constant first, a ``range`` loop's
        target, whose adjoint each backward trip ends by dropping)."""
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
            end.discard(bound)
            zeros = {self.bar(v) for v in head - end}
            owned_end = self.owned | zeros
            # an adjoint the trip ends by zeroing is dense again only if the zero is a
            # dense array (self.zero: an indexed variable), else it is the symbolic 0.0
            dense_end = (self.dense - zeros) | {self.bar(v) for v in (head - end) & indexed}
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

    def bwd_for(self, s: ir.For, live: set[str]) -> list[Item]:
        entry = set(live)
        own = self._own_before_loop(s.body, live)
        # a range loop binds its target to an integer: no adjoint flows through it (a
        # parameter's name reused as the counter keeps its own)
        body, head = self._fixpoint(s.body, live, s.target if s.range_args is not None else None)
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
        if s.brk is not None and last_test and id(s) not in self._quiet_loops():
            last_test = [Suite(self.read(f"if {s.brk}:"), [], last_test)]
        k = self.mint("_k")
        loop = Suite(f"for {k} in range({self.read(s.trips)}):", body)
        return [*own, *pre, *last_test, loop, *self.pop(s, s.trips)]

    def exit_restores(self, s: ir.For | ir.While) -> list[Item]:
        """``flag = False`` for the exit flags of loop ``s``, ending each backward trip."""
        if id(s) in self._quiet_loops():
            return []  # its exit flags are false in every trip reversed
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

    @functools.cache  # noqa: B019 (one Reverse per transform)
    def _quiet_loops(self) -> dict[int, set[str]]:
        """Loops whose breaking trip has nothing to reverse, with their exit flags (the
        backward sweep takes them as false: ``loop_exits``)."""
        exits = {self.records.site_info[site].var for site in self.records.exit_sites()}
        out: dict[int, set[str]] = {}
        for loop in walk(self.body):
            if not isinstance(loop, (ir.For, ir.While)) or not loop.trips:
                continue
            flags = loop_exits.exit_flags(loop, exits)

            def test_reads(st: ir.If, flags: set[str] = flags) -> set[str] | None:
                test = self._backward_test(st)
                if test in flags:
                    return None
                return identifiers(subst_names(test, self.remat) if self.remat else test)

            def element(st: ir.Assign) -> bool:
                return self.records.site_info[self.records.site(st, st.target)].kind == "element"

            if loop_exits.quiet_exit(
                loop,
                self.body,
                flags,
                test_reads,
                lambda st: id(st) not in self.plans,
                element,
                self.remat,
            ):
                out[id(loop)] = flags
        return out
