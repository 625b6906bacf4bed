"""The function ``grad`` returns takes the differentiated function's own parameters: keyword
calls, defaults and arity errors behave as the function's, and a change of argument types
between calls (floats, arrays, float32, an integer) gives each call its own checks and types."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad
from tests.fd import numerical_grad

RNG = np.random.default_rng(3)
X = RNG.standard_normal((6, 3))
Y = RNG.standard_normal(6)


def ridge(w, lam=0.1, *, scale=1.0):
    """A least-squares loss with an L2 penalty (a default and a keyword-only scale)."""
    r = X @ w - Y
    return scale * np.mean(r * r) + lam * np.sum(w * w)


def mlp_loss(params, x, y, /, decay=0.0):
    """A two-layer MLP's squared error, ``params`` = [(W, b), ...]; positional-only data."""
    h = x
    for k, (W, b) in enumerate(params):
        h = h @ W + b
        if k + 1 < len(params):
            h = np.tanh(h)
    err = h[:, 0] - y
    penalty = 0.0
    for W, _ in params:
        penalty = penalty + np.sum(W * W)
    return np.mean(err * err) + decay * penalty


def poly(x, y):
    return x * x * y + y * y


def energy(x, y):
    return np.sum(x * x * y) + y * y


def entry_cells(df):
    """The entry function's closure, by name (the variant table and the all-float variant)."""
    entry = df._s2s_call
    return dict(zip(entry.__code__.co_freevars, [c.cell_contents for c in entry.__closure__]))


def test_the_gradient_function_has_the_signature_of_the_function():
    for fun in (ridge, mlp_loss, poly):
        assert inspect.signature(
            s2s_ad.grad(fun)._s2s_call, follow_wrapped=False
        ) == inspect.signature(fun)


def test_type_switch_between_calls_float_array_float32_int():
    df = s2s_ad.grad(energy, (0, 1))
    xs = np.array([0.5, -1.0, 2.0])
    calls = [
        (1.5, 2.0),
        (xs, 2.0),
        (1.5, 2.0),
        (xs.astype(np.float32), np.float32(2.0)),
        (-0.5, 0.75),
    ]
    for _ in range(2):  # the second round takes the fast path for every call
        for x, y in calls:
            gx, gy = df(x, y)
            want_x = 2.0 * np.asarray(x, dtype=np.float64) * y
            want_y = float(np.sum(np.asarray(x, dtype=np.float64) ** 2)) + 2.0 * y
            assert type(gx) is type(x) and type(gy) is type(y)
            assert np.shape(gx) == np.shape(x) and np.shape(gy) == np.shape(y)
            if isinstance(x, np.ndarray):
                assert gx.dtype == x.dtype
            rtol = 1e-6 if np.asarray(x).dtype == np.float32 else 1e-12
            np.testing.assert_allclose(gx, want_x, rtol=rtol)
            assert gy == pytest.approx(want_y, rel=rtol)
        with pytest.raises(TypeError, match="'x' is an integer"):
            df(1, 2.0)
        with pytest.raises(TypeError, match="'y' has dtype int64"):
            df(1.5, np.arange(3))
    assert entry_cells(df)["_floats"][0] is not None


def test_keyword_calls_take_the_fast_path_and_give_the_positional_result():
    def poly(x, y):  # its own function: no other test's calls in its table
        return x * x * y + y * y

    df = s2s_ad.grad(poly, (0, 1))
    want = numerical_grad(poly, (1.5, 2.0), (0, 1))
    for _ in range(3):
        np.testing.assert_allclose(df(y=2.0, x=1.5), want, rtol=1e-6)
    cells = entry_cells(df)
    assert list(cells["_table"]) == [(float, float)]
    assert cells["_floats"][0] is cells["_table"][(float, float)]
    np.testing.assert_allclose(df(1.5, y=2.0), want, rtol=1e-6)


