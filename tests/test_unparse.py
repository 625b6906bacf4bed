"""``s2s_ad.unparse.unparse`` writes what ``ast.unparse`` writes, for any tree.

The optimizer writes rewritten statements back with it, so a difference would change
the generated code: every statement and expression of generated gradients, trees built
by hand (nodes held twice, precedence corners, odd constants) and every call a transform
makes are compared with ``ast.unparse``.
"""

from __future__ import annotations

import ast
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import s2s_ad
from s2s_ad import codefacts, fold, fold_early, gather, rewrite, trip_records
from s2s_ad.unparse import unparse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import generated  # noqa: E402

CORNERS = """
a = -x ** 2
b = (-x) ** 2
c = x ** -y ** z
d = (x ** y) ** z
e = not a == b
f = (not a) == b
g = a < b < c is not d not in e
h = (a < b) < c
i = a and b or c and not d
j = (a or b) and c
k = x[1:2, ::3, ...]
l = x[(1, 2)]
m = x[()]
n = x[a,]
o = f(*args, y, k=1, **kw)
p = (1).real + 1.5.imag + True.real + (-1).real
q = 1e400 + 1e400j - float("nan") + 0.0 - -0.0
r = "it's" + 'say "hi"' + b"\\x00" + u"u"
s = [a, (b, c), [d]]
t, (u, v) = w = 1, 2
x += y @ z // w % 3 << 1 >> 2 | 4 ^ 5 & 6
y = ~a + +b - -c
z = f(a)(b)[c].d
_ad.add(g, np.sum(h * x, axis=0, keepdims=True))
return (a, b)
return a, *b
return
print(*[1, 2], sep="")
"""


def user_mlp(params: list[tuple[Any, Any]], x: Any, y: Any) -> Any:
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
    w, b = params[-1]
    z = h @ w + b
    z = z - np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=1))
    return -np.mean(np.sum(z * y, axis=1) - lse)


def user_loop(x: float, n: int) -> float:
    total = 0.0
    k = 0
    while total < 10.0 and k < n:
        if x > 0.5:
            total = total + x**2 * math.sin(total)
        else:
            total -= x / (1.0 + k)
        k += 1
    return total


def _every_node(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.stmt, ast.expr))]


def _same(node: ast.AST) -> None:
    try:
        expected = ast.unparse(node)
    except Exception as exc:  # noqa: BLE001 (the same failure expected)
        with pytest.raises(type(exc)):
            unparse(node)
        return
    assert unparse(node) == expected


def test_corners_as_ast_unparse() -> None:
    body = ast.parse("def f():\n" + "\n".join("    " + s for s in CORNERS.strip().splitlines()))
    nodes = _every_node(body.body[0])
    assert len(nodes) > 200
    for node in nodes:
        if not isinstance(node, ast.FunctionDef):
            _same(node)


def test_shared_nodes_and_built_trees() -> None:
    """A node held twice takes the precedence last set for it (as in ``ast.unparse``)."""
    x, y = ast.Name("x", ast.Load()), ast.Name("y", ast.Load())
    total = ast.BinOp(x, ast.Add(), y)
    product = ast.BinOp(total, ast.Mult(), ast.Constant(2.0))
    call = ast.Call(ast.Name("f", ast.Load()), [total, product], [])
    pair = ast.Tuple([total, call], ast.Load())
    trees: list[ast.AST] = [
        ast.Expr(ast.BinOp(call, ast.Pow(), total)),
        ast.Expr(ast.Subscript(total, pair, ast.Load())),
        ast.Expr(ast.BinOp(ast.Constant(-1.0), ast.Pow(), ast.Constant(float("inf")))),
        ast.Expr(ast.Attribute(ast.Constant(3), "real", ast.Load())),
        ast.Expr(ast.Constant((1, 2))),
        ast.Expr(ast.Lambda(ast.arguments([], [], None, [], [], None, []), total)),
        ast.Assign([ast.Name("a", ast.Store())], total),  # no lineno: ast.unparse fails
        ast.Assign([ast.Name("a", ast.Store())], pair, lineno=1),
        ast.AugAssign(ast.Name("a", ast.Store()), ast.Sub(), product),
    ]
    for tree in trees:
        for node in _every_node(tree):
            _same(node)
    assert unparse(trees[0]) == "f(x + y, (x + y) * 2.0) ** (x + y)"


@pytest.mark.parametrize("fun", [user_mlp, user_loop, "generated"])
def test_generated_code_as_ast_unparse(fun: Any) -> None:
    if fun == "generated":
        fun = generated.write_module(60, seed=3, name="unparse_gen").long_loss
    text = s2s_ad.source(s2s_ad.grad(fun))
    nodes = _every_node(ast.parse(text))
    assert len(nodes) > 50
    for node in nodes:
        _same(node)


def test_every_call_of_a_transform(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the passes unparse while transforming, compared call by call."""
    calls: list[str] = []

    def checked(node: ast.AST) -> str:
        text = unparse(node)
        assert text == ast.unparse(node)
        calls.append(text)
        return text

    for module in (codefacts, fold, fold_early, gather, rewrite, trip_records):
        monkeypatch.setattr(module, "unparse", checked)
    module = generated.write_module(120, seed=1, name="unparse_calls")
    rng = np.random.default_rng(0)
    w, x, b = (0.1 * rng.standard_normal(shape) for shape in ((4, 3), (5, 4), 3))
    df = s2s_ad.grad(module.long_loss)
    df(w, x, b)
    df(w, x, 0.5)
    s2s_ad.grad(user_loop)(0.7, 5)
    assert len(calls) > 100
