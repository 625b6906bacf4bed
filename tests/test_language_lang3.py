"""Python constructs users write that were refused or wrong: a function factory passed to
a function that calls it, a dict entry rewritten in code differentiated twice,
``check_grads(order=2)`` over a list of ``(W, b)`` pairs, ``a + b`` of lists returned by
calls or sliced from a parameter, ``nonlocal`` in a local function, ``del`` in loops and
``del d[key]`` of a local dict.

Each gradient is checked against central finite differences in reverse and forward mode
(``s2s_ad.check_grads``), and against autograd running the same code where it can; what
stays refused is a located ``TransformError``.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from tests.fd import flatten

RS = np.random.RandomState(13)


def _twin(fun: Any) -> Any:
    """``fun`` with ``np`` bound to autograd's NumPy: the same code for the second oracle."""
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__)


def _check(fun: Any, x: Any, *rest: Any, oracle: bool = True, order: int = 2) -> None:
    """``fun(x, *rest)``: reverse and forward mode (and second order) against finite
    differences in ``x``, and the gradients in every float argument against autograd's."""
    names = list(inspect.signature(fun).parameters)[1:]
    s2s_ad.check_grads(
        functools.partial(fun, **dict(zip(names, rest))), (x,), order=order, modes=("rev", "fwd")
    )
    if oracle:
        got = s2s_ad.grad(fun)(x, *rest)
        want = autograd.grad(_twin(fun))(x, *rest)
        np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-7, atol=1e-9)


def _net() -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (RS.standard_normal((4, 3)) * 0.5, RS.standard_normal(4) * 0.1),
        (RS.standard_normal((2, 4)) * 0.5, RS.standard_normal(2) * 0.1),
    ]


# 1a. a function factory passed to a function of the module, which calls it: the callee
# is inlined at the call, the factory call is the one the normalizer inlines


def damped_step(a, damping=0.5):
    return lambda x: (1.0 - damping) * x + damping * 0.5 * (x + a / x)


def tanh_layer(W, b):
    def layer(h):
        return np.tanh(W @ h + b)

    return layer


def iterate(make_step, a, x0, trips=30):
    step = make_step(a)
    x = x0
    for _ in range(trips):
        x = step(x)
    return x


def run_until_settled(make_step, a, x0, tol=1e-12):
    step = make_step(a)
    x, prev = step(x0), x0
    while np.abs(x - prev) > tol:
        x, prev = step(x), x
    return x


def sqrt_two_ways(a):
    return iterate(damped_step, a, 3.0) + run_until_settled(damped_step, a * a, 2.0)


def test_factory_passed_to_a_solver():
    _check(sqrt_two_ways, 2.3)


def apply_layers(make_layer, params, x):
    h = x
    for W, b in params:
        layer = make_layer(W, b)
        h = layer(h)
    return h


def mlp_through_a_factory(x, params):
    return np.sum(apply_layers(tanh_layer, params, x) ** 2)


def test_layer_factory_passed_to_a_loop_over_params():
    x = RS.standard_normal(3)
    _check(mlp_through_a_factory, x, _net())
    got = s2s_ad.grad(mlp_through_a_factory, 1)(x, _net())
    assert isinstance(got, list) and isinstance(got[0], tuple)


def damped_twice(a):
    damping = 0.25  # shadows the factory's parameter name only: no effect
    return iterate(damped_step, a, 3.0) * damping


def test_factory_passed_with_caller_names_alike():
    _check(damped_twice, 1.7)


# 1b. a dict entry rewritten, differentiated twice: the backward sweep's undo of the
# write (``_ad.restore_item``) is lowered to the keyed write it is


def mlp_with_activation_cache(x, params):
    cache = {}
    h = x
    for k, (W, b) in enumerate(params):
        cache["pre"] = W @ h + b  # a new key on the first trip, rewritten after
        cache["pre"] = cache["pre"] * 0.9 + 0.1 * np.sin(cache["pre"])
        cache[k] = np.tanh(cache["pre"])  # a new key on every trip
        h = cache[k]
    return np.sum(h**2) + 0.5 * np.sum(cache[0])


def test_dict_entry_rewritten_differentiated_twice():
    x = RS.standard_normal(3)
    _check(mlp_with_activation_cache, x, _net())


