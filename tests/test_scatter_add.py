"""``np.add.at`` (and ``np.subtract.at``) into a buffer made inside the differentiated
function: embedding bags, segment sums, histograms weighted by differentiated values.

The normal form rebinds the buffer to ``_ad.scatter_add(buf, idx, v)`` (``s2s_ad/scatter.py``);
its adjoint is the gather ``buf_bar[idx]``. Each program is checked against central finite
differences in reverse and forward mode (and its Hessian-vector product), with the optimizer
on and off, and against autograd running the same computation written with a one-hot
matrix (autograd has no gradient for ``np.add.at``). A buffer another name sees is refused.
"""

from __future__ import annotations

import types
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.fd import numerical_grad
from tests.user_checks import check_program
from tests.user_checks import close as _close

RS = np.random.RandomState(11)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0) -> Any:
    return check_program(fun, args, wrt, rs=RS, twin=None)


TOKENS = np.array([0, 3, 3, 1, 4, 2, 0, 3])
BAGS = np.array([0, 0, 1, 1, 1, 2, 2, 2])
N_BAGS = 3


# --- an embedding bag feeding an MLP --------------------------------------------------------


def bag_classifier(params, tokens, bags, targets):
    """Mean of each bag's token embeddings (a scatter-add), then a tanh MLP over
    ``[(W, b), ...]`` and a softmax cross-entropy."""
    table, layers = params
    counts = np.zeros(N_BAGS)
    np.add.at(counts, bags, 1.0)
    sums = np.zeros((N_BAGS, table.shape[1]))
    np.add.at(sums, bags, table[tokens])
    h = sums / counts[:, None]
    for W, b in layers[:-1]:
        h = np.tanh(h @ W + b)
    W, b = layers[-1]
    logits = h @ W + b
    logits = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.sum(log_probs * targets, axis=1))


def bag_classifier_onehot(params, tokens, bags, targets):
    """The same model with the bag sums as a one-hot matrix product (autograd's twin)."""
    table, layers = params
    assign = (bags[None, :] == np.arange(N_BAGS)[:, None]) * 1.0
    h = (assign @ table[tokens]) / np.sum(assign, axis=1)[:, None]
    for W, b in layers[:-1]:
        h = np.tanh(h @ W + b)
    W, b = layers[-1]
    logits = h @ W + b
    logits = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.sum(log_probs * targets, axis=1))


def _twin(fun: Any) -> Any:
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__)


def _params() -> tuple[Any, ...]:
    table = RS.randn(5, 4)
    layers = [(0.5 * RS.randn(4, 6), 0.1 * RS.randn(6)), (0.5 * RS.randn(6, 3), RS.randn(3))]
    return (table, layers), TOKENS, BAGS, np.eye(3)[[2, 0, 1]]


def test_embedding_bag_mlp_against_finite_differences_and_autograd():
    args = _params()
    got = _check(bag_classifier, args)
    want = autograd.grad(_twin(bag_classifier_onehot))(*args)
    _close(got, want, 1e-10)
    # rows of the table no token names get no gradient
    assert got[0].shape == args[0][0].shape


def segment_energy(x, segments, weights):
    """Segment sums written with ``np.add.at`` and ``np.subtract.at`` inside an inner
    function, in a loop that rebuilds the buffer at every step."""

    def pooled(v):
        out = np.zeros(4)
        np.add.at(out, segments, weights * v)
        np.subtract.at(out, segments[::-1], 0.5 * v**2)
        return out

    total = 0.0
    h = x
    for _ in range(3):
        s = pooled(h)
        total = total + np.sum(np.sin(s) ** 2)
        h = h * np.cos(s[segments])
    return total


def segment_energy_onehot(x, segments, weights):
    total = 0.0
    h = x
    onehot = (segments[None, :] == np.arange(4)[:, None]) * 1.0
    flipped = (segments[::-1][None, :] == np.arange(4)[:, None]) * 1.0
    for _ in range(3):
        s = onehot @ (weights * h) - flipped @ (0.5 * h**2)
        total = total + np.sum(np.sin(s) ** 2)
        h = h * np.cos(s[segments])
    return total


