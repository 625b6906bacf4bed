"""TensorFlow's dtypes as NumPy scalar types, ``TensorSpec`` and ``tf.function``."""

from __future__ import annotations

import functools
import itertools
import linecache
from collections.abc import Callable
from typing import Any

import numpy as np

from ..variable import TensorShape, python_numbers, tensor

_serial = itertools.count(1)

float16 = half = np.float16
float32 = np.float32
float64 = double = np.float64
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64
bool = np.bool_  # noqa: A001
complex64 = np.complex64
complex128 = np.complex128
string = np.str_


def as_numpy_dtype(dtype: Any) -> Any:
    """A dtype given as a NumPy type, a TensorFlow name (``'float32'``) or ``None``."""
    if dtype is None:
        return None
    if type(dtype) is int:  # TensorFlow's DataType enum (``tf.zeros(1, 1)``: float32)
        if dtype not in _ENUM:
            raise TypeError(
                f"Cannot convert the argument `type_value`: {dtype} to a TensorFlow DType."
            )
        return _ENUM[dtype]
    return np.dtype(dtype).type


# TensorFlow's DataType numbers (types.proto)
_ENUM = {
    1: np.float32,
    2: np.float64,
    3: np.int32,
    4: np.uint8,
    5: np.int16,
    6: np.int8,
    7: np.str_,
    8: np.complex64,
    9: np.int64,
    10: np.bool_,
    17: np.uint16,
    18: np.complex128,
    19: np.float16,
    22: np.uint32,
    23: np.uint64,
}


def as_dtype(dtype: Any) -> Any:
    return as_numpy_dtype(dtype)


class TensorSpec:
    """The shape (``None`` for any size) and dtype a ``tf.function`` argument must have."""

    def __init__(self, shape: Any = None, dtype: Any = np.float32, name: str | None = None) -> None:
        self.shape = TensorShape(shape)  # TensorShape(None): any rank
        self.dtype = np.dtype(dtype)
        self.name = name

    def is_compatible_with(self, value: Any) -> Any:
        arr = np.asarray(value)
        if self.shape.rank is not None and (
            arr.ndim != len(self.shape)
            or any(want is not None and want != got for want, got in zip(self.shape, arr.shape))
        ):
            return False
        return np.can_cast(arr.dtype, self.dtype, "same_kind") or arr.dtype == self.dtype

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"

    def __eq__(self, other: object) -> Any:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape,
            other.dtype,
            other.name,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.name))


def function(
    func: Callable[..., Any] | None = None, input_signature: Any = None, **options: Any
) -> Any:
    """``@tf.function``: the Python function runs as it is (no graph is built). With an
    ``input_signature``, arguments that do not match it raise ``TypeError`` as
    TensorFlow's traced function does."""

    def decorate(fun: Callable[..., Any]) -> Callable[..., Any]:
        if input_signature is None:
            return Function(fun)
        return _checked(fun, list(input_signature))

    return decorate(func) if func is not None else decorate


class Function:
    """A ``@tf.function`` without a signature: the Python function, called with its
    Python-number arguments (``[[2.0, 2.0]]``) as tensors, as TensorFlow converts them
    (floats become float32). Differentiated code calls the Python function itself."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.python_function = self._s2s_call = fun  # what differentiated code calls
        functools.update_wrapper(self, fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = tuple(tensor(a) if python_numbers(a) else a for a in args)
        return self.python_function(*args, **kwargs)

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        """As a method: bound to the instance, still converting its arguments."""
        if obj is None:
            return self
        return Function(self.python_function.__get__(obj, owner))


def _checked(fun: Callable[..., Any], signature: list[Any]) -> Callable[..., Any]:
    """``fun`` behind a check of its arguments, as a function with one parameter per entry
    of the signature (its source is registered, so tapes differentiate through it)."""
    names = ", ".join(f"arg{k}" for k in range(len(signature)))
    text = (
        f"def {fun.__name__}({names}):\n"
        f"    _check_signature(_fun, _signature, ({names}{',' if signature else ''}))\n"
        f"    return _fun({names})\n"
    )
    filename = f"<s2s_ad:tf.function {fun.__qualname__}:{next(_serial)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"_fun": fun, "_signature": signature, "_check_signature": _check_signature}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102
    checked = namespace[fun.__name__]
    checked.__doc__ = fun.__doc__
    checked.__qualname__ = fun.__qualname__
    checked.python_function = fun
    return checked


def _check_signature(fun: Any, signature: Any, args: tuple[Any, ...]) -> None:
    specs = list(signature)
    if len(args) != len(specs):
        raise TypeError(
            f"{fun.__name__}: takes {len(specs)} positional arguments under its "
            f"input_signature, got {len(args)}"
        )
    for k, (spec, arg) in enumerate(zip(specs, args)):
        if not spec.is_compatible_with(arg):
            raise TypeError(
                f"{fun.__name__}: argument {k} with shape {np.shape(arg)} and dtype "
                f"{np.asarray(arg).dtype} does not match {spec!r}"
            )


def _register() -> None:
    from ..rules.registry import nondiff

    nondiff("tf.function input checks", [_check_signature])


_register()
