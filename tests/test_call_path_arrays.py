"""Calls with NumPy arrays take the variant table too (keyed by ``ndim == 1`` and dtype):
every check and every gradient stays what the general path gives, call after call."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad

RNG = np.random.default_rng(3)


def mlp(x, W1, b1, W2, b2):
    """A one-hidden-layer tanh network's mean output (weights passed as arrays)."""
    h = np.tanh(x @ W1 + b1)
    return np.mean(h @ W2 + b2)


def weights():
    return (
        RNG.standard_normal((3, 5)),
        RNG.standard_normal(5),
        RNG.standard_normal((5, 2)),
        RNG.standard_normal(2),
    )


def test_mlp_input_gradient_on_repeated_calls_matches_finite_differences():
    df = s2s_ad.grad(mlp)
    w = weights()
    for shape in [(4, 3), (4, 3), (3,), (3,), (4, 3), (2, 4, 3), (3,)]:
        x = RNG.standard_normal(shape)
        got = df(x, *w)
        assert type(got) is np.ndarray and got.shape == shape and got.dtype == np.float64
        np.testing.assert_allclose(got, numerical_grad(mlp, [x, *w]), rtol=1e-6, atol=1e-8)


def test_all_weight_gradients_on_repeated_calls():
    df = s2s_ad.grad(mlp, (1, 2, 3, 4))
    x = RNG.standard_normal((6, 3))
    for _ in range(3):
        w = weights()
        got = df(x, *w)
        want = numerical_grad(mlp, [x, *w], (1, 2, 3, 4))
        for g, ref, arg in zip(got, want, w):
            assert g.shape == arg.shape
            np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-8)


def test_float32_arrays_keep_their_dtype_and_float64_after_them_theirs():
    df = s2s_ad.grad(lambda_free_loss)
    x32 = RNG.standard_normal(4).astype(np.float32)
    x64 = x32.astype(np.float64)
    for _ in range(2):
        assert df(x32).dtype == np.float32
        assert df(x64).dtype == np.float64
    np.testing.assert_allclose(df(x32), 2 * x64 * np.cos(x64**2), rtol=1e-5)


def lambda_free_loss(x):
    return np.sum(np.sin(x**2))


def test_integer_bool_and_complex_arrays_are_refused_after_float_array_calls():
    df = s2s_ad.grad(lambda_free_loss)
    df(np.ones(3))
    df(np.ones(3))
    for _ in range(2):
        with pytest.raises(TypeError, match="real-valued"):
            df(np.arange(3))
        with pytest.raises(TypeError, match="real-valued"):
            df(np.ones(3, dtype=bool))
        with pytest.raises(TypeError, match="complex"):
            df(np.ones(3, dtype=complex))
    np.testing.assert_allclose(df(np.ones(3)), 2 * np.cos(1.0) * np.ones(3))


def scale_sum(x, y):
    return np.sum(y) * 3.0


def test_a_gradient_that_does_not_reach_the_array_is_dense_zeros_every_time():
    df = s2s_ad.grad(scale_sum)
    for shape in [(3,), (3,), (2, 2), (2, 2)]:
        got = df(np.ones(shape), np.ones(4))
        assert type(got) is np.ndarray and got.shape == shape
        np.testing.assert_array_equal(got, np.zeros(shape))


def outer_weighted(x, y):
    return np.sum(np.outer(x, y) * x[:, None])


def test_non_differentiated_array_changing_rank_picks_its_variant():
    df = s2s_ad.grad(outer_weighted)
    x = RNG.standard_normal(3)
    for y in [RNG.standard_normal(2), RNG.standard_normal((2,)), np.array(1.5)]:
        for _ in range(2):
            got = df(x, y)
            want = numerical_grad(outer_weighted, [x, y])
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_non_scalar_output_is_refused_after_array_calls():
    def maybe_vector(x, n):
        return np.sum(x) if n == 1 else x * 2.0

    df = s2s_ad.grad(maybe_vector)
    df(np.ones(3), 1)
    df(np.ones(3), 1)
    with pytest.raises(ValueError, match="scalar output"):
        df(np.ones(3), 2)


def test_value_and_grad_and_has_aux_with_arrays():
    def loss_aux(x):
        return np.sum(x**2), {"norm": np.linalg.norm(x)}

    vg = s2s_ad.value_and_grad(lambda_free_loss)
    ga = s2s_ad.grad(loss_aux, has_aux=True)
    x = RNG.standard_normal(5)
    for _ in range(3):
        value, g = vg(x)
        assert value == lambda_free_loss(x)
        np.testing.assert_allclose(g, 2 * x * np.cos(x**2), rtol=1e-12)
        g2, aux = ga(x)
        np.testing.assert_allclose(g2, 2 * x, rtol=1e-12)
        assert aux["norm"] == np.linalg.norm(x)


def _table(df):
    entry = df._s2s_call
    return dict(zip(entry.__code__.co_freevars, [c.cell_contents for c in entry.__closure__]))[
        "_table"
    ]


def weighted_dot(x, y):
    return np.sum(x * x) * np.sum(y)


def test_float_arrays_are_remembered_and_other_dtypes_are_not():
    df = s2s_ad.grad(weighted_dot)
    x = RNG.standard_normal(3)
    df(x, np.ones(2))
    df(x, np.arange(2))  # an integer array not differentiated: decided by its key
    with pytest.raises(TypeError):
        df(np.arange(3), np.ones(2))
    keys = set(_table(df))
    f64, i64 = np.dtype(np.float64), np.arange(2).dtype
    assert keys == {(((3,), f64), ((2,), f64)), (((3,), f64), ((2,), i64))}


def scaled_square_sum(x, y):
    return np.sum(x * x * y) + y * y


def test_python_float_next_to_an_array_gets_a_python_float_gradient_every_call():
    df = s2s_ad.grad(scaled_square_sum, (0, 1))
    x = np.array([0.5, -1.0, 2.0])
    for y in [2.0, 2.0, np.float64(2.0), 2.0]:
        gx, gy = df(x, y)
        assert type(gy) is type(y)
        assert gy == float(np.sum(x * x)) + 2.0 * y
        np.testing.assert_array_equal(gx, 2.0 * x * y)
