"""Linear algebra: dot matmul @ tensordot einsum outer inner trace transpose
linalg.inv linalg.det linalg.solve, small models, float32 matrices."""

import numpy as np

from . import case, fl, normal, spd, wellcond


def dot_vectors(x, y):
    return np.dot(x, y) * np.dot(x, x)


def dot_matrix_vector(a, x):
    return np.sum(np.tanh(np.dot(a, x)))


def matmul_operator(a, b):
    return np.sum((a @ b) ** 2)


def matmul_function(a, x):
    return np.sum(np.matmul(a, x) * x) + np.sum(np.matmul(x, a))


def matmul_vector_matrix_vector(x, a):
    return x @ a @ x


def matmul_batched(a, b):
    return np.sum(np.sin(a @ b))


def matmul_matrix_matrix_chain(a, b, c):
    return np.sum(a @ b @ c) + np.trace(a @ c.T)


def tensordot_full(a, b):
    return np.sum(np.tensordot(a, b, axes=2) ** 2)


def tensordot_axes_lists(a, b):
    return np.sum(np.tanh(np.tensordot(a, b, axes=([1, 0], [0, 2]))))


def tensordot_int_axes(a, b):
    return np.sum(np.tensordot(a, b, 1) ** 2)


def einsum_matmul(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) ** 2)


def einsum_trace_and_total(a):
    return np.einsum("ii", a) ** 2 + np.einsum("ij->", a * a)


def einsum_batched(a, b):
    return np.sum(np.cos(np.einsum("bij,bjk->bik", a, b)))


def einsum_implicit_dot(x, y):
    return np.einsum("i,i", x, y) + np.sum(np.einsum("i,j", x, y) ** 2)


def outer_inner(x, y):
    return np.sum(np.outer(x, y) ** 2) + np.inner(x, y) * np.inner(x, x)


def trace_transpose(a):
    return np.trace(a @ a.T) + np.trace(np.transpose(a) * 2.0) + np.sum(np.transpose(a)[0] ** 3)


def linalg_inv(a):
    return np.sum(np.linalg.inv(a)) + np.sum(np.linalg.inv(a) ** 2)


def linalg_det(a):
    return np.linalg.det(a)


def linalg_logdet(a):
    return np.log(np.linalg.det(a))


