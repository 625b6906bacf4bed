"""``np.linalg`` and ``scipy.linalg``, as in autograd's ``test_linalg.py``."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .common import Table

T = Table("linalg", seed=3)
r = T.r


def f_inv(x):
    return np.linalg.inv(x)


def f_solve_a(a, b):
    return np.linalg.solve(a, b)


def f_det(x):
    return np.linalg.det(x)


def f_slogdet(x):
    sign, logdet = np.linalg.slogdet(x)
    return logdet


def f_slogdet_stack(x):
    return np.sum(np.linalg.slogdet(x)[1])


def f_norm(x):
    return np.linalg.norm(x)


def f_norm_ord(x):
    return np.linalg.norm(x, ord=3)


def f_norm_axis(x):
    return np.linalg.norm(x, axis=1)


def f_norm_fro_axes(x):
    return np.linalg.norm(x, axis=(0, 1))


def f_norm_nuc(x):
    return np.linalg.norm(x, ord="nuc")


def f_norm_inf(x):
    return np.linalg.norm(x, ord=np.inf)


def f_eigh(x):
    w, v = np.linalg.eigh(x)
    return np.sum(w) + np.sum(np.abs(v))


def f_eigh_upper(x):
    w, v = np.linalg.eigh(x, "U")
    return w


def f_eigvalsh(x):
    return np.linalg.eigvalsh(x)


def f_cholesky(x):
    return np.linalg.cholesky(x)


def f_cholesky_reparam(x):
    z = np.dot(np.linalg.cholesky(x), np.array([0.3, -1.2, 0.5, 0.8]))
    return np.linalg.norm(z)


def f_sqrtm(x):
    return sla.sqrtm(x)


def f_solve_triangular(a, b):
    return sla.solve_triangular(a, b, lower=True)


def f_solve_triangular_t(a, b):
    return sla.solve_triangular(a, b, trans="T", lower=False)


def f_solve_triangular_1(a, b):
    return sla.solve_triangular(a, b, trans=1, lower=True)


def f_svd(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return s


def f_svd_uv(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(np.abs(u)) + np.sum(s) + np.sum(np.abs(vt))


def f_svd_s_only(x):
    return np.linalg.svd(x, compute_uv=False)


def f_pinv(x):
    return np.linalg.pinv(x)


def f_matrix_power(x):
    return np.linalg.matrix_power(x, 3)


def f_expm(x):
    return sla.expm(x)


def f_sla_solve(a, b):
    return sla.solve(a, b)


def f_sla_inv(x):
    return sla.inv(x)


def f_sla_det(x):
    return sla.det(x)


def f_cho_solve(a, b):
    c = sla.cho_factor(a)
    return sla.cho_solve(c, b)


def f_multi_dot(a, b, c):
    return np.linalg.multi_dot([a, b, c])


def f_qr(x):
    q, rr = np.linalg.qr(x)
    return rr


def f_lstsq(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


def _square(n):
    return r(n, n) + n * np.eye(n)


T.add(f_inv, _square(4))
T.add(f_inv, r(3, 4, 4) + 5 * np.eye(4))
T.add(f_solve_a, _square(4), r(4, 3))
T.add(f_solve_a, _square(4), r(4))
T.add(f_solve_a, r(5, 4, 4) + 5 * np.eye(4), r(5, 4, 2))
T.add(f_det, r(4, 4))
T.add(f_det, r(3, 3, 3))
T.add(f_slogdet, r(4, 4))
T.add(f_slogdet, -_square(4))
T.add(f_slogdet_stack, np.stack([T.psd(3) for _ in range(2)]))
T.add(f_norm, r(6))
T.add(f_norm, r(4, 3))
T.add(f_norm_ord, r(6))
T.add(f_norm_axis, r(4, 3, 2))
T.add(f_norm_fro_axes, r(4, 3, 2))
T.add(f_norm_nuc, r(4, 3))
T.add(f_norm_inf, r(5))
for _f in (f_eigh, f_eigh_upper, f_eigvalsh, f_cholesky, f_sqrtm):
    T.add(_f, T.psd(4), symmetric=(0,))
T.add(f_cholesky_reparam, T.psd(4), symmetric=(0,))
T.add(f_cholesky, np.stack([T.psd(3), T.psd(3)]), symmetric=(0,))
for _f in (f_solve_triangular, f_solve_triangular_t, f_solve_triangular_1):
    T.add(_f, _square(4), r(4, 2))
T.add(f_solve_triangular, _square(4), r(4))
for _f in (f_svd, f_svd_uv, f_svd_s_only, f_pinv, f_qr):
    T.add(_f, r(5, 3))
T.add(f_svd_uv, r(3, 5))
T.add(f_svd_uv, r(2, 4, 3))
T.add(f_svd_s_only, r(2, 3, 3))
T.add(f_matrix_power, r(3, 3))
T.add(f_expm, r(3, 3) * 0.5)
T.add(f_sla_solve, _square(3), r(3, 2))
T.add(f_sla_inv, _square(3))
T.add(f_sla_det, r(3, 3))
T.add(f_cho_solve, T.psd(3), r(3, 2), symmetric=(0,))
T.add(f_multi_dot, r(2, 3), r(3, 4), r(4, 2))
T.add(f_lstsq, r(5, 3), r(5, 2))
