"""``*args``/``**kwargs`` parameters, star-calls, ``zip(*pairs)``, generator helpers and
second derivatives through calls dispatched at run time, on programs users bring."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError, check_grads, grad
from tests.fd import numerical_grad

RNG = np.random.default_rng(7)


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=tol, atol=tol)


# --- callees with *args / **kwargs ------------------------------------------------------


def mlp(params, x):
    def layer(h, W, b):
        return np.tanh(h @ W + b)

    h = x
    for W, b in params:
        h = layer(h, W, b)
    return np.sum(h**2)


def apply_all(fn, *args, **kwargs):
    """A training utility: call the model with whatever it takes."""
    return fn(*args, **kwargs)


def loss_through_apply(W1, b1, W2, x):
    return apply_all(mlp, [(W1, b1), (W2, 0.0)], x)


def product(a, *rest, scale=1.0, **options):
    total = a
    for r in rest:
        total = total * r
    return total * scale * options.get("extra", 1.0)


def keyword_heavy(x, y):
    return product(x, y, x, scale=2.0, extra=y)


def packed_call(x, y):
    opts = {"scale": y, "extra": 2.0}
    parts = [x, y]
    return product(*parts, x, **opts)


def forwards_everything(x, y):
    args = (x, np.sin(y))
    kwargs = {"scale": x * y}
    return apply_all(product, *args, **kwargs)


def _mlp_params():
    return [(RNG.normal(size=(3, 4)), RNG.normal(size=4)), (RNG.normal(size=(4, 2)), 0.0)]


def test_model_called_through_a_star_args_utility_first_and_second_order():
    (W1, b1), (W2, _) = _mlp_params()
    x = RNG.normal(size=(5, 3))
    check_grads(loss_through_apply, (W1, b1, W2, x), order=2)
    check_grads(loss_through_apply, (W1, b1, W2, x), modes=("fwd",))


def test_gradient_keeps_the_structure_of_params_passed_through_star_args():
    params = _mlp_params()
    x = RNG.normal(size=(5, 3))
    g = grad(lambda p: apply_all(mlp, p, x))(params)
    assert isinstance(g, list) and isinstance(g[0], tuple)
    first = numerical_grad(lambda W: mlp([(W, params[0][1]), params[1]], x), (params[0][0],), 0)
    _close(g[0][0], first)


@pytest.mark.parametrize("fun", [keyword_heavy, packed_call, forwards_everything])
def test_star_parameters_and_star_calls(fun):
    args = (1.5, 0.7)
    check_grads(fun, args, order=2)
    check_grads(fun, args, modes=("fwd",))
    g = grad(fun, wrt=(0, 1))(*args)
    _close(g, [numerical_grad(fun, args, i) for i in (0, 1)])


def test_keyword_dict_read_with_get_inside_star_kwargs():
    # product(x, y, x, scale=2, extra=y) = 2 x^2 y^2
    assert grad(keyword_heavy, wrt=(0, 1))(1.5, 2.0) == pytest.approx((24.0, 18.0))


def noisy_quadratic(x):
    rs = np.random.RandomState(0)
    noise = rs.randn(*x.shape)
    return np.sum((x - noise) ** 2)


def test_star_call_of_a_constant_shape_runs_in_the_forward_sweep():
    x = RNG.normal(size=(2, 3))
    noise = np.random.RandomState(0).randn(2, 3)
    _close(grad(noisy_quadratic)(x), 2 * (x - noise))


def pair_products(v):
    pairs = [(v[0], v[1]), (v[2], v[3]), (v[4], v[5])]
    firsts, seconds = zip(*pairs)
    total = 0.0
    for a, b in zip(firsts, seconds[::-1]):
        total = total + a * b
    return total + sum(firsts) ** 2


def test_zip_star_transposes_pairs_both_modes():
    v = RNG.normal(size=6)
    check_grads(pair_products, (v,), order=2)
    check_grads(pair_products, (v,), modes=("fwd",))


def test_a_method_star_call_on_a_differentiated_array_is_refused():
    def reshaped(x):
        shape = (3, 2)
        return np.sum(x.reshape(*shape) ** 2)

    with pytest.raises(TransformError, match=r"\.reshape\(\) with \* or \*\* arguments"):
        grad(reshaped)(np.ones(6))


# --- top-level *args: positions count the call's arguments (JAX, autograd) ---------------


def sum_of_squares(*xs):
    total = 0.0
    for x in xs:
        total = total + x * x
    return total


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 3.0 * fn(*args, **kwargs)

    return wrapper


@logged
def scaled_energy(x, y):
    return np.sum(x * y**2)


def test_positions_inside_star_args_pick_entries():
    assert grad(sum_of_squares)(1.0, 2.0, 3.0) == pytest.approx(2.0)
    assert grad(sum_of_squares, argnums=(1, 2))(1.0, 2.0, 3.0) == pytest.approx((4.0, 6.0))
    value, g = s2s_ad.value_and_grad(sum_of_squares, 2)(1.0, 2.0, 3.0)
    assert (value, g) == pytest.approx((14.0, 6.0))


def test_second_derivatives_of_star_args_entries():
    hess = [[grad(grad(sum_of_squares, i), j)(1.0, 2.0, 3.0) for j in range(3)] for i in range(3)]
    _close(hess, 2 * np.eye(3))
    x, y = 0.4, -1.2
    # scaled_energy(x, y) = 3 x y^2: d2/dx dy = 6 y
    assert grad(grad(scaled_energy, 0), 1)(x, y) == pytest.approx(6 * y)


def test_decorator_with_star_args_wrapper_is_differentiated():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    gx, gy = grad(scaled_energy, argnums=(0, 1))(x, y)
    _close(gx, 3 * y**2)
    _close(gy, 6 * x * y)


# --- generator helpers --------------------------------------------------------------------

SIZES = [(3, 4), (4, 2)]


def unpack_layers(flat):
    offset = 0
    for m, n in SIZES:
        W = flat[offset : offset + m * n].reshape(m, n)
        offset += m * n
        b = flat[offset : offset + n]
        offset += n
        yield W, b


def flat_mlp_loss(flat, x, y):
    h = x
    for W, b in unpack_layers(flat):
        h = np.tanh(h @ W + b)
    return np.mean((h - y) ** 2)


def adjacent(xs):
    for i in range(len(xs) - 1):
        if xs[i] > 0:
            yield xs[i] * xs[i + 1]
        else:
            yield xs[i]


def sums_of_a_generator(xs):
    return sum(adjacent(xs)) + sum(p * p for p in adjacent(xs))


def test_generator_yielding_layers_of_a_flat_vector():
    flat = RNG.normal(size=3 * 4 + 4 + 4 * 2 + 2)
    x, y = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))
    check_grads(flat_mlp_loss, (flat, x, y), order=2)
    check_grads(flat_mlp_loss, (flat, x, y), modes=("fwd",))


def test_generator_with_a_branch_consumed_twice():
    xs = np.array([1.0, -2.0, 3.0, 0.5])
    _close(grad(sums_of_a_generator)(xs), numerical_grad(sums_of_a_generator, (xs,), 0))
    check_grads(sums_of_a_generator, (xs,), order=2)


def test_a_generator_itself_is_refused_naming_it():
    with pytest.raises(TransformError, match="generator function"):
        grad(adjacent)


def test_yield_from_is_differentiated_as_a_loop_that_yields():
    def chained(xs):
        yield from adjacent(xs)
        yield from [xs[0] ** 3]

    def consumer(xs):
        return sum(chained(xs))

    xs = np.array([1.0, -2.0, 3.0, 0.5])
    _close(grad(consumer)(xs), numerical_grad(consumer, (xs,), 0))
    check_grads(consumer, (xs,), order=2, modes=("rev", "fwd"))


# --- calls known when they run, differentiated twice ---------------------------------------


def module_passed_in(t, anp):
    return anp.sum(anp.tanh(t) * t)


def constant_matrix_methods(t, A):
    return np.sum(A.dot(t) ** 2) + A.T.dot(t).sum()


def test_numpy_passed_as_a_parameter_is_not_a_constant():
    # ``anp.sum(t * t)`` once read ``t * t`` as the axis of ndarray.sum: gradient zero
    t = RNG.normal(size=3)
    _close(grad(lambda t: module_passed_in(t, np))(t), np.tanh(t) + t * (1 - np.tanh(t) ** 2))
    check_grads(lambda t: module_passed_in(t, np), (t,), order=2)
    check_grads(lambda t: module_passed_in(t, np), (t,), modes=("fwd",))


def test_methods_of_a_constant_array():
    t, A = RNG.normal(size=3), RNG.normal(size=(3, 3))
    _close(grad(constant_matrix_methods)(t, A), 2 * A.T @ (A @ t) + A.sum(axis=1))
    check_grads(lambda t: constant_matrix_methods(t, A), (t,), order=2)


def twice(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)

    return wrapper


@twice
def doubled_cube(x):
    return x**3


def newton_step(x):
    """One Newton step for the root of doubled_cube' written with grad inside."""
    d = grad(doubled_cube)
    return x - d(x) / grad(d)(x)


def test_gradient_wrapped_by_a_decorator_is_a_new_function():
    # twice(grad(f)) differentiates to 2 f'' (functools.wraps copies grad's markers)
    df = twice(grad(doubled_cube))
    assert grad(df)(1.5) == pytest.approx(2 * 12 * 1.5)


def test_grad_of_grad_through_a_function_that_calls_grad():
    check_grads(newton_step, (1.3,), order=2)
    assert grad(grad(newton_step))(1.3) == pytest.approx(0.0, abs=1e-8)
