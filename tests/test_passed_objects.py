"""Plain objects passed in as differentiated arguments: models, layers, mixtures.

Users write classes without ``@dataclass``: a Keras-style ``Sequential`` holding a list
of ``Dense`` layers, a Gaussian mixture with ``means``, ``log_sigmas`` and ``logits``
attributes, an optimizer loop that updates the object from its gradient
(``m.means -= lr * g.means``). The gradient is an object of the same class whose
array attributes hold their gradients; the other attributes keep their values. Each
result is checked against autograd on the flattened parameters and against finite
differences, in reverse and forward mode and for Hessian-vector products.
"""

from __future__ import annotations

from dataclasses import dataclass

import autograd
import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import pytest
import scipy.special

import s2s_ad
from s2s_ad import TransformError, grad
from tests.fd import flatten, numerical_grad

RNG = np.random.default_rng(11)


# --- a Keras-style model -------------------------------------------------------------------


class Relu:
    """An activation object: no arrays, a call with source."""

    def __call__(self, z):
        return np.maximum(z, 0.0) + 0.1 * np.minimum(z, 0.0)


class Dense:
    def __init__(self, n_in, n_out, activation="tanh"):
        self.W = RNG.normal(size=(n_in, n_out)) / np.sqrt(n_in)
        self.b = RNG.normal(size=n_out) * 0.1
        self.activation = activation
        self.units = n_out

    def __call__(self, x):
        z = x @ self.W + self.b
        if self.activation == "tanh":
            return np.tanh(z)
        if self.activation == "relu":
            return Relu()(z)
        return z


class Sequential:
    def __init__(self, layers, name="mlp"):
        self.layers = layers
        self.name = name

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def penalty(self):
        return sum(np.sum(layer.W**2) for layer in self.layers)


def model_loss(model, x, y):
    return np.mean((model(x) - y) ** 2) + 1e-2 * model.penalty()


def flat_loss(params, x, y):
    """``model_loss`` on ``[(W, b), ...]`` with autograd's NumPy (tanh, tanh, linear)."""
    h = x
    for k, (W, b) in enumerate(params):
        h = h @ W + b
        if k < len(params) - 1:
            h = anp.tanh(h)
    penalty = sum(anp.sum(W**2) for W, _ in params)
    return anp.mean((h - y) ** 2) + 1e-2 * penalty


def _model() -> Sequential:
    return Sequential([Dense(3, 5), Dense(5, 4), Dense(4, 2, activation="linear")])


def _params(model: Sequential) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(layer.W, layer.b) for layer in model.layers]


def _with_params(model: Sequential, params) -> Sequential:
    new = Sequential([Dense(1, 1, layer.activation) for layer in model.layers])
    for layer, (W, b) in zip(new.layers, params):
        layer.W, layer.b = W, b
    return new


X, Y = RNG.normal(size=(7, 3)), RNG.normal(size=(7, 2))


def test_model_object_gradient_is_a_model_matching_autograd():
    model = _model()
    got = grad(model_loss)(model, X, Y)
    assert type(got) is Sequential and got.name == "mlp"
    assert [type(g) for g in got.layers] == [Dense, Dense, Dense]
    assert [g.activation for g in got.layers] == ["tanh", "tanh", "linear"]
    assert [g.units for g in got.layers] == [5, 4, 2]
    assert got.layers[0] is not model.layers[0]  # a new object, the model unchanged
    want = autograd.grad(flat_loss)(_params(model), X, Y)
    np.testing.assert_allclose(flatten(_params(got)), flatten(want), rtol=1e-9, atol=1e-12)
    fd = numerical_grad(lambda p: model_loss(_with_params(model, p), X, Y), [_params(model)], 0)
    np.testing.assert_allclose(flatten(_params(got)), flatten(fd), rtol=1e-5, atol=1e-7)


