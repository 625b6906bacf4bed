"""``sorted(...)`` of differentiated values and ``min``/``max`` with ``key=``: a trimmed
(robust) loss over an MLP's per-sample losses, the best of several candidate layers, a
sort of (loss, params) pairs, ranks with ``reverse=True``.

The order is computed in the forward sweep and carries no gradient; the entries it picks
carry theirs back (``s2s_ad/ordering.py``). Each program is checked against central finite
differences in reverse and forward mode, its Hessian-vector product, the optimizer off,
and autograd running the same source.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import s2s_ad
from tests.user_checks import check_program
from tests.user_checks import close as _close

RS = np.random.RandomState(23)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0, hvp: bool = True) -> Any:
    return check_program(fun, args, wrt, rs=RS, hvp=hvp)


def _mlp(sizes: list[int], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rs = np.random.RandomState(seed)
    return [(0.5 * rs.randn(m, n), 0.1 * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]


# --- a trimmed loss: the k smallest per-sample losses ---------------------------------------


def predict(params, x):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return h @ W + b


def trimmed_loss(params, X, y, keep=4):
    """Least-trimmed squares of an MLP: the ``keep`` smallest squared errors."""
    losses = [np.sum((predict(params, X[i]) - y[i]) ** 2) for i in range(X.shape[0])]
    ranked = sorted(losses)
    return sum(ranked[:keep]) / keep


def test_trimmed_loss_of_an_mlp():
    X, y = RS.randn(6, 3), RS.randn(6, 2)
    y[1] += 5.0  # an outlier the trimmed loss leaves out
    got = _check(trimmed_loss, (_mlp([3, 4, 2], 1), X, y))
    assert len(got) == 2 and got[0][0].shape == (3, 4)


# --- the best of several candidates: min/max with a key --------------------------------------


def best_layer_loss(params, x, target):
    """The candidate layer whose output is closest to the target (min with a key over
    (W, b) pairs), plus the largest activation (max with a key over a list)."""
    outputs = [np.tanh(x @ W + b) for W, b in params]
    W, b = min(params, key=lambda p: np.sum((np.tanh(x @ p[0] + p[1]) - target) ** 2))
    loudest = max(outputs, key=lambda o: np.max(np.abs(o)))
    return np.sum((x @ W + b - target) ** 2) + np.sum(loudest**2)


def test_min_and_max_with_a_key_over_layers():
    params = _mlp([3, 2], 4) + _mlp([3, 2], 5) + _mlp([3, 2], 6)
    x, target = RS.randn(3), RS.randn(2)
    got = _check(best_layer_loss, (params, x, target))
    # the layers neither picked by the min nor the max get no gradient
    picked = [k for k, (gW, gb) in enumerate(got) if np.any(gW) or np.any(gb)]
    assert 1 <= len(picked) <= 2


def ranked_scores(w, X):
    """``sorted(..., key=, reverse=True)`` of (score, index) pairs, weighted by rank, and
    ``min(a, b, c, key=abs)`` of three differentiated scalars."""
    scores = [(np.dot(X[i], w), i) for i in range(X.shape[0])]
    ranked = sorted(scores, key=lambda p: p[0], reverse=True)
    total = 0.0
    for rank, (score, _) in enumerate(ranked):
        total = total + score / (rank + 1.0)
    smallest = min(w[0] * w[1], w[2] - 1.0, np.sin(w[1]), key=abs)
    return total + smallest**2


def test_sorted_pairs_with_reverse_and_min_of_several_arguments():
    _check(ranked_scores, (RS.randn(3), RS.randn(5, 3)))


def order_statistics(x):
    """Sorting a 1-d array with ``sorted`` (a list of its entries comes back)."""
    s = sorted(x)
    median = s[len(s) // 2]
    spread = s[-1] - s[0]
    return median * spread + np.sum(np.array(s) * np.arange(len(s)))


def test_sorted_of_an_array():
    _check(order_statistics, (RS.randn(5),))


def first_of_ties(x):
    """Equal keys: ``min`` returns the first, ``sorted`` keeps the order (stable)."""
    pairs = [(0, x[0]), (1, x[1]), (0, x[2])]
    lo = min(pairs, key=lambda p: p[0])
    ordered = sorted(pairs, key=lambda p: p[0])
    return lo[1] * 3.0 + ordered[1][1] * 2.0 + ordered[2][1]


def test_ties_follow_python():
    x = np.array([0.5, -1.0, 2.0])
    got = s2s_ad.grad(first_of_ties)(x)
    _close(got, [3.0, 1.0, 2.0], 0.0)
    _check(first_of_ties, (x,), hvp=False)
