"""Programs in the style of autograd's ``examples/`` directory, written as a user would bring
them with plain ``numpy``/``scipy`` (the autograd twin of this module reads the same source
with ``autograd.numpy``/``autograd.scipy``, as the examples import them).

What they exercise beyond the other themes: factories returning closures over a covariance
function (the GP and deep GP), a Stam-style smoke simulation with ``np.meshgrid``, integer
indices from ``np.floor(...).astype(int)`` and ``np.mod`` and in-place ``-=`` on fresh
arrays, ``zip(*unpack(params))`` over a dict of stacked parameters, a Student-t ICA
likelihood with every parameter differentiated, ``map``/``functools.partial`` recursion over
a list of sequences, a fixed-point iteration handed a step factory, a GAN objective with
both networks differentiated, and a neural ODE integrated by RK4.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import scipy.stats
from scipy.special import gammaln, logsumexp

from programs_real import Program

# --- smoke simulation (Stam's stable fluids, small grid) ----------------------------------


def project(vx, vy):
    """Make the velocity field roughly divergence free with a few Jacobi sweeps."""
    p = np.zeros(vx.shape)
    h = 1.0 / vx.shape[0]
    div = (
        -0.5
        * h
        * (
            np.roll(vx, -1, axis=0)
            - np.roll(vx, 1, axis=0)
            + np.roll(vy, -1, axis=1)
            - np.roll(vy, 1, axis=1)
        )
    )
    for _ in range(6):
        p = (
            div
            + np.roll(p, 1, axis=0)
            + np.roll(p, -1, axis=0)
            + np.roll(p, 1, axis=1)
            + np.roll(p, -1, axis=1)
        ) / 4.0
    vx -= 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy -= 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def advect(field, vx, vy):
    """Carry ``field`` along the velocity: bilinear interpolation at the departure points."""
    rows, cols = field.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()
    left = np.floor(center_xs).astype(int)
    top = np.floor(center_ys).astype(int)
    right_w = center_xs - left
    bottom_w = center_ys - top
    left = np.mod(left, rows)
    right = np.mod(left + 1, rows)
    top = np.mod(top, cols)
    bottom = np.mod(top + 1, cols)
    flat = (1 - right_w) * ((1 - bottom_w) * field[left, top] + bottom_w * field[left, bottom])
    flat = flat + right_w * ((1 - bottom_w) * field[right, top] + bottom_w * field[right, bottom])
    return np.reshape(flat, (rows, cols))


def plot_matrix(ax, mat, t):
    ax.cla()
    ax.matshow(mat)
    ax.set_title(f"step {t}")


def simulate(vx, vy, smoke, steps, ax=None):
    for t in range(steps):
        if ax:
            plot_matrix(ax, smoke, t)
        vx_moved = advect(vx, vx, vy)
        vy_moved = advect(vy, vx, vy)
        vx, vy = project(vx_moved, vy_moved)
        smoke = advect(smoke, vx, vy)
    return smoke


def smoke_objective(params, init_smoke, target):
    """Distance of the final smoke to a target, as a function of the initial velocities."""
    rows, cols = target.shape
    vx = np.reshape(params[: rows * cols], (rows, cols))
    vy = np.reshape(params[rows * cols :], (rows, cols))
    final = simulate(vx, vy, init_smoke, 3)
    return np.mean((target - final) ** 2)


# --- Gaussian processes built by a factory of closures ------------------------------------


def make_gp_funs(cov_func, num_cov_params):
    """Predict and log marginal likelihood of a GP with covariance ``cov_func``."""

    def unpack_kernel_params(params):
        mean = params[0]
        cov_params = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def predict(params, x, y, xstar):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_f_f = cov_func(cov_params, xstar, xstar)
        cov_y_f = cov_func(cov_params, x, xstar)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        pred_mean = mean + np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, y - mean)
        pred_cov = cov_f_f - np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, cov_y_f)
        return pred_mean, pred_cov

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        prior_mean = mean * np.ones(len(y))
        return scipy.stats.multivariate_normal.logpdf(y, prior_mean, cov_y_y)

    return num_cov_params + 2, predict, log_marginal_likelihood


def ard_rbf(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs**2, axis=2))


NUM_GP_PARAMS, gp_predict, gp_log_marginal = make_gp_funs(ard_rbf, num_cov_params=3)
_, gp1_predict, gp1_log_marginal = make_gp_funs(ard_rbf, num_cov_params=2)


def gp_objective(params, X, y):
    return -gp_log_marginal(params, X, y)


def gp_posterior_summary(params, X, y, xs):
    """Predictive mean energy plus total predictive variance at test inputs."""
    pred_mean, pred_cov = gp_predict(params, X, y, xs)
    return np.sum(pred_mean**2) + np.trace(pred_cov)


def expected_improvement(xstar, params, X, y):
    """Bayesian optimisation's acquisition, differentiated in the query points."""
    pred_mean, pred_cov = gp_predict(params, X, y, xstar)
    std = np.sqrt(np.diag(pred_cov))
    z = (np.min(y) - pred_mean) / std
    return np.sum(std * (z * scipy.stats.norm.cdf(z) + scipy.stats.norm.pdf(z)))


