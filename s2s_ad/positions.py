"""Source positions of a parsed function's nodes, cheaply.

libcst's ``PositionProvider`` regenerates the whole tree's code to record every node's
range, which costs more than parsing (about 0.2 s for a 300-line function). The
transformer mostly asks for the line of each statement and the text of each simple
statement line (for the ``# L<line>: <source>`` comments). Python's own parser gives
statement positions in milliseconds: walking the libcst and ``ast`` statement lists side
by side maps each libcst statement to the ``ast`` statement(s) it holds. Any other node
(an expression, for an error message) gets its position from ``PositionProvider``,
resolved at the first such question. When the two trees do not line up (a construct the
walk does not know), every question goes to ``PositionProvider``.
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

_UNMAPPED = object()


class _Mismatch(Exception):
    """The libcst and ``ast`` statement lists do not line up."""


class Positions:
    """Node -> ``CodeRange`` for the original nodes of ``module`` (``get``/``[]``), and
    the one-line text of a simple statement line (``line_text``).

    Args:
        module: The parsed module.
        text: The text it was parsed from.
    """

    def __init__(self, module: cst.Module, text: str) -> None:
        self.module, self.text = module, text
        self.lines = text.splitlines()
        self._full: Any = None
        #: statement node -> (start line, start column, end line), 1-based lines
        self.spans: dict[cst.CSTNode, tuple[int, int, int]] = {}
        #: compound statement node -> its ``ast`` node
        self.ast_of: dict[cst.CSTNode, ast.stmt] = {}
        self.tree: ast.Module | None = None
        try:
            self.tree = ast.parse(text)
            self._block(list(module.body), self.tree.body)
        except (SyntaxError, ValueError, _Mismatch):
            self.spans.clear()
            self.ast_of.clear()

    # --- the side-by-side walk ------------------------------------------------------------

    def _record(self, node: cst.CSTNode, first: ast.stmt, last: ast.stmt) -> None:
        line = self.lines[first.lineno - 1]
        col = len(line.encode()[: first.col_offset].decode(errors="replace"))
        end = last.end_lineno or last.lineno
        self.spans[node] = (first.lineno, col, end)

    def _block(self, stmts: list[Any], nodes: list[ast.stmt]) -> None:
        k = 0
        for stmt in stmts:
            if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                small = list(stmt.body)
                if k + len(small) > len(nodes) or not small:
                    raise _Mismatch
                self._record(stmt, nodes[k], nodes[k + len(small) - 1])
                for node in small:
                    self._record(node, nodes[k], nodes[k])
                    k += 1
                continue
            if k >= len(nodes):
                raise _Mismatch
            self._compound(stmt, nodes[k])
            k += 1
        if k != len(nodes):
            raise _Mismatch

    def _suite(self, suite: Any, nodes: list[ast.stmt]) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._block(list(suite.body), nodes)
        elif isinstance(suite, cst.SimpleStatementSuite):
            self._block([suite], nodes)
        else:
            raise _Mismatch

    def _compound(self, stmt: Any, node: ast.stmt) -> None:
        if isinstance(stmt, cst.If) and isinstance(node, ast.If):
            self._suite(stmt.body, node.body)
            if isinstance(stmt.orelse, cst.If):
                if len(node.orelse) != 1:
                    raise _Mismatch
                self._compound(stmt.orelse, node.orelse[0])
            elif isinstance(stmt.orelse, cst.Else):
                self._suite(stmt.orelse.body, node.orelse)
            elif node.orelse:
                raise _Mismatch
        elif isinstance(stmt, cst.For) and isinstance(node, (ast.For, ast.AsyncFor)):
            self._loop(stmt, node)
        elif isinstance(stmt, cst.While) and isinstance(node, ast.While):
            self._loop(stmt, node)
        elif isinstance(stmt, cst.With) and isinstance(node, (ast.With, ast.AsyncWith)):
            self._suite(stmt.body, node.body)
        elif isinstance(stmt, cst.FunctionDef) and isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            self._suite(stmt.body, node.body)
        elif isinstance(stmt, cst.ClassDef) and isinstance(node, ast.ClassDef):
            self._suite(stmt.body, node.body)
        elif isinstance(stmt, cst.Try) and isinstance(node, ast.Try):
            self._suite(stmt.body, node.body)
            if len(stmt.handlers) != len(node.handlers):
                raise _Mismatch
            for handler, h in zip(stmt.handlers, node.handlers):
                self._suite(handler.body, h.body)
            self._else(stmt.orelse, node.orelse)
            if stmt.finalbody is not None:
                self._suite(stmt.finalbody.body, node.finalbody)
            elif node.finalbody:
                raise _Mismatch
        else:
            raise _Mismatch  # match, try*, ...: PositionProvider answers
        self._record(stmt, node, node)
        self.ast_of[stmt] = node

    def _loop(self, stmt: Any, node: Any) -> None:
        self._suite(stmt.body, node.body)
        self._else(stmt.orelse, node.orelse)

    def _else(self, orelse: Any, nodes: list[ast.stmt]) -> None:
        if orelse is not None:
            self._suite(orelse.body, nodes)
        elif nodes:
            raise _Mismatch

    # --- answers ------------------------------------------------------------------------

    def _resolved(self) -> Any:
        if self._full is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._full = wrapper.resolve(PositionProvider)
        return self._full

    def get(self, node: cst.CSTNode, default: Any = None) -> CodeRange | None:
        """The range of an original node (the start exact, the end at its last line for
        statements), else ``default``."""
        span = self.spans.get(node)
        if span is not None:
            line, col, end = span
            return CodeRange(CodePosition(line, col), CodePosition(end, 0))
        if self.spans and isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
            return default  # every original statement is mapped: one made later
        return self._resolved().get(node, default)

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        rng = self.get(node, _UNMAPPED)
        if rng is _UNMAPPED:
            raise KeyError(node)
        return rng  # type: ignore[return-value]

    def line_text(self, node: cst.CSTNode) -> str | None:
        """The text of an original simple statement line on one line (each physical line
        stripped, joined by spaces, its trailing comment kept), or ``None``."""
        if not isinstance(node, cst.SimpleStatementLine):
            return None
        span = self.spans.get(node)
        if span is None:
            return None
        line, col, end = span
        parts = [self.lines[line - 1][col:], *self.lines[line:end]]
        if parts[-1].rstrip().endswith("\\"):
            return None  # continued past the statement: let libcst decide
        return " ".join(part.strip() for part in parts)

    def returns_value(self, node: cst.FunctionDef) -> bool | None:
        """Whether some ``return`` of the function ``node`` itself (not of a nested
        function or class) gives a value other than ``None``; ``None`` when unmapped."""
        tree = self.ast_of.get(node)
        if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        todo: list[ast.AST] = list(tree.body)
        while todo:
            item = todo.pop()
            if isinstance(item, ast.Return):
                value = item.value
                if value is not None and not (
                    isinstance(value, ast.Constant) and value.value is None
                ):
                    return True
            elif not isinstance(
                item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
            ):
                todo.extend(ast.iter_child_nodes(item))
        return False
