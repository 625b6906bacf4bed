"""The NumPy and SciPy functions autograd and JAX differentiate, as an outside test would
call them.

autograd's systematic tests (``test_systematic.py``, ``test_numpy.py``, ``test_scipy.py``,
``test_linalg.py``) and JAX's (``lax_numpy_test.py``, ``linalg_test.py``,
``lax_scipy_special_functions_test.py``) list the functions and argument combinations
they differentiate; each is written in ``tests/sweep`` as a plain user function of its
float arguments. Every case is differentiated in reverse mode (``value_and_grad`` for a
scalar output, ``vjp`` with a random cotangent otherwise) and compared with central
finite differences and with autograd (the same function with ``np``/``sc``/``st``/``sla``
bound to autograd's modules) or, where autograd cannot run it, with JAX (bound to
``jax.numpy`` and ``jax.scipy.linalg``, in float64; SciPy's special functions and
distributions are left to the SymPy checks of ``tests/test_rules.py``, as JAX compiles
them for seconds); forward mode (``jvp``) is compared with
finite differences along a random direction.

A refusal (``TransformError``) is a strict xfail naming the function: the sweep's
record of what is still missing. A wrong number has no entry: it fails.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest
from sweep import (
    extra_funcs,
    jax_funcs,
    keyword_funcs,
    linalg_funcs,
    numpy_funcs,
    open_funcs,
    scipy_funcs,
    shape_funcs,
    stats_funcs,
)
from sweep.common import Case
from sweep.status import AUTOGRAD_SKIP, AUTOGRAD_WRONG, FWD_REFUSED, REFUSED
from trees import flat, is_float, random_like, unflat

import s2s_ad
from s2s_ad import TransformError

CASES: list[Case] = [
    *numpy_funcs.T.cases,
    *shape_funcs.T.cases,
    *linalg_funcs.T.cases,
    *scipy_funcs.T.cases,
    *extra_funcs.T.cases,
    *jax_funcs.T.cases,
    *stats_funcs.T.cases,
    *keyword_funcs.T.cases,
    *open_funcs.T.cases,
]

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6


def _marked(cases: list[Case], refused: dict[str, str]) -> list[Any]:
    out = []
    for case in cases:
        marks = []
        if case.name in refused:
            marks.append(pytest.mark.xfail(raises=TransformError, strict=True,
                                           reason=refused[case.name]))  # fmt: skip
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


def _floats(case: Case) -> list[int]:
    return [i for i, a in enumerate(case.args) if is_float(a)]


def _symmetric(value: Any) -> Any:
    return 0.5 * (value + np.swapaxes(value, -1, -2))


def _direction(case: Case, i: int, rng: np.random.Generator) -> Any:
    d = random_like(case.args[i], rng)
    return _symmetric(d) if i in case.symmetric else d


def _fd_along(case: Case, cot: Any, i: int, direction: Any) -> float:
    """``<cot, d f / d x_i . direction>`` by central differences."""
    x0, d = flat(case.args[i]), flat(direction)
    vals = []
    for sign in (1.0, -1.0):
        args = list(case.args)
        args[i] = unflat(x0 + sign * EPS * d, case.args[i])
        vals.append(float(flat(cot) @ flat(case.fun(*args))))
    return (vals[0] - vals[1]) / (2 * EPS)


def _fd_tangent(case: Case, i: int, direction: Any) -> np.ndarray:
    x0, d = flat(case.args[i]), flat(direction)
    outs = []
    for sign in (1.0, -1.0):
        args = list(case.args)
        args[i] = unflat(x0 + sign * EPS * d, case.args[i])
        outs.append(flat(case.fun(*args)))
    return (outs[0] - outs[1]) / (2 * EPS)


def _close(got: float | np.ndarray, want: float | np.ndarray, what: str) -> None:
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what)


def _reverse(case: Case) -> tuple[Any, list[Any]]:
    """The output and the gradients (one per float argument) for a random cotangent."""
    floats = _floats(case)
    out = case.fun(*case.args)
    if not isinstance(out, (tuple, list)) and np.ndim(out) == 0:
        value, grads = s2s_ad.value_and_grad(case.fun, tuple(floats))(*case.args)
        _close(value, out, f"{case.name}: value")
        return 1.0, list(grads)
    rng = np.random.default_rng(7)
    cot = random_like(out, rng)
    _, pullback = s2s_ad.vjp(case.fun, *case.args)
    grads = pullback(cot)
    return cot, [grads[i] for i in floats]


def _autograd_fun(case: Case) -> Any:
    """The case's function with its modules' names bound to autograd's."""
    anp = pytest.importorskip("autograd.numpy")
    import autograd.scipy.linalg as asla
    import autograd.scipy.special as asc
    import autograd.scipy.stats as ast

    names = {"np": anp, "sc": asc, "st": ast, "sla": asla}
    glob = dict(case.fun.__globals__)
    glob.update({k: v for k, v in names.items() if k in glob})
    f = case.fun
    return types.FunctionType(f.__code__, glob, f.__name__, f.__defaults__, f.__closure__)


