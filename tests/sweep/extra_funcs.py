"""Further combinations from autograd's tests: Python floats mixed with arrays (its
``binary_ufunc_check`` and ``test_scalar_ops``), functions of scalars, named results of
``np.linalg``, ``np.gradient``, sorting through indices, and the complex-valued
``np.fft`` (refused: complex values are not modelled)."""

from __future__ import annotations

import numpy as np
import scipy.special as sc
import scipy.stats as st

from .common import Table

T = Table("extra", seed=5)
r, u = T.r, T.u


def f_add_float(x):
    return np.add(1.3, x)


def f_multiply_float(x):
    return np.multiply(x, -2.5)


def f_power_float_base(x):
    return np.power(2.0, x)


def f_power_float_exp(x):
    return x**2.5


def f_divide_float(x):
    return np.divide(1.0, x)


def f_relu(x):
    return np.maximum(x, 0.0)


def f_softplus(x):
    return np.logaddexp(x, 0.0)


def f_hypot_float(x):
    return np.hypot(x, 2.0)


def f_arctan2_float(x):
    return np.arctan2(1.5, x)


def f_scalar_chain(x, y):
    return np.sin(x) * np.exp(y) + np.log(np.abs(x)) - np.sqrt(y**2 + 1.0) + np.arctan2(x, y)


def f_scalar_mod_pow(x, y):
    return np.mod(x, y) + np.power(y, x) + np.abs(x) ** y


def f_scalar_unaries(x):
    return np.tanh(x) + np.sinh(x) * np.cosh(x) + np.arcsinh(x) + np.exp2(x) + np.sinc(x)


def f_scalar_logs(x):
    return np.log2(x) + np.log10(x) + np.log1p(x) + np.expm1(x) + np.reciprocal(x)


def f_std_keep(x):
    return np.std(x, axis=-1, ddof=1, keepdims=True)


def f_mean_axes(x):
    return np.mean(x, axis=(0, 2))


def f_max_neg_axis(x):
    return np.max(x, axis=-2)


def f_tensordot_pairs(x, y):
    return np.tensordot(x, y, axes=([1, 0], [0, 1]))


def f_trace_axes(x):
    return np.trace(x, offset=-1, axis1=1, axis2=2)


def f_diagonal_offset(x):
    return np.diagonal(x, 1)


def f_outer_matrices(x, y):
    return np.outer(x, y)


def f_kron_mixed(x, y):
    return np.kron(x, y)


def f_cumsum_last(x):
    return np.cumsum(x, axis=-1)


def f_gradient(x):
    return np.gradient(x)


def f_gradient_axis(x):
    return np.gradient(x, axis=1)


def f_sort_axis(x):
    return np.sort(x, axis=0)


def f_argsort_index(x):
    return x[np.argsort(x)] * np.arange(5.0)


def f_partition_kth(x):
    return np.partition(x, (1, 4))


def f_pad_edge(x):
    return np.pad(x, 2, mode="edge")


def f_pad_reflect(x):
    return np.pad(x, (1, 2), mode="reflect")


def f_interp(x):
    return np.interp(x, np.array([-1.0, 0.0, 2.0]), np.array([0.5, 1.5, -1.0]))


def f_linspace_one(x, y):
    return np.linspace(x, y, 1)


def f_ones_like(x):
    return np.ones_like(x) * x


def f_inv_4d(x):
    return np.linalg.inv(x)


def f_eigh_named(x):
    return np.linalg.eigh(x).eigenvalues


def f_slogdet_named(x):
    return np.linalg.slogdet(x).logabsdet


def f_svd_named(x):
    return np.linalg.svd(x).S


def f_norm_keep(x):
    return np.linalg.norm(x, axis=1, keepdims=True)


def f_norm_ord1(x):
    return np.linalg.norm(x, 1)


def f_logsumexp_keep_b(x, b):
    return sc.logsumexp(x, axis=1, b=b, keepdims=True)


def f_norm_logsf(x, loc, scale):
    return st.norm.logsf(x, loc, scale)


def f_t_logcdf(x, df, loc, scale):
    return st.t.logcdf(x, df, loc, scale)


def f_poisson_cdf(mu):
    return st.poisson.cdf(np.array([0, 1, 3, 5]), mu)


def f_fft_power(x):
    return np.abs(np.fft.fft(x)) ** 2


def f_rfft_real(x):
    return np.real(np.fft.rfft(x))


def f_fftshift(x):
    return np.fft.fftshift(x)


T.add(f_add_float, r(3, 4))
T.add(f_multiply_float, r(3, 4))
T.add(f_power_float_base, r(4))
T.add(f_power_float_exp, u(0.5, 2.0, 4))
T.add(f_divide_float, u(0.5, 2.0, 4))
T.add(f_relu, np.array([-1.3, -0.2, 0.4, 1.7]))
T.add(f_softplus, r(4))
T.add(f_hypot_float, r(4))
T.add(f_arctan2_float, r(4))
T.add(f_scalar_chain, 0.7, -1.2)
T.add(f_scalar_mod_pow, 1.3, 0.8)
T.add(f_scalar_unaries, 0.45)
T.add(f_scalar_logs, 1.7)
T.add(f_std_keep, r(3, 4))
T.add(f_mean_axes, r(2, 3, 4))
T.add(f_max_neg_axis, r(2, 3, 4))
T.add(f_tensordot_pairs, r(3, 2, 4), r(2, 3))
T.add(f_trace_axes, r(2, 4, 4))
T.add(f_diagonal_offset, r(4, 5))
T.add(f_outer_matrices, r(2, 2), r(3))
T.add(f_kron_mixed, r(3), r(2, 2))
T.add(f_cumsum_last, r(3, 4))
T.add(f_gradient, r(6))
T.add(f_gradient_axis, r(3, 5))
T.add(f_sort_axis, r(4, 3))
T.add(f_argsort_index, r(5))
T.add(f_partition_kth, r(6))
T.add(f_pad_edge, r(4))
T.add(f_pad_reflect, r(5))
T.add(f_interp, np.array([-0.7, 0.3, 1.1, 1.6]))
T.add(f_linspace_one, 1.2, 3.4)
T.add(f_ones_like, r(3))
T.add(f_inv_4d, r(2, 2, 3, 3) + 4 * np.eye(3))
T.add(f_eigh_named, T.psd(3), symmetric=(0,))
T.add(f_slogdet_named, T.psd(3))
T.add(f_svd_named, r(4, 3))
T.add(f_norm_keep, r(3, 4))
T.add(f_norm_ord1, r(5))
T.add(f_logsumexp_keep_b, r(3, 4), np.exp(r(3, 4)))
T.add(f_norm_logsf, r(4), r(4), r(4) ** 2 + 1.1)
T.add(f_t_logcdf, r(4), r(4) ** 2 + 2.1, r(4), r(4) ** 2 + 2.1)
T.add(f_poisson_cdf, u(0.5, 3.0, 4))
T.add(f_fft_power, r(6))
T.add(f_rfft_real, r(6))
T.add(f_fftshift, r(5))
