"""The fast paths of the runtime helpers (plain float arrays) give the same values, shapes
and dtypes as their general paths, and ``hvp``'s direct call of the bound tangent program
stays right when the program is generated again or the arguments change kind."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad
from s2s_ad import api, runtime
from s2s_ad.api import clear_cache
from s2s_ad.rules import vjps

RNG = np.random.default_rng(7)


def _reference_fill(g, shape, axes, keepdims, divide=1):
    """What sum_vjp / mean_vjp compute, written out with broadcast_to."""
    if not keepdims and axes and np.ndim(g):
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g / divide, shape) + 0.0


class _Wrapped:
    """A duck array with its own type: the helpers must take their general path."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


SHAPES = [(5,), (3, 4), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sum_and_mean_vjp_match_broadcasting(shape, keepdims, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    ndim = len(shape)
    axis_choices = [None, 0, -1] + [c for c in itertools.combinations(range(ndim), 2)]
    for axis in axis_choices:
        ans = np.sum(a, axis=axis, keepdims=keepdims)
        g = RNG.standard_normal(np.shape(ans)).astype(dtype)
        if np.ndim(g) == 0:
            g = dtype(g) if dtype is np.float32 else float(g)
        axes = tuple(range(ndim)) if axis is None else tuple(np.atleast_1d(axis) % ndim)
        count = int(np.prod([shape[k] for k in axes]))
        for helper, divide in ((vjps.sum_vjp, 1), (vjps.mean_vjp, count)):
            got = helper(g, a, axis, keepdims)
            want = _reference_fill(g, shape, axes, keepdims, divide)
            assert type(got) is np.ndarray and got.shape == shape
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
            assert got.flags.writeable and not np.shares_memory(got, g)


def test_sum_vjp_of_a_float_keeps_python_float_semantics():
    a = np.arange(6.0).reshape(2, 3)
    got = vjps.sum_vjp(-0.0, a, None, False)
    np.testing.assert_array_equal(got, np.zeros((2, 3)))
    assert not np.signbit(got).any()  # -0.0 + 0.0 is +0.0, as np.broadcast_to(g) + 0.0
    got = vjps.mean_vjp(np.float64(3.0), a, None, False)
    np.testing.assert_array_equal(got, np.full((2, 3), 0.5))
    # an integer cotangent is not a float: the general path (a float result)
    got = vjps.sum_vjp(np.ones(2, dtype=int), a, 1, False)
    assert got.dtype == np.float64 and got.shape == (2, 3)


def test_sum_vjp_of_a_zero_dimensional_array_keeps_its_general_result():
    a = np.array(2.0)
    assert vjps.sum_vjp(1.0, a) == 1.0
    assert np.shape(vjps.sum_vjp(1.0, a)) == ()


MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((4,), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
]


@pytest.mark.parametrize(("xs", "ys"), MATMUL_SHAPES)
def test_matmul_vjps_match_the_general_path_and_autograd_rules(xs, ys):
    x, y = RNG.standard_normal(xs), RNG.standard_normal(ys)
    g = RNG.standard_normal(np.shape(x @ y))
    if np.ndim(g) == 0:
        pytest.skip("a scalar cotangent is not an array: the general path")
    gx, gy = vjps.matmul_vjp_x(g, x, y), vjps.matmul_vjp_y(g, x, y)
    slow_x = vjps.matmul_vjp_x(g, _Wrapped(x), _Wrapped(y))
    slow_y = vjps.matmul_vjp_y(g, _Wrapped(x), _Wrapped(y))
    np.testing.assert_array_equal(gx, slow_x)
    np.testing.assert_array_equal(gy, slow_y)
    assert gx.shape == xs and gy.shape == ys
    # against the definition: <g, d(x @ y)> = <gx, dx> + <gy, dy>
    dx, dy = RNG.standard_normal(xs), RNG.standard_normal(ys)
    lhs = np.sum(g * (dx @ y + x @ dy))
    assert np.isclose(lhs, np.sum(gx * dx) + np.sum(gy * dy), rtol=1e-12)


def test_broadcast_like_of_numpy_scalars_returns_the_tangent():
    t = np.float64(2.5)
    assert runtime.broadcast_like(t, np.float64(1.0)) is t
    assert runtime.broadcast_like(t, 1.0) is t
    assert runtime.broadcast_like(0.5, np.float64(1.0)) == 0.5
    out = runtime.broadcast_like(t, np.zeros(3))
    np.testing.assert_array_equal(out, np.full(3, 2.5))


# --- hvp ------------------------------------------------------------------------------------


def mlp_loss(params, x, y):
    """A two-layer tanh MLP's squared error, params as [(W, b), ...]."""
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    out = h @ W + b
    return np.mean((out - y) ** 2)


def flat_loss(w, x, y):
    """``mlp_loss`` of a flat parameter vector (hvp needs one array)."""
    W1 = np.reshape(w[:12], (3, 4))
    b1 = w[12:16]
    W2 = np.reshape(w[16:20], (4, 1))
    b2 = w[20:21]
    return mlp_loss([(W1, b1), (W2, b2)], x, y)


def _hvp_by_fd(f, w, v, *rest):
    gradient = s2s_ad.grad(f)
    return numerical_grad(lambda u: np.dot(gradient(u, *rest), v), [w])


def test_hvp_of_an_mlp_loss_on_repeated_calls_matches_finite_differences():
    x, y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 1))
    hv = s2s_ad.hvp(flat_loss)
    w = RNG.standard_normal(21) * 0.5
    for _ in range(3):  # the first call takes the general path, the next ones the bound one
        v = RNG.standard_normal(21)
        got = hv(w, x, y, v)
        np.testing.assert_allclose(got, _hvp_by_fd(flat_loss, w, v, x, y), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(got, s2s_ad.hessian(flat_loss)(w, x, y) @ v, rtol=1e-10)


def test_hvp_after_clear_cache_runs_the_program_generated_again():
    def softplus(z):
        return np.log1p(np.exp(z))

    def loss(w):
        return np.sum(softplus(w) * w)

    hv = s2s_ad.hvp(loss)
    w, v = RNG.standard_normal(5), RNG.standard_normal(5)
    first = hv(w, v)
    second = hv(w, v)
    np.testing.assert_array_equal(first, second)
    (bound,) = [c.cell_contents for c in hv.__closure__ if type(c.cell_contents) is list]
    old_program = bound[2]
    assert api._CACHE.get(bound[3]) is old_program  # what the fast path runs is current
    clear_cache()
    np.testing.assert_array_equal(hv(w, v), first)  # the general path, then bound again
    assert bound[2] is not old_program and api._CACHE.get(bound[3]) is bound[2]
    np.testing.assert_array_equal(hv(w, v), first)
    np.testing.assert_allclose(first, _hvp_by_fd(loss, w, v), rtol=1e-5, atol=1e-7)


def test_hvp_with_other_argument_kinds_after_the_fast_path():
    def f(x):
        return np.sum(np.sin(x) * x**2)

    hv = s2s_ad.hvp(f)
    x, v = RNG.standard_normal(4), RNG.standard_normal(4)
    want = (2 * np.sin(x) + 4 * x * np.cos(x) - x**2 * np.sin(x)) * v
    np.testing.assert_allclose(hv(x, v), want, rtol=1e-12)
    np.testing.assert_allclose(hv(x, v), want, rtol=1e-12)
    got32 = hv(x.astype(np.float32), v.astype(np.float32))  # float32: the general path
    np.testing.assert_allclose(got32, want, rtol=1e-4)
    with pytest.raises(ValueError, match="shape"):
        hv(x, v[:3])
    with pytest.raises(TypeError):
        hv(np.arange(4), v)


def test_hvp_of_a_model_method():
    class Quadratic:
        def __init__(self, a):
            self.a = a

        def energy(self, x):
            return 0.5 * x @ (self.a @ x) + np.sum(np.cos(x))

    a = RNG.standard_normal((4, 4))
    model = Quadratic(a + a.T)
    hv = s2s_ad.hvp(model.energy)
    x = RNG.standard_normal(4)
    for _ in range(2):
        v = RNG.standard_normal(4)
        want = (a + a.T) @ v - np.cos(x) * v
        np.testing.assert_allclose(hv(x, v), want, rtol=1e-10)


def test_forward_jacobian_after_clear_cache_binds_the_program_generated_again():
    from s2s_ad import forward_batch

    def layer(x):
        return np.tanh(np.reshape(np.arange(6.0), (2, 3)) @ x) * x[:2]

    jac = s2s_ad.jacobian(layer, mode="fwd")
    x = RNG.standard_normal(3)
    first = jac(x)
    np.testing.assert_array_equal(jac(x), first)
    (entry,) = forward_batch._BOUND[layer].values()
    assert api._CACHE.get(entry[2]) is entry[0]
    clear_cache()
    np.testing.assert_array_equal(jac(x), first)
    (again,) = forward_batch._BOUND[layer].values()
    assert again[0] is not entry[0] and api._CACHE.get(again[2]) is again[0]
    want = np.stack([numerical_grad(lambda u, k=k: layer(u)[k], [x]) for k in range(2)])
    np.testing.assert_allclose(first, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "x",
    [
        np.ones((3, 2)),
        np.ones((3, 2), dtype=np.float32),
        np.ones((3, 2), dtype=complex),
        np.arange(6).reshape(3, 2),
        np.asfortranarray(np.ones((3, 2))),
        np.ones((3, 4))[:, ::2],
        np.ma.masked_array(np.ones(3)),
        np.array(2.5),
    ],
)
def test_zeros_like_matches_numpy_for_every_kind_of_array(x):
    got = runtime.zeros_like(x)
    kind_ok = x.dtype.kind in "fc"
    want = np.zeros_like(x) if kind_ok else np.zeros(x.shape)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    assert got.flags.f_contiguous == want.flags.f_contiguous
    np.testing.assert_array_equal(got, want)
    assert not np.shares_memory(got, x)


def test_zeros_like_and_add_of_mlp_parameters():
    params = [(np.ones((4, 3)), np.ones(3)), (np.ones((3, 1)), np.ones(1))]
    zero = runtime.zeros_like(params)
    assert type(zero) is list and all(type(p) is tuple for p in zero)
    total = runtime.add(zero, params)
    total = runtime.add(total, [(0.0, np.full(3, 2.0)), (np.ones((3, 1)), 0.0)])
    np.testing.assert_array_equal(total[0][0], np.ones((4, 3)))
    np.testing.assert_array_equal(total[0][1], np.full(3, 3.0))
    np.testing.assert_array_equal(total[1][0], np.full((3, 1), 2.0))
    np.testing.assert_array_equal(total[1][1], np.ones(1))
    assert type(total) is list and type(total[1]) is tuple
    assert total[0][1] is not params[0][1]  # a new array, not an alias of an input


def test_mlp_gradient_with_a_parameter_list_matches_finite_differences():
    x, y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 1))
    params = [(RNG.standard_normal((3, 4)), RNG.standard_normal(4))]
    params.append((RNG.standard_normal((4, 1)), RNG.standard_normal(1)))
    df = s2s_ad.grad(mlp_loss)
    for _ in range(2):
        got = df(params, x, y)
        want = numerical_grad(mlp_loss, [params, x, y])
        for (gw, gb), (ww, wb) in zip(got, want):
            np.testing.assert_allclose(gw, ww, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(gb, wb, rtol=1e-6, atol=1e-8)


def test_sum_and_mean_vjp_of_a_cotangent_that_broadcasts():
    a = RNG.standard_normal((2, 3))
    g = np.array([1.5])  # broadcasts against the (3,) result of a reduction over axis 0
    for helper, divide in ((vjps.sum_vjp, 1), (vjps.mean_vjp, 2)):
        got = helper(g, a, 0, False)
        np.testing.assert_array_equal(got, np.full((2, 3), 1.5 / divide))
        got = helper(np.ones((1, 1)), a, 1, True)
        np.testing.assert_array_equal(got, np.full((2, 3), 1.0 / (3 if divide == 2 else 1)))


INDEXES = [
    3,
    -1,
    slice(1, 4),
    slice(None, None, 2),
    (1, 2),
    (slice(None), 0),
    np.array([0, 2, 2]),  # a repeated entry: both reads add up
    np.array([True, False, True, False]),
    (np.array([0, 1]), np.array([2, 2])),
    Ellipsis,
    None,
]


@pytest.mark.parametrize("index", INDEXES, ids=repr)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("zero", [0.0, None, "array"])
def test_add_at_on_arrays_matches_numpy_add_at(index, dtype, zero):
    x = (RNG.standard_normal((4, 3)) * 3).astype(dtype)
    g = RNG.standard_normal(np.shape(x[index]))
    if zero == "array":
        x_bar = RNG.standard_normal((4, 3))
        want = x_bar.copy()
    else:
        x_bar = zero
        want = np.zeros((4, 3), dtype=dtype if np.dtype(dtype).kind == "f" else np.float64)
    np.add.at(want, index, g)
    got = runtime.add_at(x_bar, x, index, g)
    assert type(got) is np.ndarray and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if zero == "array":
        assert got is not x_bar  # a new value: x_bar may alias another adjoint
    # a scalar cotangent broadcast over the part read
    got = runtime.add_at(x_bar, x, index, 1.5)
    want2 = (x_bar - 0.0) if zero == "array" else np.zeros_like(want)
    np.add.at(want2, index, 1.5)
    np.testing.assert_allclose(got, want2, rtol=1e-6 if dtype is np.float32 else 1e-13, atol=1e-12)


def test_add_at_of_a_zero_cotangent_returns_the_adjoint_itself():
    x_bar = np.ones(3)
    assert runtime.add_at(x_bar, np.zeros(3), 1, 0.0) is x_bar
    assert runtime.add_at(0.0, np.zeros(3), 1, None) == 0.0


@pytest.mark.parametrize(
    ("x", "y"),
    [
        (np.array([0.3, 0.1, -2.0, 0.1, 5.0]), 0.1),  # ties with a float
        (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([2.0, 2.0])),  # broadcasting, a tie
        (np.array([1.0, np.nan, 3.0]), np.array([np.nan, 2.0, 3.0])),  # NaN never wins
        (np.array([1, 2, 3]), 2.0),  # integers: float weights all the same
        (np.array([2.0, 7.0]), np.array([[1.0], [7.0], [9.0]])),  # y the larger array
        (np.array(2.0), 2.0),  # zero-dimensional: the general path
    ],
)
def test_max_and_min_weights_match_the_general_formula(x, y):
    for fast, won in ((vjps.max_weight, x > y), (vjps.min_weight, x < y)):
        got, want = fast(x, y), won + 0.5 * (x == y)
        assert np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want)
        np.testing.assert_array_equal(got, want)


def test_gradient_through_np_maximum_with_ties_matches_its_rule():
    def hinge_loss(w, x, y):
        margins = np.maximum(1.0 - y * (x @ w), 0.0)
        return np.mean(margins**2) + 0.1 * np.sum(np.maximum(w, 0.0))

    x = RNG.standard_normal((20, 4))
    y = np.sign(RNG.standard_normal(20))
    w = np.array([0.5, 0.0, -0.3, 0.0])  # entries at the kink of maximum(w, 0): ties
    g = s2s_ad.grad(hinge_loss)(w, x, y)
    margins = np.maximum(1.0 - y * (x @ w), 0.0)
    hinge = -2.0 * (x.T @ (y * margins)) / 20
    want = hinge + 0.1 * ((w > 0) + 0.5 * (w == 0))
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-15)
