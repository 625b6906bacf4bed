"""``a + b`` and ``[*a, *b]`` of two named lists or tuples inside differentiated code.

The normalizer lowers them to a concatenation when it can tell a side holds a list or
tuple (a literal, ``list()``, a comprehension, an annotated or ``.append``-filled
parameter, ``*args``, another concatenation), and to ``_ad.concat`` (which adds arrays)
when both sides may hold one (unannotated parameters, attributes such as
``self.layers``); two locals bound by calls stay refused when the code runs.
"""

from __future__ import annotations

import functools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import check_grads, grad
from tests.fd import flatten, numerical_grad

RNG = np.random.default_rng(7)


def _layers(sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (RNG.normal(size=(m, n)) / np.sqrt(m), RNG.normal(size=n) * 0.1)
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


ENCODER = _layers([3, 5, 2])
DECODER = _layers([2, 4, 3])
X = RNG.normal(size=(6, 3))


def forward(params, x):
    for W, b in params:
        x = np.tanh(x @ W + b)
    return x


def autoencoder_loss(encoder: list, decoder: list, x):
    layers = encoder + decoder
    return np.mean((forward(layers, x) - x) ** 2)


def autoencoder_loss_ag(encoder, decoder, x):
    h = x
    for W, b in list(encoder) + list(decoder):
        h = anp.tanh(h @ W + b)
    return anp.mean((h - x) ** 2)


def starred_loss(encoder, decoder, x):
    h = x
    for W, b in [*encoder, *decoder]:
        h = np.tanh(h @ W + b)
    return np.mean((h - x) ** 2)


def features_loss(w, x):
    base = [x, x**2]
    extra = []
    for k in range(2):
        extra.append(np.sin((k + 1) * x))
    feats = base + extra
    total = 0.0
    for weight, f in zip(w, feats):
        total = total + weight * np.sum(f)
    return total


def tuple_args_loss(x, *args):
    more = (x * 2.0, np.cos(x))
    allargs = args + more
    return np.sum(np.stack(allargs) ** 2)


def test_mlp_layers_from_encoder_plus_decoder_match_fd_and_autograd():
    got = grad(autoencoder_loss, wrt=("encoder", "decoder"))(ENCODER, DECODER, X)
    want = autograd.grad(autoencoder_loss_ag, argnum=(0, 1))(ENCODER, DECODER, X)
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-9, atol=1e-12)
    fd = numerical_grad(autoencoder_loss, (ENCODER, DECODER, X), wrt=0)
    np.testing.assert_allclose(flatten(got[0]), flatten(fd), rtol=1e-5, atol=1e-7)
    assert isinstance(got[1], list) and isinstance(got[1][0], tuple)


def test_starred_display_of_two_lists_matches_concatenation():
    got = grad(starred_loss, wrt=("encoder", "decoder"))(ENCODER, DECODER, X)
    want = grad(autoencoder_loss, wrt=("encoder", "decoder"))(ENCODER, DECODER, X)
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-12)


@pytest.mark.parametrize("fun", [autoencoder_loss, starred_loss])
def test_concatenated_layers_forward_mode_and_second_order(fun):
    check_grads(fun, (ENCODER, DECODER, X), modes=("rev", "fwd"))

    def input_sensitivity(encoder, decoder, x):
        return np.sum(grad(fun, wrt="x")(encoder, decoder, x) ** 2)

    got = grad(input_sensitivity, wrt="encoder")(ENCODER, DECODER, X)
    fd = numerical_grad(input_sensitivity, (ENCODER, DECODER, X), wrt=0)
    np.testing.assert_allclose(flatten(got), flatten(fd), rtol=1e-5, atol=1e-7)


def test_hvp_through_concatenated_layers_matches_autograd():
    x = X[:2]
    v = RNG.normal(size=x.shape)

    def loss_x(x):
        return autoencoder_loss(ENCODER, DECODER, x)

    got = s2s_ad.hvp(loss_x)(x, v)
    want = autograd.hessian_vector_product(lambda x: autoencoder_loss_ag(ENCODER, DECODER, x))(x, v)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


