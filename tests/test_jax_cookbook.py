"""What JAX's autodiff cookbook and its advanced-autodiff pages do, written as our own
programs and requested through s2s_ad's names (``argnums``, ``has_aux``, ``jacfwd``/
``jacrev`` as ``jacobian(mode=...)``, ``hessian`` as ``jacfwd(jacrev(f))``), checked
against JAX running the same computation in double precision."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.fd import numerical_grad
from tests.user_checks import close

jax = pytest.importorskip("jax")
jnp = jax.numpy


def enable_x64():
    """JAX in double precision for the block (the config's context manager)."""
    return jax.enable_x64(True)


def squash(z):
    return 0.5 * (np.tanh(z / 2) + 1)


def predict(W, b, inputs):
    return squash(np.dot(inputs, W) + b)


INPUTS = np.array(
    [[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.3], [0.74, -2.49, 1.39]]
)
TARGETS = np.array([1.0, 1.0, 0.0, 1.0])


def nll(W, b):
    preds = predict(W, b, INPUTS)
    probs = preds * TARGETS + (1 - preds) * (1 - TARGETS)
    return -np.sum(np.log(probs))


def nll_with_preds(W, b):
    preds = predict(W, b, INPUTS)
    probs = preds * TARGETS + (1 - preds) * (1 - TARGETS)
    return -np.sum(np.log(probs)), preds


def nll_of_dict(params):
    return nll(params["W"], params["b"])


def jax_nll(W, b):
    preds = jax.nn.sigmoid(INPUTS @ W + b)
    return -jnp.sum(jnp.log(preds * TARGETS + (1 - preds) * (1 - TARGETS)))


def jax_predict(W, b):
    return jax.nn.sigmoid(INPUTS @ W + b)


def wavy(x):
    return np.dot(x, x) * np.sin(x).sum()


def jax_wavy(x):
    return jnp.dot(x, x) * jnp.sin(x).sum()


def three_outputs(x):
    return np.array([x[0] ** 2 * x[1], np.sin(x[1]) * x[2], np.exp(x[0] - x[2])])


def jax_three_outputs(x):
    return jnp.array([x[0] ** 2 * x[1], jnp.sin(x[1]) * x[2], jnp.exp(x[0] - x[2])])


RS = np.random.RandomState(11)
W0, B0, X4, V4 = RS.randn(3), 0.3, RS.randn(4), RS.randn(4)


def test_logistic_regression_gradients_like_the_cookbook():
    with enable_x64():
        want = jax.grad(jax_nll, argnums=(0, 1))(W0, B0)
    close(s2s_ad.grad(nll)(W0, B0), want[0], 1e-10)
    close(s2s_ad.grad(nll, argnums=1)(W0, B0), want[1], 1e-10)
    close(s2s_ad.grad(nll, argnums=(0, 1))(W0, B0), want, 1e-10)
    close(s2s_ad.grad(nll_of_dict)({"W": W0, "b": B0}), {"W": want[0], "b": want[1]}, 1e-10)
    value, grads = s2s_ad.value_and_grad(nll, argnums=(0, 1))(W0, B0)
    close((value, grads), (nll(W0, B0), want), 1e-10)
    grads, preds = s2s_ad.grad(nll_with_preds, has_aux=True)(W0, B0)
    close((grads, preds), (want[0], predict(W0, B0, INPUTS)), 1e-10)
    s2s_ad.check_grads(nll, (W0, B0), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("inner", ["rev", "fwd"])
@pytest.mark.parametrize("outer", ["rev", "fwd"])
def test_hessian_as_jacobian_of_jacobian(inner, outer):
    """``jacfwd(jacrev(f))`` and the other three orders, for a scalar and a vector output."""
    nested = s2s_ad.jacobian(s2s_ad.jacobian(wavy, mode=inner), mode=outer)
    x3 = np.array([1.0, 2.0, 0.5])
    vector = s2s_ad.jacobian(s2s_ad.jacobian(three_outputs, mode=inner), mode=outer)(x3)
    with enable_x64():
        close(nested(X4), jax.hessian(jax_wavy)(X4), 1e-10)
        close(vector, jax.jacfwd(jax.jacrev(jax_three_outputs))(x3), 1e-10)
    assert vector.shape == (3, 3, 3)
    close(nested(X4), s2s_ad.hessian(wavy)(X4), 1e-12)


def test_jacobians_and_hessian_blocks_with_several_argnums():
    jac = s2s_ad.jacobian(predict, argnums=(0, 1))(W0, B0, INPUTS)
    blocks = s2s_ad.jacobian(s2s_ad.jacobian(predict, argnums=(0, 1)), argnums=(0, 1))
    got = blocks(W0, B0, INPUTS)
    hess = s2s_ad.hessian(nll, argnums=(0, 1))(W0, B0)
    with enable_x64():
        close(jac, jax.jacrev(jax_predict, argnums=(0, 1))(W0, B0), 1e-10)
        want = jax.jacfwd(jax.jacrev(jax_predict, argnums=(0, 1)), argnums=(0, 1))(W0, B0)
        want_hess = jax.hessian(jax_nll, argnums=(0, 1))(W0, B0)
    for i in range(2):
        for j in range(2):
            assert np.shape(got[i][j]) == np.shape(want[i][j])
            close(got[i][j], want[i][j], 1e-10)
            assert np.shape(hess[i][j]) == np.shape(want_hess[i][j])
            close(hess[i][j], want_hess[i][j], 1e-10)


def test_jvp_vjp_and_hessian_vector_products():
    with enable_x64():
        hess = np.asarray(jax.hessian(jax_wavy)(X4))
        out, tangent = jax.jvp(jax_three_outputs, (X4[:3],), (V4[:3],))
        _, pullback = jax.vjp(jax_three_outputs, X4[:3])
        cotangent = pullback(V4[1:])
    close(s2s_ad.jvp(three_outputs, (X4[:3],), (V4[:3],)), (out, tangent), 1e-10)
    value, ours = s2s_ad.vjp(three_outputs, X4[:3])
    close((value, ours(V4[1:])), (out, cotangent), 1e-10)
    close(s2s_ad.hvp(wavy)(X4, V4), hess @ V4, 1e-10)
    close(s2s_ad.jvp(s2s_ad.grad(wavy), (X4,), (V4,))[1], hess @ V4, 1e-10)
    close(s2s_ad.grad(lambda x: np.vdot(s2s_ad.grad(wavy)(x), V4))(X4), hess @ V4, 1e-10)


def grad_of_jvp_inside(x):
    return s2s_ad.jvp(wavy, (x,), (V4,))[1]


JACOBIAN_OF_THREE = s2s_ad.jacobian(three_outputs)


def grad_of_jacobian_inside(x):
    return np.sum(JACOBIAN_OF_THREE(x))


def test_transforms_inside_differentiated_code_are_refused_where_they_are_called():
    """``grad(lambda x: jvp(f, (x,), (v,))[1])`` (reverse over forward) is refused at the
    user's line, not taken into s2s_ad's own source."""
    for fun, name in ((grad_of_jvp_inside, "s2s_ad.jvp"), (grad_of_jacobian_inside, "jacobian")):
        with pytest.raises(s2s_ad.TransformError) as info:
            s2s_ad.grad(fun)(X4[:3].copy())
        text = str(info.value)
        assert name in text and "test_jax_cookbook.py" in text and "hvp" in text
    with pytest.raises(s2s_ad.TransformError, match="only s2s_ad.jacobian"):
        s2s_ad.grad(s2s_ad.jacobian(wavy))(X4)


def value_of_state(theta, state):
    return np.dot(theta, state)


def td_loss(theta, before, reward, after):
    target = reward + value_of_state(theta, after)
    return 0.5 * (s2s_ad.stop_gradient(target) - value_of_state(theta, before)) ** 2


def straight_through(x):
    rounded = x - s2s_ad.stop_gradient(x) + s2s_ad.stop_gradient(np.round(x))
    return np.sum(rounded**2 * x)


def test_stop_gradient_idioms():
    theta, s1, s2 = RS.randn(3), RS.randn(3), RS.randn(3)
    err = 0.7 + theta @ s2 - theta @ s1
    close(s2s_ad.grad(td_loss)(theta, s1, 0.7, s2), -err * s1, 1e-12)
    x = np.array([-0.3, 1.2, 2.1, -0.9, 0.4])
    with enable_x64():

        def jax_st(x):
            z = x - jax.lax.stop_gradient(x) + jax.lax.stop_gradient(jnp.round(x))
            return jnp.sum(z**2 * x)

        want = jax.grad(jax_st)(x)
    close(s2s_ad.grad(straight_through)(x), want, 1e-12)


def babylonian_step(a, x):
    return 0.5 * (x + a / x)


def fixed_point(step, a, guess):
    previous, x = guess, step(a, guess)
    while np.abs(x - previous) > 1e-12:
        previous, x = x, step(a, x)
    return x


def root_by_iteration(a):
    return fixed_point(babylonian_step, a, a)


def log_where_positive(x):
    safe = np.where(x > 0.0, x, 1.0)
    return np.sum(np.where(x > 0.0, np.log(safe), 0.0))


def test_iterated_solver_and_double_where():
    for a in (0.5, 2.0, 9.0):
        close(s2s_ad.grad(root_by_iteration)(a), 0.5 / np.sqrt(a), 1e-9)
    x = np.array([0.0, 2.0, -1.0, 0.25])
    close(s2s_ad.grad(log_where_positive)(x), np.array([0.0, 0.5, 0.0, 4.0]), 1e-12)


def relu(x):
    return np.maximum(0.0, x)


def mlp_log_probs(params, image):
    act = image
    for w, b in params[:-1]:
        act = relu(np.dot(w, act) + b)
    w_last, b_last = params[-1]
    logits = np.dot(w_last, act) + b_last
    return logits - np.log(np.sum(np.exp(logits)))


def mlp_loss(params, images, labels):
    total = 0.0
    for image, label in zip(images, labels):
        total = total + np.sum(mlp_log_probs(params, image) * label)
    return -total / len(images)


def test_mlp_with_list_of_layer_pairs_and_per_example_gradients():
    sizes = [5, 4, 3]
    params = [(RS.randn(m, n) * 0.5, RS.randn(m) * 0.1) for n, m in zip(sizes[:-1], sizes[1:])]
    images, labels = RS.randn(6, 5), np.eye(3)[RS.randint(0, 3, 6)]
    got = s2s_ad.grad(mlp_loss)(params, images, labels)
    assert isinstance(got, list) and all(isinstance(pair, tuple) for pair in got)
    close(got, numerical_grad(mlp_loss, (params, images, labels), 0), 1e-6)
    one = s2s_ad.grad(mlp_loss)  # per-example gradients: a loop where JAX uses vmap
    per_example = [one(params, images[k : k + 1], labels[k : k + 1]) for k in range(6)]
    mean = [
        tuple(np.mean([g[i][j] for g in per_example], axis=0) for j in range(2)) for i in range(2)
    ]
    close(mean, got, 1e-12)


def polar_parts(x):
    return np.sin(x) * x[0], {"spread": np.cos(x).sum(), "pieces": [x**2, x[1]]}


def jax_polar_parts(x):
    return jnp.sin(x) * x[0], {"spread": jnp.cos(x).sum(), "pieces": [x**2, x[1]]}


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_of_structured_outputs_has_their_structure(mode):
    x = np.array([0.3, 1.2, -0.7])
    got = s2s_ad.jacobian(polar_parts, mode=mode)(x)
    assert isinstance(got, tuple) and set(got[1]) == {"spread", "pieces"}
    assert isinstance(got[1]["pieces"], list) and got[1]["pieces"][0].shape == (3, 3)
    with enable_x64():
        want = jax.jacrev(jax_polar_parts)(x)
    close(got[0], want[0], 1e-12)
    close(got[1]["spread"], want[1]["spread"], 1e-12)  # (JAX orders dict keys)
    close(got[1]["pieces"], want[1]["pieces"], 1e-12)


def test_hessian_of_a_vector_function():
    x = np.array([0.3, 1.2, -0.7])
    got = s2s_ad.hessian(three_outputs)(x)
    assert got.shape == (3, 3, 3)
    close(s2s_ad.hessian(three_outputs)(x), got, 0.0)  # the second call takes the same path
    with enable_x64():
        close(got, jax.hessian(jax_three_outputs)(x), 1e-10)
        third = jax.jacfwd(jax.hessian(jax_wavy))(X4)
    close(s2s_ad.jacobian(s2s_ad.hessian(wavy))(X4), third, 1e-9)


def dense_layer(params, x):
    return np.tanh(params["W"] @ x + params["b"]) * params["gain"]


def jax_dense_layer(params, x):
    return jnp.tanh(params["W"] @ x + params["b"]) * params["gain"]


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_with_respect_to_a_dict_of_parameters(mode):
    params = {"W": RS.randn(2, 3), "b": RS.randn(2), "gain": 1.5}
    x = RS.randn(3)
    got = s2s_ad.jacobian(dense_layer, mode=mode)(params, x)
    with enable_x64():
        want = jax.jacrev(jax_dense_layer)(params, x)
    assert set(got) == set(params)
    for key in params:
        assert np.shape(got[key]) == np.shape(want[key])
        close(got[key], want[key], 1e-12)