def test_model_object_forward_mode_and_hvp():
    model = _model()
    tangent = _with_params(model, [(np.cos(W), np.sin(b)) for W, b in _params(model)])
    g = grad(model_loss)(model, X, Y)
    _, out_dot = s2s_ad.jvp(model_loss, (model, X, Y), (tangent, np.zeros_like(X), 0.0 * Y))
    np.testing.assert_allclose(out_dot, flatten(_params(g)) @ flatten(_params(tangent)))
    got = s2s_ad.hvp(model_loss)(model, X, Y, tangent)
    assert type(got) is Sequential and got.layers[2].activation == "linear"
    flat_grad = autograd.grad(flat_loss)
    eps = 1e-6
    ahead = [(W + eps * V, b + eps * c) for (W, b), (V, c) in zip(_params(model), _params(tangent))]
    back = [(W - eps * V, b - eps * c) for (W, b), (V, c) in zip(_params(model), _params(tangent))]
    want = (flatten(flat_grad(ahead, X, Y)) - flatten(flat_grad(back, X, Y))) / (2 * eps)
    np.testing.assert_allclose(flatten(_params(got)), want, rtol=1e-5, atol=1e-7)


def test_activation_object_held_by_a_layer_and_input_sensitivity():
    model = Sequential([Dense(3, 4, activation="relu"), Dense(4, 1, activation="linear")])
    s2s_ad.check_grads(model_loss, (model, X, Y[:, :1]), modes=("rev", "fwd"))

    def sensitivity(model, x, y):
        return np.sum(grad(model_loss, wrt="x")(model, x, y) ** 2)

    got = grad(sensitivity)(model, X, Y[:, :1])
    fd = numerical_grad(
        lambda p: sensitivity(_with_params(model, p), X, Y[:, :1]), [_params(model)], 0
    )
    np.testing.assert_allclose(flatten(_params(got)), flatten(fd), rtol=1e-5, atol=1e-7)


def test_objects_nested_in_dicts_and_tuples():
    enc, dec = Dense(3, 2), Dense(2, 3, activation="linear")

    def autoencoder(parts, x):
        code = parts["encoder"](x)
        return np.mean((parts["decoder"][0](code) - x) ** 2)

    parts = {"encoder": enc, "decoder": (dec,)}
    got = grad(autoencoder)(parts, X)
    assert type(got["decoder"]) is tuple and type(got["decoder"][0]) is Dense

    def flat(p, x):
        (W1, b1), (W2, b2) = p
        return anp.mean((anp.tanh(x @ W1 + b1) @ W2 + b2 - x) ** 2)

    want = autograd.grad(flat)([(enc.W, enc.b), (dec.W, dec.b)], X)
    have = [(got["encoder"].W, got["encoder"].b), (got["decoder"][0].W, got["decoder"][0].b)]
    np.testing.assert_allclose(flatten(have), flatten(want), rtol=1e-9, atol=1e-12)


# --- a Gaussian mixture, trained by its own gradient ------------------------------------------


class GaussianMixture:
    def __init__(self, k, d, seed=0):
        rng = np.random.default_rng(seed)
        self.means = rng.normal(size=(k, d))
        self.log_sigmas = rng.normal(size=k) * 0.1
        self.logits = np.zeros(k)
        self.k = k

    def log_likelihood(self, X):
        sigmas = np.exp(self.log_sigmas)
        d = X.shape[1]
        sq = np.sum((X[:, None, :] - self.means[None, :, :]) ** 2, axis=2)
        log_p = -0.5 * sq / sigmas**2 - d * np.log(sigmas) - 0.5 * d * np.log(2 * np.pi)
        log_w = self.logits - scipy.special.logsumexp(self.logits)
        return np.sum(scipy.special.logsumexp(log_p + log_w, axis=1))


def mixture_nll(gmm, X):
    return -gmm.log_likelihood(X) / X.shape[0]


def flat_nll(means, log_sigmas, logits, X):
    sigmas = anp.exp(log_sigmas)
    d = X.shape[1]
    sq = anp.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=2)
    log_p = -0.5 * sq / sigmas**2 - d * anp.log(sigmas) - 0.5 * d * anp.log(2 * anp.pi)
    log_w = logits - asp.logsumexp(logits)
    return -anp.sum(asp.logsumexp(log_p + log_w, axis=1)) / X.shape[0]


