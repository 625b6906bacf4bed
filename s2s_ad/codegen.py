"""A tiny code tree for the generated sweeps, rendered to indented Python text.

Tape pushes and pops are placeholders until the reverse pass knows which variables the
backward sweep reads; ``render`` keeps only the sites listed in ``pushed``.
"""

from __future__ import annotations

import functools
import re
import types
from dataclasses import dataclass, field

#: Code objects of every generated function (normalization recognises calls of them).
GENERATED_CODES: set[types.CodeType] = set()

_IDENT = re.compile(r"(?<![\w.'\"])([^\W\d]\w*)")


@dataclass
class Line:
    """One line of code."""

    text: str


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
