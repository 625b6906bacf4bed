"""Arrays of other libraries (Dask, CuPy, ...) in generated code and its helpers.

NumPy functions called on such an array dispatch to its library through
``__array_function__`` and ``__array_ufunc__``: a Dask array stays lazy, a CuPy array
stays on its device. The helpers therefore never call ``np.asarray`` on one; they
ask this module whether a value is such an array and keep it as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_FOREIGN: dict[type, bool] = {}  # per type: a failed attribute look-up costs ~1 us

# types whose ``value`` attribute is their NumPy array and whose ``__array__`` returns it
# (the TensorFlow shim's Variables, registered by ``s2s_ad.variable``): helpers read the
# array's shape from ``value`` and take it with ``__array__`` (which notes the read for a
# running tape) instead of NumPy's conversion of an unknown object
ARRAY_HOLDERS: set[type] = set()


def is_foreign(x: Any) -> bool:
    """Whether ``x`` is an array of another library that NumPy functions dispatch to."""
    kind = type(x)
    known = _FOREIGN.get(kind)
    if known is None:
        known = not issubclass(kind, np.ndarray) and hasattr(kind, "__array_function__")
        if len(_FOREIGN) < 1024:
            _FOREIGN[kind] = known
    return known


def as_array(x: Any) -> Any:
    """``x`` as an array: NumPy's for plain values, ``x`` itself for a foreign array."""
    return x if is_foreign(x) else np.asarray(x)


def as_float(x: Any) -> Any:
    """``x`` as a float array (``np.asarray(x, dtype=float)``), a foreign array kept foreign."""
    if is_foreign(x):
        return x if x.dtype.kind == "f" else x.astype(float)
    return np.asarray(x, dtype=float)


def writable_copy(x_bar: Any, g: Any) -> Any:
    """A fresh float copy of the adjoint ``x_bar`` that ``g`` can be added into in place."""
    dtype = np.result_type(x_bar.dtype, getattr(g, "dtype", type(g)), 0.0)
    return x_bar.astype(dtype, copy=True)


def fill_like(g: Any, like: Any) -> Any:
    """``g`` broadcast to the shape of the foreign array ``like``, in its library and chunks."""
    return np.zeros_like(like, dtype=np.result_type(g, 0.0)) + g


def fix_foreign(g: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """A foreign gradient with the given shape and float dtype, still unevaluated."""
    if tuple(g.shape) != tuple(shape):
        g = np.broadcast_to(g, shape)
    if np.dtype(dtype).kind in "fc" and g.dtype != dtype:
        g = g.astype(dtype)
    return g