DATA = np.concatenate([RNG.normal(size=(15, 2)) - 2.0, RNG.normal(size=(15, 2)) + 1.5])


def test_mixture_gradient_matches_autograd_and_differences():
    gmm = GaussianMixture(3, 2)
    got = grad(mixture_nll)(gmm, DATA)
    assert type(got) is GaussianMixture and got.k == 3
    parts = (gmm.means, gmm.log_sigmas, gmm.logits)
    want = autograd.grad(flat_nll, argnum=(0, 1, 2))(*parts, DATA)
    have = (got.means, got.log_sigmas, got.logits)
    np.testing.assert_allclose(flatten(have), flatten(want), rtol=1e-9, atol=1e-12)
    s2s_ad.check_grads(mixture_nll, (gmm, DATA), modes=("rev", "fwd"))


def test_optimizer_loop_updating_the_object_from_its_gradient():
    gmm, lr = GaussianMixture(2, 2, seed=3), 0.2
    means, log_sigmas, logits = gmm.means.copy(), gmm.log_sigmas.copy(), gmm.logits.copy()
    flat_grad = autograd.grad(flat_nll, argnum=(0, 1, 2))
    losses = []
    for _ in range(5):
        g = grad(mixture_nll)(gmm, DATA)
        gmm.means -= lr * g.means
        gmm.log_sigmas = gmm.log_sigmas - lr * g.log_sigmas
        gmm.logits -= lr * g.logits
        losses.append(mixture_nll(gmm, DATA))
        gm, gs, gl = flat_grad(means, log_sigmas, logits, DATA)
        means, log_sigmas, logits = means - lr * gm, log_sigmas - lr * gs, logits - lr * gl
    np.testing.assert_allclose(gmm.means, means, rtol=1e-9)
    np.testing.assert_allclose(gmm.log_sigmas, log_sigmas, rtol=1e-9)
    np.testing.assert_allclose(gmm.logits, logits, rtol=1e-9, atol=1e-12)
    assert losses[-1] < losses[0]


def test_method_differentiated_with_respect_to_its_object():
    gmm = GaussianMixture(2, 2, seed=4)

    def nll(self, X):  # the method as a function of self
        return -self.log_likelihood(X)

    got = grad(GaussianMixture.log_likelihood)(gmm, DATA)  # wrt self
    want = grad(nll)(gmm, DATA)
    assert type(got) is GaussianMixture and got.k == 2
    for name in ("means", "log_sigmas", "logits"):
        np.testing.assert_allclose(getattr(got, name), -getattr(want, name), rtol=1e-12)
    # a bound method differentiates with respect to its arguments, self held fixed
    g_x = grad(gmm.log_likelihood)(DATA)
    np.testing.assert_allclose(g_x, numerical_grad(gmm.log_likelihood, [DATA], 0), rtol=1e-5)


# --- what is refused -----------------------------------------------------------------------


class Normed:
    def __init__(self, w):
        self.w = w

    @property
    def unit(self):
        return self.w / np.linalg.norm(self.w)


def normed_loss(obj, x):
    return np.sum(obj.unit * x)


def test_a_property_of_a_passed_object_is_refused_in_both_modes():
    obj, x = Normed(np.array([1.0, 2.0, 2.0])), np.ones(3)
    with pytest.raises(TransformError, match=r"property \.unit of a differentiated Normed") as e:
        grad(normed_loss)(obj, x)
    assert "test_passed_objects.py" in str(e.value) and "obj.unit * x" in str(e.value)
    with pytest.raises(TransformError, match=r"property \.unit"):
        s2s_ad.jvp(normed_loss, (obj, x), (Normed(np.ones(3)), np.zeros(3)))


class Counting:
    def __init__(self, w):
        self.w = w
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return np.sum(np.sin(self.w * x))


