"""Every transform of a function with ``*args``: positions count the call's arguments (as
in JAX and autograd). ``jvp``, ``vjp``, ``jacobian``, ``hessian``, ``hvp`` and
``elementwise_grad`` gave an IndexError or silently wrong numbers (a Hessian entry 0.0,
a Jacobian against the wrong argument) before the fixed-arity functions of
:mod:`s2s_ad.varargs`."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.testing import check_grads

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

rng = np.random.default_rng(11)


def pair_energy(*positions):
    """Lennard-Jones-like energy of points passed one per argument."""
    e = 0.0
    for i in range(len(positions)):
        for j in range(i + 1, len(positions)):
            r2 = np.sum((positions[i] - positions[j]) ** 2)
            e = e + 1.0 / r2**3 - 1.0 / r2
    return e


def ag_pair_energy(*positions):
    e = 0.0
    for i in range(len(positions)):
        for j in range(i + 1, len(positions)):
            r2 = anp.sum((positions[i] - positions[j]) ** 2)
            e = e + 1.0 / r2**3 - 1.0 / r2
    return e


def weighted_batches(w, *batches, scale=1.0):
    """A loss over any number of batches sharing the weights ``w``."""
    total = 0.0
    for xb in batches:
        total = total + np.sum(np.tanh(xb @ w) ** 2)
    return scale * total


def ag_weighted_batches(w, *batches, scale=1.0):
    total = 0.0
    for xb in batches:
        total = total + anp.sum(anp.tanh(anp.dot(xb, w)) ** 2)
    return scale * total


def gated(*xs):
    return np.sin(xs[0]) * xs[1]


def ag_gated(*xs):
    return anp.sin(xs[0]) * xs[1]


POINTS = (np.array([0.0, 0.1]), np.array([1.2, 0.0]), np.array([0.3, 1.1]))
W = rng.normal(size=3) * 0.5
BATCHES = (rng.normal(size=(4, 3)), rng.normal(size=(2, 3)))


@pytest.mark.parametrize("pos", [0, 1, 2])
def test_hessian_and_hvp_inside_star_args(pos: int) -> None:
    expected = autograd.hessian(ag_pair_energy, pos)(*POINTS)
    np.testing.assert_allclose(s2s_ad.hessian(pair_energy, pos)(*POINTS), expected, rtol=1e-9)
    v = rng.normal(size=2)
    np.testing.assert_allclose(s2s_ad.hvp(pair_energy, pos)(*POINTS, v), expected @ v, rtol=1e-9)


def test_jvp_and_vjp_of_star_args() -> None:
    tangents = tuple(rng.normal(size=2) for _ in POINTS)
    value, tangent_out = s2s_ad.jvp(pair_energy, POINTS, tangents)
    grads = autograd.grad(ag_pair_energy, (0, 1, 2))(*POINTS)
    assert value == pytest.approx(ag_pair_energy(*POINTS))
    assert tangent_out == pytest.approx(sum(g @ t for g, t in zip(grads, tangents)))
    out, pullback = s2s_ad.vjp(pair_energy, *POINTS)
    for g, expected in zip(pullback(2.0), grads):
        np.testing.assert_allclose(g, 2.0 * expected, rtol=1e-9)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("pos", [0, 1])
def test_jacobian_of_star_args(mode: str, pos: int) -> None:
    a, b = rng.normal(size=3), rng.normal(size=3)
    expected = autograd.jacobian(ag_gated, pos)(a, b)
    np.testing.assert_allclose(s2s_ad.jacobian(gated, pos, mode=mode)(a, b), expected)
    egrad = autograd.elementwise_grad(ag_gated, pos)(a, b)
    np.testing.assert_allclose(s2s_ad.elementwise_grad(gated, pos)(a, b), egrad)


def test_named_parameter_before_star_args_with_a_keyword() -> None:
    expected = autograd.hessian(ag_weighted_batches)(W, *BATCHES, scale=0.5)
    got = s2s_ad.hessian(weighted_batches)(W, *BATCHES, scale=0.5)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    # another number of batches: another fixed-arity function
    three = (*BATCHES, rng.normal(size=(3, 3)))
    expected = autograd.hessian(ag_weighted_batches)(W, *three)
    np.testing.assert_allclose(s2s_ad.hessian(weighted_batches)(W, *three), expected, rtol=1e-9)
    jac = s2s_ad.jacobian(weighted_batches, 1, mode="fwd")(W, *BATCHES, scale=0.5)
    np.testing.assert_allclose(jac, autograd.grad(ag_weighted_batches, 1)(W, *BATCHES, scale=0.5))


def test_finite_differences_both_modes() -> None:
    check_grads(pair_energy, POINTS, modes=("rev", "fwd"))
    check_grads(weighted_batches, (W, *BATCHES), modes=("rev", "fwd"))


def test_transformed_star_function_cannot_be_differentiated_again() -> None:
    h = s2s_ad.hessian(pair_energy)
    assert h.__name__ == "pair_energy"
    with pytest.raises(s2s_ad.TransformError, match="hessian"):
        s2s_ad.grad(lambda p, q, r: np.sum(h(p, q, r)))(*POINTS)
