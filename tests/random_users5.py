"""Fifth round of random user programs: whole programs the way users bring them.

A program is ``f(x, net, d, p)`` of :mod:`random_check4` (``h`` a vector of 4 and ``s`` a
scalar updated by the families drawn, a scalar returned); :mod:`random_check5` checks it
(and a variant returning a vector, through ``vjp`` and the Jacobians). Where the earlier
rounds drew one construct a snippet, a family here is a small program of its own, mostly a
helper of :data:`HELPERS5` called on the parameters: likelihoods (``scipy.stats`` t,
gamma, beta, lognorm, multivariate normal, Poisson and binomial with array parameters, a
mixture through ``logsumexp``, a Gaussian-process marginal likelihood through
``cholesky`` and ``cho_solve``, a Bayesian linear regression, a Kalman filter loop),
models (MLPs on lists of tuples and on dicts of dicts with several activations and
regularisers, an attention block with a mask, 1-D convolutions by a loop and by
``np.convolve``, LSTM and GRU steps, Keras-style classes with sublayers, batch and layer
norm), numerics (Euler and RK4 integrators, Newton with ``while`` and a tolerance, fixed
points with ``break``, bisection, ``np.interp``, Horner's rule, ``np.select`` and
``np.piecewise``) and language (decorators with ``functools.wraps``, factories,
``functools.partial``, generators, recursion, dataclass and ``typing.NamedTuple``
parameters, ``match`` statements).
"""

from __future__ import annotations

from random_users import Snippet

