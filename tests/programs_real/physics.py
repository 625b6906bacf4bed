"""Physics: a periodic spring chain with ``np.roll``, Lennard-Jones energy from pairwise
distances by broadcasting, a pendulum integrated with in-place state updates, a heat
equation stencil with slice updates, and a catenary energy with a Lagrange penalty."""

from __future__ import annotations

import numpy as np

from programs_real import Program


def spring_chain_energy(x, k, rest):
    """Closed ring of particles in the plane: springs between neighbours via np.roll."""
    d = np.roll(x, -1, axis=0) - x
    lengths = np.sqrt(np.sum(d**2, axis=1))
    return 0.5 * np.sum(k * (lengths - rest) ** 2)


def lennard_jones(pos, eps=1.0, sigma=1.0):
    """Total LJ energy from all pairwise distances (upper triangle by a mask)."""
    diff = pos[:, None, :] - pos[None, :, :]
    n = pos.shape[0]
    r2 = np.sum(diff**2, axis=-1) + np.eye(n)
    inv6 = (sigma**2 / r2) ** 3
    e = 4 * eps * (inv6**2 - inv6)
    mask = np.triu(np.ones((n, n)), 1)
    return np.sum(e * mask)


def pendulum_inplace(params, theta0):
    """Semi-implicit Euler on a damped pendulum, trajectory stored by ``traj[i] = ...``."""
    g_over_l, damping = params[0], params[1]
    n = 40
    traj = np.zeros((n, 2))
    traj[0, 0] = theta0
    for i in range(1, n):
        th, om = traj[i - 1, 0], traj[i - 1, 1]
        om_new = om - 0.05 * (g_over_l * np.sin(th) + damping * om)
        traj[i, 1] = om_new
        traj[i, 0] = th + 0.05 * om_new
    return np.sum(traj[:, 0] ** 2) / n


def heat_stencil(u0, alpha):
    """Explicit heat-equation steps with interior slice assignment on a copy."""
    u = u0.copy()
    for _ in range(10):
        lap = u[:-2] - 2 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + alpha * lap
    return np.sum(u**2 * np.linspace(0.0, 1.0, u.shape[0]))


def accumulate_forces(pos, k):
    """Pairwise spring forces accumulated with ``f[i] += ...`` in a double loop."""
    n = pos.shape[0]
    f = np.zeros_like(pos)
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[j] - pos[i]
            f[i] += k * d
            f[j] -= k * d
    return np.sum(f**2) + np.sum(np.cos(pos))


def catenary_energy(y, penalty):
    """Hanging chain heights ``y`` with ends pinned; length kept near 1.2 by a penalty."""
    full = np.concatenate([np.array([0.0]), y, np.array([0.0])])
    h = 1.0 / (full.shape[0] - 1)
    seg = np.sqrt(h**2 + np.diff(full) ** 2)
    potential = np.sum(seg * 0.5 * (full[1:] + full[:-1]))
    return potential + penalty * (np.sum(seg) - 1.2) ** 2


_rs = np.random.RandomState(11)
_ring = np.stack(
    [
        np.cos(np.linspace(0, 2 * np.pi, 6, endpoint=False)),
        np.sin(np.linspace(0, 2 * np.pi, 6, endpoint=False)),
    ],
    axis=1,
)
_lj = np.array([[0.0, 0.0, 0.0], [1.1, 0.1, 0.0], [0.2, 1.2, 0.1], [1.0, 1.1, 0.9]])

PROGRAMS = [
    Program(
        "spring_chain_energy",
        (_ring + 0.1 * _rs.randn(6, 2), 1.0 + _rs.rand(6), 0.9),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("lennard_jones", (_lj,), checks=("grad", "vg", "fwd", "hvp"), rtol=1e-5, atol=1e-6),
    Program(
        "pendulum_inplace",
        (np.array([9.8, 0.2]), 0.8),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # array item assignment
    ),
    Program(
        "heat_stencil",
        (np.sin(np.linspace(0, np.pi, 9)), 0.2),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,
    ),
    Program(
        "accumulate_forces",
        (_rs.randn(4, 2), 0.7),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,
    ),
    Program(
        "catenary_energy",
        (-0.2 * np.sin(np.linspace(0.3, 2.8, 7)), 10.0),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
]
