"""``keras.layers.Layer``, symbolic inputs (``keras.Input``) and the weights of layers.

A layer tracks the Variables and layers assigned to its attributes in the order they
were assigned (as Keras does: ``weights`` are the trainable ones first, then the others,
a layer's own before those of its sub-layers). ``__call__`` builds the layer on its
first input (``build(input_shape)``), then runs ``call``; on a symbolic input (from
``keras.Input``) it records a node of a functional model instead.
"""

from __future__ import annotations

import collections
import contextlib
import inspect
from typing import Any

import numpy as np

from ... import replay
from ...replay import unrecorded
from ...rules.registry import nondiff
from ...variable import TensorShape, Variable, python_numbers, tensor
from ..module import Module, name_scope, to_snake_case
from . import call_errors, initializers, regularizers

_NAMES: collections.Counter[str] = collections.Counter()


def unique_name(base: str) -> str:
    """``'dense'``, then ``'dense_1'``, ``'dense_2'``... as Keras names layers."""
    names = _COUNTERS[-1]
    count = names[base]
    names[base] += 1
    return base if count == 0 else f"{base}_{count}"


_COUNTERS = [_NAMES]


@contextlib.contextmanager
def fresh_names() -> Any:
    """Layers made inside are numbered from zero (Keras 2 builds a subclassed model in
    a graph of its own, which numbers the layers made there afresh)."""
    _COUNTERS.append(collections.Counter())
    try:
        yield
    finally:
        _COUNTERS.pop()


class KerasTensor:
    """A symbolic value in a functional model: its shape (``None`` for the batch) and the
    layer call that makes it."""

    def __init__(
        self,
        shape: tuple[Any, ...],
        dtype: Any,
        layer: Any = None,
        inputs: Any = None,
        name: str | None = None,
        node_index: int = 0,
    ) -> None:
        self.shape = TensorShape(shape)
        self.dtype = np.dtype(dtype)
        self.layer = layer
        self.inputs = inputs
        self.name = name or (layer.name if layer is not None else "input")
        self.node_index = node_index  # which call of ``layer`` made it
        # ``layer(x, training=False)`` in the graph: the mode that call always runs in
        self.training: Any = None

    def __repr__(self) -> str:
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}>"


def Input(  # noqa: N802
    shape: Any = None, batch_size: Any = None, name: str | None = None, dtype: Any = np.float32
) -> KerasTensor:
    """A symbolic input of the given per-example ``shape`` (named ``'input_1'``,
    ``'input_2'``... by default, as Keras names its ``InputLayer``)."""
    if name is None:
        _INPUTS[0] += 1
        name = f"input_{_INPUTS[0]}"
    return KerasTensor((batch_size, *tuple(shape or ())), dtype, name=name)


_INPUTS = [0]
# changes whenever a layer tree may have changed: a public attribute of a layer written
# (a layer or Variable assigned, ``trainable`` flipped, ``built``), a layer's tracked list
# changed (``add_weight``, ``Sequential.add``/``pop``); walks over the tree
# (``trainable_weights``, clearing the losses) are kept per layer while it stays the same
_TREE = [0]
# ``add_loss`` calls so far: a tree whose losses were cleared since stays clear until one
_LOSSES_ADDED = [0]
# in the ``seen`` set of a walk over trainable weights: a layer met defines its own
# ``trainable_weights`` (its list is not kept, it may change without the tree changing)
_OWN_LIST = -1


class _Memo:
    """A walk's result and the :data:`_TREE` stamp it holds for (an object of its own: a
    walk over a module's attributes does not descend into it)."""

    __slots__ = ("stamp", "found")

    def __init__(self, stamp: int, found: tuple[Variable, ...]) -> None:
        self.stamp = stamp
        self.found = found


class _Tracked(list):  # type: ignore[type-arg]
    """A layer's tracked Variables and layers: any change moves :data:`_TREE` on."""

    def append(self, item: Any) -> None:
        _TREE[0] += 1
        super().append(item)

    def extend(self, items: Any) -> None:
        _TREE[0] += 1
        super().extend(items)

    def insert(self, index: Any, item: Any) -> None:
        _TREE[0] += 1
        super().insert(index, item)

    def remove(self, item: Any) -> None:
        _TREE[0] += 1
        super().remove(item)

    def pop(self, index: Any = -1) -> Any:
        _TREE[0] += 1
        return super().pop(index)

    def clear(self) -> None:
        _TREE[0] += 1
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        _TREE[0] += 1
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        _TREE[0] += 1
        super().reverse()

    def __setitem__(self, index: Any, value: Any) -> None:
        _TREE[0] += 1
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        _TREE[0] += 1
        super().__delitem__(index)

    def __iadd__(self, items: Any) -> Any:
        _TREE[0] += 1
        return super().__iadd__(items)

    def __imul__(self, count: Any) -> Any:
        _TREE[0] += 1
        return super().__imul__(count)


