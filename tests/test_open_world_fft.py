"""``np.fft`` in differentiated functions: spectral losses, filters applied in the
frequency domain, 2-d transforms of images. The transforms are linear maps with their
transposes as rules; the complex values they make may reach sums, shapes, arithmetic,
``exp``/``log`` and ``np.abs``/``real``/``imag``/``conj`` (rules of their own), and what
else receives one is refused. Checked against finite differences in reverse and forward
mode, and against autograd (which has the same convention for complex values).
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.fd import numerical_grad
from tests.test_open_world import _close, _twin

RS = np.random.RandomState(17)


def _first_order(fun, args, wrt=0):
    """Reverse mode against finite differences, forward mode against reverse mode."""
    got = s2s_ad.grad(fun, wrt)(*args)
    _close(got, numerical_grad(fun, args, wrt), 1e-5)
    x = args[wrt]
    v = np.linspace(0.3, 1.1, np.size(x)).reshape(np.shape(x))

    def along(y):
        return fun(*args[:wrt], y, *args[wrt + 1 :])

    _, tangent = s2s_ad.jvp(along, (x,), (v,))
    _close(tangent, np.sum(got * v), 1e-6)
    return got


def power_spectrum_loss(x, target):
    """Match the power spectrum of a signal to a target."""
    power = np.abs(np.fft.rfft(x)) ** 2 / len(x)
    return np.sum((np.log1p(power) - target) ** 2)


def filtered_energy(x, h):
    """Filter in the frequency domain with a real transfer function, then the energy."""
    y = np.fft.ifft(np.fft.fft(x) * h)
    return np.sum(np.real(y) ** 2) + 0.1 * np.sum(np.imag(y) ** 2)


def smooth_by_rfft(x, keep):
    spectrum = np.fft.rfft(x, norm="ortho")
    smooth = np.fft.irfft(spectrum * keep, n=len(x), norm="ortho")
    return np.sum((smooth - x) ** 2) + np.sum(smooth**4)


def image_spectrum(img, weights):
    F = np.fft.fft2(img)
    return np.sum(weights * np.real(F * np.conj(F))) / img.size + np.sum(np.imag(F) * weights)


def attribute_forms(x):
    F = np.fft.fft(x)
    return np.sum(F.real**2 - F.imag * x) + np.sum(np.real(F.conj() * F)) + np.sum(abs(F))


def real_image_spectrum(img):
    F = np.fft.rfftn(img)
    back = np.fft.irfftn(F * np.exp(-np.abs(F) / 10.0), s=img.shape)
    return np.sum(back**2)


def test_power_spectrum_loss():
    x, target = RS.randn(16), RS.randn(9)
    got = _first_order(power_spectrum_loss, (x, target))
    _close(got, autograd.grad(_twin(power_spectrum_loss))(x, target))


@pytest.mark.parametrize("wrt", [0, 1])
def test_filter_in_the_frequency_domain(wrt):
    x, h = RS.randn(12), RS.rand(12)
    got = _first_order(filtered_energy, (x, h), wrt)
    _close(got, autograd.grad(_twin(filtered_energy), wrt)(x, h))


@pytest.mark.parametrize("n", [10, 11])
def test_rfft_and_irfft_with_a_mask(n):
    x, keep = RS.randn(n), RS.rand(n // 2 + 1)
    _first_order(smooth_by_rfft, (x, keep))
    _first_order(smooth_by_rfft, (x, keep), wrt=1)


def test_two_dimensional_transforms():
    img, weights = RS.randn(4, 6), RS.rand(4, 6)
    got = _first_order(image_spectrum, (img, weights))
    _close(got, autograd.grad(_twin(image_spectrum))(img, weights))
    _first_order(image_spectrum, (img, weights), wrt=1)
    _first_order(real_image_spectrum, (RS.randn(4, 6),))


def test_attributes_methods_and_builtin_abs_of_complex_values():
    _first_order(attribute_forms, (RS.randn(7),))


def norm_of_spectrum(x):
    return np.linalg.norm(np.fft.fft(x))


def spectrum_out(x):
    return np.fft.fft(x)


def spectrum_to_helper(x):
    return np.sum(_helper(np.fft.fft(x)))


def _helper(z):
    return np.abs(z)


@pytest.mark.parametrize(
    ("fun", "construct"),
    [
        (norm_of_spectrum, "call to np.linalg.norm with a complex value"),
        (spectrum_out, "a complex result"),
        (spectrum_to_helper, "call to _helper with a complex value"),
    ],
)
def test_what_complex_values_may_not_reach_is_refused(fun, construct):
    with pytest.raises(TransformError, match=construct) as info:
        s2s_ad.grad(fun)(RS.randn(6))
    assert "test_open_world_fft.py" in str(info.value)


def test_second_derivatives_through_the_transforms_are_refused_by_name():
    x, target = RS.randn(8), RS.randn(5)
    with pytest.raises(TransformError, match="second derivatives through complex values"):
        s2s_ad.hvp(lambda v: power_spectrum_loss(v, target))(x, np.ones(8))
