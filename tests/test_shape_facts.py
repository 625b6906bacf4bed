"""Shape classes, shape facts and the lowering of helpers (``s2s_ad/shape_facts.py``,
``s2s_ad/shape_analysis.py``, ``s2s_ad/lower.py``).

The property test runs every corpus function twice per point: once as given, once with
arguments of the same shape class but other sizes (each symbolic dimension redrawn, the
values resampled from the original ones so that they stay in the function's domain), and
compares the gradient of the lowered variant with the one of the variant for the
argument kinds (value, type, shape and dtype of every leaf).
"""

from __future__ import annotations

import copy
import zlib
from typing import Any

import numpy as np
import pytest
from corpus import collect, resized

import s2s_ad
from s2s_ad import lower, shape_analysis, shape_facts, wrapper
from s2s_ad.api import clear_cache

CASES = collect()


def _grad(c: Any, args: tuple[Any, ...], shapes: bool) -> Any:
    saved = wrapper.SHAPE_LIMIT
    wrapper.SHAPE_LIMIT = saved if shapes else 0
    clear_cache()
    try:
        df = s2s_ad.grad(c.fun, c.wrt)
        return df(*copy.deepcopy(args)), s2s_ad.source(df)
    finally:
        wrapper.SHAPE_LIMIT = saved
        clear_cache()


def _same(a: Any, b: Any, where: str) -> None:
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b)):
            _same(u, v, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b), where
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        np.testing.assert_array_equal(a, b, err_msg=where)


def _outcome(c: Any, args: tuple[Any, ...], shapes: bool) -> Any:
    try:
        return _grad(c, args, shapes)
    except Exception as exc:  # noqa: BLE001 (both variants must fail alike)
        return type(exc)


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.label)
def test_lowered_variants_give_the_same_gradients(c: Any) -> None:
    rng = np.random.default_rng(zlib.crc32(c.label.encode()))
    for point in c.points:
        args = c.args(point)
        for label, values in (("given", args), ("resized", resized(args, rng))):
            with np.errstate(all="ignore"):
                off = _outcome(c, values, shapes=False)
                on = _outcome(c, values, shapes=True)
            where = f"{c.label}[{point}, {label}]"
            if isinstance(off, type) or isinstance(on, type):
                assert off == on, f"{where}: {off} != {on}"
                continue
            _same(on[0], off[0], where)


def loss(w, x, y):
    z = x @ w
    p = np.tanh(z)
    return np.mean((p - y) ** 2)


def test_the_lowered_loss_reads_like_the_target():
    rng = np.random.default_rng(0)
    df = s2s_ad.grad(loss)
    g = df(rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=4))
    text = s2s_ad.source(df)
    assert "_ad." not in text
    assert "ans_bar = 1.0" in text
    assert "w_bar = x.T @ z_bar" in text
    # a scalar adjoint (it broadcasts back), folded into its one reader
    assert "np.full" not in text and "p_bar = ans_bar / _t1.size * (2 * _t2)" in text
    w, x, y = rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=4)
    s2s_ad.check_grads(loss, [w, x, y])
    assert g.shape == (3,)


def mlp(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return np.mean((h @ W + b - y) ** 2)


def layer_loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.sum((h - y) ** 2) / x.shape[0]


def test_one_variant_serves_every_batch_size():
    rng = np.random.default_rng(1)
    W, b = rng.normal(size=(5, 3)), rng.normal(size=3)
    df = s2s_ad.grad(layer_loss, (0, 1))
    variants = df._s2s_variants
    texts = set()
    for n in (4, 7, 16, 33):
        x, y = rng.normal(size=(n, 5)), rng.normal(size=(n, 3))
        gW, gb = df(W, b, x, y)
        s2s_ad.check_grads(layer_loss, [W, b, x, y])
        texts.add(s2s_ad.source(df))
    assert len(variants.by_shape) == 1 and len(texts) == 1
    text = texts.pop()
    assert (
        "b_bar = _t1_bar.sum(axis=0)" in text
        and "W_bar = x.T @ " in text
        and "_ad.unbroadcast" not in text
    )


def test_sizes_that_coincide_make_another_variant():
    rng = np.random.default_rng(2)
    W, b = rng.normal(size=(5, 3)), rng.normal(size=3)
    df = s2s_ad.grad(layer_loss, (0, 1))
    df(W, b, rng.normal(size=(8, 5)), rng.normal(size=(8, 3)))
    df(W, b, rng.normal(size=(3, 5)), rng.normal(size=(3, 3)))  # batch == hidden size
    assert len(df._s2s_variants.by_shape) == 2


def energy(x, y):
    return np.sum(x * y) + np.sum(y)


def test_the_number_of_shape_variants_is_capped():
    rng = np.random.default_rng(3)
    df = s2s_ad.grad(energy)
    for ndim in range(1, 7):
        for dtype in (np.float64, np.float32):
            x = rng.normal(size=(2, 3, 4, 5, 6, 7)[:ndim]).astype(dtype)
            g = df(x, x[..., :1] * 1.0)
            assert g.dtype == dtype and g.shape == x.shape
            np.testing.assert_allclose(g, np.broadcast_to(x[..., :1], x.shape), rtol=1e-6)
    assert len(df._s2s_variants.by_shape) == wrapper.SHAPE_LIMIT < 12


def test_float32_stays_float32():
    rng = np.random.default_rng(4)
    W = rng.normal(size=(5, 3)).astype(np.float32)
    b = rng.normal(size=3).astype(np.float32)
    x, y = rng.normal(size=(6, 5)).astype(np.float32), rng.normal(size=(6, 3)).astype(np.float32)
    gW, gb = s2s_ad.grad(layer_loss, (0, 1))(W, b, x, y)
    assert gW.dtype == np.float32 and gb.dtype == np.float32


def test_the_optimizer_switch_turns_lowering_off(monkeypatch):
    from s2s_ad import optimize

    monkeypatch.setattr(optimize, "ENABLED", False)
    clear_cache()
    rng = np.random.default_rng(5)
    df = s2s_ad.grad(loss)
    df(rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=4))
    assert "_ad.seed" in s2s_ad.source(df) and not df._s2s_variants.by_shape
    clear_cache()


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h**2)