def test_features_built_in_the_loss_then_concatenated():
    w = np.array([0.5, -1.0, 2.0, 0.3])
    x = RNG.normal(size=4)
    check_grads(features_loss, (w, x), order=2, modes=("rev", "fwd"))
    got = grad(features_loss, wrt="x")(w, x)
    want = w[0] + 2 * w[1] * x + w[2] * np.cos(x) + 2 * w[3] * np.cos(2 * x)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_star_args_tuple_plus_tuple():
    x = RNG.normal(size=3)
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    check_grads(tuple_args_loss, (x, a, b), order=2, modes=("rev", "fwd"))
    got = grad(tuple_args_loss, wrt="x")(x, a, b)
    np.testing.assert_allclose(got, 8 * x - 2 * np.cos(x) * np.sin(x), rtol=1e-10)


def test_array_plus_stays_addition():
    def f(a, b):
        c = a + b
        return np.sum(c**2)

    a, b = RNG.normal(size=3), RNG.normal(size=3)
    np.testing.assert_allclose(grad(f)(a, b), 2 * (a + b), rtol=1e-12)


def test_two_unannotated_parameters_joined_when_the_code_runs():
    # neither side is known to be a list: _ad.concat tells joining from adding at run time
    def loss(encoder, decoder, x):
        layers = encoder + decoder
        return np.mean((forward(layers, x) - x) ** 2)

    got = grad(loss, wrt=("encoder", "decoder"))(ENCODER, DECODER, X)
    want = autograd.grad(autoencoder_loss_ag, argnum=(0, 1))(ENCODER, DECODER, X)
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-9, atol=1e-12)
    assert isinstance(got[0], list) and isinstance(got[1][1], tuple)
    check_grads(loss, (ENCODER, DECODER, X), modes=("rev", "fwd"))
    # the same function on arrays adds them
    a, b = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))

    def summed(a, b, x):
        both = a + b
        return np.sum(np.tanh(x @ both) ** 2)

    check_grads(summed, (a, b, X[:, :3]), order=2, modes=("rev", "fwd"))


def test_a_list_joined_with_a_tuple_raises_as_python_does():
    def loss(encoder, decoder, x):
        return np.mean(forward(encoder + decoder, x) ** 2)

    with pytest.raises(TypeError, match="can only concatenate list"):
        grad(loss)(ENCODER, tuple(DECODER), X)


class Network:
    """Layers in two list attributes, joined where they are used."""

    def __init__(self, layers, extra):
        self.layers = layers
        self.extra = extra

    def __call__(self, x):
        for W, b in self.layers + self.extra:
            x = np.tanh(x @ W + b)
        return x


def test_list_attributes_of_an_object_joined():
    net = Network(list(ENCODER), list(DECODER))

    def loss(net, x):
        return np.mean((net(x) - x) ** 2)

    got = grad(loss)(net, X)
    assert type(got) is Network and len(got.layers) == 2 and len(got.extra) == 2
    want = autograd.grad(autoencoder_loss_ag, argnum=(0, 1))(ENCODER, DECODER, X)
    np.testing.assert_allclose(flatten([got.layers, got.extra]), flatten(want), rtol=1e-9)
    check_grads(loss, (net, X), modes=("rev", "fwd"))


def test_a_list_extended_by_a_tuple():
    def f(x, w):
        feats = [x]
        feats += (np.sin(x), w * x)  # list += tuple extends, as in Python
        return np.sum(np.stack(feats) ** 2)

    x, w = RNG.normal(size=3), RNG.normal(size=3)
    check_grads(f, (x, w), order=2, modes=("rev", "fwd"))
    got = grad(f)(x, w)
    np.testing.assert_allclose(got, 2 * x + 2 * np.sin(x) * np.cos(x) + 2 * w**2 * x)

    def by_array(x):
        feats = [x]
        feats += x  # a list extended by an array's entries: refused, not added
        return np.sum(np.stack(feats))

    with pytest.raises(TypeError, match="list \\+= ndarray"):
        grad(by_array)(x)


def test_lists_from_helper_calls_joined_when_the_code_runs():
    # was refused: locals bound by calls of the user's functions are joined by
    # _ad.concat, which concatenates lists and adds arrays when the code runs
    def pair(x):
        return [x, 2.0 * x]

    def loss(x):
        a = pair(x)
        b = pair(x**2)
        c = a + b
        return np.sum(c[2] * c[1])

    x = RNG.normal(size=3)
    check_grads(loss, (x,), order=2, modes=("rev", "fwd"))
    np.testing.assert_allclose(grad(loss)(x), 4.0 * x * x + 2.0 * x * x, rtol=1e-12)


