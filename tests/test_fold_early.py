"""The forward sweep's temporaries folded as they are emitted (``fold_early``) give the
code the optimizer gave when it folded them itself, byte for byte, and the optimizer is
handed fewer statements."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pytest
from corpus import collect

import s2s_ad
from s2s_ad import codefacts, fold_early, optimize
from s2s_ad.api import clear_cache
from s2s_ad.testing import check_grads


def _sources(fun: Any, wrt: Any, calls: list[tuple[Any, ...]]) -> list[str]:
    """The gradient's source before its first call and after each call (each call may
    make a variant); an error's message where the transform refuses."""
    clear_cache()
    out: list[str] = []
    try:
        df = s2s_ad.grad(fun, wrt)
        out.append(s2s_ad.source(df))
        with np.errstate(all="ignore"):
            for args in calls:
                try:
                    df(*args)
                except Exception as e:  # a point the primal itself fails at
                    out.append(type(e).__name__)
                out.append(s2s_ad.source(df))
    except s2s_ad.TransformError as e:
        out.append(str(e))
    return out


def _both(fun: Any, wrt: Any, calls: list[tuple[Any, ...]]) -> tuple[list[str], list[str]]:
    saved = fold_early.ENABLED
    try:
        fold_early.ENABLED = False
        without = _sources(fun, wrt, calls)
        fold_early.ENABLED = True
        with_ = _sources(fun, wrt, calls)
    finally:
        fold_early.ENABLED = saved
        clear_cache()
    return without, with_


def test_every_corpus_gradient_is_the_same_with_early_folds():
    compared = 0
    for c in collect():
        calls = [c.args(point) for point in c.points]
        without, with_ = _both(c.fun, c.wrt, calls)
        assert with_ == without, c.label
        compared += 1
    assert compared > 100


def _mlp_loss(params, x, y):
    h = x
    for w, b in params:
        h = np.tanh(h @ w + b) * 0.5 + np.sin(h @ w) * 0.1
    z = h - np.max(h, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * y, axis=1)) + 1e-3 * sum(np.sum(w * w) for w, _ in params)


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of statements the optimizer is handed for each function built."""
    counts: list[int] = []
    original = optimize.optimize_function

    def counting(text: str, tape: str, facts: Any, *args: Any, **kwargs: Any) -> str:
        built = kwargs.get("built")
        if built is not None:
            made = built

            def build() -> tuple[ast.FunctionDef, dict[int, str]]:
                func, notes = made()
                counts.append(len(codefacts.statements(func.body)))
                return func, notes

            kwargs["built"] = build
        return original(text, tape, facts, *args, **kwargs)

    monkeypatch.setattr(optimize, "optimize_function", counting)
    return counts


def test_an_mlp_gradient_hands_the_optimizer_fewer_statements(handed: list[int]):
    rng = np.random.default_rng(1)
    params = [(rng.standard_normal((3, 4)), rng.standard_normal(4))]
    params.append((rng.standard_normal((4, 2)), rng.standard_normal(2)))
    x, y = rng.standard_normal((5, 3)), np.eye(2)[[0, 1, 1, 0, 1]]
    without, with_ = _both(_mlp_loss, 0, [(params, x, y)])
    assert with_ == without
    assert len(handed) >= 2
    # the first function built is without early folds, the next with them
    assert handed[1] < handed[0]
    # the gradient with the early folds is right
    check_grads(_mlp_loss, (params, x, y))
