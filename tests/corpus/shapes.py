"""Shape operations (reshape ravel transpose expand_dims squeeze concatenate stack
broadcast_to tile repeat), constructors (zeros ones zeros_like ones_like full eye arange
linspace array asarray) and array methods/attributes (``x.sum()``, ``x.T``, ``x.reshape``)."""

import numpy as np

from . import case, fl, normal


def reshape_function(x):
    w = np.reshape(x, (3, 4))
    return np.sum(w[0] * w[2]) + np.sum(w**3)


def reshape_method(x):
    a = x.reshape(2, 6)
    b = x.reshape((4, -1))
    return np.sum(a[1] ** 2) + np.sum(b[:, 0] * b[:, 2])


def ravel_weighted(x):
    return np.sum(np.ravel(x) * np.linspace(0.0, 1.0, x.size)) + np.sum(x.ravel() ** 3)


def transpose_axes(x):
    t = np.transpose(x, (2, 0, 1))
    return np.sum(t[0] * t[1]) + np.sum(np.transpose(x, axes=(1, 0, 2))[0] ** 2)


def transpose_attribute(a):
    return np.sum(a.T @ a * a[0]) + np.sum(a.transpose() ** 3) + np.sum(a.T[1] * a[:, 0])


def expand_dims_squeeze(x):
    y = np.expand_dims(x, axis=1)
    z = y * x
    return np.sum(np.squeeze(y) ** 2) + np.sum(z**2) + np.sum(np.squeeze(z[:1], axis=0))


def newaxis_index(x):
    return np.sum(x[:, None] * x[None, :] * np.sin(x)[np.newaxis])


def concatenate_vectors(x, y):
    return np.sum(np.concatenate([x, y, x * y]) ** 2 * np.arange(9.0))


def concatenate_axis1(a, b):
    c = np.concatenate((a, b), axis=1)
    return np.sum(c @ c.T)


def stack_axes(x, y):
    s = np.stack([x, y], axis=1)
    t = np.stack((x * y, y))
    return np.sum((s @ np.array([1.0, -2.0])) ** 2) + np.sum(t[0] * t[1])


def broadcast_to_weighted(x):
    w = np.arange(12.0).reshape(4, 3)
    return np.sum(np.broadcast_to(x, (4, 3)) * w) + np.sum(np.broadcast_to(x[0], (2, 2)) ** 2)


def tile_reps(x):
    return np.sum(np.tile(x, 3) * np.arange(9.0)) + np.sum(np.tile(x, (2, 2)) ** 2)


def repeat_axis(x, a):
    return np.sum(np.repeat(x, 2) ** 2 * np.arange(8.0)) + np.sum(np.repeat(a, 3, axis=0) * a[0])


def zeros_ones(x):
    z = np.zeros(3) + x
    o = np.ones((3,)) * 2.0
    return np.sum(z * o * x) + np.sum(np.ones((2, 3)) @ x)


def zeros_like_ones_like(x):
    z = np.zeros_like(x)
    z = z + x**2
    return np.sum(z * np.ones_like(x) * 3.0 + np.ones_like(x))


def full_with_differentiable_value(x):
    f = np.full(3, x[0])
    g = np.full((2, 3), 2.5)
    return np.sum(f * x) + np.sum(g @ x) + np.sum(np.full((2, 2), x[1] * x[2]) ** 2)


def full_like_with_differentiable_value(x):
    return np.sum(np.full_like(x, x[1]) ** 2 * x)


def eye_matrix(x):
    a = np.eye(3) * x[0] + np.outer(x, x)
    return np.sum(np.eye(3) @ x * np.full(3, 2.5)) + np.trace(a)


def arange_linspace(x):
    return np.sum(x * np.arange(5.0) + x**2 * np.linspace(0, 1, 5) + np.arange(1, 6) * x**3)


def array_from_scalars(x, y):
    v = np.array([x, y, x * y])
    return np.sum(v**2) + v @ np.array([1.0, 2.0, 3.0])


def array_from_elements(x):
    v = np.array([x[0] * 2.0, x[1], x[2] ** 2])
    m = np.array([[x[0], x[1]], [x[2], 1.0]])
    return np.sum(v * v) + np.linalg.det(m)


def asarray_from_list(xs):
    a = np.asarray(xs)
    b = np.asarray(a, dtype=float)
    return np.sum(a**2) * np.sum(b)


def array_methods(x):
    return x.sum() * x.T.sum() + x.mean(axis=0) @ x.mean(axis=0) + x.reshape(-1)[3] ** 2


def method_chain(x):
    return x.reshape(3, 2).T.sum(axis=0).mean() + x.copy().sum() ** 2


def astype_float(x):
    y = x.astype(np.float64)
    return np.sum(y**2) + np.sum(np.float64(2.0) * y)


def size_shape_attributes(x):
    n = x.shape[0]
    m = x.size
    return np.sum(x) / n + np.sum(x**2) / m + x.ndim * np.sum(x)


def squeeze_no_axis(x):
    return np.sum(np.squeeze(x) ** 2 * np.arange(3.0))


