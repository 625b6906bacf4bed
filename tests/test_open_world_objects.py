"""Objects built inside a differentiated function, and dataclasses as parameters.

Users bring Keras-like classes (``Dense(W, b)`` built from the parameters and called, a
``Model`` holding a list of layers built in the loss), ``typing.NamedTuple`` and
``collections.namedtuple`` records, and ``@dataclass`` parameter sets whose gradient has
the same type (as JAX's pytrees give). Each gradient is checked against finite
differences in reverse and forward mode and, where it exists, the Hessian-vector
product; autograd runs the same code where it can.
"""

from __future__ import annotations

import collections
import typing
from dataclasses import dataclass

import autograd
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.fd import numerical_grad
from tests.test_open_world import _check, _close, _twin

RS = np.random.RandomState(5)


# --- Keras-like classes built in the loss ------------------------------------------------


class Dense:
    """A fully connected layer."""

    def __init__(self, W, b, activation=np.tanh):
        self.W = W
        self.b = np.asarray(b)
        self.activation = activation

    def __call__(self, x):
        return self.activation(x @ self.W + self.b)


class Model:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def predict(self, x):
        return self(x)

    def penalty(self):
        return sum(np.sum(layer.W**2) for layer in self.layers)


def keras_loss(params, x, y):
    model = Model([Dense(W, b) for W, b in params])
    return np.mean((model(x) - y) ** 2)


def keras_loss_appended(params, x, y):
    layers = []
    for W, b in params:
        layers.append(Dense(W, b))
    model = Model(layers)
    return np.mean((model.predict(x) - y) ** 2) + 1e-2 * model.penalty()


def one_layer(W, b, x):
    layer = Dense(W, b, activation=np.sin)
    return np.sum(layer(x) ** 2) + np.sum(layer.W * layer.b[0])


def _mlp_params():
    return [(RS.randn(3, 4) * 0.7, RS.randn(4) * 0.1), (RS.randn(4, 2) * 0.7, RS.randn(2) * 0.1)]


def test_a_layer_built_from_parameters_and_called():
    W, b, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    _check(one_layer, (W, b, x))
    _check(one_layer, (W, b, x), wrt=1)
    _close(s2s_ad.grad(one_layer)(W, b, x), autograd.grad(_twin(one_layer))(W, b, x))


def test_a_model_holding_layers_built_in_the_loss():
    params, x, y = _mlp_params(), RS.randn(5, 3), RS.randn(5, 2)
    got = s2s_ad.grad(keras_loss)(params, x, y)
    assert type(got) is list and type(got[0]) is tuple
    _close(got, numerical_grad(keras_loss, (params, x, y)), 1e-5)
    got = s2s_ad.grad(keras_loss_appended)(params, x, y)
    _close(got, numerical_grad(keras_loss_appended, (params, x, y)), 1e-5)


@pytest.mark.parametrize("loss", [keras_loss, keras_loss_appended])
def test_model_in_forward_mode_and_hessian_vector_products(loss):
    params, x, y = _mlp_params(), RS.randn(5, 3), RS.randn(5, 2)

    def first_kernel(W):
        return loss([(W, params[0][1]), params[1]], x, y)

    _check(first_kernel, (params[0][0],))


# --- NamedTuple and namedtuple records -------------------------------------------------


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: np.ndarray


Affine = collections.namedtuple("Affine", ["scale", "shift"])


class Gated(typing.NamedTuple):
    W: np.ndarray
    gate: np.ndarray

    def __call__(self, x):
        return self.forward(x) * np.exp(-(self.gate**2))

    def forward(self, x):
        return np.tanh(x @ self.W)


def gated_loss(layer, x):
    return np.sum(layer(x) ** 2) + np.sum(layer.forward(x))


def built_gated(W, gate, x):
    return gated_loss(Gated(W, gate), x)


def mlp(layers, x):
    for layer in layers:
        x = np.tanh(x @ layer.W + layer.b)
    return np.sum(x**2)


def mlp_of_pairs(params, x):
    return mlp([Layer(W, b=b) for W, b in params], x)


def affine_nll(scale, shift, z):
    t = Affine(shift=shift, scale=scale)
    u = (z - t.shift) / t.scale
    return np.sum(0.5 * u**2 + np.log(t.scale))


def test_namedtuple_layers_built_in_the_loss():
    params, x = _mlp_params(), RS.randn(5, 3)
    got = s2s_ad.grad(mlp_of_pairs)(params, x)
    _close(got, numerical_grad(mlp_of_pairs, (params, x)), 1e-5)
    _close(got, autograd.grad(_twin(mlp_of_pairs))(params, x))

    def kernel(W):
        return mlp_of_pairs([(W, params[0][1]), params[1]], x)

    _check(kernel, (params[0][0],))


