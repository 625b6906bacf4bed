"""Dict comprehensions over differentiated values: lowered to a loop storing into a fresh
dict, like list comprehensions (a parameter dict rebuilt, scaled or filtered by key);
``dict(zip(keys, values))`` and ``dict(d.items())`` are such comprehensions."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.testing import check_grads

MODES = ("rev", "fwd")
NAMES = ["w1", "w2", "b"]
rng = np.random.default_rng(7)


def named_mlp(arrays, x):
    p = {k: v for k, v in zip(NAMES, arrays)}
    h = np.tanh(x @ p["w1"] + p["b"])
    return np.sum((h @ p["w2"]) ** 2)


def filtered_penalty(params, lam):
    k = 1.0  # the comprehension's own k is another variable
    norms = {k: np.sum(v**2) for k, v in params.items() if k != "b"}
    return lam * sum(norms.values()) + k * params["b"][0]


def nested_products(xs):
    d = {i: {j: xs[i] * xs[j] for j in range(3)} for i in range(3)}
    return sum(d[i][j] for i in range(3) for j in range(3) if i <= j)


def scaled_sgd_step(params, grads, lr):
    new = {name: params[name] - lr * g for name, g in grads.items()}
    return sum(np.sum(np.sin(v)) for v in new.values())


def zipped_params(arrays, x):
    p = dict(zip(NAMES, arrays))
    q = dict(p.items())
    return np.sum(np.tanh(x @ q["w1"] + p["b"]) @ q["w2"])


CASES = {
    "named_mlp": (
        named_mlp,
        (
            [rng.normal(size=(3, 3)), rng.normal(size=(3, 2)), rng.normal(size=3)],
            rng.normal(size=(4, 3)),
        ),
    ),
    "filtered_penalty": (
        filtered_penalty,
        ({"W": rng.normal(size=(2, 2)), "b": rng.normal(size=2)}, 0.3),
    ),
    "zipped_params": (
        zipped_params,
        (
            [rng.normal(size=(3, 3)), rng.normal(size=(3, 2)), rng.normal(size=3)],
            rng.normal(size=(4, 3)),
        ),
    ),
    "nested_products": (nested_products, (rng.normal(size=3),)),
    "scaled_sgd_step": (
        scaled_sgd_step,
        (
            {"W": rng.normal(size=(2, 3)), "b": rng.normal(size=3)},
            {"W": rng.normal(size=(2, 3)), "b": rng.normal(size=3)},
            0.1,
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dict_comprehension_gradients(name: str) -> None:
    fun, args = CASES[name]
    check_grads(fun, args, modes=MODES)


def test_comprehension_variable_does_not_leak() -> None:
    params = {"W": np.ones((2, 2)), "b": np.array([2.0, 5.0])}
    value, (g_params, g_lam) = s2s_ad.value_and_grad(filtered_penalty, (0, 1))(params, 0.5)
    assert value == pytest.approx(0.5 * 4.0 + 2.0)
    np.testing.assert_allclose(g_params["b"], [1.0, 0.0])
    np.testing.assert_allclose(g_params["W"], 2 * 0.5 * np.ones((2, 2)))
    assert g_lam == pytest.approx(4.0)


def test_dict_comprehension_source_reads_as_a_loop() -> None:
    line = named_mlp.__code__.co_firstlineno + 1
    text = s2s_ad.source(s2s_ad.grad(named_mlp))
    assert f"# L{line}: p = {{k: v for k, v in zip(NAMES, arrays)}}" in text
    assert "comprehension" not in text
