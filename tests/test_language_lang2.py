"""Python constructs users write that were refused: a local ``def`` defined again, ``:=``
in conditions and comprehensions, ``del`` of a local, and ``[x] * n`` list repetition.

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
from random_users import RETURNS, SNIPPETS, check, program

import s2s_ad
from s2s_ad import TransformError
from tests.fd import flatten

RS = np.random.RandomState(11)


def _twin(fun: Any) -> Any:
    """``fun`` with ``np`` bound to autograd's NumPy: the same code for the second oracle."""
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__)


def _check(fun: Any, x: Any, *rest: Any, oracle: bool = True) -> None:
    """``fun(x, *rest)``: reverse and forward mode (and second order) against finite
    differences in ``x``, and the gradients in every argument against autograd's."""
    names = list(inspect.signature(fun).parameters)[1:]
    s2s_ad.check_grads(
        functools.partial(fun, **dict(zip(names, rest))), (x,), order=2, modes=("rev", "fwd")
    )
    if oracle:
        wrt = tuple(range(1 + len(rest)))
        got = s2s_ad.grad(fun, wrt)(x, *rest)
        want = [autograd.grad(_twin(fun), i)(x, *rest) for i in wrt]
        np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-7, atol=1e-9)


def _net() -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (RS.standard_normal((4, 3)) * 0.5, RS.standard_normal(4) * 0.1),
        (RS.standard_normal((2, 4)) * 0.5, RS.standard_normal(2) * 0.1),
    ]


# 1. a local function defined again: the calls after each definition use that one


def mlp_two_activations(x, params):
    def act(u):
        v = np.tanh(u)
        return v * u

    (W1, b1), (W2, b2) = params
    h = act(W1 @ x + b1)

    def act(u):
        z = np.sin(u) + 0.5 * u**2
        return z * 0.5

    out = act(W2 @ h + b2) + act(b2)
    return np.sum(out**2)


def test_local_function_defined_again():
    x = RS.standard_normal(3)
    _check(mlp_two_activations, x, _net())


def test_local_function_defined_again_with_other_defaults(tmp_path):
    # the random programs drew the same snippet twice: ``def local(u, k=0.3)`` twice
    snippets = [next(s for s in SNIPPETS if s.name == "inner_def")] * 2
    for seed in (1, 2):
        assert check(program(snippets, RETURNS[0]), snippets, seed, tmp_path) == "checked"


def branch_redefined(x):
    def act(u):
        v = np.tanh(u)
        return v * u

    if np.sum(x) > 0:

        def act(u):
            z = np.sin(u)
            return z * 0.5

    return np.sum(act(x))


def test_local_function_defined_again_in_a_branch_is_refused():
    with pytest.raises(TransformError, match=r"act defined twice.*test_language_lang2\.py:\d+"):
        s2s_ad.grad(branch_redefined)(np.ones(3))


# 2. assignment expressions: evaluated where Python evaluates them


def clipped_step(x, params):
    (W, b), _ = params
    g = np.tanh(W @ x + b) * 3.0
    if (n := np.linalg.norm(g)) > 1.0:
        g = g / n
    return np.sum(g * np.sin(x[:1])) + 0.1 * n


def shrink_until_small(x):
    r = x * 1.0
    k = 0
    while (m := np.sum(r * r)) > 0.5:
        k += 1
        if k % 2 == 0:
            r = r * 0.9
            continue
        r = r * 0.8 + 0.01 * m
    return np.sum(r) + m


def positive_parts(x):
    ys = [y for v in x if (y := np.sin(v)) > 0.0]
    return sum(ys) + y * 2.0  # y: the last value computed, kept or not


def second_operand(x):
    t = 0.5
    if np.sum(x) > 100.0 or (t := np.sum(x**2)) > 0.1:
        return x[0] * t
    return t


def test_walrus_in_an_if_test():
    _check(clipped_step, RS.standard_normal(3), _net())


def test_walrus_in_a_while_test_runs_every_trip():
    _check(shrink_until_small, np.array([0.9, -0.7, 0.8]))


