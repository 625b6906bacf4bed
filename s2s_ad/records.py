"""The recording plan of the reverse pass: which old values the forward sweep records.

Statements are numbered in program order and every assignment is a *site*. A site may
overwrite a value (a parameter, an earlier assignment, anything in a loop); its old
value is recorded on the tape only when the backward sweep reads the variable where the
restore has already run (:meth:`RecordPlan.needs_push`). Some restores need no tape: jump
flags are set back to false, loop elements (``x = xs[i]``) are recomputed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from . import aliasing, ir
from .ir import walk
from .stmt_facts import count, stmt_reads


@dataclass
class Site:
    """An assignment site: whether it may overwrite a value and whether it is surely defined."""

    var: str
    overwrites: bool
    definite: bool
    kind: str = ""
    inner: tuple[int, int] | None = None  # the loop whose body holds it directly
    within: tuple[int, int] | None = None  # the innermost loop around it


_JUMPS = (ir.Break, ir.Continue)


JUMP = 1 << 40


RECOMPUTE = 2 << 40


def _outer_loops(stmts: list[ir.Stmt]) -> list[ir.For]:
    """The ``for`` loops of a block that no other loop encloses."""
    out: list[ir.For] = []
    for st in stmts:
        if isinstance(st, ir.For):
            out.append(st)
        elif isinstance(st, ir.If):
            out += _outer_loops(st.body) + _outer_loops(st.orelse)
    return out


def _earlier_trip(index: str, target: str, defs: dict[str, ir.Expr]) -> int:
    """``k`` when ``index`` is ``target - k`` for an integer ``k`` (through a temporary of
    the loop body), else 0."""
    value = defs.get(index)
    if isinstance(value, ir.BinOp):
        right = value.right
        if (
            value.op == "-"
            and value.left == ir.Var(target)
            and isinstance(right, ir.Const)
            and right.code.isdigit()
        ):
            return int(right.code)
        return 0
    match = re.fullmatch(rf"{re.escape(target)} - (\d+)", index)
    return int(match.group(1)) if match else 0


class RecordPlan:
    """Sites and positions of one function body, and what needs recording.

    Built once the call plans are known (a call's residual is a site too); the
    queries take what the backward sweep reads, which grows while it is built.
    """

    def __init__(
        self,
        body: list[ir.Stmt],
        params: list[str],
        assigned: Callable[[ir.Stmt], list[str]],
    ) -> None:
        self.body = body
        self.params = params
        self.assigned = assigned
        self.pos: dict[int, int] = {}
        self.sites: dict[tuple[int, str], int] = {}
        self.site_info: dict[int, Site] = {}
        self.writes = [s for s in walk(body) if isinstance(s, (ir.SetItem, ir.Append, ir.ListPop))]
        self.shares = aliasing.bases(walk(body)) if self.writes else {}
        self._plan_sites()

    def _plan_sites(self) -> None:
        """Number statements in program order and record every assignment site.

        A site *may overwrite* when its variable can hold an earlier value there (a
        parameter, an earlier assignment, any assignment inside a loop). Its value is
        pushed only if, in addition, the backward sweep reads the variable at a point
        that runs after the restore (see :meth:`needs_push`).
        """
        params = set(self.params)
        seen = set(params)
        self.site_pos: dict[int, tuple[int, tuple[int, int] | None]] = {}

        def visit(
            stmts: list[ir.Stmt],
            loop: tuple[int, int] | None,
            definite: set[str],
            inner: tuple[int, int] | None = None,
            within: tuple[int, int] | None = None,
        ) -> set[str]:
            definite = set(definite)
            for s in stmts:
                p = len(self.pos)
                self.pos[id(s)] = p
                for var in self.assigned(s):
                    site = len(self.site_info)
                    self.sites[(id(s), var)] = site
                    overwrites = (
                        loop is not None
                        or var in seen
                        or isinstance(s, (ir.SetItem, ir.Append))
                        or (isinstance(s, ir.ListPop) and var == s.obj)
                    )
                    kind = s.kind if isinstance(s, ir.Assign) else ""
                    self.site_info[site] = Site(
                        var, overwrites, var in definite, kind, inner, within
                    )
                    self.site_pos[site] = (p, loop)
                    seen.add(var)
                if isinstance(s, ir.If):
                    a = visit(s.body, loop, definite, None, within)
                    b = visit(s.orelse, loop, definite, None, within)
                    definite |= a & b
                elif isinstance(s, (ir.For, ir.While)):
                    body = s.body if isinstance(s, ir.For) else s.test_body + s.body
                    extra = {s.target} if isinstance(s, ir.For) else set()
                    start = len(self.pos)
                    span = loop or (start, 1 << 30)
                    own = (start, start + count(body) - 1)
                    visit(body, span, definite | extra, own, own)
                    if loop is None:
                        span = (start - 1, len(self.pos) - 1)
                        self._fix_span(start, span)
                else:
                    definite.update(self.assigned(s))
            return definite

        visit(self.body, None, params)
        counts: dict[str, int] = {}
        for info in self.site_info.values():
            counts[info.var] = counts.get(info.var, 0) + 1
        for info in self.site_info.values():
            if info.kind == "element" and (counts[info.var] > 1 or info.var in params):
                info.kind = ""  # assigned elsewhere too: the tape restores it

    def _fix_span(self, start: int, span: tuple[int, int]) -> None:
        for site, (p, loop) in self.site_pos.items():
            if loop is not None and loop[0] == start:
                self.site_pos[site] = (p, span)

    @staticmethod
    def _read_between(reads_at: dict[int, set[str]], var: str, lo: int, hi: int) -> bool:
        return any(var in names and lo <= at <= hi for at, names in reads_at.items())

    def needs_push(self, site: int, reads: set[str], reads_at: dict[int, set[str]]) -> bool:
        """Whether the forward sweep records ``site``'s old value, given what the
        backward sweep reads (``reads``) and where (``reads_at``: position -> names)."""
        info = self.site_info[site]
        if not info.overwrites or info.kind == "jump":
            return False
        p, loop = self.site_pos[site]
        if self.shared_with_recorded(site, reads):
            return True
        if self._filled_once(site, reads_at):
            return False
        lo, hi = loop if loop is not None else (p, p)
        if info.kind == "element" and info.inner is not None:
            # recomputed at the top of each backward trip; recorded only for outside readers
            a, b = info.inner
            return self._read_between(reads_at, info.var, -1, a - 1) or self._read_between(
                reads_at, info.var, b + 1, hi
            )
        for at, names in reads_at.items():
            if info.var in names and (at < p or lo <= at <= hi):
                return True
        return False

    def _filled_once(self, site: int, reads_at: dict[int, set[str]]) -> bool:
        """Whether ``site`` is ``y[i] = ...`` in ``for i in range(...)`` whose trips read
        only elements earlier trips wrote (``y[i - 1]``): no element is written twice and
        none is read before it is written, so the backward sweep reads the final ``y``
        and nothing needs recording. The loop is in no other loop, and nothing before it
        is reversed with ``y``'s values.
        """
        write = next(
            (
                w
                for w in self.writes
                if isinstance(w, ir.SetItem) and self.sites.get((id(w), w.obj)) == site
            ),
            None,
        )
        if write is None:
            return False
        var = write.obj
        loop = next((f for f in _outer_loops(self.body) if write in f.body), None)
        if (
            loop is None
            or not loop.range_args
            or len(loop.range_args) > 2
            or write.index.code != loop.target
            or self._read_between(reads_at, var, -1, self.pos[id(loop)] - 1)
        ):
            return False
        defs = {st.target: st.value for st in loop.body if isinstance(st, ir.Assign)}
        readers = {var}  # an earlier element (a row of a 2-d y) is final too
        start = loop.range_args[0] if len(loop.range_args) == 2 else ir.Const("0")
        first = int(start.code) if isinstance(start, ir.Const) and start.code.isdigit() else 0
        for st in walk(loop.body):
            if st is write or var not in stmt_reads(st):
                continue
            value = st.value if isinstance(st, ir.Assign) else None
            if not (isinstance(value, ir.Subscript) and value.obj == ir.Var(var)):
                return False
            back = _earlier_trip(value.index.code, loop.target, defs)
            if not 0 < back <= first:  # y[i - k] with i - k >= 0: never y[-1]
                return False
            assert isinstance(st, ir.Assign)
            readers.add(st.target)
        return not any(
            v not in readers and aliasing.may_share(v, var, self.shares) for v in self.shares
        )

    def shared_with_recorded(self, site: int, reads: set[str] | None) -> bool:
        """Whether ``site`` writes in place into an array a recorded value may also be.

        ``a = d; a = np.sin(a) * w; d[0] = ...``: the tape holds ``d``'s array as the old
        ``a``. Undoing the write in the backward sweep (in place, as every element write
        is undone) gives that array back its contents before the pop reads it; a copy on
        the tape would not do, since call residuals and other records hold the array too.
        With ``reads`` ``None``, whether the other value is read back is not asked (while
        the backward sweep is still being built).
        """
        if not self.writes:
            return False
        p, loop = self.site_pos[site]
        var = self.site_info[site].var
        if not any(
            isinstance(w, ir.SetItem) and self.pos[id(w)] == p and w.obj == var for w in self.writes
        ):
            return False
        for other, info in self.site_info.items():
            if (
                info.var == var
                or not info.overwrites
                or (reads is not None and info.var not in reads)
            ):
                continue
            if not aliasing.may_share(info.var, var, self.shares):
                continue
            at = self.site_pos[other][0]
            if at < p or (loop is not None and loop[0] <= at <= loop[1]):
                return True
        return False

    def restores(self, pushed: set[int], reads_at: dict[int, set[str]]) -> set[int]:
        """Restores without the tape: jump flags (set back to false), recomputed elements.

        Returned as the ids of the ``Pop`` items that render them (``JUMP + site``,
        ``RECOMPUTE + site``).
        """
        out = set()
        for site, info in self.site_info.items():
            p, loop = self.site_pos[site]
            if info.kind == "jump" and loop is not None:
                if self._read_between(reads_at, info.var, loop[0], loop[1]) or self._read_between(
                    reads_at, info.var, -1, p
                ):
                    out.add(JUMP + site)
            elif info.kind == "element" and site not in pushed and info.inner is not None:
                if self._read_between(reads_at, info.var, *info.inner):
                    out.add(RECOMPUTE + site)
        return out

    def site(self, stmt: ir.Stmt, var: str) -> int:
        return self.sites[(id(stmt), var)]

    @functools.cache  # noqa: B019 (one plan per transform)
    def exit_sites(self) -> dict[int, tuple[int, int]]:
        """Jump sites of exit flags, with the span of the loop they leave.

        An exit flag is set to false before its loop and only to true inside it (only
        ``break`` sets it): it is true on the last trip at most. The backward sweep sets
        it to false at the end of each trip it reverses instead of recording it per trip.
        """
        reset: set[tuple[str, tuple[int, int]]] = set()
        for info in self.site_info.values():
            if info.kind != "jump" and info.within is not None:
                reset.add((info.var, info.within))
        return {
            site: info.within
            for site, info in self.site_info.items()
            if info.kind == "jump"
            and info.within is not None
            and (info.var, info.within) not in reset
        }

    @functools.cache  # noqa: B019 (one plan per transform)
    def jump_ifs(self) -> dict[int, list[str]]:
        """``if`` statements whose branch ends with a jump, with the flags only it sets."""
        count: dict[str, int] = {}
        direct: dict[str, list[int]] = {}
        for st in walk(self.body):
            if isinstance(st, ir.Assign) and st.kind == "jump":
                count[st.target] = count.get(st.target, 0) + 1
            if isinstance(st, ir.If) and st.body and isinstance(st.body[-1], _JUMPS):
                for b in st.body:
                    if isinstance(b, ir.Assign) and b.kind == "jump":
                        direct.setdefault(b.target, []).append(id(st))
        out: dict[int, list[str]] = {}
        for flag, ifs in direct.items():
            if len(ifs) == 1 and count[flag] == 1:
                out.setdefault(ifs[0], []).append(flag)
        return out

    @functools.cache  # noqa: B019 (one plan per transform)
    def flag_if(self) -> dict[str, ir.If]:
        """The ``if`` that sets each flag of ``jump_ifs``."""
        by_id = {id(st): st for st in walk(self.body) if isinstance(st, ir.If)}
        return {f: by_id[i] for i, flags in self.jump_ifs().items() for f in flags}
