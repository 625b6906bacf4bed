"""Shape manipulation, indexing and construction, as in autograd's systematic tests."""

from __future__ import annotations

import numpy as np

from .common import Table

T = Table("np", seed=2)
r = T.r


def f_transpose(x):
    return np.transpose(x, (2, 0, 1))


def f_transpose_none(x):
    return np.transpose(x)


def f_swapaxes(x):
    return np.swapaxes(x, 0, 2)


def f_moveaxis(x):
    return np.moveaxis(x, 0, -1)


def f_rollaxis(x):
    return np.rollaxis(x, 2, 1)


def f_repeat(x):
    return np.repeat(x, 2, axis=1)


def f_repeat_flat(x):
    return np.repeat(x, 3)


def f_tile(x):
    return np.tile(x, (2, 1, 3))


def f_diff(x):
    return np.diff(x, n=2, axis=0)


def f_diff_last(x):
    return np.diff(x)


def f_ediff1d(x):
    return np.ediff1d(x)


def f_ediff1d_ends(x, a, b):
    return np.ediff1d(x, to_end=b, to_begin=a)


def f_sort(x):
    return np.sort(x)


def f_partition(x):
    return np.partition(x, 3)


def f_atleast_1d(x):
    return np.atleast_1d(x)


def f_atleast_2d(x):
    return np.atleast_2d(x)


def f_atleast_3d(x):
    return np.atleast_3d(x)


def f_trace(x):
    return np.trace(x, offset=1)


def f_diag(x):
    return np.diag(x, k=-1)


def f_diag_make(x):
    return np.diag(x, k=1)


def f_diagflat(x):
    return np.diagflat(x)


def f_diagflat_k(x):
    return np.diagflat(x, -1)


def f_diagonal(x):
    return np.diagonal(x, axis1=-1, axis2=-2)


def f_tril(x):
    return np.tril(x, k=-1)


def f_triu(x):
    return np.triu(x, k=1)


def f_cross(x, y):
    return np.cross(x, y)


def f_cross_axes(x, y):
    return np.cross(x, y, axisa=0, axisb=1, axisc=0)


def f_split(x):
    a, b = np.split(x, 2, axis=1)
    return a * b


def f_split_at(x):
    return np.split(x, [1, 3], axis=0)


def f_array_split(x):
    return np.array_split(x, 3, axis=1)


def f_vsplit(x):
    return np.vsplit(x, [1, 2])


def f_hsplit(x):
    return np.hsplit(x, 2)


def f_dsplit(x):
    return np.dsplit(x, 2)


def f_concatenate(x, y):
    return np.concatenate((x, y, x), axis=1)


def f_concatenate_list(x, y):
    return np.concatenate([x, y])


def f_vstack(x, y):
    return np.vstack((x, y))


def f_hstack(x, y):
    return np.hstack([x, y])


def f_dstack(x, y):
    return np.dstack((x, y))


def f_stack(x, y):
    return np.stack([x, y], axis=1)


def f_column_stack(x, y):
    return np.column_stack((x, y))


def f_row_stack(x, y):
    return np.vstack((x, y))


def f_block(x, y):
    return np.block([[x, y], [y, x]])


def f_block_rows(x, y):
    return np.block([x, y])


def f_select(x, y):
    return np.select([x > 0, y > 0], [x, y], default=1.1)


def f_where(x, y):
    return np.where(x > y, x, y)


def f_choose(x, y):
    return np.choose(np.array([0, 1, 1, 0]), [x, y])


def f_flipud(x):
    return np.flipud(x)


def f_fliplr(x):
    return np.fliplr(x)


def f_flip(x):
    return np.flip(x, axis=1)


def f_rot90(x):
    return np.rot90(x)


def f_roll(x):
    return np.roll(x, 2, axis=1)


def f_roll_flat(x):
    return np.roll(x, -3)


def f_reshape(x):
    return np.reshape(x, (4, 6))


def f_reshape_method(x):
    return x.reshape(4, 6)


def f_reshape_f(x):
    return np.reshape(x, (4, 6), order="F")


def f_reshape_method_f(x):
    return x.reshape((6, 4), order="F")


def f_ravel(x):
    return np.ravel(x)


def f_ravel_f(x):
    return np.ravel(x, order="F")


def f_ravel_method_f(x):
    return x.ravel("F")


def f_flatten(x):
    return x.flatten()


def f_flatten_f(x):
    return x.flatten(order="F")


def f_squeeze(x):
    return np.squeeze(x)


def f_squeeze_method(x):
    return x.squeeze()


def f_expand_dims(x):
    return np.expand_dims(x, 1)


def f_broadcast_to(x):
    return np.broadcast_to(x, (3, 4))


