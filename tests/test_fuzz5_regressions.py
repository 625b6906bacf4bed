"""Regressions found by the fifth round of random user programs (``random_users5.py``),
written as the user code that found them."""

from __future__ import annotations

import dataclasses
import typing

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad


class Dense:
    def __init__(self, W, b, act=None):
        self.W = W
        self.b = b
        self.act = act

    def __call__(self, u):
        z = self.W @ u + self.b
        return z if self.act is None else self.act(z)


class Model:
    """A Keras-style model whose sublayers are built in ``__init__`` and called as
    ``self.l1(u)``: the adjoint of ``self.l1`` is the attribute's, not the model's."""

    def __init__(self, net):
        self.l1 = Dense(net[0][0], net[0][1], np.tanh)
        self.l2 = Dense(net[1][0], net[1][1])

    def __call__(self, u):
        return self.l2(self.l1(u))

    def loss(self, u, target):
        return np.mean((self(u) - target) ** 2)


def _net(rng, n=3):
    return [(0.5 * rng.normal(size=(n, n)), 0.3 * rng.normal(size=n)) for _ in range(2)]


def _autograd_mlp(x, net):
    (W1, b1), (W2, b2) = net
    return anp.sum((W2 @ anp.tanh(W1 @ x + b1) + b2) ** 2)


def test_model_with_sublayers_built_inside_the_loss():
    def loss(x, net):
        model = Model(net)
        return np.sum(model(x) ** 2)

    rng = np.random.default_rng(0)
    x, net = rng.normal(size=3), _net(rng)
    gx, gnet = s2s_ad.grad(loss, (0, 1))(x, net)
    wx, wnet = autograd.grad(_autograd_mlp, (0, 1))(x, net)
    np.testing.assert_allclose(gx, wx, rtol=1e-10)
    for (gW, gb), (wW, wb) in zip(gnet, wnet):
        np.testing.assert_allclose(gW, wW, rtol=1e-10)
        np.testing.assert_allclose(gb, wb, rtol=1e-10)  # the biases came back as zeros
    s2s_ad.check_grads(loss, (x, net), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda u: loss(u, net), (x,), order=2)


def test_model_method_calling_its_sublayers_through_self():
    def loss(x, net, target):
        return Model(net).loss(x, target) + 1e-2 * sum(np.sum(W**2) for W, _ in net)

    rng = np.random.default_rng(1)
    x, net, target = rng.normal(size=3), _net(rng), rng.normal(size=3)
    s2s_ad.check_grads(loss, (x, net, target), modes=("rev", "fwd"))
    out, tangent = s2s_ad.jvp(loss, (x, net, target), (x, net, target))
    assert np.isfinite(tangent)


class Residual:
    def __init__(self, inner, gain=0.5):
        self.inner = inner
        self.gain = gain

    def __call__(self, u):
        return u + self.gain * self.inner(u)


def test_residual_wrapper_around_a_passed_sublayer():
    def loss(x, W, b):
        block = Residual(Dense(W, b, np.sin), gain=0.3)
        return np.sum(np.tanh(block(block(x))))

    rng = np.random.default_rng(2)
    args = (rng.normal(size=3), 0.5 * rng.normal(size=(3, 3)), rng.normal(size=3))
    s2s_ad.check_grads(loss, args, modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda x: loss(x, *args[1:]), args[:1], order=2)


class Encoder:
    def __init__(self, params):
        self.enc = Dense(*params["enc"], act=np.tanh)
        self.scale = params["scale"]

    def encode(self, u):
        return self.enc(u) * self.scale

    def __call__(self, u):
        return np.sum(self.encode(u) ** 2)


def test_sublayer_built_from_a_dict_entry_and_a_bound_method():
    def loss(x, params):
        return Encoder(params)(x)

    rng = np.random.default_rng(3)
    params = {"enc": (rng.normal(size=(3, 3)), rng.normal(size=3)), "scale": rng.normal(size=3)}
    s2s_ad.check_grads(loss, (rng.normal(size=3), params), modes=("rev", "fwd"))


@pytest.mark.parametrize(
    "build",
    [
        lambda wb: Dense(*wb),
        lambda wb: Dense(*wb, act=np.tanh),
        lambda wb: Dense(wb[0], *wb[1:]),
        lambda wb: Dense(*wb[:1], wb[1], np.sin),
    ],
    ids=["star", "star_keyword", "lead_star", "star_then_positional"],
)
def test_layer_built_from_a_starred_tuple(build):
    def loss(x, layers):
        for wb in layers:
            x = build(wb)(x)
        return np.sum(x**2)

    rng = np.random.default_rng(4)
    args = (rng.normal(size=3), _net(rng))
    s2s_ad.check_grads(loss, args, modes=("rev", "fwd"))


@dataclasses.dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.0

    def apply(self, u):
        return self.scale * (self.W @ u + self.b)


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: np.ndarray


def test_dataclass_and_namedtuple_built_from_starred_parameters():
    def loss(x, net):
        h = np.tanh(Affine(*net[0], scale=0.5).apply(x))
        layer = Layer(*net[1])
        return np.sum(np.tanh(layer.W @ h + layer.b))

    rng = np.random.default_rng(5)
    args = (rng.normal(size=3), _net(rng))
    s2s_ad.check_grads(loss, args, modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda x: loss(x, args[1]), args[:1], order=2)


