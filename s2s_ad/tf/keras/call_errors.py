"""The message Keras 2 gives an error raised while a layer is called.

An exception raised inside a layer's ``build`` or ``call`` comes out of ``layer(x)`` with
its message extended: which layer failed, the original message, and the arguments the
call received (tensors by shape and dtype, other values by ``repr``). The exception keeps
its class (``except tf.errors.InvalidArgumentError`` still catches it); an error that
went through an inner layer's call is not extended again by the outer ones.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ...errors import TransformError
from ..errors import OpError

_MARK = "_s2s_layer_call_info"  # set on an error once a layer has extended its message


def extended(layer: Any, error: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``error`` with the layer's call added to its message, as Keras 2 raises it (the
    error itself when it was extended already, is ours, or cannot be rebuilt)."""
    if getattr(error, _MARK, False) or isinstance(error, TransformError):
        return error
    arguments = _arguments(layer, args, kwargs)
    if arguments is None:
        return error
    if isinstance(error, OpError):
        message = error.message
    else:
        message = error.args[0] if error.args else ""
    who = f"layer '{layer.name}' (type {type(layer).__name__})"
    text = (
        f"Exception encountered when calling {who}.\n\n{message}\n\n"
        f"Call arguments received by {who}:\n{arguments}"
    )
    try:
        if isinstance(error, OpError):
            new = type(error)(getattr(error, "node_def", None), getattr(error, "op", None), text)
        else:
            new = type(error)(text)
    except Exception:  # an exception class with another signature: raised as it was
        return error
    setattr(new, _MARK, True)
    return new.with_traceback(error.__traceback__)


def _arguments(layer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """One ``  • name=value`` line per parameter of ``layer.call``: the value it received,
    or its default."""
    try:
        signature = inspect.signature(layer.call)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    lines = []
    for name, parameter in signature.parameters.items():
        if name in bound.arguments:
            value: Any = _shown(bound.arguments[name], layer)
        else:
            value = parameter.default
        lines.append(f"  • {name}={value}")
    return "\n".join(lines) if lines else None


def _shown(value: Any, layer: Any) -> Any:
    """How Keras prints an argument: a tensor by shape and dtype, anything else by
    ``repr``, inside the same lists, tuples and dicts."""
    if isinstance(value, dict):
        return {key: _shown(item, layer) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_shown(item, layer) for item in value)
    if isinstance(value, (np.ndarray, np.generic)):
        dtype = np.dtype(value.dtype)
        if dtype.kind == "f":  # Keras casts floating inputs to the layer's dtype
            dtype = np.dtype(getattr(layer, "_dtype", dtype))
        return f"tf.Tensor(shape={tuple(np.shape(value))}, dtype={dtype.name})"
    return repr(value)
