"""Python constructs users write that were refused: a local function that returns early.

Each gradient is checked against central finite differences in reverse and forward mode
and to second order (``s2s_ad.check_grads``), and against autograd running the same code
where it can; what stays refused is a located ``TransformError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.user_checks import check_in_first as _check

RS = np.random.RandomState(41)


def _net() -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (RS.standard_normal((4, 3)) * 0.5, RS.standard_normal(4) * 0.1),
        (RS.standard_normal((2, 4)) * 0.5, RS.standard_normal(2) * 0.1),
    ]


# 1. a local function that returns before its last statement: each return assigns the
# call's result, what follows runs under a flag, as for the loss's own early returns


def gated_mlp(x, params):
    def act(h, scale=1.0):
        if np.sum(h) > 0.0:
            return np.tanh(h) * scale
        h = h * 0.5
        return np.sin(h) * scale

    h = x
    for W, b in params:
        h = act(W @ h + b, scale=1.5)
    return np.sum(h**2)


def first_large(x, params):
    W, b = params[0]

    def first_over(rows, level):
        for k, row in enumerate(rows):
            if np.sum(row) > level:
                return row * (k + 1.0)
        return rows[-1]

    H = np.tanh(np.outer(W @ x + b, x))
    return np.sum(first_over(H, 0.0) ** 2) + np.sum(first_over(H, 10.0))


def shrink_steps(x, params):
    W, b = params[0]

    def step(u, k):
        if k == 0:
            return u
        if np.max(np.abs(u)) > 1.0:
            u = u / np.max(np.abs(u))
            return u * 0.9
        return u + 0.1 * np.tanh(u)

    h = W @ x + b
    for k in range(3):
        h = step(h, k)
    return np.sum(h**2)


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0])
def test_a_local_activation_that_returns_early_in_an_mlp(scale):
    params = _net()
    for sign in (1.0, -1.0):
        _check(gated_mlp, sign * scale * RS.standard_normal(3), params)


@pytest.mark.parametrize("shift", [-2.0, 0.0, 2.0])
def test_a_local_function_returning_from_inside_its_loop(shift):
    params = _net()
    _check(first_large, RS.standard_normal(3) + shift, params)


@pytest.mark.parametrize("scale", [0.1, 5.0])
def test_a_local_function_with_several_returns_called_in_a_loop(scale):
    params = _net()
    _check(shrink_steps, scale * RS.standard_normal(3), params)


def test_a_local_generator_that_returns_early_stays_refused():
    def loss(x):
        def items(u):
            for v in u:
                if v > 1.0:
                    return
                yield v * 2.0

        return sum(items(x))

    with pytest.raises(s2s_ad.TransformError, match="generator that returns before"):
        s2s_ad.grad(loss)(np.array([0.5, 2.0]))


# 2. a def inside a local function (closures two levels deep): inlined with its enclosing
# function's body, defined again at each of that function's calls, renamed apart from the
# caller's functions of the same name


def act(u):
    """A module-level activation a local function's own ``act`` shadows."""
    return u * 3.0


def residual_mlp(x, params):
    def block(h, W, b):
        z = W @ h + b

        def act(u):
            gate = np.tanh(z)  # reads the enclosing block's z
            return u * gate

        def mix(u, c=0.5):
            return act(u) * c + np.mean(h) * (1.0 - c)

        return mix(z)

    h = block(x, *params[0])  # twice at the top of the body: each defines act again
    h = np.concatenate([h, h[:2]])
    h = block(h[:4], *params[1])
    return np.sum(h**2) + np.sum(act(h))


def recurrent_cell(x, params):
    W, b = params[0]

    def cell(h, k):
        pre = W @ h[:3] + b

        def squash(u):
            if np.sum(u) > 0.0:
                return np.tanh(u)

            def leak(v):
                w = v * 0.1
                return w + pre * 0.01

            return leak(u)

        return squash(pre)[:3] * (k + 1.0)

    h = x
    for k in range(3):
        h = cell(h, k)
    return np.sum(h**2)


