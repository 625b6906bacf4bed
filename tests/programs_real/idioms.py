"""Everyday idioms inside numerical code: an embedding bag with ``np.add.at``, an ensemble
of lambdas built in a comprehension, early return and break in loops, boolean-mask
updates, a covariance matrix filled entry by entry, spectral losses (eigh, svd, norms),
a cumulative-sum discounting loss, and a Fibonacci-style tuple-swap recurrence."""

from __future__ import annotations

import numpy as np

from programs_real import Program


def embedding_bag(table, token_ids, bag_ids, target):
    """Sum the embeddings of each bag's tokens with a scatter-add, then a squared loss."""
    rows = table[token_ids]
    bags = np.zeros((target.shape[0], table.shape[1]))
    np.add.at(bags, bag_ids, rows)
    return np.sum((bags - target) ** 2)


def embedding_bag_matrix(table, token_ids, bag_ids, target):
    """The same bag sums through a one-hot assignment matrix."""
    rows = table[token_ids]
    assign = (bag_ids[None, :] == np.arange(target.shape[0])[:, None]).astype(float)
    return np.sum((assign @ rows - target) ** 2)


def lambda_ensemble(scales, x):
    """An ensemble of feature maps written as lambdas in a list comprehension."""
    feats = [lambda z, s=s: np.tanh(s * z) for s in scales]
    return sum(np.sum(f(x) ** 2) for f in feats)


def first_crossing(traj_params, threshold):
    """Value at the first step where a damped path crosses a threshold (early return)."""
    a, b = traj_params[0], traj_params[1]
    x = 0.0
    for t in range(50):
        x = x + a * np.exp(-b * t)
        if x > threshold:
            return x * t
    return x * 50


def backward_discount(rewards, gamma):
    """Discounted returns computed by a reversed loop that stops at a terminal (break)."""
    ret = 0.0
    total = 0.0
    for i in range(rewards.shape[0] - 1, -1, -1):
        if rewards[i] < -1.0:
            break
        ret = rewards[i] + gamma * ret
        total = total + ret**2
    return total


def relu_masked(x, w):
    """Leaky clipping written with boolean-mask assignment on a copy."""
    y = x * w
    y[y < 0] = 0.05 * y[y < 0]
    y[y > 1] = 1.0 + np.log(y[y > 1])
    return np.sum(y**2)


def kernel_entries(x, ell):
    """A covariance filled entry by entry in a double loop, then its log determinant."""
    n = x.shape[0]
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = np.exp(-0.5 * (x[i] - x[j]) ** 2 / ell**2)
        K[i, i] += 0.1
    sign, logdet = np.linalg.slogdet(K)
    return logdet + np.sum(np.linalg.solve(K, x) * x)


def spectral_loss(A):
    """Eigenvalues of the symmetric part, singular values, norms, inverse trace."""
    S = 0.5 * (A + A.T)
    evals = np.linalg.eigh(S)[0]
    svals = np.linalg.svd(A, compute_uv=False)
    return (
        np.sum(evals**2)
        + svals[0]
        + np.linalg.norm(A, axis=1).sum()
        + np.trace(np.linalg.inv(A + 3 * np.eye(A.shape[0])))
    )


def discounted_cumsum(x, gamma):
    weights = np.cumprod(np.full(x.shape[0], gamma)) / gamma
    return np.sum(np.cumsum(x * weights) ** 2) + np.sum(np.diff(x) ** 2)


def recurrence(a, b):
    """``a, b = b, f(a, b)`` for a few steps."""
    for _ in range(6):
        a, b = b, 0.5 * a + np.sin(b)
    return a * b


def running_stats(xs):
    """Welford's online mean/variance with augmented assignments in a loop."""
    mean = 0.0
    m2 = 0.0
    for k, x in enumerate(xs, start=1):
        delta = x - mean
        mean += delta / k
        m2 += delta * (x - mean)
    return mean**2 + m2 / (len(xs) - 1)


def running_stats_plain(xs):
    """Welford again, counting from ``enumerate(xs)`` without a start."""
    mean = 0.0
    m2 = 0.0
    for i, x in enumerate(xs):
        delta = x - mean
        mean += delta / (i + 1)
        m2 += delta * (x - mean)
    return mean**2 + m2 / (len(xs) - 1)


_rs = np.random.RandomState(21)
_tokens = np.array([0, 3, 3, 1, 4, 2, 0])
_bags = np.array([0, 0, 1, 1, 1, 2, 2])

PROGRAMS = [
    Program(
        "embedding_bag",
        (_rs.randn(5, 3), _tokens, _bags, _rs.randn(3, 3)),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # autograd has no gradient for np.add.at either
    ),
    Program(
        "embedding_bag_matrix",
        (_rs.randn(5, 3), _tokens, _bags, _rs.randn(3, 3)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "lambda_ensemble",
        ([0.5, 1.5, -0.7], _rs.randn(4)),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("first_crossing", (np.array([0.4, 0.1]), 2.0), checks=("grad", "vg", "fwd", "hvp")),
    Program(
        "backward_discount",
        (np.array([0.3, -1.5, 0.4, 0.2, 1.0]), 0.9),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "relu_masked",
        (np.array([-0.5, 0.3, 1.5, 0.8, 2.0, -2.0]), 1.1),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # mask assignment
    ),
    Program(
        "kernel_entries",
        (_rs.randn(5), 0.8),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # item assignment
    ),
    Program("spectral_loss", (_rs.randn(3, 3),), checks=("grad", "vg", "fwd", "hvp")),
    Program(
        "discounted_cumsum",
        (_rs.randn(6), 0.9),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # autograd has no VJP of np.cumprod
    ),
    Program("recurrence", (0.3, 0.7), wrt=(0, 1), checks=("grad", "vg", "fwd", "gradgrad")),
    Program(
        "running_stats",
        (list(_rs.randn(6)),),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("running_stats_plain", (list(_rs.randn(6)),), checks=("grad", "vg", "fwd", "hvp")),
]