def test_values_pushed_only_for_their_shape_are_no_longer_pushed():
    rng = np.random.default_rng(6)
    args = (
        rng.normal(size=(4, 5)) / 2,
        rng.normal(size=(5, 5)) / 3,
        rng.normal(size=5),
        rng.normal(size=(6, 3, 4)),
        np.zeros((3, 5)),
    )
    df = s2s_ad.grad(rnn, (0, 1, 2))
    grads = df(*args)
    text = s2s_ad.source(df)
    assert text.count("_tape.append(") == 1 and text.count("_tape.pop()") == 1
    assert "h_bar = _t3_bar @ Wh.T" in text
    s2s_ad.check_grads(rnn, list(args))
    for g, k in zip(grads, range(3)):
        assert g.shape == args[k].shape


def test_analysis_joins_what_branches_disagree_on():
    import ast

    text = """
def f(x, c):
    if c > 0:
        y = x
    else:
        y = x[0]
    z = x * 2.0
    return _ad.unbroadcast(y, x), _ad.unbroadcast(z, x)
"""
    func = ast.parse(text).body[0]
    facts = shape_facts.param_facts(["x", "c"], shape_facts.shape_key((np.ones(3), 1.0)))
    analysis = shape_analysis.Analysis(func, facts, None)
    analysis.run()
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call)]
    known = {ast.unparse(n): analysis.calls[id(n)] for n in calls if id(n) in analysis.calls}
    assert known["_ad.unbroadcast(y, x)"][0] is None
    assert known["_ad.unbroadcast(z, x)"][0] == shape_facts.Arr(("a",), np.dtype("float64"))
    assert "_ad.unbroadcast(y, x)" in lower.lower_function(text.strip(), facts)


def _lowered(text: str, params: list[str], args: tuple[Any, ...]) -> str:
    facts = shape_facts.param_facts(params, shape_facts.shape_key(args))
    return lower.lower_function(text.strip(), facts)


def test_a_reduction_adjoint_stays_scalar_only_where_it_is_broadcast_back():
    broadcast = """
def g(a, y):
    t_bar = _ad.sum_vjp(1.0, a, None, False)
    u_bar = t_bar * y
    return u_bar * a
"""
    assert "t_bar = 1.0" in _lowered(broadcast, ["a", "y"], (np.ones(3), 2.0))
    # float32 operands: the float64 array of ones would make the product float64
    assert "np.full(" in _lowered(broadcast, ["a", "y"], (np.ones(3, np.float32), 2.0))
    squared = """
def g(a, y):
    t_bar = _ad.sum_vjp(1.0, a, None, False)
    return t_bar * (t_bar * y)
"""
    assert "np.full(" in _lowered(squared, ["a", "y"], (np.ones(3), 2.0))
    returned = """
def g(a, y):
    t_bar = _ad.sum_vjp(1.0, a, None, False)
    return t_bar
"""
    assert "np.full(" in _lowered(returned, ["a", "y"], (np.ones(3), 2.0))


def test_builtins_the_module_redefines_are_unknown():
    text = """
def g(x):
    y = abs(x)
    return _ad.unbroadcast(y, x)
"""
    facts = shape_facts.param_facts(["x"], shape_facts.shape_key((np.ones(3),)))
    assert "_ad.unbroadcast" not in lower.lower_function(text.strip(), facts)
    shadowed = lower.lower_function(text.strip(), facts, shadowed=frozenset({"abs"}))
    assert "_ad.unbroadcast(y, x)" in shadowed