@pytest.mark.parametrize("case", _marked(CASES, REFUSED))
def test_reverse_matches_finite_differences_and_autograd(case: Case) -> None:
    rng = np.random.default_rng(3)
    cot, grads = _reverse(case)
    for i, g in zip(_floats(case), grads):
        assert np.shape(g) == np.shape(case.args[i]), f"{case.name}: d/darg{i} shape"
        for _ in range(2):
            d = _direction(case, i, rng)
            _close(float(flat(g) @ flat(d)), _fd_along(case, cot, i, d), f"{case.name} d/darg{i}")
    if case.name in AUTOGRAD_SKIP:
        return
    wants = _oracle(case, cot)
    for i, g in zip(_floats(case), grads):
        want = wants[i]
        if i in case.symmetric:
            want, g = _symmetric(want), _symmetric(g)
        np.testing.assert_allclose(flat(g), flat(want), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{case.name} d/darg{i} against the oracle")  # fmt: skip


def _oracle(case: Case, cot: Any) -> dict[int, Any]:
    """The gradients by autograd, or by JAX where autograd cannot run the case (skipped
    when neither can)."""
    import autograd

    agf = _autograd_fun(case)
    reason = f"autograd is wrong: {AUTOGRAD_WRONG.get(case.name)}"
    try:
        if case.name not in AUTOGRAD_WRONG:
            return {i: autograd.make_vjp(agf, i)(*case.args)[0](cot) for i in _floats(case)}
    except Exception as exc:  # noqa: BLE001  (autograd cannot run it: try JAX)
        reason = f"autograd: {type(exc).__name__}: {exc}"
    if {"sc", "st"} & set(case.fun.__code__.co_names):
        # JAX compiles its special functions for seconds each; their partials are checked
        # against SymPy in tests/test_rules.py instead
        pytest.skip(f"{reason}; scipy.special/stats: checked against SymPy")
    try:
        return _jax_grads(case, cot)
    except Exception as exc:  # noqa: BLE001  (neither can: nothing to compare)
        pytest.skip(f"{reason}; jax: {type(exc).__name__}: {str(exc)[:200]}")


def _jax_grads(case: Case, cot: Any) -> dict[int, Any]:
    """The gradients by ``jax.vjp`` of the case's function with its modules' names bound
    to ``jax.numpy`` and ``jax.scipy`` (float64)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla
    import jax.scipy.special as jsc
    import jax.scipy.stats as jst

    names = {"np": jnp, "sc": jsc, "st": jst, "sla": jsla}
    glob = dict(case.fun.__globals__)
    glob.update({k: v for k, v in names.items() if k in glob})
    f = case.fun
    jf = types.FunctionType(f.__code__, glob, f.__name__, f.__defaults__, f.__closure__)
    floats = _floats(case)

    def of_floats(*xs: Any) -> Any:
        args = list(case.args)
        for i, x in zip(floats, xs):
            args[i] = x
        return jf(*args)

    # one compilation of the whole function (eager mode compiles every operation)
    out, pullback = jax.vjp(jax.jit(of_floats), *(jnp.asarray(case.args[i]) for i in floats))
    ct = jax.tree_util.tree_map(lambda c, o: jnp.asarray(c, dtype=o.dtype), cot, out)
    return {i: np.asarray(g) for i, g in zip(floats, pullback(ct))}


FWD_CASES = [c for c in CASES if c.fwd and c.name not in REFUSED]


@pytest.mark.parametrize("case", _marked(FWD_CASES, FWD_REFUSED))
def test_forward_matches_finite_differences(case: Case) -> None:
    rng = np.random.default_rng(5)
    floats = _floats(case)
    tangents = [_direction(case, i, rng) for i in range(len(case.args))]
    if len(floats) < len(case.args):
        pytest.skip("a non-float argument")
    _, tangent = s2s_ad.jvp(case.fun, case.args, tangents)
    want = sum(_fd_tangent(case, i, tangents[i]) for i in floats)
    _close(flat(tangent), want, f"{case.name}: jvp")