#: The helpers the families call (before ``f`` in the program's module).
HELPERS5 = """
import dataclasses
import functools
import math
import typing

import scipy.linalg as sla


def t_loglik(y, mu, log_scale, nu=4.0):
    return np.sum(scipy.stats.t.logpdf(y, nu, loc=mu, scale=np.exp(log_scale)))


def mixture_loglik(y, means, log_sds, logits):
    logw = logits - scipy.special.logsumexp(logits)
    comp = scipy.stats.norm.logpdf(y[:, None], means[None, :], np.exp(log_sds)[None, :])
    return np.sum(scipy.special.logsumexp(comp + logw[None, :], axis=1))


def rbf(a, b, ell, amp):
    diff = a[:, None] - b[None, :]
    return amp ** 2 * np.exp(-0.5 * diff ** 2 / ell ** 2)


def gp_nll(xs, ys, log_ell, log_amp, log_noise):
    K = rbf(xs, xs, np.exp(log_ell), np.exp(log_amp)) + (np.exp(log_noise) + 1e-3) * np.eye(len(xs))
    L = np.linalg.cholesky(K)
    alpha = sla.cho_solve((L, True), ys)
    return 0.5 * ys @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(xs) * np.log(2 * np.pi)


def gp_nll_tri(xs, ys, log_ell):
    K = rbf(xs, xs, np.exp(log_ell), 1.0) + 0.1 * np.eye(len(xs))
    L = np.linalg.cholesky(K)
    z = sla.solve_triangular(L, ys, lower=True)
    return 0.5 * z @ z + np.sum(np.log(np.diag(L)))


def blr_evidence(X, y, log_alpha, log_beta):
    alpha, beta = np.exp(log_alpha), np.exp(log_beta)
    A = alpha * np.eye(X.shape[1]) + beta * X.T @ X
    m = beta * np.linalg.solve(A, X.T @ y)
    resid = y - X @ m
    sign, logdet = np.linalg.slogdet(A)
    return (
        0.5 * X.shape[1] * log_alpha + 0.5 * len(y) * log_beta
        - 0.5 * beta * resid @ resid - 0.5 * alpha * m @ m - 0.5 * logdet
    )


def kalman_loglik(ys, a, q, r):
    m, P, ll = 0.0, 1.0, 0.0
    for y in ys:
        m, P = a * m, a * a * P + q
        S = P + r
        ll = ll - 0.5 * (np.log(2 * np.pi * S) + (y - m) ** 2 / S)
        K = P / S
        m, P = m + K * (y - m), (1 - K) * P
    return ll


def kalman_2d(ys, F, Q, R):
    m = np.zeros(2)
    P = np.eye(2)
    H = np.array([[1.0, 0.0]])
    ll = 0.0
    for t in range(len(ys)):
        m = F @ m
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        v = ys[t] - H @ m
        K = P @ H.T / S[0, 0]
        m = m + K[:, 0] * v[0]
        P = P - K @ H @ P
        ll = ll - 0.5 * (v[0] ** 2 / S[0, 0] + np.log(S[0, 0]))
    return ll


def gelu(u):
    return 0.5 * u * (1.0 + np.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))


def softplus(u):
    return np.log1p(np.exp(-np.abs(u))) + np.maximum(u, 0.0)


def elu(u, a=1.0):
    return np.where(u > 0, u, a * (np.exp(np.minimum(u, 0.0)) - 1.0))


ACTS = {"tanh": np.tanh, "gelu": gelu, "softplus": softplus, "elu": elu}


def mlp_acts(params, u, acts):
    for (W, b), name in zip(params, acts):
        u = ACTS[name](W @ u + b)
    return u


def mlp_dict(params, u):
    n = len(params)
    for i in range(n):
        layer = params[f"layer{i}"]
        u = layer["W"] @ u + layer["b"]
        if i < n - 1:
            u = np.tanh(u)
    return u


def l2_penalty(params, lam=1e-2):
    return lam * sum(np.sum(W ** 2) for W, _ in params)


def l1_penalty(params, lam=1e-2):
    return lam * sum(np.sum(np.abs(W)) for W, _ in params)


def softmax_rows(z):
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    return softmax_rows(scores) @ V


def conv1d_loop(u, k):
    n = len(u) - len(k) + 1
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sum(u[i : i + len(k)] * k)
    return out


def conv1d_list(u, k):
    return np.array([u[i : i + len(k)] @ k for i in range(len(u) - len(k) + 1)])


def sigmoid(u):
    return 1.0 / (1.0 + np.exp(-u))


def lstm_step(u, hc, W, U, b):
    hp, c = hc
    z = W @ u + U @ hp + b
    i, f, o, g = np.split(z, 4)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c), c


def gru_step(u, hp, Wz, Wr, Wh):
    xh = np.concatenate([u, hp])
    z = sigmoid(Wz @ xh)
    r = sigmoid(Wr @ xh)
    cand = np.tanh(Wh @ np.concatenate([u, r * hp]))
    return (1 - z) * hp + z * cand


class Dense:
    def __init__(self, W, b, act=None):
        self.W = W
        self.b = b
        self.act = act

    def __call__(self, u):
        z = self.W @ u + self.b
        return z if self.act is None else self.act(z)


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, u):
        for layer in self.layers:
            u = layer(u)
        return u


class Residual:
    def __init__(self, inner, gain=0.5):
        self.inner = inner
        self.gain = gain

    def __call__(self, u):
        return u + self.gain * self.inner(u)


class Model:
    def __init__(self, net):
        self.l1 = Dense(net[0][0], net[0][1], np.tanh)
        self.l2 = Dense(net[1][0], net[1][1])

    def __call__(self, u):
        return self.l2(self.l1(u))

    def loss(self, u, target):
        return np.mean((self(u) - target) ** 2)


def batch_norm(X, gamma, beta, eps=1e-5):
    mu = X.mean(axis=0)
    var = X.var(axis=0)
    return gamma * (X - mu) / np.sqrt(var + eps) + beta


def layer_norm(u, g, b, eps=1e-5):
    mu = np.mean(u)
    sd = np.sqrt(np.mean((u - mu) ** 2) + eps)
    return g * (u - mu) / sd + b


def euler(fun, y, dt, n):
    for _ in range(n):
        y = y + dt * fun(y)
    return y


def rk4(fun, y, dt, n):
    for _ in range(n):
        k1 = fun(y)
        k2 = fun(y + 0.5 * dt * k1)
        k3 = fun(y + 0.5 * dt * k2)
        k4 = fun(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def rk4_t(fun, y, t0, t1, n):
    dt = (t1 - t0) / n
    t = t0
    for _ in range(n):
        k1 = fun(t, y)
        k2 = fun(t + dt / 2, y + dt / 2 * k1)
        k3 = fun(t + dt / 2, y + dt / 2 * k2)
        k4 = fun(t + dt, y + dt * k3)
        y = y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        t = t + dt
    return y


def newton_sqrt(a, tol=1e-12):
    z = 1.0
    while abs(z * z - a) > tol:
        z = 0.5 * (z + a / z)
    return z


def newton_cubic(c, z=1.0, maxiter=50):
    it = 0
    while it < maxiter:
        step = (z ** 3 + z - c) / (3 * z ** 2 + 1)
        z = z - step
        it += 1
        if abs(step) < 1e-13:
            break
    return z


def fixed_point_cos(a, tol=1e-12):
    z = 0.0
    for _ in range(200):
        z_new = a * np.cos(z)
        if abs(z_new - z) < tol:
            break
        z = z_new
    return z_new


def bisect(fun, lo, hi, n=60):
    for _ in range(n):
        mid = 0.5 * (lo + hi)
        if fun(mid) > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def horner(coefs, u):
    out = np.zeros_like(u)
    for c in coefs:
        out = out * u + c
    return out


def horner_rev(coefs, u):
    out = 0.0
    for c in reversed(coefs):
        out = out * u + c
    return out


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def scaled_by(k):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(u, *args, **kwargs):
            return k * fn(u, *args, **kwargs)

        return wrapper

    return deco


@traced
def energy(u, w):
    return np.sum(w * u ** 2)


@scaled_by(0.5)
def smooth(u, c=1.0):
    return np.log(np.cosh(c * u))


def make_loss(target, weight=1.0):
    def loss(u):
        return weight * np.sum((u - target) ** 2)

    return loss


def make_counter_act(scale):
    calls = [0]

    def act(u):
        calls[0] += 1
        return np.tanh(scale * u)

    return act


def shifted_power(u, shift, power=2):
    return (u - shift) ** power


def pairs_of(u):
    for i in range(len(u) - 1):
        yield u[i], u[i + 1]


def running(u):
    tot = 0.0
    for v in u:
        tot = tot + v
        yield tot


def tree_depth_sum(u, depth):
    if depth <= 0:
        return np.sum(u ** 2)
    half = len(u) // 2
    if half == 0:
        return np.sum(np.sin(u))
    return tree_depth_sum(u[:half], depth - 1) + 0.5 * tree_depth_sum(u[half:], depth - 1)


def power_rec(u, n):
    return 1.0 if n == 0 else u * power_rec(u, n - 1)


@dataclasses.dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.0

    def apply(self, u):
        return self.scale * (self.W @ u + self.b)


@dataclasses.dataclass(frozen=True)
class Prior:
    mu: np.ndarray
    log_sd: np.ndarray

    def logpdf(self, u):
        return np.sum(-0.5 * ((u - self.mu) / np.exp(self.log_sd)) ** 2 - self.log_sd)


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: np.ndarray


class GaussParams(typing.NamedTuple):
    loc: np.ndarray
    log_scale: np.ndarray
    df: float = 5.0


def apply_layer(layer, u):
    return np.tanh(layer.W @ u + layer.b)


def act_by_name(name, u):
    match name:
        case "relu":
            return np.maximum(u, 0.0)
        case "tanh":
            return np.tanh(u)
        case "swish":
            return u * sigmoid(u)
        case _:
            return u


def apply_spec(spec, u):
    match spec:
        case ("scale", k):
            return k * u
        case ("shift", v):
            return u + v
        case {"kind": "power", "n": n}:
            return u ** n
        case _:
            return u
"""