def deep_gp_objective(all_params, X, y):
    """Two GP layers, the hidden values being parameters: X -> h -> y."""
    layer1 = all_params[:4]
    layer2 = all_params[4:8]
    h = all_params[8:]
    first = gp1_log_marginal(layer1, X, h)
    second = gp1_log_marginal(layer2, np.atleast_2d(h).T, y)
    return -(first + second)


# --- a Gaussian mixture with a dict of stacked parameters ---------------------------------


def log_normalize(x):
    return x - logsumexp(x)


def unpack_gmm_params(params):
    normalized = log_normalize(params["log proportions"])
    return normalized, params["means"], params["lower triangles"]


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*unpack_gmm_params(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt)
        cluster_lls.append(log_proportion + scipy.stats.multivariate_normal.logpdf(data, mean, cov))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


# --- independent component analysis with Student-t noise ----------------------------------


def make_ica_funs(observed_dimension, latent_dimension, n_samples):
    num_weights = observed_dimension * latent_dimension

    def unpack_params(params):
        weights = np.reshape(params[:num_weights], (observed_dimension, latent_dimension))
        latents = np.reshape(
            params[num_weights : num_weights + latent_dimension * n_samples],
            (latent_dimension, n_samples),
        )
        noise_std = np.exp(params[-1])
        return weights, latents, noise_std

    def logprob(weights, latents, noise_std, observed):
        preds = np.dot(weights, latents).T
        return np.sum(scipy.stats.t.logpdf(preds, 2.4, observed, noise_std))

    def objective(params, observed):
        weights, latents, noise_std = unpack_params(params)
        return -logprob(weights, latents, noise_std, observed) / n_samples

    return objective


ica_objective = make_ica_funs(4, 2, 6)


# --- HMM log partition over a list of sequences (map + partial recursion) ------------------


def hmm_log_partition(natural_params, data):
    if isinstance(data, list):
        return sum(map(partial(hmm_log_partition, natural_params), data))
    log_pi, log_A, log_B = natural_params
    log_alpha = log_pi
    for y in data:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]
    return logsumexp(log_alpha)


# --- negative binomial likelihood -----------------------------------------------------------


def negbin_loglike(r, p, x):
    return gammaln(r + x) - gammaln(r) - gammaln(x + 1) + x * np.log(p) + r * np.log(1 - p)


def negbin_total(rp, x):
    return np.sum(negbin_loglike(rp[0], rp[1], x))


# --- a fixed point handed a factory of steps ------------------------------------------------


def newton_sqrt_iter(a):
    return lambda x: 0.5 * (x + a / x)


def distance(x, y):
    return np.abs(x - y)


def fixed_point(make_step, a, x0, tol=1e-10):
    step = make_step(a)
    x, prev = step(x0), x0
    while distance(x, prev) > tol:
        x, prev = step(x), x
    return x


def sqrt_by_fixed_point(a):
    return fixed_point(newton_sqrt_iter, a, 10.0)


def sqrt_by_newton(a, tol=1e-10):
    """The same iteration with the step factory called where the loop runs."""
    step = newton_sqrt_iter(a)
    x, prev = step(10.0), 10.0
    while distance(x, prev) > tol:
        x, prev = step(x), x
    return x


# --- a GAN objective ------------------------------------------------------------------------


def leaky_relu(x):
    return np.where(x > 0, x, 0.01 * x)


def neural_net_predict(params, inputs):
    inpts = inputs
    for W, b in params:
        outputs = np.dot(inpts, W) + b
        inpts = leaky_relu(outputs)
    return outputs


def logsigmoid(x):
    return x - np.logaddexp(0, x)


def gan_objective(gen_params, dsc_params, real_data, noise):
    fake_data = neural_net_predict(gen_params, noise)
    logprobs_fake = logsigmoid(neural_net_predict(dsc_params, fake_data))
    logprobs_real = logsigmoid(neural_net_predict(dsc_params, real_data))
    return np.mean(logprobs_real) - np.mean(logprobs_fake)


# --- a neural ODE integrated by RK4 --------------------------------------------------------


def nn_dynamics(state, t, params):
    inputs = np.append(state, t)
    hidden = np.tanh(np.dot(inputs, params[0][0]) + params[0][1])
    return np.dot(hidden, params[1][0]) + params[1][1]


