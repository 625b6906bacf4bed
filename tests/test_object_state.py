"""Differentiated values stored in objects' attributes (object state, s2s_ad.object_state).

User code that sets parameters on model objects (``model.W = W``, ``layer.set_weights``),
keeps optimizer or running statistics on an object, or caches an intermediate on ``self``
for another method: the gradient agrees with finite differences and with autograd on a
functional rewrite, and the objects hold afterwards what Python leaves in them.
"""

from __future__ import annotations

import copy

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.fd import numerical_grad

RS = np.random.RandomState(7)


def _close(got, want, tol=1e-6):
    """Nested lists and tuples of arrays equal within ``tol``."""
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, tol)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def _state(obj):
    """An object's attributes, recursively (lists of objects too), for comparison."""
    if isinstance(obj, (list, tuple)):
        return [_state(v) for v in obj]
    if hasattr(obj, "__dict__") and not callable(obj.__dict__.get("__call__", None)):
        return {k: _state(v) for k, v in vars(obj).items() if not callable(v)}
    return obj


def _same_state(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same_state(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same_state(u, v)
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


# --- an MLP class whose weights are set from the parameter list -------------------------


class MLP:
    """Weights held as attributes of the model; ``__call__`` reads them."""

    def __init__(self, sizes, rs):
        self.weights = [0.3 * rs.randn(m, n) for m, n in zip(sizes[:-1], sizes[1:])]
        self.biases = [np.zeros(n) for n in sizes[1:]]
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        h = x
        for W, b in zip(self.weights[:-1], self.biases[:-1]):
            h = np.tanh(h @ W + b)
        return h @ self.weights[-1] + self.biases[-1]


def mlp_loss(params, model, x, y):
    model.weights = [W for W, _ in params]
    model.biases = [b for _, b in params]
    pred = model(x)
    return np.mean((pred - y) ** 2)


def mlp_loss_functional(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = anp.tanh(anp.dot(h, W) + b)
    W, b = params[-1]
    return anp.mean((anp.dot(h, W) + b - y) ** 2)


def _mlp_case():
    rs = np.random.RandomState(3)
    sizes = [3, 5, 2]
    params = [(0.5 * rs.randn(m, n), 0.1 * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]
    return params, MLP(sizes, rs), rs.randn(6, 3), rs.randn(6, 2)


def test_mlp_whose_weights_are_set_from_the_parameter_list():
    params, model, x, y = _mlp_case()
    twin = copy.deepcopy(model)
    value, got = s2s_ad.value_and_grad(mlp_loss)(params, model, x, y)
    want = autograd.grad(mlp_loss_functional)(params, x, y)
    _close(got, [list(p) for p in want])
    assert value == pytest.approx(mlp_loss(params, twin, x, y), rel=1e-12)
    _same_state(_state(model), _state(twin))  # the weights set, the counter moved once
    assert model.calls == 1


def test_mlp_stores_against_finite_differences():
    params, model, x, y = _mlp_case()
    got = s2s_ad.grad(mlp_loss)(params, model, x, y)
    fresh = MLP([3, 5, 2], np.random.RandomState(0))
    want = numerical_grad(lambda p: mlp_loss(p, fresh, x, y), (params,), 0)
    _close(got, want, 1e-5)


# --- a Keras-style Net: layers with set_weights, forward caching activations ------------


class Layer:
    def __init__(self, n_in, n_out, rs, activation=np.tanh):
        self.W = 0.3 * rs.randn(n_in, n_out)
        self.b = np.zeros(n_out)
        self.activation = activation

    def set_weights(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        self.z = x @ self.W + self.b  # cached for a backward-style method
        self.a = self.activation(self.z)
        return self.a


class Net:
    def __init__(self, layers):
        self.layers = layers
        self.steps = 0

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        self.out = x
        return x

    def activity(self):
        """An activity penalty read from the activations the forward pass cached."""
        total = 0.0
        for layer in self.layers[:-1]:
            total = total + np.mean(layer.a**2)
        return total


def net_loss(weights, net, x, y):
    for layer, (W, b) in zip(net.layers, weights):
        layer.set_weights(W, b)
    net.forward(x)
    net.steps += 1
    return np.mean((net.out - y) ** 2) + 0.1 * net.activity()


def net_loss_functional(weights, x, y):
    h, penalty = x, 0.0
    for k, (W, b) in enumerate(weights):
        h = anp.tanh(anp.dot(h, W) + b) if k < len(weights) - 1 else anp.sin(anp.dot(h, W) + b)
        if k < len(weights) - 1:
            penalty = penalty + anp.mean(h**2)
    return anp.mean((h - y) ** 2) + 0.1 * penalty


def _net_case():
    rs = np.random.RandomState(5)
    net = Net([Layer(3, 4, rs), Layer(4, 4, rs), Layer(4, 2, rs, activation=np.sin)])
    weights = [(0.5 * rs.randn(m, n), 0.2 * rs.randn(n)) for m, n in [(3, 4), (4, 4), (4, 2)]]
    return weights, net, rs.randn(5, 3), rs.randn(5, 2)


def test_keras_style_net_with_set_weights_and_cached_activations():
    weights, net, x, y = _net_case()
    twin = copy.deepcopy(net)
    value, got = s2s_ad.value_and_grad(net_loss)(weights, net, x, y)
    want = autograd.grad(net_loss_functional)(weights, x, y)
    _close(got, [list(w) for w in want])
    assert value == pytest.approx(net_loss(weights, twin, x, y), rel=1e-12)
    _same_state(_state(net), _state(twin))
    assert net.steps == 1 and net.layers[0].W is weights[0][0]


def test_keras_style_net_against_finite_differences():
    weights, net, x, y = _net_case()
    got = s2s_ad.grad(net_loss)(weights, net, x, y)
    want = numerical_grad(lambda w: net_loss(w, net, x, y), (weights,), 0)
    _close(got, want, 1e-5)


# --- online statistics updated in a loop ---------------------------------------------------


class RunningMean:
    """Welford-style running mean and second moment of a stream of vectors."""

    def __init__(self, dim):
        self.n = 0
        self.mean = np.zeros(dim)
        self.m2 = np.zeros(dim)

    def update(self, x):
        self.n += 1
        delta = x - self.mean
        self.mean = self.mean + delta / self.n
        self.m2 = self.m2 + delta * (x - self.mean)

    def variance(self):
        return self.m2 / (self.n - 1)


def stream_loss(xs, scale, stats):
    for x in xs:
        stats.update(scale * x)
    return np.sum(stats.mean**2) + np.sum(np.log(stats.variance()))


def stream_loss_functional(xs, scale):
    ys = scale * xs
    mean = anp.mean(ys, axis=0)
    var = anp.var(ys, axis=0, ddof=1)
    return anp.sum(mean**2) + anp.sum(anp.log(var))


def test_running_statistics_object_updated_in_a_loop():
    xs = RS.randn(7, 3)
    scale = 1.0 + RS.rand(3)
    stats = RunningMean(3)
    twin = RunningMean(3)
    value, got = s2s_ad.value_and_grad(stream_loss, (0, 1))(xs, scale, stats)
    want = autograd.grad(stream_loss_functional, (0, 1))(xs, scale)
    _close(got, want)
    assert value == pytest.approx(stream_loss(xs, scale, twin), rel=1e-12)
    _same_state(_state(stats), _state(twin))
    assert stats.n == 7


def momentum_step(w, g, opt_state, beta=0.9, lr=0.1):
    """An optimizer step whose state lives on an object: ``m = beta * m + g``."""
    opt_state.m = beta * opt_state.m + g
    return w - lr * opt_state.m


def unrolled_loss(w, target, opt_state):
    for _ in range(3):
        g = 2.0 * (w - target)
        w = momentum_step(w, g, opt_state)
    return np.sum(w**2) + np.sum(opt_state.m**2)


class OptState:
    def __init__(self, m):
        self.m = m


def test_optimizer_state_on_an_object_through_an_unrolled_loop():
    w, target = RS.randn(4), RS.randn(4)
    state = OptState(np.zeros(4))
    got = s2s_ad.grad(unrolled_loss, (0, 1))(w, target, state)
    want = numerical_grad(
        lambda a, b: unrolled_loss(a, b, OptState(np.zeros(4))), (w, target), (0, 1)
    )
    _close(got, want, 1e-6)
    twin = OptState(np.zeros(4))
    unrolled_loss(w, target, twin)
    np.testing.assert_allclose(state.m, twin.m, rtol=1e-13)


def test_a_store_on_a_float_scalar_state():
    class Acc:
        def __init__(self):
            self.total = 0.0

    def f(x, acc):
        for k in range(3):
            acc.total = acc.total + np.sin(x * (k + 1))
        return acc.total**2

    got = s2s_ad.grad(f)(0.7, Acc())
    want = numerical_grad(lambda x: f(x, Acc()), (0.7,), 0)
    assert got == pytest.approx(want, rel=1e-6)


# --- aliases: one object through two names or a list --------------------------------------


def aliased_loss(W, a, layers):
    layers[0].W = W  # the same object as ``a``
    h = np.tanh(a.W)  # read through the other name
    layers[1].W = 2.0 * h
    return np.sum(layers[1].W ** 2) + np.sum(a.W)


def test_the_same_object_through_a_name_and_a_list():
    l0, l1 = Layer(2, 2, RS), Layer(2, 2, RS)
    W = RS.randn(2, 2)
    got = s2s_ad.grad(aliased_loss)(W, l0, [l0, l1])
    want = numerical_grad(_alias_fd, (W,), 0)
    _close(got, want, 1e-6)


def _alias_fd(W):
    a, b = Layer(2, 2, RS), Layer(2, 2, RS)
    return aliased_loss(W, a, [a, b])


def test_attribute_read_before_the_store_is_the_callers_state():
    """A read of the attribute before the function stores it sees the value the caller
    left there, a constant; the read after, the stored value."""

    def f(W, layer):
        before = np.sum(layer.W * W)
        layer.W = W * W
        return before + np.sum(layer.W)

    W0 = RS.randn(3)
    layer = OptState(None)
    layer.W = RS.randn(3)
    held = layer.W.copy()
    got = s2s_ad.grad(f)(W0, layer)
    np.testing.assert_allclose(got, held + 2 * W0, rtol=1e-12)


# --- what stays refused ---------------------------------------------------------------------


class Recorder:
    def __init__(self):
        self.history = []

    def record(self, v):
        self.history.append(v)


def test_a_list_attribute_changed_in_place_is_refused():
    def f(x, rec):
        rec.record(np.sin(x))
        return np.sum(rec.history[-1])

    with pytest.raises(TransformError, match=r"attribute \.history") as caught:
        s2s_ad.grad(f)(RS.randn(3), Recorder())
    assert "self.history.append(v)" in str(caught.value)  # the user's line, shown

    def g(x, rec):
        rec.history = [np.sin(x)]
        rec.history.append(2.0 * x)
        return np.sum(rec.history[-1])

    with pytest.raises(TransformError, match="in-place change") as caught:
        s2s_ad.grad(g)(RS.randn(3), Recorder())
    assert "rec.history.append(2.0 * x)" in str(caught.value)


# --- methods that cache on self, found when they run ---------------------------------------


class Encoder:
    """``forward`` caches its hidden layer on ``self``; ``penalty`` reads it back."""

    def __init__(self, W1, W2):
        self.W1 = W1
        self.W2 = W2
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        self.h = np.tanh(x @ self.W1)
        return self.h @ self.W2

    def penalty(self):
        return np.sum(self.h**2)


def built_loss(W1, W2, x):
    """A model built in the loss from its parameters, then used through its methods."""
    net = Encoder(W1, W2)
    out = net.forward(x)
    return np.sum(out**2) + 0.5 * net.penalty()


def built_loss_functional(W1, W2, x):
    h = anp.tanh(anp.dot(x, W1))
    return anp.sum(anp.dot(h, W2) ** 2) + 0.5 * anp.sum(h**2)


def test_model_built_in_the_loss_whose_method_caches_an_activation():
    W1, W2, x = RS.randn(3, 4), RS.randn(4, 2), RS.randn(5, 3)
    got = s2s_ad.grad(built_loss, (0, 1))(W1, W2, x)
    _close(got, autograd.grad(built_loss_functional, (0, 1))(W1, W2, x))
    _close(got, numerical_grad(built_loss, (W1, W2, x), (0, 1)), 1e-5)


def passed_model_loss(scale, enc, x):
    """Nothing stored here: ``enc.forward`` stores its activation, ``enc.penalty`` reads it."""
    out = enc.forward(scale * x)
    return np.sum(out**2) + enc.penalty()


def test_passed_model_whose_methods_cache_runs_once_with_python_state():
    W1, W2, x = RS.randn(3, 4), RS.randn(4, 2), RS.randn(5, 3)
    enc, twin = Encoder(W1, W2), Encoder(W1, W2)
    value, got = s2s_ad.value_and_grad(passed_model_loss)(0.8, enc, x)
    assert value == pytest.approx(passed_model_loss(0.8, twin, x), rel=1e-12)
    assert enc.calls == 1  # its first run, found to need object state, was not counted
    np.testing.assert_allclose(enc.h, twin.h, rtol=1e-13)
    want = numerical_grad(lambda s: passed_model_loss(s, Encoder(W1, W2), x), (0.8,), 0)
    assert got == pytest.approx(want, rel=1e-6)
    again = s2s_ad.grad(passed_model_loss)(0.8, enc, x)
    assert again == pytest.approx(got, rel=1e-12) and enc.calls == 2


def test_vjp_of_a_function_storing_weights_on_layers():
    weights, net, x, y = _net_case()
    out, pullback = s2s_ad.vjp(net_loss, weights, net, x, y)
    first = pullback(1.0)[0]
    want = autograd.grad(net_loss_functional)(weights, x, y)
    _close(first, [list(w) for w in want])
    _close(pullback(2.0)[0], [[2.0 * a for a in w] for w in want])
    assert "slot_gradient" in s2s_ad.source(pullback)


def test_generated_code_names_the_attribute_slots():
    params, model, x, y = _mlp_case()
    df = s2s_ad.grad(mlp_loss)
    df(params, model, x, y)
    text = s2s_ad.source(df)
    assert "_ad.store_slot(model, 'weights'" in text
    assert "_ad.slot_gradient(model, 'weights'" in text


def test_forward_mode_and_second_order_refuse_at_the_users_line():
    params, model, x, y = _mlp_case()
    with pytest.raises(TransformError, match="forward mode") as caught:
        s2s_ad.jvp(lambda p: mlp_loss(p, model, x, y), (params,), (params,))
    assert "model.weights = " in str(caught.value)
    with pytest.raises(TransformError, match="forward mode"):
        s2s_ad.hvp(mlp_loss)(params, model, x, y, params)


class Scaled:
    """A weight kept doubled behind a property."""

    def __init__(self):
        self._w = np.ones(3)

    @property
    def w(self):
        return 2.0 * self._w

    @w.setter
    def w(self, value):
        self._w = value


def test_properties_over_stored_attributes_are_refused():
    def through_getter(x, obj):
        obj._w = x
        return np.sum(obj.w**2)

    def through_setter(x, obj):
        obj.w = x
        return np.sum(obj._w**2)

    with pytest.raises(TransformError, match="a property of Scaled") as caught:
        s2s_ad.grad(through_getter)(RS.randn(3), Scaled())
    assert "return np.sum(obj.w**2)" in str(caught.value)
    with pytest.raises(TransformError, match=r"attribute \.w of Scaled, which a property"):
        s2s_ad.grad(through_setter)(RS.randn(3), Scaled())


class Buffer:
    def __init__(self):
        self.v = np.zeros(3)

    def reset(self):
        self.v = np.ones(3)


def test_a_constant_stored_over_a_differentiated_value_takes_the_later_reads():
    """Reads after a store of a constant belong to the constant, not to the differentiated
    value stored before it (in the function, or in a method it calls)."""

    def inline(x, buf):
        buf.v = np.sin(x)
        a = np.sum(buf.v)
        buf.v = np.ones(3)
        return a + np.sum(2.0 * buf.v)

    def through_method(x, buf):
        buf.v = np.sin(x)
        a = np.sum(buf.v)
        buf.reset()
        return a + np.sum(2.0 * buf.v)

    x = RS.randn(3)
    for f in (inline, through_method):
        np.testing.assert_allclose(s2s_ad.grad(f)(x, Buffer()), np.cos(x), rtol=1e-12)
