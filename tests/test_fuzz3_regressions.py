"""Bugs found by the third round of random user programs (``random_users3.py``), each as
the user code that showed it."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2s_ad

RS = np.random.RandomState(13)


def _layers():
    return [(0.5 * RS.randn(4, 4), 0.5 * RS.randn(4)) for _ in range(2)]


# --- a local function's default, evaluated where the function is defined ------------------


def anchored_loss(x, params):
    """Each layer pulled towards the input it started from: ``anchor=h`` is the value of
    ``h`` when ``pull`` is defined, not when it is called."""
    h = x * 1.0

    def pull(u, anchor=h, k=0.5):
        diff = u - anchor
        return u - k * diff

    for W, b in params:
        h = np.tanh(W @ h + b)
    h = pull(h)
    return np.sum(h**2)


def scaled_by_first(x, params):
    """A one-line helper whose default reads an entry of a variable rebound afterwards."""
    h = x * 1.0

    def g(u, c=h[0]):
        return u * c

    h = h * 2.0
    h = g(h) + h
    return np.sum(h**2) + np.sum(params[0][1])


def lambda_default_loss(x, params):
    """A lambda whose default reads a local variable bound again before the call."""
    scale = np.mean(x)
    act = lambda u, c=scale * 2.0: np.tanh(u * c)  # noqa: E731
    scale = np.sum(x**2)
    return np.sum(act(params[0][0] @ x)) + scale


def temperature_loss(x, params):
    """A default overridden at one call and used at the other."""
    t = np.exp(x[0])

    def soft(u, temp=t):
        z = u / temp
        return np.log(np.sum(np.exp(z)))

    t = np.exp(x[1])
    W, b = params[0]
    return soft(W @ x + b) + soft(W @ x, temp=t)


def test_a_local_default_is_the_value_where_the_function_is_defined():
    # the default was evaluated at each call: a wrong value and a wrong gradient
    params, x = _layers(), RS.randn(4)
    for loss in (anchored_loss, scaled_by_first, lambda_default_loss, temperature_loss):
        want = loss(x, params)
        value, _ = s2s_ad.value_and_grad(loss)(x, params)
        np.testing.assert_allclose(value, want, rtol=1e-12)
        s2s_ad.check_grads(
            functools.partial(loss, params=params), (x,), order=2, modes=("rev", "fwd")
        )
        s2s_ad.check_grads(functools.partial(loss, x), (params,))


def shifted_loss(x, params):
    """A default that names the array itself: ``h += 1.0`` changes it in place, and the
    default with it (Python shares the array)."""
    h = x * 1.0

    def g(u, base=h):
        return u + base

    h += 1.0
    return np.sum(g(params[0][1]) ** 2)


def test_a_default_naming_an_array_updated_in_place_is_refused():
    # with the default evaluated where g is defined, h += 1.0 went unseen: a wrong
    # gradient (the default read the array before the update); refused as base = h is
    params, x = _layers(), RS.randn(4)
    with pytest.raises(s2s_ad.TransformError, match="also names") as info:
        s2s_ad.grad(shifted_loss)(x, params)
    assert info.value.lineno == shifted_loss.__code__.co_firstlineno + 8


# --- an object whose class defines __getitem__, built in the loss -------------------------


class ReversedLayers:
    """Layers read back to front, each weight doubled: indexing runs the class's code."""

    def __init__(self, weights):
        self.weights = weights

    def __getitem__(self, k):
        return self.weights[len(self.weights) - 1 - k] * 2.0

    def __len__(self):
        return len(self.weights)


def reversed_loss(x, weights):
    layers = ReversedLayers(weights)
    h = x * 1.0
    for k in range(len(layers)):
        h = np.tanh(layers[k] @ h)
    return np.sum(h**2)


def test_indexing_an_object_with_its_own_getitem_is_refused_not_a_wrong_gradient():
    # the object was taken for a record of its constructor's arguments and layers[k] for
    # an index into them: the gradient of the weights came out zero in places
    x = RS.randn(4)
    weights = [0.5 * RS.randn(4, 4) for _ in range(2)]
    s2s_ad.check_grads(functools.partial(reversed_loss, weights=weights), (x,))
    with pytest.raises(s2s_ad.TransformError, match="ReversedLayers") as info:
        s2s_ad.grad(reversed_loss, 1)(x, weights)
    assert info.value.lineno == reversed_loss.__code__.co_firstlineno + 1


def test_a_refusal_through_a_partial_names_the_user_line():
    # grad of partial(loss, x) was refused at the line of the wrapper s2s_ad made for the
    # partial ("call to reversed_loss, which may write into its argument"), not the user's
    x = RS.randn(4)
    weights = [0.5 * RS.randn(4, 4) for _ in range(2)]
    with pytest.raises(s2s_ad.TransformError, match="ReversedLayers") as info:
        s2s_ad.grad(functools.partial(reversed_loss, x))(weights)
    assert info.value.filename == __file__


# --- an unrolled inner optimisation with s2s_ad.grad, differentiated twice ----------------


def inner_loss(u, target, w):
    return np.sum((u - target) ** 2 * w)


def unrolled_loss(x, target):
    """Two steps of gradient descent on an inner loss, then the outer loss (MAML-like)."""
    w = np.exp(target)
    for _ in range(2):
        g = s2s_ad.grad(inner_loss)(x, target, w)
        x = x - 0.1 * g
    return np.sum(np.sin(x))


def test_second_order_of_an_unrolled_inner_optimisation():
    # check_grads(order=2) raised "s2s_ad.grad called inside a function being
    # differentiated" with no file or line: asking whether the call writes into its
    # arguments read s2s_ad.grad's own source
    x, target = RS.randn(3), 0.3 * RS.randn(3)
    loss = functools.partial(unrolled_loss, target=target)
    s2s_ad.check_grads(loss, (x,), order=2, modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(unrolled_loss, x), (target,), modes=("rev", "fwd"))


