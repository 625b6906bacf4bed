"""Parameter containers and Python idioms: ``zip(*pairs)``, ``**kwargs`` options,
dict-of-lists parameters, namedtuples, generator expressions, ``enumerate``,
``functools.reduce``, a model class whose method is the loss, and a closure optimizer
(unrolled gradient descent, differentiated through)."""

from __future__ import annotations

import functools
from collections import namedtuple

import numpy as np

from programs_real import Program
from s2s_ad import grad


def zip_star_loss(pairs, x):
    """Layers given as ``[(W, b), ...]`` transposed with ``zip(*pairs)``."""
    Ws, bs = zip(*pairs)
    h = x
    for W, b in zip(Ws, bs):
        h = np.tanh(h @ W + b)
    return np.sum(h**2) + 0.01 * sum(np.sum(W**2) for W in Ws)


def _penalty(w, kind="l2", strength=1.0):
    if kind == "l1":
        return strength * np.sum(np.abs(w))
    return strength * np.sum(w**2)


def _data_term(w, X, y, **opts):
    scale = opts.get("scale", 1.0)
    return np.mean((X @ w * scale - y) ** 2)


def kwargs_loss(w, X, y):
    """Options passed along with ``**kwargs`` and keyword defaults."""
    opts = {"scale": 0.5}
    reg = {"kind": "l1", "strength": 0.1}
    return _data_term(w, X, y, **opts) + _penalty(w, **reg) + _penalty(w, strength=0.01)


def dict_of_lists_loss(params, x):
    """``{'weights': [W1, W2], 'biases': [b1, b2]}``, walked with enumerate."""
    h = x
    for i, W in enumerate(params["weights"]):
        h = h @ W + params["biases"][i]
        if i < len(params["weights"]) - 1:
            h = np.sin(h)
    return np.sum(h**2)


Layer = namedtuple("Layer", ["W", "b"])


def namedtuple_loss(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(np.log1p(h**2))


def reduce_compose(mats, v):
    """Product of a list of matrices with ``functools.reduce``, then a quadratic form."""
    M = functools.reduce(lambda A, B: A @ B, mats)
    return v @ M @ v + np.sum(np.array([np.trace(A) for A in mats]) ** 2)


def generator_expression_loss(ws, x):
    """Sum of per-expert losses through a generator expression and max over a list."""
    losses = [np.sum((np.tanh(x * w) - 0.2) ** 2) for w in ws]
    return sum(loss_i for loss_i in losses) + 0.5 * max(losses)


class LinearModel:
    """Model with parameters in attributes and the loss as a method."""

    def __init__(self, n):
        self.w = np.linspace(-0.5, 0.5, n)
        self.b = 0.1

    def predict(self, X):
        return X @ self.w + self.b

    def loss(self, X, y):
        return np.mean(np.log(np.cosh(self.predict(X) - y)))


def method_input_gradient(X, model, y):
    """Gradient wrt the inputs of a loss that is a method of a model object."""
    return model.loss(X, y)


def unrolled_sgd(lr, w0, X, y):
    """Meta-learning: loss after 5 gradient steps (grad inside), differentiated wrt lr."""
    dloss = grad(inner_loss)
    w = w0
    for _ in range(5):
        w = w - lr * dloss(w, X, y)
    return inner_loss(w, X, y)


def inner_loss(w, X, y):
    return np.mean((np.tanh(X @ w) - y) ** 2)


def list_append_states(params, x0):
    """States appended to a list inside a loop, then summed with a weighted sum of a list."""
    states = [x0]
    for W in params:
        states.append(np.tanh(W @ states[-1]))
    weights = [1.0 / (1 + i) for i in range(len(states))]
    return sum(w * np.sum(s**2) for w, s in zip(weights, states))


_rs = np.random.RandomState(17)
_X = _rs.randn(6, 3)


PROGRAMS = [
    Program(
        "zip_star_loss",
        ([(_rs.randn(3, 4), _rs.randn(4)), (_rs.randn(4, 2), _rs.randn(2))], _X),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("kwargs_loss", (_rs.randn(3), _X, _rs.randn(6)), checks=("grad", "vg", "fwd")),
    Program(
        "dict_of_lists_loss",
        (
            {"weights": [_rs.randn(3, 4), _rs.randn(4, 2)], "biases": [_rs.randn(4), _rs.randn(2)]},
            _X,
        ),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "namedtuple_loss",
        ([Layer(_rs.randn(3, 4), _rs.randn(4)), Layer(_rs.randn(4, 2), _rs.randn(2))], _X),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # autograd's grad does not build namedtuple gradients
    ),
    Program(
        "reduce_compose",
        ([0.5 * _rs.randn(3, 3) for _ in range(3)], _rs.randn(3)),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "generator_expression_loss",
        ([0.5, -1.2, 2.0], _rs.randn(5)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "method_input_gradient",
        (_X, LinearModel(3), _rs.randn(6)),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # the model object is a plain-numpy instance
    ),
    Program(
        "unrolled_sgd",
        (0.3, _rs.randn(3), _X, _rs.randn(6)),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "list_append_states",
        ([0.7 * _rs.randn(3, 3) for _ in range(3)], _rs.randn(3)),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
]
