"""Bugs found by the second round of random user programs (``random_users.py``), each as
the user code that showed it."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest

import s2s_ad
from tests.fd import numerical_grad

RS = np.random.RandomState(11)


# --- a recursive network in forward mode -------------------------------------------------


def deep(params, u):
    """An MLP written as a recursion over the list of layers."""
    if not params:
        return u
    W, b = params[0]
    return deep(params[1:], np.tanh(W @ u + b))


def recursive_loss(x, params):
    return np.sum(deep(params, x) ** 2)


def _layers():
    return [(0.5 * RS.randn(3, 3), 0.5 * RS.randn(3)) for _ in range(2)]


def test_a_recursive_network_in_forward_mode():
    # the optimizer folded ``_t2 = params[0]`` into its two readers but left
    # ``W, b = _t2`` reading the name it dropped: a NameError in deep_jvp
    params, x = _layers(), RS.randn(3)
    s2s_ad.check_grads(functools.partial(recursive_loss, params=params), (x,), modes=("rev", "fwd"))
    grads = s2s_ad.grad(recursive_loss, 1)(x, params)
    V = _layers()
    _, tangent = s2s_ad.jvp(recursive_loss, (x, params), (np.zeros(3), V))
    want = sum(np.sum(g * v) for gl, vl in zip(grads, V) for g, v in zip(gl, vl))
    np.testing.assert_allclose(tangent, want, rtol=1e-10)


# --- a closure factory and a local function called with a starred layer ------------------


def make_affine(W, b):
    def apply(u):
        return W @ u + b

    return apply


def starred_factory_loss(x, params):
    h = x
    for layer in params:
        fn = make_affine(*layer)
        h = np.tanh(fn(h))
    return np.sum(h**2)


def starred_lambda_loss(x, params):
    dense = lambda u, W, b: np.sin(W @ u) + b  # noqa: E731
    h = dense(x, *params[0])
    return np.sum(dense(h, *params[1]) ** 2)


def test_a_closure_factory_called_with_a_starred_layer():
    # was refused: "call of make_affine with starred arguments" (SPEC promises star-calls)
    params, x = _layers(), RS.randn(3)
    for loss in (starred_factory_loss, starred_lambda_loss):
        s2s_ad.check_grads(functools.partial(loss, params=params), (x,), modes=("rev", "fwd"))
        s2s_ad.check_grads(functools.partial(loss, x), (params,))


def starred_too_long(x, params):
    fn = make_affine(*params)  # two layers: W and b are the two (W, b) tuples
    return np.sum(fn(x))


def starred_first(x, params):
    dense = lambda W, b, u: np.sin(W @ u) + b  # noqa: E731
    return np.sum(dense(*params[0], x))


def test_a_starred_layer_of_another_length_or_before_a_positional():
    params, x = _layers() + _layers(), RS.randn(3)
    with pytest.raises(ValueError):  # as Python raises (a TypeError there): never a number
        s2s_ad.grad(starred_too_long)(x, params)
    with pytest.raises(s2s_ad.TransformError, match="starred arguments") as info:
        s2s_ad.grad(starred_first)(x, params)
    assert "dense(*params[0], x)" in str(info.value)


# --- a call counter on a layer the gradient reads ----------------------------------------


class CountingDense:
    """A Keras-style layer that counts its calls."""

    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.calls = 0

    def __call__(self, u):
        self.calls += 1
        return np.tanh(self.W @ u + self.b)


class Annealed(CountingDense):
    """A layer whose output depends on its counter: the counter is read by the gradient."""

    def __call__(self, u):
        self.calls += 1
        return np.tanh(self.W @ u / self.calls + self.b)


LAYER = CountingDense(0.5 * RS.randn(3, 3), 0.5 * RS.randn(3))
ANNEALED = Annealed(0.5 * RS.randn(3, 3), 0.5 * RS.randn(3))


def counted_loss(x):
    h = LAYER(x)
    return np.sum(LAYER(h) ** 2)


def annealed_loss(x):
    return np.sum(ANNEALED(x) ** 2)


def test_a_call_counter_on_a_layer_the_gradient_reads():
    # was refused ("a write to the attribute .calls of 'self', which the gradient reads
    # again") although the backward sweep reads only .W and .b
    x = RS.randn(3)
    before = LAYER.calls
    s2s_ad.check_grads(counted_loss, (x,), modes=("rev", "fwd"))
    calls = LAYER.calls
    s2s_ad.grad(counted_loss)(x)
    assert LAYER.calls == calls + 2  # the forward sweep ran once, as the primal
    assert calls > before


def test_a_counter_the_gradient_reads_is_object_state():
    # was refused: the counter is read by the gradient (``/ self.calls``); now object
    # state (s2s_ad/object_state.py): exact, and counted once per call, as in Python
    x = RS.randn(3)
    start = copy.deepcopy(vars(ANNEALED))

    def fresh(u):
        vars(ANNEALED).update(copy.deepcopy(start))
        return annealed_loss(u)

    want = numerical_grad(fresh, (x,), 0)
    vars(ANNEALED).update(copy.deepcopy(start))
    got = s2s_ad.grad(annealed_loss)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert ANNEALED.calls == start["calls"] + 1


# --- containers changed by their methods ------------------------------------------------


def popped_features(x, params):
    """Features kept in a dict; one of them taken out with ``pop``."""
    W, b = params[0]
    feats = {"hidden": np.tanh(W @ x + b), "skip": x**2}
    skip = feats.pop("skip")
    return np.sum(skip * feats["hidden"]) + len(feats)


def removed_term(x):
    terms = [x[0] * x[1], np.sin(x[2])]
    unused = terms.remove(terms[1])  # noqa: F841 (what remove returns: None)
    return sum(terms) + x[2]


def copied_cache(x, params):
    W, b = params[0]
    cache = {"h": np.tanh(W @ x + b), "x": x}
    saved = cache.copy()
    return np.sum(saved["h"] * saved["x"])


def test_a_dict_pop_is_refused_not_a_wrong_gradient():
    # d.pop("skip") went to the dispatcher as a builtin holding nothing: the gradient
    # through the popped value was dropped (2/3 of the true one); now refused at its line
    params, x = _layers(), RS.randn(3)
    with pytest.raises(s2s_ad.TransformError, match=r"in-place method call feats\.pop") as info:
        s2s_ad.grad(popped_features)(x, params)
    assert 'skip = feats.pop("skip")' in str(info.value)
    with pytest.raises(s2s_ad.TransformError, match=r"feats\.pop"):
        s2s_ad.jvp(functools.partial(popped_features, params=params), (x,), (x,))


def test_a_list_remove_whose_result_is_kept_is_refused():
    # was an IndexError in the backward sweep (the removal was not seen)
    with pytest.raises(s2s_ad.TransformError, match=r"in-place method call terms\.remove"):
        s2s_ad.grad(removed_term)(RS.randn(3))


def test_a_dict_copied_in_forward_mode_and_second_order():
    # the tangent of d.copy() was np.copy of a dict: a 0-d object array (IndexError)
    params, x = _layers(), RS.randn(3)
    s2s_ad.check_grads(
        functools.partial(copied_cache, params=params), (x,), order=2, modes=("rev", "fwd")
    )


# --- a generator expression kept in a name ------------------------------------------------


def annealed_energy(x, temps):
    t = temps[0]
    terms = (np.sum(np.exp(-x * x / t)) for _ in range(2))
    t = temps[1]  # Python's generator looks t up when sum() runs it: temps[1]
    return sum(terms)


def consumed_energy(x, temps):
    t = temps[0]
    terms = (np.sum(np.exp(-x * x / t)) for _ in range(2))
    total = sum(terms)
    t = temps[1]
    return total * t


def test_a_generator_kept_in_a_name_over_a_changed_name():
    # the generator was evaluated where it was written (with temps[0]): a wrong gradient
    x, temps = RS.randn(3), np.array([0.5, 2.0])
    with pytest.raises(s2s_ad.TransformError, match="generator expression kept in 'terms'"):
        s2s_ad.grad(annealed_energy)(x, temps)
    s2s_ad.check_grads(consumed_energy, (x, temps), modes=("rev", "fwd"))


# --- a lambda bound again after the names it reads changed --------------------------------


def two_stage_loss(x, params):
    W, b = params[0]
    temp = 1.0
    act = lambda u: np.tanh(u / temp)  # noqa: E731
    h = act(W @ x + b)
    temp = 0.5  # act looks temp up when called: 0.5 from here
    h = h + act(h)
    act = lambda u: np.log1p(np.exp(u * temp))  # noqa: E731
    return np.sum(act(h))


def rebound_in_a_loop(x):
    s = 0.0
    for k in range(2):
        act = lambda u: u * k  # noqa: E731, B023 (called in the same trip)
        s = s + np.sum(act(x))
        act = lambda u: u**2  # noqa: E731
        s = s + np.sum(act(x))
    return s


def test_a_lambda_bound_again_after_its_names_changed():
    # was refused ('lambda used as a value'); each call inlines the lambda bound last and
    # reads the names it closes over where it is called, as Python does
    params, x = _layers(), RS.randn(3)
    loss = functools.partial(two_stage_loss, params=params)
    s2s_ad.check_grads(loss, (x,), order=2, modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(two_stage_loss, x), (params,))


def test_a_lambda_bound_in_a_loop_differentiated_through_vjp():
    # the lambdas (bound twice in a loop) are called as values: their pullbacks read the
    # loop variable k when they ran, after the forward sweep (vjp's separate sweeps) had
    # left k at its last value: the first trip's gradient used k = 1 (1.2 for 0.2)
    x = RS.randn(3)
    s2s_ad.check_grads(rebound_in_a_loop, (x,), modes=("rev", "fwd"))
    _, pullback = s2s_ad.vjp(rebound_in_a_loop, x)
    np.testing.assert_allclose(pullback(1.0)[0], 1.0 + 4.0 * x, rtol=1e-12)


def scaled_in_a_loop(x):
    h = x * 1.0
    for k in range(2):
        act = lambda u: u * (k + 1.0)  # noqa: E731, B023 (called in the same trip)
        h = act(h)
        act = lambda u: np.sin(u)  # noqa: E731
        h = act(h) + h
    return np.sum(h**2)


def scaled_by_default(x):
    h = x * 1.0
    for k in range(2):
        act = lambda u, k=k: u * (k + 1.0)  # noqa: E731
        h = act(h)
        act = lambda u: np.sin(u)  # noqa: E731
        h = act(h) + h
    return np.sum(h**2)


def test_second_order_through_a_lambda_closing_over_a_loop_variable():
    # hvp, hessian and jacobian(grad, mode='fwd') were twice the true value: the pullback
    # of the first trip's lambda read k after the loop; now refused at the call, and the
    # default the hint names differentiates
    x = RS.randn(3)
    s2s_ad.check_grads(scaled_in_a_loop, (x,), modes=("rev", "fwd"))
    with pytest.raises(s2s_ad.TransformError, match="a lambda reading 'k'") as info:
        s2s_ad.hessian(scaled_in_a_loop)(x)
    assert "h = act(h)" in str(info.value)
    with pytest.raises(s2s_ad.TransformError, match="a lambda reading 'k'"):
        s2s_ad.hvp(scaled_in_a_loop)(x, x)
    grad = s2s_ad.grad(scaled_by_default)
    eps, v = 1e-6, RS.randn(3)
    want = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(s2s_ad.hvp(scaled_by_default)(x, v), want, rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.hessian(scaled_by_default)(x) @ v, want, rtol=1e-6)


def two_affine_stages(x, params):
    fn = make_affine(*params[0])
    h = np.tanh(fn(x))
    fn = make_affine(*params[1])
    return np.sum(np.tanh(fn(h)) ** 2)


def test_a_name_bound_twice_to_a_factory_closure():
    # was refused ("local function 'apply' used as a value"): each binding now inlines
    # its factory and the calls after it call what it made
    params, x = _layers(), RS.randn(3)
    s2s_ad.check_grads(
        functools.partial(two_affine_stages, params=params), (x,), order=2, modes=("rev", "fwd")
    )
    s2s_ad.check_grads(functools.partial(two_affine_stages, x), (params,))


# --- an array held twice, updated in place through one holder -----------------------------


def shared_features(x, params):
    W, b = params[0]
    h = np.tanh(W @ x + b)
    feats = [h, h]  # the same array twice
    feats[0] += x  # in place: feats[1] (and h) change too
    return np.sum(feats[1] * x)


def shared_in_a_dict(x):
    v = np.sin(x)
    cache = {"now": v, "before": v}
    cache["now"] *= 2.0
    return np.sum(cache["before"] ** 2)


def entry_updated_by_name(x):
    v = x * 2.0
    rows = [v]
    row = rows[0]
    row += 1.0  # changes v
    return np.sum(v * x)


def separate_entries(x):
    v = x * 2.0
    rows = [v, v * 1.0]
    rows[0] += x  # v changes, but nothing reads v or another holder of it afterwards
    return np.sum(rows[0] * rows[1])


def test_an_array_held_twice_and_updated_in_place():
    # the generated code rebound the entry: a wrong gradient (half, a quarter, ...)
    params, x = _layers(), RS.randn(3)
    cases = [(functools.partial(shared_features, params=params), "feats[0] += x")]
    cases += [(shared_in_a_dict, 'cache["now"] *= 2.0'), (entry_updated_by_name, "row += 1.0")]
    for loss, line in cases:
        with pytest.raises(s2s_ad.TransformError, match="in-place update of") as info:
            s2s_ad.grad(loss)(x)
        assert line in str(info.value)
    s2s_ad.check_grads(separate_entries, (x,), order=2, modes=("rev", "fwd"))
