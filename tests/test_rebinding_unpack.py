"""A tuple unpacked into names that include its own (``scale, state = state``): the
sweeps keep the tuple apart from the name rebound to one of its entries. Before, the
backward sweep packed the tuple's gradient with the shape of the rebound entry (an
internal error from NumPy in the generated code)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.testing import check_grads


def scaled_mlp_loss(state, x):
    scale, state = state
    W, b = state
    h = np.tanh(x @ W + b)
    return scale * np.sum(h**2)


def two_halves(p, q):
    a, p = p
    return np.sum(np.sin(a) * p * q)


def nested_rebinding(params, x):
    (W1, b1), params = params
    W2, b2 = params
    return np.sum(np.tanh(x @ W1 + b1) @ W2 + b2)


def _rng() -> np.random.Generator:
    return np.random.default_rng(3)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_state_tuple_rebound_to_its_tail(mode: str) -> None:
    rng = _rng()
    state = (1.5, (rng.normal(size=(3, 4)), rng.normal(size=4)))
    x = rng.normal(size=(5, 3))
    check_grads(scaled_mlp_loss, (state, x), modes=(mode,))


def test_entries_of_equal_shape_keep_their_own_gradients() -> None:
    rng = _rng()
    a, p, q = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    ga, gp = s2s_ad.grad(two_halves)((a, p), q)
    np.testing.assert_allclose(ga, np.cos(a) * p * q)
    np.testing.assert_allclose(gp, np.sin(a) * q)
    check_grads(two_halves, ((a, p), q), modes=("rev", "fwd"), order=2)


def test_layers_unpacked_from_the_list_they_replace() -> None:
    rng = _rng()
    params = (
        (rng.normal(size=(3, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 2)), rng.normal(size=2)),
    )
    x = rng.normal(size=(5, 3))
    check_grads(nested_rebinding, (params, x), modes=("rev", "fwd"))