def _s(name: str, text: str, *, writes: bool = False, kink: bool = False) -> Snippet:
    return Snippet(name, tuple(text.strip("\n").split("\n")), writes, kink)


#: Likelihoods: ``scipy.stats`` with array parameters, mixtures, GPs, Kalman filters.
LIKELIHOODS: tuple[Snippet, ...] = (
    _s("t_loglik", "s = s + 0.1 * t_loglik(x, h, d['shift'], nu=3.0 + d['scale'] ** 2)"),
    _s(
        "gamma_logpdf",
        "y = np.exp(0.3 * x)\n"
        "s = s + 0.1 * np.sum(scipy.stats.gamma.logpdf(y, 1.0 + h ** 2, scale=np.exp(d['shift'])))",
    ),
    _s(
        "beta_logpdf",
        "u = scipy.special.expit(h)\n"
        "s = s + 0.1 * np.sum(scipy.stats.beta.logpdf(u, 1.5 + d['scale'] ** 2, 2.0))",
    ),
    _s(
        "lognorm_logpdf",
        "y = np.exp(0.5 * x)\ns = s + 0.1 * np.sum(scipy.stats.lognorm.logpdf(y, np.exp(0.3 * h), "
        "scale=np.exp(d['shift'])))",
    ),
    _s(
        "mvn_logpdf",
        "W = net[0][0]\ncov = W @ W.T + np.eye(4)\n"
        "s = s + 0.1 * scipy.stats.multivariate_normal.logpdf(x, mean=h, cov=cov)",
    ),
    _s(
        "mvn_logpdf_rows",
        "Y = np.stack([x, x * 0.5, h])\ncov = np.diag(np.exp(d['shift']))\n"
        "s = s + 0.05 * np.sum(scipy.stats.multivariate_normal.logpdf(Y, mean=h * 0.5, cov=cov))",
    ),
    _s(
        "poisson_logpmf",
        "k = np.array([0, 1, 3, 2])\nrate = np.exp(0.5 * h)\n"
        "s = s + 0.1 * np.sum(scipy.stats.poisson.logpmf(k, rate))",
    ),
    _s(
        "binom_logpmf",
        "k = np.array([1, 4, 2, 0])\nprob = scipy.special.expit(h)\n"
        "s = s + 0.1 * np.sum(scipy.stats.binom.logpmf(k, 5, prob))",
    ),
    _s(
        "mixture_logsumexp",
        "s = s + 0.1 * mixture_loglik(x, h[:3], d['shift'][:3], d['scale'][:3])",
    ),
    _s(
        "mixture_inline",
        "comps = [scipy.stats.norm.logpdf(x, loc=m, scale=1.0) for m in (h[0], h[1], -h[2])]\n"
        "s = s + 0.1 * np.sum(scipy.special.logsumexp(np.stack(comps) + np.log(1.0 / 3.0), "
        "axis=0))",
    ),
    _s("gp_nll", "s = s + 0.1 * gp_nll(x, h, d['shift'][0], d['shift'][1], d['shift'][2])"),
    _s("gp_nll_tri", "s = s + 0.1 * gp_nll_tri(h, x, 0.3 * d['scale'][0])"),
    _s(
        "blr_evidence",
        "X = np.stack([x, h, np.ones(4)], axis=1)\n"
        "s = s + 0.1 * blr_evidence(X, np.sin(x), d['shift'][0], d['shift'][1])",
    ),
    _s(
        "kalman_loop",
        "s = s + 0.1 * kalman_loglik(h, 0.9 * np.tanh(d['scale'][0]), np.exp(d['shift'][0]),"
        " np.exp(d['shift'][1]))",
    ),
    _s(
        "kalman_2d",
        "F = np.eye(2) + 0.1 * net[0][0][:2, :2]\nQ = 0.1 * np.eye(2)\n"
        "R = np.array([[np.exp(d['shift'][0])]])\ns = s + 0.1 * kalman_2d(h, F, Q, R)",
    ),
    _s(
        "norm_logcdf_probit",
        "z = x * d['scale'] + h\ny = np.array([1.0, -1.0, 1.0, -1.0])\n"
        "s = s + 0.1 * np.sum(scipy.stats.norm.logcdf(y * z))",
    ),
    _s(
        "bernoulli_logits",
        "y = np.array([1.0, 0.0, 1.0, 1.0])\nlogits = net[0][0] @ h + net[0][1]\n"
        "s = s - 0.1 * np.sum(y * logits - np.logaddexp(0.0, logits))",
    ),
    _s(
        "cross_entropy_onehot",
        "logits = np.outer(h, x)\nlabels = np.array([0, 2, 1, 3])\n"
        "logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)\n"
        "s = s - 0.1 * np.mean(logp[np.arange(4), labels])",
    ),
)