def f_broadcast_arrays(x, y):
    a, b = np.broadcast_arrays(x, y)
    return a * b + a


def f_pad(x):
    return np.pad(x, ((1, 2), (0, 1)))


def f_clip(x):
    return np.clip(x, -0.5, 0.7)


def f_clip_kw(x):
    return np.clip(x, a_min=0.1, a_max=1.1)


def f_index(x):
    return x[3, 0, 1]


def f_index_slice(x):
    return x[::-1, 2:4, :]


def f_index_list(x):
    return x[[0, 1, 2], :, :]


def f_index_mixed(x):
    return x[3, 2:, [1, 3]]


def f_index_repeat(x):
    return x[[0, 1, 0]]


def f_fanout(x):
    return x[::-1, 2:4, :] + x[::-1, 3:5, :]


def f_array(x):
    return np.array([[x, x * 1.0, x + 2.5], [x**2, x, x / 2.0]])


def f_array_of_arrays(x):
    return np.array([[2 * x, x + 1], [x, x]])


def f_r_(x):
    return np.r_[x, np.ones(3), x]


def f_c_(x):
    return np.c_[x, np.ones(3), x]


def f_linspace(x, y):
    return np.linspace(x, y, 5)


def f_full(x):
    return np.full((2, 3), x)


def f_sum_list(x, y):
    return sum([x, y])


def f_meshgrid(x, y):
    a, b = np.meshgrid(x, y)
    return a * b


for _f in (f_transpose, f_transpose_none, f_swapaxes, f_moveaxis, f_rollaxis, f_repeat):
    T.add(_f, r(2, 3, 4))
for _f in (f_repeat_flat, f_tile, f_diff, f_diff_last, f_sort, f_atleast_3d, f_dsplit):
    T.add(_f, r(4, 3, 2))
T.add(f_ediff1d, r(2, 3))
T.add(f_ediff1d_ends, r(5), r(2), r(1))
T.add(f_partition, r(7))
for _f in (f_atleast_1d, f_atleast_2d, f_atleast_3d):
    T.add(_f, 1.2)
    T.add(_f, r(3))
T.add(f_atleast_1d, r(2, 4))
for _f in (f_trace, f_diag, f_tril, f_triu, f_fliplr, f_flipud, f_flip, f_rot90, f_roll):
    T.add(_f, r(4, 5))
for _f in (f_diag_make, f_diagflat, f_roll_flat, f_ravel):
    T.add(_f, r(4))
T.add(f_diagflat_k, r(2, 2))
T.add(f_diagonal, r(3, 4, 4))
T.add(f_tril, r(5, 5, 4))
T.add(f_cross, r(4, 3), r(4, 3))
T.add(f_cross_axes, r(3, 2), r(2, 3))
for _f in (f_split, f_array_split, f_hsplit):
    T.add(_f, r(4, 6))
for _f in (f_split_at, f_vsplit):
    T.add(_f, r(4, 4, 4))
for _f in (f_concatenate, f_concatenate_list, f_vstack, f_hstack, f_dstack, f_stack):
    T.add(_f, r(2, 3), r(2, 3))
for _f in (f_column_stack, f_row_stack, f_block_rows, f_broadcast_arrays):
    T.add(_f, r(3), r(3))
T.add(f_block, r(2, 2), r(2, 2))
T.add(f_broadcast_arrays, r(3, 1), r(4))
T.add(f_select, r(3, 4), r(3, 4))
T.add(f_where, r(4, 5), r(4, 5))
T.add(f_choose, r(4), r(4))
for _f in (f_reshape, f_reshape_method, f_reshape_f, f_reshape_method_f, f_ravel_f):
    T.add(_f, r(2, 3, 4))
for _f in (f_ravel_method_f, f_flatten, f_flatten_f):
    T.add(_f, r(2, 3, 4))
T.add(f_ravel_f, np.asfortranarray(r(3, 4)))
for _f in (f_squeeze, f_squeeze_method, f_expand_dims):
    T.add(_f, r(5, 1, 4))
T.add(f_broadcast_to, r(4))
T.add(f_pad, r(3, 2))
T.add(f_clip, r(5, 5))
T.add(f_clip_kw, r(5, 5))
for _f in (f_index, f_index_slice, f_index_list, f_index_mixed, f_fanout):
    T.add(_f, r(5, 6, 4))
T.add(f_index_repeat, r(3))
T.add(f_array, 3.0)
T.add(f_array_of_arrays, r(3, 2))
T.add(f_r_, r(3))
T.add(f_c_, r(3))
T.add(f_linspace, 1.2, 3.4)
T.add(f_full, 0.7)
T.add(f_sum_list, r(3, 2), r(3, 2))
T.add(f_meshgrid, r(3), r(4))
