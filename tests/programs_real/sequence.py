"""Recurrent networks: a vanilla RNN with the cell as an inner function, an LSTM with
``*args`` helpers, a GRU with dict parameters, and a char-level style softmax readout."""

from __future__ import annotations

import numpy as np

from programs_real import Program


def sigmoid(x):
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def rnn_loss(params, xs, ys):
    """Elman RNN, cell as an inner function closing over the parameters."""
    Wx, Wh, b, Wy = params

    def cell(h, x):
        return np.tanh(x @ Wx + h @ Wh + b)

    h = np.zeros(Wh.shape[0])
    loss = 0.0
    for t in range(xs.shape[0]):
        h = cell(h, xs[t])
        loss = loss + (h @ Wy - ys[t]) ** 2
    return loss / xs.shape[0]


def affine(x, *weights_and_bias):
    """``x @ W1 + h @ W2 + ... + b`` from alternating inputs and weights, then a bias."""
    *pairs, b = weights_and_bias
    out = b
    for i in range(0, len(pairs), 2):
        out = out + pairs[i] @ pairs[i + 1]
    return out + 0.0 * np.sum(x)


def affine_sliced(*weights_and_bias):
    """Like :func:`affine` without starred unpacking: inputs and weights, then the bias."""
    pairs, b = weights_and_bias[:-1], weights_and_bias[-1]
    out = b
    for x, W in zip(pairs[0::2], pairs[1::2]):
        out = out + x @ W
    return out


def lstm_sliced_loss(params, readout, xs, target):
    """The LSTM again with gates computed in one loop over a list of gate parameters."""
    h = np.zeros(params[1].shape[0])
    c = np.zeros_like(h)
    gates = [params[3 * k : 3 * k + 3] for k in range(4)]
    for x in xs:
        i, f, o, g = [affine_sliced(x, W, h, U, b) for W, U, b in gates]
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
    return np.sum((h @ readout - target) ** 2)


def lstm_step(params, h, c, x):
    Wi, Ui, bi, Wf, Uf, bf, Wo, Uo, bo, Wg, Ug, bg = params
    i = sigmoid(affine(x, x, Wi, h, Ui, bi))
    f = sigmoid(affine(x, x, Wf, h, Uf, bf))
    o = sigmoid(affine(x, x, Wo, h, Uo, bo))
    g = np.tanh(affine(x, x, Wg, h, Ug, bg))
    c = f * c + i * g
    return o * np.tanh(c), c


def lstm_loss(params, readout, xs, target):
    h = np.zeros(params[1].shape[0])
    c = np.zeros_like(h)
    for x in xs:
        h, c = lstm_step(params, h, c, x)
    return np.sum((h @ readout - target) ** 2)


def gru_loss(p, xs, ys):
    """GRU with parameters in a dict; collects hidden states in a list, stacks them."""

    def gru_cell(h, x):
        z = sigmoid(x @ p["Wz"] + h @ p["Uz"] + p["bz"])
        r = sigmoid(x @ p["Wr"] + h @ p["Ur"] + p["br"])
        cand = np.tanh(x @ p["Wh"] + (r * h) @ p["Uh"] + p["bh"])
        return (1 - z) * h + z * cand

    h = np.zeros(p["Uz"].shape[0])
    hs = []
    for x in xs:
        h = gru_cell(h, x)
        hs.append(h)
    H = np.stack(hs)
    preds = H @ p["Wy"]
    return np.mean((preds - ys) ** 2)


def char_rnn_nll(params, seq_onehot):
    """Next-token negative log-likelihood with log-softmax, hidden state carried along."""
    Wxh, Whh, Why = params["Wxh"], params["Whh"], params["Why"]
    h = np.zeros(Whh.shape[0])
    nll = 0.0
    for t in range(len(seq_onehot) - 1):
        h = np.tanh(Wxh.T @ seq_onehot[t] + Whh @ h)
        logits = Why @ h
        logp = logits - np.log(np.sum(np.exp(logits)))
        nll -= np.dot(logp, seq_onehot[t + 1])
    return nll


_rs = np.random.RandomState(3)
_H, _D = 4, 3


def _lstm_params():
    out = []
    for _ in range(4):
        out += [0.4 * _rs.randn(_D, _H), 0.4 * _rs.randn(_H, _H), 0.1 * _rs.randn(_H)]
    return tuple(out)


_gru = {
    k: 0.4 * _rs.randn(*s)
    for k, s in {
        "Wz": (_D, _H),
        "Uz": (_H, _H),
        "bz": (_H,),
        "Wr": (_D, _H),
        "Ur": (_H, _H),
        "br": (_H,),
        "Wh": (_D, _H),
        "Uh": (_H, _H),
        "bh": (_H,),
        "Wy": (_H, 2),
    }.items()
}

_ZERO_TANGENT = (
    "crash (ValueError in tangent code): the zero tangent 0.0 of a *args entry (data x) "
    "taken out of zip(pairs[0::2], ...) reaches np.matmul(x_dot, W) undensified"
)

PROGRAMS = [
    Program(
        "rnn_loss",
        (
            [0.5 * _rs.randn(_D, _H), 0.5 * _rs.randn(_H, _H), _rs.randn(_H), _rs.randn(_H)],
            _rs.randn(5, _D),
            _rs.randn(5),
        ),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "lstm_loss",
        (_lstm_params(), _rs.randn(_H, 2), _rs.randn(4, _D), _rs.randn(2)),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program(
        "lstm_sliced_loss",
        (_lstm_params(), _rs.randn(_H, 2), _rs.randn(4, _D), _rs.randn(2)),
        wrt=(0, 1),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
    Program("gru_loss", (_gru, _rs.randn(5, _D), _rs.randn(5, 2)), checks=("grad", "vg", "fwd")),
    Program(
        "char_rnn_nll",
        (
            {"Wxh": 0.5 * _rs.randn(4, 5), "Whh": 0.5 * _rs.randn(5, 5), "Why": _rs.randn(4, 5)},
            [np.eye(4)[i] for i in (0, 2, 1, 3, 2)],
        ),
        checks=("grad", "vg", "fwd", "hvp"),
    ),
]