#: Models: MLPs on parameter trees, attention, convolutions, recurrent cells, classes.
MODELS: tuple[Snippet, ...] = (
    _s("mlp_acts_l2", "h = mlp_acts(net, h, ['gelu', 'tanh'])\ns = s + l2_penalty(net)"),
    _s(
        "mlp_acts_l1",
        "h = mlp_acts(net, h, ('softplus', 'elu'))\ns = s + l1_penalty(net, lam=1e-3)",
        kink=True,
    ),
    _s(
        "mlp_dict_of_dicts",
        "params = {f'layer{i}': {'W': W, 'b': b} for i, (W, b) in enumerate(net)}\n"
        "h = mlp_dict(params, h)",
    ),
    _s(
        "mlp_dict_literal",
        "params = {'layer0': {'W': p['enc'][0], 'b': p['enc'][1]},"
        " 'layer1': {'W': p['dec'][0], 'b': p['dec'][1]}}\n"
        "h = np.tanh(mlp_dict(params, h))\n"
        "s = s + 1e-2 * sum(np.sum(v['W'] ** 2) for v in params.values())",
    ),
    _s(
        "mlp_inline_loss",
        "target = np.sin(x)\npred = h\nfor W, b in net[:-1]:\n"
        "    pred = np.maximum(W @ pred + b, 0.0)\n"
        "pred = net[-1][0] @ pred + net[-1][1]\ns = s + np.mean((pred - target) ** 2)",
        kink=True,
    ),
    _s(
        "attention_self",
        "T = np.stack([h, x, h * x])\nWq, Wk = net[0][0], net[1][0]\n"
        "out = attention(T @ Wq.T, T @ Wk.T, T)\nh = h + 0.5 * out[0]",
    ),
    _s(
        "attention_mask",
        "T = np.stack([h, x, np.tanh(h)])\nmask = np.tril(np.ones((3, 3))) > 0\n"
        "out = attention(T @ net[0][0].T, T, T, mask=mask)\nh = h + 0.5 * out[-1]",
    ),
    _s(
        "attention_inline",
        "Q = np.outer(h, p['nt'].inner.a)\nscores = Q @ Q.T * 0.25\n"
        "scores = np.where(np.eye(4) > 0, -1e9, scores)\n"
        "w = np.exp(scores - scores.max(axis=1, keepdims=True))\n"
        "w = w / w.sum(axis=1, keepdims=True)\n"
        "h = h + 0.5 * w @ h",
    ),
    _s(
        "conv1d_loop",
        "k = p['nt'].inner.b[:3]\nc = conv1d_loop(np.concatenate([h, x]), k)\nh = h + 0.5 * c[:4]",
        writes=True,
    ),
    _s(
        "conv1d_list",
        "c = conv1d_list(np.concatenate([h, x]), d['shift'][:2])\nh = h + 0.5 * c[1:5]",
    ),
    _s(
        "np_convolve",
        "c = np.convolve(h, p['nt'].inner.a[:3], mode='same')\n"
        "h = h + 0.5 * c + 0.1 * np.convolve(h, x, mode='valid')",
    ),
    _s(
        "np_convolve_full",
        "c = np.convolve(h, np.array([0.25, 0.5, 0.25]))\nh = c[1:5] + 0.1 * c[0] * h",
    ),
    _s(
        "lstm_loop",
        "W = np.tile(net[0][0], (4, 1)) * 0.5\nU = np.tile(net[1][0], (4, 1)) * 0.5\n"
        "b = np.tile(net[0][1], 4)\nstate = (np.zeros(4), np.zeros(4))\n"
        "for u in (h, x, h * x):\n    state = lstm_step(u, state, W, U, b)\nh = h + state[0]",
    ),
    _s(
        "gru_loop",
        "Wz = np.concatenate([net[0][0], net[1][0]], axis=1) * 0.5\n"
        "Wr = np.concatenate([net[1][0], net[0][0]], axis=1) * 0.5\n"
        "Wh = np.concatenate([p['enc'][0], p['dec'][0]], axis=1) * 0.5\nhs = np.zeros(4)\n"
        "for t in range(3):\n    hs = gru_step(h * (t + 1) * 0.5, hs, Wz, Wr, Wh)\nh = h + hs",
    ),
    _s(
        "rnn_scan_outputs",
        "outs = []\nhs = np.zeros(4)\nfor t in range(3):\n"
        "    hs = np.tanh(net[0][0] @ hs + net[1][0] @ (h * (t + 1)) + net[0][1])\n"
        "    outs.append(hs)\nh = h + np.mean(np.stack(outs), axis=0)",
    ),
    _s(
        "keras_sequential_passed",
        "model = Sequential([Dense(W, b, np.tanh) for W, b in net])\nh = model(h)",
    ),
    _s(
        "keras_residual",
        "block = Residual(Dense(p['enc'][0], p['enc'][1], np.sin), gain=0.3)\n"
        "model = Sequential([block, Dense(*p['dec'])])\nh = np.tanh(model(h))",
    ),
    _s("keras_model_loss", "m = Model(net)\ns = s + m.loss(h, x)\nh = h + 0.5 * m(h)"),
    _s(
        "keras_inline_class",
        "layers = [Dense(W, b) for W, b in net]\nfor layer in layers:\n"
        "    layer.act = gelu\n    h = layer(h)",
    ),
    _s(
        "batch_norm_fn",
        "X = np.stack([h, x, h * x, np.sin(h)])\n"
        "Y = batch_norm(X, d['scale'], d['shift'])\nh = h + 0.3 * Y[0] + 0.1 * Y[2]",
    ),
    _s(
        "layer_norm_fn",
        "h = layer_norm(net[0][0] @ h + net[0][1], d['scale'], d['shift'])",
    ),
    _s(
        "dropout_fixed_mask",
        "rng = np.random.default_rng(1)\nmask = rng.random(4) > 0.3\n"
        "h = np.where(mask, h / 0.7, 0.0) + 0.1 * h",
    ),
    _s(
        "autoencoder",
        "z = np.tanh(p['enc'][0] @ h + p['enc'][1])\nrec = p['dec'][0] @ z + p['dec'][1]\n"
        "s = s + np.mean((rec - h) ** 2) + 1e-2 * np.sum(z ** 2)\nh = rec",
    ),
    _s(
        "maxpool_pairs",
        "pool = np.max(np.stack([h[0::2], h[1::2]]), axis=0)\nh = h + np.repeat(pool, 2) * 0.3",
        kink=True,
    ),
    _s(
        "huber_loss",
        "r = h - x\nhub = np.where(np.abs(r) < 1.0, 0.5 * r ** 2, np.abs(r) - 0.5)\n"
        "s = s + np.sum(hub)",
        kink=True,
    ),
)

