"""``check_grads``: generated derivatives against central finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def _flat(x: Any) -> np.ndarray:
    if isinstance(x, dict):
        return np.concatenate([_flat(x[k]) for k in sorted(x)]) if x else np.zeros(0)
    if isinstance(x, (tuple, list)):
        return np.concatenate([_flat(v) for v in x]) if x else np.zeros(0)
    return np.atleast_1d(np.asarray(x, dtype=float)).ravel()


def _unflat(flat: np.ndarray, like: Any) -> tuple[Any, int]:
    if isinstance(like, dict):
        out, pos = {}, 0
        for k in sorted(like):
            out[k], n = _unflat(flat[pos:], like[k])
            pos += n
        return out, pos
    if isinstance(like, (tuple, list)):
        parts, pos = [], 0
        for v in like:
            part, n = _unflat(flat[pos:], v)
            parts.append(part)
            pos += n
        return type(like)(parts), pos
    arr = np.asarray(like)
    n = max(arr.size, 1)
    if isinstance(like, np.ndarray):
        return flat[:n].reshape(arr.shape).astype(like.dtype), n
    return float(flat[0]), 1


def numerical_grad(
    fun: Callable[..., Any], args: Sequence[Any], argnum: int, eps: float = 1e-6
) -> np.ndarray:
    """Central finite-difference gradient of a scalar ``fun`` w.r.t. ``args[argnum]`` (flat)."""
    x0 = _flat(args[argnum])
    out = np.zeros_like(x0)
    for i in range(x0.size):
        step = eps * max(1.0, abs(x0[i]))
        vals = []
        for sign in (1.0, -1.0):
            x = x0.copy()
            x[i] += sign * step
            call = list(args)
            call[argnum] = _unflat(x, args[argnum])[0]
            vals.append(float(np.sum(fun(*call))))
        out[i] = (vals[0] - vals[1]) / (2 * step)
    return out


def check_grads(
    fun: Callable[..., Any],
    args: Sequence[Any],
    order: int = 1,
    *,
    modes: Sequence[str] = ("rev",),
    atol: float = 1e-6,
    rtol: float = 1e-5,
    eps: float = 1e-6,
) -> None:
    """Compare ``grad`` of ``fun`` (summed over its output) with central finite differences.

    Args:
        fun: The function; a non-scalar output is summed.
        args: Arguments; every float argument is checked.
        order: Derivative order (1 only in this release; higher orders need ``grad(grad)``).
        modes: ``('rev',)``; forward mode arrives with ``jvp``.
        atol: Absolute tolerance.
        rtol: Relative tolerance.
        eps: Finite-difference step (relative to the entry's magnitude).

    Raises:
        AssertionError: Naming the argument and the worst entry when a check fails.
        NotImplementedError: For ``order > 1`` or forward mode.
    """
    from .api import pullback_wrt

    if order != 1 or any(m != "rev" for m in modes):
        raise NotImplementedError("check_grads supports order=1 and modes=('rev',) for now")
    args = list(args)
    floats = [i for i, v in enumerate(args) if _is_float(v)]
    out, pullback = pullback_wrt(fun, args, floats)
    grads = pullback(_ones_like(out))
    for argnum, analytic_tree in zip(floats, grads):
        analytic = _flat(analytic_tree)
        numeric = numerical_grad(fun, args, argnum, eps)
        err = np.abs(analytic - numeric)
        bound = atol + rtol * np.abs(numeric)
        if np.any(err > bound):
            worst = int(np.argmax(err - bound))
            raise AssertionError(
                f"gradient of argument {argnum} differs from finite differences at flat "
                f"index {worst}: generated {analytic[worst]!r}, numerical {numeric[worst]!r} "
                f"(|diff| {err[worst]:.3g} > {bound[worst]:.3g})"
            )


def _is_float(x: Any) -> bool:
    if isinstance(x, (bool, int, np.integer)):
        return False
    if isinstance(x, (tuple, list)):
        return bool(x) and all(_is_float(v) for v in x)
    if isinstance(x, dict):
        return bool(x) and all(_is_float(v) for v in x.values())
    return np.issubdtype(np.asarray(x).dtype, np.floating)


def _ones_like(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return type(x)(_ones_like(v) for v in x)
    if isinstance(x, dict):
        return {k: _ones_like(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return np.ones_like(x, dtype=float)
    return 1.0
