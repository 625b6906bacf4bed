"""A tiny code tree for the generated sweeps, rendered to indented Python text.

Tape pushes and pops are placeholders until the reverse pass knows which variables the
backward sweep reads; ``render`` keeps only the sites listed in ``pushed``.
"""

from __future__ import annotations

import ast
import functools
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Code objects of every generated function (normalization recognises calls of them).
GENERATED_CODES: set[types.CodeType] = set()

_IDENT = re.compile(r"(?<![\w.'\"])([^\W\d]\w*)")


@dataclass
class Line:
    """One line of code (``make``, when given, builds its statements without parsing
    ``text``: the same trees, fresh each call; ``None`` from it says to parse)."""

    text: str
    make: Callable[[], list[ast.stmt] | None] | None = field(
        default=None, compare=False, repr=False
    )
    #: The optimizer's estimate of the line's width when it differs from ``text``'s (a
    #: line temporaries were folded into as it was emitted: see ``fold_early``).
    width: int | None = field(default=None, compare=False, repr=False)


@dataclass
class Comment:
    """A ``# L<line>: <source>`` comment."""

    text: str


@dataclass
class Suite:
    """A compound statement: ``header`` with a body (and an ``else`` for ``if``)."""

    header: str
    body: list[Item] = field(default_factory=list)
    orelse: list[Item] | None = None
    keep_empty: bool = False


@dataclass
class Push:
    """Save ``code`` (a variable or an overwritten slice) on the tape at site ``site``."""

    code: str
    site: int


@dataclass
class Pop:
    """Restore ``target`` from the tape (``x = _tape.pop()`` or ``x[i] = _tape.pop()``)."""

    target: str
    site: int
    text: str | None = None


Item = Line | Comment | Suite | Push | Pop


