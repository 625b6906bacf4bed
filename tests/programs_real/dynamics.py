"""Dynamical systems and iterative solvers: a Kalman filter, ODEs integrated by Euler and
RK4 with a step function from a factory, Newton's method calling ``grad`` inside, a
fixed-point iteration with a tolerance, and a recursive polynomial evaluation."""

from __future__ import annotations

import numpy as np

from programs_real import Program
from s2s_ad import grad


def kalman_neg_log_lik(log_q, log_r, A, H, ys):
    """Negative log-likelihood of observations under a linear-Gaussian state space model."""
    n = A.shape[0]
    Q = np.exp(log_q) * np.eye(n)
    R = np.exp(log_r)
    m = np.zeros(n)
    P = np.eye(n)
    nll = 0.0
    for y in ys:
        m = A @ m
        P = A @ P @ A.T + Q
        s = H @ P @ H + R
        k = P @ H / s
        resid = y - H @ m
        nll = nll + 0.5 * (np.log(2 * np.pi * s) + resid**2 / s)
        m = m + k * resid
        P = P - np.outer(k, H @ P)
    return nll


def kalman_broadcast(log_q, log_r, A, H, ys):
    """The same filter with the covariance update written by broadcasting, not np.outer."""
    n = A.shape[0]
    Q, R = np.exp(log_q) * np.eye(n), np.exp(log_r)
    m, P = np.zeros(n), np.eye(n)
    nll = 0.0
    for y in ys:
        m, P = A @ m, A @ P @ A.T + Q
        s = H @ P @ H + R
        k = P @ H / s
        resid = y - H @ m
        nll += 0.5 * (np.log(2 * np.pi * s) + resid**2 / s)
        m, P = m + k * resid, P - k[:, None] * (H @ P)[None, :]
    return nll


def make_step(params, dt):
    """Euler step of a damped oscillator with parameters ``(k, c)``."""
    k, c = params[0], params[1]

    def step(state):
        x, v = state[0], state[1]
        return np.array([x + dt * v, v + dt * (-k * x - c * v)])

    return step


def euler_final_energy(params, state0):
    step = make_step(params, 0.05)
    state = state0
    for _ in range(30):
        state = step(state)
    return 0.5 * state[1] ** 2 + 0.5 * params[0] * state[0] ** 2


def lotka_volterra(theta, z):
    a, b, c, d = theta
    prey, pred = z[0], z[1]
    return np.array([a * prey - b * prey * pred, d * prey * pred - c * pred])


def rk4_fit(theta, z0, observed):
    """Classic RK4 on Lotka-Volterra; squared error against observations every 5 steps."""
    h = 0.05
    z = z0
    loss = 0.0
    for i in range(20):
        k1 = lotka_volterra(theta, z)
        k2 = lotka_volterra(theta, z + 0.5 * h * k1)
        k3 = lotka_volterra(theta, z + 0.5 * h * k2)
        k4 = lotka_volterra(theta, z + h * k3)
        z = z + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if i % 5 == 4:
            loss = loss + np.sum((z - observed[i // 5]) ** 2)
    return loss


def potential(x, a):
    return np.sum(a * x**4 - x**2 + 0.3 * x)


def newton_minimize(a, x0):
    """A few Newton steps on ``potential`` using its gradient (grad called inside)."""
    dpot = grad(potential)
    x = x0
    for _ in range(4):
        g = dpot(x, a)
        h = 12 * a * x**2 - 2.0
        x = x - g / h
    return potential(x, a)


def fixed_point_sqrt(c):
    """Babylonian iteration for sqrt(c) stopped by a tolerance (while loop)."""
    x = c
    delta = 1.0
    while delta > 1e-12:
        new = 0.5 * (x + c / x)
        delta = abs(new - x)
        x = new
    return x * np.sin(x)


def horner(coeffs, x):
    """Recursive Horner evaluation of a polynomial."""
    if len(coeffs) == 1:
        return coeffs[0]
    return coeffs[0] + x * horner(coeffs[1:], x)


def poly_fit_loss(coeffs, xs, ys):
    return np.sum((horner(coeffs, xs) - ys) ** 2)


def grad_norm_penalty(w, x, y):
    """Loss plus the squared norm of its input gradient (double backprop), grad inside."""
    dx = grad(sq_loss, 1)(w, x, y)
    return sq_loss(w, x, y) + 0.1 * np.sum(dx**2)


def sq_loss(w, x, y):
    return np.sum((np.tanh(x @ w) - y) ** 2)


_rs = np.random.RandomState(9)
_A = np.array([[1.0, 0.1], [0.0, 0.95]])
_Hobs = np.array([1.0, 0.0])

_OUTER = (
    "crash (ValueError in generated gradient): np.outer's VJP `g @ np.ravel(b)` gets the "
    "scalar zero cotangent 0.0 of a loop-carried P on the last trip (rules/arrays.py outer)"
)

PROGRAMS = [
    Program(
        "kalman_neg_log_lik",
        (-1.0, -0.5, _A, _Hobs, _rs.randn(8)),
        wrt=(0, 1, 2),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "kalman_broadcast",
        (-1.0, -0.5, _A, _Hobs, _rs.randn(8)),
        wrt=(0, 1, 2),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "euler_final_energy",
        (np.array([2.0, 0.3]), np.array([1.0, 0.0])),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "rk4_fit",
        (np.array([1.0, 0.5, 0.8, 0.3]), np.array([1.0, 0.5]), 0.5 + _rs.rand(4, 2)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "newton_minimize",
        (np.array([0.5, 0.8]), np.array([1.2, -1.1])),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("fixed_point_sqrt", (2.5,), checks=("grad", "vg", "fwd", "gradgrad")),
    Program(
        "poly_fit_loss",
        (np.array([0.5, -1.0, 0.3, 0.2]), _rs.randn(6), _rs.randn(6)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "grad_norm_penalty",
        (_rs.randn(3), _rs.randn(5, 3), _rs.randn(5)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
]
