"""Bugs found by random programs (``test_random_users.py``) and small known bugs, each as
the user code that showed it."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad

# --- an int stays an int -------------------------------------------------------------------


def normalized_energy(x):
    """Mean square over both halves of a doubled count: ``n`` is an int, also returned."""
    n = np.size(x) + np.size(x)
    return np.sum(x**2) / n, n


def test_a_doubled_count_stays_an_int():
    x = np.array([0.5, -1.0, 2.0])
    (grads, n) = s2s_ad.grad(normalized_energy, has_aux=True)(x)
    assert n == 6 and type(n) is int  # the optimizer wrote 2.0 * np.size(x): 6.0
    np.testing.assert_allclose(grads, x / 3.0)
    text = s2s_ad.source(s2s_ad.grad(normalized_energy, has_aux=True))
    assert "n = np.size(x) + np.size(x)" in text


COEFFS = [0.5, -1.5, 2.0]


def weighted_sums(x):
    """A constant list doubled with ``+`` (concatenation, not a number)."""
    ws = COEFFS + COEFFS
    s = 0.0
    for w in ws:
        s = s + w * np.sum(x * x)
    return s


def test_a_list_added_to_itself_is_concatenated():
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(s2s_ad.grad(weighted_sums)(x), 4.0 * x, rtol=1e-12)


def repeated_layers(x, layers):
    stack = layers + layers
    for w in stack:
        x = np.tanh(w * x)
    return np.sum(x)


def test_named_lists_joined_by_plus_are_joined_when_the_code_runs():
    # an unannotated parameter joined with itself: _ad.concat tells joining from adding
    x = np.array([0.3, -0.2])
    layers = [np.array([0.5, 1.5]), np.array([-0.7, 0.9])]
    g_x, g_layers = s2s_ad.grad(repeated_layers, (0, 1))(x, layers)
    np.testing.assert_allclose(g_x, numerical_grad(repeated_layers, (x, layers), 0), rtol=1e-6)
    want = numerical_grad(repeated_layers, (x, layers), 1)
    np.testing.assert_allclose(np.stack(g_layers), np.stack(want), rtol=1e-6)
    assert isinstance(g_layers, list)


# --- zero tangents through a transpose in forward over reverse ---------------------------------


def mlp_transposed(x, net):
    """Layers applied with their weights transposed (``W.T @ h``), scaled per layer."""
    h = x * 1.0
    for (W, b), c in zip(net, [0.5, 2.0]):
        h = np.sin(W.T @ h * c) + b
    return np.sum(h**2)


def mlp_stacked_transpose(x, net):
    h = x * 1.0
    for W, b in net:
        h = np.tanh((W[None] + 0.0).mT[0] @ h) + b
    return np.sum(h**2)


@pytest.mark.parametrize("fun", [mlp_transposed, mlp_stacked_transpose])
def test_hvp_through_a_transposed_constant_weight(fun):
    # the weights are constants of the Hessian in x: their tangents, restored from the
    # tape in the backward sweep, are the symbolic zero; ``W.T`` of it was a 0-d array and
    # ``matmul_vjp_y`` failed with an AxisError in ``_ad.mT``
    rng = np.random.default_rng(3)
    net = [(rng.normal(size=(4, 4)), rng.normal(size=4)) for _ in range(2)]
    x, v = rng.normal(size=4), rng.normal(size=4)
    g = functools.partial(fun, net=net)
    grad = s2s_ad.grad(g)
    eps = 1e-5
    want = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(s2s_ad.hvp(g)(x, v), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s2s_ad.hessian(g)(x) @ v, want, rtol=1e-5, atol=1e-7)


# --- a refusal found when the code runs names the user's line --------------------------------


class Params:
    """Parameters on an object without an instance dict (a plain object with one is a
    record of its attributes now: tests/test_passed_objects.py)."""

    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


def params_loss(p):
    return np.sum(p.w**2)


def test_an_attribute_of_a_differentiated_object_is_refused_at_the_users_line():
    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(params_loss)(Params(np.ones(3)))
    err = info.value
    assert err.filename == __file__ and err.lineno == params_loss.__code__.co_firstlineno + 1
    assert "return np.sum(p.w**2)" in str(err) and "attribute .w" in str(err)


# --- np.quantile and np.percentile share their defaults --------------------------------------


def spread(x):
    """The interquartile range of the scores, and the 90th percentile."""
    q25, q75 = np.quantile(x, [0.25, 0.75])
    return (q75 - q25) + np.percentile(x, 90.0) - np.percentile(x, 50, keepdims=True)[0]


def test_quantile_and_percentile_with_their_defaults():
    from s2s_ad.rules.registry import REGISTRY

    quantile, percentile = REGISTRY.lookup(np.quantile), REGISTRY.lookup(np.percentile)
    assert quantile.defaults == percentile.defaults
    x = np.array([0.3, 2.0, -1.1, 0.7, 1.6, -0.4, 0.05])
    s2s_ad.check_grads(spread, (x,), modes=("rev", "fwd"))


# --- a reparameterised draw after a tape wrapped np.random -----------------------------------


def noisy_energy(mu):
    """A sample of ``normal(mu, 1)`` drawn from a fixed seed, squared and summed."""
    np.random.seed(7)
    z = np.random.normal(mu, 1.0, size=3)
    return np.sum(z**2)


def test_a_draw_with_a_differentiated_loc_after_a_tape():
    mu = np.array([0.1, -0.2, 0.3])
    before = s2s_ad.grad(noisy_energy)(mu)
    w = np.array([0.5, -0.2, 0.1])
    with s2s_ad.GradientTape() as tape:  # wraps np.random's draws, from now on
        tape.watch(w)
        y = np.sum(np.random.normal(0.0, 1.0, size=3) * w)
    tape.gradient(y, w)
    np.testing.assert_allclose(s2s_ad.grad(noisy_energy)(mu), before)
    np.testing.assert_allclose(before, numerical_grad(noisy_energy, [mu], 0), rtol=1e-6)
    _, tangent = s2s_ad.jvp(noisy_energy, (mu,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(before), rtol=1e-10)
    with s2s_ad.GradientTape() as tape:  # and inside a block
        tape.watch(mu)
        z = np.random.normal(mu, 1.0)
        y = np.sum(z**2)
    np.testing.assert_allclose(np.asarray(tape.gradient(y, mu)), 2 * z)


# --- state written on an object the gradient reads -------------------------------------------


class Decaying:
    """A model whose call decays its weights and counts its calls."""

    def __init__(self):
        self.w = np.array([0.9, 1.1, 0.8])
        self.calls = 0

    def loss(self, x):
        s = 0.0
        for _ in range(3):
            s = s + np.sum(np.sin(x * self.w))
            self.w = self.w * 0.5
        return s

    def counted(self, x):
        self.calls += 1
        return np.sum((x * self.w) ** 2)


@pytest.mark.parametrize("name", ["loss", "counted"])
def test_state_written_on_an_object_the_gradient_reads(name):
    x, v = np.array([0.3, -0.5, 0.7]), np.array([1.0, 0.5, -2.0])
    # reverse mode: the writes to self.w are object state (s2s_ad/object_state.py): the
    # backward sweep models them and the object is left as Python leaves it; a counter
    # the gradient never reads (self.calls) is kept, written once
    if name == "loss":
        model = Decaying()
        got = s2s_ad.grad(model.loss)(x)
        want = numerical_grad(lambda u: Decaying().loss(u), [x], 0)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_allclose(model.w, Decaying().w * 0.125, rtol=1e-15)
    else:
        model = Decaying()
        got = s2s_ad.grad(model.counted)(x)
        np.testing.assert_allclose(got, 2 * x * model.w**2)
        assert model.calls == 1
    # forward mode reads each value once, in order: the state is written as in Python
    model = Decaying()
    _, tangent = s2s_ad.jvp(getattr(model, name), (x,), (v,))
    want = numerical_grad(lambda u: getattr(Decaying(), name)(u), [x], 0) @ v
    np.testing.assert_allclose(tangent, want, rtol=1e-6)
    assert model.calls == (1 if name == "counted" else 0)


# --- forward mode over a backward sweep that puts dict entries back --------------------------


def cached_layers(x):
    """Activations kept in a dict under a key per layer, overwritten by the next pass."""
    cache = {}
    for k in range(3):
        key = "hidden" if k < 2 else "out"
        if key in cache:
            cache[key] = np.sin(cache[key]) * x
        else:
            cache[key] = x * (k + 1.0)
    return np.sum(cache["hidden"] ** 2) + np.sum(np.tanh(cache["out"]) * cache["hidden"])


def dict_params_updated(x):
    params = {"w": x * 0.5, "b": x**2}
    for _ in range(2):
        params["w"] = np.tanh(params["w"] * params["b"]) + x
        params["b"] = params["b"] * params["w"]
    return np.sum(params["w"] ** 2 + params["b"])


@pytest.mark.parametrize("fun", [cached_layers, dict_params_updated])
def test_hvp_of_dict_entries_rewritten(fun):
    # the backward sweep puts each overwritten entry back (_ad.restore_item): forward
    # mode over it transformed restore_item's own source and refused its ``del``
    x, v = np.array([0.3, -0.5, 0.7]), np.array([1.0, 0.5, -2.0])
    grad = s2s_ad.grad(fun)
    eps = 1e-5
    want = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(s2s_ad.hvp(fun)(x, v), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.hessian(fun)(x) @ v, want, rtol=1e-6, atol=1e-8)


# --- a name bound to a function, then to a lambda ------------------------------------------


def step(u, w=0.5):
    return np.sin(u) * w + u


def activations_swapped(x):
    """The activation is picked, used, then replaced by a lambda for the output layer."""
    act = np.tanh
    h = act(x)
    act = lambda u: u**3  # noqa: E731
    return np.sum(act(h))


def partial_then_lambda(x):
    shift = 0.1
    fn = functools.partial(step, w=0.2)
    h = fn(x)
    fn = lambda u: (u - shift) ** 2  # noqa: E731
    return np.sum(fn(h))


def helper_then_lambda(x):
    fn = step
    h = fn(x)
    fn = lambda u: u**3  # noqa: E731
    return np.sum(fn(h))


@pytest.mark.parametrize("fun", [activations_swapped, partial_then_lambda, helper_then_lambda])
def test_a_name_bound_to_a_function_then_to_a_lambda(fun):
    # the lambda was inlined at every call of the name, the first one too: a wrong value
    # and a wrong gradient, in reverse and forward mode
    x = np.array([0.3, -0.5, 0.7])
    value, grads = s2s_ad.value_and_grad(fun)(x)
    assert np.isclose(value, fun(x))
    np.testing.assert_allclose(grads, numerical_grad(fun, [x], 0), rtol=1e-6)
    out, tangent = s2s_ad.jvp(fun, (x,), (np.ones(3),))
    assert np.isclose(out, fun(x)) and np.isclose(tangent, np.sum(grads))
