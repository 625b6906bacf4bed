"""What variants of one gradient share (the parsed and normalized function, the optimized
and compiled program when the sweeps come out the same text) and what they must not:
a helper redefined, an edited source file, another module with the same text."""

import importlib
import inspect

import numpy as np
import pytest
from fd import numerical_grad
from modules import import_text

import s2s_ad
from s2s_ad.api import clear_cache, compile_adjoint, sweeps_source


def _import(tmp_path, monkeypatch, text):
    return import_text(tmp_path, monkeypatch, text, "shared_mod")


MODEL = """
import numpy as np


def act(u):
    return np.tanh(u)


def loss(params, x, y, decay):
    h = x
    for w, b in params[:-1]:
        h = act(h @ w + b)
    w, b = params[-1]
    out = h @ w + b
    penalty = sum(np.sum(w * w) for w, _ in params)
    return np.mean((out - y) ** 2) + decay * penalty
"""


def _data(rng, scalar_bias):
    params = [
        (rng.standard_normal((3, 4)), rng.standard_normal(4)),
        (rng.standard_normal((4, 1)), 0.3 if scalar_bias else rng.standard_normal(1)),
    ]
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 1))
    return params, x, y


def _flat(tree):
    leaves = []
    for w, b in tree:
        leaves += [np.ravel(w), np.ravel(b)]
    return np.concatenate(leaves)


def _fd(fun, params, *rest):
    """Finite differences of ``fun`` in every entry of ``params`` (a list of pairs)."""
    flat = _flat(params)
    shapes = [(np.shape(w), np.shape(b)) for w, b in params]

    def rebuild(v):
        out, k = [], 0
        for (sw, sb), (_, b0) in zip(shapes, params):
            nw, nb = int(np.prod(sw)), int(np.prod(sb))
            w = v[k : k + nw].reshape(sw)
            b = v[k + nw : k + nw + nb].reshape(sb)
            out.append((w, float(b) if np.ndim(b0) == 0 else b))
            k += nw + nb
        return out

    return numerical_grad(lambda v: fun(rebuild(v), *rest), (flat,), 0)


def test_a_variant_made_after_a_helper_was_redefined_differentiates_the_new_helper(
    tmp_path, monkeypatch
):
    module, _ = _import(tmp_path, monkeypatch, MODEL)
    rng = np.random.default_rng(0)
    dloss = s2s_ad.grad(module.loss)
    params, x, y = _data(rng, scalar_bias=False)
    decay = np.array(0.01)  # a 0-d array: the general variant, made by grad()
    np.testing.assert_allclose(
        _flat(dloss(params, x, y, decay)), _fd(module.loss, params, x, y, decay), rtol=1e-6
    )
    # a notebook cell defining act runs again: the next call brings another argument
    # kind (a float decay), so a new variant is made after the change
    cell = tmp_path / "cell_2.py"
    cell.write_text("def act(u):\n    return u * u * u\n")
    exec(compile(cell.read_text(), str(cell), "exec"), module.__dict__)
    params, x, y = _data(rng, scalar_bias=True)
    decay = 0.02
    got = _flat(dloss(params, x, y, decay))
    np.testing.assert_allclose(got, _fd(module.loss, params, x, y, decay), rtol=1e-6)
    # and the variant made before the change follows the new helper too
    params, x, y = _data(rng, scalar_bias=False)
    np.testing.assert_allclose(
        _flat(dloss(params, x, y, decay)), _fd(module.loss, params, x, y, decay), rtol=1e-6
    )


def test_a_variant_made_after_a_helper_became_a_library_function_uses_its_rule(
    tmp_path, monkeypatch
):
    module, _ = _import(tmp_path, monkeypatch, MODEL)
    rng = np.random.default_rng(2)
    dloss = s2s_ad.grad(module.loss)
    params, x, y = _data(rng, scalar_bias=False)
    dloss(params, x, y, np.array(0.01))  # the general variant, made by grad()
    module.act = np.sin  # the function lowered before (a user function) is gone
    params, x, y = _data(rng, scalar_bias=True)
    got = _flat(dloss(params, x, y, 0.3))  # a float decay: a new variant, made now
    np.testing.assert_allclose(got, _fd(module.loss, params, x, y, 0.3), rtol=1e-6)


def make_loss(act):
    def loss(x, scale):
        return np.sum(act(x * scale) * x)

    return loss


