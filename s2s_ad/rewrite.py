"""Generated functions as :mod:`ast` trees and back to text.

The passes over generated code (:mod:`optimize`, :mod:`fold`, :mod:`lower`) take a
function's statements, drop or rewrite them, and write it back: a statement left alone
keeps its own text, a rewritten one is unparsed, and the ``# ...`` comment lines above
statements (``# L<n>:`` pointing at the user's line) stay with them, moving to the next
statement kept when theirs goes.

Each statement carries what the passes read of its text as attributes (see
``codegen.mark``): its own text (a compound statement's header line) and the tape site of a
push or pop. The sweeps set them when they build the statements
(``codegen.Builder``); :func:`attach` sets them on a function parsed from text.
"""

from __future__ import annotations

import ast

from .codefacts import pure, statements
from .codegen import SITE, SITE_OF, TEXT, WIDTH_OF, mark


def attach(func: ast.FunctionDef, lines: list[str]) -> dict[int, str]:
    """Mark the statements of ``func``, parsed from ``lines``, with their text and sites
    (the function itself with its header line); return their comments (see
    :func:`comments`)."""
    setattr(func, TEXT, lines[func.lineno - 1])
    for s in statements(func.body):
        line = lines[s.lineno - 1]
        at = line.rfind(SITE)
        if at >= 0:
            mark(s, line[:at].strip(), int(line[at + len(SITE) :]))
        else:
            mark(s, line.strip(), None)
    return comments(func, lines)


def text_of(s: ast.stmt) -> str:
    """A statement's own text (a compound statement's header line) as the sweeps wrote
    it; unparsed for a statement made by a pass."""
    text = getattr(s, TEXT, None)
    return text if text is not None else _head(s)


def site(s: ast.stmt) -> int | None:
    """The tape site of a push or pop (see ``codegen.SITE``), else ``None``."""
    return getattr(s, SITE_OF, None)


def width(s: ast.stmt) -> int:
    """The length of a statement's line as the sweeps wrote it, site mark included."""
    estimate = getattr(s, WIDTH_OF, None)
    if estimate is not None:
        return estimate
    mark_at = site(s)
    return len(text_of(s)) + (0 if mark_at is None else len(f"{SITE}{mark_at}"))


def comments(func: ast.FunctionDef, lines: list[str]) -> dict[int, str]:
    """``# ...`` comment lines, keyed by the id of the statement that follows them."""
    by_line: dict[int, str] = {}
    pending: list[str] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text.startswith("#"):
            pending.append(text)
        elif text and pending:
            by_line[number] = "\n".join(pending)
            pending = []
    return {id(s): by_line[s.lineno] for s in statements(func.body) if s.lineno in by_line}


def remove(
    stmts: list[ast.stmt],
    drop: set[int],
    notes: dict[int, str],
    hollowed: list[ast.stmt] | None = None,
) -> list[ast.stmt]:
    """The statements kept; a dropped statement's comment moves to the next one kept. An
    ``if`` or ``for`` left with nothing to do goes too (added to ``hollowed``)."""
    out: list[ast.stmt] = []
    moving: str | None = None
    for s in stmts:
        if id(s) in drop:
            moving = _join(moving, notes.pop(id(s), None))
            continue
        if moving is not None:
            notes[id(s)] = _join(moving, notes.get(id(s))) or ""
            moving = None
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list) and inner:
                kept = remove(inner, drop, notes, hollowed)
                if attr == "body" and not kept:
                    kept = [ast.Pass()]
                setattr(s, attr, kept)
        if _hollow(s):
            moving = _join(moving, notes.pop(id(s), None))
            if hollowed is not None:
                hollowed.append(s)
            continue
        out.append(s)
    return out


def _join(first: str | None, second: str | None) -> str | None:
    """Comments moving onto a statement: a ``# L<n>`` line of a statement dropped entirely
    gives way to the one that follows (``# forward sweep`` and such are kept)."""
    if first is None:
        return second
    if second is None:
        return first
    kept = [c for c in first.split("\n") if not c.startswith("# L")]
    return "\n".join([*kept, second])


def _hollow(s: ast.stmt) -> bool:
    """An ``if`` or ``for`` left with nothing to do (its test or iterable has no effect)."""
    if isinstance(s, ast.If):
        return _empty(s.body) and _empty(s.orelse) and pure(s.test, "")
    if isinstance(s, ast.For):
        return _empty(s.body) and not s.orelse and pure(s.iter, "")
    return False


#: A statement's id -> the statement and its unparsed text (see :func:`render`).
Unparsed = dict[int, tuple[ast.stmt, str]]


def render(
    stmts: list[ast.stmt],
    notes: dict[int, str],
    pad: str,
    changed: set[int],
    unparsed: Unparsed | None = None,
) -> list[str]:
    """Statements back to text: a kept statement's own text (``changed`` ones unparsed),
    its comment above it. ``unparsed`` keeps the text of each statement unparsed, for
    another rendering of the same tree: drop from it a statement rewritten since."""
    memo: Unparsed = {} if unparsed is None else unparsed
    return _render(stmts, notes, pad, changed, memo)


