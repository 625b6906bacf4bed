"""Scalar (Python float) arithmetic: operators, ``**``, augmented assignment, tuples, the
``math`` module, builtins, non-differentiable operations and ``stop_gradient``."""

import math

import numpy as np

from s2s_ad import stop_gradient

from . import away, case, fl


def poly(x):
    return 3.0 * x**3 - 2.0 * x**2 + x - 7.0


def rational(x, y):
    return (x * y + 1.0) / (x - y) ** 2


def unary_minus(x):
    return -x * -(x - 2.0) + (-x) ** 3


def pow_int_exponent(x):
    return x**4 + x**-2


def pow_float_exponent(x):
    return x**2.5 - x**0.5


def pow_variable_exponent(x, y):
    return x**y + y**x


def pow_constant_base(x):
    return 2.0**x + 0.5 ** (x * x)


def augmented_assignment(x):
    y = x
    y += 2.0 * x
    y *= x
    y -= 1.0
    y /= 3.0 + x * x
    y **= 2
    return y


def augmented_with_other(x, y):
    acc = 1.0
    acc *= x
    acc += y * y
    acc /= x + y
    acc -= x * y
    return acc


def tuple_unpack_swap(x, y):
    a, b = x, y
    a, b = b * a, a + b
    return a * b


def tuple_index_and_unpack(x):
    t = (x, x * x, 3.0)
    p, q, r = t
    return p * q + r * t[1] - t[0] ** 3


def math_exp_log(x):
    return math.exp(0.5 * x) + math.log(x) * x


def math_trig(x):
    return math.sin(x) * math.cos(2.0 * x) + math.tan(0.3 * x)


def math_inverse_trig(x):
    return math.asin(x) + math.acos(0.5 * x) + math.atan(3.0 * x)


def math_hyperbolic(x):
    return math.tanh(x) + math.sinh(0.5 * x) - math.cosh(0.3 * x)


def math_roots_and_powers(x):
    return math.sqrt(x) + math.pow(x, 1.5) + math.log1p(x) + math.expm1(0.2 * x)


def math_atan2_hypot(x, y):
    return math.atan2(y, x) + math.hypot(x, y)


def math_log_base_argument(x):
    return math.log(x, 2.0) * x


def math_log10_log2(x):
    return math.log10(x) + math.log2(x) * x


def math_fabs(x):
    return math.fabs(x) * x + math.fabs(x - 5.0)


def builtin_abs_pow(x):
    return abs(x) ** 1.5 + pow(x, 3) + pow(abs(x), 0.5)


def builtin_min_max(x, y):
    return max(x, y) * 2.0 + min(x, y) - max(x * x, 0.25)


def builtin_min_max_three_args(x, y):
    return min(x, y, 10.0) + max(x, 0.5 * y, -3.0) * 2.0


def builtin_float(x):
    return float(x) * x + float(3) * float(x * x)


def builtin_sum(x):
    return sum([x, x * x, 2.0]) + sum((x, 1.0), 2.0 * x)


def nondiff_round_floor(x):
    return x * round(x) + math.floor(x) * x + math.ceil(x) + np.round(x) * np.floor(x)


def nondiff_comparisons(x):
    return x * (x > 1.0) + 2.0 * x * float(x < 0.5) + (x == 3.0) * x


def nondiff_int_cast(x):
    return x * int(x) + x * math.trunc(x)


def stop_gradient_scalar(x):
    return x * stop_gradient(x * x) + stop_gradient(x)


def numpy_scalar_math(x):
    return np.exp(x) * np.sin(x) + np.sqrt(x) - np.log(x)


def chained_comparison_and_or(x, y):
    if 0.0 < x < 1.0 and y > 0.0 or x > 2.0:
        r = x * y + x**2
    elif not y > -1.0:
        r = x - y**3
    else:
        r = x / (1.0 + y * y)
    return r


def pow_builtin_both_differentiable(x, y):
    return pow(x, y) + pow(y, 2)


def powers_at_zero(x):
    return x**2 + x**3 + pow(x, 2) + math.pow(x, 2.0)


def underscore_names(x):
    _ = x**2
    __ = _ * 3.0
    return __ + _ * x


def numpy_float32_scalar(x):
    return x * x * np.float32(3.0) + np.sin(x)