# --- a loss that writes into its own argument, differentiated twice through a partial -----


def rescaled_loss(x, params):
    """Rescales an entry of its input in place before the layer (the caller's array
    changes, as the user wrote)."""
    x[1] = x[1] * 2.0 + np.sum(params[0][1] * x)
    h = np.tanh(params[0][0] @ x)
    return np.sum(h**2) + np.sum(x)


def test_second_order_of_a_loss_writing_its_argument_through_a_partial():
    # grad of grad was refused at the line of the wrapper made for the partial ("a call
    # to rescaled_loss, which writes its argument 'x' in place (<s2s_ad made:...>)")
    params, x, v = _layers(), RS.randn(4), RS.randn(4)
    loss = functools.partial(rescaled_loss, params=params)
    grad = s2s_ad.grad(loss)
    eps = 1e-5
    want = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    got = s2s_ad.grad(lambda u: np.dot(grad(u), v))(x.copy())
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.hvp(loss)(x.copy(), v), want, rtol=1e-6, atol=1e-8)
    value, tangent = s2s_ad.jvp(loss, (x.copy(),), (v,))
    ahead, behind = loss(x + 1e-6 * v), loss(x - 1e-6 * v)
    np.testing.assert_allclose(tangent, (ahead - behind) / 2e-6, rtol=1e-6)
    np.testing.assert_allclose(np.dot(grad(x.copy()), v), tangent, rtol=1e-9)


# --- for/else with continue: leaving two loops at once ------------------------------------


def saturating_loss(x, params):
    """Runs the layers a few rounds; a round stops at the first layer whose output
    saturates, and only such a round is damped (``else: continue``, the two-loop exit)."""
    h = x * 1.0
    for _ in range(3):
        for W, b in params:
            h = np.tanh(W @ h + b) + 0.5 * h
            if np.max(np.abs(h)) > 1.2:
                break
        else:
            continue
        h = h * 0.5
    return np.sum(h**2)


def first_hit_loss(x, params):
    """A search over rounds and entries that returns from inside the inner loop, with the
    inner loop's ``else: continue`` skipping the rest of a round."""
    h = x * 1.0
    W, b = params[0]
    for i in range(3):
        for j in range(4):
            h = h + 0.1 * np.sin(h[j]) * b
            if np.sum(h) > 1.0:
                if i > 0:
                    return np.sum(h**2)
                break
        else:
            continue
        h = np.tanh(W @ h)
    return np.sum(h)


def test_a_continue_in_the_else_of_an_inner_loop():
    # the continue the else: block ran jumped in the outer loop unseen by the backward
    # sweep (it reversed the skipped h = h * 0.5 too): an internal TypeError or AxisError
    params = _layers()
    for loss in (saturating_loss, first_hit_loss):
        for scale in (0.5, 1.5, 3.0):  # rounds that break, and rounds that run through
            x = scale * RS.randn(4)
            partial = functools.partial(loss, params=params)
            s2s_ad.check_grads(partial, (x,), order=2, modes=("rev", "fwd"))
            s2s_ad.check_grads(functools.partial(loss, x), (params,), modes=("rev", "fwd"))


# --- np.roll by a loop counter, differentiated twice ---------------------------------------


def rolled_features(x, params):
    """Features as rolled copies of the input, weighted, then a layer."""
    W, b = params[0]
    rows = []
    for k in range(3):
        rows.append(np.roll(x, k) * b)
    M = np.stack(rows, axis=1)
    return np.sum(np.tanh(W @ M) ** 2)


def test_roll_by_a_loop_counter_in_second_order():
    # hessian/grad of grad was refused at a line of the generated code: "argument 'shift'
    # of np.roll (no gradient rule for it)" (the counter comes back from a tape there)
    params, x = _layers(), RS.randn(4)
    loss = functools.partial(rolled_features, params=params)
    s2s_ad.check_grads(loss, (x,), order=2, modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(rolled_features, x), (params,), modes=("rev", "fwd"))


# --- a local function with an early return ------------------------------------------------


def clipped_loss(x, params):
    W, b = params[0]

    def pick(u):
        if u[0] > 0.0:
            return u
        return np.sum(u) * np.ones_like(u)

    return np.sum(pick(W @ x + b) ** 2)


def test_a_local_function_with_an_early_return():
    # was refused: "a local function that returns before its last statement" (a
    # module-level helper with the same body worked); its returns now assign the call's
    # result, the statements after them guarded by a flag
    params = _layers()
    for x in (RS.randn(4), -RS.randn(4), 3.0 * RS.randn(4)):
        loss = functools.partial(clipped_loss, params=params)
        s2s_ad.check_grads(loss, (x,), order=2, modes=("rev", "fwd"))
        s2s_ad.check_grads(functools.partial(clipped_loss, x), (params,), modes=("rev", "fwd"))


# --- seeds that fail, not fixed yet --------------------------------------------------------


def reused_name_loss(x, params):
    h = x * 1.0

    def g(u, c=0.5):
        return np.tanh(u * c)

    h = g(h)
    for _ in range(2):
        g = 2.0 * (h - params[0][1])
        h = h - 0.1 * g
    return np.sum(h**2)


def test_a_local_function_name_reused_for_an_array():
    """The later ``g`` is renamed apart (norm_split): the def is dead at the rebinding."""
    params, x = _layers(), RS.randn(4)
    loss = functools.partial(reused_name_loss, params=params)
    s2s_ad.check_grads(loss, (x,), modes=("rev", "fwd"))
    s2s_ad.check_grads(loss, (x,), order=2)
