"""``cstwalk.walk``/``walk_many`` call a visitor's hooks as libcst's own ``node.visit``.

The walks skip whitespace and punctuation and call only the hooks a visitor class
defines itself (``CSTVisitor``'s ``visit_<Type>``/``leave_<Type>`` are no-ops), so a
visitor that records what it is called with must see the same calls from either walk
(in another order where a node's fields are not in source order: ``f(x, axis=1)``'s
keyword comes after its value): the normalizer's scans rely on it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import libcst as cst
import pytest

from s2s_ad import cstwalk

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import generated  # noqa: E402

SOURCES = {
    "mlp": """
def loss(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=1))
    return -np.mean(np.sum(z * y, axis=1) - lse)
""",
    "keras_like": """
class Dense:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.maximum(x @ self.w, 0.0)


def model(w, x, rows=[]):
    layer = Dense(w)
    out = [layer(r) for r in x]
    total = 0.0
    while total < 10.0 and out:
        total += float(np.sum(out.pop()))
        if total > 5.0:
            break
    else:
        total = -total
    return total + sum(rows, 0.0)
""",
    "generated": generated.source(120, 1),
}


class Recorder(cst.CSTVisitor):
    """Records its calls; skips the children of every ``Call`` whose callee is ``np.exp``
    (a ``False`` from a hook) and of lambdas."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.calls.append(("Name", node.value))

    def visit_Call(self, node: cst.Call) -> bool:
        self.calls.append(("Call", cst.Module([]).code_for_node(node.func)))
        func = node.func
        return not (isinstance(func, cst.Attribute) and func.attr.value == "exp")

    def leave_Call(self, original_node: cst.Call) -> None:
        self.calls.append(("/Call", ""))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.calls.append(("Lambda", ""))
        return False

    def leave_For(self, original_node: cst.For) -> None:
        self.calls.append(("/For", ""))

    def visit_Integer(self, node: cst.Integer) -> None:
        self.calls.append(("Integer", node.value))


class Counter(cst.CSTVisitor):
    """Counts every node (``on_visit``), and names on leaving them (a default hook)."""

    def __init__(self) -> None:
        self.nodes = 0
        self.names: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes += not isinstance(node, cst.BaseParenthesizableWhitespace)
        return True

    def leave_Name(self, original_node: cst.Name) -> None:
        self.names.append(original_node.value)


@pytest.mark.parametrize("label", sorted(SOURCES))
def test_walk_calls_the_hooks_libcst_calls(label: str) -> None:
    tree = cst.parse_module(SOURCES[label])
    by_libcst, by_walk = Recorder(), Recorder()
    tree.visit(by_libcst)
    cstwalk.walk(tree, by_walk)
    assert sorted(by_walk.calls) == sorted(by_libcst.calls)
    assert any(c[0] == "/Call" for c in by_walk.calls)


@pytest.mark.parametrize("label", sorted(SOURCES))
def test_walk_many_calls_each_visitor_as_alone(label: str) -> None:
    tree = cst.parse_module(SOURCES[label])
    first, alone = Recorder(), Recorder()
    counted, counted_alone = Counter(), Counter()
    body = next(s for s in tree.body if isinstance(s, cst.FunctionDef)).body
    inner, inner_alone = Recorder(), Recorder()
    cstwalk.walk_many(tree, [first, counted], (body, inner))
    cstwalk.walk(tree, alone)
    cstwalk.walk(tree, counted_alone)
    cstwalk.walk(body, inner_alone)
    assert first.calls == alone.calls
    assert (counted.nodes, counted.names) == (counted_alone.nodes, counted_alone.names)
    assert counted.names and counted.nodes > len(counted.names)
    assert inner.calls == inner_alone.calls and inner.calls
