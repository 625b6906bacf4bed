"""Constant folding and identities for the expressions rules produce.

Substituting the user's names into a rule leaves constant arithmetic behind
(``2 * x ** (2 - 1)``, ``1.0 / (x * np.log(np.e))``); folding it makes the generated code
shorter and faster. Only NumPy/``math`` constants and pure functions of constants are
evaluated; anything else is left as it is.
"""

from __future__ import annotations

import ast
import math
from functools import lru_cache

import numpy as np

_PURE = {
    "sqrt",
    "log",
    "log2",
    "log10",
    "log1p",
    "exp",
    "exp2",
    "expm1",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "arcsin",
    "arccos",
    "arctan",
    "asin",
    "acos",
    "atan",
    "pi",
    "e",
    "tau",
    "abs",
    "fabs",
    "square",
    "reciprocal",
    "float64",
    "float32",
    "erf",
}
_MODULES = {"np": np, "math": math}


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _value(node: ast.AST) -> bool:
    """Whether a subtree is made only of numbers, module constants and pure calls."""
    if _is_number(node):
        return True
    if isinstance(node, ast.Attribute):
        return (
            isinstance(node.value, ast.Name)
            and node.value.id in _MODULES
            and node.attr in _PURE
            and isinstance(getattr(_MODULES[node.value.id], node.attr, None), float)
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _value(node.operand)
    if _number_test(node):
        return True
    if isinstance(node, ast.BinOp) and isinstance(
        node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
    ):
        return _value(node.left) and _value(node.right)
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in _MODULES
            and func.attr in _PURE
            and all(_value(a) for a in node.args)
        )
    return False


def _number_test(node: ast.AST) -> bool:
    """Whether ``node`` is ``a == b`` or ``a != b`` of two numbers (folded to 0 or 1, as
    the power rule's ``y - 1 + (y == 0)`` is for a constant exponent)."""
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
        and _value(node.left)
        and _value(node.comparators[0])
    )


def _number(value: object) -> ast.AST | None:
    if isinstance(value, (bool, np.bool_)):
        return ast.Constant(int(value))
    if isinstance(value, (int, np.integer)):
        return ast.Constant(int(value))
    if isinstance(value, (float, np.floating)) and math.isfinite(float(value)):
        number = float(value)
        if number < 0:
            return ast.UnaryOp(ast.USub(), ast.Constant(-number))
        return ast.Constant(number)
    return None


def _is(node: ast.AST, number: float) -> bool:
    return _is_number(node) and node.value == number  # type: ignore[attr-defined]


def _constant_test(test: ast.AST) -> bool | None:
    """The value of a comparison of two string constants (``'C' == 'C'``, a rule's
    default substituted into its test), else ``None``."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.NotEq))
        and isinstance(test.left, ast.Constant)
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.left.value, str)
        and isinstance(test.comparators[0].value, str)
    ):
        return None
    same = test.left.value == test.comparators[0].value
    return same if isinstance(test.ops[0], ast.Eq) else not same


class _Folder(ast.NodeTransformer):
    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        if isinstance(
            node, (ast.BinOp, ast.Call, ast.UnaryOp, ast.Attribute, ast.Compare)
        ) and _value(node):
            try:
                code = compile(ast.fix_missing_locations(ast.Expression(node)), "<fold>", "eval")
                folded = _number(eval(code, dict(_MODULES)))  # noqa: S307 (numbers only)
            except (ArithmeticError, ValueError, TypeError):
                folded = None
            if folded is not None:
                return folded
        if isinstance(node, ast.BinOp):
            left, right = node.left, node.right
            if isinstance(node.op, ast.Pow) and _is(right, 1):
                return left
            if isinstance(node.op, ast.Mult):
                if _is(left, 1):
                    return right
                if _is(right, 1):
                    return left
            if isinstance(node.op, ast.Div) and _is(right, 1):
                return left
            if isinstance(node.op, (ast.Add, ast.Sub)) and _is(right, 0):
                return left
        if isinstance(node, ast.IfExp):
            chosen = _constant_test(node.test)
            if chosen is not None:
                return node.body if chosen else node.orelse
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.UnaryOp)
            and isinstance(node.operand.op, ast.USub)
        ):
            return node.operand.operand
        return node


@lru_cache(maxsize=4096)
def fold(expr: str) -> str:
    """Fold constant subexpressions and drop ``* 1``, ``** 1``, ``/ 1``, ``+ 0``."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return expr
    folded = _Folder().visit(tree)
    ast.fix_missing_locations(folded)
    text = ast.unparse(folded)
    if isinstance(folded.body, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
        text = f"({text})"  # the text is composed into larger expressions (a + b)
    return text


def to_math(expr: str, np_name: str, math_name: str) -> str:
    """Use ``math`` instead of NumPy in a derivative of a ``math`` function (floats in, out)."""
    import re

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        return f"{math_name}.{name}" if hasattr(math, name) and name != "pow" else m.group(0)

    return re.sub(rf"(?<![\w.]){re.escape(np_name)}\.(\w+)", repl, expr)


@lru_cache(maxsize=4096)
def times_partial(g: str, partial: str) -> str | None:
    """``g`` times a mask partial (``np.where(c, 1.0, 0.0)``, ``np.where``'s) as a select,
    ``np.where(c, g, 0.0)``: the branch not chosen gets zero even where ``g`` is NaN or
    infinite (the value there was never used), as finite differences give. ``None`` for
    any other partial."""
    try:
        node = ast.parse(partial, mode="eval").body
    except SyntaxError:
        return None
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "where"
        and len(node.args) == 3
        and not node.keywords
    ):
        return None
    ones = [isinstance(a, ast.Constant) and a.value in (0, 1) for a in node.args[1:]]
    if not all(ones):
        return None
    picks = [a.value for a in node.args[1:]]  # type: ignore[attr-defined]
    if sorted(picks) != [0, 1]:
        return None
    func, cond = ast.unparse(node.func), ast.unparse(node.args[0])
    return f"{func}({cond}, {g}, 0.0)" if picks[0] == 1 else f"{func}({cond}, 0.0, {g})"
