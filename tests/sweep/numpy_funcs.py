"""NumPy functions the way autograd's systematic tests exercise them: reductions with
axes, ufuncs inside their domains, broadcasting binary operations, contractions, shape
manipulation, indexing, and construction from parts."""

from __future__ import annotations

import operator

import numpy as np

from .common import Table

T = Table("np", seed=1)
r, u = T.r, T.u

# --- reductions --------------------------------------------------------------------


def f_sum(x):
    return np.sum(x)


def f_sum_axis(x):
    return np.sum(x, axis=1)


def f_sum_axes_keep(x):
    return np.sum(x, axis=(0, 2), keepdims=True)


def f_mean(x):
    return np.mean(x, axis=0)


def f_mean_keep(x):
    return np.mean(x, axis=-1, keepdims=True)


def f_prod(x):
    return np.prod(x)


def f_prod_axis(x):
    return np.prod(x, axis=0, keepdims=True)


def f_max(x):
    return np.max(x)


def f_max_axis(x):
    return np.max(x, axis=1)


def f_amax_keep(x):
    return np.amax(x, axis=1, keepdims=True)


def f_min_axis(x):
    return np.min(x, axis=0)


def f_amin(x):
    return np.amin(x)


def f_var(x):
    return np.var(x)


def f_var_ddof(x):
    return np.var(x, axis=1, ddof=1, keepdims=True)


def f_std(x):
    return np.std(x, axis=0)


def f_std_ddof(x):
    return np.std(x, ddof=2)


def f_cumsum(x):
    return np.cumsum(x, axis=0)


def f_cumsum_flat(x):
    return np.cumsum(x)


def f_cumprod(x):
    return np.cumprod(x, axis=1)


def f_max_ties(x):
    return np.max(np.array([[x, x], [x, 0.5]]), axis=1)


for _f in (f_sum, f_sum_axes_keep, f_prod):
    T.add(_f, r(3, 4, 2) * 0.5 + 1.5)
for _f in (f_sum_axis, f_mean, f_mean_keep, f_prod_axis, f_max, f_max_axis, f_amax_keep):
    T.add(_f, r(3, 4))
for _f in (f_min_axis, f_amin, f_var, f_var_ddof, f_std, f_std_ddof, f_cumsum, f_cumprod):
    T.add(_f, r(3, 4))
T.add(f_cumsum_flat, r(2, 3))
T.add(f_max_ties, 1.3, fwd=False)

# --- unary ufuncs --------------------------------------------------------------------


def f_sin(x):
    return np.sin(x)


def f_cos(x):
    return np.cos(x)


def f_tan(x):
    return np.tan(x)


def f_arcsin(x):
    return np.arcsin(x)


def f_arccos(x):
    return np.arccos(x)


def f_arctan(x):
    return np.arctan(x)


def f_sinh(x):
    return np.sinh(x)


def f_cosh(x):
    return np.cosh(x)


def f_tanh(x):
    return np.tanh(x)


def f_arcsinh(x):
    return np.arcsinh(x)


def f_arccosh(x):
    return np.arccosh(x)


def f_arctanh(x):
    return np.arctanh(x)


def f_exp(x):
    return np.exp(x)


def f_exp2(x):
    return np.exp2(x)


def f_expm1(x):
    return np.expm1(x)


def f_log(x):
    return np.log(x)


def f_log2(x):
    return np.log2(x)


def f_log10(x):
    return np.log10(x)


def f_log1p(x):
    return np.log1p(x)


def f_sqrt(x):
    return np.sqrt(x)


def f_cbrt(x):
    return np.cbrt(x)


def f_square(x):
    return np.square(x)


def f_reciprocal(x):
    return np.reciprocal(x)


def f_abs(x):
    return np.abs(x)


def f_absolute(x):
    return np.absolute(x)


def f_fabs(x):
    return np.fabs(x)


def f_negative(x):
    return np.negative(x)


def f_sign(x):
    return np.sign(x) * x


def f_ceil(x):
    return np.ceil(x) + x


def f_floor(x):
    return np.floor(x) * x


def f_rint(x):
    return np.rint(x) + x