def test_defaults_keyword_only_and_arity_errors():
    df = s2s_ad.grad(ridge)
    w = RNG.standard_normal(3)
    for _ in range(2):
        np.testing.assert_allclose(df(w), numerical_grad(ridge, (w,)), rtol=1e-6)
        np.testing.assert_allclose(df(w, 0.5), numerical_grad(ridge, (w, 0.5)), rtol=1e-6)
        want = numerical_grad(lambda w: ridge(w, 0.5, scale=3.0), (w,))
        np.testing.assert_allclose(df(w, lam=0.5, scale=3.0), want, rtol=1e-6)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'w'"):
        df()
    with pytest.raises(TypeError, match="positional argument"):
        df(w, 0.5, 3.0)  # scale is keyword-only
    with pytest.raises(TypeError, match="unexpected keyword argument 'rate'"):
        df(w, rate=0.5)
    # the penalty weight differentiated too, by name, with a default
    dboth = s2s_ad.value_and_grad(ridge, ("w", "lam"))
    value, (gw, glam) = dboth(w)
    assert value == pytest.approx(ridge(w))
    assert type(glam) is float and glam == pytest.approx(float(np.sum(w * w)))
    np.testing.assert_allclose(gw, numerical_grad(ridge, (w,)), rtol=1e-6)


def test_mlp_with_positional_only_data_and_a_decay_default():
    params = [(RNG.standard_normal((3, 5)), RNG.standard_normal(5))]
    params.append((RNG.standard_normal((5, 1)), RNG.standard_normal(1)))
    df = s2s_ad.grad(mlp_loss)
    for decay in (0.0, 0.01):
        for _ in range(2):
            got = df(params, X, Y, decay=decay)
            want = numerical_grad(mlp_loss, (params, X, Y, decay))
            assert type(got) is list and all(type(pair) is tuple for pair in got)
            for (gW, gb), (wW, wb) in zip(got, want):
                np.testing.assert_allclose(gW, wW, rtol=1e-5, atol=1e-8)
                np.testing.assert_allclose(gb, wb, rtol=1e-5, atol=1e-8)
    with pytest.raises(TypeError, match="positional-only"):
        df(params, x=X, y=Y)


class Model:
    """A Keras-style model: weights on the instance, a loss method with a default."""

    def __init__(self) -> None:
        self.w = np.array([0.5, -0.25, 1.0])

    def loss(self, x, y, weight=2.0):
        return weight * np.sum((self.w * x - y) ** 2)


def test_bound_method_with_a_default_and_keyword_calls():
    model = Model()
    x, y = np.array([1.0, 2.0, -1.0]), np.array([0.1, 0.2, 0.3])
    df = s2s_ad.grad(model.loss, (0, 2))
    assert list(inspect.signature(df._s2s_call, follow_wrapped=False).parameters) == [
        "x",
        "y",
        "weight",
    ]
    for _ in range(2):
        gx, gweight = df(x, y)
        np.testing.assert_allclose(gx, 4.0 * model.w * (model.w * x - y))
        assert type(gweight) is float
        assert gweight == pytest.approx(float(np.sum((model.w * x - y) ** 2)))
        np.testing.assert_allclose(df(y=y, x=x, weight=1.0)[0], gx / 2.0)


def test_parameters_named_like_the_entry_s_own_names_take_the_packed_entry():
    def weighted(type, _t0, _table=2.0):  # noqa: A002 (a user's names, on purpose)
        return type * type * _t0 * _table

    df = s2s_ad.grad(weighted, (0, 1, 2))
    for _ in range(3):
        got = df(1.5, 2.0)
        assert got == (pytest.approx(12.0), pytest.approx(4.5), pytest.approx(4.5))
    assert df(1.5, _t0=2.0, _table=1.0) == (6.0, 2.25, 4.5)
    with pytest.raises(TypeError, match="'type' is an integer"):
        df(1, 2.0)


def test_a_function_named_like_the_entry_s_own_names():
    def _table(x, scale=3.0):
        return scale * x * x

    df = s2s_ad.grad(_table)
    for _ in range(2):
        assert df(2.0) == pytest.approx(12.0)
        assert df(2.0, scale=1.0) == pytest.approx(4.0)
    with pytest.raises(TypeError):
        df(2.0, 1.0, 0.5)
