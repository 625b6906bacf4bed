"""Operators and NumPy functions beyond SPEC's list that user code commonly reaches for
(``//`` and ``%``, ``&``/``|`` masks, ``math.fsum``, cumsum, sort, diag, flip, roll, stacks,
swapaxes, triu, cbrt, fmax, ``...`` indexing, function forms of operators)."""

import math

import numpy as np

from . import case, const, fl, normal, uni


def floordiv_and_mod(x):
    return np.sum(x // 1.0 * x + x % 1.0 * x)


def scalar_floordiv_and_mod(s):
    return s % 1.0 * s + s // 0.5


def where_with_mask_operators(x):
    inside = (x > 0.0) & (x < 1.0)
    outside = (x < 0.0) | (x > 2.0)
    return np.sum(np.where(inside, x**2, 0.0) + np.where(outside, x, 1.0))


def math_fsum_and_constants(s):
    return math.fsum([s, s * s]) + math.pi * s + math.e


def builtin_sum_of_arrays(x):
    return np.sum(sum([x, x**2, np.sin(x)]))


def builtin_max_min_of_list(s):
    return max([s, s * s, 0.5]) + min([s, 2.0])


def builtin_min_max_over_array(x):
    return min(x) + max(x) * 2.0


def builtin_round_ndigits(s):
    return round(s, 2) * s


def ellipsis_and_none_index(a):
    return np.sum(a[..., 0] ** 2) + np.sum(a[None] * 2.0) + np.sum(a[:, None, :] ** 3)


def negative_step_write(x):
    y = np.zeros(4)
    y[::-1] = x * 2.0
    return np.sum(y * np.arange(4.0))


def operator_functions(x, y):
    return np.sum(
        np.add(x, y) * np.multiply(x, y)
        - np.subtract(x, y) / np.divide(x, 2.0)
        + np.negative(y)
        + np.true_divide(y, 3.0)
    )


def int_index_argument(x, idx):
    return np.sum(x[idx] ** 2)


def cumsum_sort(x):
    return np.sum(np.cumsum(x) ** 2) + np.sum(np.sort(x) * np.arange(5.0))


def diag_flip_roll(a):
    v = np.diag(a)
    rolled = np.sum(np.flip(v) * v) + np.sum(np.roll(v, 1) * v)
    return np.sum(v**2) + np.sum(np.diag(v) * a) + rolled


def hstack_vstack(x):
    return np.sum(np.hstack([x, x**2]) ** 2) + np.sum(np.vstack([x, 2.0 * x]) ** 3)


def swapaxes_moveaxis(a):
    return np.sum(np.swapaxes(a, 0, 1)[0] * 2.0) + np.sum(np.moveaxis(a, 0, -1)[0] ** 2)


def triu_tril(a):
    return np.sum(np.triu(a) ** 2 + np.tril(a, -1))


def atleast_nd(s):
    return np.sum(np.atleast_1d(s) ** 2) + np.sum(np.atleast_2d(s) * 3.0)


def more_elementwise(x):
    return np.sum(
        np.cbrt(x)
        + np.exp2(x)
        + np.log2(x)
        + np.log10(x)
        + np.reciprocal(x)
        + np.hypot(x, 1.0)
        + np.arcsinh(x)
        + np.arccosh(x + 1.0)
        + np.arctanh(x / 4.0)
        + np.deg2rad(x)
        + np.degrees(x)
    )


def fmax_fmin(x, y):
    return np.sum(np.fmax(x, y) * 2.0 + np.fmin(x, y) ** 2)


def vdot_and_norm_ord2(x, y):
    return np.vdot(x, y) + np.linalg.norm(x, ord=2)


def scalar_parameter_becomes_array(a, x):
    a = np.ones(3) * a
    return np.sum(a * x)


def vector_parameter_reshaped(x):
    x = x.reshape(2, 2)
    return np.sum(x[0] * x[1])


def vector_elements_in_loop(x, a):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i] * a + (y[i - 1] if i > 0 else 0.0)
    return np.sum(y * y)


CASES = [
    case(scalar_parameter_becomes_array, fl(-1.0, 1.0), normal(3)),
    case(vector_parameter_reshaped, normal(4)),
    case(vector_elements_in_loop, normal(5), fl(0.5, 0.9), wrt=(0, 1)),
    case(floordiv_and_mod, uni(0.1, 0.9, 4), points={"shifted": (np.array([1.3, -0.6, 2.2]),)}),
    case(scalar_floordiv_and_mod, points={"a": (2.3,), "b": (-0.7,)}),
    case(where_with_mask_operators, points={"a": (np.array([0.3, -1.2, 2.6, 1.4, 0.8]),)}),
    case(math_fsum_and_constants, fl(-2.0, 2.0)),
    case(builtin_sum_of_arrays, normal(4)),
    case(builtin_max_min_of_list, points={"a": (1.3,), "b": (0.2,), "c": (-1.5,)}),
    case(builtin_min_max_over_array, normal(5)),
    case(builtin_round_ndigits, points={"a": (1.2345,)}),
    case(ellipsis_and_none_index, normal(2, 3)),
    case(negative_step_write, normal(4)),
    case(operator_functions, uni(0.5, 2.0, 4), normal(4), wrt=(0, 1)),
    case(int_index_argument, normal(4), const(np.array([0, 3, 3, 1]))),
    case(cumsum_sort, normal(5)),
    case(diag_flip_roll, normal(3, 3)),
    case(hstack_vstack, normal(3)),
    case(swapaxes_moveaxis, normal(2, 3, 4)),
    case(triu_tril, normal(3, 3)),
    case(atleast_nd, fl(-2.0, 2.0)),
    case(more_elementwise, uni(0.5, 2.0, 4)),
    case(fmax_fmin, draw=lambda rng: _apart(rng), wrt=(0, 1)),
    case(vdot_and_norm_ord2, normal(4), normal(4), wrt=(0, 1)),
]


def _apart(rng):
    x = rng.standard_normal(4)
    return x, x + rng.choice([-1.0, 1.0], size=4) * rng.uniform(0.3, 1.0, size=4)
