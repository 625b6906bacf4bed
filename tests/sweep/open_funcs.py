"""Functions users call that JAX's and autograd's test lists do not reach, or reach only
as a single call: running extrema (``np.maximum.accumulate``), ``statistics`` and ``copy``
of lists of numbers and arrays, and the corpus functions inside the code that uses them
(a polynomial least-squares loss with ``np.vander``, a Toeplitz convolution matrix, a
block-diagonal linear layer, a condition-number penalty)."""

from __future__ import annotations

import copy
import statistics

import numpy as np
import scipy.linalg as sla

from .common import Table

T = Table("open", seed=23)
r, u = T.r, T.u


def f_running_max(x):
    return np.maximum.accumulate(x)


def f_running_min_rows(x):
    return np.minimum.accumulate(x, axis=1)


def f_drawdown(prices):
    """The largest fall from a running peak (a portfolio's maximum drawdown)."""
    peak = np.maximum.accumulate(prices)
    return np.max((peak - prices) / peak)


def f_stat_mean(x):
    return statistics.mean([x[0], x[1] * 2.0, x[2]])


def f_stat_fmean_weights(x):
    return statistics.fmean([x[0], x[1], x[2]], weights=[1.0, 2.0, 0.5])


def f_stat_stdev(x):
    return statistics.stdev([x[0], x[1], x[2], x[3]]) + statistics.pvariance([x[1], x[2]])


def f_copy_params(w, b):
    params = [w, b]
    saved = copy.deepcopy(params)
    shallow = copy.copy(params)
    return np.sum(saved[0] @ shallow[1]) + np.sum(copy.copy(w) ** 2)


def f_vander_fit_loss(coef, x, y):
    """Mean squared error of a polynomial with coefficients ``coef`` at points ``x``."""
    design = np.vander(x, len(coef))
    residual = design @ coef - y
    return np.mean(residual**2)


def f_polyfit_smooth(y):
    """Smooth noisy samples by a quadratic least-squares fit and evaluate it."""
    t = np.linspace(0.0, 1.0, len(y))
    coef = np.polyfit(t, y, 2)
    return np.polyval(coef, t)


def f_polyfit_knots(x, y):
    return np.polyfit(x, y, 1)


def f_toeplitz_conv(kernel, signal):
    """Causal convolution of ``signal`` with ``kernel`` as a Toeplitz matrix product."""
    n = len(signal)
    column = np.concatenate([kernel, np.zeros(n - len(kernel))])
    row = np.concatenate([kernel[:1], np.zeros(n - 1)])
    return sla.toeplitz(column, row) @ signal


def f_block_diag_layer(w1, w2, x):
    """Two independent linear maps as one block-diagonal weight matrix."""
    return np.tanh(sla.block_diag(w1, w2) @ x)


def f_cond_penalty(w, x):
    return np.sum((w @ x) ** 2) + 0.1 * np.linalg.cond(w)


def f_cond_fro(w):
    return np.linalg.cond(w, "fro")


def f_insert_bias(x, bias):
    """Prepend a bias column to a design matrix."""
    return np.insert(x, 0, bias, axis=1)


def f_delete_outlier(x):
    return np.mean(np.delete(x, [1, 3]) ** 2)


def f_logspace_grid(a, b):
    return np.logspace(a, b, 5, base=2.0)


def f_geomspace_grid(a):
    return np.geomspace(a, 8.0 * a, 4)


def f_lu_factors(a):
    p, lower, upper = sla.lu(a)
    return lower @ upper


def f_logm_spd(a):
    return np.trace(sla.logm(a @ a.T + np.eye(3)))


T.add(f_running_max, np.array([0.3, 1.2, -0.5, 2.0, 1.1, 2.6]))
T.add(f_running_min_rows, np.array([[0.5, -0.2, 0.4, -1.1], [1.3, 1.5, 0.2, 0.9]]))
T.add(f_drawdown, np.array([1.0, 1.3, 1.1, 0.8, 1.5, 1.2]))
T.add(f_stat_mean, r(3))
T.add(f_stat_fmean_weights, r(3))
T.add(f_stat_stdev, r(4))
T.add(f_copy_params, r(3, 2), r(2))
T.add(f_vander_fit_loss, r(3), u(-1.0, 1.0, 6), r(6))
T.add(f_polyfit_smooth, r(7))
T.add(f_polyfit_knots, np.array([0.1, 0.4, 0.8, 1.3, 1.7]), r(5))
T.add(f_toeplitz_conv, r(3), r(6))
T.add(f_block_diag_layer, r(2, 2), r(3, 3), r(5))
T.add(f_cond_penalty, r(3, 3) + 3.0 * np.eye(3), r(3))
T.add(f_cond_fro, r(3, 3) + 3.0 * np.eye(3))
T.add(f_insert_bias, r(4, 2), 0.5)
T.add(f_delete_outlier, r(5))
T.add(f_logspace_grid, 0.3, 1.7)
T.add(f_geomspace_grid, 1.5)
T.add(f_lu_factors, r(3, 3))
T.add(f_logm_spd, r(3, 3))


def f_clipped_peak(x):
    return np.max(x, axis=1, initial=0.0) + np.min(x, initial=1.0)


T.add(f_clipped_peak, np.array([[0.3, -1.2, 0.8], [-0.5, -0.4, -2.0]]))


def f_flat_reads(x):
    m = x.reshape(2, 3)
    return m.flat[1] * m.flat[4] + np.sum(m.flat[2:] ** 2)


T.add(f_flat_reads, r(6))
