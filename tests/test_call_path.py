"""The function ``grad`` returns: the fast path for repeated argument types must give the
same numbers, types and errors as the general path, whatever the order of the calls."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import s2s_ad
from s2s_ad import api
from tests.fd import numerical_grad


def poly(x, y):
    return x * x * y + y * y


def scaled(x, scale=2.0, *, shift=0.5):
    return scale * x * x + shift * x


def with_aux(x, y):
    value = x * y + x * x
    return value, {"x": x, "value": value}


def as_float64(x):
    return np.float64(x) * x


def mixed(w, x, n, label):
    # a weight, a data vector, an integer count and a string: the types pick the variant
    total = 0.0
    for i in range(n):
        total = total + np.sum(w * x) * (i + 1.0)
    return total if label == "sum" else -total


class Quadratic:
    """A Keras-style model: the instance holds a constant, ``loss`` is differentiated."""

    def __init__(self, a: float) -> None:
        self.a = a

    def loss(self, x, y):
        return self.a * x * x + x * y


@pytest.mark.parametrize("args", [(1.5, 2.0), (-0.3, 0.7), (2.0, -1.25)])
def test_float_calls_match_finite_differences_both_paths(args):
    df = s2s_ad.grad(poly, (0, 1))
    want = numerical_grad(poly, args, (0, 1))
    for _ in range(3):  # the first call fills the table, the next ones take the fast path
        got = df(*args)
        assert type(got) is tuple and all(type(g) is float for g in got)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # keywords take the general path and give the same result
    np.testing.assert_allclose(df(x=args[0], y=args[1]), want, rtol=1e-6)


def test_numpy_scalar_inputs_keep_their_type():
    df = s2s_ad.grad(poly)
    for _ in range(2):
        g64 = df(np.float64(1.5), 2.0)
        g32 = df(np.float32(1.5), np.float32(2.0))
        assert type(g64) is np.float64 and g64 == pytest.approx(6.0)
        assert type(g32) is np.float32 and g32 == pytest.approx(6.0)
        assert type(df(1.5, 2.0)) is float


def test_numpy_scalar_output_is_accepted():
    df = s2s_ad.grad(as_float64)
    for _ in range(2):
        g = df(3.0)
        assert type(g) is float and g == pytest.approx(6.0)


def test_integer_and_complex_are_refused_after_float_calls():
    df = s2s_ad.grad(poly)
    df(1.0, 2.0)
    df(1.0, 2.0)
    with pytest.raises(TypeError, match="integer"):
        df(1, 2.0)
    with pytest.raises(TypeError, match="integer"):
        df(True, 2.0)
    with pytest.raises(TypeError, match="complex"):
        df(1.0 + 2.0j, 2.0)
    with pytest.raises(TypeError, match="complex"):
        df(np.complex128(1.0), 2.0)
    # an integer where nothing is differentiated is fine
    assert df(1.5, 2) == pytest.approx(6.0)


def test_defaults_and_keyword_only_parameters():
    df = s2s_ad.grad(scaled)
    for _ in range(2):
        assert df(1.0) == pytest.approx(2 * 2.0 * 1.0 + 0.5)
        assert df(1.0, 3.0) == pytest.approx(2 * 3.0 + 0.5)
        assert df(1.0, shift=1.0) == pytest.approx(4.0 + 1.0)


def test_has_aux_and_value_and_grad_on_both_paths():
    df = s2s_ad.grad(with_aux, has_aux=True)
    vg = s2s_ad.value_and_grad(poly, (0, 1))
    for _ in range(3):
        g, aux = df(2.0, 3.0)
        assert g == pytest.approx(3.0 + 4.0) and aux == {"x": 2.0, "value": 10.0}
        value, (gx, gy) = vg(2.0, 3.0)
        assert value == pytest.approx(21.0)
        assert (gx, gy) == (pytest.approx(12.0), pytest.approx(4.0 + 6.0))


def test_arrays_and_scalars_of_the_same_types_pick_their_own_variants():
    w = np.array([0.5, -1.0, 2.0])
    df = s2s_ad.grad(mixed)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([[1.0, 2.0, 3.0]]), 2.0):
        for n, label in ((3, "sum"), (2, "neg")):
            want = numerical_grad(mixed, (w, x, n, label), 0)
            for _ in range(2):
                got = df(w, x, n, label)
                assert got.shape == w.shape and got.dtype == w.dtype
                np.testing.assert_allclose(got, want, rtol=1e-6)


def test_integer_array_is_refused():
    df = s2s_ad.grad(mixed)
    df(np.ones(2), np.ones(2), 1, "sum")
    with pytest.raises(TypeError, match="dtype int"):
        df(np.ones(2, dtype=int), np.ones(2), 1, "sum")


def test_non_scalar_output_is_refused_after_scalar_calls():
    def square(x):
        return x * x

    df = s2s_ad.grad(square)
    assert df(3.0) == pytest.approx(6.0)
    with pytest.raises(ValueError, match="scalar output"):
        df(np.ones(3))


def test_bound_method_of_a_model():
    model = Quadratic(3.0)
    df = s2s_ad.grad(model.loss, (0, 1))
    for _ in range(3):
        gx, gy = df(2.0, 0.5)
        assert (gx, gy) == (pytest.approx(2 * 3.0 * 2.0 + 0.5), pytest.approx(2.0))


def test_repeated_grad_reuses_the_transform_and_follows_changes():
    def cube(x):
        return x * x * x

    df = s2s_ad.grad(cube)
    again = s2s_ad.grad(cube)
    assert again._s2s_call is df._s2s_call  # made once
    assert again(2.0) == pytest.approx(12.0)
    assert s2s_ad.grad(cube, [0])(2.0) == (pytest.approx(12.0),)  # a list: a tuple back

    def square(x):
        return x * x

    cube.__code__ = square.__code__  # the function now runs other code
    assert s2s_ad.grad(cube)(2.0) == pytest.approx(4.0)

    def shifted(x, a=1.0):
        return a * x * x

    df = s2s_ad.grad(shifted)
    assert df(1.0) == pytest.approx(2.0)
    shifted.__defaults__ = (5.0,)
    assert s2s_ad.grad(shifted)(1.0) == pytest.approx(10.0)
    api.clear_cache()
    assert s2s_ad.grad(shifted)._s2s_call is not df._s2s_call


def test_repeated_grad_request_follows_keyword_defaults_and_redefinitions():
    def damped(x, y, *, decay=0.5):
        return decay * x * x * y + y * y

    df = s2s_ad.grad(damped, (0, 1))
    df.note = "mine"  # each grad() returns its own object
    again = s2s_ad.grad(damped, (0, 1))
    assert again is not df and again._s2s_call is df._s2s_call and not hasattr(again, "note")
    assert s2s_ad.grad(damped, argnums=(0, 1))(1.0, 2.0) == pytest.approx((2.0, 4.5))
    damped.__kwdefaults__ = {"decay": 2.0}
    assert s2s_ad.grad(damped, (0, 1))(1.0, 2.0) == pytest.approx((8.0, 6.0))
    vg = s2s_ad.value_and_grad(damped, 1)._s2s_call
    assert s2s_ad.value_and_grad(damped, 1)._s2s_call is vg
    damped.__defaults__ = None  # unchanged: still the same
    assert s2s_ad.value_and_grad(damped, 1)._s2s_call is vg

    def cubic(x, y, *, decay=0.5):
        return decay * x * x * x * y

    damped.__code__ = cubic.__code__
    value, dy = s2s_ad.value_and_grad(damped, 1)(1.0, 2.0)
    assert (value, dy) == (pytest.approx(4.0), pytest.approx(2.0))
    before = s2s_ad.grad(damped, 1)._s2s_call
    api.clear_cache()
    assert s2s_ad.grad(damped, 1)._s2s_call is not before


def test_a_gradient_function_still_pickles_and_is_still_differentiated_again():
    df = s2s_ad.grad(poly)
    df(1.0, 2.0)
    copy = pickle.loads(pickle.dumps(df))
    assert copy(1.5, 2.0) == pytest.approx(6.0)
    d2 = s2s_ad.grad(s2s_ad.grad(poly))  # d/dx (2 x y) = 2 y
    for _ in range(2):
        assert d2(1.5, 2.0) == pytest.approx(4.0)
