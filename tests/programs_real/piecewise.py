"""Piecewise and order-based losses: Huber with np.where, hinge SVM with np.maximum, clipped
PPO-style objective, sorted (trimmed) losses with np.sort/argsort, a pairwise ranking
loss, einsum attention, and Python branching on values."""

from __future__ import annotations

import numpy as np

from programs_real import Program


def huber_regression(w, X, y, delta=1.0):
    r = X @ w - y
    quad = 0.5 * r**2
    lin = delta * (np.abs(r) - 0.5 * delta)
    return np.mean(np.where(np.abs(r) <= delta, quad, lin))


def svm_hinge(params, X, labels, C=0.5):
    w, b = params["w"], params["b"]
    margins = labels * (X @ w + b)
    return 0.5 * np.dot(w, w) + C * np.sum(np.maximum(0.0, 1.0 - margins))


def ppo_clip_objective(logp_new, logp_old, adv, eps=0.2):
    ratio = np.exp(logp_new - logp_old)
    clipped = np.clip(ratio, 1 - eps, 1 + eps)
    return -np.mean(np.minimum(ratio * adv, clipped * adv))


def trimmed_loss(w, X, y, keep=6):
    """Least trimmed squares: sum of the ``keep`` smallest squared residuals (np.sort)."""
    r2 = (X @ w - y) ** 2
    return np.sum(np.sort(r2)[:keep])


def argsort_weighted(scores, values):
    """Values reordered by the ranking of scores, weighted by position (argsort indexing)."""
    order = np.argsort(-scores)
    discount = 1.0 / np.log2(np.arange(2, scores.shape[0] + 2))
    return np.sum(values[order] * discount * np.tanh(scores[order]))


def pairwise_ranking(w, X, relevance):
    """RankNet-style loss over all pairs with a relevance difference (broadcast + mask)."""
    s = X @ w
    diff = s[:, None] - s[None, :]
    better = (relevance[:, None] > relevance[None, :]).astype(float)
    return np.sum(better * np.logaddexp(0.0, -diff))


def attention(params, q_in, kv_in):
    """Single-head scaled dot-product attention written with einsum."""
    Wq, Wk, Wv = params
    q = np.einsum("td,dk->tk", q_in, Wq)
    k = np.einsum("sd,dk->sk", kv_in, Wk)
    v = np.einsum("sd,dk->sk", kv_in, Wv)
    scores = np.einsum("tk,sk->ts", q, k) / np.sqrt(q.shape[1])
    scores = scores - np.max(scores, axis=1, keepdims=True)
    attn = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    out = np.einsum("ts,sk->tk", attn, v)
    return np.sum(out**2)


def bilinear_trace(A, B, C):
    """einsum with a repeated index and a trace: sum_ij A_ij B_jk C_ki."""
    return np.einsum("ij,jk,ki->", A, B, C) + np.einsum("ii->", A @ A)


def branchy_activation(x):
    """A scalar piecewise function written with Python if/elif on the value."""
    if x < -1.0:
        y = -1.0 - 0.1 * (x + 1.0)
    elif x < 1.0:
        y = x**3 / 3 - x + x * np.exp(-(x**2))
    else:
        y = np.log(x) + 2.0 * x
    return y * max(x, 0.5)


def soft_threshold_loss(z, lam):
    """Proximal (lasso) objective: elementwise soft-thresholding with sign and maximum."""
    shrunk = np.sign(z) * np.maximum(np.abs(z) - lam, 0.0)
    return np.sum((shrunk - 0.3) ** 2) + lam * np.sum(np.abs(shrunk))


def max_pool_net(w, x):
    """Conv-like feature map then max over windows (np.max over a reshaped axis)."""
    feats = np.tanh(np.outer(x, w)).reshape(4, 3, -1)
    pooled = np.max(feats, axis=1)
    return np.sum(pooled * np.arange(pooled.size).reshape(pooled.shape))


_rs = np.random.RandomState(13)
_X = _rs.randn(8, 3)

PROGRAMS = [
    Program(
        "huber_regression",
        (_rs.randn(3), _X, 2.0 * _rs.randn(8)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "svm_hinge",
        ({"w": _rs.randn(3), "b": 0.1}, _X, np.sign(_rs.randn(8))),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "ppo_clip_objective",
        (_rs.randn(8) * 0.3, _rs.randn(8) * 0.3, _rs.randn(8)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("trimmed_loss", (_rs.randn(3), _X, _rs.randn(8)), checks=("grad", "vg", "fwd")),
    Program(
        "argsort_weighted",
        (_rs.randn(6), _rs.randn(6)),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "pairwise_ranking",
        (_rs.randn(3), _X, _rs.randint(0, 3, size=8).astype(float)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "attention",
        ((_rs.randn(3, 4), _rs.randn(3, 4), _rs.randn(3, 4)), _rs.randn(2, 3), _rs.randn(5, 3)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "bilinear_trace",
        (_rs.randn(3, 3), _rs.randn(3, 2), _rs.randn(2, 3)),
        wrt=(0, 1, 2),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # autograd's einsum VJP fails on the trace "ii->"
    ),
    Program("branchy_activation", (0.7,), checks=("grad", "vg", "fwd", "gradgrad"), tag="mid"),
    Program("branchy_activation", (-1.5,), checks=("grad", "gradgrad"), tag="low"),
    Program("branchy_activation", (2.5,), checks=("grad", "gradgrad"), tag="high"),
    Program(
        "soft_threshold_loss",
        (_rs.randn(7), 0.25),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("max_pool_net", (_rs.randn(2), _rs.randn(12)), checks=("grad", "vg", "fwd")),
]
