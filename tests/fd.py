"""Central finite differences for functions of floats, arrays, and lists/tuples/dicts of them.

``numerical_grad(fun, args, wrt)`` returns gradients with the structure of the inputs
named by ``wrt`` (one gradient for an int/str, a tuple for a tuple), always in float64:
float32 inputs are promoted before differencing (a float32 step of 1e-6 would be noise).

Also: ``flatten`` (any such structure -> one float64 vector) used to compare results.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def flatten(x: Any) -> np.ndarray:
    """All float leaves of ``x`` (in a fixed order: dicts by key order) as one float64 vector."""
    if isinstance(x, dict):
        parts = [flatten(v) for v in x.values()]
    elif isinstance(x, (list, tuple)):
        parts = [flatten(v) for v in x]
    else:
        return np.asarray(x, dtype=np.float64).ravel()
    return np.concatenate(parts) if parts else np.zeros(0)


def unflatten(template: Any, flat: np.ndarray) -> Any:
    """Inverse of :func:`flatten`: values of ``flat`` in the structure of ``template``.

    Leaves come back as float64 (Python floats stay Python floats).
    """
    out, used = _unflatten(template, np.asarray(flat, dtype=np.float64), 0)
    assert used == flat.size, "flat vector does not match the template"
    return out


def _unflatten(template: Any, flat: np.ndarray, start: int) -> tuple[Any, int]:
    if isinstance(template, dict):
        out = {}
        for key, value in template.items():
            out[key], start = _unflatten(value, flat, start)
        return out, start
    if isinstance(template, (list, tuple)):
        items = []
        for value in template:
            item, start = _unflatten(value, flat, start)
            items.append(item)
        if isinstance(template, tuple) and hasattr(type(template), "_fields"):
            return type(template)(*items), start  # a namedtuple takes its fields one by one
        return type(template)(items), start
    shape = np.shape(template)
    size = int(np.prod(shape))
    chunk = flat[start : start + size]
    if isinstance(template, (float, int)) and not isinstance(template, np.generic):
        return float(chunk[0]), start + size
    if isinstance(template, np.generic):
        return np.float64(chunk[0]), start + size
    return chunk.reshape(shape).copy(), start + size


def positions(fun: Callable[..., Any], wrt: Any) -> tuple[list[int], bool]:
    """Positional indices named by ``wrt`` (ints or parameter names) and whether it was single."""
    single = isinstance(wrt, (int, str))
    items: Sequence[Any] = [wrt] if single else list(wrt)
    names = list(inspect.signature(fun).parameters)
    out = [names.index(w) if isinstance(w, str) else w for w in items]
    return out, single


def scalar(value: Any) -> float:
    """A function's output as a float (it must hold exactly one number)."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.size != 1:
        raise ValueError(f"finite differences need a scalar output, got shape {arr.shape}")
    return float(arr.reshape(()))


def numerical_grad(
    fun: Callable[..., Any],
    args: Sequence[Any],
    wrt: Any = 0,
    *,
    rel_step: float = 1e-6,
) -> Any:
    """Central finite-difference gradient of the scalar ``fun(*args)``.

    Args:
        fun: The function.
        args: Its positional arguments (the ones not in ``wrt`` are passed unchanged).
        wrt: An int or parameter name (returns one gradient) or a tuple of them (a tuple).
        rel_step: The step for an entry ``v`` is ``rel_step * max(1, |v|)``.

    Returns:
        Gradients with the structure of the differentiated arguments, float64 leaves.
    """
    where, single = positions(fun, wrt)
    base = list(args)
    grads = []
    for pos in where:
        template = base[pos]
        x0 = flatten(template)
        g = np.zeros_like(x0)
        for k in range(x0.size):
            step = rel_step * max(1.0, abs(x0[k]))
            up, down = x0.copy(), x0.copy()
            up[k] += step
            down[k] -= step
            f_up = _call(fun, base, pos, unflatten(template, up))
            f_down = _call(fun, base, pos, unflatten(template, down))
            g[k] = (f_up - f_down) / (up[k] - down[k])
        grads.append(unflatten(template, g))
    return grads[0] if single else tuple(grads)


def _call(fun: Callable[..., Any], base: list[Any], pos: int, value: Any) -> float:
    args = list(base)
    args[pos] = value
    return scalar(fun(*args))
