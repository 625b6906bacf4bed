"""``Variable``, ``Tensor`` and ``TensorShape``: TensorFlow-like values backed by NumPy.

A ``Tensor`` is an ``ndarray`` that also answers ``.numpy()``, prints as TensorFlow
does and gives its ``shape`` as a ``TensorShape`` (a tuple of dimensions that also
answers ``as_list()``, ``rank``, ``num_elements()``...); a ``Variable`` holds a mutable
value (``assign``, ``assign_add``, ``assign_sub``) and behaves as its value in
arithmetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import duck, runtime
from .rules.registry import nondiff, set_jvps, vjp_rule

# one dict per tape whose block is running: the ids of the Variables read in it (a
# Variable the block never read, such as one on a branch not taken, has no gradient),
# each with the array it held when first read (a tape refuses to re-run a read of a
# Variable that changed since, where it cannot tell which value the read saw)
READS: list[dict[int, Any]] = []
# while tapes' blocks run: called with each Variable assigned and its array before (a
# tape notes in which statement of its block, see GradientTape._note_assign)
ASSIGNS: list[Any] = []


def _read(variable: Variable) -> None:
    for seen in READS:
        seen.setdefault(id(variable), variable.value)


def _default_dtype(value: Any, dtype: Any) -> Any:
    """TensorFlow's dtype for a value: Python floats (and lists of them) are float32,
    Python ints int32; NumPy values keep theirs."""
    if dtype is not None:
        return np.dtype(dtype)
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        return np.float32
    if arr.dtype.kind in "iu":
        return np.int32
    return arr.dtype


def _dim(value: Any) -> int | None:
    if value is None:
        return None
    value = getattr(value, "value", value)  # a Dimension-like object
    return None if value is None else int(value)


class TensorShape(tuple):
    """The shape of a tensor: a tuple of dimensions (``None``: unknown).

    Args:
        dims: The dimensions (ints, ``None``), or ``None`` for an unknown rank.
    """

    _unknown_rank = False  # a class default: known shapes are made without setting it

    def __new__(cls, dims: Any = ()) -> TensorShape:
        if dims is None:
            shape = super().__new__(cls, ())
            shape._unknown_rank = True
            return shape
        if isinstance(dims, int) or hasattr(dims, "__index__") and not hasattr(dims, "__len__"):
            dims = (dims,)
        return super().__new__(cls, [_dim(d) for d in dims])

    # --- TensorFlow's accessors ---------------------------------------------------------

    @property
    def rank(self) -> int | None:
        """The number of dimensions (``None`` when unknown)."""
        return None if self._unknown_rank else len(self)

    @property
    def ndims(self) -> int | None:
        return self.rank

    @property
    def dims(self) -> list[int | None] | None:
        return None if self._unknown_rank else list(self)

    def as_list(self) -> list[int | None]:
        """The dimensions as a list (``ValueError`` for an unknown rank, as TensorFlow)."""
        if self._unknown_rank:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self)

    def num_elements(self) -> int | None:
        """The product of the dimensions (``None`` if one is unknown)."""
        if self._unknown_rank or any(d is None for d in self):
            return None
        count = 1
        for d in self:
            count *= d
        return count

    def is_fully_defined(self) -> bool:
        return not self._unknown_rank and all(d is not None for d in self)

    def concatenate(self, other: Any) -> TensorShape:
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._unknown_rank or other._unknown_rank:
            return TensorShape(None)
        return TensorShape((*self, *other))

    def is_compatible_with(self, other: Any) -> bool:
        """Whether the two shapes could be the same (unknown dimensions match anything)."""
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._unknown_rank or other._unknown_rank:
            return True
        return len(self) == len(other) and all(
            a is None or b is None or a == b for a, b in zip(self, other)
        )

    def __getitem__(self, key: Any) -> Any:
        if type(key) is slice:
            return _known(tuple.__getitem__(self, key))
        return tuple.__getitem__(self, key)

    # --- comparisons and printing -------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorShape):
            if self._unknown_rank or other._unknown_rank:
                return self._unknown_rank and other._unknown_rank
            return tuple(self) == tuple(other)
        if isinstance(other, (tuple, list)):
            return not self._unknown_rank and tuple(self) == tuple(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        if self._unknown_rank:
            return "TensorShape(None)"
        return f"TensorShape({list(self)!r})"

    def __str__(self) -> str:
        if self._unknown_rank:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self)
        return f"({inner},)" if len(self) == 1 else f"({inner})"

    def __reduce__(self) -> Any:
        return (TensorShape, (None if self._unknown_rank else tuple(self),))


_new_tuple = tuple.__new__


def _known(dims: tuple[Any, ...]) -> TensorShape:
    """A ``TensorShape`` of dimensions that are already ints or ``None`` (no checks)."""
    return _new_tuple(TensorShape, dims)


# --- tensors ------------------------------------------------------------------------------


_ARRAY_SHAPE = np.ndarray.shape


class Tensor(np.ndarray):
    """An array with TensorFlow's ``numpy()``, printing and ``shape`` (a ``TensorShape``)."""

    @property  # type: ignore[override]
    def shape(self) -> TensorShape:
        return _new_tuple(TensorShape, _ARRAY_SHAPE.__get__(self))

    @shape.setter
    def shape(self, value: Any) -> None:
        _ARRAY_SHAPE.__set__(self, value)

    def numpy(self) -> Any:
        """The value as NumPy: a scalar for 0-d tensors, else an array."""
        arr = np.asarray(self)
        return arr[()] if arr.ndim == 0 else arr.copy()

    def __repr__(self) -> str:
        arr = np.asarray(self)
        return f"<tf.Tensor: shape={arr.shape}, dtype={arr.dtype}, numpy={_numpy_text(arr)}>"

    def __str__(self) -> str:
        arr = np.asarray(self)
        return f"tf.Tensor({_numpy_text(arr, False)}, shape={arr.shape}, dtype={arr.dtype})"


