"""The statements the sweeps build for the optimizer (``codegen.Builder``) are those of the
text they write: the same trees, each statement with the same own text, tape site and
comment lines as ``rewrite.attach`` finds when the text is parsed. The optimizer takes the
built statements without parsing the text, so any difference would change the generated
code silently."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pytest
from corpus import collect

import s2s_ad
from s2s_ad import codefacts, optimize, rewrite
from s2s_ad.api import clear_cache


def _facts(func: ast.FunctionDef, notes: dict[int, str]) -> list[tuple[Any, ...]]:
    return [
        (rewrite.text_of(s), rewrite.site(s), notes.get(id(s)))
        for s in codefacts.statements(func.body)
    ]


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Checks every function the optimizer is handed built statements for; the texts
    checked."""
    seen: list[str] = []
    original = optimize.optimize_function

    def checking(text: str, tape: str, facts: Any, *args: Any, **kwargs: Any) -> str:
        built = kwargs.get("built")
        if built is not None:
            func, notes = built()
            parsed = ast.parse(text).body[0]
            assert isinstance(parsed, ast.FunctionDef)
            parsed_notes = rewrite.attach(parsed, text.split("\n"))
            assert ast.dump(func) == ast.dump(parsed), text
            assert _facts(func, notes) == _facts(parsed, parsed_notes), text
            assert rewrite.text_of(func) == rewrite.text_of(parsed)
            seen.append(text)
        return original(text, tape, facts, *args, **kwargs)

    monkeypatch.setattr(optimize, "optimize_function", checking)
    clear_cache()
    yield seen
    clear_cache()


def test_built_statements_match_the_text_for_every_corpus_function(compared: list[str]):
    for c in collect():
        try:
            df = s2s_ad.grad(c.fun, c.wrt)
            with np.errstate(all="ignore"):
                for point in c.points:
                    df(*c.args(point))
        except s2s_ad.TransformError:
            continue
    assert len(compared) > 100
    texts = "\n".join(compared)
    for shape in ("for ", "while ", "if not ", "_tape.pop()", "# L"):
        assert shape in texts  # loops, branches, tape traffic and comments were compared


def test_built_statements_of_a_training_step_with_an_early_exit(compared: list[str]):
    def loss(params, x, y, tol):
        h = x
        for w, b in params:
            h = np.tanh(h @ w + b)
        z = h - np.max(h, axis=1, keepdims=True)
        logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
        total = -np.sum(logp * y)
        k = 0
        while total > tol:
            total = total * 0.5
            k += 1
            if k > 3:
                break
        return total

    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((3, 4)), rng.standard_normal(4)) for _ in range(2)]
    params[1] = (rng.standard_normal((4, 2)), rng.standard_normal(2))
    x, y = rng.standard_normal((5, 3)), np.eye(2)[[0, 1, 1, 0, 1]]
    grads = s2s_ad.grad(loss)(params, x, y, 0.1)
    assert len(grads) == 2 and grads[0][0].shape == (3, 4)
    assert any("while " in t or "for " in t for t in compared)
