"""The one exception the transformer raises for code it cannot differentiate."""

from __future__ import annotations

import linecache
import os
import re
import sys


class TransformError(Exception):
    """Raised at transform time for code that cannot be differentiated.

    The message names the construct, the file and line, shows the source line
    with a caret under the offending column, and, when there is one, a hint.

    One raised while generated code runs (a rule refusing its arguments, a callee known
    only then) without a location of its own is located at the user's line the innermost
    generated frame on the stack comes from (its ``# L<n>:`` comment).

    Attributes:
        construct: Short name of what was refused (e.g. ``"yield"``).
        filename: File of the user's source.
        lineno: 1-based line number in ``filename``.
        col: 0-based column, or ``None``.
        hint: Suggestion for the user, or ``""``.
    """

    def __init__(
        self,
        construct: str,
        filename: str = "<unknown>",
        lineno: int = 0,
        col: int | None = None,
        hint: str = "",
        line_text: str | None = None,
    ) -> None:
        if lineno <= 0 and filename == "<unknown>" and type(self) is TransformError:
            placed = _running_line()
            if placed is not None:
                filename, lineno, line_text = placed
        self.construct = construct
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.hint = hint
        if line_text is None and lineno > 0:
            line_text = linecache.getline(filename, lineno).rstrip("\n")
        self.line_text = line_text or ""
        super().__init__(self._format())

    def with_names(self, names: dict[str, str]) -> TransformError:
        """This refusal with the variables ``names`` renames (``g_2``, a name the user
        reused for unrelated values renamed apart) shown as the user's (``g``)."""
        if not names or type(self) is not TransformError:
            return self
        found = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
        construct = found.sub(lambda m: names[m.group(1)], self.construct)
        hint = found.sub(lambda m: names[m.group(1)], self.hint)
        if construct == self.construct and hint == self.hint:
            return self
        return TransformError(construct, self.filename, self.lineno, self.col, hint, self.line_text)

    def _format(self) -> str:
        where = f"{self.filename}:{self.lineno}"
        if self.col is not None:
            where += f":{self.col + 1}"
        if self.lineno <= 0:
            parts = [f"cannot differentiate {self.construct}"]
        else:
            parts = [f"cannot differentiate {self.construct} ({where})"]
        if self.line_text:
            stripped = self.line_text.lstrip()
            parts.append("    " + stripped)
            if self.col is not None:
                offset = self.col - (len(self.line_text) - len(stripped))
                if offset >= 0:
                    parts.append("    " + " " * offset + "^")
        if self.hint:
            parts.append("hint: " + self.hint)
        return "\n".join(parts)


def _running_line() -> tuple[str, int, str] | None:
    """The user's file, line and source text of the generated code running innermost on
    the stack (a ``<s2s_ad:...>`` frame under a ``# L<n>:`` comment; code generated from
    s2s_ad's own helpers, differentiated again, is passed over), or ``None``."""
    from .source import user_lines, user_origin

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<s2s_ad:"):
            path = user_origin(filename, 0).rsplit(":", 1)[0]
            if not path.startswith(package):
                where = user_lines(filename).get(frame.f_lineno)
                return None if where is None else (path, where[0], where[1])
        frame = frame.f_back
    return None


class OutputError(TypeError, ValueError):
    """Raised at run time when a differentiated function returns ``None``.

    A function that returns ``None`` (a forgotten ``return``, or one reached only on some
    paths) has no derivative. Both a ``TypeError`` (as JAX and autograd raise for a
    non-array output) and a ``ValueError`` (as for an output of the wrong shape).
    """


class StaleSourceError(TransformError):
    """The source file of a function changed since the function was defined: the text on
    disk is not the code that runs, so it is not differentiated in its place."""
