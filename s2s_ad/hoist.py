"""Pushes moved above the assignments they do not depend on (one user line at a time).

The forward sweep records a value right before the statement that overwrites it; a user
line split into temporaries then holds its push in the middle. Moving the push up to
the start of the line lets the optimizer fold the line back together.
"""

from __future__ import annotations

import ast
import functools
import re

from .codefacts import pure
from .codegen import Item, Line, Push, identifiers

#: ``a = ...`` or ``a, b = ...``: the names a plain assignment binds.
_BINDING = re.compile(r"\s*((?:[^\W\d]\w*\s*,\s*)*[^\W\d]\w*\s*,?)\s*=(?!=)")


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


@functools.lru_cache(maxsize=1 << 14)
def _line_stores(text: str, tape: str, pure_only: bool) -> frozenset[str] | None:
    """Names a one-line statement binds (``None`` when it is not names bound to a value,
    when it uses ``tape``, or with ``pure_only`` when the value may have effects; cached:
    a line is asked about once per push after it)."""
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
    return frozenset(name.strip() for name in match.group(1).split(",")) - {""}
