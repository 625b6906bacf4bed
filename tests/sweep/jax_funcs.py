"""The functions JAX's own tests differentiate (``lax_scipy_special_functions_test.py``,
``linalg_test.py``, ``lax_numpy_test.py`` and ``lax_scipy_test.py``) that autograd's
tests do not reach: special functions, batched linear algebra, ``np.linalg`` with every
``ord``, and the NumPy functions JAX checks gradients of (``take_along_axis``,
``trapezoid``, ``cov``, ``average``, ``nan*`` reductions...), each written as a user
would write it."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.special as sc

from .common import Table

T = Table("jax", seed=11)
r, u = T.r, T.u


# -- scipy.special (lax_scipy_special_functions_test.py) ---------------------------------


def f_ndtri(x):
    return sc.ndtri(x)


def f_ndtr(x):
    return sc.ndtr(x)


def f_log_ndtr(x):
    return sc.log_ndtr(x)


def f_xlog1py(x, y):
    return sc.xlog1py(x, y)


def f_entr(x):
    return sc.entr(x)


def f_rel_entr(x, y):
    return sc.rel_entr(x, y)


def f_kl_div(x, y):
    return sc.kl_div(x, y)


def f_zeta(x):
    return sc.zeta(x, 1.5)


def f_zeta_q(q):
    return sc.zeta(3.0, q)


def f_poch(z, m):
    return sc.poch(z, m)


def f_expi(x):
    return sc.expi(x)


def f_exp1(x):
    return sc.exp1(x)


def f_expn(x):
    return sc.expn(2, x)


def f_i0e(x):
    return sc.i0e(x)


def f_i1e(x):
    return sc.i1e(x)


def f_erfc(x):
    return sc.erfc(x)


def f_gamma_neg(x):
    return sc.gamma(x)


def f_digamma_broadcast(x, y):
    return sc.digamma(x) * y


def f_logsumexp_keep(x):
    return sc.logsumexp(x, axis=0, keepdims=True)


def f_logsumexp_sign(x, b):
    value, sign = sc.logsumexp(x, b=b, return_sign=True)
    return value * sign


def f_softmax_axis0(x):
    return sc.softmax(x, axis=0)


def f_log_softmax_none(x):
    return sc.log_softmax(x, axis=None)


def f_xlogy_broadcast(x, y):
    return sc.xlogy(x, y)


def f_hyp1f1(x):
    return sc.hyp1f1(1.5, 2.5, x)


# -- np.linalg (linalg_test.py) ------------------------------------------------------------


def f_det_batch(x):
    return np.linalg.det(x)


def f_slogdet_batch(x):
    sign, logdet = np.linalg.slogdet(x)
    return sign * logdet


def f_eigh_batch(x):
    w, v = np.linalg.eigh(x)
    return w[..., -1] + np.sum(v[..., :, -1] ** 3, axis=-1)


def f_eigvalsh_batch(x):
    return np.linalg.eigvalsh(x)


def f_svd_batch(x):
    return np.linalg.svd(x, compute_uv=False)


def f_svd_reduced(x):
    u_, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(u_ * u_[0]) + np.sum(s) + np.sum(vt[:, 0] ** 3)


def f_qr_complete(x):
    q, r_ = np.linalg.qr(x, mode="complete")
    return np.sum(r_**2) + q[0, 0]


def f_qr_r(x):
    return np.linalg.qr(x, mode="r")


def f_qr_batch(x):
    q, r_ = np.linalg.qr(x)
    return q * 2.0 + q @ r_


def f_cholesky_batch(x):
    return np.linalg.cholesky(x)


def f_inv_batch(x):
    return np.linalg.inv(x)


def f_solve_vector(a, b):
    return np.linalg.solve(a, b)


def f_solve_batch(a, b):
    return np.linalg.solve(a, b)


def f_solve_batch_vec(a, b):
    return np.linalg.solve(a, b[..., None])[..., 0]


def f_pinv_wide(x):
    return np.linalg.pinv(x)


def f_pinv_batch(x):
    return np.linalg.pinv(x)


def f_matrix_power_neg(x):
    return np.linalg.matrix_power(x, -2)


def f_matrix_power_0(x):
    return np.linalg.matrix_power(x, 0) + x


def f_matrix_power_5(x):
    return np.linalg.matrix_power(x, 5)


def f_tensorinv(x):
    return np.linalg.tensorinv(x, ind=2)


def f_tensorsolve(a, b):
    return np.linalg.tensorsolve(a, b)


def f_multi_dot_vecs(a, b, c):
    return np.linalg.multi_dot([a, b, c])


def f_lstsq(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


def f_cond(x):
    return np.linalg.cond(x)


def f_norm_fro(x):
    return np.linalg.norm(x, "fro")


def f_norm_2(x):
    return np.linalg.norm(x, 2)


def f_norm_minus2(x):
    return np.linalg.norm(x, -2)


def f_norm_minus1(x):
    return np.linalg.norm(x, ord=-1)


def f_norm_minus_inf(x):
    return np.linalg.norm(x, ord=-np.inf)


def f_norm_vec3(x):
    return np.linalg.norm(x, ord=3)


def f_norm_vec_half(x):
    return np.linalg.norm(x, ord=0.5)


def f_norm_vec_inf(x):
    return np.linalg.norm(x, ord=np.inf)


def f_norm_vec_axis_ord(x):
    return np.linalg.norm(x, ord=1, axis=0)


def f_norm_matrix_axes(x):
    return np.linalg.norm(x, ord="nuc", axis=(1, 2))


def f_norm_2_axes(x):
    return np.linalg.norm(x, ord=2, axis=(0, 1))


def f_vector_norm(x):
    return np.linalg.vector_norm(x, axis=-1)


def f_matrix_norm(x):
    return np.linalg.matrix_norm(x)


def f_linalg_outer(a, b):
    return np.linalg.outer(a, b)


def f_linalg_vecdot(a, b):
    return np.linalg.vecdot(a, b)


def f_linalg_matmul(a, b):
    return np.linalg.matmul(a, b)


def f_linalg_trace(x):
    return np.linalg.trace(x)


def f_linalg_diagonal(x):
    return np.linalg.diagonal(x)


def f_linalg_cross(a, b):
    return np.linalg.cross(a, b)


def f_linalg_svdvals(x):
    return np.linalg.svdvals(x)


# -- scipy.linalg (linalg_test.py, ScipyLinalgTest) --------------------------------------


def f_sla_expm(x):
    return sla.expm(x)


def f_sla_lu(x):
    p, l_, u_ = sla.lu(x)
    return l_ + u_


def f_sla_lu_solve(a, b):
    return sla.lu_solve(sla.lu_factor(a), b)


def f_sla_cho_factor(a, b):
    return sla.cho_solve(sla.cho_factor(a), b)


def f_sla_solve_triangular_lower(a, b):
    return sla.solve_triangular(a, b, lower=True, trans="T")


def f_sla_sqrtm(x):
    return sla.sqrtm(x)


def f_sla_block_diag(a, b):
    return sla.block_diag(a, b)


def f_sla_eigh(x):
    return sla.eigh(x)[0]


def f_sla_eigh_values(x):
    return sla.eigh(x, eigvals_only=True)


def f_sla_cholesky_lower(x):
    return sla.cholesky(x, lower=True)


def f_sla_svd(x):
    return sla.svd(x, compute_uv=False)


def f_sla_qr(x):
    return sla.qr(x, mode="economic")[1]


def f_sla_pinv(x):
    return sla.pinv(x)


def f_sla_logm(x):
    return sla.logm(x)


def f_sla_polar(x):
    return sla.polar(x)[0]


def f_sla_solve_sym(a, b):
    return sla.solve(a, b, assume_a="pos")


def f_sla_toeplitz(c):
    return sla.toeplitz(c)


def f_sla_tril(x):
    return np.tril(x, -1) + np.triu(x, 2)


# -- NumPy (lax_numpy_test.py, lax_numpy_reducers_test.py) -------------------------------


def f_take_along_axis(x):
    idx = np.argsort(x, axis=1)
    return np.take_along_axis(x, idx, axis=1)


def f_take_along_axis_none(x):
    return np.take_along_axis(x, np.array([3, 0, 0, 5]), axis=None)


def f_take(x):
    return np.take(x, np.array([[0, 2], [1, 1]]), axis=1)


def f_take_flat(x):
    return np.take(x, np.array([5, 0, 3]))


def f_put_along_axis(x, v):
    y = x.copy()
    np.put_along_axis(y, np.array([[0], [2]]), v, axis=1)
    return y


def f_trapezoid(y):
    return np.trapezoid(y)


def f_trapezoid_x(y, x):
    return np.trapezoid(y, x, axis=-1)


def f_trapezoid_dx(y):
    return np.trapezoid(y, dx=0.3, axis=0)


def f_cov(x):
    return np.cov(x)


def f_cov_rowvar(x):
    return np.cov(x, rowvar=False, ddof=0)


def f_corrcoef(x):
    return np.corrcoef(x)


def f_average(x, w):
    return np.average(x, axis=1, weights=w)


def f_average_plain(x):
    return np.average(x)


def f_median(x):
    return np.median(x, axis=0)


def f_percentile(x):
    return np.percentile(x, 30.0, axis=1)


def f_quantile(x):
    return np.quantile(x, np.array([0.25, 0.5]))


def f_ptp(x):
    return np.ptp(x, axis=0)


def f_nansum(x):
    return np.nansum(x, axis=1)


def f_nanmean(x):
    return np.nanmean(x)


def f_nanmax(x):
    return np.nanmax(x, axis=0)


def f_nanvar(x):
    return np.nanvar(x, axis=0)


def f_nanstd(x):
    return np.nanstd(x)


def f_nanprod(x):
    return np.nanprod(x, axis=1)


def f_nanstd_missing(x):
    return np.nanstd(x, axis=1, ddof=1) + np.nanmax(x, axis=0).sum() * np.nanprod(x)


def f_nancumsum(x):
    return np.nancumsum(x, axis=0)


def f_cumprod_axis(x):
    return np.cumprod(x, axis=1)


def f_cumsum_dtype(x):
    return np.cumsum(x, axis=0, dtype=np.float64)


def f_cumulative_sum(x):
    return np.cumulative_sum(x, axis=1, include_initial=True)


def f_cumulative_prod(x):
    return np.cumulative_prod(x)


def f_diff_prepend(x):
    return np.diff(x, n=2, axis=0, prepend=0.0)


def f_diff_append(x, y):
    return np.diff(x, append=y)


def f_convolve_same(a, v):
    return np.convolve(a, v, mode="same")


def f_convolve_valid(a, v):
    return np.convolve(a, v, mode="valid")


def f_correlate_valid(a, v):
    return np.correlate(a, v)


def f_polyval(p, x):
    return np.polyval(p, x)


def f_polyfit(y):
    return np.polyfit(np.linspace(0.0, 1.0, 6), y, 2)


def f_polymul(a, b):
    return np.polymul(a, b)


def f_polyder(p):
    return np.polyder(p)


def f_polyint(p):
    return np.polyint(p)


def f_vander(x):
    return np.vander(x, 3)


def f_interp_xp(x, fp):
    return np.interp(x, np.array([-1.0, 0.0, 1.0, 2.5]), fp)


def f_interp_lr(x):
    return np.interp(x, np.array([0.0, 1.0]), np.array([2.0, 3.0]), left=-1.0, right=5.0)


def f_einsum_outer(a, b):
    return np.einsum("i,j->ij", a, b)


def f_einsum_diag(x):
    return np.einsum("ii->i", x)


def f_einsum_sum(x):
    return np.einsum("ij->", x)


def f_einsum_ellipsis(a, b):
    return np.einsum("...ij,...jk->...ik", a, b)


def f_einsum_bilinear(x, a, y):
    return np.einsum("i,ij,j", x, a, y)


def f_einsum_implicit(a, b):
    return np.einsum("ij,jk", a, b)


def f_einsum_optimize(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c, optimize=True)


def f_einsum_repeat_out(a):
    return np.einsum("ijk->kji", a)


def f_tensordot_axes0(a, b):
    return np.tensordot(a, b, axes=0)


def f_kron_2d(a, b):
    return np.kron(a, b)


def f_outer_2d(a, b):
    return np.outer(a, b)


def f_inner_nd(a, b):
    return np.inner(a, b)


def f_vecdot(a, b):
    return np.vecdot(a, b)


def f_matvec(a, b):
    return np.matvec(a, b)


def f_sort_none(x):
    return np.sort(x, axis=None)


def f_sort_neg(x):
    return np.sort(x, axis=-1)[:, ::-1]


def f_partition_axis(x):
    return np.partition(x, 2, axis=0)


def f_where_broadcast(x, y):
    return np.where(x > 0.0, x, y)


def f_where_scalar(x):
    return np.where(x > 0.0, x, 0.1 * x)


def f_where_one(x):
    return np.where(x > 0.0, 1.0, x**2)


def f_maximum_broadcast(x, y):
    return np.maximum(x, y)


def f_clip_arrays(x, lo, hi):
    return np.clip(x, lo, hi)


def f_clip_none(x):
    return np.clip(x, None, 0.5)


def f_max_initial(x):
    return np.max(x, axis=0, initial=-1.0)


def f_sum_where(x):
    return np.sum(x, where=x > 0.0)


def f_mean_where(x):
    return np.mean(x, axis=1, where=np.array([True, False, True, True]))


def f_amax_tuple(x):
    return np.amax(x, axis=(0, 2), keepdims=True)


def f_prod_keep(x):
    return np.prod(x, axis=-1, keepdims=True)


def f_var_keep(x):
    return np.var(x, axis=(0, 1), keepdims=True)


def f_logaddexp_reduce(x):
    return np.logaddexp.reduce(x, axis=0)


def f_add_reduce(x):
    return np.add.reduce(x, axis=1)


def f_multiply_outer(a, b):
    return np.multiply.outer(a, b)


def f_add_accumulate(x):
    return np.add.accumulate(x, axis=0)


def f_ldexp(x):
    return np.ldexp(x, 3)


def f_divmod(x, y):
    q, rem = np.divmod(x, y)
    return rem + q


def f_floor_divide(x, y):
    return np.floor_divide(x, y) + x


def f_modf(x):
    frac, whole = np.modf(x)
    return frac * 2.0 + whole


def f_frexp(x):
    m, e = np.frexp(x)
    return m * e


def f_heaviside(x):
    return np.heaviside(x, 0.5) * x


def f_unwrap(x):
    return np.unwrap(x)


def f_roll_axes(x):
    return np.roll(x, (1, -2), axis=(0, 1))


def f_rot90_k(x):
    return np.rot90(x, k=3, axes=(1, 2))


def f_flip_axes(x):
    return np.flip(x, axis=(0, 1))


def f_tril_k(x):
    return np.tril(x, k=1)


def f_triu_batch(x):
    return np.triu(x)


def f_pad_constant(x):
    return np.pad(x, ((1, 0), (2, 1)), mode="constant", constant_values=0.5)


def f_pad_wrap(x):
    return np.pad(x, 2, mode="wrap")


def f_pad_symmetric(x):
    return np.pad(x, ((1, 1), (0, 2)), mode="symmetric")


def f_pad_linear_ramp(x):
    return np.pad(x, 2, mode="linear_ramp")


def f_pad_mean(x):
    return np.pad(x, 1, mode="mean")


def f_repeat_array(x):
    return np.repeat(x, np.array([1, 0, 2]), axis=0)


def f_tile_2d(x):
    return np.tile(x, (2, 1, 3))


def f_stack_axis(a, b):
    return np.stack([a, b], axis=-1)


def f_concatenate_none(a, b):
    return np.concatenate([a, b], axis=None)


def f_append_axis(a, b):
    return np.append(a, b, axis=0)


def f_insert(x, v):
    return np.insert(x, 1, v)


def f_delete(x):
    return np.delete(x, [0, 2], axis=1)


def f_resize(x):
    return np.resize(x, (3, 5))


def f_apply_along_axis(x):
    return np.apply_along_axis(np.sum, 0, x)


def f_unstack(x):
    a, b, c = np.unstack(x)
    return a * b - c


def f_split_sections(x):
    parts = np.split(x, [1, 3], axis=1)
    return parts[0].sum() + parts[1] @ parts[2].T


def f_compress(x):
    return np.compress(np.array([True, False, True]), x, axis=0)


def f_extract(x):
    return np.extract(x > 0.0, x)


def f_select_default(x):
    return np.select([x < -0.5, x > 0.5], [x**2, np.sin(x)], default=x)


def f_piecewise(x):
    return np.piecewise(x, [x < 0.0, x >= 0.0], [lambda v: -v, lambda v: v**2])


def f_fill_diagonal(x):
    y = x.copy()
    np.fill_diagonal(y, 0.0)
    return y


def f_masked_assign(x):
    y = x.copy()
    y[y < 0.0] = 0.0
    return y


def f_argmax_gather(x):
    return x[np.arange(3), np.argmax(x, axis=1)]


def f_logspace(a):
    return np.logspace(0.0, a, 4)


def f_geomspace(a):
    return np.geomspace(1.0, a, 4)


def f_linspace_arrays(a, b):
    return np.linspace(a, b, 5, axis=1)


def f_meshgrid_ij(x, y):
    xx, yy = np.meshgrid(x, y, indexing="ij")
    return xx * yy


def f_cross_3(a, b):
    return np.cross(a, b)


def f_i0(x):
    return np.i0(x)


def f_sinc_arr(x):
    return np.sinc(x)


def f_fmax_nan(x, y):
    return np.fmax(x, y)


def f_copysign_arr(x, y):
    return np.copysign(x, y)


def f_nextafter(x):
    return np.nextafter(x, 10.0) * 2.0


def f_spacing(x):
    return x + np.spacing(x)


def f_float_power_neg(x):
    return np.float_power(x, -1.5)


def f_power_int(x):
    return np.power(x, 3)


def f_square_broadcast(x, y):
    return np.square(x - y)


def f_isclose_mask(x):
    return np.where(np.isclose(x, 0.0), 0.0, x)


T.add(f_ndtri, u(0.05, 0.95, 5))
T.add(f_ndtr, r(5))
T.add(f_log_ndtr, r(5) * 3)
T.add(f_xlog1py, r(4), u(-0.5, 2.0, 4))
T.add(f_entr, u(0.1, 2.0, 5))
T.add(f_rel_entr, u(0.1, 2.0, 4), u(0.1, 2.0, 4))
T.add(f_kl_div, u(0.1, 2.0, 4), u(0.1, 2.0, 4))
T.add(f_zeta, u(1.5, 4.0, 4))
T.add(f_zeta_q, u(0.5, 3.0, 4))
T.add(f_poch, u(0.5, 3.0, 4), u(0.5, 2.0, 4))
T.add(f_expi, u(0.3, 3.0, 4))
T.add(f_exp1, u(0.3, 3.0, 4))
T.add(f_expn, u(0.3, 3.0, 4))
T.add(f_i0e, r(5))
T.add(f_i1e, r(5))
T.add(f_erfc, r(5))
T.add(f_gamma_neg, np.array([-1.5, -0.3, 0.7, 2.2]))
T.add(f_digamma_broadcast, u(0.5, 3.0, 3, 1), r(4))
T.add(f_logsumexp_keep, r(3, 4))
T.add(f_logsumexp_sign, r(5), r(5))
T.add(f_softmax_axis0, r(3, 4))
T.add(f_log_softmax_none, r(3, 4))
T.add(f_xlogy_broadcast, r(3, 1), u(0.2, 2.0, 4))
T.add(f_hyp1f1, u(0.1, 2.0, 4))
T.add(f_det_batch, r(2, 3, 3))
T.add(f_slogdet_batch, r(2, 3, 3))
T.add(f_eigh_batch, np.stack([T.psd(3), T.psd(3)]), symmetric=(0,))
T.add(f_eigvalsh_batch, np.stack([T.psd(3), T.psd(3)]), symmetric=(0,))
T.add(f_svd_batch, r(2, 4, 3))
T.add(f_svd_reduced, r(4, 3))
T.add(f_qr_complete, r(3, 3))
T.add(f_qr_r, r(4, 3))
T.add(f_qr_batch, r(2, 4, 3))
T.add(f_cholesky_batch, np.stack([T.psd(3), T.psd(3)]), symmetric=(0,))
T.add(f_inv_batch, r(2, 3, 3) + 3 * np.eye(3))
T.add(f_solve_vector, r(3, 3) + 3 * np.eye(3), r(3))
T.add(f_solve_batch, r(2, 3, 3) + 3 * np.eye(3), r(2, 3, 2))
T.add(f_solve_batch_vec, r(2, 3, 3) + 3 * np.eye(3), r(2, 3))
T.add(f_pinv_wide, r(2, 4))
T.add(f_pinv_batch, r(2, 4, 3))
T.add(f_matrix_power_neg, r(3, 3) + 3 * np.eye(3))
T.add(f_matrix_power_0, r(3, 3))
T.add(f_matrix_power_5, r(3, 3) / 2)
T.add(f_tensorinv, r(2, 3, 6) + np.eye(6).reshape(6, 2, 3).transpose(1, 2, 0) * 3)
T.add(f_tensorsolve, r(2, 3, 6) + np.eye(6).reshape(2, 3, 6) * 3, r(2, 3))
T.add(f_multi_dot_vecs, r(3), r(3, 4), r(4))
T.add(f_lstsq, r(5, 3), r(5))
T.add(f_cond, r(3, 3))
T.add(f_norm_fro, r(3, 4))
T.add(f_norm_2, r(3, 4))
T.add(f_norm_minus2, r(3, 3))
T.add(f_norm_minus1, r(3, 4))
T.add(f_norm_minus_inf, r(3, 4))
T.add(f_norm_vec3, r(5))
T.add(f_norm_vec_half, u(0.2, 1.0, 5))
T.add(f_norm_vec_inf, r(5))
T.add(f_norm_vec_axis_ord, r(3, 4))
T.add(f_norm_matrix_axes, r(2, 3, 4))
T.add(f_norm_2_axes, r(3, 4, 2))
T.add(f_vector_norm, r(3, 4))
T.add(f_matrix_norm, r(2, 3, 4))
T.add(f_linalg_outer, r(3), r(4))
T.add(f_linalg_vecdot, r(3, 4), r(4))
T.add(f_linalg_matmul, r(2, 3, 4), r(4, 2))
T.add(f_linalg_trace, r(2, 3, 3))
T.add(f_linalg_diagonal, r(2, 3, 4))
T.add(f_linalg_cross, r(4, 3), r(3))
T.add(f_linalg_svdvals, r(4, 3))
T.add(f_sla_expm, r(3, 3) / 2)
T.add(f_sla_lu, r(3, 3))
T.add(f_sla_lu_solve, r(3, 3) + 3 * np.eye(3), r(3, 2))
T.add(f_sla_cho_factor, T.psd(3), r(3), symmetric=(0,))
T.add(f_sla_solve_triangular_lower, np.tril(r(3, 3)) + 3 * np.eye(3), r(3, 2))
T.add(f_sla_sqrtm, T.psd(3), symmetric=(0,))
T.add(f_sla_block_diag, r(2, 2), r(1, 3))
T.add(f_sla_eigh, T.psd(3), symmetric=(0,))
T.add(f_sla_eigh_values, T.psd(3), symmetric=(0,))
T.add(f_sla_cholesky_lower, T.psd(3), symmetric=(0,))
T.add(f_sla_svd, r(4, 3))
T.add(f_sla_qr, r(4, 3))
T.add(f_sla_pinv, r(4, 3))
T.add(f_sla_logm, T.psd(3), symmetric=(0,))
T.add(f_sla_polar, r(3, 3) + 3 * np.eye(3))
T.add(f_sla_solve_sym, T.psd(3), r(3), symmetric=(0,))
T.add(f_sla_toeplitz, r(4))
T.add(f_sla_tril, r(4, 4))
T.add(f_take_along_axis, r(3, 4))
T.add(f_take_along_axis_none, r(2, 3))
T.add(f_take, r(2, 3))
T.add(f_take_flat, r(2, 3))
T.add(f_put_along_axis, r(2, 3), r(2, 1))
T.add(f_trapezoid, r(5))
T.add(f_trapezoid_x, r(3, 5), np.sort(r(5)))
T.add(f_trapezoid_dx, r(5, 2))
T.add(f_cov, r(3, 6))
T.add(f_cov_rowvar, r(6, 3))
T.add(f_corrcoef, r(3, 6))
T.add(f_average, r(3, 4), u(0.5, 2.0, 4))
T.add(f_average_plain, r(3, 4))
T.add(f_median, r(5, 3))
T.add(f_percentile, r(3, 6))
T.add(f_quantile, r(7))
T.add(f_ptp, r(4, 3))
T.add(f_nansum, r(3, 4))
T.add(f_nanmean, r(3, 4))
T.add(f_nanmax, r(3, 4))
T.add(f_nanvar, r(3, 4))
T.add(f_nanstd, r(3, 4))
T.add(f_nanprod, r(3, 4))
T.add(f_nanstd_missing, np.where(np.eye(3, 4) > 0, np.nan, r(3, 4)))
T.add(f_nancumsum, r(3, 4))
T.add(f_cumprod_axis, r(3, 4))
T.add(f_cumsum_dtype, r(3, 4))
T.add(f_cumulative_sum, r(3, 4))
T.add(f_cumulative_prod, r(5))
T.add(f_diff_prepend, r(5, 2))
T.add(f_diff_append, r(5), r(2))
T.add(f_convolve_same, r(6), r(3))
T.add(f_convolve_valid, r(6), r(3))
T.add(f_correlate_valid, r(6), r(3))
T.add(f_polyval, r(4), r(5))
T.add(f_polyfit, r(6))
T.add(f_polymul, r(3), r(4))
T.add(f_polyder, r(5))
T.add(f_polyint, r(4))
T.add(f_vander, r(4))
T.add(f_interp_xp, np.array([-0.7, 0.3, 1.1, 1.6, 2.2]), r(4))
T.add(f_interp_lr, np.array([-0.5, 0.3, 0.8, 1.7]))
T.add(f_einsum_outer, r(3), r(4))
T.add(f_einsum_diag, r(3, 3))
T.add(f_einsum_sum, r(3, 4))
T.add(f_einsum_ellipsis, r(2, 3, 4), r(2, 4, 5))
T.add(f_einsum_bilinear, r(3), r(3, 4), r(4))
T.add(f_einsum_implicit, r(3, 4), r(4, 2))
T.add(f_einsum_optimize, r(2, 3), r(3, 4), r(4, 2))
T.add(f_einsum_repeat_out, r(2, 3, 4))
T.add(f_tensordot_axes0, r(2, 3), r(4))
T.add(f_kron_2d, r(2, 3), r(2, 2))
T.add(f_outer_2d, r(2, 3), r(2, 2))
T.add(f_inner_nd, r(2, 3), r(4, 3))
T.add(f_vecdot, r(3, 4), r(3, 4))
T.add(f_matvec, r(2, 3, 4), r(4))
T.add(f_sort_none, r(3, 4))
T.add(f_sort_neg, r(3, 4))
T.add(f_partition_axis, r(5, 3))
T.add(f_where_broadcast, r(3, 4), r(4))
T.add(f_where_scalar, r(3, 4))
T.add(f_where_one, r(5))
T.add(f_maximum_broadcast, r(3, 4), r(4))
T.add(f_clip_arrays, r(3, 4), r(4) - 1.0, r(3, 1) + 1.0)
T.add(f_clip_none, r(5))
T.add(f_max_initial, r(3, 4))
T.add(f_sum_where, r(3, 4))
T.add(f_mean_where, r(3, 4))
T.add(f_amax_tuple, r(2, 3, 4))
T.add(f_prod_keep, r(3, 4))
T.add(f_var_keep, r(2, 3, 4))
T.add(f_logaddexp_reduce, r(3, 4))
T.add(f_add_reduce, r(3, 4))
T.add(f_multiply_outer, r(3), r(2, 2))
T.add(f_add_accumulate, r(3, 4))
T.add(f_ldexp, r(4))
T.add(f_divmod, u(1.1, 4.0, 4), u(0.7, 1.0, 4))
T.add(f_floor_divide, u(1.1, 4.0, 4), u(0.7, 1.0, 4))
T.add(f_modf, u(0.1, 3.9, 4) + np.array([0.0, 1.0, 2.0, -5.0]))
T.add(f_frexp, u(0.6, 0.9, 4))
T.add(f_heaviside, np.array([-1.3, -0.2, 0.4, 1.7]))
T.add(f_unwrap, r(6))
T.add(f_roll_axes, r(3, 4))
T.add(f_rot90_k, r(2, 3, 4))
T.add(f_flip_axes, r(2, 3, 4))
T.add(f_tril_k, r(4, 4))
T.add(f_triu_batch, r(2, 3, 3))
T.add(f_pad_constant, r(2, 3))
T.add(f_pad_wrap, r(4))
T.add(f_pad_symmetric, r(3, 3))
T.add(f_pad_linear_ramp, r(4))
T.add(f_pad_mean, r(4))
T.add(f_repeat_array, r(3, 2))
T.add(f_tile_2d, r(2, 3))
T.add(f_stack_axis, r(2, 3), r(2, 3))
T.add(f_concatenate_none, r(2, 3), r(4))
T.add(f_append_axis, r(2, 3), r(1, 3))
T.add(f_insert, r(4), 0.7)
T.add(f_delete, r(3, 4))
T.add(f_resize, r(2, 3))
T.add(f_apply_along_axis, r(3, 4))
T.add(f_unstack, r(3, 4))
T.add(f_split_sections, r(2, 5))
T.add(f_compress, r(3, 4))
T.add(f_extract, r(3, 4))
T.add(f_select_default, r(6))
T.add(f_piecewise, np.array([-1.3, -0.2, 0.4, 1.7]))
T.add(f_fill_diagonal, r(3, 3))
T.add(f_masked_assign, r(3, 4))
T.add(f_argmax_gather, r(3, 4))
T.add(f_logspace, 1.3)
T.add(f_geomspace, 5.5)
T.add(f_linspace_arrays, r(3), r(3))
T.add(f_meshgrid_ij, r(3), r(4))
T.add(f_cross_3, r(4, 3), r(4, 3))
T.add(f_i0, r(5))
T.add(f_sinc_arr, r(5))
T.add(f_fmax_nan, r(5), r(5))
T.add(f_copysign_arr, r(5), r(5))
T.add(f_nextafter, r(5))
T.add(f_spacing, r(5))
T.add(f_float_power_neg, u(0.5, 2.0, 4))
T.add(f_power_int, r(4))
T.add(f_square_broadcast, r(3, 4), r(4))
T.add(f_isclose_mask, r(5))
