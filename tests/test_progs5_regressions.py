"""Wrong derivatives and internal errors found by the fifth round of random programs
(``random_programs5.py``), each as a user would write it."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad


def horner_free_poly(x, coefs):
    """A polynomial the way it is first written: ``sum c[k] * x ** k`` in a loop."""
    total = 0.0 * x
    for k in range(len(coefs)):
        total = total + coefs[k] * x**k
    return total


def poly_loss(x):
    return np.sum(horner_free_poly(x, [1.0, -2.0, 0.5, 0.25]) ** 2)


def test_polynomial_with_a_constant_term_at_zero():
    # d/dx x ** 0 was 0 * x ** -1: NaN on an array entry 0, ZeroDivisionError on 0.0
    x = np.array([0.0, 0.5, -1.0])
    want = 2 * horner_free_poly(x, [1.0, -2.0, 0.5, 0.25]) * (-2.0 + x + 0.75 * x**2)
    np.testing.assert_allclose(s2s_ad.grad(poly_loss)(x), want)
    assert s2s_ad.grad(lambda u: horner_free_poly(u, [1.0, 3.0]))(0.0) == 3.0
    assert s2s_ad.jvp(lambda u: horner_free_poly(u, [1.0, 3.0]), (0.0,), (1.0,))[1] == 3.0
    s2s_ad.check_grads(poly_loss, (x,), order=2, modes=("rev", "fwd"))


def activations(x, slope):
    """A leaky activation written inline: linear above 1, identity on (0, 1], leaky below."""
    out = 0.0
    for k in range(x.shape[0]):
        u = x[k]
        out = out + np.tanh(slope * u if u > 1.0 else (u if u > 0.0 else 0.1 * u)) ** 2
    return out


def test_forward_mode_through_a_nested_conditional_expression():
    # the value of ``a if c else (b if d else e)`` lost its tangent in forward mode (the
    # inner ``if`` assigns it on both paths, which the merge did not see)
    x = np.array([1.5, 0.4, -0.7])
    g = s2s_ad.grad(activations, (0, 1))(x, 2.0)
    _, tangent = s2s_ad.jvp(activations, (x, 2.0), (np.ones(3), 1.0))
    assert tangent == pytest.approx(float(np.sum(g[0]) + g[1]))
    s2s_ad.check_grads(activations, (x, 2.0), modes=("rev", "fwd"))


def first_above(v, limit):
    """The first entry above ``limit`` (doubled), or a tenth of the sum."""
    for i in range(v.shape[0]):
        if v[i] > limit:
            return v[i] * 2.0
    return np.sum(v) * 0.1


def smoothed_scores(x, shift):
    h = x * 1.0
    score = 0.0
    for _ in range(2):
        score = first_above(h, 0.5)
        h = np.sin(h + shift)
    return score


def test_second_order_through_a_helper_with_an_early_return_called_in_a_loop():
    # the helper's split backward got the symbolic zero as its tuple cotangent
    x = np.array([0.1, 0.2, -0.2, 0.3])
    shift = np.array([-0.5, -0.4, -0.3, -0.2])
    s2s_ad.check_grads(smoothed_scores, (x, shift), order=2, modes=("rev", "fwd"))


def features(u, degree):
    out = 0.0 * u
    for p in range(degree):
        out = out + u ** (p + 1) / (p + 1)
    return out


def residual_layer(x, W):
    h = np.sin(x)
    h = h + W[0] * features(h, 3)
    return np.sum(h**2)


def test_hessian_of_a_residual_layer_over_a_looping_helper():
    # differentiating the gradient again read the helper's saved tape after the first
    # backward sweep had popped it (list index out of range)
    x = np.array([0.1, 0.2, -0.2, 0.3])
    W = np.arange(12.0).reshape(3, 4) * 0.1 - 0.5
    s2s_ad.check_grads(residual_layer, (x, W), order=2, modes=("rev", "fwd"))
    hess = s2s_ad.hessian(residual_layer, 1)(x, W)
    assert hess.shape == (3, 4, 3, 4)
    assert np.all(hess[1:] == 0.0)


def ping_pong(x, s):
    """Two buffers swapped on every entry, then one entry damped in place."""
    a = x.copy()
    b = np.zeros_like(x) + 0.1 * s
    if s > 10.0:
        a = np.tanh(features(a, 3))
    for _ in range(2):
        for _entry in a:
            a, b = b, a
        a[2] *= np.cos(a[1] * s)
    return np.sum(a * b)


def test_second_order_with_buffers_swapped_in_an_inner_loop():
    # the inner backward loop left an adjoint the symbolic zero while the outer loop
    # still wrote into it in place (a_bar[2] = 0.0 on a float)
    x = np.array([0.1, 0.2, -0.2, 0.3])
    s2s_ad.check_grads(ping_pong, (x, 0.7), order=2, modes=("rev", "fwd"))


def centred(x, M):
    W = M * 1.0
    if np.sum(x) > 0.0:
        W = W + x
    for _ in range(2):
        W[0] = np.tanh(np.mean(W, axis=0))
    return np.sum(np.mean(W, axis=0) ** 2)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_forward_mode_reduces_along_an_axis_after_a_branch(sign):
    # the branch not taken left W's tangent the scalar 0.0: np.mean(W_dot, 0) raised
    x = sign * np.array([0.1, 0.2, -0.2, 0.3])
    M = np.arange(12.0).reshape(3, 4) * 0.1 - 0.5
    s2s_ad.check_grads(centred, (x, M), modes=("rev", "fwd"))
    _, tangent = s2s_ad.jvp(lambda u: centred(u, M), (x,), (np.ones(4),))
    assert tangent == pytest.approx(float(np.sum(s2s_ad.grad(centred)(x, M))))


def damped_rows(x, M, s):
    W = M * 1.0
    W = np.tanh(W - np.mean(W, axis=1, keepdims=True) * (np.sin(s) + (-0.75) ** 2))
    return np.sum(W * x)


def test_a_negative_constant_raised_to_a_power():
    # (-0.75) ** 2 was written -0.75 ** 2 in the generated code: the value and the
    # derivatives came out with the wrong sign
    x = np.array([0.1, 0.9, -0.2, 0.3])
    M = np.arange(12.0).reshape(3, 4) * 0.1 - 0.5
    value, _ = s2s_ad.value_and_grad(damped_rows)(x, M, 0.7)
    assert value == pytest.approx(damped_rows(x, M, 0.7))
    assert s2s_ad.jvp(damped_rows, (x, M, 0.7), (x, M, 1.0))[0] == pytest.approx(value)
    s2s_ad.check_grads(damped_rows, (x, M, 0.7), modes=("rev", "fwd"))


def shifted(x, s, cap):
    v = x * 0.5 + (np.max(x) if x[0] > cap else s)
    return np.sum(v**2)


@pytest.mark.parametrize("cap", [-5.0, 5.0])
def test_a_conditional_expression_broadcast_against_an_array(cap):
    # both branches' values are broadcast against x: the branch reversed second kept the
    # adjoint's broadcast dimensions (the float s got a gradient of shape (4,))
    x = np.array([0.1, 0.9, -0.2, 0.3])
    gx, gs = s2s_ad.grad(shifted, (0, 1))(x, 0.7, cap)
    assert np.shape(gs) == ()
    s2s_ad.check_grads(shifted, (x, 0.7, cap), modes=("rev", "fwd"))


def binned_energy(x, width):
    """Energies accumulated per bin in a dict while walking the signal."""
    bins = {}
    k = 0
    while k < x.shape[0] - 1:
        k += 1
        if k % 3 == 0:
            continue
        key = k % 2
        bins[key] = bins.get(key, 0.0) + np.tanh(x[k] / width) ** 2
    return sum(bins.values())


def test_hessian_of_a_dict_accumulated_in_a_while_loop():
    # differentiating the gradient again saw the key (a counter read back from the
    # tape) as differentiated: "argument 'key' of ndarray.get (no gradient rule)"
    x = np.array([0.1, 0.9, -0.2, 0.3, 0.5, -0.4])
    s2s_ad.check_grads(binned_energy, (x, 0.8), order=2, modes=("rev", "fwd"))
    assert s2s_ad.hessian(binned_energy)(x, 0.8).shape == (6, 6)


def squash_in_place(x, gain):
    h = x * gain
    for i, v in enumerate(h):
        h[i] = v * np.sin(v)
    return np.sum(h**2)


def smooth_forward(x, alpha):
    """A first-order recursive filter run in place over the signal."""
    h = x * 1.0
    for i, v in enumerate(h[:-1]):
        h[i + 1] += alpha * v
    return np.sum(h**2)


def drift(x, rate):
    y = x * 1.0
    z = x * rate
    acc = 0.0
    for i, (a, b) in enumerate(zip(y, z)):
        z -= 0.2 * rate * i
        acc += np.tanh(b) * a
    return acc + np.sum(z)


@pytest.mark.parametrize("fun", [squash_in_place, smooth_forward, drift])
def test_a_loop_over_an_array_it_writes_into(fun):
    # the element a trip read was taken from the array as it was before the loop (or,
    # in the backward sweep, as it was after it): wrong gradients, and for zip(y, z)
    # with z -= ... in the body a wrong value too
    x = np.array([0.1, 0.9, -0.2, 0.3])
    value, _ = s2s_ad.value_and_grad(fun)(x.copy(), 0.7)
    assert value == pytest.approx(fun(x.copy(), 0.7))
    s2s_ad.check_grads(fun, (x, 0.7), order=2, modes=("rev", "fwd"))


def rank_one_updates(x, M):
    """A matrix grown by rank-one updates along a state that changes every step."""
    z = x * 0.1
    W = M * 1.0
    for _ in range(2):
        z = np.tanh(z + x)
        W = np.tanh(W + 0.2 * np.outer(np.mean(W, axis=1), z))
    return np.sum(np.tanh(W)) + np.sum(z)


def test_second_order_forward_over_a_loop_of_outer_products():
    # jvp of the gradient along one argument popped a symbolic-zero tangent off the tape
    # and np.ravel made it an array of shape (1,) for the matrix product (matmul error)
    x = np.array([0.1, 0.9, -0.2, 0.3])
    M = np.arange(12.0).reshape(3, 4) * 0.1 - 0.5
    s2s_ad.check_grads(rank_one_updates, (x, M), order=2, modes=("rev", "fwd"))


def relax_then_reset(x, rate):
    y = x * 1.0
    z = x * rate
    for i, (a, b) in enumerate(zip(y, z)):
        z += 0.2 * (a - b)
        if i == 1:
            y, z = np.sin(z), y
    return np.sum(y * z)


def test_a_loop_over_an_array_updated_in_place_then_rebound_is_refused():
    # Python's iterator keeps reading the first z until the name moves on: refused,
    # naming the loop (it gave a wrong gradient)
    x = np.array([0.1, 0.9, -0.2, 0.3])
    with pytest.raises(s2s_ad.TransformError, match="updates in place and rebinds") as info:
        s2s_ad.grad(relax_then_reset)(x, 0.7)
    assert "for i, (a, b) in enumerate(zip(y, z))" in str(info.value)


def worklist(x):
    """Entries derived from the ones before, appended to the list being walked."""
    items = [x]
    for v in items:
        if len(items) < 3:
            items.append(np.sin(v) * 2.0)
    total = 0.0
    for v in items:
        total = total + np.sum(v)
    return total


def test_a_loop_over_a_list_it_appends_to_is_refused():
    # the generated loop ran the trips of the list's first length: a wrong value
    with pytest.raises(s2s_ad.TransformError, match="appends to or removes from") as info:
        s2s_ad.grad(worklist)(np.array([0.3, 0.5]))
    assert "for v in items:" in str(info.value)
