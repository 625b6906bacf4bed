"""Second derivatives of code users write: activations picked from a module-level dict by
name (``ACTS[name](W @ u + b)``), checked against finite differences and autograd's
Hessian; a refusal made while generated code is differentiated again names the user's
file and line."""

from __future__ import annotations

import functools
import sys

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad

HERE = sys.modules[__name__]
RS = np.random.RandomState(61)


def softplus(u):
    return np.log1p(np.exp(-np.abs(u))) + np.maximum(u, 0.0)


def gelu(u):
    return 0.5 * u * (1.0 + np.tanh(0.7978845608 * (u + 0.044715 * u**3)))


ACTS = {"tanh": np.tanh, "softplus": softplus, "gelu": gelu}


def mlp_acts(params, u, acts):
    for (W, b), name in zip(params, acts):
        u = ACTS[name](W @ u + b)
    return u


def loss(x, W1, W2):
    net = [(W1, np.full(3, 0.1)), (W2, np.full(2, -0.2))]
    h = mlp_acts(net, x, ("softplus", "gelu"))
    return np.sum(h**2) + 1e-3 * np.sum(W1**2)


def _point():
    return RS.standard_normal(3), RS.standard_normal((3, 3)) * 0.5, RS.standard_normal((2, 3))


def test_activations_from_a_module_dict_second_order():
    x, W1, W2 = _point()
    s2s_ad.check_grads(loss, (x, W1, W2), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_activations_from_a_module_dict_mixed_hessian_against_autograd(monkeypatch, mode):
    x, W1, W2 = _point()
    mixed = s2s_ad.jacobian(s2s_ad.grad(loss, 0), 1, mode=mode)(x, W1, W2)
    z = np.concatenate([x, W1.ravel(), W2.ravel()])
    with monkeypatch.context() as patch:
        patch.setattr(HERE, "np", anp)
        patch.setattr(HERE, "ACTS", {"tanh": anp.tanh, "softplus": softplus, "gelu": gelu})
        want = autograd.hessian(lambda z: loss(z[:3], z[3:12].reshape(3, 3), z[12:].reshape(2, 3)))(
            z
        )
    np.testing.assert_allclose(mixed.reshape(3, 9), want[:3, 3:12], rtol=1e-7, atol=1e-9)
    full = s2s_ad.hessian(loss, 0)(x, W1, W2)
    np.testing.assert_allclose(full, want[:3, :3], rtol=1e-7, atol=1e-9)


def apply(f, W, x):
    """A helper given the function to call (a plain function, a closure)."""
    return f(W @ x)


def passed_functions(x, W):
    scale = lambda z: np.tanh(W @ z)  # noqa: E731 - closes over a differentiated value
    return (
        np.sum(apply(gelu, W, x) ** 2) + np.sum(apply(np.tanh, W, x)) + np.sum(apply(scale, W, x))
    )


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_functions_passed_to_a_helper_mixed_hessian_against_autograd(monkeypatch, mode):
    # the callee of the helper's dispatched call is followed (a record could be passed in
    # its place); a plain function or a closure there carries no gradient of its own
    x, W = RS.standard_normal(3), RS.standard_normal((3, 3)) * 0.5
    mixed = s2s_ad.jacobian(s2s_ad.grad(passed_functions, 0), 1, mode=mode)(x, W)
    z = np.concatenate([x, W.ravel()])
    with monkeypatch.context() as patch:
        patch.setattr(HERE, "np", anp)
        want = autograd.hessian(lambda z: passed_functions(z[:3], z[3:].reshape(3, 3)))(z)
    np.testing.assert_allclose(mixed.reshape(3, 9), want[:3, 3:], rtol=1e-7, atol=1e-9)
    s2s_ad.check_grads(passed_functions, (x, W), order=2, modes=("rev", "fwd"))


def padded_cubes(x):
    return np.sum(np.pad(x, 2, mode="edge") ** 3)


def mlp_loss(params, x):
    for W, b in params:
        x = np.tanh(W @ x + b)
    return np.sum(x**2)


def test_check_grads_to_third_order():
    # was "grad requires a scalar output": order 3 checks the gradient of the sum of the
    # gradient's entries (a structured gradient: a list of (W, b) pairs)
    x = RS.standard_normal(4)
    s2s_ad.check_grads(padded_cubes, (x,), order=3, modes=("rev", "fwd"))
    params = [
        (RS.standard_normal((2, 4)) * 0.5, RS.standard_normal(2)),
        (RS.standard_normal((1, 2)) * 0.5, RS.standard_normal(1)),
    ]
    s2s_ad.check_grads(mlp_loss, (params, x), order=3, modes=("rev", "fwd"))


def test_check_grads_third_order_against_autograd():
    # the third derivatives order 3 compares with finite differences are the right ones
    x = RS.standard_normal(4)
    summed = lambda x: np.sum(s2s_ad.grad(padded_cubes)(x))  # noqa: E731
    got = s2s_ad.jacobian(s2s_ad.grad(summed))(x)
    cubes = lambda x: anp.sum(anp.concatenate([anp.full(2, x[0]), x, anp.full(2, x[-1])]) ** 3)  # noqa: E731
    want = autograd.jacobian(autograd.grad(lambda x: anp.sum(autograd.grad(cubes)(x))))(x)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_a_refusal_in_code_differentiated_again_names_the_users_line():
    # the sweeps over generated code (a gradient differentiated again) located a refusal
    # at the generated file (<s2s_ad:mlp_acts:23>:99, showing a tape push); its statements
    # carry the user's line and source, the file is the one the generated header names
    import inspect
    import types

    from s2s_ad import api, ir
    from s2s_ad.sweep_base import SweepBase

    generated = api.compile_adjoint(mlp_acts, ("params", "u"), pure="many").bind(mlp_acts)
    filename = generated["grad"].__code__.co_filename
    assert filename.startswith("<s2s_ad:")
    lines, first = inspect.getsourcelines(mlp_acts)
    line = first + 2
    assert "ACTS[name]" in lines[2]
    stmt = ir.Assign(line, lines[2].strip(), "_t1", ir.Var("name"))
    sweep = types.SimpleNamespace(fn=types.SimpleNamespace(filename=filename, user_names={}))
    error = SweepBase.error(sweep, "ACTS[...] with a differentiated key", stmt)  # type: ignore[arg-type]
    assert (error.filename, error.lineno) == (__file__, line)
    assert f"{__file__}:{line}" in str(error)
    assert "u = ACTS[name](W @ u + b)" in str(error)


# --- a container's entry without a tangent, read by a matrix product (forward mode) ------


def pair_layer(x, W):
    """Inputs kept together as a pair, unpacked by index where they are multiplied."""
    pair = (x, W)
    return np.sum(np.tanh(pair[1] @ pair[0]))


def test_forward_mode_through_a_pair_whose_matrix_entry_has_no_tangent():
    # with only x differentiated, W's entry of the pair's tangent is the scalar zero: the
    # matrix product read it as an array (matmul ValueError)
    x, W = np.linspace(-0.5, 0.5, 3), np.arange(6.0).reshape(2, 3) * 0.1
    s2s_ad.check_grads(pair_layer, (x, W), order=2, modes=("rev", "fwd"))
    _, t = s2s_ad.jvp(functools.partial(pair_layer, W=W), (x,), (np.ones(3),))
    np.testing.assert_allclose(t, s2s_ad.grad(pair_layer)(x, W) @ np.ones(3), rtol=1e-12)