#: Numerics: integrators, Newton and fixed points, bisection, interpolation, piecewise.
NUMERICS: tuple[Snippet, ...] = (
    _s(
        "euler_decay",
        "k = np.exp(d['shift'])\nh = euler(lambda y: -k * y + np.sin(y), h, 0.05, 10)",
    ),
    _s(
        "rk4_linear",
        "A = 0.3 * (net[0][0] - net[0][0].T) - 0.2 * np.eye(4)\n"
        "h = rk4(lambda y: A @ y, h, 0.1, 5)",
    ),
    _s(
        "rk4_pendulum",
        "g = 1.0 + d['scale'][0] ** 2\n"
        "def rhs(t, y):\n    return np.array([y[1], -g * np.sin(y[0]) + 0.1 * t])\n"
        "y = rk4_t(rhs, h[:2], 0.0, 1.0, 8)\nh = h + 0.5 * np.concatenate([y, y])",
    ),
    _s(
        "euler_inline",
        "y = h * 1.0\nv = np.zeros(4)\ndt = 0.1\nfor _ in range(8):\n"
        "    a = -d['scale'] ** 2 * y - 0.1 * v\n    v = v + dt * a\n    y = y + dt * v\nh = y",
    ),
    _s(
        "newton_sqrt",
        "r = newton_sqrt(1.0 + h[0] ** 2)\ns = s + r + newton_sqrt(2.0 + x[1] ** 2) * h[1]",
    ),
    _s("newton_cubic", "s = s + newton_cubic(h[2]) + newton_cubic(h[0] * h[1], z=0.5)"),
    _s(
        "newton_inline_while",
        "c = 2.0 + h[3] ** 2\nz = c\nn = 0\nwhile abs(z ** 2 - c) > 1e-12 and n < 60:\n"
        "    z = z - (z ** 2 - c) / (2 * z)\n    n += 1\ns = s + z",
    ),
    _s("fixed_point_break", "s = s + fixed_point_cos(0.5 + 0.1 * np.tanh(h[0]))"),
    _s(
        "fixed_point_vec",
        "z = np.zeros(4)\nfor it in range(100):\n"
        "    z_new = 0.5 * np.tanh(net[0][0] @ z * 0.3 + h)\n"
        "    if np.max(np.abs(z_new - z)) < 1e-12:\n        break\n    z = z_new\nh = h + z_new",
    ),
    _s(
        "bisect_then_scale",
        "root = bisect(lambda z: z ** 3 - 2.0, 0.0, 2.0)\nh = h * root",
    ),
    _s(
        "bisect_newton_polish",
        "c = 1.0 + h[0] ** 2\nz = bisect(lambda z: z ** 3 - c, 0.0, 3.0, n=30)\n"
        "z = z - (z ** 3 - c) / (3 * z ** 2)\ns = s + z",
    ),
    _s("cumsum_cumprod", "h = np.cumsum(h) * 0.3 + np.cumprod(1.0 + 0.1 * h)"),
    _s(
        "cumsum_axis",
        "M = np.outer(h, x)\n"
        "h = h + 0.1 * np.cumsum(M, axis=1)[:, -1] + 0.1 * np.cumprod(M[:2], axis=0)[-1]",
    ),
    _s(
        "interp_values",
        "xp = np.array([-3.0, -1.0, 0.0, 1.0, 3.0])\nfp = np.array([0.0, 1.0, 0.5, 2.0, 1.0])\n"
        "h = h + np.interp(h, xp, fp)",
        kink=True,
    ),
    _s(
        "interp_fp_param",
        "xp = np.linspace(-4.0, 4.0, 4)\n"
        "h = h + np.interp(x, xp, d['shift']) * np.interp(0.3, xp, h)",
        kink=True,
    ),
    _s("horner_array", "h = horner([0.1, -0.2, 0.5, 1.0], h) + horner(p['nt'].inner.a, 0.5)"),
    _s(
        "horner_scalar",
        "s = s + horner_rev([h[0], h[1], h[2]], x[0]) + horner_rev([1.0, 0.5], h[3])",
    ),
    _s(
        "np_select",
        "h = np.select([h < -1.0, h < 1.0], [-1.0 - 0.1 * h, h ** 3 * 0.5 + 0.5 * h], h * 1.0)",
        kink=True,
    ),
    _s(
        "np_piecewise",
        "h = np.piecewise(h, [h < 0, h >= 0], [lambda v: np.exp(v) - 1.0, lambda v: v + 0.1 * v "
        "** 2])",
        kink=True,
    ),
    _s(
        "np_polyval",
        "s = s + np.sum(np.polyval([0.1, -0.3, 1.0], h)) + np.polyval(p['nt'].inner.a, 0.7)",
    ),
    _s(
        "trapz_quadrature",
        "ts = np.linspace(0.0, 1.0, 9)\nvals = np.exp(-h[0] ** 2 * ts) * np.cos(h[1] * ts)\n"
        "s = s + np.sum(0.5 * (vals[1:] + vals[:-1]) * np.diff(ts))",
    ),
    _s(
        "gradient_descent_inner",
        "w = np.zeros(4)\nfor _ in range(5):\n    g = 2 * (w - h) + 0.1 * w\n    w = w - 0.2 * g\n"
        "h = h + w",
    ),
    _s(
        "power_iteration",
        "A = net[0][0] @ net[0][0].T + np.diag(d['scale'] ** 2)\nv = np.ones(4) / 2.0\n"
        "for _ in range(30):\n    v = A @ v\n    v = v / np.linalg.norm(v)\n"
        "s = s + v @ A @ v * 0.1",
    ),
)