def test_walrus_in_a_comprehension_binds_the_function_name():
    _check(positive_parts, np.array([0.3, 0.9, -0.2, 0.4, -1.1]))


def test_walrus_in_a_short_circuited_operand():
    _check(second_operand, np.array([0.3, 0.9, -0.2]))  # the operand runs
    _check(second_operand, np.array([0.1, 0.1, -0.1]))  # runs, branch not taken
    _check(second_operand, np.array([200.0, 0.1, -0.1]))  # skipped: t stays 0.5


def walrus_in_a_lambda(x):
    fn = lambda u: (v := u * 2.0) + v  # noqa: E731
    return np.sum(fn(x))


def walrus_twice(x):
    return np.sum((a := x * 2.0) + (a := x * 3.0) * a)


@pytest.mark.parametrize(
    "fun, what",
    [(walrus_in_a_lambda, "inside an inlined lambda"), (walrus_twice, "binding a twice")],
)
def test_walrus_refused_where_not_exact(fun, what):
    with pytest.raises(TransformError, match=rf"{what}.*test_language_lang2\.py:\d+"):
        s2s_ad.grad(fun)(np.ones(3))


# 3. del of a local: the end of the name's life


def mlp_freeing_activations(x, params):
    h = x
    s = 0.0
    for W, b in params:
        z = W @ h + b
        h = np.tanh(z)
        s = s + np.sum(z**2) * 0.01
        del z  # read by the backward sweep all the same
    out = h * 2.0
    del h
    h = out + 1.0  # bound again after the del
    return np.sum(h**2) + s


def test_del_of_a_local():
    _check(mlp_freeing_activations, RS.standard_normal(3), _net())


def reads_after_del(x):
    y = x * 2.0
    del y
    return np.sum(y)  # noqa: F821 (Python raises here)


def deletes_an_entry(x):
    ys = [x * 2.0, x]
    del ys[0]
    return np.sum(ys[0])


@pytest.mark.parametrize(
    "fun, what",
    [(reads_after_del, "'del y' with y read after it"), (deletes_an_entry, "'del' of a subscript")],
)
def test_del_refused_where_not_modeled(fun, what):
    with pytest.raises(TransformError, match=rf"{what}.*test_language_lang2\.py:\d+"):
        s2s_ad.grad(fun)(np.ones(3))


# 4. [x] * n: n references to the same value, the gradient summed over the copies


def tied_layers(x, W, b):
    layers = [(W, b)] * 3  # one layer applied three times (tied weights)
    h = x
    for Wk, bk in layers:
        h = np.tanh(Wk @ h + bk)
    return np.sum(h**2)


def repeated_both_ways(x, W, b):
    depth = 2
    hs = [W @ x] * depth + depth * [np.sin(x)]
    s = 0.0
    for i, h in enumerate(hs):
        s = s + np.sum(h * (i + 1.0)) + np.sum(b * h)
    scales = [0.5] * len(hs)
    return s * sum(scales)


def test_list_repetition_sums_the_copies_adjoints():
    W = RS.standard_normal((3, 3)) * 0.5
    b = RS.standard_normal(3) * 0.1
    _check(tied_layers, RS.standard_normal(3), W, b)
    _check(repeated_both_ways, RS.standard_normal(3), W, b)


def accumulates_into_a_copy(x):
    acc = [np.zeros(3)] * 2
    acc[0] += x  # Python adds into the array both entries hold
    return np.sum(acc[1] * x)


def test_list_repetition_updated_in_place_is_refused():
    with pytest.raises(TransformError, match=r"in-place update of an entry.*test_language_lang2"):
        s2s_ad.grad(accumulates_into_a_copy)(np.ones(3))


def literal_times_array(x):
    weights = [1.0, 2.0, 3.0] * x  # NumPy multiplies: not a repetition
    return np.sum(weights * np.sin(x))


def test_list_literal_times_an_array_still_multiplies():
    _check(literal_times_array, RS.standard_normal(3))
