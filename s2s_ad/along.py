"""``np.apply_along_axis`` written as the loop it runs, for the transformer to read.

The normalizer lowers ``np.apply_along_axis(func1d, axis, arr, *args)`` to
``along_finish(np.stack([func1d(row, *args) for row in along_rows(arr, axis)]), arr,
axis)`` (a lambda's body written in the comprehension itself, so that it may read the
function's differentiated values): the two helpers here are differentiated through their
source like the user's code. :func:`apply_along_axis` is the whole of it, for the calls
that are not lowered so (keywords, ``**kwargs``).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def along_rows(arr: Any, axis: int) -> Any:
    """The 1-d slices of ``arr`` along ``axis``, as the rows of a 2-d array (in the order
    ``np.apply_along_axis`` visits them)."""
    arr = np.asarray(arr)
    n = np.shape(arr)[axis]
    return np.reshape(np.moveaxis(arr, axis, -1), (-1, n))


def along_finish(out: Any, arr: Any, axis: int) -> Any:
    """The results ``out`` of the slices (stacked on a first axis) placed where
    ``np.apply_along_axis`` puts them: their own dimensions where ``axis`` was."""
    ndim = np.ndim(arr)
    axis = axis % ndim
    outer = tuple(s for k, s in enumerate(np.shape(arr)) if k != axis)
    inner = np.shape(out)[1:]
    out = np.reshape(out, outer + inner)
    source, destination = along_axes(ndim, np.ndim(out), axis)
    return np.moveaxis(out, source, destination)


def along_axes(ndim: int, out_ndim: int, axis: int) -> tuple[list[int], list[int]]:
    """Where :func:`along_finish` moves the results' own dimensions from and to (their
    positions after the others, and from ``axis`` on)."""
    first = ndim - 1
    dims = out_ndim - first
    return list(range(first, first + dims)), list(range(axis, axis + dims))


def apply_along_axis(func1d: Any, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``np.apply_along_axis`` computes: ``func1d`` on each 1-d slice of ``arr``
    along ``axis``, its result's dimensions put where ``axis`` was."""
    rows = along_rows(arr, axis)
    out = np.stack([np.asarray(func1d(row, *args, **kwargs)) for row in rows])
    return along_finish(out, arr, axis)
