"""Statement positions and texts from Python's parser must be those libcst reports."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from s2s_ad.positions import Positions

SOURCES = {
    "layers": '''
        @decorator(1,
                   2)
        def forward(params, x):  # the model
            """Docstring."""
            for W, b in params[:-1]:
                x = np.tanh(x @ W + b)  # hidden layer
            W, b = params[-1]; logits = x @ W + b
            total = (np.sum(logits)
                     # a comment inside the parentheses
                     + 1.0)
            if total > 0: total = total * 2.0; y = 1
            elif total < -1.0:
                total = -total
            else:
                pass
            while total > 10.0:
                total = total / 2.0
            else:
                total = total + 0.0
            with context() as c:
                total = total + c
            try:
                total = float(total)
            except (TypeError, ValueError) as exc:
                raise
            else:
                total = total + 1.0
            finally:
                cleanup()

            class Local:
                a = 1

            def inner(z):
                return z * 2.0

            return inner(total)
        ''',
    "tabs_and_unicode": "def f(x):\n    s = 'é' ; t = x * 2.0\n    return t + len(s)\n",
    "continued": "def f(x):\n    y = x + \\\n        1.0\n    return y\n",
}


def _statements(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
                found.append(node)
            return True

    module.visit(Visitor())
    return found


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_statement_starts_and_texts_agree_with_libcst(name):
    text = textwrap.dedent(SOURCES[name]).lstrip("\n")
    module = cst.parse_module(text)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, text)
    assert positions.spans, "the side-by-side walk should map this source"
    statements = _statements(module)
    assert statements
    for node in statements:
        want, got = full[node].start, positions[node].start
        assert (got.line, got.column) == (want.line, want.column), type(node).__name__
        line_text = positions.line_text(node)
        if line_text is not None:
            code = module.code_for_node(node.with_changes(leading_lines=()))
            assert line_text == " ".join(part.strip() for part in code.splitlines())


def test_expressions_and_made_statements():
    text = "def f(x):\n    return np.sin(x) + 1.0\n"
    module = cst.parse_module(text)
    positions = Positions(module, text)
    func = module.body[0]
    ret = func.body.body[0].body[0]
    call = ret.value.left
    # an expression: answered by PositionProvider
    assert (positions[call].start.line, positions[call].start.column) == (2, 11)
    # a statement made after parsing is not an original node
    assert positions.get(cst.Expr(cst.Name("x"))) is None
    assert positions.returns_value(func) is True


def test_match_statement_falls_back_to_libcst():
    text = "def f(x):\n    match x:\n        case 1:\n            y = 2.0\n    return y\n"
    module = cst.parse_module(text)
    positions = Positions(module, text)
    assert not positions.spans  # the walk does not know match: libcst answers everything
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    for node in _statements(module):
        assert positions[node].start == full[node].start
    assert positions.line_text(module.body[0]) is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("return x", True),
        ("return", False),
        ("return None", False),
        ("def g():\n        return 1\n    print(x)", False),
        ("if x:\n        return x\n    return None", True),
        ("for i in x:\n        return i", True),
    ],
)
def test_returns_value(body, expected):
    text = f"def f(x):\n    {body}\n"
    module = cst.parse_module(text)
    assert Positions(module, text).returns_value(module.body[0]) is expected
