"""docs/constructs.md and docs/optimizations.md show the code s2s_ad generates today, and
the examples are correct."""

import sys
from pathlib import Path

import numpy as np

import s2s_ad

DOCS = Path(__file__).parent.parent / "docs"
sys.path.insert(0, str(DOCS))

import generate  # noqa: E402

import examples  # noqa: E402


def test_constructs_page_is_current():
    assert (DOCS / "constructs.md").read_text() == generate.render(), "run: python docs/generate.py"


def test_optimizations_page_is_current():
    import optimizations

    assert (DOCS / "optimizations.md").read_text() == optimizations.render(), (
        "run: python docs/generate.py"
    )


def test_refused_page_is_current():
    assert (DOCS / "refused.md").read_text() == generate.render_refused(), (
        "run: python docs/generate.py"
    )


class _Layer:
    def __init__(self, W, b):
        self.W, self.b = W, b


class _Model:
    def __init__(self, layers, extra):
        self.layers, self.extra = layers, extra


def _model(rng):
    """A model object as docs/examples.py's model_loss reads it."""
    layer = [_Layer(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(3)]
    return _Model(layer[:2], layer[2:])


def test_examples_match_finite_differences():
    rng = np.random.default_rng(3)
    x4 = np.array([0.3, 0.9, -0.2, 0.5])
    calls = {
        "straight_line": [rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=4)],
        "branch": [0.7],
        "conditional_expression": [0.4, -0.3],
        "for_range": [0.6, 4],
        "for_break": [x4, 4],
        "for_continue": [np.array([0.3, -0.9, 1.2])],
        "early_return": [0.8, 2.0],
        "index_assignment": [rng.normal(size=5), 0.8],
        "slice_update": [rng.normal(size=4)],
        "list_building": [0.7],
        "dict_parameter": [
            {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)},
            rng.normal(size=(4, 3)),
        ],
        "user_call": [0.9],
        "power": [1.3, 3],
        "rnn": [0.5 * rng.normal(size=(3, 3)), rng.normal(size=(4, 3))],
        "refine": [rng.normal(size=4), rng.normal(size=4)],
        "star_call": [0.8, -1.1],
        "generator_loop": [rng.normal(size=6), rng.normal(size=2)],
        "fixed_point": [2.5],
        "model_loss": [_model(rng), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))],
        "cell_loss": [0.5 * rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)],
    }
    for _, fun, _ in examples.EXAMPLES:
        if fun.__name__ == "while_loop":
            assert s2s_ad.grad(fun)(0.37) == np.float64(fun(0.37) / 0.37)
            continue
        s2s_ad.check_grads(fun, calls[fun.__name__])