#: Language: decorators, factories, partials, generators, recursion, records, ``match``.
LANGUAGE: tuple[Snippet, ...] = (
    _s("wraps_decorator", "s = s + energy(h, d['scale']) * 0.1 + np.sum(smooth(h, c=0.5))"),
    _s(
        "local_wraps",
        "def logged(fn):\n    @functools.wraps(fn)\n    def inner(*args, **kwargs):\n"
        "        return fn(*args, **kwargs)\n    return inner\n"
        "@logged\ndef layer(u, W, b=0.0):\n    return np.tanh(W @ u + b)\n"
        "h = layer(h, net[0][0], b=net[0][1])",
    ),
    _s(
        "factory_loss",
        "loss = make_loss(x, weight=0.5)\ns = s + loss(h) + make_loss(d['shift'])(h)",
    ),
    _s("factory_with_state", "act = make_counter_act(0.7)\nh = act(h) + act(h * 0.5)"),
    _s(
        "partial_power",
        "sq = functools.partial(shifted_power, shift=d['shift'])\n"
        "cube = functools.partial(shifted_power, power=3, shift=0.0)\n"
        "h = 0.5 * sq(h) + 0.1 * cube(h)",
    ),
    _s(
        "partial_positional",
        "lin = functools.partial(np.dot, net[0][0])\nh = np.tanh(lin(h)) + 0.1 * h",
    ),
    _s(
        "inner_star_kwargs",
        "def combine(*parts, **weights):\n    tot = 0.0\n    for k, part in enumerate(parts):\n"
        "        tot = tot + weights.get(f'w{k}', 1.0) * part\n    return tot\n"
        "h = combine(h, np.sin(h), x, w0=0.5, w2=0.1)",
    ),
    _s(
        "inner_forward_kwargs",
        "def act(u, gain=1.0, bias=0.0):\n    return np.tanh(gain * u + bias)\n"
        "def apply(u, **kw):\n    return act(u, **kw)\nh = apply(h, gain=d['scale']) + apply(h)",
    ),
    _s("gen_pairs_sum", "s = s + sum(a * b for a, b in pairs_of(h))"),
    _s("gen_for_loop", "for tot in running(h):\n    s = s + 0.1 * tot ** 2"),
    _s("gen_list", "cums = list(running(h * x))\nh = h + 0.1 * np.array(cums)"),
    _s("recursion_tree", "s = s + tree_depth_sum(h, 2) + tree_depth_sum(x * h, depth=1)"),
    _s("recursion_power", "h = h + 0.1 * power_rec(h, 3)"),
    _s(
        "dataclass_affine",
        "aff = Affine(net[0][0], net[0][1], scale=0.5)\n"
        "h = np.tanh(aff.apply(h)) + Affine(*net[1]).apply(h)",
    ),
    _s(
        "dataclass_frozen_prior",
        "prior = Prior(mu=d['shift'], log_sd=0.1 * d['scale'])\ns = s + 0.1 * prior.logpdf(h)",
    ),
    _s(
        "dataclass_replace",
        "aff = Affine(p['enc'][0], p['enc'][1])\naff2 = dataclasses.replace(aff, scale=0.3)\n"
        "h = aff2.apply(h) + 0.1 * aff.apply(h)",
    ),
    _s(
        "namedtuple_layers",
        "layers = [Layer(W, b) for W, b in net]\nfor layer in layers:\n"
        "    h = apply_layer(layer, h)",
    ),
    _s(
        "namedtuple_defaults",
        "gp = GaussParams(loc=d['shift'], log_scale=0.1 * h)\n"
        "s = s + 0.1 * np.sum(scipy.stats.t.logpdf(x, gp.df, loc=gp.loc, "
        "scale=np.exp(gp.log_scale)))",
    ),
    _s(
        "namedtuple_fields_loop",
        "layer = Layer(*p['enc'])\nfor name in layer._fields:\n    v = getattr(layer, name)\n"
        "    s = s + 0.01 * np.sum(v ** 2)\nh = apply_layer(layer, h)",
    ),
    _s(
        "match_act_names",
        "for name in ('tanh', 'swish', 'linear'):\n    h = act_by_name(name, h) * 0.9",
    ),
    _s(
        "match_specs",
        "specs = [('scale', d['scale']), ('shift', d['shift']), {'kind': 'power', 'n': 2}]\n"
        "for spec in specs:\n    h = 0.5 * apply_spec(spec, h) + 0.5 * h",
    ),
    _s(
        "match_inline",
        "mode = 'residual'\nmatch mode:\n    case 'residual':\n"
        "        h = h + np.tanh(net[0][0] @ h)\n"
        "    case 'plain':\n        h = np.tanh(net[0][0] @ h)",
    ),
    _s(
        "lambda_table",
        "losses = {'mse': lambda a, b: np.mean((a - b) ** 2), 'mae': lambda a, b: "
        "np.mean(np.abs(a - b))}\n"
        "s = s + losses['mse'](h, x) + 0.1 * losses['mae'](h, 0.0)",
        kink=True,
    ),
    _s(
        "sum_of_map",
        "s = s + sum(map(np.sum, [h ** 2, np.sin(h), d['scale'] * h])) * 0.1",
    ),
    _s(
        "sorted_by_value",
        "order = sorted(range(4), key=lambda i: float(x[i]))\nh = h[order] * 0.5 + h",
    ),
)

