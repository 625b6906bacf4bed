"""Non-ASCII identifiers (Greek letters in scientific code) in every generated program."""

from __future__ import annotations

import numpy as np
from fd import numerical_grad

import s2s_ad


def gaussian_nll(μ, σ, data):
    def z_score(x):
        return (x - μ) / σ

    total = 0.0
    for x in data:
        ζ = z_score(x)
        total = total + 0.5 * ζ**2 + np.log(σ)
    λ = 1e-2
    return total + λ * μ**2


DATA = np.array([0.3, -1.2, 0.8, 2.1])


def test_grad_and_vjp_and_jvp_of_greek_names():
    μ, σ = 0.4, 1.3
    want = numerical_grad(gaussian_nll, (μ, σ, DATA), (0, 1))
    got = s2s_ad.grad(gaussian_nll, (0, 1))(μ, σ, DATA)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    _, pullback = s2s_ad.vjp(lambda m, s: gaussian_nll(m, s, DATA), μ, σ)
    np.testing.assert_allclose(pullback(1.0), want, rtol=1e-6)
    _, tangent = s2s_ad.jvp(lambda m, s: gaussian_nll(m, s, DATA), (μ, σ), (1.0, 0.0))
    np.testing.assert_allclose(tangent, want[0], rtol=1e-6)
    assert "ζ_bar" in s2s_ad.source(s2s_ad.grad(gaussian_nll, (0, 1)))


def test_html_view_keeps_greek_names():
    page = s2s_ad.html(s2s_ad.grad(gaussian_nll, (0, 1)))
    assert "σ_bar" in page