def expand_dims_tuple_axis(x):
    return np.sum(np.expand_dims(x, (0, 2)) * np.ones((1, 3, 2)))


def repeat_array_repeats(x):
    return np.sum(np.repeat(x, [1, 2, 3]) ** 2 * np.arange(6.0))


def tile_2d(a):
    return np.sum(np.tile(a, (2, 1)) * np.arange(12.0).reshape(4, 3))


def broadcast_to_leading(x):
    return np.sum(np.broadcast_to(x, (2, 3, 4)) ** 2 * np.arange(24.0).reshape(2, 3, 4))


def stack_negative_axis(x, y):
    return np.sum(np.stack([x, y * 2.0], axis=-1) @ np.array([[1.0], [3.0]]))


def array_of_arrays(x, y):
    m = np.array([x, y, x * y])
    return np.sum(m @ np.array([1.0, -1.0]) ** 2)


def array_with_dtype(x):
    v = np.array([x[0], 2.0, x[1] * x[2]], dtype=float)
    return np.sum(v**2) + np.sum(np.asarray(x, dtype=np.float64) * 3.0)


def linspace_differentiable_endpoints(a, b):
    return np.sum(np.linspace(a, b, 5) ** 2)


def zeros_then_slice_assign(x):
    z = np.zeros((2, 3))
    z[0] = x
    z[1, :2] = x[:2] ** 2
    return np.sum(z @ z.T)


def eye_offset(x):
    return np.sum(np.eye(3, k=1) @ x * x) + np.sum(np.eye(2, 3) @ x)


def more_array_methods(x):
    return (
        x.max(axis=0).sum()
        + x.min()
        + x.prod(axis=1).sum()
        + x.var()
        + x.std(axis=0).sum()
        + x.flatten()[2] ** 2
        + x.ravel().dot(x.ravel())
        + x.transpose(1, 0)[0].sum() * 2.0
        + x.clip(-0.5, 0.5).sum()
        + x.reshape(x.shape[0], -1).squeeze().sum(axis=-1, keepdims=True).sum()
    )


def broadcast_size_one_axes(x, s, t):
    return np.sum((x * s + t) ** 2)


def negative_axes(x):
    return (
        np.sum(np.sum(x, axis=-1, keepdims=True) * x)
        + np.sum(np.mean(x, axis=-2) ** 2)
        + np.sum(np.transpose(x, (-1, 0, 1))[1])
        + np.sum(np.concatenate([x, x**2], axis=-1) ** 2)
        + np.sum(np.squeeze(x[:1, :, :1], axis=(0, 2)))
    )


CASES = [
    case(reshape_function, normal(12)),
    case(reshape_method, normal(12)),
    case(ravel_weighted, normal(3, 4)),
    case(transpose_axes, normal(2, 3, 4)),
    case(transpose_attribute, normal(3, 2)),
    case(expand_dims_squeeze, normal(4)),
    case(newaxis_index, normal(4)),
    case(concatenate_vectors, normal(3), normal(3), wrt=(0, 1)),
    case(concatenate_axis1, normal(3, 2), normal(3, 4), wrt=(0, 1)),
    case(stack_axes, normal(4), normal(4), wrt=(0, 1)),
    case(broadcast_to_weighted, normal(3)),
    case(tile_reps, normal(3)),
    case(repeat_axis, normal(4), normal(2, 3), wrt=(0, 1)),
    case(zeros_ones, normal(3)),
    case(zeros_like_ones_like, normal(2, 3)),
    case(full_with_differentiable_value, normal(3)),
    case(full_like_with_differentiable_value, normal(3)),
    case(eye_matrix, normal(3)),
    case(arange_linspace, normal(5)),
    case(array_from_scalars, fl(-2.0, 2.0), fl(-2.0, 2.0), wrt=(0, 1)),
    case(array_from_elements, normal(3)),
    case(asarray_from_list, lambda rng: [float(v) for v in rng.normal(size=4)]),
    case(array_methods, normal(4, 3)),
    case(method_chain, normal(6)),
    case(astype_float, normal(5)),
    case(size_shape_attributes, normal(4)),
    case(squeeze_no_axis, normal(1, 3, 1)),
    case(expand_dims_tuple_axis, normal(3)),
    case(repeat_array_repeats, normal(3)),
    case(tile_2d, normal(2, 3)),
    case(broadcast_to_leading, normal(3, 1)),
    case(stack_negative_axis, normal(3), normal(3), wrt=(0, 1)),
    case(array_of_arrays, normal(2), normal(2), wrt=(0, 1)),
    case(array_with_dtype, normal(3)),
    case(linspace_differentiable_endpoints, fl(-1.0, 1.0), fl(1.0, 2.0), wrt=(0, 1)),
    case(zeros_then_slice_assign, normal(3)),
    case(eye_offset, normal(3)),
    case(more_array_methods, normal(3, 4)),
    case(broadcast_size_one_axes, normal(2, 3), normal(1), normal(1, 1), wrt=(0, 1, 2)),
    case(negative_axes, normal(2, 3, 4)),
]