def test_dict_entry_rewritten_grad_of_grad_matches_autograd():
    x = RS.standard_normal(3)
    params = _net()

    def inner(x, params):
        return np.sum(s2s_ad.grad(mlp_with_activation_cache)(x, params) ** 2)

    got = s2s_ad.grad(inner)(x, params)
    twin = _twin(mlp_with_activation_cache)
    want = autograd.grad(lambda x: anp.sum(autograd.grad(twin)(x, params) ** 2))(x)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)


def test_dict_entry_rewritten_third_order():
    def scalar(a, d):
        memo = {"a": a}
        memo["a"] = memo["a"] ** 2 + d["shift"]
        memo["b"] = np.sin(memo["a"])
        return memo["b"] * a

    s2s_ad.check_grads(functools.partial(scalar, d={"shift": 0.3}), (0.7,), order=3)


# 4. check_grads(order=2) differentiates a gradient with the structure [(W, b), ...]


def mlp_loss(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W.T + b)
    W, b = params[-1]
    return np.mean((h @ W.T + b - y) ** 2)


def test_check_grads_second_order_of_a_parameter_list():
    x, y = RS.standard_normal((5, 3)), RS.standard_normal((5, 2))
    s2s_ad.check_grads(
        functools.partial(mlp_loss, x=x, y=y), (_net(),), order=2, modes=("rev", "fwd")
    )


def iterate_scaled(make_step, a, x0):
    step = make_step(a)
    return step(x0) * scale


scale = 2.0


def caller_shadowing_a_global(a):
    scale = 3.0  # iterate_scaled reads the global ``scale``, not this one
    return iterate_scaled(damped_step, a, 1.5) + scale


def test_factory_passed_where_inlining_would_capture_a_name_is_refused():
    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(caller_shadowing_a_global)(1.2)
    assert "test_language_lang3.py" in str(info.value)
    assert "lambda" in str(info.value)


# 3. ``a + b`` of locals bound by calls of the user's functions, or of slices of an
# unannotated parameter: ``_ad.concat`` joins lists and adds arrays when the code runs


def encoder_layers(params):
    return params[:1]


def decoder_layers(params):
    return [(W * 1.0, b) for W, b in params[1:]]


def autoencoder_loss(x, params):
    enc = encoder_layers(params)
    dec = decoder_layers(params)
    h = x
    for W, b in enc + dec:
        h = np.tanh(W @ h + b)
    return np.sum(h**2)


def test_lists_returned_by_user_functions_concatenated():
    x = RS.standard_normal(3)
    _check(autoencoder_loss, x, _net())
    got = s2s_ad.grad(autoencoder_loss, 1)(x, _net())
    assert isinstance(got, list) and len(got) == 2


def sliced_layers(x, net):
    h = x
    for W, b in net[:1] + net[1:]:
        h = np.tanh(W @ h + b)
    return np.sum(h**2)


def test_slices_of_an_unannotated_parameter_list_concatenated():
    x = RS.standard_normal(3)
    _check(sliced_layers, x, _net())


def features(x):
    return np.tanh(x) * 2.0


def skip(x):
    return x**2


def residual_block(x):
    a = features(x)
    b = skip(x)
    return np.sum(np.sin(a + b))  # arrays: the same run-time join adds


def test_arrays_returned_by_user_functions_added():
    _check(residual_block, RS.standard_normal(4))


class Stack:
    def __init__(self, params):
        self.params = params

    def encoder_layers(self):
        return self.params[:1]

    def decoder_layers(self):
        return self.params[1:]

    def __call__(self, x):
        enc = self.encoder_layers()
        dec = self.decoder_layers()
        h = x
        for W, b in enc + dec:
            h = np.tanh(W @ h + b)
        return h


def stack_loss(x, model):
    return np.sum(model(x) ** 2)


def test_lists_returned_by_methods_concatenated():
    x, model = RS.standard_normal(3), Stack(_net())
    s2s_ad.check_grads(
        functools.partial(stack_loss, model=model), (x,), order=2, modes=("rev", "fwd")
    )
    got = s2s_ad.grad(stack_loss)(x, model)
    want = autograd.grad(_twin(stack_loss))(x, model)
    np.testing.assert_allclose(got, want, rtol=1e-7)


# 2. ``nonlocal`` in a local function: inlined where called, its nonlocal names are the
# enclosing function's own


def rnn_with_a_step_closure(x, params):
    W, U, b = params
    h = np.zeros(3)
    total = 0.0

    def step(xt):
        nonlocal h, total
        h = np.tanh(W @ h + U @ xt + b)
        total = total + np.sum(h**2)

    for xt in x:
        step(xt)
    return total + np.sum(h)