# whether a layer's __call__ runs (Keras's call context): the outermost clears losses
_IN_CALL = [False]
# the keyword arguments every layer takes besides its own (Keras 2's list)
_ALLOWED_KWARGS = frozenset(
    {
        "input_dim",
        "input_shape",
        "batch_input_shape",
        "batch_size",
        "weights",
        "autocast",
        "dynamic",
    }
)


def _example(spec: KerasTensor) -> np.ndarray:
    """A zero batch of one example with the symbolic value's shape."""
    return np.zeros(tuple(1 if d is None else d for d in spec.shape), dtype=spec.dtype)


def input_shape(inputs: Any) -> Any:
    """The shape of a layer's input (a list of shapes for several inputs)."""
    if isinstance(inputs, (list, tuple)) and not np.isscalar(inputs[0]):
        return [tuple(np.shape(i)) for i in inputs]
    return tuple(np.shape(inputs))


nondiff("keras input shapes", [input_shape])


class Layer(Module):
    """Base of Keras layers: ``build(input_shape)`` makes the weights, ``call(inputs)``
    computes.

    Args:
        trainable: Whether the layer's weights are trained.
        name: The layer's name (default: its class name in snake case, made unique).
        dtype: The dtype of its weights.
    """

    def __init__(
        self,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        activity_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        object.__setattr__(self, "_tracked", _Tracked())
        super().__init__(name or unique_name(to_snake_case(type(self).__name__)))
        self.built = False
        self.trainable = trainable
        self._dtype = np.dtype(dtype or np.float32)
        self._expects_training = "training" in inspect.signature(self.call).parameters
        self._input_shape = kwargs.pop("input_shape", None)
        if self._input_shape is None and kwargs.get("input_dim") is not None:
            self._input_shape = (kwargs.pop("input_dim"),)
        if kwargs.get("batch_input_shape") is not None:
            self._input_shape = tuple(kwargs.pop("batch_input_shape"))[1:]
        unknown = set(kwargs) - _ALLOWED_KWARGS
        if unknown:  # as Keras: never silently ignored
            raise TypeError("Keyword argument not understood:", sorted(unknown)[0])
        self._losses: list[Any] = []
        # (weight, regularizer) pairs: their penalties are among ``losses``
        self._regularized: list[tuple[Variable, Any]] = []
        # a penalty on the outputs, per example (Keras 2 divides by the batch size)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        if self.activity_regularizer is not None:
            self._regularized.append((None, self.activity_regularizer))

    def __setattr__(self, key: str, value: Any) -> None:
        tracked = self.__dict__.get("_tracked")
        if not key.startswith("_"):
            _TREE[0] += 1
        if tracked is not None and not key.startswith("_"):
            new = _tracked_leaves(value)
            old = self.__dict__.get(key)
            if old is not None and old is not value:
                self._untrack(key, old, new)
            for leaf in new:
                if all(leaf is not t for t in tracked):
                    tracked.append(leaf)
        object.__setattr__(self, key, value)
        if key == "trainable" and tracked:  # as Keras: the sub-layers too, recursively
            for layer in self._sublayers():
                layer.trainable = value

    def _untrack(self, key: str, old: Any, new: list[Any]) -> None:
        """An attribute given another value: the Variables and layers it held that no
        other attribute holds are no longer the layer's (as in Keras 2: a ``build`` run
        twice, ``self.w = self.add_weight(...)``, keeps only the second weight)."""
        gone = [leaf for leaf in _tracked_leaves(old) if all(leaf is not n for n in new)]
        if not gone:
            return
        held = [
            leaf
            for name, v in self.__dict__.items()
            if name != key and not name.startswith("_")
            for leaf in _tracked_leaves(v)
        ]
        tracked = self._tracked
        for leaf in gone:
            if all(leaf is not h for h in held):
                tracked[:] = [t for t in tracked if t is not leaf]

    # --- building and calling ---------------------------------------------------------------

    _scoped_build = True  # build runs under the layer's name scope

    def build(self, input_shape: Any) -> None:
        """Make the weights for inputs of this shape (subclasses override)."""
        self.built = True

    def call(self, inputs: Any) -> Any:
        return inputs

    def __call__(self, inputs: Any, training: Any = None) -> Any:
        """Build the layer on its first input, then ``call`` it. An error raised inside
        comes out with the layer and its arguments added to the message, as in Keras 2
        (see :mod:`.call_errors`). Generated code calls :meth:`_plain_call` instead (the
        same steps without the ``try``, which it cannot run)."""
        if isinstance(inputs, KerasTensor) or (
            isinstance(inputs, (list, tuple)) and any(isinstance(i, KerasTensor) for i in inputs)
        ):
            return self._symbolic_call(inputs, training)
        if not isinstance(inputs, np.ndarray) and python_numbers(inputs):
            inputs = tensor(inputs)  # Keras converts Python numbers: floats are float32
        outer = not _IN_CALL[0]
        if outer:  # a call from outside any layer's call: the last one's losses go
            self._clear_losses()
            _IN_CALL[0] = True
        try:
            if not self.built:
                return self._first_call(inputs, training)
            try:  # (in this frame: recorded_call looks at the frame that called the layer)
                if replay.RECORDING:  # called by a tape's block: its pullback kept
                    given = {} if training is None else {"training": training}
                    found = replay.recorded_call(self, (inputs,), given)
                    if found is not replay.NOT_RECORDED:
                        return found
                return self._regularized_call(inputs, training)
            except Exception as error:
                raise self._call_error(error, inputs, training) from None
        finally:
            if outer:
                _IN_CALL[0] = False

    def _plain_call(self, inputs: Any, training: Any = None) -> Any:
        """What generated code runs for ``Layer.__call__`` (``super().__call__(x)`` in a
        layer that overrides it, a call ``_s2s_forward`` does not redirect)."""
        if isinstance(inputs, KerasTensor) or (
            isinstance(inputs, (list, tuple)) and any(isinstance(i, KerasTensor) for i in inputs)
        ):
            return self._symbolic_call(inputs, training)
        if not isinstance(inputs, np.ndarray) and python_numbers(inputs):
            inputs = tensor(inputs)  # Keras converts Python numbers: floats are float32
        if not self.built:
            self._build_for(input_shape(inputs))
        if replay.RECORDING:  # called by a tape's block: its pullback kept for the tape
            given = {} if training is None else {"training": training}
            found = replay.recorded_call(self, (inputs,), given)
            if found is not replay.NOT_RECORDED:
                return found
        if self._regularized:  # its penalties added to its losses
            return self._regularized_call(inputs, training)
        if self._expects_training:
            return self.call(inputs, training=training)
        return self.call(inputs)

    def _regularized_call(self, inputs: Any, training: Any = None) -> Any:
        """``call``, then the penalties of the regularizers added with ``add_loss``: what
        ``__call__`` runs (the first call too), and what differentiated code runs for a
        layer with regularizers (the reads of those values carry their gradients back to
        the weights and outputs)."""
        if self._expects_training:
            out = self.call(inputs, training=training)
        else:
            out = self.call(inputs)
        for weight, penalty in self._regularized:
            if weight is None:  # the activity regularizer: of the outputs
                self.add_loss(penalty(out) / np.shape(out)[0])
            else:
                self.add_loss(penalty(weight))
        return out

    def _first_call(self, inputs: Any, training: Any) -> Any:
        """Build, then call, under the layer's name scope (Keras 2's): the Variables made
        by ``build``, by ``call``, or by the sub-layers it builds are named
        ``'layer/...'``, ``'model/layer/...'``. A ``Sequential`` opens no scope."""
        scope = name_scope(self.name) if self._scoped_build else contextlib.nullcontext()
        try:
            with scope:
                with unrecorded():
                    self._build_in_call(input_shape(inputs))
                self.built = True
                return self._regularized_call(inputs, training)
        except Exception as error:
            raise self._call_error(error, inputs, training) from None

    def _build_in_call(self, shape: Any) -> None:
        """``build`` as the first call runs it (a ``Model`` without a ``build`` of its
        own builds its sub-layers in the call that follows)."""
        self.build(shape)

    def _call_error(self, error: Exception, inputs: Any, training: Any) -> Any:
        given = {"training": training} if self._expects_training else {}
        return call_errors.extended(self, error, (inputs,), given)

    def _s2s_forward(
        self, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
        """What differentiated code calls for ``layer(x)``: ``layer.call`` directly, as
        ``__call__`` would for a built layer called on arrays (one dispatch less)."""
        if (
            not self.built
            or len(args) != 1
            or type(self).__call__ is not Layer.__call__
            or labels
            and labels != (0,)
            or kwargs
            and (len(kwargs) > 1 or "training" not in kwargs)
            or type(args[0]) is not np.ndarray  # (an array: the common case)
            and isinstance(args[0], (KerasTensor, list, tuple, dict))
        ):
            return None
        if self._regularized:
            return self._regularized_call, args, {"training": kwargs.get("training")}
        if self._expects_training:
            return self.call, args, {"training": kwargs.get("training")}
        return self.call, args, {}

    def _build_for(self, shape: Any) -> None:
        """Build for inputs of this shape (in generated code: the layer's first call)."""
        # Keras names the Variables that build makes 'layer/...'
        scope = name_scope(self.name) if self._scoped_build else contextlib.nullcontext()
        with unrecorded(), scope:
            self._build_in_call(shape)
        self.built = True

    def _symbolic_call(self, inputs: Any, training: Any = None) -> KerasTensor:
        if isinstance(inputs, (list, tuple)):
            example: Any = [_example(i) for i in inputs]
            dtype = inputs[0].dtype
        else:
            example = _example(inputs)
            dtype = inputs.dtype
        out = np.asarray(self(example))
        shape = (None, *out.shape[1:]) if out.ndim else ()
        calls = getattr(self, "_symbolic_calls", 0)
        self._symbolic_calls = calls + 1
        # what summary() shows ('multiple' for a layer whose calls give other shapes)
        if calls == 0 or getattr(self, "_output_shape", None) == shape:
            self._output_shape: Any = shape
        else:
            self._output_shape = "multiple"
        dtype = out.dtype if out.size else dtype
        made = KerasTensor(shape, dtype, self, inputs, node_index=calls)
        made.training = training
        self._inbound = (inputs, made)
        return made

    @property
    def output(self) -> Any:
        """The symbolic output of the layer's call in a functional graph (or in a
        ``Sequential`` model whose input shape is declared)."""
        inbound = self.__dict__.get("_inbound")
        if inbound is None:
            raise AttributeError(f"Layer {self.name} has no inbound nodes.")
        return inbound[1]

    @output.setter
    def output(self, value: Any) -> None:  # an attribute of one's own named ``output``
        self._inbound = (None, value)

    @property
    def input(self) -> Any:
        """The symbolic input of the layer's call in a functional graph."""
        inbound = self.__dict__.get("_inbound")
        if inbound is None:
            raise AttributeError(f"Layer {self.name} is not connected, no input to return.")
        return inbound[0]

    @input.setter
    def input(self, value: Any) -> None:
        self._inbound = (value, None)

    # --- weights ----------------------------------------------------------------------------

    def add_weight(
        self,
        name: str | None = None,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        trainable: bool = True,
        **kwargs: Any,
    ) -> Variable:
        """A new Variable of this layer (``'<layer>/<name>:0'`` when made by ``build``)."""
        dtype = np.dtype(dtype or self._dtype)
        init = initializers.get(initializer or "glorot_uniform")
        value = init(tuple(shape or ()), dtype=dtype)
        # under the layer's name scope in build ('dense/kernel:0'), as in Keras
        weight = Variable(value, trainable=trainable, name=name or "Variable")
        self._tracked.append(weight)
        penalty = regularizers.get(regularizer)
        if penalty is not None:
            self._regularized.append((weight, penalty))
        return weight

    @property
    def trainable_weights(self) -> list[Variable]:
        memo = self.__dict__.get("_trainable_memo")
        if memo is not None and memo.stamp == _TREE[0]:  # the tree as the last walk found it
            return list(memo.found)
        found: list[Variable] = []
        seen: set[int] = set()
        self._trainable_into(found, seen)
        if _OWN_LIST not in seen:
            self.__dict__["_trainable_memo"] = _Memo(_TREE[0], tuple(found))
        return found

    def _trainable_into(self, found: list[Variable], seen: set[int]) -> None:
        """The layer's trainable Variables, then its sub-layers' (each once), into ``found``."""
        if not self.trainable:
            return
        self._own_trainable_into(found, seen)
        self._sublayers_trainable_into(found, seen)

    def _own_trainable_into(self, found: list[Variable], seen: set[int]) -> None:
        for item in self._tracked:
            if isinstance(item, Variable) and item.trainable and id(item) not in seen:
                seen.add(id(item))
                found.append(item)

    def _sublayers_trainable_into(self, found: list[Variable], seen: set[int]) -> None:
        for layer in self._sublayers():
            if type(layer).trainable_weights is Layer.trainable_weights:
                layer._trainable_into(found, seen)
                continue
            seen.add(_OWN_LIST)
            for item in layer.trainable_weights:  # a layer that defines its own
                if id(item) not in seen:
                    seen.add(id(item))
                    found.append(item)

    @property
    def non_trainable_weights(self) -> list[Variable]:
        own = [w for w in self._tracked if isinstance(w, Variable)]
        own = own if not self.trainable else [w for w in own if not w.trainable]
        return _unique(own + [w for s in self._sublayers() for w in s.non_trainable_weights])

    @property
    def weights(self) -> list[Variable]:
        return self.trainable_weights + self.non_trainable_weights

    @property
    def variables(self) -> list[Variable]:  # type: ignore[override]
        return self.weights

    @property
    def trainable_variables(self) -> list[Variable]:  # type: ignore[override]
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list[Variable]:  # type: ignore[override]
        return self.non_trainable_weights

    @property
    def losses(self) -> list[Any]:
        """The losses the last call added (``add_loss``), then the penalties of the
        weights' regularizers (computed now, from the weights as they are), then the
        sub-layers'."""
        own = list(self._losses)
        if not own:  # not called since the losses were cleared: the weights as they are
            own += [penalty(w) for w, penalty in self._regularized if w is not None]
        return own + [loss for s in self._sublayers() for loss in s.losses]

    def add_loss(self, loss: Any) -> None:
        self._losses.append(loss)
        _LOSSES_ADDED[0] += 1

    def _clear_losses(self) -> None:
        """Forget the losses ``add_loss`` collected, here and in the sub-layers (Keras
        does at each call made from outside any layer's call). Skipped when nothing was
        added since the last clearing and the tree is the same."""
        if self.__dict__.get("_cleared_at") == (_TREE[0], _LOSSES_ADDED[0]):
            return
        if self._losses:
            self._losses = []
        for layer in self._sublayers():
            layer._clear_losses()
        self.__dict__["_cleared_at"] = (_TREE[0], _LOSSES_ADDED[0])

    def get_config(self) -> dict[str, Any]:
        """What ``from_config`` needs to make the layer again (Keras 2's base keys; a
        subclass adds its own arguments)."""
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        """A new layer of this class from ``get_config()``'s dict (its ``__init__`` must
        take the base keys too: ``**kwargs`` passed to ``super().__init__``)."""
        try:
            return cls(**config)
        except TypeError as error:
            raise TypeError(
                f"Error when deserializing class '{cls.__name__}' using config={config}."
                f"\n\nException encountered: {error}"
            ) from error

    def get_weights(self) -> list[np.ndarray]:
        return [w.numpy() for w in self.weights]

    def set_weights(self, values: Any) -> None:
        for w, v in zip(self.weights, values):
            w.assign(v)

    def _sublayers(self) -> list[Layer]:
        return [t for t in self._tracked if isinstance(t, Layer)]

    @property
    def dtype(self) -> str:
        return self._dtype.name

    def count_params(self) -> int:
        return int(sum(np.prod(w.shape) for w in self.weights))


Layer.__call__._s2s_plain = Layer._plain_call  # type: ignore[attr-defined]


class InputLayer(Layer):
    """The first layer of a ``Sequential`` model: declares the input shape."""

    def __init__(self, input_shape: Any = None, **kwargs: Any) -> None:
        super().__init__(input_shape=input_shape, **kwargs)


def _tracked_leaves(value: Any) -> list[Any]:
    if isinstance(value, (Variable, Layer)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _tracked_leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _tracked_leaves(item)]
    return []


def _unique(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if all(item is not o for o in out):
            out.append(item)
    return out