def test_a_parameter_rebound_to_a_list_is_not_taken_for_one_before():
    def f(x, w):
        y = x + w  # arrays here: x is rebound to a list only below
        x = [y, w]
        return np.sum(y**2) + np.sum(np.stack(x + [w]))

    x, w = RNG.normal(size=3), RNG.normal(size=3)
    check_grads(f, (x, w), modes=("rev", "fwd"))


def test_comprehension_variable_shadowing_a_list_name():
    def f(x):
        a = [x, 2 * x]
        rows = [a + x for a in (x, 3 * x)]  # the comprehension's a is an array
        return np.sum(np.stack(a + rows) ** 2)

    check_grads(f, (RNG.normal(size=3),), order=2, modes=("rev", "fwd"))


def test_augmented_concatenation_of_a_local_list():
    def f(x, w):
        feats = [x]
        feats += [np.sin(x)]
        more = [w * x, x**3]
        feats = feats + more
        return np.sum(np.stack(feats) ** 2)

    x, w = RNG.normal(size=3), RNG.normal(size=3)
    check_grads(f, (x, w), order=2, modes=("rev", "fwd"))


def test_an_array_plus_a_list_of_numbers_adds():
    def f(x, w):
        offsets = [1.0, 2.0, 3.0]
        shifted = x + offsets  # NumPy addition, though a side is a list
        both = [0.5, 0.25, 2.0] + w * x
        return np.sum(shifted**2 * both)

    x, w = RNG.normal(size=3), RNG.normal(size=3)
    check_grads(f, (x, w), order=2, modes=("rev", "fwd"))


def test_unannotated_parameters_in_forward_mode():
    def poly(a, b, x):
        c = a + b
        return c[0] * x + c[1] * x**2 + c[2] * x**3 + c[3] * x**4

    a, b = [1.0, 2.0], [3.0, 4.0]
    # both tangents given: the tangents concatenate like the values
    _, both = s2s_ad.jvp(poly, (a, b, 0.5), ([1.0, 0.0], [0.0, 1.0], 0.0))
    assert both == pytest.approx(0.5 + 0.5**4)
    _, one = s2s_ad.jvp(functools.partial(poly, a, x=0.5), (b,), ([1.0, 0.0],))
    assert one == pytest.approx(0.5**3)


def feature_map(x, w):
    base = [x, x**2]
    extra = [np.sin(x)]
    feats = base + extra
    shifted = x + [1.0, 2.0, 3.0]
    return np.stack([*feats, shifted]).T @ w


def test_jacobian_and_hessian_through_concatenated_features():
    x, w = np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -1.0, 0.5])
    jac = s2s_ad.jacobian(feature_map)(x, w)
    eps = 1e-6
    cols = [
        (feature_map(x + eps * e, w) - feature_map(x - eps * e, w)) / (2 * eps) for e in np.eye(3)
    ]
    np.testing.assert_allclose(jac, np.stack(cols, axis=1), atol=1e-8)

    def energy(x):
        return np.sum(feature_map(x, w) ** 2)

    hess = s2s_ad.hessian(energy)(x)
    g = grad(energy)
    rows = [(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(hess, np.stack(rows), atol=1e-6)


def test_corpus_lists_joined_by_name_now_differentiates():
    from corpus import mutation

    x = RNG.normal(size=3)
    check_grads(mutation.lists_joined_by_name, (x,), order=2, modes=("rev", "fwd"))


def test_a_list_joined_with_itself():
    # the two parts' adjoints are lists: added entry by entry (they were concatenated)
    def deep(x, w):
        layers = [w, 2.0 * w]
        for v in layers + layers:
            x = np.tanh(v * x)
        return np.sum(x)

    def shared(x, layers):
        for v in layers + layers:
            x = np.tanh(v * x)
        return np.sum(x)

    x, w = np.array([0.3, -0.2]), np.array([0.5, 1.5])
    check_grads(deep, (x, w), order=2, modes=("rev", "fwd"))
    layers = [w, np.array([-0.7, 0.9])]
    got = grad(shared, wrt="layers")(x, layers)
    np.testing.assert_allclose(
        flatten(got), flatten(numerical_grad(shared, (x, layers), 1)), rtol=1e-6
    )
