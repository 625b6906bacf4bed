"""Reductions with ``axis``/``keepdims``: sum mean prod max min var std linalg.norm
logaddexp, as functions and as array methods, and builtins over arrays."""

import numpy as np

from . import case, normal, uni


def sum_all_and_axis0(x):
    s = np.sum(x, axis=0)
    return np.sum(s**2) + np.sum(x) ** 2


def sum_axis1_keepdims(x):
    s = np.sum(x, axis=1, keepdims=True)
    return np.sum((x - s) ** 2 * x)


def sum_axis_tuple(x):
    s = np.sum(x, axis=(0, 2))
    return np.sum(np.sin(s)) + np.sum(np.sum(x, axis=-1) ** 2)


def mean_axes(x):
    m0 = np.mean(x, axis=0)
    m1 = np.mean(x, axis=1, keepdims=True)
    return np.sum(m0**2) + np.mean(x) * np.sum(m1 * x)


def prod_all(x):
    return np.prod(x)


def prod_axis(x):
    return np.sum(np.prod(x, axis=1) ** 2) + np.sum(np.prod(x, axis=0, keepdims=True) * x)


def max_min_all(x):
    return np.max(x) - 2.0 * np.min(x) + np.amax(x) * np.amin(x)


def max_axis_keepdims(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(np.exp(x - m)) + np.sum(m**2)


def min_axis0(x):
    return np.sum(np.min(x, axis=0) ** 2)


def var_std(x):
    return np.var(x) + np.sum(np.std(x, axis=0)) + np.sum(np.var(x, axis=1, keepdims=True) * x)


def var_std_ddof(x):
    return np.var(x, ddof=1) * np.std(x, ddof=1)


def norm_vector(x):
    return np.linalg.norm(x) + np.linalg.norm(2.0 * x) ** 2


def norm_axis(x):
    return np.sum(np.linalg.norm(x, axis=1)) + np.sum(np.linalg.norm(x, axis=0, keepdims=True) * x)


def norm_matrix_fro(x):
    return np.linalg.norm(x) * np.linalg.norm(x, "fro")


def norm_ord(x):
    return np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf) + np.linalg.norm(x, 3)


def logaddexp_reduce(x):
    return np.logaddexp.reduce(x[0]) + np.sum(np.logaddexp.reduce(x, axis=1))


def method_reductions(x):
    return x.sum() + x.mean(axis=0).sum() * x.max() + x.prod() - x.min(axis=1).sum() + x.std()


def method_sum_keepdims(x):
    return (x * x.sum(axis=1, keepdims=True)).mean()


def builtin_sum_over_array(x):
    return sum(x) * sum(x * x)


def builtin_max_over_elements(x):
    return max(x[0], x[1]) + min(x[2] * 2.0, x[3]) + abs(x[4])


def nested_reductions(x):
    return np.mean(np.sum(x**2, axis=1)) * np.max(np.mean(x, axis=0))


def prod_with_zero(x):
    return np.prod(x) + np.sum(np.prod(x.reshape(2, 2), axis=0))


def tuple_axes(x):
    return (
        np.sum(np.mean(x, axis=(0, 2)) ** 2)
        + np.sum(np.max(x, axis=(0, 1)))
        + np.sum(np.std(x, axis=(0, 1), keepdims=True) * x)
    )


def positional_axis(x):
    return np.sum(np.sum(x, 0) ** 2) + np.sum(np.mean(x, -1) ** 3) + x.sum(0)[1] + x.max(1).sum()


def size_one_output(x):
    return np.sum(x**2, keepdims=True)


def zero_d_array_output(x):
    return np.array(np.sum(x**3))


def min_keepdims(x):
    return np.sum(np.min(x, axis=0, keepdims=True) * x)


CASES = [
    case(sum_all_and_axis0, normal(3, 4)),
    case(sum_axis1_keepdims, normal(3, 4)),
    case(sum_axis_tuple, normal(2, 3, 4)),
    case(mean_axes, normal(3, 4)),
    case(prod_all, uni(0.5, 1.5, 6)),
    case(prod_axis, uni(0.5, 1.5, 3, 4)),
    case(max_min_all, normal(7), n=3),
    case(max_axis_keepdims, normal(3, 5)),
    case(min_axis0, normal(4, 3)),
    case(var_std, normal(4, 3)),
    case(var_std_ddof, normal(6)),
    case(norm_vector, normal(5)),
    case(norm_axis, normal(3, 4)),
    case(norm_matrix_fro, normal(3, 3)),
    case(norm_ord, normal(5)),
    case(logaddexp_reduce, normal(4, 3)),
    case(method_reductions, uni(0.5, 1.5, 3, 4)),
    case(method_sum_keepdims, normal(3, 4)),
    case(builtin_sum_over_array, normal(5)),
    case(
        builtin_max_over_elements,
        points={
            "a": (np.array([0.5, -0.2, 0.3, 1.4, -0.8]),),
            "b": (np.array([-1.0, 0.7, 0.9, -0.1, 0.4]),),
        },
    ),
    case(nested_reductions, normal(3, 4)),
    case(
        prod_with_zero,
        points={
            "one_zero": (np.array([0.0, 1.5, -2.0, 0.7]),),
            "two_zeros": (np.array([0.0, 0.0, 1.3, 0.8]),),
            "no_zero": (np.array([0.9, 1.5, -2.0, 0.7]),),
        },
    ),
    case(tuple_axes, normal(2, 3, 4)),
    case(positional_axis, normal(3, 4)),
    case(size_one_output, normal(2, 3)),
    case(zero_d_array_output, normal(3)),
    case(min_keepdims, normal(3, 4)),
]