SNIPPETS: tuple[Snippet, ...] = LIKELIHOODS + MODELS + NUMERICS + LANGUAGE

#: Families autograd does not follow (``scipy.linalg``, SciPy distributions and NumPy
#: functions it has no rule for, writes into arrays, ``np.select``/``np.piecewise``...):
#: finite differences alone check them.
NO_ORACLE5 = {
    "gamma_logpdf",
    "beta_logpdf",
    "lognorm_logpdf",
    "mvn_logpdf_rows",
    "binom_logpmf",
    "gp_nll",
    "gp_nll_tri",
    "blr_evidence",
    "norm_logcdf_probit",
    "conv1d_loop",
    "np_convolve",
    "np_convolve_full",
    "interp_values",
    "interp_fp_param",
    "np_select",
    "np_piecewise",
    "np_polyval",
    "dataclass_affine",
    "dataclass_frozen_prior",
    "dataclass_replace",
    "namedtuple_layers",
    "namedtuple_defaults",
    "namedtuple_fields_loop",
    "keras_inline_class",
    "match_specs",
    "fixed_point_break",
    "newton_sqrt",
    "newton_cubic",
    "newton_inline_while",
    "bisect_newton_polish",
    "partial_positional",
    "t_loglik",
    "mixture_inline",
    "sorted_by_value",
    "mvn_logpdf",
}
#: What the vector-valued variant returns (``vjp`` and the Jacobians check it).
VECTOR_RETURN = "h * (1.0 + 0.1 * s)"
RETURNS = ("s + np.sum(h ** 2)", "s + np.sum(np.tanh(h))", "0.5 * s + np.sum(h * x)")


def program(snippets: list[Snippet], ret: str) -> str:
    """The source of the helpers and ``f(x, net, d, p)`` made of ``snippets``."""
    body = ["def f(x, net, d, p):", "    h = x * 1.0", "    s = 0.0"]
    for snippet in snippets:
        body += ["    " + line for line in snippet.lines]
    body.append(f"    return {ret}")
    return HELPERS5 + "\n\n" + "\n".join(body) + "\n"