def test_a_def_inside_a_local_function_of_a_residual_mlp():
    params = [
        (RS.standard_normal((4, 3)) * 0.5, RS.standard_normal(4) * 0.1),
        (RS.standard_normal((4, 4)) * 0.5, RS.standard_normal(4) * 0.1),
    ]
    _check(residual_mlp, RS.standard_normal(3), params)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_closures_three_levels_deep_in_a_recurrent_cell(sign):
    params = [(RS.standard_normal((4, 3)) * 0.5, RS.standard_normal(4) * 0.1)]
    _check(recurrent_cell, sign * (1.0 + RS.random_sample(3)), params)


def test_a_def_in_a_branch_of_a_local_function_stays_refused():
    def loss(x):
        def layer(h):
            if h[0] > 0.0:

                def act(u):
                    t = u * 2.0
                    return t
            else:

                def act(u):
                    t = u * 3.0
                    return t

            return act(h)

        return np.sum(layer(x))

    with pytest.raises(s2s_ad.TransformError, match="defined inside a branch") as info:
        s2s_ad.grad(loss)(np.ones(2))
    assert "test_language_lang4.py" in str(info.value)


def scaled_head(x, params):
    W, b = params[0]

    def act(u):
        t = np.tanh(u)
        return t * 2.0

    def head(u, c=2.0):  # one return: inlined as an expression, calling act's body
        return act(u) * c

    return np.sum(head(W @ x + b) ** 2)


def test_a_one_line_local_function_calling_a_longer_one():
    # was an internal NameError at run time: the one-return function is inlined as an
    # expression, and act, called from there, was left a call of an undefined name
    params = _net()
    _check(scaled_head, RS.standard_normal(3), params)


# 3. lists held by a local dict or list, grown with .append: the entry is read, joined
# with the item and stored back (a check refuses lists another entry or name also holds)


def logged_training(x, params):
    log = {"act": [], "norm": []}
    h = x
    for W, b in params:
        h = np.tanh(W @ h + b)
        log["act"].append(h[0])
        log["norm"].append(np.sum(h**2))
    for k in range(2):
        h = h * 0.9 + 0.1 * np.sin(h)
        log["act"].append(h[k])
    return sum(log["act"]) + 0.5 * sum(log["norm"]) + len(log["act"]) * 0.0


def row_features(x, params):
    W, b = params[0]
    rows = [[], []]
    z = W @ x + b
    for k in range(len(z)):
        rows[0].append(z[k] * 2.0)
        rows[k % 2].append(np.sin(z[k]))
    return sum(rows[0]) * sum(rows[1]) + np.sum(np.array(rows[1]) ** 2)


def test_a_dict_of_histories_appended_in_training_loops():
    _check(logged_training, RS.standard_normal(3), _net())


def test_a_list_of_rows_appended_by_index():
    _check(row_features, RS.standard_normal(3), _net())


def shared_rows(x):
    rows = [[]] * 2
    rows[0].append(x * 2.0)
    return sum(rows[1])


def read_out_history(x):
    log = {"a": [x]}
    first = log["a"]
    log["a"].append(x * 3.0)
    return sum(first)


def array_entry(x):
    log = {"a": np.zeros(2)}
    log["a"].append(x)
    return np.sum(log["a"])


@pytest.mark.parametrize(
    ("fun", "message"),
    [
        (shared_rows, "another entry or variable also holds"),
        (read_out_history, "another entry or variable also holds"),
        (array_entry, "that is a ndarray, not a list"),
    ],
)
def test_an_append_another_name_would_see_is_refused(fun, message):
    with pytest.raises(s2s_ad.TransformError, match=message) as info:
        s2s_ad.grad(fun)(0.7)
    assert "test_language_lang4.py" in str(info.value)


