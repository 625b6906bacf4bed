"""Parameters packed in one flat vector and read back through helper objects, as the
convnet-style examples of autograd do: a ``Layout`` whose ``get(vect, name)`` slices and
reshapes, layers whose methods carry names of array or dict methods (``get``, ``dot``,
``mean``), and a loss that walks the layers."""

from __future__ import annotations

import numpy as np

from programs_real import Program


class Layout:
    """Named (slice, shape) entries of one parameter vector."""

    def __init__(self):
        self.entries = {}
        self.size = 0

    def add(self, name, shape):
        start = self.size
        self.size += int(np.prod(shape))
        self.entries[name] = (slice(start, self.size), shape)

    def get(self, vect, name):
        where, shape = self.entries[name]
        return np.reshape(vect[where], shape)


class Dense:
    """A tanh layer reading its weights from the shared vector."""

    def __init__(self, n_in, n_out):
        self.layout = Layout()
        self.layout.add("W", (n_in, n_out))
        self.layout.add("b", (n_out,))

    def dot(self, inputs, vect):
        W = self.layout.get(vect, "W")
        b = self.layout.get(vect, "b")
        return np.tanh(inputs @ W + b)


class Readout:
    """A linear read-out whose ``mean`` is the mean squared error of its predictions."""

    def __init__(self, n_in):
        self.layout = Layout()
        self.layout.add("w", (n_in,))

    def mean(self, inputs, vect, targets):
        w = self.layout.get(vect, "w")
        return np.mean((inputs @ w - targets) ** 2)


def build(n_in, hidden):
    """Layers and the layout of the whole parameter vector (one entry per layer)."""
    layers = []
    width = n_in
    for h in hidden:
        layers.append(Dense(width, h))
        width = h
    head = Readout(width)
    whole = Layout()
    for i, layer in enumerate(layers):
        whole.add(i, (layer.layout.size,))
    whole.add("head", (head.layout.size,))
    return layers, head, whole


LAYERS, HEAD, WHOLE = build(3, (4, 3))


def packed_mlp_loss(vect, X, y):
    """A two-layer network and an L2 penalty, every weight read from ``vect``."""
    h = X
    for i, layer in enumerate(LAYERS):
        h = layer.dot(h, WHOLE.get(vect, i))
    return HEAD.mean(h, WHOLE.get(vect, "head"), y) + 0.01 * np.dot(vect, vect)


def packed_passed_in(vect, X, y, layers, head, whole):
    """The same network with its layers passed as arguments (receivers known at run time)."""
    h = X
    for i, layer in enumerate(layers):
        h = layer.dot(h, whole.get(vect, i))
    return head.mean(h, whole.get(vect, "head"), y)


def dict_default(x, table):
    """A dict's ``get`` with a differentiated default: only the missing key's default flows."""
    return table.get("scale", 1.0) * np.sum(x**2) + table.get("shift", x[0]) * 3.0


_rs = np.random.RandomState(5)
_X = _rs.randn(6, 3)
_y = _rs.randn(6)
_V = _rs.randn(WHOLE.size) * 0.5

PROGRAMS = [
    Program("packed_mlp_loss", (_V, _X, _y), checks=("grad", "vg", "fwd", "hvp")),
    Program(
        "packed_passed_in",
        (_V, _X, _y, LAYERS, HEAD, WHOLE),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("dict_default", (_rs.randn(3), {"scale": 2.0}), checks=("grad", "vg", "fwd", "hvp")),
]