def linalg_solve_vector(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def linalg_solve_matrix(a, b):
    return np.sum(np.sin(np.linalg.solve(a, b)))


def least_squares(w, x, y):
    return np.mean((x @ w - y) ** 2)


def mlp(w1, b1, w2, x):
    h = np.tanh(w1 @ x + b1)
    return np.sum(w2 @ h) + 0.1 * np.sum(w1**2)


def softmax_cross_entropy(w, x):
    logits = x @ w
    logits = logits - np.max(logits, axis=1, keepdims=True)
    p = np.exp(logits) / np.sum(np.exp(logits), axis=1, keepdims=True)
    return -np.mean(np.log(p[:, 0]))


def matrix_methods(a, x):
    return a.dot(x).sum() + x.dot(x) + a.T.dot(a).trace()


def float32_matmul(w, x):
    return np.sum(np.tanh(w @ x))


def matmul_broadcast_batch(a, b):
    return np.sum(np.tanh(a @ b))


def matmul_1d_2d(x, a):
    return np.sum((x @ a) ** 2) + np.sum(a.T @ x)


def inv_batched(a):
    return np.sum(np.linalg.inv(a) ** 2)


def det_batched(a):
    return np.sum(np.linalg.det(a) ** 2)


def solve_matrix_rhs_batched(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def einsum_ellipsis(a, b):
    return np.sum(np.einsum("...ij,...jk->...ik", a, b) ** 2)


def tensordot_axes_zero(x, y):
    return np.sum(np.sin(np.tensordot(x, y, axes=0)))


def dot_with_scalar_and_2d(s, a, b):
    return np.sum(np.dot(s, a)) + np.sum(np.dot(a, b) ** 2)


def outer_inner_2d(a, b):
    return np.sum(np.outer(a, b) ** 2) + np.sum(np.inner(a, b) ** 2)


def trace_offsets(a):
    return np.trace(a, 1) * np.trace(a, offset=-1) + np.trace(a[None], axis1=1, axis2=2)[0]


def transpose_3d_default(x):
    return np.sum(np.transpose(x)[0] * np.arange(6.0).reshape(3, 2))


def einsum_diagonal_and_rowwise(a, b):
    return np.sum(np.einsum("ii->i", a) ** 2) + np.sum(np.einsum("ij,ij->i", a, b) ** 2)


def tensordot_single_axis_lists(a, b):
    return np.sum(np.tensordot(a, b, axes=([0], [1])) ** 2)


CASES = [
    case(dot_vectors, normal(5), normal(5), wrt=(0, 1)),
    case(dot_matrix_vector, normal(3, 4), normal(4), wrt=(0, 1)),
    case(matmul_operator, normal(3, 4), normal(4, 2), wrt=(0, 1)),
    case(matmul_function, normal(4, 4), normal(4), wrt=(0, 1)),
    case(matmul_vector_matrix_vector, normal(4), normal(4, 4), wrt=(0, 1)),
    case(matmul_batched, normal(2, 3, 4), normal(4, 2), wrt=(0, 1)),
    case(matmul_matrix_matrix_chain, normal(3, 3), normal(3, 3), normal(3, 3), wrt=(0, 1, 2)),
    case(tensordot_full, normal(2, 3, 4), normal(3, 4, 2), wrt=(0, 1)),
    case(tensordot_axes_lists, normal(3, 2, 4), normal(2, 5, 3), wrt=(0, 1)),
    case(tensordot_int_axes, normal(2, 3), normal(3, 4), wrt=(0, 1)),
    case(einsum_matmul, normal(3, 4), normal(4, 2), wrt=(0, 1)),
    case(einsum_trace_and_total, normal(3, 3)),
    case(einsum_batched, normal(2, 3, 4), normal(2, 4, 2), wrt=(0, 1)),
    case(einsum_implicit_dot, normal(4), normal(4), wrt=(0, 1)),
    case(outer_inner, normal(4), normal(4, scale=0.5), wrt=(0, 1)),
    case(trace_transpose, normal(3, 3)),
    case(linalg_inv, wellcond(3), n=3),
    case(linalg_det, wellcond(3), n=3),
    case(linalg_logdet, spd(4)),
    case(linalg_solve_vector, wellcond(3), normal(3), wrt=(0, 1), n=3),
    case(linalg_solve_matrix, wellcond(4), normal(4, 2), wrt=(0, 1)),
    case(least_squares, normal(3), normal(6, 3), normal(6), wrt=(0, 1, 2)),
    case(mlp, normal(4, 3), normal(4), normal(2, 4), normal(3), wrt=(0, 1, 2)),
    case(softmax_cross_entropy, normal(3, 4), normal(5, 3)),
    case(matrix_methods, normal(3, 3), normal(3), wrt=(0, 1)),
    # float32 inputs: gradients must stay float32; finite differences run in float64 and the
    # float32 forward computation is only accurate to ~1e-6 relative.
    case(
        float32_matmul,
        normal(3, 4, dtype=np.float32),
        normal(4, dtype=np.float32),
        wrt=(0, 1),
        rtol=1e-4,
        atol=1e-5,
    ),
    case(matmul_broadcast_batch, normal(1, 3, 4), normal(2, 4, 2), wrt=(0, 1)),
    case(matmul_1d_2d, normal(3), normal(3, 3), wrt=(0, 1)),
    case(inv_batched, wellcond(3, batch=(2,))),
    case(det_batched, wellcond(3, batch=(2,))),
    case(solve_matrix_rhs_batched, wellcond(3, batch=(2,)), normal(2, 3, 2), wrt=(0, 1)),
    case(einsum_ellipsis, normal(2, 3, 4), normal(2, 4, 2), wrt=(0, 1)),
    case(tensordot_axes_zero, normal(3), normal(2), wrt=(0, 1)),
    case(dot_with_scalar_and_2d, fl(-1.0, 1.0), normal(2, 3), normal(3, 2), wrt=(0, 1, 2)),
    case(outer_inner_2d, normal(2, 3), normal(4, 3), wrt=(0, 1)),
    case(trace_offsets, normal(3, 3)),
    case(transpose_3d_default, normal(2, 3, 4)),
    case(einsum_diagonal_and_rowwise, normal(3, 3), normal(3, 3), wrt=(0, 1)),
    case(tensordot_single_axis_lists, normal(3, 2), normal(4, 3), wrt=(0, 1)),
]
