"""Feed-forward networks: an MLP classifier over ``[(W, b), ...]``, a flat parameter vector
unpacked by a generator, a 1-d convolution net, and a Keras-style model class."""

from __future__ import annotations

import numpy as np

from programs_real import Program


def init_params(sizes, scale=0.3, seed=0):
    """``[(W, b), ...]`` for consecutive layer sizes."""
    rs = np.random.RandomState(seed)
    return [(scale * rs.randn(m, n), scale * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def logsumexp(z, axis=-1):
    zmax = np.max(z, axis=axis, keepdims=True)
    return zmax + np.log(np.sum(np.exp(z - zmax), axis=axis, keepdims=True))


def predict(params, inputs):
    h = inputs
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    return logits - logsumexp(logits)


def mlp_cross_entropy(params, inputs, targets):
    """Mean softmax cross-entropy of one-hot ``targets``, plus L2 on the weights."""
    log_probs = predict(params, inputs)
    l2 = sum(np.sum(W**2) for W, _ in params)
    return -np.mean(np.sum(log_probs * targets, axis=1)) + 1e-3 * l2


def relu_mlp_squared(params, x, y):
    """Regression MLP with ReLU and leaky ReLU, indexing params by layer number."""
    h = x
    for i in range(len(params) - 1):
        W, b = params[i]
        z = np.dot(h, W) + b
        h = np.maximum(z, 0.0) if i % 2 == 0 else np.where(z > 0, z, 0.1 * z)
    out = h @ params[-1][0] + params[-1][1]
    return 0.5 * np.sum((out.ravel() - y) ** 2)


LAYER_SHAPES = [(3, 5), (5, 4), (4, 2)]


def unpack(flat):
    """Yield ``(W, b)`` for each layer of a flat parameter vector."""
    start = 0
    for m, n in LAYER_SHAPES:
        W = flat[start : start + m * n].reshape((m, n))
        start += m * n
        b = flat[start : start + n]
        start += n
        yield W, b


def flat_mlp_loss(flat, x, y):
    h = x
    for W, b in unpack(flat):
        h = np.tanh(h @ W + b)
    return np.mean((h - y) ** 2)


def conv1d_net(params, signal, target):
    """Two filters with ``np.convolve`` (mode='valid'), softplus, then a linear readout."""
    filters, w_out = params["filters"], params["w_out"]
    feats = []
    for k in range(filters.shape[0]):
        c = np.convolve(signal, filters[k], mode="valid")
        feats.append(np.log1p(np.exp(c)))
    h = np.stack(feats)
    pred = np.sum(h * w_out)
    return (pred - target) ** 2


def conv1d_loops(kernel, signal):
    """A 'same'-padded correlation written with explicit loops and an output list."""
    n, k = signal.shape[0], kernel.shape[0]
    pad = k // 2
    padded = np.concatenate([np.zeros(pad), signal, np.zeros(pad)])
    out = []
    for i in range(n):
        acc = 0.0
        for j in range(k):
            acc = acc + kernel[j] * padded[i + j]
        out.append(acc)
    out = np.array(out)
    return np.sum(np.sin(out) ** 2)


class Dense:
    """A dense layer holding its parameters in attributes."""

    def __init__(self, n_in, n_out, rs, activation=np.tanh):
        self.W = 0.4 * rs.randn(n_in, n_out)
        self.b = np.zeros(n_out)
        self.activation = activation

    def __call__(self, x):
        return self.activation(x @ self.W + self.b)


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def model_loss(model, x, y):
    pred = model(x)
    return np.mean((pred - y) ** 2)


def model_params_loss(weights, model, x, y):
    """Loss as a function of a list of weight matrices put into the model's layers."""
    for layer, W in zip(model.layers, weights):
        layer.W = W
    return model_loss(model, x, y)


_rs = np.random.RandomState(1)
_X = _rs.randn(6, 3)
_Y = np.eye(3)[_rs.randint(0, 3, size=6)]
_model = Sequential([Dense(3, 4, _rs), Dense(4, 2, _rs, activation=np.sin)])
_sig = _rs.randn(10)

_SETATTR = (
    "refused (TransformError naming `layer.W = W` and saying that forward mode and second "
    "derivatives do not model object state): grad, value_and_grad and vjp differentiate the "
    "stores into the layers' attributes (tests/test_object_state.py), jvp and hvp do not"
)

PROGRAMS = [
    Program(
        "mlp_cross_entropy",
        (init_params([3, 4, 3]), _X, _Y),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("relu_mlp_squared", (init_params([3, 5, 4, 1], seed=2), _X, _rs.randn(6))),
    Program(
        "flat_mlp_loss",
        (0.5 * _rs.randn(3 * 5 + 5 + 5 * 4 + 4 + 4 * 2 + 2), _X, _rs.randn(6, 2)),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "conv1d_net",
        ({"filters": _rs.randn(2, 3), "w_out": _rs.randn(2, 8)}, _sig, 0.7),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,  # autograd has no VJP of np.convolve for its second argument
    ),
    Program("conv1d_loops", (_rs.randn(3), _sig), checks=("grad", "vg", "fwd", "hvp")),
    Program("model_loss", (_model, _X, _rs.randn(6, 2)), wrt=1, autograd=False),
    Program(
        "model_params_loss",
        ([_rs.randn(3, 4), _rs.randn(4, 2)], _model, _X, _rs.randn(6, 2)),
        checks=("grad", "vg", "fwd", "hvp"),
        autograd=False,
        xfail=dict.fromkeys(("fwd", "hvp"), _SETATTR),
    ),
]
