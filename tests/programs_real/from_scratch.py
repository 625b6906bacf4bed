"""Machine learning "from scratch" in NumPy, as tutorials and courses write it: softmax
regression with one-hot targets from ``np.eye(k)[y]``, cross-entropy by
``logp[np.arange(n), y]``, batch normalisation by hand, skip-gram with negative sampling and
matrix factorisation gathering embedding rows with repeated indices, a t-SNE objective, soft
k-means, a mixture density network split by ``np.split``, a planar normalising flow, ridge
regression's validation loss through ``np.linalg.solve`` in its penalty, Bayesian linear
regression's evidence by ``slogdet``, a Poisson GLM with ``gammaln``, a convolution by four
nested loops writing ``out[i, j]`` and one by ``sliding_window_view`` of the input.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import gammaln

from programs_real import Program


def softmax_regression(W, X, y, lam):
    n, k = X.shape[0], W.shape[1]
    Y = np.eye(k)[y]
    z = X @ W
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.sum(Y * logp) / n + 0.5 * lam * np.sum(W * W)


def cross_entropy_indexed(params, X, y):
    W1, b1, W2, b2 = params
    h = np.maximum(0.0, X @ W1 + b1)
    scores = h @ W2 + b2
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(X.shape[0]), y])


def batchnorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    x_hat = (x - mu) / np.sqrt(var + eps)
    return gamma * x_hat + beta


def batchnorm_mlp(params, X, t):
    h = X @ params["W1"]
    h = batchnorm_forward(h, params["gamma"], params["beta"])
    h = np.tanh(h)
    out = h @ params["W2"]
    return np.mean((out[:, 0] - t) ** 2)


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def skipgram_negative_sampling(emb, centers, contexts, negatives):
    W_in, W_out = emb
    v = W_in[centers]
    u_pos = W_out[contexts]
    u_neg = W_out[negatives]
    pos = log_sigmoid(np.sum(v * u_pos, axis=1))
    neg = np.sum(log_sigmoid(-np.einsum("nkd,nd->nk", u_neg, v)), axis=1)
    return -np.mean(pos + neg)


def matrix_factorization(U, V, users, items, ratings, lam):
    pred = np.sum(U[users] * V[items], axis=1)
    err = ratings - pred
    return np.sum(err**2) + lam * (np.sum(U**2) + np.sum(V**2))


def tsne_kl(Y, P):
    n = Y.shape[0]
    sum_Y = np.sum(Y**2, axis=1)
    num = 1.0 / (1.0 + sum_Y[:, None] + sum_Y[None, :] - 2.0 * Y @ Y.T)
    num = num * (1.0 - np.eye(n))
    Q = np.maximum(num / np.sum(num), 1e-12)
    return np.sum(P * np.log(np.maximum(P, 1e-12) / Q))


def soft_kmeans(centers, X, beta):
    d2 = np.sum((X[:, None, :] - centers[None, :, :]) ** 2, axis=2)
    logits = -beta * d2
    logits = logits - logits.max(axis=1, keepdims=True)
    r = np.exp(logits)
    r = r / r.sum(axis=1, keepdims=True)
    return np.sum(r * d2) / X.shape[0]


def mdn_nll(W, h, y):
    out = h @ W
    logit_pi, mu, log_sigma = np.split(out, 3, axis=1)
    log_pi = logit_pi - np.log(np.sum(np.exp(logit_pi), axis=1, keepdims=True))
    sigma = np.exp(log_sigma)
    comp = -0.5 * ((y[:, None] - mu) / sigma) ** 2 - log_sigma - 0.5 * np.log(2 * np.pi)
    m = np.max(log_pi + comp, axis=1, keepdims=True)
    return -np.mean(m[:, 0] + np.log(np.sum(np.exp(log_pi + comp - m), axis=1)))


def planar_flow_log_det(flow, z):
    u, w, b = flow
    a = z @ w + b
    out = z + np.outer(np.tanh(a), u)
    psi = np.outer(1 - np.tanh(a) ** 2, w)
    log_det = np.log(np.abs(1 + psi @ u))
    base = -0.5 * np.sum(out**2, axis=1)
    return -np.mean(base + log_det)


def ridge_validation(log_lam, X, y, X_val, y_val):
    lam = np.exp(log_lam)
    d = X.shape[1]
    w = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
    return np.mean((X_val @ w - y_val) ** 2)


def bayes_linreg_evidence(log_ab, Phi, t):
    alpha, beta = np.exp(log_ab[0]), np.exp(log_ab[1])
    n, m = Phi.shape
    A = alpha * np.eye(m) + beta * Phi.T @ Phi
    m_N = beta * np.linalg.solve(A, Phi.T @ t)
    E = 0.5 * beta * np.sum((t - Phi @ m_N) ** 2) + 0.5 * alpha * m_N @ m_N
    sign, logdet = np.linalg.slogdet(A)
    return -(0.5 * m * np.log(alpha) + 0.5 * n * np.log(beta) - E - 0.5 * logdet)


def poisson_glm(w, X, counts):
    eta = X @ w
    return -np.sum(counts * eta - np.exp(eta) - gammaln(counts + 1))


def conv2d_loops(kernel, image):
    kh, kw = kernel.shape
    oh, ow = image.shape[0] - kh + 1, image.shape[1] - kw + 1
    out = np.zeros((oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[i, j] = np.sum(image[i : i + kh, j : j + kw] * kernel)
    return np.sum(np.tanh(out) ** 2)


def conv2d_windows(kernel, image):
    windows = sliding_window_view(image, kernel.shape)
    out = np.einsum("ijkl,kl->ij", windows, kernel)
    return np.sum(np.tanh(out) ** 2)


def conv2d_windows_input(image, kernel):
    return conv2d_windows(kernel, image)


_rs = np.random.RandomState(21)
_X = _rs.randn(8, 3)
_y = np.array([0, 2, 1, 1, 0, 2, 2, 1])
_P = np.abs(_rs.randn(5, 5))
_P = _P + _P.T
_P = _P * (1 - np.eye(5))
_P = _P / _P.sum()
_Phi = np.stack([np.ones(7), np.linspace(-1, 1, 7), np.linspace(-1, 1, 7) ** 2], axis=1)

ALL = ("grad", "vg", "fwd", "hvp")

PROGRAMS = [
    Program("softmax_regression", (0.3 * _rs.randn(3, 3), _X, _y, 0.1), checks=ALL),
    Program(
        "cross_entropy_indexed",
        ((_rs.randn(3, 5), 0.1 * _rs.randn(5), _rs.randn(5, 3), 0.1 * _rs.randn(3)), _X, _y),
        checks=ALL,
    ),
    Program(
        "batchnorm_mlp",
        (
            {
                "W1": _rs.randn(3, 4),
                "gamma": 1 + 0.1 * _rs.randn(4),
                "beta": 0.1 * _rs.randn(4),
                "W2": _rs.randn(4, 1),
            },  # fmt: skip
            _X,
            _rs.randn(8),
        ),
        checks=ALL,
    ),
    Program(
        "skipgram_negative_sampling",
        (
            (0.5 * _rs.randn(6, 3), 0.5 * _rs.randn(6, 3)),
            np.array([0, 1, 1, 4]),
            np.array([2, 2, 5, 1]),
            np.array([[3, 5], [0, 0], [4, 2], [5, 3]]),
        ),
        checks=ALL,
    ),
    Program(
        "matrix_factorization",
        (
            _rs.randn(4, 2),
            _rs.randn(5, 2),
            np.array([0, 0, 1, 3, 3, 3, 2]),
            np.array([1, 4, 4, 0, 2, 4, 1]),
            _rs.randn(7),
            0.1,
        ),
        wrt=(0, 1),
        checks=ALL,
    ),
    Program("tsne_kl", (_rs.randn(5, 2), _P), checks=ALL),
    Program("soft_kmeans", (_rs.randn(3, 3), _X, 2.0), wrt=(0, 2), checks=ALL),
    Program("mdn_nll", (0.3 * _rs.randn(4, 9), _rs.randn(6, 4), _rs.randn(6)), checks=ALL),
    Program(
        "planar_flow_log_det",
        ((0.3 * _rs.randn(2), 0.5 * _rs.randn(2), np.array(0.1)), _rs.randn(6, 2)),
        checks=ALL,
    ),
    Program(
        "ridge_validation",
        (np.array(-1.0), _rs.randn(10, 3), _rs.randn(10), _rs.randn(5, 3), _rs.randn(5)),
        checks=ALL,
    ),
    Program(
        "bayes_linreg_evidence",
        (np.array([0.2, 1.0]), _Phi, np.sin(2 * _Phi[:, 1]) + 0.1 * _rs.randn(7)),
        checks=ALL,
    ),
    Program(
        "poisson_glm",
        (0.2 * _rs.randn(3), _X, np.array([0.0, 2, 1, 3, 0, 1, 5, 2])),
        checks=ALL,
    ),
    Program(
        "conv2d_loops",
        (_rs.randn(2, 2), _rs.randn(5, 4)),
        wrt=(0, 1),
        checks=ALL,
        autograd=False,  # writes out[i, j]
    ),
    Program("conv2d_windows", (_rs.randn(2, 3), _rs.randn(5, 5)), checks=ALL, autograd=False),
    Program("conv2d_windows_input", (_rs.randn(5, 5), _rs.randn(2, 3)), checks=ALL, autograd=False),
]
