"""Simulations and pricing as scientists and quants write them in NumPy: an N-body system
stepped by leapfrog, an SIR epidemic by Euler steps on Python floats, the Lorenz system by
RK4 on a state built with ``np.array([...])`` of scalars, a double pendulum with the
``math`` module, particles bouncing in a box by ``np.where`` reflections, rays shaded by
spheres, an American put on a binomial tree by backward induction, and Monte Carlo
Black-Scholes and Asian prices by pathwise differentiation with fixed normal draws.
"""

from __future__ import annotations

import math

import numpy as np

from programs_real import Program


def nbody_accelerations(pos, masses, soft=0.1):
    diff = pos[None, :, :] - pos[:, None, :]
    inv_r3 = (np.sum(diff**2, axis=-1) + soft**2) ** -1.5
    return np.sum(diff * (masses[None, :] * inv_r3)[:, :, None], axis=1)


def nbody_leapfrog(pos, vel, masses, dt=0.02, steps=8):
    acc = nbody_accelerations(pos, masses)
    for _ in range(steps):
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
        acc = nbody_accelerations(pos, masses)
        vel = vel + 0.5 * dt * acc
    kinetic = 0.5 * np.sum(masses[:, None] * vel**2)
    return kinetic + np.sum(pos[0] ** 2)


def sir_fit(log_rates, observed, dt=0.1):
    beta, gamma = np.exp(log_rates[0]), np.exp(log_rates[1])
    s, i, r = 0.99, 0.01, 0.0
    loss = 0.0
    for step in range(len(observed) * 5):
        new_inf = beta * s * i * dt
        new_rec = gamma * i * dt
        s, i, r = s - new_inf, i + new_inf - new_rec, r + new_rec
        if step % 5 == 4:
            loss += (i - observed[step // 5]) ** 2
    return loss


def lorenz(state, sigma, rho, beta):
    x, y, z = state
    return np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])


def lorenz_rk4(params, x0, dt=0.01, steps=20):
    sigma, rho, beta = params
    s = x0
    for _ in range(steps):
        k1 = lorenz(s, sigma, rho, beta)
        k2 = lorenz(s + 0.5 * dt * k1, sigma, rho, beta)
        k3 = lorenz(s + 0.5 * dt * k2, sigma, rho, beta)
        k4 = lorenz(s + dt * k3, sigma, rho, beta)
        s = s + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(s**2)


def double_pendulum(theta1, theta2, length_ratio, steps=30, dt=0.01):
    w1, w2 = 0.0, 0.0
    g = 9.81
    for _ in range(steps):
        delta = theta1 - theta2
        den = 2.0 - math.cos(2 * delta)
        a1 = (
            -g * (2 * math.sin(theta1) + math.sin(theta1 - 2 * theta2))
            - 2 * math.sin(delta) * (w2**2 * length_ratio + w1**2 * math.cos(delta))
        ) / den
        a2 = (
            2
            * math.sin(delta)
            * (2 * w1**2 + 2 * g * math.cos(theta1) + w2**2 * length_ratio * math.cos(delta))
        ) / (length_ratio * den)
        w1 += dt * a1
        w2 += dt * a2
        theta1 += dt * w1
        theta2 += dt * w2
    return math.cos(theta1) + length_ratio * math.cos(theta2)


def particles_in_box(pos, vel, dt=0.05, steps=12):
    for _ in range(steps):
        pos = pos + dt * vel
        over = pos > 1.0
        under = pos < 0.0
        pos = np.where(over, 2.0 - pos, np.where(under, -pos, pos))
        vel = np.where(over | under, -vel, vel)
        vel = vel - dt * 0.3 * vel
    return np.sum((pos - 0.5) ** 2) + 0.1 * np.sum(vel**2)


def shade_spheres(centers, radii, origins, directions, light):
    total = 0.0
    for c, r in zip(centers, radii):
        oc = origins - c
        b = np.sum(oc * directions, axis=1)
        disc = b**2 - (np.sum(oc**2, axis=1) - r**2)
        hit = disc > 0
        t = -b - np.sqrt(np.maximum(disc, 1e-12))
        point = origins + t[:, None] * directions
        normal = (point - c) / r
        brightness = np.maximum(normal @ light, 0.0)
        total = total + np.sum(np.where(hit, brightness, 0.0))
    return total