def test_subtract_at_in_an_inner_function_in_a_loop():
    x = RS.randn(6)
    segments = np.array([0, 2, 2, 3, 0, 2])
    weights = RS.randn(6)
    got = _check(segment_energy, (x, segments, weights))
    _close(got, autograd.grad(_twin(segment_energy_onehot))(x, segments, weights), 1e-10)
    got_w = s2s_ad.grad(segment_energy, 2)(x, segments, weights)
    _close(got_w, numerical_grad(segment_energy, (x, segments, weights), 2), 1e-5)


def soft_histogram(samples, centers, width):
    """A histogram whose counts are kernel weights, accumulated at each sample's nearest
    bin (an integer index computed from the data), and a buffer that starts non-zero."""
    nearest = np.argmin(np.abs(samples[:, None] - centers[None, :]), axis=1)
    weights = np.exp(-0.5 * ((samples - centers[nearest]) / width) ** 2)
    hist = np.full(centers.shape[0], 0.1) * width
    np.add.at(hist, nearest, weights)
    hist = hist / np.sum(hist)
    return -np.sum(hist * np.log(hist))


def test_histogram_with_a_buffer_that_depends_on_the_differentiated_value():
    samples = np.array([0.1, 0.35, 0.4, 1.3, 1.45, 2.2, 0.05])
    centers = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    got = s2s_ad.grad(soft_histogram, (0, 2))(samples, centers, 0.3)
    _close(got[0], numerical_grad(soft_histogram, (samples, centers, 0.3), 0), 1e-5)
    _close(got[1], numerical_grad(soft_histogram, (samples, centers, 0.3), 2), 1e-5)
    _check(soft_histogram, (samples, centers, 0.3), wrt=2)


def scatter_rows_2d(A, rows, cols):
    """A 2-d fancy index ``(rows, cols)`` that repeats an entry, and a broadcast value."""
    out = np.zeros((3, 3))
    np.add.at(out, (rows, cols), A[0])
    np.add.at(out, rows, A[1:2] * 2.0)
    return np.sum(out**3) + np.sum(out * A)


def test_tuple_index_and_broadcast_value():
    A = RS.randn(3, 3)
    got = _check(scatter_rows_2d, (A, np.array([0, 0, 2]), np.array([1, 1, 0])))
    assert got.shape == (3, 3)


# --- what other names would see: refused ------------------------------------------------


def into_a_view(x):
    M = np.zeros((2, 3))
    row = M[0]
    np.add.at(row, [0, 0, 2], x)
    return np.sum(M**2)


def into_a_shared_buffer(x):
    buf = np.zeros(3)
    other = buf
    np.add.at(buf, [0, 0, 2], x)
    return np.sum(other**2)


def into_a_held_buffer(x):
    buf = np.zeros(3)
    rows = [buf]
    np.add.at(buf, [0, 1, 1], x)
    return np.sum(rows[0] ** 2) + np.sum(buf)


@pytest.mark.parametrize("fun", [into_a_view, into_a_shared_buffer, into_a_held_buffer])
def test_a_buffer_another_name_sees_is_refused(fun):
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(TransformError, match=r"(?s)in-place update.*np\.add\.at\((buf|row)"):
        s2s_ad.grad(fun)(x)


class Histogram:
    def __init__(self) -> None:
        self.counts = np.zeros(3)


def into_an_attribute(x, hist):
    np.add.at(hist.counts, [0, 0, 2], x)
    return np.sum(hist.counts**2)


def test_a_buffer_that_is_not_a_local_variable_stays_refused():
    with pytest.raises(TransformError, match="np.add.at"):
        s2s_ad.grad(into_an_attribute)(np.array([0.5, -1.0, 2.0]), Histogram())


def test_generated_code_rebinds_the_buffer():
    df = s2s_ad.grad(segment_energy)
    df(RS.randn(6), np.array([0, 2, 2, 3, 0, 2]), RS.randn(6))
    text = s2s_ad.source(df)
    assert "pooled_out = _ad.scatter_add(pooled_out, segments, " in text
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert not any("np.add.at" in line for line in code)