def math_erf_degrees_inverse_hyperbolic(x):
    return (
        math.erf(x)
        + math.erfc(0.5 * x)
        + math.degrees(x) * 0.01
        + math.radians(x)
        + math.asinh(x)
        + math.acosh(x + 1.5)
        + math.atanh(x / 3.0)
        + math.cbrt(x)
        + math.exp2(x)
    )


def math_gamma_lgamma(x):
    return math.gamma(x) + math.lgamma(x)


def math_copysign_fmod(x):
    return math.copysign(x, -1.0) + math.fmod(x, 0.7)


def math_prod_dist(x):
    return math.prod([x, x, 2.0]) + math.dist([x, 1.0], [0.0, x * x])


CASES = [
    case(poly, fl(-2.0, 2.0), n=3),
    case(rational, fl(1.5, 3.0), fl(-1.0, 0.5), wrt=(0, 1), n=3),
    case(unary_minus, fl(-2.0, 2.0)),
    case(pow_int_exponent, away(0.5, 2.0)),
    case(pow_float_exponent, fl(0.3, 3.0)),
    case(pow_variable_exponent, fl(0.5, 2.0), fl(0.5, 2.0), wrt=(0, 1)),
    case(pow_constant_base, fl(-1.5, 1.5)),
    case(augmented_assignment, fl(-2.0, 2.0), n=3),
    case(augmented_with_other, fl(0.5, 2.0), fl(0.5, 2.0), wrt=(0, 1)),
    case(tuple_unpack_swap, fl(-2.0, 2.0), fl(-2.0, 2.0), wrt=(0, 1)),
    case(tuple_index_and_unpack, fl(-2.0, 2.0)),
    case(math_exp_log, fl(0.2, 3.0), n=3),
    case(math_trig, fl(-2.0, 2.0), n=3),
    case(math_inverse_trig, fl(-0.9, 0.9), n=3),
    case(math_hyperbolic, fl(-2.0, 2.0)),
    case(math_roots_and_powers, fl(0.2, 3.0)),
    case(math_atan2_hypot, fl(0.3, 2.0), away(0.3, 2.0), wrt=(0, 1), n=3),
    case(math_log_base_argument, fl(0.2, 5.0)),
    case(math_log10_log2, fl(0.2, 5.0)),
    case(math_fabs, away(0.3, 2.0), n=3),
    case(builtin_abs_pow, away(0.3, 2.0), n=3),
    case(
        builtin_min_max,
        wrt=(0, 1),
        points={"x_big": (2.0, -1.0), "y_big": (0.3, 1.7), "both_small": (0.1, -0.2)},
    ),
    case(
        builtin_min_max_three_args,
        wrt=(0, 1),
        points={"x_wins": (-1.0, 1.0), "y_wins": (2.0, -1.0), "const_wins": (12.0, 11.0)},
    ),
    case(builtin_float, fl(-2.0, 2.0)),
    case(builtin_sum, fl(-2.0, 2.0)),
    case(nondiff_round_floor, points={"a": (1.3,), "b": (-2.2,), "c": (0.6,)}),
    case(nondiff_comparisons, points={"lt": (0.2,), "mid": (0.8,), "gt": (2.5,)}),
    case(nondiff_int_cast, points={"pos": (2.7,), "neg": (-1.4,)}),
    case(stop_gradient_scalar, fl(-2.0, 2.0), expected=lambda x: x * x),
    case(numpy_scalar_math, fl(0.2, 2.0)),
    case(
        chained_comparison_and_or,
        wrt=(0, 1),
        points={"and": (0.5, 0.7), "or": (2.5, -2.0), "not": (1.5, -1.5), "else": (1.5, 0.2)},
    ),
    case(pow_builtin_both_differentiable, fl(0.5, 2.0), fl(0.5, 2.0), wrt=(0, 1)),
    case(powers_at_zero, points={"zero": (0.0,), "one": (1.0,)}),
    case(underscore_names, fl(-2.0, 2.0)),
    # float32 input: the gradient must be a float32 scalar; float32 arithmetic limits accuracy.
    case(
        numpy_float32_scalar,
        lambda rng: np.float32(rng.uniform(-2, 2)),
        name="numpy_float32_scalar",
        rtol=1e-4,
        atol=1e-5,
    ),
    case(math_erf_degrees_inverse_hyperbolic, fl(0.3, 1.4)),
    case(math_gamma_lgamma, fl(0.5, 3.0)),
    case(math_copysign_fmod, fl(0.8, 1.3)),
    case(math_prod_dist, fl(0.5, 2.0)),
]
