"""In-place writes at a computed index inside loops: the backward sweep undoes each write
at the index of its own trip (the index temporary is recomputed there, not the last
trip's value), through ``grad`` and through a ``vjp`` pullback's separate sweeps."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad


def relax_until(x):
    """Cyclic relaxation of three coupled values until their sum reaches a level."""
    y = x.copy()
    k = 0
    while np.sum(y) < 10.0:
        y[k % 3] *= y[(k + 1) % 3] + 1.0
        k += 1
    return np.sum(y**2)


def gauss_seidel(A, b, x0, sweeps):
    """Gauss-Seidel sweeps written element by element."""
    x = x0.copy()
    n = len(b)
    for _ in range(sweeps):
        for i in range(n):
            r = b[i] - A[i] @ x + A[i, i] * x[i]
            x[i] = r / A[i, i]
    return np.sum(x * x)


def ring(x, n):
    y = x.copy()
    for k in range(n):
        y[k % 3] = y[k % 3] * np.sin(y[(k + 1) % 3]) + 1.0
    return np.sum(y**2)


POINTS = [np.array([0.5, 1.2, 0.8]), np.array([0.3, 0.2, 0.1])]


@pytest.mark.parametrize("x", POINTS)
def test_while_loop_write_at_computed_index(x):
    want = numerical_grad(relax_until, (x,), 0)
    np.testing.assert_allclose(s2s_ad.grad(relax_until)(x), want, rtol=1e-6)
    _, pullback = s2s_ad.vjp(relax_until, x)
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-6)


@pytest.mark.parametrize("x", POINTS)
def test_for_loop_write_at_computed_index(x):
    want = numerical_grad(ring, (x, 7), 0)
    np.testing.assert_allclose(s2s_ad.grad(ring)(x, 7), want, rtol=1e-6)
    _, pullback = s2s_ad.vjp(lambda x: ring(x, 7), x)
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-6)


def test_gauss_seidel_with_respect_to_matrix_and_right_hand_side():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(4, 4)) + 6.0 * np.eye(4)
    b, x0 = rng.normal(size=4), np.zeros(4)
    got = s2s_ad.grad(gauss_seidel, (0, 1))(A, b, x0, 3)
    want = numerical_grad(gauss_seidel, (A, b, x0, 3), (0, 1))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)