def _render(
    stmts: list[ast.stmt],
    notes: dict[int, str],
    pad: str,
    changed: set[int],
    memo: Unparsed,
) -> list[str]:
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ast.Pass) and not hasattr(s, "lineno"):
            out.append(pad + "pass")
            continue
        note = notes.get(id(s))
        if note:
            out.extend(pad + part for part in note.split("\n"))
        if isinstance(s, ast.If) and _empty(s.body) and s.orelse:
            # ``if c: pass else: body`` (what remains when a branch empties)
            # a test something was folded into is unparsed: its source segment is stale
            text = None if id(s) in changed else getattr(s, TEXT, None)
            test = text[3:-1].strip() if text else ast.unparse(s.test)
            out.append(f"{pad}if not ({test}):")
            out.extend(_render(s.orelse, notes, pad + "    ", changed, memo))
            continue
        if id(s) in changed:
            known = memo.get(id(s))
            if known is None or known[0] is not s:
                known = memo[id(s)] = (s, _head(s))
            out.append(pad + known[1])
        else:
            out.append(pad + text_of(s))
        if isinstance(s, (ast.If, ast.For, ast.While)):
            out.extend(_render(s.body, notes, pad + "    ", changed, memo) or [pad + "    pass"])
            if s.orelse:
                out.append(pad + "else:")
                out.extend(_render(s.orelse, notes, pad + "    ", changed, memo))
    return out


def _head(s: ast.stmt) -> str:
    """A rewritten statement's text (a compound statement's header line)."""
    if isinstance(s, ast.If):
        return f"if {ast.unparse(s.test)}:"
    if isinstance(s, ast.While):
        return f"while {ast.unparse(s.test)}:"
    if isinstance(s, ast.For):
        target = s.target
        parts = target.elts if isinstance(target, ast.Tuple) and target.elts else [target]
        return f"for {', '.join(ast.unparse(p) for p in parts)} in {ast.unparse(s.iter)}:"
    return ast.unparse(s)


def _empty(stmts: list[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Pass) for s in stmts)


def as_rendered(
    func: ast.FunctionDef, notes: dict[int, str], changed: set[int], unparsed: Unparsed
) -> tuple[ast.FunctionDef, dict[int, str]]:
    """``func`` and its comments as parsing the text :func:`render` writes of it gives
    them, without writing and parsing it: a rewritten (``changed``) statement is parsed
    from its unparsed text (``unparsed``: what ``render`` kept), the others keep their
    trees; ``if c: pass else: body`` becomes ``if not (c): body``, site marks go (the
    text ``render`` writes has none), and a comment above a ``pass`` standing for an
    emptied body goes (``render`` does not write it)."""
    func.body = _as_rendered(func.body, notes, changed, unparsed) or _passes()
    return func, notes


def _passes() -> list[ast.stmt]:
    stmts = ast.parse("pass").body
    mark(stmts[0], "pass", None)
    return stmts


def _as_rendered(
    stmts: list[ast.stmt], notes: dict[int, str], changed: set[int], unparsed: Unparsed
) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        note = notes.pop(id(s), None)
        if isinstance(s, ast.Pass) and not hasattr(s, "lineno"):
            out.extend(_passes())  # written without its comment
            continue
        if isinstance(s, ast.If) and _empty(s.body) and s.orelse:
            text = None if id(s) in changed else getattr(s, TEXT, None)
            test = text[3:-1].strip() if text else ast.unparse(s.test)
            new = _header(f"if not ({test}):")
            new.body = _as_rendered(s.orelse, notes, changed, unparsed) or _passes()
        elif id(s) in changed:
            known = unparsed.get(id(s))
            text = known[1] if known is not None and known[0] is s else _head(s)
            if isinstance(s, (ast.If, ast.For, ast.While)):
                new = _header(text)
                new.body = _as_rendered(s.body, notes, changed, unparsed) or _passes()
                new.orelse = _as_rendered(s.orelse, notes, changed, unparsed)
            else:
                parsed = ast.parse(text).body
                for t in statements(parsed):
                    mark(t, text, None)
                if note is not None:
                    for t in parsed:
                        notes[id(t)] = note
                out.extend(parsed)
                continue
        else:
            new = s
            mark(s, text_of(s), None)
            if not hasattr(s, "lineno"):
                s.lineno = s.end_lineno = 1
            if isinstance(s, (ast.If, ast.For, ast.While)):
                s.body = _as_rendered(s.body, notes, changed, unparsed) or _passes()
                s.orelse = _as_rendered(s.orelse, notes, changed, unparsed)
        if note is not None:
            notes[id(new)] = note
        out.append(new)
    return out


def _header(text: str) -> ast.If | ast.For | ast.While:
    """A compound statement parsed from its header line (its body to be filled)."""
    node = ast.parse(text + "\n    pass").body[0]
    assert isinstance(node, (ast.If, ast.For, ast.While))
    mark(node, text, None)
    return node
