"""Programs of the kinds autograd's and JAX's examples show, written as a user would:
each through ``check_program`` (gradient against finite differences and autograd
running the same source, ``jvp``, Hessian-vector product, optimizer off).

Autograd reads the same source with ``np`` and the SciPy names bound to its own
wrappers; where autograd has no rule (``scipy.linalg.cholesky``, ``softmax``) or the
program writes into an array, only finite differences check it.
"""

from __future__ import annotations

import types

import autograd.numpy as anp
import autograd.scipy.special as asp
import autograd.scipy.stats as astats
import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats
from scipy.special import expit, logsumexp

import s2s_ad
from tests.user_checks import check_program

# --- the programs -------------------------------------------------------------------------


def logistic_l2(w, X, y, lam):
    logits = X @ w[:-1] + w[-1]
    nll = -np.sum(y * np.log(expit(logits)) + (1 - y) * np.log(1 - expit(logits)))
    return nll + 0.5 * lam * np.dot(w, w)


def rbf(X, lengthscale, variance):
    sq = np.sum(X**2, axis=1)[:, None] + np.sum(X**2, axis=1)[None, :] - 2 * X @ X.T
    return variance * np.exp(-0.5 * sq / lengthscale**2)


def gp_nlml(log_params, X, y):
    lengthscale, variance, noise = np.exp(log_params)
    K = rbf(X, lengthscale, variance) + noise * np.eye(X.shape[0])
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(y) * np.log(2 * np.pi)


def gp_nlml_scipy(log_params, X, y):
    lengthscale, variance, noise = np.exp(log_params)
    K = rbf(X, lengthscale, variance) + noise * np.eye(X.shape[0])
    c = scipy.linalg.cho_factor(K, lower=True)
    alpha = scipy.linalg.cho_solve(c, y)
    L = scipy.linalg.cholesky(K, lower=True)
    z = scipy.linalg.solve_triangular(L, y, lower=True)
    return 0.5 * y @ alpha + 0.1 * np.dot(z, z) + np.sum(np.log(np.diag(c[0])))


def mixture_loglik(params, data):
    log_weights, means, log_stds = params
    log_w = log_weights - logsumexp(log_weights)
    stds = np.exp(log_stds)
    z = (data[:, None] - means[None, :]) / stds
    comp = -0.5 * z**2 - np.log(stds) - 0.5 * np.log(2 * np.pi)
    return np.sum(logsumexp(comp + log_w, axis=1))


def mixture_loglik_stats(params, data):
    log_weights, means, log_stds = params
    log_w = log_weights - logsumexp(log_weights)
    comp = scipy.stats.norm.logpdf(data[:, None], means, np.exp(log_stds))
    return np.sum(logsumexp(comp + log_w, axis=1))


def conv2d(img, kernel):
    kh, kw = kernel.shape
    h, w = img.shape
    out = np.zeros((h - kh + 1, w - kw + 1))
    for i in range(kh):
        for j in range(kw):
            out = out + kernel[i, j] * img[i : i + h - kh + 1, j : j + w - kw + 1]
    return out


def convnet(params, images, labels):
    kernels, W, b = params["kernels"], params["W"], params["b"]
    feats = []
    for img in images:
        maps = [np.maximum(conv2d(img, k), 0.0) for k in kernels]
        feats.append(np.concatenate([m.ravel() for m in maps]))
    logits = np.stack(feats) @ W + b
    logp = logits - logsumexp(logits, axis=1, keepdims=True)
    return -np.mean(np.sum(logp * labels, axis=1))


def conv_einsum(kernel, images):
    n, h, w = images.shape
    kh, kw = kernel.shape
    patches = np.stack(
        [images[:, i : i + h - kh + 1, j : j + w - kw + 1] for i in range(kh) for j in range(kw)],
        axis=-1,
    )
    return np.sum(np.tanh(np.einsum("nhwk,k->nhw", patches, kernel.ravel())) ** 2)


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2.0) + 1.0)


def lstm_loss(params, inputs, targets):
    hidden, cell = params["init_h"], params["init_c"]
    loss = 0.0
    for x, t in zip(inputs, targets):
        z = np.concatenate([x, hidden])
        forget = sigmoid(params["Wf"] @ z + params["bf"])
        ingate = sigmoid(params["Wi"] @ z + params["bi"])
        outgate = sigmoid(params["Wo"] @ z + params["bo"])
        cell = forget * cell + ingate * np.tanh(params["Wg"] @ z + params["bg"])
        hidden = outgate * np.tanh(cell)
        loss = loss + np.sum((params["Wy"] @ hidden - t) ** 2)
    return loss / len(inputs)


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_loglik(params, inputs, targets):
    """An RNN written as autograd's example writes it: inner functions over ``params``,
    a star-args helper concatenating a tuple, outputs collected in a list."""

    def update(x, hiddens):
        return np.tanh(concat_and_multiply(params["change"], x, hiddens))

    def log_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    hiddens = np.repeat(params["init hiddens"], inputs.shape[1], axis=0)
    outputs = [log_probs(hiddens)]
    for x in inputs:
        hiddens = update(x, hiddens)
        outputs.append(log_probs(hiddens))
    loglik = 0.0
    for t in range(inputs.shape[0]):
        loglik += np.sum(outputs[t] * targets[t])
    return loglik / inputs.shape[0]


