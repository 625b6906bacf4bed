"""``check_grads``: generated derivatives against central finite differences."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import grad, pullback_wrt
from .passed_objects import holds_floats, is_plain_object, object_gradient
from .targets import define
from .transforms import _jvp_wrt


def _parts(x: Any) -> dict[str, Any] | None:
    """The attributes of a dataclass or a plain object that hold floats (what its gradient
    holds), as a dict; ``None`` for anything else."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        values = {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
    elif is_plain_object(x) and hasattr(x, "__dict__"):
        values = vars(x)
    else:
        return None
    return {k: v for k, v in values.items() if holds_floats(v)}


def _rebuilt(like: Any, parts: dict[str, Any]) -> Any:
    """An object like ``like`` with ``parts`` as its float attributes."""
    if dataclasses.is_dataclass(like):
        out = copy.copy(like)
        for key, value in parts.items():
            object.__setattr__(out, key, value)
        return out
    return object_gradient(parts, like, lambda g, x: g)


def _sequence_like(like: tuple | list, items: Any) -> tuple | list:
    """``items`` as a sequence of ``like``'s type (a named tuple takes its fields as
    separate arguments)."""
    if hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


def _flat(x: Any) -> np.ndarray:
    parts = _parts(x)
    if parts is not None:
        return _flat(parts)
    if isinstance(x, dict):
        return np.concatenate([_flat(x[k]) for k in sorted(x)]) if x else np.zeros(0)
    if isinstance(x, (tuple, list)):
        return np.concatenate([_flat(v) for v in x]) if x else np.zeros(0)
    return np.atleast_1d(np.asarray(x, dtype=float)).ravel()


def _unflat(flat: np.ndarray, like: Any) -> tuple[Any, int]:
    parts = _parts(like)
    if parts is not None:
        values, n = _unflat(flat, parts)
        return _rebuilt(like, values), n
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
        return _sequence_like(like, parts), pos
    arr = np.asarray(like)
    n = max(arr.size, 1)
    if isinstance(like, np.ndarray):
        return flat[:n].reshape(arr.shape).astype(like.dtype), n
    return float(flat[0]), 1


def numerical_grad(
    fun: Callable[..., Any], args: Sequence[Any], argnum: int, eps: float = 1e-6
) -> np.ndarray:
    """Central finite-difference gradient w.r.t. ``args[argnum]`` (flat) of the sum of
    ``fun``'s output entries (a structured output, such as the gradient of a list of
    ``(W, b)`` pairs, is flattened first)."""
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
            vals.append(float(np.sum(_flat(fun(*call)))))  # a structured output: its sum
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
    """Compare generated derivatives of ``fun`` with central finite differences.

    Args:
        fun: The function; a non-scalar output is checked through ``vjp`` with a
            cotangent of ones (reverse) and whole (forward).
        args: Arguments; every float argument is checked.
        order: Derivative order; ``order=2`` also checks the derivatives of the generated
            gradient (``fun`` must then return a scalar); ``order=3`` those of the
            gradient of the sum of the gradient's entries (arrays in tuples, lists and
            dicts), and so on.
        modes: ``'rev'`` (``vjp``) and/or ``'fwd'`` (``jvp``); with both, also checks
            that ``<u, J v>`` is the same either way.
        atol: Absolute tolerance.
        rtol: Relative tolerance.
        eps: Finite-difference step (relative to the entry's magnitude).

    Raises:
        AssertionError: Naming the argument and the worst entry when a check fails.
    """

    unknown = set(modes) - {"rev", "fwd"}
    if unknown or not modes:
        raise ValueError(f"modes must be a non-empty subset of ('rev', 'fwd'), got {modes!r}")
    args = list(args)
    floats = [i for i, v in enumerate(args) if _is_float(v)]
    tol = {"atol": atol, "rtol": rtol}
    if "rev" in modes:
        out, pullback = pullback_wrt(fun, args, floats)
        for argnum, tree in zip(floats, pullback(_ones_like(out))):
            numeric = numerical_grad(fun, args, argnum, eps)
            _compare(_flat(tree), numeric, f"gradient of argument {argnum}", **tol)
    rng = np.random.default_rng(0)
    if "fwd" in modes:
        for argnum in floats:
            direction = _random_like(args[argnum], rng)
            _, tangent = _jvp_wrt(fun, args, [argnum], [direction])
            numeric = _directional(fun, args, argnum, direction, eps)
            _compare(_flat(tangent), numeric, f"jvp along argument {argnum}", **tol)
    if "fwd" in modes and "rev" in modes and floats:
        directions = [_random_like(args[i], rng) for i in floats]
        out, tangent = _jvp_wrt(fun, args, floats, directions)
        cotangent = _random_like(out, rng)
        _, pullback = pullback_wrt(fun, args, floats)
        left = float(np.dot(_flat(cotangent), _flat(tangent)))
        right = sum(
            float(np.dot(_flat(g), _flat(d))) for g, d in zip(pullback(cotangent), directions)
        )
        _compare(
            np.array([left]), np.array([right]), "<u, J v> (jvp) against <J^T u, v> (vjp)", **tol
        )
    if order > 1:
        for argnum in floats:
            gradient = grad(fun, argnum)
            check_grads(gradient, args, 1, modes=modes, atol=atol, rtol=rtol, eps=eps)
            if order > 2:  # the gradient is not a scalar: the derivatives of its entries' sum
                summed = _summed(gradient, len(args))
                check_grads(summed, args, order - 1, modes=modes, atol=atol, rtol=rtol, eps=eps)


