"""Benchmark cases: primal functions written as a user would, hand-written gradients, inputs.

Each :class:`Case` bundles a primal ``f`` (plain NumPy/``math`` Python), a hand-written
gradient ``grad`` (same arguments, returns the gradients of the ``wrt`` arguments as a
tuple), a factory of inputs, and the positions differentiated (``wrt``). The primals are
module-level functions so that ``s2s_ad`` can read their source.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# --- 1. MLP 784-256-10, tanh, softmax cross-entropy -------------------------------------


def mlp_loss(W1, b1, W2, b2, x, y):
    """Mean softmax cross-entropy of a one-hidden-layer tanh MLP (``y`` one-hot)."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    logp = z - lse
    return -np.sum(y * logp) / x.shape[0]


def mlp_loss_grad(
    W1: np.ndarray,
    b1: np.ndarray,
    W2: np.ndarray,
    b2: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hand-written gradient of :func:`mlp_loss` w.r.t. ``W1, b1, W2, b2``."""
    n = x.shape[0]
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    e = np.exp(z)
    p = e / np.sum(e, axis=1, keepdims=True)
    # d loss / d logits = (softmax * sum(y) - y) / n; rows of y sum to 1 for one-hot y,
    # but keep the general form so the gradient is exact for any y.
    d_logits = (p * np.sum(y, axis=1, keepdims=True) - y) / n
    d_W2 = h.T @ d_logits
    d_b2 = d_logits.sum(axis=0)
    d_a = (d_logits @ W2.T) * (1.0 - h * h)
    d_W1 = x.T @ d_a
    d_b1 = d_a.sum(axis=0)
    return d_W1, d_b1, d_W2, d_b2


def mlp_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    """Weights (Glorot-scaled) and a batch of 128 random inputs with one-hot labels."""
    n, d_in, d_h, d_out = 128, 784, 256, 10
    W1 = rng.standard_normal((d_in, d_h)) / math.sqrt(d_in)
    b1 = 0.1 * rng.standard_normal(d_h)
    W2 = rng.standard_normal((d_h, d_out)) / math.sqrt(d_h)
    b2 = 0.1 * rng.standard_normal(d_out)
    x = rng.standard_normal((n, d_in))
    y = np.eye(d_out)[rng.integers(0, d_out, n)]
    return W1, b1, W2, b2, x, y


# --- 2. scalar-heavy straight-line formula: Black-Scholes call price --------------------


def black_scholes(S, K, T, r, sigma, q):
    """Black-Scholes-Merton price of a European call with dividend yield ``q``."""
    sqrt_t = math.sqrt(T)
    vol = sigma * sqrt_t
    d1 = (math.log(S / K) + (r - q + 0.5 * sigma * sigma) * T) / vol
    d2 = d1 - vol
    n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
    n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    disc_q = math.exp(-q * T)
    disc_r = math.exp(-r * T)
    return S * disc_q * n1 - K * disc_r * n2


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def black_scholes_grad(
    S: float, K: float, T: float, r: float, sigma: float, q: float
) -> tuple[float, float, float, float, float, float]:
    """Hand-written gradient of :func:`black_scholes` (the closed-form Greeks)."""
    sqrt_t = math.sqrt(T)
    vol = sigma * sqrt_t
    d1 = (math.log(S / K) + (r - q + 0.5 * sigma * sigma) * T) / vol
    d2 = d1 - vol
    n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
    n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    disc_q = math.exp(-q * T)
    disc_r = math.exp(-r * T)
    s_q = S * disc_q
    k_r = K * disc_r
    pdf1 = _INV_SQRT_2PI * math.exp(-0.5 * d1 * d1)
    d_s = disc_q * n1
    d_k = -disc_r * n2
    d_t = -q * s_q * n1 + r * k_r * n2 + s_q * pdf1 * sigma / (2.0 * sqrt_t)
    d_r = T * k_r * n2
    d_sigma = s_q * pdf1 * sqrt_t
    d_q = -T * s_q * n1
    return d_s, d_k, d_t, d_r, d_sigma, d_q


def black_scholes_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    """Spot, strike, maturity, rate, volatility, dividend yield (Python floats)."""
    del rng
    return 100.0, 95.0, 0.75, 0.03, 0.25, 0.01


# --- 3. scalar loop with a data-dependent branch ----------------------------------------


def scalar_loop(x, n):
    """A 1000-step float recurrence whose branch depends on the running value."""
    s = x
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + math.sin(x * i)
        else:
            s = s + x * x
    return s


def scalar_loop_grad(x: float, n: int) -> tuple[float]:
    """Hand-written gradient of :func:`scalar_loop` (forward mode: one input)."""
    s = x
    ds = 1.0
    for i in range(n):
        if s > 1.0:
            ds = ds * 0.5 + math.cos(x * i) * i
            s = s * 0.5 + math.sin(x * i)
        else:
            ds = ds + 2.0 * x
            s = s + x * x
    return (ds,)


def scalar_loop_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    """``x = 0.9`` (both branches are taken many times) and ``n = 1000``."""
    del rng
    return 0.9, 1000


# --- 4. RNN unrolled over 50 steps -----------------------------------------------------


def rnn_loss(Wx, Wh, b, xs, h0):
    """Sum of squares of the final hidden state of a tanh RNN run over ``xs``."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h**2)


def rnn_loss_grad(
    Wx: np.ndarray,
    Wh: np.ndarray,
    b: np.ndarray,
    xs: np.ndarray,
    h0: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hand-written backpropagation through time for :func:`rnn_loss`."""
    steps = xs.shape[0]
    hs = [h0]
    h = h0
    for t in range(steps):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        hs.append(h)
    d_wx = np.zeros_like(Wx)
    d_wh = np.zeros_like(Wh)
    d_b = np.zeros_like(b)
    d_h = 2.0 * h
    for t in range(steps - 1, -1, -1):
        h_t = hs[t + 1]
        d_a = d_h * (1.0 - h_t * h_t)
        d_wx += xs[t].T @ d_a
        d_wh += hs[t].T @ d_a
        d_b += d_a.sum(axis=0)
        d_h = d_a @ Wh.T
    return d_wx, d_wh, d_b


def rnn_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    """50 steps, batch 32, input 64, hidden 128."""
    steps, batch, d_in, d_h = 50, 32, 64, 128
    Wx = rng.standard_normal((d_in, d_h)) / math.sqrt(d_in)
    Wh = 0.9 * rng.standard_normal((d_h, d_h)) / math.sqrt(d_h)
    b = 0.1 * rng.standard_normal(d_h)
    xs = rng.standard_normal((steps, batch, d_in))
    h0 = np.zeros((batch, d_h))
    return Wx, Wh, b, xs, h0


# --- 5. index-assignment recurrence ----------------------------------------------------


def recurrence(x, a):
    """``y[i] = a * y[i-1] + x[i]`` written element by element; returns ``sum(y**2)``."""
    n = x.shape[0]
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y**2)


def recurrence_grad(x: np.ndarray, a: float) -> tuple[np.ndarray, float]:
    """Hand-written reverse sweep of :func:`recurrence` (same element-wise style)."""
    n = x.shape[0]
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * a + x[i]
    y_bar = 2.0 * y
    d_a = 0.0
    for i in range(n - 1, 0, -1):
        g = y_bar[i]
        d_a += g * y[i - 1]
        y_bar[i - 1] += g * a
    # y_bar is now d loss / d y[i] through every path, which is exactly d loss / d x[i].
    return y_bar, d_a


def recurrence_functional(x, a):
    """:func:`recurrence` without in-place writes (list + ``np.stack``), for peers only.

    autograd, JAX and PyTorch reject the element-wise assignment ``y[i] = ...`` of the
    primal as written; they run this rewrite instead, and the table says so.
    """
    n = x.shape[0]
    ys = [x[0]]
    for i in range(1, n):
        ys.append(ys[i - 1] * a + x[i])
    return np.sum(np.stack(ys) ** 2)


def recurrence_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    """A length-1000 random signal and a stable coefficient ``a = 0.95``."""
    return rng.standard_normal(1000), 0.95


# --- 6. elementwise chain over a long vector ------------------------------------------


def elementwise_chain(x, a):
    """An elementwise chain (``sin``, ``exp``, ``tanh``, ``log1p``, ``maximum``) ending in
    a sum and a mean."""
    y = np.sin(x) * a + np.exp(-x * x)
    z = np.tanh(y) ** 2 + np.log1p(y * y)
    w = np.maximum(z, 0.1) / (1.0 + x * x)
    return np.sum(w * np.cos(x)) + np.mean(z)


def elementwise_chain_grad(x: np.ndarray, a: float) -> tuple[np.ndarray, float]:
    """Hand-written gradient of :func:`elementwise_chain` w.r.t. ``x`` and ``a``."""
    s, c, e = np.sin(x), np.cos(x), np.exp(-x * x)
    y = s * a + e
    t = np.tanh(y)
    yy = y * y
    z = t * t + np.log1p(yy)
    d = 1.0 + x * x
    above = z > 0.1
    m = np.where(above, z, 0.1)
    # loss = sum(m / d * c) + mean(z)
    c_d = c / d
    d_z = np.where(above, c_d, 0.0)
    d_z += 1.0 / x.size
    d_y = d_z * (2.0 * t * (1.0 - t * t) + 2.0 * y / (1.0 + yy))
    d_x = d_y * (a * c - 2.0 * x * e)
    d_x -= (m / d) * (s + 2.0 * x * c_d)
    return d_x, float(np.dot(d_y, s))


def elementwise_chain_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    """A 100,000-vector and a float."""
    return rng.standard_normal(100_000), 0.7


# --- 7. while loop on a norm --------------------------------------------------------------


def while_norm(x, lr, tol):
    """Damped updates ``x - lr * (x + 0.1 sin x)`` while ``||x|| > tol``; ``sum(x**2)``."""
    while np.linalg.norm(x) > tol:
        x = x - lr * (x + 0.1 * np.sin(x))
    return np.sum(x**2)


def while_norm_grad(x: np.ndarray, lr: float, tol: float) -> tuple[np.ndarray, float]:
    """Hand-written gradient of :func:`while_norm` w.r.t. ``x`` and ``lr`` (the trip count
    is piecewise constant: each trip's state and update are kept, then swept backwards)."""
    saved = []
    while np.linalg.norm(x) > tol:
        step = x + 0.1 * np.sin(x)
        saved.append((x, step))
        x = x - lr * step
    g = 2.0 * x
    d_lr = 0.0
    for prev, step in reversed(saved):
        d_lr -= float(np.dot(g, step))
        g = g * (1.0 - lr * (1.0 + 0.1 * np.cos(prev)))
    return g, d_lr


def while_norm_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    """A 1,000-vector (norm about 32) shrunk below 1.0: about 60 trips."""
    return rng.standard_normal(1000), 0.05, 1.0


# --- registry --------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One benchmark case.

    Attributes:
        name: Short name used by ``--case``.
        f: The primal function (its source is what ``s2s_ad`` transforms).
        grad: Hand-written gradient: same arguments as ``f``, returns a tuple with one
            gradient per ``wrt`` position.
        inputs: Builds the arguments of ``f`` from a random generator.
        wrt: Positions of the differentiated arguments.
        target: Goal for the ratio s2s_ad / hand-written (``None``: no target): the
            targets of the issue on generated code.
        description: One line for the table header.
        peer_f: A rewrite of ``f`` for peers that cannot run ``f`` as written, or
            ``None``. Peers try ``f`` first and fall back to it.
        peer_skip: Peer module name -> why that peer does not run ``peer_f``.
    """

    name: str
    f: Callable[..., Any]
    grad: Callable[..., tuple[Any, ...]]
    inputs: Callable[[np.random.Generator], tuple[Any, ...]]
    wrt: tuple[int, ...]
    target: float | None
    description: str
    peer_f: Callable[..., Any] | None = None
    peer_skip: dict[str, str] = field(default_factory=dict)


CASES: list[Case] = [
    Case(
        "mlp_loss",
        mlp_loss,
        mlp_loss_grad,
        mlp_inputs,
        (0, 1, 2, 3),
        1.1,
        "MLP 784-256-10, tanh, softmax cross-entropy, batch 128; d/d(W1, b1, W2, b2)",
    ),
    Case(
        "black_scholes",
        black_scholes,
        black_scholes_grad,
        black_scholes_inputs,
        (0, 1, 2, 3, 4, 5),
        None,
        "scalar straight-line formula (Black-Scholes call, 6 floats, ~30 ops); all 6 Greeks",
    ),
    Case(
        "scalar_loop",
        scalar_loop,
        scalar_loop_grad,
        scalar_loop_inputs,
        (0,),
        1.3,
        "for i in range(1000) over floats with a data-dependent if; d/dx",
    ),
    Case(
        "rnn_loss",
        rnn_loss,
        rnn_loss_grad,
        rnn_inputs,
        (0, 1, 2),
        1.1,
        "tanh RNN, 50 steps, batch 32, input 64, hidden 128; d/d(Wx, Wh, b)",
    ),
    Case(
        "recurrence",
        recurrence,
        recurrence_grad,
        recurrence_inputs,
        (0, 1),
        1.5,
        "y[i] = y[i-1] * a + x[i] over a length-1000 array, sum(y**2); d/d(x, a)",
        recurrence_functional,
        {
            "jax": "its 1000 unrolled steps take ~50 s (eager, first call) and ~130 s "
            "(jit compile) on this machine",
        },
    ),
    Case(
        "elementwise_chain",
        elementwise_chain,
        elementwise_chain_grad,
        elementwise_chain_inputs,
        (0, 1),
        1.1,
        "sin, exp, tanh, log1p, maximum over a 100,000-vector, sum + mean; d/d(x, a)",
    ),
    Case(
        "while_norm",
        while_norm,
        while_norm_grad,
        while_norm_inputs,
        (0, 1),
        1.3,
        "while ||x|| > tol: x = x - lr * (x + 0.1 sin x), 1,000-vector, ~60 trips; d/d(x, lr)",
    ),
]