def f_trunc(x):
    return np.trunc(x) + x


def f_fix(x):
    return np.fix(x) + x


def f_round(x):
    return np.round(x, 1) + x


def f_around(x):
    return np.around(x) * x


def f_deg2rad(x):
    return np.deg2rad(x)


def f_rad2deg(x):
    return np.rad2deg(x) / 50.0


def f_degrees(x):
    return np.degrees(x) / 50.0


def f_radians(x):
    return np.radians(x)


def f_sinc(x):
    return np.sinc(x)


def f_real(x):
    return np.real(x)


def f_imag(x):
    return np.imag(x) + x


def f_conj(x):
    return np.conj(x)


def f_conjugate(x):
    return np.conjugate(x)


def f_real_if_close(x):
    return np.real_if_close(x)


def f_angle(x):
    return np.angle(x) + x


def f_nan_to_num(x):
    return np.sin(np.nan_to_num(x + np.array([0.0, np.nan, np.inf, -np.inf])))


for _f in (f_sin, f_cos, f_sinh, f_cosh, f_tanh, f_exp, f_exp2, f_expm1, f_square):
    T.add(_f, r(3, 4))
for _f in (f_arctan, f_arcsinh, f_negative, f_deg2rad, f_rad2deg, f_degrees, f_radians):
    T.add(_f, r(3, 4))
for _f in (f_real, f_imag, f_conj, f_conjugate, f_real_if_close, f_angle, f_sinc):
    T.add(_f, r(3, 4))
T.add(f_tan, u(-1.1, 1.1, 3, 4))
for _f in (f_arcsin, f_arccos, f_arctanh):
    T.add(_f, u(-0.9, 0.9, 3, 4))
T.add(f_arccosh, u(1.1, 4.0, 3, 4))
for _f in (f_log, f_log2, f_log10, f_log1p, f_sqrt, f_cbrt, f_reciprocal):
    T.add(_f, u(0.2, 2.0, 3, 4))
for _f in (f_abs, f_absolute, f_fabs, f_sign):
    T.add(_f, u(0.1, 4.0, 3, 4) * np.sign(r(3, 4)))
for _f in (f_ceil, f_floor, f_rint, f_trunc, f_fix, f_round, f_around):
    T.add(_f, np.array([-1.38, -0.61, 0.27, 0.83, 1.21]))
T.add(f_nan_to_num, r(4))

# --- binary ufuncs and operators, broadcasting ---------------------------------------


def f_add(x, y):
    return np.add(x, y)


def f_subtract(x, y):
    return np.subtract(x, y)


def f_multiply(x, y):
    return np.multiply(x, y)


def f_divide(x, y):
    return np.divide(x, y)


def f_true_divide(x, y):
    return np.true_divide(x, y)


def f_power(x, y):
    return np.power(x, y)


def f_float_power(x, y):
    return np.float_power(x, y)


def f_logaddexp(x, y):
    return np.logaddexp(x, y)


def f_logaddexp2(x, y):
    return np.logaddexp2(x, y)


def f_hypot(x, y):
    return np.hypot(x, y)


def f_arctan2(x, y):
    return np.arctan2(x, y)


def f_maximum(x, y):
    return np.maximum(x, y)


def f_minimum(x, y):
    return np.minimum(x, y)


def f_fmax(x, y):
    return np.fmax(x, y)


def f_fmin(x, y):
    return np.fmin(x, y)


def f_remainder(x, y):
    return np.remainder(x, y)


def f_mod(x, y):
    return np.mod(x, y)


def f_fmod(x, y):
    return np.fmod(x, y)


def f_op_mod(x, y):
    return operator.mod(x, y)


def f_op_mul(x, y):
    return operator.mul(x, y)


def f_op_pow(x, y):
    return x**y


def f_op_div(x, y):
    return x / y


def f_copysign(x, y):
    return np.copysign(x, y)


for _f in (f_add, f_subtract, f_multiply, f_logaddexp, f_logaddexp2, f_hypot, f_arctan2):
    T.add(_f, r(3, 1), r(1, 4))