def test_rows_rebuilt_by_concatenation_in_a_loop_to_second_order():
    # rev-over-rev was an internal IndexError: the adjoint of the list entry, zeroed with
    # the length it had after the loop, was added to one of the length the sweep restored
    def loss(x):
        rows = [[], []]
        for k in range(3):
            rows[1] = rows[1] + [np.sin(x[k])]
        return sum(rows[1]) ** 2

    s2s_ad.check_grads(loss, (RS.standard_normal(3),), order=2, modes=("rev", "fwd"))


# 4. d.setdefault(k, v) on a local dict: the branch it stands for, then the read d[k]


def grouped_losses(x, params):
    W, b = params[0]
    z = np.tanh(W @ x + b)
    groups = {}
    totals = {}
    for k in range(len(z)):
        label = "pos" if k % 2 == 0 else "neg"
        groups.setdefault(label, []).append(z[k] ** 2)
        totals.setdefault(label, 0.0)
        totals[label] = totals[label] + z[k]
    scale = totals.setdefault("scale", 2.0 * z[0])  # missing: stored and returned
    first = totals.setdefault("pos", 10.0)  # present: the stored value, 10.0 unused
    return sum(groups["pos"]) * scale + sum(groups["neg"]) + first * totals["neg"]


def test_setdefault_groups_and_totals_of_a_layer():
    _check(grouped_losses, RS.standard_normal(3), _net())


def test_setdefault_with_a_computed_key_to_second_order():
    def loss(x):
        d = {}
        for k in range(4):
            d.setdefault(k % 2, x * 0.0)
            d[k % 2] = d[k % 2] + np.sin(x * (k + 1.0))
        return d[0] * d[1]

    _check(loss, 0.7)


# 5. a class built through cls(...) in a class method called in the loss (a layer factory):
# the method inlined at the call, cls read as the class's name there


class Dense:
    """A layer with a factory class method, as Keras-style code writes one."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    @classmethod
    def from_pair(cls, pair, scale=1.0):
        W, b = pair
        if scale == 1.0:
            return cls(W, b)
        return cls(W * scale, b * scale)

    @classmethod
    def stack(cls, params, scale):
        return [cls.from_pair(p, scale=scale) for p in params]

    def __call__(self, h):
        return np.tanh(self.W @ h + self.b)


class Residual(Dense):
    """A subclass: ``Residual.from_pair`` builds a Residual."""

    def __call__(self, h):
        return h[: len(self.b)] + np.tanh(self.W @ h + self.b)


def factory_mlp(x, params):
    first = Dense.from_pair(params[0])
    h = first(x)
    for layer in Dense.stack(params[1:], 0.5):
        h = layer(h)
    return np.sum(h**2)


def residual_net(x, params):
    block = Residual.from_pair(params[0], scale=2.0)
    head = Dense.from_pair(params[1])
    return np.sum(head(block(x)) ** 2)


def test_a_layer_factory_classmethod_in_an_mlp():
    _check(factory_mlp, RS.standard_normal(3), _net(), oracle=False)


def test_a_subclass_built_by_the_inherited_factory():
    params = [
        (RS.standard_normal((3, 3)) * 0.5, RS.standard_normal(3) * 0.1),
        (RS.standard_normal((2, 3)) * 0.5, RS.standard_normal(2) * 0.1),
    ]
    _check(residual_net, RS.standard_normal(3), params, oracle=False)
    h = np.array([0.3, -0.2, 0.5])
    block = Residual(2.0 * params[0][0], 2.0 * params[0][1])
    want = np.sum(Dense(*params[1])(block(h)) ** 2)
    assert np.isclose(residual_net(h, params), want)


class Unwritable:
    def __init__(self, W):
        self.W = W

    @classmethod
    def init(cls, W):
        with open(__file__) as f:
            f.read(1)
        return cls(W)


def test_a_refusal_in_an_inlined_classmethod_names_its_own_line():
    def loss(W):
        return np.sum(Unwritable.init(W).W)

    with pytest.raises(s2s_ad.TransformError, match="'with' statement") as info:
        s2s_ad.grad(loss)(np.ones(2))
    assert "with open(__file__) as f:" in str(info.value)