def test_state_written_by_a_method_of_a_differentiated_model_is_modelled():
    """``self.calls += 1`` in the model's call (object state): the gradient of its
    weights is exact and the counter moves once, as Python moves it."""

    def loss(model, x):
        return model(x) ** 2

    model, x = Counting(np.array([0.3, 0.5, 0.9])), np.array([1.0, 2.0, 0.5])
    got = grad(loss)(model, x)
    assert model.calls == 1 and got.calls == 1  # an integer: kept, not differentiated
    want = numerical_grad(lambda w: loss(Counting(w), x), (model.w,), 0)
    np.testing.assert_allclose(got.w, want, rtol=1e-6)


class Node:
    def __init__(self, w):
        self.w = w
        self.parent = None


def test_a_cycle_of_objects_is_refused():
    root, leaf = Node(np.ones(2)), Node(np.ones(2))
    root.child, leaf.parent = leaf, root
    with pytest.raises(TypeError, match="cycle of objects"):
        grad(lambda n: np.sum(n.w**2))(root)


def test_hessian_with_respect_to_an_object_is_refused_like_a_dataclass():
    model = Sequential([Dense(3, 1, activation="linear")])
    with pytest.raises(TypeError, match="take one jacobian per output"):
        s2s_ad.hessian(model_loss)(model, X, Y[:, :1])


# --- records of either kind: second order through their call, properties -------------------


@dataclass
class DenseRecord:
    W: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)

    @property
    def scale(self):
        return np.sum(self.W**2)


class DensePlain:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


def called_loss(layer, x):
    return np.sum(layer(x) ** 2)


@pytest.mark.parametrize("cls", [DenseRecord, DensePlain])
def test_second_order_through_the_call_of_a_record(cls):
    # the gradient with respect to x calls layer(x); differentiated again with respect to
    # the layer, the callee carries the gradient (it was dropped: a wrong number)
    W, b, x = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3))

    def input_sensitivity(layer, x):
        return np.sum(grad(called_loss, wrt="x")(layer, x) ** 2)

    got = grad(input_sensitivity)(cls(W, b), x)
    fd = numerical_grad(lambda W, b: input_sensitivity(cls(W, b), x), (W, b), (0, 1))
    np.testing.assert_allclose(flatten([got.W, got.b]), flatten(fd), rtol=1e-5, atol=1e-7)
    tangent = cls(np.cos(W), np.sin(b))
    _, dot = s2s_ad.jvp(
        lambda layer: grad(called_loss, wrt="x")(layer, x), (cls(W, b),), (tangent,)
    )
    eps = 1e-6
    ahead = grad(called_loss, wrt="x")(cls(W + eps * tangent.W, b + eps * tangent.b), x)
    back = grad(called_loss, wrt="x")(cls(W - eps * tangent.W, b - eps * tangent.b), x)
    np.testing.assert_allclose(dot, (ahead - back) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_a_property_of_a_dataclass_is_refused_not_dropped():
    # its adjoint went to a field that does not exist: a zero gradient, silently
    layer = DenseRecord(RNG.normal(size=(3, 2)), RNG.normal(size=2))
    with pytest.raises(TransformError, match=r"property \.scale of a differentiated DenseRecord"):
        grad(lambda layer: layer.scale * 2.0)(layer)


class Spring:
    """Compared by value (``__eq__`` without ``__hash__``: unhashable)."""

    def __init__(self, stiffness, rest):
        self.stiffness = stiffness
        self.rest = rest

    def __eq__(self, other):
        return isinstance(other, Spring) and np.array_equal(self.stiffness, other.stiffness)

    def energy(self, x):
        return 0.5 * np.sum(self.stiffness * (np.diff(x) - self.rest) ** 2)


def test_an_unhashable_object():
    spring, x = Spring(np.array([1.0, 2.0, 0.5]), 0.3), np.array([0.0, 0.5, 1.2, 1.4])
    got = grad(lambda s, x: s.energy(x))(spring, x)
    assert type(got) is Spring
    want = numerical_grad(lambda k, r: Spring(k, r).energy(x), (spring.stiffness, 0.3), (0, 1))
    np.testing.assert_allclose([*got.stiffness, got.rest], flatten(want), rtol=1e-6)
