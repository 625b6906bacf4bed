"""Contributions gathered: an adjoint's pieces brought together before they are folded.

The backward sweep reverses one three-address statement at a time, so the contributions
of one user line to the same adjoint arrive apart, with the update of another adjoint in
between (``s = s * np.cos(x[i]) + x[i] ** 2`` gives ``_t5_bar = s_bar * (2 * x[i])``,
``s_bar = s_bar * np.cos(x[i])``, ``_t5_bar = _t5_bar + _t3_bar * s * -np.sin(x[i])``,
then ``x_bar[i] += _t5_bar``). This pass moves a statement of the backward sweep that
reads a temporary up to just after the temporary's binding, across statements it cannot
observe, and merges ``t = a`` followed by ``t = t + b`` into ``t = a + b``. Copy
propagation and :func:`fold.fold_temporaries` then write the line as one accumulation
(``x_bar[i] += s_bar * (2 * x[i]) + s_bar * s * -np.sin(x[i])``) before the overwrite of
``s_bar``.

A statement moves only inside one block and one user line's code (it never crosses a
``# L<n>:`` comment), only if it writes adjoints (``*_bar`` names) and its value has no
effects, and only across simple statements without effects (or tape pops) with which it
shares no name one writes and the other reads or writes. An in-place update of an adjoint
(``x_bar[i] += ...``) changes no other name: the sweeps update in place only the
adjoints that own their array.
"""

from __future__ import annotations

import ast
import re

from .codefacts import COMPOUND, Info, names
from .fold import WIDTH

_TEMPORARY = re.compile(r"_t\d+(?:_bar|_dot)*")


def _crossable(s: ast.stmt, info: Info, tape: str) -> bool:
    """A simple statement whose only effects are on the names it writes."""
    if isinstance(s, COMPOUND) or not isinstance(s, (ast.Assign, ast.AugAssign)):
        return False
    if info.tape_use(s)[0] is not None:
        return True
    if not info.effect_free(s) or tape in info.of(s)[0]:
        return False
    in_place = not all(isinstance(t, ast.Name) for t in _targets(s))
    return not in_place or all(n.endswith("_bar") for n in info.written(s))


def _targets(s: ast.stmt) -> list[ast.expr]:
    return list(s.targets) if isinstance(s, ast.Assign) else [s.target]  # type: ignore[attr-defined]


def _reads(s: ast.stmt, info: Info) -> set[str]:
    return info.of(s)[0]


def _copies_of(stmts: list[ast.stmt], i: int, name: str, info: Info) -> set[str]:
    """Temporaries bound to a copy of ``name`` (``_t3_bar = s_bar``) before ``stmts[i]``
    and after ``name``'s last binding there."""
    out: set[str] = set()
    for k in range(i - 1, -1, -1):
        s = stmts[k]
        if isinstance(s, COMPOUND):
            break
        if (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and _TEMPORARY.fullmatch(s.targets[0].id)
            and isinstance(s.value, ast.Name)
            and s.value.id == name
        ):
            out.add(s.targets[0].id)
        if name in info.written(s):
            break
    return out


def _copied(stmts: list[ast.stmt]) -> set[str]:
    """The names some temporary of ``stmts`` is bound to a copy of (``_t3_bar = s_bar``)."""
    return {
        s.value.id
        for s in stmts
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Name)
        and _TEMPORARY.fullmatch(s.targets[0].id)
    }


def _sink(
    stmts: list[ast.stmt],
    i: int,
    info: Info,
    tape: str,
    notes: dict[int, str],
    copied: set[str],
) -> bool:
    """Move ``a_bar = e`` at ``stmts[i]`` below the last later reader of a copy of the old
    ``a_bar`` (or of a temporary computed from one), across statements that neither read
    nor write ``a_bar`` nor write what ``e`` reads. ``copied``: :func:`_copied` of
    ``stmts`` (no other name has a copy to sink below)."""
    u = stmts[i]
    if not (
        isinstance(u, ast.Assign)
        and len(u.targets) == 1
        and isinstance(u.targets[0], ast.Name)
        and u.targets[0].id in copied
        and u.targets[0].id.endswith("_bar")
        and info.pure_value(u)
    ):
        return False
    name = u.targets[0].id
    copies = _copies_of(stmts, i, name, info)
    if not copies:
        return False
    reads = _reads(u, info)
    to = None
    for j in range(i + 1, len(stmts)):
        s = stmts[j]
        if id(s) in notes or not _crossable(s, info, tape):
            break
        s_reads, s_writes = _reads(s, info), info.written(s)
        if name in s_reads or name in s_writes or s_writes & reads:
            break
        if s_reads & copies:
            to = j
            copies |= {n for n in s_writes if _TEMPORARY.fullmatch(n)}  # derived from one
    if to is None:
        return False
    stmts.insert(to, stmts.pop(i))
    return True


def _merge(
    stmts: list[ast.stmt], i: int, info: Info, tape: str, notes: dict[int, str]
) -> ast.stmt | None:
    """``t = a``, then (nothing between reading ``t`` or writing what ``a`` reads)
    ``t = t + b``: the second becomes ``t = a + b`` (returned, unless longer than
    ``fold.WIDTH``), the first is to go."""
    d = stmts[i]
    if not (
        isinstance(d, ast.Assign)
        and len(d.targets) == 1
        and isinstance(d.targets[0], ast.Name)
        and _TEMPORARY.fullmatch(d.targets[0].id)
        and info.pure_value(d)
    ):
        return None
    t = d.targets[0].id
    reads = _reads(d, info)
    for j in range(i + 1, len(stmts)):
        u = stmts[j]
        if (
            isinstance(u, ast.Assign)
            and len(u.targets) == 1
            and isinstance(u.targets[0], ast.Name)
            and u.targets[0].id == t
            and isinstance(u.value, ast.BinOp)
            and isinstance(u.value.op, ast.Add)
            and isinstance(u.value.left, ast.Name)
            and u.value.left.id == t
            and t not in names(u.value.right, ast.Load)
        ):
            merged = ast.unparse(ast.BinOp(d.value, ast.Add(), u.value.right))
            if len(t) + 3 + len(merged) > WIDTH:
                return None
            u.value.left = d.value
            return u
        if id(u) in notes or not _crossable(u, info, tape):
            return None
        if t in _reads(u, info) or t in info.written(u) or info.written(u) & reads:
            return None
    return None


def gather(
    stmts: list[ast.stmt], info: Info, tape: str, notes: dict[int, str], changed: set[int]
) -> set[int]:
    """Sink and merge in ``stmts`` and the blocks nested in it (module docstring); the
    statements rewritten are added to ``changed``. Returns the ids of the statements merged
    away (to remove)."""
    drop: set[int] = set()
    for s in stmts:
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list) and inner:
                drop |= gather(inner, info, tape, notes, changed)
    i = 0
    copied = _copied(stmts)  # moving statements makes no copy
    sunk: set[int] = set()  # each statement sinks once: two could otherwise trade places
    while i < len(stmts):
        s = stmts[i]
        if id(s) not in notes and id(s) not in sunk and _sink(stmts, i, info, tape, notes, copied):
            sunk.add(id(s))
            continue  # the statement now at ``i`` is another
        i += 1
    for i, d in enumerate(stmts):
        u = None if id(d) in drop else _merge(stmts, i, info, tape, notes)
        if u is not None:
            drop.add(id(d))
            info.forget(u)
            changed.add(id(u))
    return drop