def _numpy_text(arr: np.ndarray, is_repr: bool = True) -> str:
    """The value as TensorFlow prints it: a text of several lines starts on a new line."""
    text = str(arr[()]) if arr.ndim == 0 else repr(arr) if is_repr else str(arr)
    return "\n" + text if "\n" in text else text


_ARRAYS: set[type] = {np.ndarray}  # EagerTensor joins below
_SCALARS = {np.float64, np.float32, np.float16, np.complex128, np.complex64}


def tensor(value: Any, dtype: Any = None) -> Tensor:
    """``value`` as a ``Tensor`` (its gradient passes through unchanged)."""
    if dtype is None:  # the common cases: an op's NumPy result
        kind = type(value)
        if kind in _ARRAYS:
            return value.view(EagerTensor)
        if kind in _SCALARS:
            return np.asarray(value).view(EagerTensor)
    if isinstance(value, Variable):
        if READS:
            _read(value)
        value = value.value
    return np.asarray(value, dtype=_default_dtype(value, dtype)).view(EagerTensor)


def python_numbers(value: Any) -> bool:
    """Whether ``value`` is a Python number or a (nested) list or tuple of them (what
    TensorFlow converts to a tensor at a function's or a layer's door)."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(python_numbers(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _full_name(name: str | None) -> str:
    """TensorFlow's printed name: ``'x0:0'``, ``'dense/kernel:0'``, ``'Variable:0'``."""
    import sys

    scopes = sys.modules.get("s2s_ad.tf.module")
    base = name or "Variable"
    if scopes is not None:
        base = scopes.scoped(base)
    return base if ":" in base else f"{base}:0"