for _f in (f_maximum, f_minimum, f_fmax, f_fmin, f_op_mul):
    T.add(_f, r(1, 4), r(3, 4))
for _f in (f_divide, f_true_divide, f_op_div):
    T.add(_f, r(3, 4), u(0.3, 2.0, 4))
    T.add(_f, r(3, 4), -u(0.3, 2.0, 3, 1))
for _f in (f_power, f_float_power, f_op_pow):
    T.add(_f, u(0.7, 2.0, 3, 4), r(4))
for _f in (f_remainder, f_mod, f_fmod, f_op_mod):
    T.add(_f, u(-0.9, 0.9, 3, 4), u(1.1, 1.9, 4))
T.add(f_mod, u(0.1, 0.9, 4), -u(1.3, 2.0, 4))
T.add(f_copysign, u(0.5, 2.0, 4), np.array([-1.0, 2.0, -0.5, 0.3]))

# --- products and contractions ---------------------------------------------------------


def f_dot(x, y):
    return np.dot(x, y)


def f_inner(x, y):
    return np.inner(x, y)


def f_outer(x, y):
    return np.outer(x, y)


def f_matmul(x, y):
    return np.matmul(x, y)


def f_matmul_op(x, y):
    return x @ y


def f_vdot(x, y):
    return np.vdot(x, y)


def f_kron(x, y):
    return np.kron(x, y)


def f_tensordot_1(x, y):
    return np.tensordot(x, y, axes=[(1,), (0,)])


def f_tensordot_2(x, y):
    return np.tensordot(x, y, axes=[(0, 1), (1, 2)])


def f_tensordot_int(x, y):
    return np.tensordot(x, y, 2)


def f_tensordot_0(x, y):
    return np.tensordot(x, y, axes=0)


def f_tensordot_neg(x, y):
    return np.tensordot(x, y, axes=[[-1], [0]])


def f_einsum_transpose(x):
    return np.einsum("ij->ji", x)


def f_einsum_matmul(x, y):
    return np.einsum("ij,jk->ik", x, y)


def f_einsum_batch(x, y):
    return np.einsum("...ij,...jk->...ik", x, y)


def f_einsum_cov(x, y):
    return np.einsum("ijk,lji->lki", x, y)


def f_einsum_three(x, y, z):
    return np.einsum("ijk,lji,lli->lki", x, y, z)


def f_einsum_trace(x):
    return np.einsum("ii", x)


def f_einsum_sublists(x, y):
    return np.einsum(x, [0, 1], y, [1, 2], [0, 2])


for _f in (f_dot, f_matmul, f_matmul_op):
    T.add(_f, r(2, 3), r(3, 4))
T.add(f_dot, r(3), r(3))
T.add(f_dot, r(2, 2, 3), r(2, 3, 4))
T.add(f_dot, 1.5, r(3))
T.add(f_matmul, r(2, 2, 3), r(2, 3, 4))
T.add(f_matmul, r(3), r(3, 4))
T.add(f_inner, r(2, 3), r(4, 3))
T.add(f_outer, r(3), r(4))
T.add(f_vdot, r(2, 3), r(2, 3))
T.add(f_kron, r(3, 3), r(2, 2))
T.add(f_tensordot_1, r(2, 3, 2), r(3, 4, 2))
T.add(f_tensordot_2, r(2, 3, 4), r(2, 2, 3, 4))
T.add(f_tensordot_int, r(2, 2), r(2, 2, 4))
T.add(f_tensordot_0, r(4), r(3))
T.add(f_tensordot_neg, r(2, 6), r(6, 3))
T.add(f_einsum_transpose, r(3, 4))
T.add(f_einsum_matmul, r(2, 3), r(3, 4))
T.add(f_einsum_batch, r(2, 2, 3), r(2, 3, 4))
T.add(f_einsum_cov, r(3, 4, 4), r(4, 4, 3))
T.add(f_einsum_three, r(3, 4, 4), r(4, 4, 3), r(4, 4, 3))
T.add(f_einsum_trace, r(4, 4))
T.add(f_einsum_sublists, r(2, 3), r(3, 4))
