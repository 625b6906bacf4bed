"""Live function -> parsed libcst tree, with the file, line offsets, globals and closure.

``parse_function`` is the only entry point. It unwraps decorators, reads the source
(``inspect`` for ``def``; the whole file for a lambda, which is then located among the
lambdas of its line by the code object's instruction positions), dedents it, parses it
with libcst and resolves positions once.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from .errors import TransformError


@dataclass
class ParsedFunction:
    """A user function ready for normalization.

    Attributes:
        func: The live function object.
        node: Its ``FunctionDef`` or ``Lambda`` node.
        module: The parsed module the node belongs to (for ``code_for_node``).
        positions: Position metadata for the original nodes of ``module``.
        filename: File of the source.
        line_offset: Added to a module line number to get the file line number.
        col_offset: Added to a module column to get the file column (dedent).
        name: Function name (``"<lambda>"`` for lambdas).
        globals: The function's module globals.
        closure: Free variable name -> cell.
    """

    func: Any
    node: cst.FunctionDef | cst.Lambda
    module: cst.Module
    positions: Any
    filename: str
    line_offset: int
    col_offset: int
    name: str
    globals: dict[str, Any]
    closure: dict[str, Any] = field(default_factory=dict)

    def position(self, node: cst.CSTNode) -> tuple[int, int | None]:
        """File line and column of an original node (``(line, None)`` when unknown)."""
        rng: CodeRange | None = self.positions.get(node)
        if rng is None:
            return self.first_line, None
        return rng.start.line + self.line_offset, rng.start.column + self.col_offset

    @property
    def first_line(self) -> int:
        rng = self.positions.get(self.node)
        return (rng.start.line if rng else 1) + self.line_offset

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node, on one line (without the comment lines above it)."""
        if hasattr(node, "leading_lines"):
            node = node.with_changes(leading_lines=())
        text = self.module.code_for_node(node)
        return " ".join(part.strip() for part in text.splitlines()) if "\n" in text else text

    def error(
        self, construct: str, node: cst.CSTNode | None = None, hint: str = ""
    ) -> TransformError:
        """A ``TransformError`` pointing at ``node`` (or the function's first line)."""
        if node is None:
            return TransformError(construct, self.filename, self.first_line, None, hint)
        line, col = self.position(node)
        return TransformError(construct, self.filename, line, col, hint)


def _no_source(func: Any, why: str) -> TransformError:
    name = getattr(func, "__qualname__", None) or repr(func)
    return TransformError(
        f"{name}: {why}",
        getattr(getattr(func, "__code__", None), "co_filename", "<unknown>"),
        getattr(getattr(func, "__code__", None), "co_firstlineno", 0),
        hint=f"register a gradient rule with s2s_ad.defgrad({name}, rule)",
    )


@functools.lru_cache(maxsize=64)
def _parse_file(filename: str, text: str) -> tuple[cst.Module, Any]:
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return module, wrapper.resolve(PositionProvider)


def parse_function(func: Any) -> ParsedFunction:
    """Parse a live Python function or lambda.

    Args:
        func: A Python function (decorators are unwrapped).

    Returns:
        The parsed function.

    Raises:
        TransformError: When the function has no readable source.
    """
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if not isinstance(func, types.FunctionType) or code is None:
        raise _no_source(func, "has no Python source (builtin or C function)")
    closure = {}
    if func.__closure__:
        closure = dict(zip(code.co_freevars, func.__closure__))
    if code.co_name == "<lambda>":
        return _parse_lambda(func, code, closure)
    try:
        lines, start = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise _no_source(func, f"source is not available ({exc})") from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    col_offset = len(lines[0]) - len(lines[0].lstrip()) if text != raw else 0
    try:
        module, positions = _parse_file(code.co_filename + ":" + str(start), text)
    except cst.ParserSyntaxError as exc:
        raise _no_source(func, f"source could not be parsed ({exc.message})") from None
    node = next((s for s in module.body if isinstance(s, cst.FunctionDef)), None)
    if node is None:
        raise _no_source(func, "source is not a function definition")
    return ParsedFunction(
        func,
        node,
        module,
        positions,
        code.co_filename,
        start - 1,
        col_offset,
        code.co_name,
        func.__globals__,
        closure,
    )


class _LambdaFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Lambda] = []

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.found.append(node)


def _parse_lambda(func: Any, code: types.CodeType, closure: dict[str, Any]) -> ParsedFunction:
    filename = code.co_filename
    text = "".join(linecache.getlines(filename, func.__globals__))
    if not text:
        raise _no_source(func, "source is not available")
    try:
        module, positions = _parse_file(filename, text)
    except cst.ParserSyntaxError as exc:
        raise _no_source(func, f"source could not be parsed ({exc.message})") from None
    finder = _LambdaFinder()
    module.visit(finder)
    line = code.co_firstlineno
    candidates = [
        n for n in finder.found if positions[n].start.line <= line <= positions[n].end.line
    ]
    spans = [
        (ln, col)
        for ln, _, col, end in getattr(code, "co_positions", lambda: [])()
        if ln is not None and col is not None and (col, end) != (0, 0)  # not RESUME's
    ]
    if spans:
        # The body's instructions all lie inside the lambda's body; its first one gives
        # the start. Columns are UTF-8 offsets; sources here are nearly always ASCII.
        start = min(spans)

        def contains(n: cst.Lambda) -> bool:
            rng = positions[n.body]
            return (rng.start.line, rng.start.column) <= start <= (rng.end.line, rng.end.column)

        inner = [n for n in candidates if contains(n)]
        inner.sort(key=lambda n: (positions[n].start.line, positions[n].start.column))
        candidates = inner[-1:] if inner else candidates
    if len(candidates) != 1:
        raise _no_source(func, "several lambdas share its line and none could be singled out")
    return ParsedFunction(
        func,
        candidates[0],
        module,
        positions,
        filename,
        0,
        0,
        "<lambda>",
        func.__globals__,
        closure,
    )