class Variable:
    """A mutable value that tapes watch when it is read (when ``trainable``).

    Args:
        initial_value: The value (Python floats become float32, as in TensorFlow).
        trainable: Whether tapes watch it automatically.
        name: A name for printing.
        dtype: The dtype of the value.
    """

    def __init__(
        self, initial_value: Any, trainable: bool = True, name: str | None = None, dtype: Any = None
    ) -> None:
        if isinstance(initial_value, Variable):
            initial_value = initial_value.value
        self.value = np.array(initial_value, dtype=_default_dtype(initial_value, dtype))
        self.trainable = trainable
        self.name = _full_name(name)

    @property
    def shape(self) -> TensorShape:
        return _new_tuple(TensorShape, self.value.shape)

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    @property
    def ndim(self) -> int:
        return self.value.ndim

    def numpy(self) -> Any:
        return self.value[()] if self.value.ndim == 0 else self.value.copy()

    def read_value(self) -> Tensor:
        return tensor(self)

    def assign(self, value: Any) -> Variable:
        old = self.value
        self.value = np.array(np.asarray(value, dtype=old.dtype).reshape(self.shape))
        for note in ASSIGNS:
            note(self, old)
        return self

    def assign_add(self, delta: Any) -> Variable:
        return self.assign(self.value + np.asarray(delta))

    def assign_sub(self, delta: Any) -> Variable:
        return self.assign(self.value - np.asarray(delta))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self.value
        for seen in READS:  # (_read, inline)
            seen.setdefault(id(self), value)
        if dtype is not None:
            return value.astype(dtype)
        # ``np.array(v)`` asks for a copy, and NumPy 2 trusts ``__array__`` to make it:
        # the Variable's own array would be written through it
        return value.copy() if copy else value

    # NumPy's own default: a ufunc or an operator between an array and a Variable then
    # works as when the attribute is missing (NumPy skips the default; the Variable is
    # converted through ``__array__``, read), but finds it on the class instead of
    # making and dropping an AttributeError twice per operation (and, for an operator,
    # looking up ``__array_priority__``): about 5k instructions less of 18k for
    # ``tensor + variable``
    __array_ufunc__ = np.ndarray.__array_ufunc__

    def __getitem__(self, index: Any) -> Tensor:
        if READS:
            _read(self)
        out = tensor(self.value[index])
        out._sliced = (self, index)  # its ``assign`` writes there (see ``tf/scatter.py``)
        return out

    def __repr__(self) -> str:
        return (
            f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype}, "
            f"numpy={_numpy_text(self.value)}>"
        )

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.numpy(), spec)

    def __len__(self) -> int:
        return len(self.value)

    def __hash__(self) -> int:
        return id(self)


# operands a Variable's operator computes with on plain arrays: NumPy's ufuncs cost
# about 0.6 us more per call when an operand is an ``ndarray`` subclass, and these
# types give the same result (its dtype, its shape) either way
_PLAIN_OPERANDS = frozenset((np.ndarray, float, int, np.float32, np.float64))


def _binary(name: str) -> Any:
    op = getattr(np.ndarray, name)

    def method(self: Variable, other: Any) -> Any:
        value = self.value
        for seen in READS:  # (_read, inline)
            seen.setdefault(id(self), value)
        kind = type(other)
        if kind in _PLAIN_OPERANDS or kind is EagerTensor:
            # (the Variable's array is a plain one; the result as a tensor, as ``tensor``
            # makes it: a 0-d one for a NumPy scalar)
            out = op(value, other if kind is not EagerTensor else other.view(np.ndarray))
            if type(out) is np.ndarray:
                return out.view(EagerTensor)
            return np.asarray(out).view(EagerTensor)
        if isinstance(other, Variable):
            if READS:
                _read(other)
            other = other.value
        return op(value.view(EagerTensor), other)

    method.__name__ = name
    return method


for _op in (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__pow__",
    "__rpow__",
    "__matmul__",
    "__rmatmul__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__eq__",
    "__ne__",
    "__neg__",
    "__pos__",
    "__abs__",
):
    if _op in ("__neg__", "__pos__", "__abs__"):
        _unary = getattr(np.ndarray, _op)
        setattr(Variable, _op, lambda self, _f=_unary: _f(tensor(self)))
    else:
        setattr(Variable, _op, _binary(_op))


def _register() -> None:
    # assigning cuts the gradient, as in TensorFlow; the state checks of variables mode
    nondiff("Variable.assign", [Variable.assign, Variable.assign_add, Variable.assign_sub])
    nondiff("tape state writes", [runtime.set_attribute, runtime.check_state_call])

    rule = vjp_rule(
        "tensor", [tensor], ("value", "dtype"), {"value": "g"}, [], defaults={"dtype": "None"}
    )
    set_jvps(rule, value="t")


_register()


class EagerTensor(Tensor):
    """The class of tensors, named as TensorFlow's (``type(x).__name__`` in the guides)."""


_ARRAYS.add(EagerTensor)


class ResourceVariable(Variable):
    """The class of Variables, named as TensorFlow's."""


def _new_variable(cls: type, *args: Any, **kwargs: Any) -> Any:
    return object.__new__(ResourceVariable if cls is Variable else cls)


Variable.__new__ = _new_variable  # type: ignore[method-assign]

# helpers read a Variable's array from ``value`` (see ``duck.ARRAY_HOLDERS``)
duck.ARRAY_HOLDERS.update((Variable, ResourceVariable))