def _summed(fun: Callable[..., Any], nargs: int) -> Any:
    """``fun`` followed by the sum of its output's entries (arrays in tuples, lists and
    dicts), as a function of ``nargs`` positional arguments with source (differentiated
    again for a third derivative and up)."""
    params = [
        inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD) for i in range(nargs)
    ]
    names = ", ".join(p.name for p in params)
    return define(
        "summed", params, f"{{total}}({{fun}}({names}))", {"total": _entries_sum, "fun": fun}
    )


def _entries_sum(tree: Any) -> Any:
    """The sum of the entries of the arrays in ``tree`` (tuples, lists and dicts)."""
    if isinstance(tree, dict):
        tree = list(tree.values())
    if isinstance(tree, (tuple, list)):
        total = 0.0
        for part in tree:
            total = total + _entries_sum(part)
        return total
    return np.sum(tree)


def _compare(
    analytic: np.ndarray, numeric: np.ndarray, what: str, atol: float, rtol: float
) -> None:
    with np.errstate(invalid="ignore"):
        err = np.abs(analytic - numeric)
        bound = atol + rtol * np.abs(numeric)
        # a NaN where the other side has a number fails; NaN on both sides, or the same
        # infinity, agrees
        bad = ~(err <= bound) & ~(np.isnan(analytic) & np.isnan(numeric)) & ~(analytic == numeric)
    if np.any(bad):
        worst = int(np.argmax(np.where(bad, np.nan_to_num(err - bound, nan=np.inf), -np.inf)))
        raise AssertionError(
            f"{what} differs at flat index {worst}: generated {analytic[worst]!r}, "
            f"expected {numeric[worst]!r} (|diff| {err[worst]:.3g} > {bound[worst]:.3g})"
        )


def _random_like(x: Any, rng: np.random.Generator) -> Any:
    parts = _parts(x)
    if parts is not None:
        return _rebuilt(x, {k: _random_like(v, rng) for k, v in parts.items()})
    if isinstance(x, (tuple, list)):
        return _sequence_like(x, [_random_like(v, rng) for v in x])
    if isinstance(x, dict):
        return {k: _random_like(v, rng) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape).astype(x.dtype if x.dtype.kind == "f" else float)
    return float(rng.standard_normal())


def _directional(
    fun: Callable[..., Any], args: Sequence[Any], argnum: int, direction: Any, eps: float
) -> np.ndarray:
    """Central difference of ``fun`` along ``direction`` in argument ``argnum``."""
    x0 = _flat(args[argnum])
    d = _flat(direction)
    step = eps * max(1.0, float(np.max(np.abs(x0))) if x0.size else 1.0)
    outs = []
    for sign in (1.0, -1.0):
        call = list(args)
        call[argnum] = _unflat(x0 + sign * step * d, args[argnum])[0]
        outs.append(_flat(fun(*call)))
    return (outs[0] - outs[1]) / (2 * step)


def _is_float(x: Any) -> bool:
    if isinstance(x, (bool, int, np.integer)):
        return False
    if _parts(x) is not None:  # a model object, a dataclass: its float attributes
        return bool(_parts(x))
    if isinstance(x, (tuple, list)):
        return bool(x) and all(_is_float(v) for v in x)
    if isinstance(x, dict):
        return bool(x) and all(_is_float(v) for v in x.values())
    return np.issubdtype(np.asarray(x).dtype, np.floating)


def _ones_like(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return _sequence_like(x, [_ones_like(v) for v in x])
    if isinstance(x, dict):
        return {k: _ones_like(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return np.ones_like(x, dtype=float)
    return 1.0
