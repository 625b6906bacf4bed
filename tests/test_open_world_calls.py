"""NumPy calls users bring that had no rule: ``np.apply_along_axis`` (the loop it runs,
differentiated through ``func1d``'s source) and ``divmod``/``np.divmod`` (floor division
and remainder). Checked against finite differences in reverse and forward mode and the
Hessian-vector product, and against autograd where it reaches.
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest
import scipy.stats

import s2s_ad
from tests.fd import numerical_grad
from tests.test_open_world import _check, _close

RS = np.random.RandomState(11)


def row_softmax_nll(logits, labels):
    probs = np.apply_along_axis(
        lambda r: np.exp(r - r.max()) / np.sum(np.exp(r - r.max())), 1, logits
    )
    return -np.sum(np.log(probs[np.arange(len(labels)), labels]))


def robust_scale(x):
    """A column statistic written for one column, applied along axis 0."""
    return np.apply_along_axis(lambda c: np.sqrt(np.mean((c - np.mean(c)) ** 2) + 1e-3), 0, x)


def standardized(x):
    return np.sum(((x - np.mean(x, axis=0)) / robust_scale(x)) ** 3)


def _poly_features(r, degree):
    return np.concatenate([r**k for k in range(1, degree + 1)])


def feature_energy(x, w):
    feats = np.apply_along_axis(_poly_features, -1, x, 3)
    return np.sum(np.tanh(feats @ w))


def column_loglik(mu, X):
    return np.sum(np.apply_along_axis(lambda c: scipy.stats.norm.logpdf(c, mu, 1.5).sum(), 0, X))


def test_apply_along_axis_with_a_lambda_reducing_each_row():
    logits, labels = RS.randn(4, 3), np.array([0, 2, 1, 2])
    got = _check(row_softmax_nll, (logits, labels), second=False)

    def by_hand(z):
        import autograd.numpy as anp

        p = anp.exp(z - anp.max(z, axis=1, keepdims=True))
        p = p / anp.sum(p, axis=1, keepdims=True)
        return -anp.sum(anp.log(p[anp.arange(4), labels]))

    _close(got, autograd.grad(by_hand)(logits))


def test_apply_along_axis_0_with_a_column_statistic():
    x = RS.randn(6, 3)
    _check(standardized, (x,))


def test_apply_along_the_last_axis_with_extra_arguments_and_a_vector_result():
    x, w = RS.randn(2, 3, 2), RS.randn(6, 2)
    assert np.apply_along_axis(_poly_features, -1, x, 3).shape == (2, 3, 6)
    _check(feature_energy, (x, w))
    _check(feature_energy, (x, w), wrt=1)

    def by_hand(x, w):  # the features written out, for autograd
        import autograd.numpy as anp

        feats = anp.concatenate([x, x**2, x**3], axis=-1)
        return anp.sum(anp.tanh(feats @ w))

    _close(s2s_ad.grad(feature_energy)(x, w), autograd.grad(by_hand)(x, w))


def test_apply_along_axis_of_a_scipy_likelihood():
    X = RS.randn(5, 2)
    _check(column_loglik, (0.3, X))
    _check(column_loglik, (0.3, X), wrt=1)


def wrapped_phase(theta, period):
    turns, phase = divmod(theta, period)
    return np.sum(np.sin(phase) ** 2 + 0.1 * turns * phase)


def np_divmod_residual(x, y):
    q, r = np.divmod(x, y)
    return np.sum(r**2 * y + q)


@pytest.mark.parametrize("wrt", [0, 1])
def test_divmod_of_arrays_and_of_python_floats(wrt):
    theta = np.array([0.3, 4.0, 7.1, -2.2])  # away from the jumps of the quotient
    _check(wrapped_phase, (theta, 2.5), wrt=wrt)
    _check(np_divmod_residual, (theta, np.array([0.7, 1.1, 2.0, 0.9])), wrt=wrt)
    _check(wrapped_phase, (5.3, 2.0), wrt=wrt)
    _close(
        s2s_ad.grad(np_divmod_residual, wrt)(theta, np.array([0.7, 1.1, 2.0, 0.9])),
        numerical_grad(np_divmod_residual, (theta, np.array([0.7, 1.1, 2.0, 0.9])), wrt),
    )