@functools.lru_cache(maxsize=1 << 16)
def identifiers(text: str) -> frozenset[str]:
    """Identifiers read by a piece of code (attribute names and string contents excluded;
    cached: the sweeps ask it of the same lines again and again)."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "''", text)
    return frozenset(_IDENT.findall(text))


SITE = "  #@"  # marks a push or pop with its site, for the optimizer (removed after it)


def render(
    items: list[Item], pushed: set[int], indent: int = 1, tape: str = "_tape", sites: bool = False
) -> list[str]:
    """Render items to lines, keeping only the pushes/pops of sites in ``pushed`` (with
    ``sites``, each ends with a ``#@<site>`` mark)."""
    out: list[str] = []
    pad = "    " * indent
    pending_comment: str | None = None
    for item in items:
        if isinstance(item, Comment):
            pending_comment = item.text
            continue
        lines: list[str]
        if isinstance(item, Line):
            lines = [pad + item.text]
        elif isinstance(item, Push):
            if item.site not in pushed or not item.code:
                continue
            lines = [f"{pad}{tape}.append({item.code})" + (f"{SITE}{item.site}" if sites else "")]
        elif isinstance(item, Pop):
            if item.site not in pushed:
                continue
            text = item.text or f"{item.target} = {tape}.pop()"
            lines = [pad + text + (f"{SITE}{item.site}" if sites and "\n" not in text else "")]
        else:
            body = render(item.body, pushed, indent + 1, tape, sites)
            orelse = render(item.orelse, pushed, indent + 1, tape, sites) if item.orelse else []
            if not body and not orelse and not item.keep_empty:
                continue
            if not body and orelse and item.header.startswith("if ") and item.orelse is not None:
                cond = item.header[3:-1]
                lines = [f"{pad}if not {_paren(cond)}:", *orelse]
            else:
                lines = [pad + item.header, *(body or [pad + "    pass"])]
                if orelse:
                    lines += [pad + "else:", *orelse]
        if pending_comment is not None:
            out.append(pad + pending_comment)
            pending_comment = None
        out.extend(lines)
    return out


def _paren(cond: str) -> str:
    return cond if re.fullmatch(r"[\w.]+", cond) else f"({cond})"


#: Attribute names on generated statements: the statement's own text (a compound
#: statement's header line, stripped, without a site mark) and its tape site.
TEXT, SITE_OF = "s2s_text", "s2s_site"
#: The width the optimizer reckons a statement has, where its text is not that long.
WIDTH_OF = "s2s_width"


def mark(s: ast.stmt, text: str, site: int | None) -> None:
    """Give ``s`` its own text and tape site."""
    setattr(s, TEXT, text)
    setattr(s, SITE_OF, site)


class Builder:
    """A generated function as :mod:`ast` statements, built from the sweeps' items in the
    order :func:`render` writes them (the optimizer takes the statements without parsing
    the function's text). Each statement carries its text and tape site (:func:`mark`);
    the ``# ...`` comment lines above a statement go into ``notes``, keyed by its id, as
    ``rewrite.comments`` finds them in the text.
    """

    def __init__(self, header: str) -> None:
        self.func = ast.parse(header + "\n    pass").body[0]
        assert isinstance(self.func, ast.FunctionDef)
        setattr(self.func, TEXT, header)
        self.notes: dict[int, str] = {}
        self._pending: list[str] = []
        self._blocks: list[list[ast.stmt]] = [[]]

    def done(self) -> tuple[ast.FunctionDef, dict[int, str]]:
        """The function and its statements' comments."""
        later: list[_Later] = []
        _collect(self._blocks[0], later)
        if later:  # the lines without a tree of their own, parsed together
            source: list[str] = []
            for item in later:
                item.start = len(source) + 1
                source += [item.text, "    pass"] if item.suite else [item.text]
            parsed = ast.parse("\n".join(source)).body
            k = 0
            for item in later:
                end = item.start + (2 if item.suite else 1)
                while k < len(parsed) and parsed[k].lineno < end:
                    item.stmts.append(parsed[k])
                    k += 1
        self.func.body = self._resolve(self._blocks[0]) or [ast.Pass()]  # type: ignore[arg-type]
        return self.func, self.notes

    def _resolve(self, block: list[Any]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in block:
            if not isinstance(s, _Later):
                out.append(s)
                continue
            for t in _nested(s.stmts) if not s.suite else s.stmts:
                mark(t, s.text.strip(), s.site)
            if s.note is not None:
                for t in s.stmts:
                    if t.lineno == s.stmts[0].lineno:
                        self.notes[id(t)] = s.note
            if s.suite:
                (node,) = s.stmts
                body = self._resolve(s.body)
                if not body:
                    body = ast.parse("pass").body
                    mark(body[0], "pass", None)
                node.body = body  # type: ignore[attr-defined]
                node.orelse = self._resolve(s.orelse)  # type: ignore[attr-defined]
            out.extend(s.stmts)
        return out

    def lines(self, lines: list[str]) -> None:
        """Lines of code at the function's top level (each indented by four spaces)."""
        self._chunk([line[4:] for line in lines], None)

    def items(self, items: list[Item], pushed: set[int], tape: str, sites: bool) -> None:
        """What ``render(items, pushed, 1, tape, sites)`` writes, at the top level."""
        self._items(items, pushed, tape, sites)

    def _items(self, items: list[Item], pushed: set[int], tape: str, sites: bool) -> bool:
        """Build ``items`` into the current block; whether anything was built."""
        built = False
        pending_comment: str | None = None
        for item in items:
            if isinstance(item, Comment):
                pending_comment = item.text
                continue
            if isinstance(item, Suite):
                if not self._suite(item, pushed, tape, sites, pending_comment):
                    continue
            else:
                if isinstance(item, Line):
                    text, site = item.text, None
                    made = item.make() if item.make is not None else None
                    if made is not None:
                        if pending_comment is not None:
                            self._comment(pending_comment)
                        for s in made:
                            mark(s, text.strip(), None)
                            if item.width is not None:
                                setattr(s, WIDTH_OF, item.width)
                        self._take(made)
                        pending_comment = None
                        built = True
                        continue
                elif isinstance(item, Push):
                    if item.site not in pushed or not item.code:
                        continue
                    text, site = f"{tape}.append({item.code})", item.site
                else:
                    if item.site not in pushed:
                        continue
                    text = item.text or f"{item.target} = {tape}.pop()"
                    site = item.site if "\n" not in text else None
                if pending_comment is not None:
                    self._comment(pending_comment)
                self._chunk(text.split("\n"), site if sites else None)
            pending_comment = None
            built = True
        return built

    def _suite(
        self, item: Suite, pushed: set[int], tape: str, sites: bool, comment: str | None
    ) -> bool:
        """Build a compound statement (as ``render`` writes it); whether it was built."""
        pending = self._pending
        note = [*pending, comment] if comment is not None else pending
        self._pending = []  # the comments above go to the header
        body: list[ast.stmt] = []
        orelse: list[ast.stmt] = []
        self._blocks.append(body)
        has_body = self._items(item.body, pushed, tape, sites)
        self._blocks.pop()
        trailing, self._pending = self._pending, []  # comment lines ending the body
        has_orelse = False
        if item.orelse:
            self._blocks.append(orelse)
            has_orelse = self._items(item.orelse, pushed, tape, sites)
            self._blocks.pop()
        if not has_body and not has_orelse and not item.keep_empty:
            self._pending = pending  # nothing written
            return False
        if not has_orelse:
            self._pending = trailing  # else lost at the ``else:`` line
        header = item.header
        if not has_body and has_orelse and header.startswith("if ") and item.orelse is not None:
            header, body, orelse = f"if not {_paren(header[3:-1])}:", orelse, []
        later = _Later(header, None, "\n".join(note) if note else None, True, body, orelse)
        self._blocks[-1].append(later)  # type: ignore[arg-type]
        return True

    def _comment(self, text: str) -> None:
        self._pending.append(text)

    def _chunk(self, lines: list[str], site: int | None) -> None:
        """Statements from ``lines`` (one item's text, unindented), comment lines kept
        for the statement that follows them."""
        if len(lines) == 1 and lines[0].strip() and not lines[0].lstrip().startswith("#"):
            note = "\n".join(self._pending) if self._pending else None
            self._pending = []
            self._blocks[-1].append(_Later(lines[0], site, note))  # type: ignore[arg-type]
            return
        tree = ast.parse("\n".join(lines))
        by_line: dict[int, list[ast.stmt]] = {}
        for s in _nested(tree.body):
            by_line.setdefault(s.lineno, []).append(s)
            mark(s, lines[s.lineno - 1].strip(), site if len(lines) == 1 else None)
        for number, line in enumerate(lines, start=1):
            text = line.strip()
            if text.startswith("#"):
                self._pending.append(text)
            elif text and self._pending:
                for s in by_line.get(number, ()):
                    self.notes[id(s)] = "\n".join(self._pending)
                self._pending = []
        self._blocks[-1].extend(tree.body)

    def _take(self, stmts: list[ast.stmt]) -> None:
        if self._pending and stmts:
            for s in stmts:
                if s.lineno == stmts[0].lineno:
                    self.notes[id(s)] = "\n".join(self._pending)
            self._pending = []
        self._blocks[-1].extend(stmts)


@dataclass
class _Later:
    """A line (or a compound statement's header) of a function being built, parsed with
    the others when the function is done (one parse, not one per line)."""

    text: str
    site: int | None
    note: str | None
    suite: bool = False
    body: list[Any] = field(default_factory=list)
    orelse: list[Any] = field(default_factory=list)
    start: int = 0
    stmts: list[ast.stmt] = field(default_factory=list)


def _collect(block: list[Any], out: list[_Later]) -> None:
    for s in block:
        if isinstance(s, _Later):
            out.append(s)
            _collect(s.body, out)
            _collect(s.orelse, out)


def _nested(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        out.append(s)
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                out.extend(_nested(inner))
    return out