def american_put(S, K, T, r, sigma, n=25):
    dt = T / n
    u = np.exp(sigma * np.sqrt(dt))
    d = 1.0 / u
    p = (np.exp(r * dt) - d) / (u - d)
    disc = np.exp(-r * dt)
    prices = S * u ** np.arange(n, -1, -1) * d ** np.arange(0, n + 1)
    values = np.maximum(K - prices, 0.0)
    for _ in range(n - 1, -1, -1):
        prices = prices[:-1] * d
        cont = disc * (p * values[:-1] + (1 - p) * values[1:])
        values = np.maximum(cont, K - prices)
    return values[0]


def mc_call(S, sigma, z, K=1.0, T=1.0, r=0.01):
    ST = S * np.exp((r - 0.5 * sigma**2) * T + sigma * np.sqrt(T) * z)
    return np.exp(-r * T) * np.mean(np.maximum(ST - K, 0.0))


def mc_asian(S, sigma, z, K=1.0, T=1.0, r=0.01):
    n_paths, n_steps = z.shape
    dt = T / n_steps
    paths = np.zeros((n_paths, n_steps))
    s = S * np.ones(n_paths)
    for k in range(n_steps):
        s = s * np.exp((r - 0.5 * sigma**2) * dt + sigma * np.sqrt(dt) * z[:, k])
        paths[:, k] = s
    return np.exp(-r * T) * np.mean(np.maximum(paths.mean(axis=1) - K, 0.0))


_rs = np.random.RandomState(5)
_pos = np.array([[0.0, 0.0], [1.0, 0.1], [-0.2, 0.9], [0.7, -0.8]])
_rays = _rs.randn(16, 3) * 0.2 + np.array([0.0, 0.0, 1.0])
_rays = _rays / np.linalg.norm(_rays, axis=1, keepdims=True)

ALL = ("grad", "vg", "fwd", "hvp")

PROGRAMS = [
    Program(
        "nbody_leapfrog",
        (_pos, 0.3 * _rs.randn(4, 2), np.array([1.0, 0.5, 0.8, 0.3])),
        wrt=(0, 2),
        checks=ALL,
    ),
    Program(
        "sir_fit",
        (np.log(np.array([1.5, 0.4])), np.array([0.012, 0.015, 0.017, 0.02, 0.023, 0.026])),
        checks=ALL,
    ),
    Program(
        "lorenz_rk4", (np.array([10.0, 28.0, 8.0 / 3.0]), np.array([1.0, 1.0, 1.0])), checks=ALL
    ),
    Program(
        "double_pendulum",
        (1.0, 0.5, 0.8),
        wrt=(0, 1, 2),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # math.sin of autograd's boxes
    ),
    Program("double_pendulum", (1.0, 0.5, 0.8), checks=("gradgrad",), autograd=False, tag="second"),
    Program(
        "particles_in_box",
        (_rs.rand(5, 2), _rs.randn(5, 2)),
        wrt=(0, 1),
        checks=ALL,
    ),
    Program(
        "shade_spheres",
        (
            np.array([[0.0, 0.0, 3.0], [0.5, 0.2, 4.0]]),
            np.array([0.8, 0.6]),
            np.zeros((16, 3)),
            _rays,
            np.array([0.3, 0.5, -0.8]),
        ),
        wrt=(0, 1),
        checks=ALL,
    ),
    Program(
        "american_put",
        (1.0, 1.05, 0.5, 0.03, 0.25),
        wrt=(0, 4),
        checks=("grad", "vg", "fwd"),
    ),
    Program("mc_call", (1.0, 0.3, _rs.randn(200)), wrt=(0, 1), checks=ALL),
    Program(
        "mc_asian",
        (1.0, 0.3, _rs.randn(50, 6)),
        wrt=(0, 1),
        checks=ALL,
        autograd=False,  # writes paths[:, k]
    ),
]