def test_nonlocal_state_of_a_step_function():
    x = RS.standard_normal((4, 2))
    params = (
        RS.standard_normal((3, 3)) * 0.4,
        RS.standard_normal((3, 2)) * 0.5,
        RS.standard_normal(3) * 0.1,
    )
    _check(rnn_with_a_step_closure, x, params)


def power_by_repeated_steps(a, w):
    h = a
    calls = 0

    def grow():
        nonlocal h, calls
        h = h * w
        calls += 1

    grow()
    grow()
    if calls == 2:
        grow()
    return h + 0.1 * calls


def test_nonlocal_counter_and_accumulator():
    _check(power_by_repeated_steps, 1.3, 0.7)
    s2s_ad.check_grads(power_by_repeated_steps, (1.3, 0.7), order=2, modes=("rev", "fwd"))


def make_accumulator(scale):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + scale * v
        return total

    return add


def sum_through_an_accumulator(x):
    acc = make_accumulator(0.5)
    acc(x)
    acc(np.sin(x))
    return acc(x * x)


def test_nonlocal_in_a_closure_returned_by_a_factory():
    _check(sum_through_an_accumulator, 0.8)


def nonlocal_of_an_outer_scope_to_the_function():
    s = 1.0

    def f(x):
        nonlocal s
        s = s * x
        return s

    return f


def test_nonlocal_of_the_differentiated_function_stays_refused():
    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(nonlocal_of_an_outer_scope_to_the_function())(2.0)
    assert "nonlocal" in str(info.value) and "test_language_lang3.py" in str(info.value)


# 2. ``del`` in a loop: refused when the next trip reads the name first (Python raises)


def del_read_next_trip(x):
    t = x * 2.0
    s = 0.0
    for _ in range(3):
        s = s + t
        del t
    return s


def del_then_rebound_next_trip(x):
    s = 0.0
    for k in range(3):
        t = x * (k + 1.0)
        s = s + np.sin(t)
        del t
    return s


def del_in_while_condition(x):
    t = x
    s = 0.0
    while t < 5.0:
        s = s + t
        del t
    return s


def test_del_in_a_loop_read_on_the_next_trip_is_refused():
    with pytest.raises(NameError):
        del_read_next_trip(1.0)  # what Python does
    for fun in (del_read_next_trip, del_in_while_condition):
        with pytest.raises(s2s_ad.TransformError) as info:
            s2s_ad.grad(fun)(1.0)
        assert "del t" in str(info.value) and "test_language_lang3.py" in str(info.value)


def test_del_in_a_loop_bound_again_first():
    _check(del_then_rebound_next_trip, 0.4)


# 2. ``del d[key]`` of a local dict: the entry is removed, put back in the backward sweep


def mlp_freeing_activations(x, params):
    acts = {"in": x}
    h = x
    for k, (W, b) in enumerate(params):
        acts[k] = np.tanh(W @ h + b)
        h = acts[k]
        if k > 0:
            del acts[k - 1]  # only the last two layers' activations are kept
    del acts["in"]
    total = 0.0
    for _key, a in acts.items():
        total = total + np.sum(a**2) * (len(acts) + 1.0)
    return total


def test_del_of_a_local_dict_entry():
    x = RS.standard_normal(3)
    _check(mlp_freeing_activations, x, _net())


def test_del_of_a_local_dict_entry_grad_of_grad_matches_autograd():
    x, params = RS.standard_normal(3), _net()

    def inner(x, params):
        return np.sum(s2s_ad.grad(mlp_freeing_activations)(x, params) * x)

    got = s2s_ad.grad(inner)(x, params)
    twin = _twin(mlp_freeing_activations)
    want = autograd.grad(lambda x: anp.sum(autograd.grad(twin)(x, params) * x))(x)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)


def del_list_entry(x):
    ys = [x * 2.0, x]
    del ys[0]
    return ys[0]


def del_parameter_entry(x, d):
    del d["shift"]
    return x * 2.0


def test_del_of_a_list_or_parameter_entry_stays_refused():
    for fun, args in ((del_list_entry, (1.0,)), (del_parameter_entry, (1.0, {"shift": 1.0}))):
        with pytest.raises(s2s_ad.TransformError) as info:
            s2s_ad.grad(fun)(*args)
        assert "'del' of a subscript" in str(info.value)
        assert "test_language_lang3.py" in str(info.value)