@dataclasses.dataclass(frozen=True)
class Optim:
    lr: float
    momentum: np.ndarray


def test_dataclasses_replace_of_a_layer_and_of_a_config():
    def loss(x, W, b, v):
        layer = Affine(W, b)
        half = dataclasses.replace(layer, scale=0.5)
        shifted = dataclasses.replace(half, b=b * v)  # an array field replaced
        opt = dataclasses.replace(Optim(0.1, v), lr=0.2)
        h = np.tanh(shifted.apply(x)) + layer.apply(x) * opt.lr
        return np.sum(h**2) + np.sum(opt.momentum * x)

    rng = np.random.default_rng(6)
    args = (rng.normal(size=3), rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3))
    s2s_ad.check_grads(loss, args, modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda x: loss(x, *args[1:]), args[:1], order=2)


def test_dataclasses_replace_of_a_dataclass_passed_in():
    def loss(layer, x):
        slow = dataclasses.replace(layer, scale=0.1)
        return np.sum(slow.apply(x) ** 2) + np.sum(layer.apply(x))

    rng = np.random.default_rng(7)
    layer = Affine(rng.normal(size=(3, 3)), rng.normal(size=3), 2.0)
    x = rng.normal(size=3)
    g = s2s_ad.grad(loss)(layer, x)
    eps = 1e-6
    bumped = dataclasses.replace(layer, b=layer.b + eps * np.eye(3)[0])
    want = (loss(bumped, x) - loss(layer, x)) / eps
    got = g["b"][0] if isinstance(g, dict) else g.b[0]
    assert abs(got - want) < 1e-4 * (1 + abs(want))
    s2s_ad.check_grads(loss, (layer, x), modes=("rev",))


def test_gradient_with_respect_to_a_model_passed_in():
    def loss(model, x):
        return np.sum(model(x) ** 2)

    rng = np.random.default_rng(8)
    net, x = _net(rng), rng.normal(size=3)
    model = Model(net)
    g = s2s_ad.grad(loss)(model, x)
    want = autograd.grad(_autograd_mlp, 1)(x, net)
    for layer, (wW, wb) in zip((g.l1, g.l2), want):
        np.testing.assert_allclose(layer.W, wW, rtol=1e-10)
        np.testing.assert_allclose(layer.b, wb, rtol=1e-10)  # zeros before
    s2s_ad.check_grads(loss, (model, x), modes=("rev",))
    s2s_ad.check_grads(lambda u: loss(model, u), (x,), modes=("rev", "fwd"), order=2)


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


def test_ode_right_hand_side_written_as_a_lambda_in_the_call():
    # refused before ("lambda used as a value"): the integrator is inlined at the call
    def loss(y0, k, A):
        y = euler(lambda y: -k * y + np.sin(y), y0, 0.05, 10)
        z = rk4(lambda u: A @ u - 0.2 * u, y, dt=0.1, n=4)
        return np.sum(z**2)

    rng = np.random.default_rng(9)
    args = (rng.normal(size=3), np.exp(rng.normal(size=3)), 0.3 * rng.normal(size=(3, 3)))
    s2s_ad.check_grads(loss, args, modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda y0: loss(y0, *args[1:]), args[:1], order=2)

    def twin(y0, k, A):
        y = y0
        for _ in range(10):
            y = y + 0.05 * (-k * y + anp.sin(y))
        for _ in range(4):
            k1 = A @ y - 0.2 * y
            k2 = A @ (y + 0.05 * k1) - 0.2 * (y + 0.05 * k1)
            k3 = A @ (y + 0.05 * k2) - 0.2 * (y + 0.05 * k2)
            k4 = A @ (y + 0.1 * k3) - 0.2 * (y + 0.1 * k3)
            y = y + 0.1 / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        return anp.sum(y**2)

    got = s2s_ad.grad(loss, (0, 1, 2))(*args)
    want = autograd.grad(twin, (0, 1, 2))(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9)


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


def test_pendulum_right_hand_side_as_a_local_function_passed_to_the_integrator():
    # refused before ("local function 'rhs' used as a value")
    def loss(y0, g):
        def rhs(t, y):
            acc = -g * np.sin(y[0])
            return np.array([y[1], acc + 0.1 * t])

        y = rk4_t(rhs, y0, 0.0, 1.0, 8)
        return np.sum(y**2) + np.sum(rhs(0.0, y0))

    rng = np.random.default_rng(10)
    args = (rng.normal(size=2), 1.3)
    s2s_ad.check_grads(loss, args, modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda y0: loss(y0, 1.3), args[:1], order=2)


def sine_energy(y, g):
    return np.sum(np.sin(y) * g)


def cubic_energy(y, g):
    return np.sum(y**3 * g)


ENERGY = sine_energy  # rebound below, as a loop at a script's top level does


def test_second_derivatives_after_a_global_function_name_is_rebound():
    # the second-order code of the same lambda was cached with the first function
    global ENERGY
    y = np.array([0.3, -0.7])
    try:
        for fn, want in ((sine_energy, -np.sin(y) * 1.3), (cubic_energy, 6 * y * 1.3)):
            ENERGY = fn
            np.testing.assert_allclose(np.diag(s2s_ad.hessian(_energy_at)(y)), want)
            s2s_ad.check_grads(_energy_at, (y,), order=2)
    finally:
        ENERGY = sine_energy


def _energy_at(u):
    return ENERGY(u, 1.3)
