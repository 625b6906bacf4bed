"""``np.cross``, ``np.rollaxis``, ``np.partition``, ``np.compress``, ``np.ptp``,
``np.astype``, ``np.real_if_close``, ``np.fft.fftshift``/``ifftshift`` and the methods
``x.take``, ``x.compress``, ``x.cumprod`` (which autograd differentiates and which were
refused before) in user programs: both modes against finite differences, second order,
and autograd as a second oracle."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import s2s_ad

RNG = np.random.default_rng(3)
POS = RNG.standard_normal((5, 3))
VEL = RNG.standard_normal((5, 3))
MASS = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
IMAGES = RNG.standard_normal((2, 4, 3, 2))  # batch, height, width, channels
KERNEL = RNG.standard_normal((2, 3))


def angular_momentum_energy(pos, vel):
    """Squared total angular momentum of point masses (rows are particles)."""
    ang = MASS[:, None] * np.cross(pos, vel)
    total = np.sum(ang, axis=0)
    return np.dot(total, total)


def triangle_areas(pts):
    """Areas of planar triangles from 2-D vertices (np.cross of 2-vectors is a scalar)."""
    e1 = pts[1:] - pts[:-1]
    e2 = pts[2:] - pts[:-2]
    return np.sum(0.5 * np.cross(e1[:-1], e2) ** 2)


def normals_columns(frame):
    """Vectors stored in columns (axis=0), crossed against a constant direction."""
    n = np.cross(frame, np.array([0.3, -0.2, 1.0])[:, None], axis=0)
    return np.sum(np.tanh(n) * frame)


class ChannelsFirst:
    """A Keras-style layer that moves channels to the front with ``np.rollaxis``."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __call__(self, images: Any) -> Any:
        chw = np.rollaxis(images, 3, 1)  # (batch, channels, height, width)
        mixed = np.einsum("bchw,cw->bh", chw, self.kernel)
        return np.sum(np.sin(mixed) ** 2)


def channels_first(images):
    return ChannelsFirst(KERNEL)(images)


def top_k_loss(scores):
    """Hinge on the two largest scores of each row, selected with np.partition."""
    part = np.partition(scores, -2, axis=1)
    top = part[:, -2:]
    return np.sum(np.maximum(top - 0.1, 0.0) ** 2) + np.sum(part[:, 0] ** 2)


def median_like(x):
    n = x.shape[0]
    mid = np.partition(x, [n // 2, n // 2 + 1])
    return mid[n // 2] ** 2 + mid[n // 2 + 1] * mid[0]


def cast_and_fix(x):
    y = np.astype(x, np.float64) * np.real_if_close(x)
    return np.sum(y**2)


def normalized_range(batch):
    """Min-max scaling of each feature column (np.ptp), on the rows a mask keeps."""
    kept = np.compress(batch[:, 0] > -1.0, batch, axis=0)
    scaled = (kept - np.min(kept, axis=0)) / np.ptp(kept, axis=0)
    return np.sum(scaled**2 * np.arange(1.0, 4.0)) + np.ptp(batch) ** 2


def method_calls(x):
    """The array-method spellings: ``x.take``, ``x.compress``, ``x.cumprod``."""
    rows = x.take([0, 2, 2, -1], axis=0)
    cols = x.compress([True, False, True], axis=1)
    growth = (1.0 + 0.1 * x).cumprod(axis=0)
    return np.sum(rows**2) + np.sum(np.sin(cols)) + np.sum(growth[-1])


def centered_kernel(k):
    """A kernel stored with its origin first, centred with ``np.fft.fftshift`` and back."""
    centered = np.fft.fftshift(k, axes=1)
    weights = np.exp(-(np.linspace(-1.0, 1.0, k.shape[1]) ** 2))
    back = np.fft.ifftshift(centered * weights)
    return np.sum(back * np.cos(k)) + np.sum(np.fft.fftshift(k) ** 3)


SCORES = RNG.standard_normal((3, 6))
PTS = RNG.standard_normal((6, 2))

CASES = [
    (angular_momentum_energy, (POS, VEL)),
    (triangle_areas, (PTS,)),
    (normals_columns, (POS[:3].T.copy(),)),
    (channels_first, (IMAGES,)),
    (top_k_loss, (SCORES,)),
    (median_like, (np.cos(np.arange(1.0, 8.0)),)),
    (normalized_range, (POS,)),
    (method_calls, (POS,)),
    (centered_kernel, (RNG.standard_normal((3, 5)),)),
]
if hasattr(np, "astype"):
    CASES.append((cast_and_fix, (POS,)))
IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize(("fun", "args"), CASES, ids=IDS)
def test_both_modes(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, modes=("rev", "fwd"))


@pytest.mark.parametrize(("fun", "args"), CASES, ids=IDS)
def test_second_order(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, order=2)


def test_astype_to_integer_cuts_the_gradient() -> None:
    if not hasattr(np, "astype"):
        pytest.skip("np.astype needs NumPy >= 2.1")

    def f(x):
        return np.sum(np.astype(x * 3.0, np.int64) * x)

    x = np.array([0.4, 1.2, -0.9])
    np.testing.assert_allclose(s2s_ad.grad(f)(x), np.astype(x * 3.0, np.int64))


autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


def test_against_autograd() -> None:
    import autograd

    def ang(pos: Any, vel: Any) -> Any:
        total = anp.sum(MASS[:, None] * anp.cross(pos, vel), axis=0)
        return anp.dot(total, total)

    def roll(images: Any) -> Any:
        chw = anp.rollaxis(images, 3, 1)
        return anp.sum(anp.sin(anp.einsum("bchw,cw->bh", chw, KERNEL)) ** 2)

    def median(x: Any) -> Any:  # autograd's partition: one-dimensional arrays only
        n = x.shape[0]
        mid = anp.partition(x, [n // 2, n // 2 + 1])
        return mid[n // 2] ** 2 + mid[n // 2 + 1] * mid[0]

    def methods(x: Any) -> Any:  # the same through indexing (autograd's take has no VJP)
        rows = x[np.array([0, 2, 2, -1])]
        cols = x[:, np.array([0, 2])]
        last = anp.prod(1.0 + 0.1 * x, axis=0)  # the last row of the cumulative product
        return anp.sum(rows**2) + anp.sum(anp.sin(cols)) + anp.sum(last)

    def shifted(k: Any) -> Any:
        centered = anp.fft.fftshift(k, axes=1)
        weights = np.exp(-(np.linspace(-1.0, 1.0, k.shape[1]) ** 2))
        back = anp.fft.ifftshift(centered * weights)
        return anp.sum(back * anp.cos(k)) + anp.sum(anp.fft.fftshift(k) ** 3)

    for ours, theirs, args in [
        (angular_momentum_energy, ang, (POS, VEL)),
        (channels_first, roll, (IMAGES,)),
        (median_like, median, (np.cos(np.arange(1.0, 8.0)),)),
        (method_calls, methods, (POS,)),
        (centered_kernel, shifted, (SCORES,)),
    ]:
        for i in range(len(args)):
            np.testing.assert_allclose(
                s2s_ad.grad(ours, i)(*args), autograd.grad(theirs, i)(*args), rtol=1e-10
            )
