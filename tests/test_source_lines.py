"""The lines read for a function: found from its instructions' positions when its file
holds the code that runs (``source._block``), they are those ``inspect.getsourcelines``
gives; gradients of functions laid out in unusual ways come out right."""

import importlib
import inspect
import textwrap

import numpy as np
import pytest
from modules import import_text

import s2s_ad

source = importlib.import_module("s2s_ad.source")

MODULE = '''
import numpy as np

REGISTRY = {}


def register(name):
    def add(fun):
        REGISTRY[name] = fun
        return fun

    return add


@register(
    "loss",
)
def loss(w, x):
    z = np.tanh(x @ w)
    return np.sum(
z * z
)
    # the body's comment at its end
  # a comment less indented than the body
# a comment at column 0


def piecewise(x):
    """A docstring."""
    s = np.sum(x * x)
    if s > 1.0:
        s = np.sqrt(s)
    else:
        pass
    return s
    """A note after the return,
spanning lines at column 0."""


class Model:
    def __init__(self, scale):
        self.scale = scale

    def energy(self, x):
        e = np.sum(np.sin(x) * self.scale)  # trailing comment
        return e

        # a comment after a blank line, indented as the body


def outer(a):
    def inner(b):
        return np.sum(b ** 3)
    return inner(a) * 2.0


def one_line(x): return np.sum(np.exp(x))
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    return import_text(tmp_path, monkeypatch, MODULE, "source_lines_mod")[0]


def _functions(module):
    return [
        module.loss,
        module.piecewise,
        module.Model.energy,
        module.Model.__init__,
        module.outer,
        module.one_line,
        module.REGISTRY["loss"],
    ]


def test_lines_are_those_inspect_reads(module):
    for fun in _functions(module):
        lines, start = inspect.getsourcelines(fun.__code__)
        parsed = source.parse_function(fun)
        assert parsed.module.code == textwrap.dedent("".join(lines)), fun.__qualname__
        assert parsed.line_offset == start - 1
        found = source._block(fun)
        assert found is not None  # the quick way reads this file...
        if found != (lines, start):  # ...but stops before a string past the last instruction
            assert fun is module.piecewise and found[0] == lines[: len(found[0])]


def test_gradients_of_functions_laid_out_unusually(module):
    rng = np.random.default_rng(3)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    z = np.tanh(x @ w)
    gw = x.T @ (2 * z * (1 - z * z))
    np.testing.assert_allclose(s2s_ad.grad(module.loss)(w, x), gw, rtol=1e-10)

    big = np.array([1.0, 2.0])  # sqrt branch
    np.testing.assert_allclose(
        s2s_ad.grad(module.piecewise)(big), big / np.sqrt(np.sum(big * big)), rtol=1e-12
    )
    small = np.array([0.1, -0.2])
    np.testing.assert_allclose(s2s_ad.grad(module.piecewise)(small), 2 * small, rtol=1e-12)

    model = module.Model(1.5)
    np.testing.assert_allclose(s2s_ad.grad(model.energy)(x[0]), 1.5 * np.cos(x[0]), rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.grad(module.outer)(x[1]), 6.0 * x[1] ** 2, rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.grad(module.one_line)(x[2]), np.exp(x[2]), rtol=1e-12)


def test_edited_file_still_refused(tmp_path, monkeypatch):
    module, path = import_text(tmp_path, monkeypatch, MODULE, "source_lines_mod")
    path.write_text(path.read_text().replace("z * z\n)", "z * z * z\n)"))
    with pytest.raises(s2s_ad.TransformError, match="changed since"):
        s2s_ad.grad(module.loss)
