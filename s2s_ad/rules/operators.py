"""Python operators (``+ - * / // % ** @`` and unary ``-``) as rules.

The reverse pass looks a ``BinOp`` up here by its operator symbol; parameters are
``x`` (left) and ``y`` (right).
"""

from __future__ import annotations

import operator

import numpy as np

from .registry import REGISTRY, Rule, elementwise, nondiff, set_jvps, vjp_rule

_S = [(1.3, -0.7), (np.array([0.5, 1.5, 2.0]), np.array([[1.2], [0.4]]))]
_P = [(1.3, 0.7), (np.array([0.5, 1.5, 2.0]), np.array([[1.2], [2.4]]))]

add = elementwise("+", [operator.add, np.add], ("x", "y"), ("1", "1"), _S, sympy="Add")
sub = elementwise("-", [operator.sub, np.subtract], ("x", "y"), ("1", "-1"), _S)
mul = elementwise("*", [operator.mul, np.multiply], ("x", "y"), ("y", "x"), _S, sympy="Mul")
truediv = elementwise(
    "/", [operator.truediv, np.divide, np.true_divide], ("x", "y"), ("1.0 / y", "-ans / y"), _P
)
power = elementwise(
    "**",
    [operator.pow, np.power],
    ("x", "y"),
    # ``+ (y == 0)``: ``x ** 0`` has the derivative 0, also at ``x = 0`` (``k * x ** (k - 1)``
    # of a polynomial's constant term would be ``0 * inf``); a constant ``y`` folds it away
    ("y * x ** (y - 1 + (y == 0))", "ans * _ad.safe_log(x)"),
    _P,
    sympy="Pow",
)
mod = elementwise(
    "%",
    [operator.mod, np.mod, np.remainder],
    ("x", "y"),
    ("1", "-np.floor(x / y)"),
    [(5.3, 2.1), (np.array([3.3, 7.1]), 2.5)],
)
matmul = vjp_rule(
    "@",
    [operator.matmul, np.matmul, *([np.linalg.matmul] if hasattr(np.linalg, "matmul") else [])],
    ("x", "y"),
    {"x": "_ad.matmul_vjp_x(g, x, y)", "y": "_ad.matmul_vjp_y(g, x, y)"},
    [
        (np.arange(6.0).reshape(2, 3) / 4, np.arange(12.0).reshape(3, 4) / 5),
        (np.array([0.3, -1.2, 0.8]), np.arange(6.0).reshape(3, 2) / 3),
    ],
    linear=True,
)
set_jvps(matmul, x="np.matmul(t, y)", y="np.matmul(x, t)")
neg = elementwise("unary -", [operator.neg, np.negative], ("x",), ("-1",), [(1.5,)])
pos = elementwise("unary +", [operator.pos, np.positive], ("x",), ("1",), [(1.5,)])
floordiv = nondiff("//", [operator.floordiv, np.floor_divide])

BINARY: dict[str, Rule] = {
    "+": add,
    "-": sub,
    "*": mul,
    "/": truediv,
    "**": power,
    "%": mod,
    "@": matmul,
    "//": floordiv,
}
UNARY: dict[str, Rule] = {"-": neg, "+": pos}

__all__ = ["BINARY", "UNARY", "REGISTRY"]
