"""Decorated functions: the decorator's wrapper is what runs, so it is what is differentiated.

And the results of s2s_ad's own transforms, which are decorated functions too: each is
differentiated as what it computes, or refused, never taken for the function it wraps.
"""

import functools

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError


def twice(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)

    return wrapper


def scaled(factor):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(t):  # a parameter named unlike the wrapped function's
            return factor * fn(t) + t

        return wrapper

    return decorator


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("calling", fn.__name__)
        return 3.0 * fn(*args, **kwargs)

    return wrapper


def passthrough(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        """Calls fn unchanged."""
        return fn(*args, **kwargs)

    return wrapper


def without_wraps(fn):
    def inner(x):
        return fn(x) * fn(x)

    return inner


REGISTERED = []


def register(fn):
    REGISTERED.append(fn)
    return fn


@twice
def doubled_square(x):
    return x * x


@scaled(3.0)
def tripled_sin(x):
    return np.sin(x)


@twice
@twice
def quadrupled(x):
    return x * x * x


@logged
def logged_square(x):
    return x * x


@passthrough
def passed_cube(x):
    return np.sum(x**3)


@without_wraps
def squared_sin(x):
    return np.sin(x)


@register
def registered(x):
    return np.exp(x)


@functools.cache
def cached(x):
    return x**3


def test_wrapper_changing_the_value_changes_the_gradient():
    assert s2s_ad.grad(doubled_square)(3.0) == pytest.approx(12.0)
    value, g = s2s_ad.value_and_grad(doubled_square)(3.0)
    assert (value, g) == (pytest.approx(18.0), pytest.approx(12.0))


def test_wrapper_with_its_own_parameter_name_and_decorator_arguments():
    assert s2s_ad.grad(tripled_sin)(0.3) == pytest.approx(3.0 * np.cos(0.3) + 1.0)
    assert s2s_ad.grad(tripled_sin, "t")(0.3) == pytest.approx(3.0 * np.cos(0.3) + 1.0)


def test_stacked_wrappers_each_count():
    assert s2s_ad.grad(quadrupled)(2.0) == pytest.approx(4.0 * 3.0 * 4.0)


def test_hand_written_wrapper_without_wraps():
    x = 0.4
    assert s2s_ad.grad(squared_sin)(x) == pytest.approx(2.0 * np.sin(x) * np.cos(x))


def test_decorated_helper_called_from_a_function():
    def uses(x):
        return doubled_square(x) + tripled_sin(x)

    expected = 4.0 * 0.3 + 3.0 * np.cos(0.3) + 1.0
    assert s2s_ad.grad(uses)(0.3) == pytest.approx(expected)


def test_every_mode_sees_the_wrapper():
    assert s2s_ad.jvp(doubled_square, (3.0,), (1.0,))[1] == pytest.approx(12.0)
    (g,) = s2s_ad.vjp(doubled_square, 3.0)[1](1.0)
    assert g == pytest.approx(12.0)
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(s2s_ad.jacobian(tripled_sin)(x), np.diag(3 * np.cos(x) + 1))


@pytest.mark.parametrize("inner", ["grad", "wrapped"])
def test_second_derivative_through_a_wrapper(inner):
    if inner == "grad":
        assert s2s_ad.grad(s2s_ad.grad(doubled_square))(3.0) == pytest.approx(4.0)
    else:
        df = twice(s2s_ad.grad(doubled_square))
        assert s2s_ad.grad(df)(3.0) == pytest.approx(8.0)


def test_star_args_wrapper_that_changes_the_value_is_differentiated_not_unwrapped(capsys):
    # positions count the call's arguments (as in JAX): position 0 is args[0]
    assert s2s_ad.grad(logged_square)(1.5) == pytest.approx(9.0)
    assert "calling logged_square" in capsys.readouterr().out
    assert s2s_ad.grad(logged_square, argnums=(0,))(-2.0) == pytest.approx((-12.0,))
    assert s2s_ad.grad(s2s_ad.grad(logged_square))(1.5) == pytest.approx(6.0)


def test_pure_pass_through_star_args_wrapper_is_the_wrapped_function():
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(s2s_ad.grad(passed_cube)(x), 3 * x**2)


def test_registry_decorator_returns_the_function_itself():
    assert registered in REGISTERED
    assert s2s_ad.grad(registered)(0.5) == pytest.approx(np.exp(0.5))


def test_lru_cache_is_unwrapped_its_values_are_the_functions():
    # a cache returns what the function computes: differentiating the function is exact
    assert s2s_ad.grad(cached)(2.0) == pytest.approx(12.0)
    assert cached(2.0) == 8.0  # the cached function still works as before


def method_twice(fn):
    @functools.wraps(fn)
    def wrapper(self, x):
        return 2.0 * fn(self, x)

    return wrapper


class Shapes:
    def __init__(self, w):
        self.w = w

    @staticmethod
    @twice
    def doubled(x):
        return x * x

    @classmethod
    def tripled(cls, x):
        return 3.0 * x * x

    @method_twice
    def scaled(self, x):
        return self.w * x * x


def test_decorated_static_class_and_instance_methods():
    assert s2s_ad.grad(Shapes.doubled)(3.0) == pytest.approx(12.0)
    assert s2s_ad.grad(Shapes.tripled)(3.0) == pytest.approx(18.0)
    assert s2s_ad.grad(Shapes(0.5).scaled)(3.0) == pytest.approx(2.0 * 0.5 * 6.0)
    with pytest.raises(TransformError, match="classmethod"):
        s2s_ad.grad(Shapes.__dict__["tripled"])
    assert s2s_ad.grad(Shapes.__dict__["doubled"])(3.0) == pytest.approx(12.0)


def test_custom_gradient_function_differentiated_directly_uses_its_gradient():
    @s2s_ad.custom_gradient
    def clipped(x):
        def grad_fn(upstream):
            return upstream * 0.25

        return x * x, grad_fn

    assert s2s_ad.grad(clipped)(3.0) == pytest.approx(0.25)


# --- results of s2s_ad's transforms ---------------------------------------------------


def sin_elementwise(x):
    return np.sin(x)


def test_elementwise_grad_of_elementwise_grad_is_the_second_derivative():
    x = np.array([0.1, 0.5, -1.2])
    first = s2s_ad.elementwise_grad(sin_elementwise)
    second = s2s_ad.elementwise_grad(first)
    np.testing.assert_allclose(first(x), np.cos(x))
    np.testing.assert_allclose(second(x), -np.sin(x))


def test_elementwise_grad_three_times():
    x = np.array([0.1, 0.5, -1.2])
    e = s2s_ad.elementwise_grad
    np.testing.assert_allclose(e(e(e(sin_elementwise)))(x), -np.cos(x))


def sin_times_x(x):
    return np.sin(x) * x


def test_elementwise_grad_three_times_through_a_product():
    x = np.array([0.1, 0.5, -1.2])
    e = s2s_ad.elementwise_grad
    expected = -3 * np.sin(x) - x * np.cos(x)
    np.testing.assert_allclose(e(e(e(sin_times_x)))(x), expected)


def test_jacobian_of_elementwise_grad_is_the_diagonal_of_second_derivatives():
    x = np.array([0.1, 0.5, -1.2])
    egrad = s2s_ad.elementwise_grad(sin_elementwise)
    np.testing.assert_allclose(s2s_ad.jacobian(egrad)(x), np.diag(-np.sin(x)))
    np.testing.assert_allclose(s2s_ad.jacobian(egrad, mode="fwd")(x), np.diag(-np.sin(x)))
    assert s2s_ad.grad(egrad)(0.5) == pytest.approx(-np.sin(0.5))


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda f: s2s_ad.value_and_grad(f), "value_and_grad"),
        (lambda f: s2s_ad.grad(f, has_aux=True), "has_aux"),
        (lambda f: s2s_ad.jacobian(f), "jacobian"),
        (lambda f: s2s_ad.hessian(f), "hessian"),
        (lambda f: s2s_ad.hvp(f), "hvp"),
    ],
)
def test_transforms_returning_more_than_a_function_value_are_refused(make, name):
    made = make(doubled_square)
    for transform in (s2s_ad.grad, s2s_ad.elementwise_grad):
        with pytest.raises(TransformError, match=name):
            transform(made)
    with pytest.raises(TransformError, match=name):
        s2s_ad.jvp(made, (3.0,), (1.0,))