def rk4_integrate(dynamics, y0, ts, params):
    ys = [y0]
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        dt = t1 - t0
        k1 = dynamics(y, t0, params)
        k2 = dynamics(y + dt * k1 / 2, t0 + dt / 2, params)
        k3 = dynamics(y + dt * k2 / 2, t0 + dt / 2, params)
        k4 = dynamics(y + dt * k3, t1, params)
        y = y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        ys.append(y)
    return np.stack(ys)


def ode_net_loss(params, y0, ts, targets):
    return np.mean((rk4_integrate(nn_dynamics, y0, ts, params) - targets) ** 2)


# --- data -------------------------------------------------------------------------------------

_rs = np.random.RandomState(8)
_rows = 5
_smoke0 = np.exp(-((np.arange(_rows)[:, None] - 2.0) ** 2 + (np.arange(_rows)[None, :] - 1.5) ** 2))
_target = np.roll(_smoke0, 1, axis=1)
_Xgp = _rs.randn(6, 2)
_ygp = np.sin(_Xgp[:, 0]) + 0.1 * _rs.randn(6)
_gp_params = 0.1 * _rs.randn(NUM_GP_PARAMS)
_X1 = np.linspace(-2, 2, 6)[:, None]
_y1 = np.sign(_X1[:, 0]) + 0.1 * _rs.randn(6)
_gmm = {
    "log proportions": 0.1 * _rs.randn(3),
    "means": _rs.randn(3, 2),
    "lower triangles": np.eye(2) + 0.2 * _rs.randn(3, 2, 2),
}
_ica_data = _rs.randn(6, 4)
_hmm = (0.3 * _rs.randn(3), 0.3 * _rs.randn(3, 3), 0.3 * _rs.randn(3, 4))
_seqs = [np.array([0, 1, 3, 2]), np.array([2, 2, 1]), np.array([3, 0])]
_counts = np.array([3.0, 7.0, 1.0, 4.0, 9.0, 2.0, 5.0])


def _layers(sizes, scale):
    return [(scale * _rs.randn(m, n), scale * _rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]


_gen = _layers([2, 5, 2], 0.5)
_dsc = _layers([2, 4, 1], 0.5)
_ts = np.linspace(0.0, 1.0, 5)
_ode = [(0.5 * _rs.randn(3, 4), 0.1 * _rs.randn(4)), (0.5 * _rs.randn(4, 2), 0.1 * _rs.randn(2))]

ALL = ("grad", "vg", "fwd", "hvp")

PROGRAMS = [
    Program(
        "smoke_objective",
        (0.4 * _rs.randn(2 * _rows * _rows), _smoke0, _target),
        checks=("grad", "vg", "fwd"),
        xfail=dict.fromkeys(
            ("grad", "vg", "fwd"),
            "project writes its argument in place (vx -= ...) and is called with "
            "vx_moved, which it does not rebind: refused, since the caller's array would "
            "change behind the derivative (exact only if no other name shares it)",
        ),
    ),
    Program("gp_objective", (_gp_params, _Xgp, _ygp), checks=ALL),
    Program("gp_posterior_summary", (_gp_params, _Xgp, _ygp, _rs.randn(3, 2)), checks=ALL),
    Program(
        "expected_improvement",
        (_rs.randn(3, 2), _gp_params, _Xgp, _ygp),
        checks=ALL,
        tag="query",
    ),
    Program(
        "expected_improvement",
        (_rs.randn(3, 2), _gp_params, _Xgp, _ygp),
        wrt=1,
        checks=("grad", "fwd"),
        tag="hyper",
    ),
    Program("deep_gp_objective", (0.1 * _rs.randn(14), _X1, _y1), checks=ALL),
    Program("gmm_log_likelihood", (_gmm, _rs.randn(8, 2)), checks=ALL),
    Program("ica_objective", (0.5 * _rs.randn(4 * 2 + 2 * 6 + 1), _ica_data), checks=ALL),
    Program("hmm_log_partition", (_hmm, _seqs), checks=ALL),
    Program("negbin_total", (np.array([2.5, 0.4]), _counts), checks=ALL),
    Program("sqrt_by_fixed_point", (2.0,), checks=("grad", "vg", "fwd", "gradgrad")),
    Program("sqrt_by_newton", (2.0,), checks=("grad", "vg", "fwd", "gradgrad")),
    Program("sqrt_by_newton", (0.3,), checks=("grad", "gradgrad"), tag="small"),
    Program(
        "gan_objective", (_gen, _dsc, _rs.randn(6, 2), _rs.randn(6, 2)), wrt=(0, 1), checks=ALL
    ),
    Program("ode_net_loss", (_ode, _rs.randn(2), _ts, _rs.randn(5, 2)), checks=ALL),
]