def test_methods_of_a_namedtuple_passed_in_and_built_in_the_loss():
    W, gate, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    got = s2s_ad.grad(gated_loss)(Gated(W, gate), x)
    assert type(got) is Gated
    want = [numerical_grad(built_gated, (W, gate, x), k) for k in (0, 1)]
    _close(list(got), want, 1e-5)
    _check(built_gated, (W, gate, x))
    _check(built_gated, (W, gate, x), wrt=1)


def test_collections_namedtuple_built_with_keywords():
    z = RS.randn(6)
    _check(affine_nll, (1.3, 0.2, z))
    _check(affine_nll, (1.3, 0.2, z), wrt=1)
    _close(s2s_ad.grad(affine_nll)(1.3, 0.2, z), autograd.grad(_twin(affine_nll))(1.3, 0.2, z))


# --- dataclasses: parameters and objects built in the loss -------------------------------


@dataclass
class Params:
    W: np.ndarray
    b: np.ndarray
    name: str = "layer"

    def apply(self, x):
        return np.tanh(x @ self.W + self.b)


def dataclass_loss(p, x):
    return np.sum(p.apply(x) ** 2) + 0.1 * np.sum(p.W**2)


def dataclass_mlp(layers, x):
    for p in layers:
        x = p.apply(x)
    return np.sum(x**2)


def built_dataclasses(params, x):
    return dataclass_mlp([Params(W=W, b=b) for W, b in params], x)


def test_dataclass_parameter_gets_a_dataclass_gradient():
    W, b, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    p = Params(W, b, name="first")
    got = s2s_ad.grad(dataclass_loss)(p, x)
    assert type(got) is Params and got.name == "first"

    def plain(W, b):
        return dataclass_loss(Params(W, b), x)

    _close([got.W, got.b], [numerical_grad(plain, (W, b), 0), numerical_grad(plain, (W, b), 1)])
    V = Params(RS.randn(3, 2), RS.randn(2))
    _, tangent = s2s_ad.jvp(dataclass_loss, (p, x), (V, np.zeros_like(x)))
    _close(tangent, np.sum(got.W * V.W) + np.sum(got.b * V.b))


def test_list_of_dataclass_layers_and_dataclasses_built_in_the_loss():
    params, x = _mlp_params(), RS.randn(5, 3)
    layers = [Params(W, b) for W, b in params]
    got = s2s_ad.grad(dataclass_mlp)(layers, x)
    assert [type(g) for g in got] == [Params, Params]
    want = numerical_grad(built_dataclasses, (params, x))
    _close([(g.W, g.b) for g in got], want, 1e-5)
    _close(s2s_ad.grad(built_dataclasses)(params, x), want, 1e-5)

    def kernel(W):
        return built_dataclasses([(W, params[0][1]), params[1]], x)

    _check(kernel, (params[0][0],))


def test_hessian_with_respect_to_a_dataclass_is_refused_like_a_namedtuple():
    p, x = Params(RS.randn(3, 2), RS.randn(2)), RS.randn(4, 3)
    with pytest.raises(TypeError, match="take one jacobian per output"):
        s2s_ad.hessian(dataclass_loss)(p, x)


# --- classes whose __init__ computes: inlined (s2s_ad/norm_init.py) ---------------------


class Scaled:
    def __init__(self, W, k):
        self.W = W * k  # computed: the construction is inlined, W * k a field

    def __call__(self, x):
        return x @ self.W


def scaled_loss(W, x):
    return np.sum(Scaled(W, 2.0)(x))


@dataclass
class Normalized:
    w: np.ndarray

    def __post_init__(self):
        self.w = self.w / np.linalg.norm(self.w)


def normalized_loss(w):
    return np.sum(Normalized(w).w ** 3)


def test_classes_whose_construction_computes_are_differentiated():
    _check(scaled_loss, (RS.randn(2, 2), RS.randn(2)))
    _check(normalized_loss, (RS.randn(3),))


# --- what is not a record is refused ----------------------------------------------------


class Holder:
    __slots__ = ("W",)  # no instance dict: no gradient object can be made

    def __init__(self, W):
        self.W = W


def held(obj):
    return np.sum(obj.W**2)


@pytest.mark.parametrize(
    ("fun", "args", "construct"),
    [
        (held, (Holder(np.ones(2)),), r"attribute \.W of a differentiated value \(a Holder with"),
    ],
)
def test_what_is_not_a_record_is_refused(fun, args, construct):
    with pytest.raises(TransformError, match=construct) as info:
        s2s_ad.grad(fun)(*args)
    assert "test_open_world_objects.py" in str(info.value)