def vae_loss(params, x, eps):
    enc_W, enc_b, dec_W, dec_b = params
    h = np.tanh(x @ enc_W + enc_b)
    d = h.shape[1] // 2
    mu, log_var = h[:, :d], h[:, d:]
    z = mu + np.exp(0.5 * log_var) * eps
    logits = z @ dec_W + dec_b
    rec = np.sum(x * logits - np.logaddexp(0.0, logits), axis=1)
    kl = -0.5 * np.sum(1 + log_var - mu**2 - np.exp(log_var), axis=1)
    return -np.mean(rec - kl)


def bnn_log_posterior(weights, X, y, prior_std):
    W1, b1, W2, b2 = weights
    pred = np.tanh(X @ W1 + b1) @ W2 + b2
    log_prior = sum(np.sum(scipy.stats.norm.logpdf(p, 0.0, prior_std)) for p in weights)
    return log_prior + np.sum(scipy.stats.norm.logpdf(y, pred[:, 0], 0.1))


def hmm_loglik(log_params, obs):
    log_pi, log_A, log_B = log_params
    log_pi = log_pi - logsumexp(log_pi)
    log_A = log_A - logsumexp(log_A, axis=1, keepdims=True)
    log_B = log_B - logsumexp(log_B, axis=1, keepdims=True)
    alpha = log_pi + log_B[:, obs[0]]
    for t in range(1, len(obs)):
        alpha = logsumexp(alpha[:, None] + log_A, axis=0) + log_B[:, obs[t]]
    return logsumexp(alpha)


def black_scholes(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + 0.5 * sigma**2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * scipy.stats.norm.cdf(d1) - K * np.exp(-r * T) * scipy.stats.norm.cdf(d2)


def springs(state, k, dt, steps):
    pos, vel = state[:2], state[2:]
    for _ in range(steps):
        force = -k * pos - 0.1 * vel
        vel = vel + dt * force
        pos = pos + dt * vel
    return np.sum(pos**2) + 0.5 * np.sum(vel**2)


def attention(params, X):
    Q, K, V = X @ params["q"], X @ params["k"], X @ params["v"]
    weights = scipy.special.softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)
    return np.mean((weights @ V) ** 2)


def sorted_dict(params, x):
    scaled = {k: v * 0.9 for k, v in params.items()}
    total = 0.0
    for name in sorted(scaled):
        total = total + np.sum(np.tanh(scaled[name] * x))
    return total


def array_methods(W, x):
    """Array methods on a matrix that is not differentiated (``W.dot(x)`` runs through the
    dispatcher, linear in ``x``: the Hessian-vector product's tangent is a symbolic zero)."""
    h = W.dot(x).clip(-1.0, 1.0)
    z = (W.T @ h).reshape(-1, 1)
    return z.sum() + h.max() + x.mean() * 2.0 + 0.01 * (W**2).sum()


def mse(params, x, y):
    W, b = params
    return np.mean((x @ W + b - y) ** 2)


def unrolled_sgd(params, x, y):
    """A few steps of gradient descent inside the differentiated function."""
    for _ in range(3):
        grads = s2s_ad.grad(mse)(params, x, y)
        params = tuple(p - 0.05 * g for p, g in zip(params, grads))
    return mse(params, x, y)


# --- autograd reading the same source ------------------------------------------------------

_HELPERS = ("rbf", "conv2d", "sigmoid", "concat_and_multiply")


def twin(fun):
    """``fun`` with NumPy and SciPy names bound to autograd's wrappers (helpers too)."""
    names = dict(fun.__globals__)
    names.update(
        np=anp,
        logsumexp=asp.logsumexp,
        expit=asp.expit,
        scipy=types.SimpleNamespace(stats=astats, special=asp),
    )
    for name in _HELPERS:
        f = fun.__globals__[name]
        names[name] = types.FunctionType(f.__code__, names, f.__name__, f.__defaults__)
    return types.FunctionType(fun.__code__, names, fun.__name__, fun.__defaults__)


# --- the checks ----------------------------------------------------------------------------

