"""Elementwise NumPy on vectors, ``**`` with scalar and array exponents, broadcasting,
non-differentiable array operations, ``stop_gradient`` on arrays, float32 inputs."""

import numpy as np

from s2s_ad import stop_gradient

from . import away, case, const, fl, normal, pair_apart, uni


def np_exp_log(x):
    return np.sum(np.exp(0.3 * x) * np.log(x))


def np_log1p_expm1(x):
    return np.sum(np.log1p(x) + np.expm1(x) ** 2)


def np_sqrt(x):
    return np.sum(np.sqrt(x) * x + 1.0 / np.sqrt(x + 1.0))


def np_trig(x):
    return np.sum(np.sin(x) * np.cos(x) + np.tan(0.5 * x))


def np_hyperbolic(x):
    return np.sum(np.tanh(x) + np.sinh(x) * np.cosh(0.5 * x))


def np_inverse_trig(x):
    return np.sum(np.arcsin(x) + np.arccos(0.5 * x) + np.arctan(2.0 * x))


def np_arctan2(y, x):
    return np.sum(np.arctan2(y, x) ** 2 + np.arctan2(x, 2.0))


def np_power_arrays(x, y):
    return np.sum(np.power(x, y) + np.power(2.0, y))


def np_power_square(x):
    return np.sum(np.power(x, 3) + np.square(x) * np.square(np.sin(x)))


def np_abs_sign(x):
    return np.sum(np.abs(x) * x + np.sign(x) * x**2 + np.abs(x) ** 0.5)


def np_maximum_minimum(x, y):
    return np.sum(np.maximum(x, y) * 2.0 + np.minimum(x, y) ** 2)


def np_maximum_scalar(x):
    return np.sum(np.maximum(x, 0.0) * x + np.minimum(0.5, x))


def np_where_scalar_branches(x):
    return np.sum(np.where(x > 0, x**2, -3.0 * x))


def np_where_two_inputs(x, y):
    return np.sum(np.where(x > y, x * y, y**2 + x))


def np_clip(x):
    return np.sum(np.clip(x, -0.5, 0.5) * x + np.clip(2.0 * x, -1.0, None))


def np_logaddexp(x, y):
    return np.sum(np.logaddexp(x, y) * np.logaddexp(x, 0.0))


def pow_scalar_exponent(x):
    return np.sum(x**3 - x**0.5 + x**-1)


def pow_array_exponent(x, y):
    return np.sum(x**y)


def pow_array_exponent_scalar_base(y):
    return np.sum(3.0**y)


def unary_minus_vector(x):
    return np.sum(-x * -np.exp(-x))


def augmented_vector(x):
    y = x * 1.0
    y += x**2
    y *= 2.0
    y -= np.sin(x)
    y /= 1.5 + x**2
    y **= 2
    return np.sum(y)


def broadcast_scalar_add(x, s):
    return np.sum((x + s) ** 2 * (s - x))


def broadcast_scaled_scalar(x, s):
    return np.sum(x + 2.0 * s)


def broadcast_column_row(a, b):
    return np.sum(np.sin(a * b) + a / (1.5 + b))


def broadcast_divide_scalar(x, s):
    return np.sum(x / s + s / x)


def broadcast_power_scalar(x, s):
    return np.sum(x**s + s**x)


def broadcast_matrix_row(x, row):
    return np.sum((x - row) ** 2 * row)


def broadcast_zero_d(x, s):
    return np.sum(x * s**2 + s)


def broadcast_numpy_scalar(x, s):
    return np.sum(x * s) * s


def sigmoid_softplus(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)) + np.log1p(np.exp(x)))


def nondiff_array_ops(x):
    return np.sum(x * np.round(x) + np.floor(x) * x + np.ceil(x) * x**2) + x[np.argmax(x)]


def nondiff_comparisons_vec(x):
    return np.sum(x * (x > 0.0)) + np.sum((x < 0.0) * x**2) + np.sum(np.sign(x))


def nondiff_integer_cast(x):
    return np.sum(x * x.astype(np.int64)) + int(x[0]) * x[1]


def stop_gradient_vector(x):
    return np.sum(x * stop_gradient(x))


def logsumexp_stable(x):
    m = stop_gradient(np.max(x))
    return m + np.log(np.sum(np.exp(x - m)))


def float32_elementwise(x):
    return np.sum(np.sin(x) * x + np.exp(-x * x))


def powers_at_zero_vec(x):
    return np.sum(x**2 + np.power(x, 3) + np.square(x) + x * x + np.power(x, 2.0))


def power_negative_base_integer_exponent(x, y):
    return np.sum(x**y + np.power(x, y))


def maximum_scalar_broadcast(s, x):
    return np.sum(np.maximum(s, x) ** 2) + np.sum(np.minimum(x, s))


def clip_differentiable_bounds(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) ** 2)


def where_condition_from_other(x, c):
    return np.sum(np.where(c > 0.0, x**2, -x) + np.where(c, 1.0, x))


def arctan2_broadcast(y, x):
    return np.sum(np.arctan2(y, x))


def float_of_array(x):
    return float(np.sum(x**2)) * x[0] + float(x[1]) ** 2


def builtin_abs_on_array(x):
    return np.sum(abs(x) * x + abs(x - 3.0))


def float32_mixed_with_float64(x, w):
    return np.sum(np.tanh(x * w) + x**2)


def int_array_not_differentiated(x, k):
    return np.sum(x * k + x**k)


