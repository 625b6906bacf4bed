"""Keyword forms and batch dimensions, as users write them: ``axis=``, ``keepdims=True``,
``ord=``, stacks of matrices broadcast against each other, ``kind=`` and gathers through
the indices of a sort."""

from __future__ import annotations

import numpy as np

from .common import Table

T = Table("kw", seed=17)
r, u = T.r, T.u


def f_norm_rows_keep(x):
    return x / np.linalg.norm(x, ord=2, axis=1, keepdims=True)


def f_norm_batch_fro(x):
    return np.linalg.norm(x, axis=(-2, -1))


def f_norm_batch_nuc(x):
    return np.linalg.norm(x, ord="nuc", axis=(-2, -1), keepdims=True)


def f_solve_broadcast(a, b):
    return np.linalg.solve(a, b)


def f_inv_4d_kw(x):
    return np.linalg.inv(a=x)


def f_det_kw(x):
    return np.linalg.det(a=x)


def f_slogdet_batch_unpack(x):
    sign, logabsdet = np.linalg.slogdet(x)
    return logabsdet * 2.0


def f_cholesky_solve_batch(a, b):
    lower = np.linalg.cholesky(a)
    return np.linalg.solve(lower, b)


def f_sort_kind(x):
    return np.sort(x, axis=0, kind="stable")


def f_gather_top(x):
    idx = np.argsort(-x, axis=-1)[:, :2]
    return np.take_along_axis(x, idx, axis=-1)


def f_where_outer(x, y):
    return np.where(x[:, None] > y[None, :], x[:, None] * y[None, :], x[:, None] - y[None, :])


def f_trapezoid_kw(y, x):
    return np.trapezoid(y=y, x=x)


def f_cumsum_kw(x):
    return np.cumsum(x, axis=-1) / np.cumprod(np.abs(x) + 1.0, axis=0)


def f_einsum_batch_kw(a, b):
    return np.einsum("bij,bjk->bik", a, b, optimize="greedy")


def f_sum_keep_tuple(x):
    return x - np.mean(x, axis=(0, 2), keepdims=True) / np.std(x, axis=(0, 2), keepdims=True)


def f_max_keep(x):
    return np.exp(x - np.max(x, axis=-1, keepdims=True))


def f_matmul_batch_broadcast(a, b):
    return np.matmul(a, b) + a @ b


def f_tensordot_kw(a, b):
    return np.tensordot(a, b, axes=([0, 2], [1, 0]))


def f_var_kw(x):
    return np.var(x, axis=-1, ddof=1, keepdims=True)


def f_clip_kw_arrays(x, hi):
    return np.clip(x, a_min=-0.5, a_max=hi)


def f_eigh_batch_uplo(x):
    w, v = np.linalg.eigh(x, UPLO="U")
    return w


def f_svd_batch_reduced(x):
    u_, s, vt = np.linalg.svd(x, full_matrices=False)
    return s * np.sum(np.abs(u_[..., 0, :]), axis=-1, keepdims=True)


def f_pinv_batch_kw(x):
    return np.linalg.pinv(x, rcond=1e-12)


def f_lstsq_matrix(a, b):
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return x


def f_matrix_power_batch(x):
    return np.linalg.matrix_power(x, 3)


def f_multi_dot_kw(a, b, c):
    return np.linalg.multi_dot([a, b, c])


def f_kron_3d(a, b):
    return np.kron(a, b)


def f_outer_ravel(a, b):
    return np.outer(a, b.ravel())


def f_diff_kw(x):
    return np.diff(x, n=2, axis=0)


def f_interp_kw(x, fp):
    return np.interp(x, xp=np.array([0.0, 1.0, 2.0]), fp=fp)


def f_convolve_full(a, v):
    return np.convolve(a, v, mode="full")


def f_correlate_same_kw(a, v):
    return np.correlate(a, v, mode="same")


T.add(f_norm_rows_keep, r(3, 4))
T.add(f_norm_batch_fro, r(2, 3, 4))
T.add(f_norm_batch_nuc, r(2, 3, 4))
T.add(f_solve_broadcast, r(3, 3) + 3 * np.eye(3), r(2, 3, 4))
T.add(f_inv_4d_kw, r(2, 2, 3, 3) + 3 * np.eye(3))
T.add(f_det_kw, r(2, 3, 3))
T.add(f_slogdet_batch_unpack, r(2, 3, 3))
T.add(f_cholesky_solve_batch, np.stack([T.psd(3), T.psd(3)]), r(2, 3, 2), symmetric=(0,))
T.add(f_sort_kind, r(4, 3))
T.add(f_gather_top, r(3, 5))
T.add(f_where_outer, r(3), r(4))
T.add(f_trapezoid_kw, r(3, 5), np.sort(r(5)))
T.add(f_cumsum_kw, r(3, 4))
T.add(f_einsum_batch_kw, r(2, 3, 4), r(2, 4, 2))
T.add(f_sum_keep_tuple, r(2, 3, 4))
T.add(f_max_keep, r(3, 4))
T.add(f_matmul_batch_broadcast, r(2, 1, 3, 4), r(3, 4, 2))
T.add(f_tensordot_kw, r(3, 2, 4), r(4, 3))
T.add(f_var_kw, r(3, 4))
T.add(f_clip_kw_arrays, r(3, 4), r(4) + 1.0)
T.add(f_eigh_batch_uplo, np.stack([T.psd(3), T.psd(3)]), symmetric=(0,))
T.add(f_svd_batch_reduced, r(2, 4, 3))
T.add(f_pinv_batch_kw, r(2, 4, 3))
T.add(f_lstsq_matrix, r(5, 3), r(5, 2))
T.add(f_matrix_power_batch, r(2, 3, 3) / 2)
T.add(f_multi_dot_kw, r(2, 3), r(3, 4), r(4, 2))
T.add(f_kron_3d, r(2, 1, 2), r(2, 2))
T.add(f_outer_ravel, r(3), r(2, 2))
T.add(f_diff_kw, r(5, 3))
T.add(f_interp_kw, np.array([-0.5, 0.3, 1.4, 2.5]), r(3))
T.add(f_convolve_full, r(5), r(3))
T.add(f_correlate_same_kw, r(5), r(3))
