"""A source file edited after its module was imported: the text on disk is no longer the
code that runs, so differentiating it would give the gradient of another function."""

import numpy as np
import pytest
from modules import import_text

import s2s_ad
from s2s_ad import TransformError


def _import(tmp_path, monkeypatch, text):
    return import_text(tmp_path, monkeypatch, text, "stale_mod")


MODULE = """
import numpy as np

def f(x):
    return np.sum(x * x)
"""


def test_edited_body_is_refused(tmp_path, monkeypatch):
    module, path = _import(tmp_path, monkeypatch, MODULE)
    path.write_text(path.read_text().replace("x * x", "x * x * x"))
    with pytest.raises(TransformError, match="changed since") as info:
        s2s_ad.grad(module.f)
    assert str(path) in str(info.value)


def test_operator_changed_in_place_is_refused(tmp_path, monkeypatch):
    # same names, same constants, same length: only the operator differs
    module, path = _import(tmp_path, monkeypatch, MODULE)
    path.write_text(path.read_text().replace("x * x", "x + x"))
    with pytest.raises(TransformError, match="changed since"):
        s2s_ad.grad(module.f)


def test_function_moved_down_by_new_lines_above_is_refused_or_right(tmp_path, monkeypatch):
    # lines inserted above: the old first line now holds other text
    module, path = _import(tmp_path, monkeypatch, MODULE)
    text = path.read_text().replace("def f(x):", "def g(x):\n    return x\n\n\ndef f(x):")
    path.write_text(text)
    with pytest.raises(TransformError, match="changed since"):
        s2s_ad.grad(module.f)


def test_unchanged_file_differentiates(tmp_path, monkeypatch):
    module, _ = _import(tmp_path, monkeypatch, MODULE)
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(s2s_ad.grad(module.f)(x), 2 * x)


def test_edit_of_another_function_in_the_file_is_harmless(tmp_path, monkeypatch):
    module, path = _import(tmp_path, monkeypatch, MODULE + "\n\ndef h(x):\n    return x\n")
    path.write_text(path.read_text().replace("return x\n", "return 2 * x  # edited\n"))
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(s2s_ad.grad(module.f)(x), 2 * x)


def test_edited_callee_is_refused(tmp_path, monkeypatch):
    module, path = _import(
        tmp_path,
        monkeypatch,
        """
        import numpy as np

        def helper(x):
            return np.sin(x)

        def f(x):
            return np.sum(helper(x))
        """,
    )
    path.write_text(path.read_text().replace("np.sin(x)", "np.cos(x)"))
    with pytest.raises(TransformError, match="helper.*changed since"):
        s2s_ad.grad(module.f)(np.array([0.5]))


def test_edited_lambda_is_refused(tmp_path, monkeypatch):
    module, path = _import(tmp_path, monkeypatch, "f = lambda x: x * x\n")
    path.write_text("f = lambda x: x * x * 3.0\n")
    with pytest.raises(TransformError, match="changed since"):
        s2s_ad.grad(module.f)


SCOPES = """
import functools
import numpy as np


def make(a):
    def closure(x):
        return np.sum(a * x * x)

    return closure


class Base:
    def value(self, x):
        return x * 2.0


class Model(Base):
    def __init__(self):
        self.__w = 3.0

    def value(self, x):
        return super().value(x) * self.__w + x * x


def twice(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)

    return wrapper


@twice
def decorated(x):
    return x * x
"""


def test_functions_of_every_scope_match_their_unedited_source(tmp_path, monkeypatch):
    # closures, methods using super() and private names, decorated functions: the check
    # must recompile each in its own scope and find it unchanged
    module, _ = _import(tmp_path, monkeypatch, SCOPES)
    from s2s_ad.source import parse_function

    for func in (module.make(2.0), module.Model.value, module.Model.__init__, module.decorated):
        assert parse_function(func).func is func
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(s2s_ad.grad(module.make(2.0))(x), 4.0 * x)
    assert s2s_ad.grad(module.decorated)(3.0) == pytest.approx(12.0)


def checked_norm(x, y=None):
    assert x.ndim == 1, "a vector"
    assert y is None or (y.shape == x.shape and np.all(np.isfinite(y))), f"y must match x {x.shape}"
    return np.sum(x * x)


def test_a_function_in_a_pytest_module_with_asserts_is_its_own_source():
    # pytest rewrote the asserts of this module: the check rewrites the text the same way
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(s2s_ad.grad(checked_norm)(x), 2 * x)


def test_edited_test_module_with_asserts_is_refused(tmp_path, monkeypatch):
    # a module whose asserts pytest rewrote: import it through pytest's import hook
    from _pytest.assertion.rewrite import rewrite_asserts

    text = "import numpy as np\n\ndef f(x):\n    assert x.ndim == 1\n    return np.sum(x * x)\n"
    import ast

    tree = ast.parse(text)
    rewrite_asserts(tree, text.encode(), str(tmp_path / "rewritten.py"))
    path = tmp_path / "rewritten.py"
    path.write_text(text)
    namespace = {"__name__": "rewritten"}
    exec(compile(tree, str(path), "exec"), namespace)
    x = np.array([1.0, 3.0])
    np.testing.assert_allclose(s2s_ad.grad(namespace["f"])(x), 2 * x)
    path.write_text(text.replace("x * x", "x * x * x"))
    # the cached transform was checked against this very code object: still right; made
    # again, the source is read and checked again
    s2s_ad.api.clear_cache()
    with pytest.raises(TransformError, match="changed since"):
        s2s_ad.grad(namespace["f"])
