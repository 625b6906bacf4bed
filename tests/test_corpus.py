"""Every corpus function (``tests/corpus``) at every point: ``s2s_ad.grad`` against central
finite differences, gradient structure/shape/dtype equal to the input's, arguments left
unmodified, and ``value_and_grad`` agreeing with a plain call.

Known failures of s2s_ad are listed in ``XFAIL`` (strict: a fix turns them into errors
so the entry gets removed). Keys are ``module.function`` (every point) or
``module.function[point]``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from corpus import Case, collect
from fd import flatten, numerical_grad, positions

import s2s_ad

CASES = collect()

# Known failures of s2s_ad in test_grad: label -> one-line diagnosis.
XFAIL: dict[str, str] = {}

# test_value_and_grad fails where the transform is refused or the primal value itself is wrong.
XFAIL_VALUE: dict[str, str] = {}


def _params(table: dict[str, str]) -> list[Any]:
    out = []
    for c in CASES:
        for point in c.points:
            ident = f"{c.label}[{point}]"
            reason = table.get(ident) or table.get(c.label)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(c, point, id=ident, marks=marks))
    return out


def assert_same_values(before: Any, after: Any, where: str = "args") -> None:
    """``after`` equals ``before`` exactly: same structure, types, dtypes and values."""
    assert type(after) is type(before), f"{where}: type changed"
    if isinstance(before, dict):
        assert list(after) == list(before), f"{where}: keys changed"
        for key in before:
            assert_same_values(before[key], after[key], f"{where}[{key!r}]")
    elif isinstance(before, (list, tuple)):
        assert len(after) == len(before), f"{where}: length changed"
        for i, (b, a) in enumerate(zip(before, after)):
            assert_same_values(b, a, f"{where}[{i}]")
    elif isinstance(before, (np.ndarray, np.generic)):
        assert after.dtype == before.dtype, f"{where}: dtype changed"
        np.testing.assert_array_equal(after, before, err_msg=f"{where} was modified")
    elif isinstance(before, (bool, int, float, complex, str)) or before is None:
        assert after == before, f"{where} was modified"
    elif hasattr(before, "__dict__"):
        assert_same_values(vars(before), vars(after), f"{where}.__dict__")


def assert_like_input(g: Any, x: Any, where: str) -> None:
    """The gradient ``g`` has the structure, shape and float dtype of the input ``x``."""
    if isinstance(x, dict):
        assert isinstance(g, dict) and set(g) == set(x), f"{where}: expected dict keys {list(x)}"
        for key in x:
            assert_like_input(g[key], x[key], f"{where}[{key!r}]")
    elif isinstance(x, (list, tuple)):
        assert type(g) is type(x), f"{where}: expected {type(x).__name__}, got {type(g).__name__}"
        assert len(g) == len(x), f"{where}: expected length {len(x)}"
        for i, (gi, xi) in enumerate(zip(g, x)):
            assert_like_input(gi, xi, f"{where}[{i}]")
    elif isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray), f"{where}: expected ndarray, got {type(g).__name__}"
        assert g.shape == x.shape, f"{where}: shape {g.shape} != input shape {x.shape}"
        assert g.dtype == x.dtype, f"{where}: dtype {g.dtype} != input dtype {x.dtype}"
    elif isinstance(x, np.generic):
        assert np.shape(g) == (), f"{where}: expected a scalar, got shape {np.shape(g)}"
        assert np.asarray(g).dtype == x.dtype, f"{where}: dtype {np.asarray(g).dtype}"
    elif isinstance(x, float):
        assert np.shape(g) == (), f"{where}: expected a scalar, got shape {np.shape(g)}"
        assert np.asarray(g).dtype == np.float64, f"{where}: dtype {np.asarray(g).dtype}"
    else:
        raise AssertionError(f"{where}: corpus error, cannot differentiate {type(x).__name__}")


def aligned(g: Any, x: Any) -> Any:
    """``g`` with its dicts' keys put in the order of ``x``'s (for :func:`flatten`)."""
    if isinstance(x, dict) and isinstance(g, dict):
        return {k: aligned(g[k], x[k]) for k in x}
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
        return [aligned(gi, xi) for gi, xi in zip(g, x)]
    return g


def reference_grad(c: Case, args: tuple[Any, ...]) -> Any:
    if c.expected is not None:
        return c.expected(*args)
    return numerical_grad(c.fun, args, c.wrt)


@pytest.mark.parametrize(("c", "point"), _params(XFAIL))
def test_grad(c: Case, point: str) -> None:
    """grad agrees with the reference, has the inputs' structure/shape/dtype, mutates nothing."""
    args = c.args(point)
    pristine = copy.deepcopy(args)
    want = reference_grad(c, c.args(point))
    where, single = positions(c.fun, c.wrt)

    got = s2s_ad.grad(c.fun, c.wrt)(*args)
    assert_same_values(pristine, args)

    grads = (got,) if single else got
    assert isinstance(grads, tuple) and len(grads) == len(where), "one gradient per wrt entry"
    for k, pos in enumerate(where):
        assert_like_input(grads[k], pristine[pos], f"grad[{k}] (argument {pos})")
    np.testing.assert_allclose(
        flatten(aligned(got, want)),
        flatten(want),
        rtol=c.rtol,
        atol=c.atol,
        err_msg="gradient != reference",
    )


@pytest.mark.parametrize(("c", "point"), _params(XFAIL_VALUE))
def test_value_and_grad(c: Case, point: str) -> None:
    """value_and_grad's value is the plain call's; its gradient is grad's; args unmodified."""
    args = c.args(point)
    pristine = copy.deepcopy(args)
    plain = c.fun(*c.args(point))
    value, got = s2s_ad.value_and_grad(c.fun, c.wrt)(*args)
    assert_same_values(pristine, args)
    np.testing.assert_allclose(np.asarray(value), np.asarray(plain), rtol=1e-12, atol=0)
    only_grad = s2s_ad.grad(c.fun, c.wrt)(*c.args(point))
    np.testing.assert_allclose(
        flatten(aligned(got, only_grad)), flatten(only_grad), rtol=1e-12, atol=0
    )


SEED = next(c for c in CASES if c.label == "controlflow.seed_example")


@pytest.mark.parametrize("point", list(SEED.points))
def test_seed_example_gradient_is_value_over_a(point: str) -> None:
    # The function is a * 2**k (or 100 * a * 2**k): piecewise linear, so grad == f(a) / a.
    (a,) = SEED.args(point)
    g = s2s_ad.grad(SEED.fun)(a)
    np.testing.assert_allclose(g, SEED.fun(a) / a, rtol=1e-12)


def test_xfail_entries_name_existing_cases() -> None:
    known = {c.label for c in CASES} | {f"{c.label}[{p}]" for c in CASES for p in c.points}
    assert not set(XFAIL) - known
    assert not set(XFAIL_VALUE) - known


def test_corpus_is_large_enough() -> None:
    assert len({c.fun for c in CASES}) >= 120
    assert len({c.label for c in CASES}) == len(CASES), "case labels must be unique"