CASES = [
    case(np_exp_log, uni(0.2, 3.0, 5), n=3),
    case(np_log1p_expm1, uni(-0.5, 1.5, 5)),
    case(np_sqrt, uni(0.2, 4.0, 5)),
    case(np_trig, uni(-1.2, 1.2, 6)),
    case(np_hyperbolic, normal(6)),
    case(np_inverse_trig, uni(-0.9, 0.9, 6)),
    case(np_arctan2, normal(5), uni(0.3, 2.0, 5), wrt=(0, 1)),
    case(np_power_arrays, uni(0.3, 2.0, 4), uni(-1.5, 2.5, 4), wrt=(0, 1)),
    case(np_power_square, normal(5)),
    case(np_abs_sign, away(0.2, 2.0, 6), n=3),
    case(np_maximum_minimum, draw=pair_apart(6), wrt=(0, 1), n=3),
    case(np_maximum_scalar, away(0.2, 2.0, 6)),
    case(np_where_scalar_branches, away(0.2, 2.0, 6), n=3),
    case(np_where_two_inputs, draw=pair_apart(6), wrt=(0, 1), n=3),
    case(np_clip, points={"mixed": (np.array([-1.2, -0.3, 0.1, 0.45, 0.8, -0.7]),)}),
    case(np_logaddexp, normal(5), normal(5), wrt=(0, 1)),
    case(pow_scalar_exponent, uni(0.3, 2.0, 5)),
    case(pow_array_exponent, uni(0.3, 2.0, 5), uni(-2.0, 3.0, 5), wrt=(0, 1)),
    case(pow_array_exponent_scalar_base, normal(5)),
    case(unary_minus_vector, normal(5)),
    case(augmented_vector, normal(5)),
    case(broadcast_scalar_add, normal(5), fl(-1.0, 1.0), wrt=(0, 1)),
    case(broadcast_scaled_scalar, normal(3), fl(-1.0, 1.0), wrt=(0, 1)),
    case(
        broadcast_scaled_scalar,
        normal(3),
        lambda rng: np.float64(rng.normal()),
        wrt=(0, 1),
        name="broadcast_scaled_numpy_scalar",
    ),
    case(broadcast_column_row, normal(3, 1), uni(0.0, 1.0, 1, 4), wrt=(0, 1)),
    case(broadcast_divide_scalar, uni(0.5, 2.0, 2, 3), fl(0.5, 2.0), wrt=(0, 1)),
    case(broadcast_power_scalar, uni(0.5, 2.0, 4), fl(0.5, 2.5), wrt=(0, 1)),
    case(broadcast_matrix_row, normal(3, 4), normal(4), wrt=(0, 1)),
    case(broadcast_zero_d, normal(4), lambda rng: np.array(rng.normal()), wrt=(0, 1)),
    case(broadcast_numpy_scalar, normal(4), lambda rng: np.float64(rng.normal()), wrt=(0, 1)),
    case(sigmoid_softplus, normal(6)),
    case(
        nondiff_array_ops,
        points={"a": (np.array([0.3, -1.2, 2.7, 1.4]),), "b": (np.array([-0.6, 0.2, 1.1]),)},
    ),
    case(nondiff_comparisons_vec, away(0.2, 2.0, 6)),
    case(nondiff_integer_cast, points={"a": (np.array([2.3, -1.6, 0.4]),)}),
    case(stop_gradient_vector, normal(5), expected=lambda x: x),
    case(logsumexp_stable, normal(6), n=3),
    # float32 inputs: the gradient must be float32. Finite differences run in float64 on the
    # promoted inputs; the float32 computation itself is only good to ~1e-6 relative.
    case(float32_elementwise, normal(6, dtype=np.float32), rtol=1e-4, atol=1e-5),
    case(
        broadcast_scalar_add,
        normal(4, dtype=np.float32),
        const(np.float32(0.5)),
        name="broadcast_scalar_add_float32",
        rtol=1e-4,
        atol=1e-5,
    ),
    case(
        powers_at_zero_vec,
        points={"zeros": (np.zeros(3),), "mixed": (np.array([0.0, 1.5, -2.0]),)},
    ),
    case(
        power_negative_base_integer_exponent,
        normal(3),
        const(np.array([2.0, 3.0, 4.0])),
        points={"negative": (np.array([-1.5, -0.5, -2.0]), np.array([2.0, 3.0, 4.0]))},
    ),
    case(maximum_scalar_broadcast, fl(-0.1, 0.1), away(0.3, 2.0, 5), wrt=(0, 1), n=3),
    case(
        clip_differentiable_bounds,
        wrt=(0, 1, 2),
        points={
            "scalars": (np.array([-2.0, -0.2, 0.3, 1.9]), -1.0, 1.0),
            "arrays": (
                np.array([-2.0, -0.2, 0.3, 1.9]),
                np.array([-1.0, -1.0, 0.5, 0.0]),
                np.array([1.0, 0.1, 1.0, 1.0]),
            ),
        },
    ),
    case(
        where_condition_from_other,
        normal(4),
        const(np.array([1.0, -1.0, 0.0, 2.0])),
    ),
    case(arctan2_broadcast, normal(3, 1), uni(0.5, 2.0, 4), wrt=(0, 1)),
    case(float_of_array, normal(3)),
    case(builtin_abs_on_array, away(0.2, 2.0, 5)),
    # float32 x with float64 weights: the result is float64, the gradient must be float32.
    case(
        float32_mixed_with_float64,
        normal(4, dtype=np.float32),
        normal(4),
        rtol=1e-4,
        atol=1e-5,
    ),
    case(int_array_not_differentiated, uni(0.5, 2.0, 3), const(np.array([1, 2, 3]))),
]
