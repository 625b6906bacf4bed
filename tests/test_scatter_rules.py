"""``np.take``, ``np.take_along_axis``, ``np.pad``, ``np.interp`` and ``np.gradient``:
backward passes that scatter with ``np.add.at`` or sum a band (memory of the size of the
input plus the output, no one-hot or difference matrix), checked end to end in both
modes, at second order (Hessians of user code) and against autograd; the options that
used to be ignored (``np.take(mode='clip')``, ``np.interp``'s ``left``, ``right`` and
``period``) against finite differences."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad

RNG = np.random.default_rng(7)
VOCAB = RNG.standard_normal((6, 3))
TOKENS = np.array([[0, 4, 4, 2], [5, 1, 0, 0]])
XP = np.array([0.0, 0.4, 1.1, 1.5, 2.3])
FP = np.array([0.5, -0.2, 0.9, 1.4, 0.3])
XS = np.array([-0.3, 0.1, 0.55, 1.2, 1.9, 2.6, 0.45])


class BagOfWords:
    """A Keras-style model: embedding lookup by ``np.take``, mean pooling, a dense head."""

    def __init__(self, head: Any) -> None:
        self.head = head

    def __call__(self, table: Any, tokens: Any) -> Any:
        emb = np.take(table, tokens, axis=0)  # (batch, length, dim)
        pooled = np.mean(emb, axis=1)
        return np.tanh(pooled @ self.head)


HEAD = RNG.standard_normal((3, 2))


def embedding_loss(table):
    out = BagOfWords(HEAD)(table, TOKENS)
    return np.sum(out**2)


def take_flat_repeated(a):
    return np.sum(np.sin(np.take(a, [0, -1, 3, 3, 3])) * np.arange(1.0, 6.0))


def take_clip_and_wrap(a):
    clipped = np.take(a, [-2, 9, 1, 1], mode="clip")
    wrapped = np.take(a, [[7, -1], [2, 9]], axis=0, mode="wrap")
    return np.sum(clipped**3) + np.sum(np.cos(wrapped))


def top_two(scores):
    order = np.argsort(scores, axis=1)[:, -2:]
    best = np.take_along_axis(scores, order, axis=1)
    return np.sum(best**2 * np.array([1.0, 2.0]))


def gather_repeated(m):
    idx = np.array([[0, 0, 2], [1, 1, 1], [3, 0, 3]])
    return np.sum(np.exp(np.take_along_axis(m, idx, axis=1)))


def smooth_pad(x, mode="reflect"):
    padded = np.pad(x, (2, 3), mode)
    kernel = np.array([0.25, 0.5, 0.25])
    return np.sum(np.convolve(padded, kernel, "valid") ** 2)


def image_pad(img):
    padded = np.pad(img, ((1, 1), (2, 0)), "edge")
    padded2 = np.pad(img**2, 1)
    return np.sum(padded**3) + np.sum(padded2 * padded)


def table_lookup(fp, x):
    return np.sum(np.interp(x, XP, fp) ** 2 * np.sin(x))


def table_with_fill(fp, x):
    y = np.interp(x, XP, fp, left=fp[1] * 2.0, right=np.sum(fp))
    return np.sum(y**2)


def periodic_profile(fp, x):
    return np.sum(np.interp(x, XP, fp, period=2.0) ** 3)


COORDS = np.array([0.0, 0.3, 0.5, 1.1, 1.2, 1.9])


def field_energy(u):
    """Finite-difference energy of a 2-D field on a non-uniform grid (second-order edges)."""
    du_dy, du_dx = np.gradient(u, 0.5, COORDS[:4], edge_order=2)
    lap = np.gradient(du_dx, COORDS[:4], axis=1)
    return np.sum(du_dx**2 + du_dy**2) + 0.1 * np.sum(lap * np.sin(u))


X_TAKE = np.array([0.3, -1.1, 0.8, 1.7, -0.4, 0.9])
SCORES = RNG.standard_normal((3, 5))
SIGNAL = np.cos(np.arange(7.0))
IMG = RNG.standard_normal((3, 4))
X_PERIODIC = np.array([-2.7, -0.3, 0.45, 1.2, 1.9, 3.05, 4.7])

CASES = [
    (embedding_loss, (VOCAB,)),
    (take_flat_repeated, (X_TAKE,)),
    (take_clip_and_wrap, (np.cos(np.arange(8.0)),)),
    (top_two, (SCORES,)),
    (gather_repeated, (IMG,)),
    (smooth_pad, (SIGNAL,)),
    (image_pad, (IMG,)),
    (table_lookup, (FP, XS)),
    (table_with_fill, (FP, XS)),
    (periodic_profile, (FP, X_PERIODIC)),
    (field_energy, (IMG,)),
]
IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize(("fun", "args"), CASES, ids=IDS)
def test_both_modes_against_finite_differences(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, modes=("rev", "fwd"))


@pytest.mark.parametrize(("fun", "args"), CASES, ids=IDS)
def test_second_order(fun: Any, args: tuple[Any, ...]) -> None:
    s2s_ad.check_grads(fun, args, order=2)
    size = np.size(args[0])
    hess = np.reshape(s2s_ad.hessian(fun)(*args), (size, size))
    grad = s2s_ad.grad(fun)
    rows = [
        np.ravel(numerical_grad(lambda *a, i=i: np.ravel(grad(*a))[i], args)) for i in range(size)
    ]
    np.testing.assert_allclose(hess, np.array(rows), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "wrap", "edge", "constant"])
def test_pad_modes(mode: str) -> None:
    s2s_ad.check_grads(lambda x: smooth_pad(x, mode), (SIGNAL,), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda x: smooth_pad(x, mode), (SIGNAL,), order=2)


def test_interp_fill_values_are_differentiated() -> None:
    """``left`` and ``right`` are outputs where ``x`` is outside ``xp``: their gradients
    count those points; ``fp``'s end knots get none from them."""

    def f(left, right, fp):
        return np.sum(np.interp(XS, XP, fp, left, right) * np.arange(1.0, 8.0))

    got = s2s_ad.grad(f, (0, 1, 2))(0.3, -0.7, FP)
    fd = numerical_grad(f, (0.3, -0.7, FP), (0, 1, 2))
    for a, b in zip(got, fd):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    assert got[0] == 1.0 and got[1] == 6.0  # XS[0] below, XS[5] above


autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


def test_against_autograd() -> None:
    """autograd has ``take`` (through indexing), ``pad`` and ``sort``-style gathers."""
    import autograd

    def embed(np_: Any, table: Any) -> Any:
        emb = table[TOKENS]
        return np_.sum(np_.tanh(np_.mean(emb, axis=1) @ HEAD) ** 2)

    def padded(np_: Any, x: Any) -> Any:
        p = np_.pad(x, (2, 3), "constant")
        return np_.sum(np_.sin(p) * np.arange(12.0))

    np.testing.assert_allclose(
        s2s_ad.grad(embedding_loss)(VOCAB), autograd.grad(lambda t: embed(anp, t))(VOCAB)
    )
    np.testing.assert_allclose(
        s2s_ad.grad(lambda x: np.sum(np.sin(np.pad(x, (2, 3))) * np.arange(12.0)))(SIGNAL),
        autograd.grad(lambda x: padded(anp, x))(SIGNAL),
    )
    flat = s2s_ad.grad(take_flat_repeated)(X_TAKE)
    ref = autograd.grad(
        lambda a: anp.sum(anp.sin(a[np.array([0, -1, 3, 3, 3])]) * np.arange(1.0, 6.0))
    )(X_TAKE)
    np.testing.assert_allclose(flat, ref)


def _peak_bytes(fun: Any, arg: Any) -> int:
    grad = s2s_ad.grad(fun)
    grad(arg)  # transform first: only the gradient's own arrays are counted
    tracemalloc.start()
    try:
        grad(arg)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_backward_memory_grows_with_input_plus_output() -> None:
    """20,000 reads from 40,000 entries: a one-hot matrix would take 800 MB (6.4 GB as
    floats); the scatter needs a few arrays of either size (about 1 MB)."""
    rng = np.random.default_rng(0)
    n, m = 40_000, 20_000
    idx = rng.integers(0, n, m)
    xp = np.linspace(0.0, 1.0, n)
    x = rng.uniform(-0.1, 1.1, m)
    cases = [
        (lambda a: np.sum(np.take(a, idx) ** 2), rng.standard_normal(n)),
        (lambda a: np.sum(np.take_along_axis(a, np.sort(idx)[None, :], 1) ** 2), np.ones((1, n))),
        (lambda a: np.sum(np.pad(a, m, "reflect") ** 2), rng.standard_normal(n)),
        (lambda fp: np.sum(np.interp(x, xp, fp) ** 2), rng.standard_normal(n)),
        (lambda a: np.sum(np.gradient(a, edge_order=2) ** 2), rng.standard_normal(n)),
    ]
    for fun, arg in cases:
        assert _peak_bytes(fun, arg) < 40 * (n + 2 * m) * 8


def knots_from_scalars(x, c):
    """``fp`` and the array read by ``np.take``/``np.pad`` built as lists of expressions."""
    y = np.interp(x, XP, [c, 2.0 * c, 0.5, c**2, 1.1], left=c)
    z = np.take([c, 2.0 * c, c**2], [0, 2, 2])
    w = np.pad([c, 3.0 * c, c**3], 2, "symmetric")
    return y**2 + np.sum(z**2) + np.sum(w * np.arange(7.0))


@pytest.mark.parametrize("x", [0.7, -0.4, 1.8])
def test_list_arguments(x: float) -> None:
    s2s_ad.check_grads(knots_from_scalars, (x, 1.3), modes=("rev", "fwd"))
    s2s_ad.check_grads(knots_from_scalars, (x, 1.3), order=2)


def test_float32_adjoints_keep_their_dtype() -> None:
    a = np.arange(6, dtype=np.float32)
    got = s2s_ad.grad(lambda a: np.sum(np.take(a, [1, 1, 4]) ** 2))(a)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [0.0, 4.0, 0.0, 0.0, 8.0, 0.0])