def test_closures_of_one_code_over_other_callees_keep_their_own_callee():
    x = np.array([0.3, -1.2, 0.8])
    losses = [make_loss(np.tanh), make_loss(np.sin), make_loss(lambda u: u * u)]
    for scale in (np.array(0.5), 0.5, np.float64(0.5)):  # a new variant of each, in turn
        for loss in losses:
            got = s2s_ad.grad(loss, (0, 1))(x, scale)
            np.testing.assert_allclose(got[0], numerical_grad(loss, (x, scale), 0), rtol=1e-6)
            np.testing.assert_allclose(got[1], numerical_grad(loss, (x, scale), 1), rtol=1e-6)


def test_a_variant_made_after_the_file_was_edited_differentiates_the_code_that_runs(
    tmp_path, monkeypatch
):
    module, path = _import(tmp_path, monkeypatch, MODEL)
    rng = np.random.default_rng(1)
    dloss = s2s_ad.grad(module.loss)
    params, x, y = _data(rng, scalar_bias=False)
    dloss(params, x, y, np.array(0.01))  # the general variant, made by grad()
    # the file changes on disk, the module is not reloaded: what runs is the old code
    path.write_text(path.read_text().replace("np.tanh(u)", "np.sin(u)"))
    params, x, y = _data(rng, scalar_bias=True)
    got = _flat(dloss(params, x, y, 0.5))
    np.testing.assert_allclose(got, _fd(module.loss, params, x, y, 0.5), rtol=1e-6)
    # reloaded, the module's functions are new code objects: transformed from the new text
    module = importlib.reload(module)
    want = _fd(module.loss, params, x, y, 0.5)
    np.testing.assert_allclose(_flat(s2s_ad.grad(module.loss)(params, x, y, 0.5)), want, rtol=1e-6)
    assert not np.allclose(got, want)  # sin and tanh give other gradients here


KINDS = {
    "arrays": lambda rng: (rng.standard_normal(4), rng.standard_normal((4, 4)), np.float64(0.7)),
    "float scale": lambda rng: (rng.standard_normal(4), rng.standard_normal((4, 4)), 0.7),
    "0-d scale": lambda rng: (rng.standard_normal(4), rng.standard_normal((4, 4)), np.array(0.7)),
    "float x": lambda rng: (0.4, rng.standard_normal((4, 4)), 0.7),
}


def energy(x, A, scale):
    """A quadratic form with a saturating term and a loop, as in a small physics model."""
    e = 0.5 * np.sum(x * (A @ x if np.ndim(x) else A[0, 0] * x))
    for k in range(3):
        e = e + scale * np.sum(np.log1p((x - 0.1 * k) ** 2))
    return e * scale


@pytest.mark.parametrize("order", [list(KINDS), list(reversed(KINDS)), [2, 0, 3, 1]])
def test_variants_made_in_any_order_give_the_same_gradients(order):
    names = [list(KINDS)[k] if isinstance(k, int) else k for k in order]
    clear_cache()
    try:
        df = s2s_ad.grad(energy, (0, 2))
        got = {name: df(*KINDS[name](np.random.default_rng(3))) for name in names}
    finally:
        clear_cache()
    fresh = {}
    for name in names:  # each kind alone, in a fresh cache
        clear_cache()
        fresh[name] = s2s_ad.grad(energy, (0, 2))(*KINDS[name](np.random.default_rng(3)))
    clear_cache()
    for name in names:
        for a, b in zip(got[name], fresh[name]):
            np.testing.assert_array_equal(a, b, err_msg=name)
        args = KINDS[name](np.random.default_rng(3))
        for pos, g in zip((0, 2), got[name]):
            np.testing.assert_allclose(g, numerical_grad(energy, args, pos), rtol=1e-6)


SAME_TEXT = """
import numpy as np

from {helpers} import act


def loss(w, x):
    return np.sum(act(x @ w) ** 2)
"""


def test_same_text_in_two_modules_calls_each_module_s_helper(tmp_path, monkeypatch):
    # the generated text of both losses is the same: the compiled program is shared, the
    # callee each one's code reaches is not
    tanh, _ = _import(
        tmp_path, monkeypatch, "import numpy as np\n\ndef act(u):\n    return np.tanh(u)\n"
    )
    cube, _ = _import(tmp_path, monkeypatch, "def act(u):\n    return u * u * u\n")
    first, _ = _import(tmp_path, monkeypatch, SAME_TEXT.format(helpers=tanh.__name__))
    second, _ = _import(tmp_path, monkeypatch, SAME_TEXT.format(helpers=cube.__name__))
    rng = np.random.default_rng(4)
    w, x = rng.standard_normal(3), rng.standard_normal((4, 3))
    for module in (first, second):
        np.testing.assert_allclose(
            s2s_ad.grad(module.loss)(w, x), numerical_grad(module.loss, (w, x), 0), rtol=1e-6
        )
    assert s2s_ad.source(s2s_ad.grad(first.loss)) == s2s_ad.source(s2s_ad.grad(second.loss))


