"""One check for a user program, shared by the tests of language constructs: reverse and
forward mode against finite differences (and autograd running the same source), the
Hessian-vector product against differences of the gradient, the optimizer off."""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np

import s2s_ad
from s2s_ad import optimize
from s2s_ad.api import clear_cache
from s2s_ad.transforms import _jvp_wrt
from tests.fd import flatten, numerical_grad, unflatten


def close(got: Any, want: Any, tol: float = 1e-6) -> None:
    """Every entry of ``got`` within ``tol`` of ``want`` (any nesting of containers)."""
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=tol, atol=tol)


def autograd_twin(fun: Any) -> Any:
    """``fun`` with ``np`` read as ``autograd.numpy``: the same source, for autograd."""
    return types.FunctionType(
        fun.__code__, {**fun.__globals__, "np": anp}, fun.__name__, fun.__defaults__
    )


def check_in_first(fun: Any, x: Any, *rest: Any, oracle: bool = True, order: int = 2) -> None:
    """``fun(x, *rest)``: reverse and forward mode (and second order) against finite
    differences in ``x``, reverse and forward mode in the other arguments, and the
    gradient in ``x`` against autograd's running the same source."""
    names = list(inspect.signature(fun).parameters)
    s2s_ad.check_grads(
        functools.partial(fun, **dict(zip(names[1:], rest))),
        (x,),
        order=order,
        modes=("rev", "fwd"),
    )
    if rest:
        s2s_ad.check_grads(functools.partial(fun, x), tuple(rest), modes=("rev", "fwd"))
    if oracle:
        got = s2s_ad.grad(fun)(x, *rest)
        want = autograd.grad(autograd_twin(fun))(x, *rest)
        np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-7, atol=1e-9)


def check_program(
    fun: Any,
    args: tuple[Any, ...],
    wrt: int = 0,
    *,
    rs: np.random.RandomState,
    twin: Callable[[Any], Any] | None = autograd_twin,
    hvp: bool = True,
) -> Any:
    """Check ``fun``'s derivatives in argument ``wrt``; returns the gradient.

    Args:
        fun: The program.
        args: Its arguments.
        wrt: The argument differentiated.
        rs: Draws the tangent.
        twin: Makes the function autograd differentiates (``None``: no autograd check).
        hvp: Also check the Hessian-vector product.
    """
    got = s2s_ad.grad(fun, wrt)(*args)
    fd = numerical_grad(fun, args, wrt)
    close(got, fd, 1e-5)
    if twin is not None:
        close(got, autograd.grad(twin(fun), wrt)(*args), 1e-9)
    v = unflatten(args[wrt], rs.standard_normal(flatten(args[wrt]).size))
    value, dout = _jvp_wrt(fun, args, (wrt,), [v])
    close(value, fun(*args))
    close(dout, float(flatten(fd) @ flatten(v)), 1e-5)
    if hvp:
        g = s2s_ad.grad(fun, wrt)
        x0, d, h = flatten(args[wrt]), flatten(v), 1e-5

        def at(x: np.ndarray) -> np.ndarray:
            shifted = list(args)
            shifted[wrt] = unflatten(args[wrt], x)
            return flatten(g(*shifted))

        want = (at(x0 + h * d) - at(x0 - h * d)) / (2 * h)
        close(s2s_ad.hvp(fun, wrt)(*args, v), want, 1e-4)
    saved = optimize.ENABLED
    optimize.ENABLED = False
    clear_cache()
    try:
        close(s2s_ad.grad(fun, wrt)(*args), got, 1e-12)
    finally:
        optimize.ENABLED = saved
        clear_cache()
    return got