RS = np.random.RandomState(0)
X6 = RS.standard_normal((6, 3))
Y01 = (RS.rand(6) > 0.5).astype(float)
GP_X, GP_Y = RS.standard_normal((5, 2)), RS.standard_normal(5)
DATA = np.concatenate([RS.normal(-1, 0.5, 10), RS.normal(2, 1, 10)])
MIX = (RS.standard_normal(3), RS.standard_normal(3), 0.1 * RS.standard_normal(3))
IMAGES = RS.standard_normal((2, 5, 5))
CONV = {
    "kernels": [RS.standard_normal((2, 2)) for _ in range(2)],
    "W": 0.1 * RS.standard_normal((32, 3)),
    "b": np.zeros(3),
}
LSTM = {k: 0.3 * RS.standard_normal((3, 5)) for k in ("Wf", "Wi", "Wo", "Wg")}
LSTM.update({k: 0.1 * RS.standard_normal(3) for k in ("bf", "bi", "bo", "bg")})
LSTM.update(init_h=np.zeros(3), init_c=np.zeros(3), Wy=0.3 * RS.standard_normal((1, 3)))
SEQ = [RS.standard_normal(2) for _ in range(4)]
TARGETS = [RS.standard_normal(1) for _ in range(4)]
RNN = {
    "init hiddens": 0.1 * RS.randn(1, 3),
    "change": 0.3 * RS.randn(6, 3),
    "predict": 0.3 * RS.randn(4, 2),
}
VAE = (0.3 * RS.randn(3, 4), np.zeros(4), 0.3 * RS.randn(2, 3), np.zeros(3))
BNN = [0.3 * RS.randn(3, 4), np.zeros(4), 0.3 * RS.randn(4, 1), np.zeros(1)]
HMM = (RS.standard_normal(2), RS.standard_normal((2, 2)), RS.standard_normal((2, 3)))
ATTENTION = {k: 0.3 * RS.randn(3, 2) for k in "qkv"}
LINEAR = (0.3 * RS.randn(3), np.array(0.1))

CASES = {
    "logistic_l2": (logistic_l2, (RS.standard_normal(4), X6, Y01, 0.1), 0, twin),
    "gp_nlml": (gp_nlml, (np.array([0.1, 0.2, -1.0]), GP_X, GP_Y), 0, twin),
    "gp_nlml_scipy": (gp_nlml_scipy, (np.array([0.1, 0.2, -1.0]), GP_X, GP_Y), 0, None),
    "mixture": (mixture_loglik, (MIX, DATA), 0, twin),
    "mixture_stats": (mixture_loglik_stats, (MIX, DATA), 0, twin),
    "convnet": (convnet, (CONV, IMAGES, np.eye(3)[[0, 2]]), 0, twin),
    "conv_einsum": (conv_einsum, (RS.standard_normal((2, 2)), IMAGES), 0, twin),
    "lstm": (lstm_loss, (LSTM, SEQ, TARGETS), 0, twin),
    "rnn": (rnn_loglik, (RNN, RS.randn(4, 2, 2), np.eye(2)[RS.randint(0, 2, (5, 2))]), 0, twin),
    "vae": (vae_loss, (VAE, RS.randn(5, 3), RS.randn(5, 2)), 0, twin),
    "bnn": (bnn_log_posterior, (BNN, X6, RS.standard_normal(6), 1.0), 0, twin),
    "hmm": (hmm_loglik, (HMM, np.array([0, 2, 1, 1, 0])), 0, twin),
    "black_scholes_spot": (black_scholes, (100.0, 95.0, 0.5, 0.02, 0.3), 0, twin),
    "black_scholes_vega": (black_scholes, (100.0, 95.0, 0.5, 0.02, 0.3), 4, twin),
    "springs_state": (springs, (RS.standard_normal(4), 2.0, 0.1, 5), 0, twin),
    "springs_stiffness": (springs, (RS.standard_normal(4), 2.0, 0.1, 5), 1, twin),
    "attention": (attention, (ATTENTION, X6), 0, None),
    "sorted_dict": (sorted_dict, ({"b": RS.randn(3), "a": RS.randn(3)}, RS.randn(3)), 0, twin),
    "array_methods_x": (array_methods, (RS.randn(3, 4), RS.randn(4)), 1, twin),
    "array_methods_W": (array_methods, (RS.randn(3, 4), RS.randn(4)), 0, None),
    "unrolled_sgd": (unrolled_sgd, (LINEAR, X6, RS.randn(6)), 0, None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_program(name):
    fun, args, wrt, make_twin = CASES[name]
    check_program(fun, args, wrt, rs=np.random.RandomState(1), twin=make_twin)


def test_value_and_grad_of_black_scholes_greeks():
    """Delta and vega in one sweep, as a pricing desk would ask for them."""
    value, (delta, vega) = s2s_ad.value_and_grad(black_scholes, (0, 4))(100.0, 95.0, 0.5, 0.02, 0.3)
    d1 = (np.log(100.0 / 95.0) + (0.02 + 0.5 * 0.09) * 0.5) / (0.3 * np.sqrt(0.5))
    np.testing.assert_allclose(value, black_scholes(100.0, 95.0, 0.5, 0.02, 0.3))
    np.testing.assert_allclose(delta, scipy.stats.norm.cdf(d1), rtol=1e-12)
    np.testing.assert_allclose(vega, 100.0 * scipy.stats.norm.pdf(d1) * np.sqrt(0.5), rtol=1e-12)