def mlp_loss(params, x, y):
    h = x
    for w, b in params:
        h = np.tanh(h @ w + b)
    return np.mean((h - y) ** 2)


def test_the_sweeps_as_separate_functions_are_made_when_first_needed():
    clear_cache()
    rng = np.random.default_rng(5)
    params = [(rng.standard_normal((3, 4)), rng.standard_normal(4)) for _ in range(1)]
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    df = s2s_ad.grad(mlp_loss)
    shown = s2s_ad.source(df)
    compiled = compile_adjoint(mlp_loss, ("params",))
    assert len(compiled.program.texts) == 1  # the gradient alone is optimized and compiled
    # vjp uses the forward and backward sweeps as functions of their own
    out, pullback = s2s_ad.vjp(mlp_loss, params, x, y)
    (g_params, _, _) = pullback(1.0)
    for (gw, gb), (hw, hb) in zip(g_params, df(params, x, y)):
        np.testing.assert_allclose(gw, hw)
        np.testing.assert_allclose(gb, hb)
    assert out == pytest.approx(mlp_loss(params, x, y))
    # the gradient's text and its lines in tracebacks did not move
    assert "def mlp_loss_fwd(" in compiled.text and "def mlp_loss_bwd(" in compiled.text
    assert s2s_ad.source(df) == shown
    assert inspect.getsource(df.__wrapped__) == shown


# --- variants sharing the reverse pass -------------------------------------------------
# The reverse pass asks of the argument kinds only whether a variable holds a scalar or a
# 1-d array; a variant whose kinds answer its questions alike takes the program made.


def dense_loss(w, b, x):
    h = np.tanh(x @ w + b)
    return np.sum(h * h)


def running_sum(a, scale):
    """One element at a time: ``a[i]`` is a scalar for a 1-d ``a``, a row for a matrix."""
    s = 0.0
    for i in range(len(a)):
        s = s + np.sum(a[i] * a[i]) * scale
    return s


def test_argument_kinds_the_sweeps_never_ask_about_share_the_program():
    general = compile_adjoint(dense_loss, ("w", "b"))
    vector_b = compile_adjoint(dense_loss, ("w", "b"), vectors=frozenset({"b"}))
    assert vector_b is general  # whether b is 1-d changes no line of the sweeps
    rng = np.random.default_rng(3)
    w, b, x = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((5, 3))
    got = s2s_ad.grad(dense_loss, (0, 1))(w, b, x)
    want = numerical_grad(dense_loss, (w, b, x), (0, 1))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_argument_kinds_that_change_the_sweeps_get_their_own_program():
    general = compile_adjoint(running_sum, ("a",))
    vector = compile_adjoint(running_sum, ("a",), vectors=frozenset({"a"}))
    assert vector is not general
    assert sweeps_source(vector) != sweeps_source(general)
    floats = compile_adjoint(scaled, ("c", "d"), scalars=frozenset({"c", "d"}))
    one_array = compile_adjoint(
        scaled, ("c", "d"), scalars=frozenset({"c"}), vectors=frozenset({"d"})
    )
    assert one_array is not floats  # c's adjoint is summed over d's entries here only
    assert sweeps_source(one_array) != sweeps_source(floats)


def scaled(c, d, x):
    """``c * d`` of two floats broadcasts nothing; of a float and a 1-element array, the
    float's adjoint is a sum."""
    t = c * d
    return np.sum(x * t)


@pytest.mark.parametrize("order", ["floats first", "array first"])
def test_variants_made_in_either_order_give_their_own_gradients(order):
    clear_cache()
    rng = np.random.default_rng(4)
    x = rng.standard_normal(3)
    calls = [(0.5, 2.0, x), (0.5, np.array([2.0]), x)]  # kinds (s, s, .) then (s, v, .)
    d_scaled = s2s_ad.grad(scaled, (0, 1))
    for args in calls if order == "floats first" else calls[::-1]:
        got = d_scaled(*args)
        want = numerical_grad(scaled, args, (0, 1))
        for g, e, a in zip(got, want, args):
            assert np.shape(g) == np.shape(a)
            np.testing.assert_allclose(g, e, rtol=1e-6)