def test_a_grad_function_wrapped_by_a_user_decorator():
    df = twice(s2s_ad.grad(doubled_square))  # 2 * 4x
    assert df(3.0) == pytest.approx(24.0)


def weighted(x, w=1.0):
    return w * x * x


half_weighted = functools.partial(weighted, w=0.5)


def calls_cached_and_partial(x):
    return cached(x) + half_weighted(x)


def applies(fn, x):
    return fn(x) * 2.0


def test_cached_and_partial_callees():
    # d/dx (x^3 + 0.5 x^2) = 3x^2 + x
    assert s2s_ad.grad(calls_cached_and_partial)(2.0) == pytest.approx(14.0)
    assert s2s_ad.jvp(calls_cached_and_partial, (2.0,), (1.0,))[1] == pytest.approx(14.0)
    # passed as values: dispatched when the code runs
    assert s2s_ad.grad(applies, 1)(half_weighted, 2.0) == pytest.approx(4.0)
    assert s2s_ad.grad(applies, 1)(cached, 2.0) == pytest.approx(24.0)


def doubled_input(fn):
    @functools.wraps(fn)
    def wrapper(x, scale=2.0):
        return fn(x * scale)

    return wrapper


def as_lambda(fn):
    return lambda x: 2.0 * fn(x)


class Doubling:
    """A class-based decorator (functools.update_wrapper on the instance)."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, x):
        return 2.0 * self.fn(x)


@doubled_input
def square_of_doubled(x):
    return x * x


@as_lambda
def lambda_doubled(x):
    return x * x


@Doubling
def object_doubled(x):
    return x * x


def test_wrappers_of_every_shape():
    # (2x)^2: 8x; with respect to the wrapper's own parameter scale: 2 x^2 scale
    assert s2s_ad.grad(square_of_doubled)(3.0) == pytest.approx(24.0)
    assert s2s_ad.grad(square_of_doubled, "scale")(3.0) == pytest.approx(36.0)
    assert s2s_ad.grad(lambda_doubled)(3.0) == pytest.approx(12.0)
    assert s2s_ad.jvp(lambda_doubled, (3.0,), (1.0,)) == (pytest.approx(18.0), pytest.approx(12.0))
    assert s2s_ad.grad(object_doubled)(3.0) == pytest.approx(12.0)

    def uses(x):
        return object_doubled(x) + lambda_doubled(x)

    assert s2s_ad.grad(uses)(3.0) == pytest.approx(24.0)
