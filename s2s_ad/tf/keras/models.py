"""``keras.Model`` (subclassed, or functional from ``keras.Input``) and ``Sequential``,
with ``compile``/``fit``/``evaluate``/``predict`` driven by the tape."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...replay import unrecorded
from ...tape import GradientTape
from ...variable import Variable, tensor
from ..data import Dataset
from ..module import outside_scopes
from . import losses as losses_module
from . import metrics as metrics_module
from . import optimizers as optimizers_module
from .base import InputLayer, KerasTensor, Layer, _unique, fresh_names
from .callbacks import CallbackList, History
from .compiled import CompiledLoss, CompiledMetrics
from .progbar import Progbar, verbosity
from .summary import summarize
from .utils import unpack_x_y_sample_weight

__all__ = ["History", "Model", "Sequential"]


class Model(Layer):
    """A layer with training methods. Subclass it and define ``call``, or build it from
    symbolic values: ``Model(inputs=keras.Input(shape=(3,)), outputs=...)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        inputs = kwargs.pop("inputs", args[0] if args else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        super().__init__(**kwargs)
        self._nodes: list[tuple[Any, Any]] = []
        self._node_training: list[Any] = []  # a training mode fixed in the graph, or None
        self._output_index: Any = None
        self.optimizer: Any = None
        self.loss: Any = None
        self.compiled_loss: Any = None
        self.compiled_metrics: CompiledMetrics = CompiledMetrics()
        if inputs is not None and outputs is not None:
            self._build_graph(inputs, outputs)

    # --- functional models ------------------------------------------------------------------

    def _build_graph(self, inputs: Any, outputs: Any) -> None:
        """Order the layer calls between the symbolic inputs and outputs: node ``k`` computes
        value ``k + n_inputs`` from the values at its input positions."""
        given = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        order: list[KerasTensor] = []

        def visit(t: KerasTensor) -> None:
            if any(t is o for o in order) or any(t is g for g in given):
                return
            if t.layer is None:
                raise ValueError("a functional model's output does not come from its inputs")
            for parent in t.inputs if isinstance(t.inputs, (list, tuple)) else [t.inputs]:
                visit(parent)
            order.append(t)

        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for out in outs:
            visit(out)
        known = given + order

        def position(t: KerasTensor) -> int:
            return next(k for k, v in enumerate(known) if v is t)

        layers: list[Layer] = []
        self._given_inputs = given  # for summary(): the InputLayer rows and connections
        self._node_inputs: list[tuple[Layer, list[KerasTensor], KerasTensor]] = []
        for t in order:
            if isinstance(t.inputs, (list, tuple)):
                source: Any = [position(p) for p in t.inputs]
            else:
                source = position(t.inputs)
            self._nodes.append((t.layer, source))
            self._node_training.append(t.training)
            parents = list(t.inputs) if isinstance(t.inputs, (list, tuple)) else [t.inputs]
            self._node_inputs.append((t.layer, parents, t))
            if all(t.layer is not seen for seen in layers):
                layers.append(t.layer)
                self._tracked.append(t.layer)
        self._graph_layers = layers
        self._n_inputs = len(given)
        # a list of one input (``inputs=model.inputs``) takes the tensor itself, as Keras
        self._multiple_inputs = isinstance(inputs, (list, tuple)) and len(inputs) > 1
        self._output_index = (
            [position(o) for o in outs] if isinstance(outputs, (list, tuple)) else position(outs[0])
        )
        self._graph_outputs = outs
        self.built = True

    def build(self, input_shape: Any) -> None:
        """Build a subclassed model's sub-layers by calling it on a zero batch of this
        shape (``None`` dimensions taken as 1), as Keras 2 builds it on a placeholder:
        their Variables are named without the model's name (``'dense/kernel:0'``)."""
        if self._output_index is None and type(self).call is not Model.call:
            # also from a build of the model's own (super().build(shape)), inside the
            # model's first call: Keras names the sub-layers' Variables 'block/...'
            with unrecorded(), outside_scopes(), fresh_names():
                self.call(_zeros(input_shape))
        self.built = True

    def _build_in_call(self, shape: Any) -> None:
        if type(self).build is Model.build:
            return  # the first call that follows builds the sub-layers
        self.build(shape)

    # --- weights: Keras 2 lists a model's by layer (each layer's own list), then its own

    def _trainable_into(self, found: list[Variable], seen: set[int]) -> None:
        """Its layers' trainable Variables first, then its own (``add_weight``)."""
        if not self.trainable:
            return
        self._sublayers_trainable_into(found, seen)
        self._own_trainable_into(found, seen)

    @property
    def non_trainable_weights(self) -> list[Variable]:
        layers = self._sublayers()
        own = [w for w in self._tracked if isinstance(w, Variable)]
        frozen = [w for layer in layers for w in layer.non_trainable_weights]
        if self.trainable:
            return _unique(frozen + [w for w in own if not w.trainable])
        # a frozen model: every Variable, the trainable ones first
        trainable = [w for layer in layers for w in layer.trainable_weights]
        trainable += [w for w in own if w.trainable]
        return _unique(trainable + frozen + [w for w in own if not w.trainable])

    @property
    def weights(self) -> list[Variable]:
        """Each layer's weights in turn (``get_weights``/``set_weights`` order), then the
        model's own."""
        own = [w for w in self._tracked if isinstance(w, Variable)]
        by_layer = [w for layer in self._sublayers() for w in layer.weights]
        return _unique(
            by_layer + [w for w in own if w.trainable] + [w for w in own if not w.trainable]
        )

    @property
    def inputs(self) -> Any:
        """The symbolic inputs of a functional model (or of a ``Sequential`` model whose
        input shape is declared), as a list."""
        given = self.__dict__.get("_given_inputs")
        if given is None:
            raise AttributeError(f"Model {self.name} has no symbolic inputs (not functional)")
        return list(given)

    @inputs.setter
    def inputs(self, value: Any) -> None:  # an attribute of one's own named ``inputs``
        self._given_inputs = value

    @property
    def outputs(self) -> Any:
        """The symbolic outputs of a functional model, as a list."""
        found = self.__dict__.get("_graph_outputs")
        if found is None:
            raise AttributeError(f"Model {self.name} has no symbolic outputs (not functional)")
        return list(found)

    @outputs.setter
    def outputs(self, value: Any) -> None:
        self._graph_outputs = value

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """A layer by its index in ``layers`` or by its name."""
        if index is not None and name is not None:
            raise ValueError("Provide only a layer name or a layer index.")
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model only has "
                    f"{len(layers)} layers."
                )
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[k.name for k in layers]}.")

    @property
    def layers(self) -> list[Layer]:
        if self._output_index is not None:
            return list(self._graph_layers)
        return self._sublayers()

    def call(self, inputs: Any, training: Any = None) -> Any:
        if self._output_index is None:
            raise NotImplementedError("subclasses of Model define call()")
        if self._multiple_inputs:
            values = list(inputs)
        elif isinstance(inputs, (list, tuple)) and len(inputs) == 1:
            values = [inputs[0]]
        else:
            values = [inputs]
        for (layer, source), fixed in zip(self._nodes, self._node_training):
            mode = training if fixed is None else fixed  # base_model(x, training=False)
            if isinstance(source, list):
                values.append(layer([values[k] for k in source], training=mode))
            else:
                values.append(layer(values[source], training=mode))
        if isinstance(self._output_index, list):
            return [values[k] for k in self._output_index]
        return values[self._output_index]

    # --- training -----------------------------------------------------------------------------

    def compile(
        self,
        optimizer: Any = "rmsprop",
        loss: Any = None,
        metrics: Any = None,
        run_eagerly: Any = None,
        **kwargs: Any,
    ) -> None:
        """Choose the optimizer, the loss and the metrics ``fit`` and ``evaluate`` use."""
        self.optimizer = optimizers_module.get(optimizer)
        self.loss = losses_module.get(loss) if loss is not None else None
        self.compiled_loss = CompiledLoss(self.loss) if self.loss is not None else None
        self.compiled_metrics = CompiledMetrics(
            [metrics_module.get(m, loss) for m in metrics or []],
            [metrics_module.get(m, loss) for m in kwargs.get("weighted_metrics") or []],
        )

    @property
    def metrics(self) -> list[Any]:
        """The ``loss`` metric and the compiled metrics, then the metrics the model holds
        in its attributes (``self.loss_tracker = keras.metrics.Mean(name="loss")``)."""
        found = list(self.compiled_loss.metrics) if self.compiled_loss is not None else []
        found += list(self.compiled_metrics)
        for name, value in vars(self).items():
            if not name.startswith("_") and isinstance(value, metrics_module.Metric):
                if all(value is not m for m in found):
                    found.append(value)
        return found

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        for metric in self.metrics:
            metric.reset_state()

    def train_step(self, data: Any) -> Any:
        """One step on a batch ``(x, y)`` or ``(x, y, sample_weight)``: the logs (each
        metric's result), as Keras 2's ``train_step``, which a subclass may override
        (the loss from ``compute_loss``, the logs from ``compute_metrics``)."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        if type(self).compute_loss is Model.compute_loss:
            with GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compiled_loss(
                    y, y_pred, sample_weight, regularization_losses=self.losses
                )
        else:  # a loss of the model's own
            with GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(x, y, y_pred, sample_weight)
        variables = self.trainable_variables
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def compute_loss(
        self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None
    ) -> Any:
        """The compiled loss of a batch plus the losses its call added (``add_loss``)."""
        if self.compiled_loss is None:
            return sum(self.losses) if self.losses else None
        return self.compiled_loss(y, y_pred, sample_weight, regularization_losses=self.losses)

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        """Update the compiled metrics with a batch; the logs (``get_metrics_result``)."""
        self.compiled_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self) -> dict[str, Any]:
        """Each metric's result by its name (a metric whose result is a dict gives its
        entries)."""
        logs: dict[str, Any] = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                logs.update(result)
            else:
                logs[metric.name] = result
        return logs

    def fit(
        self,
        x: Any = None,
        y: Any = None,
        batch_size: Any = None,
        epochs: int = 1,
        verbose: Any = "auto",
        shuffle: bool = True,
        validation_data: Any = None,
        callbacks: Any = None,
        initial_epoch: int = 0,
        validation_batch_size: Any = None,
        **kwargs: Any,
    ) -> History:
        """Train for ``epochs`` passes over ``(x, y)`` in batches (32 by default),
        calling the ``callbacks`` (``keras.callbacks``) as Keras does; the ``History``
        returned (also ``model.history``) holds the logs of each epoch."""
        own_step = type(self).train_step is not Model.train_step
        own_loss = type(self).compute_loss is not Model.compute_loss
        if self.optimizer is None or self.loss is None and not own_step and not own_loss:
            raise RuntimeError("You must compile your model before training/testing.")
        _refuse_options("fit", kwargs)
        if isinstance(x, Dataset):  # its batches, in its order (shuffled if it shuffles)
            shuffle = x.seed is not None
            x, y, kwargs["sample_weight"], batch_size = _from_dataset(x)
        if isinstance(validation_data, Dataset):
            validation_data = _from_dataset(validation_data)[:3]
            if validation_data[2] is None:
                validation_data = validation_data[:2]
        x = np.asarray(x)
        y = np.asarray(y) if y is not None else None  # a step of one's own may need none
        weights = kwargs.get("sample_weight")
        weights = np.asarray(weights, np.float32) if weights is not None else None
        split = kwargs.get("validation_split") or 0.0
        if split and validation_data is None:  # the last rows, before any shuffling
            at = int(len(x) * (1.0 - split))
            validation_data = (
                (x[at:], y[at:]) if weights is None else (x[at:], y[at:], weights[at:])
            )
            x, y = x[:at], y[:at] if y is not None else None
            weights = weights[:at] if weights is not None else None
        size = batch_size or 32
        steps = -(-len(x) // size)
        hooks = CallbackList(
            callbacks, self, {"verbose": verbose, "epochs": epochs, "steps": steps}
        )
        self.stop_training = False
        rng = np.random.default_rng(0)
        hooks.on_train_begin()
        logs: dict[str, Any] = {}
        shown = verbosity(verbose)
        for epoch in range(initial_epoch, epochs):
            hooks.on_epoch_begin(epoch)
            if shown:
                print(f"Epoch {epoch + 1}/{epochs}")
            bar = Progbar(steps, shown)
            seen = 0
            order = rng.permutation(len(x)) if shuffle else np.arange(len(x))
            self.reset_metrics()
            total, count = 0.0, 0
            for step in range(steps):
                hooks.on_train_batch_begin(step)
                rows = order[step * size : (step + 1) * size]
                # the batch, as Keras gives it: (x, y), (x, y, sample_weight), or x
                # alone without targets
                batch = tensor(x[rows]) if y is None else (tensor(x[rows]), tensor(y[rows]))
                if weights is not None and y is not None:
                    batch = (*batch, tensor(weights[rows]))
                out = self.train_step(batch)
                if isinstance(out, dict):  # the metrics' running values, as Keras logs
                    logs = {k: float(np.asarray(v)) for k, v in out.items()}
                else:  # a step that returns its loss: the epoch's running mean
                    total += float(out) * len(rows)
                    count += len(rows)
                    logs = {"loss": total / count}
                    logs.update({m.name: float(m.result()) for m in self.compiled_metrics})
                hooks.on_train_batch_end(step, logs)
                seen = step + 1
                bar.update(seen, logs)
                if self.stop_training:
                    break
            if validation_data is not None:
                scores = self.evaluate(
                    *validation_data[:2],
                    sample_weight=validation_data[2] if len(validation_data) > 2 else None,
                    batch_size=validation_batch_size or batch_size,
                    verbose=0,
                    return_dict=True,
                )
                logs.update({f"val_{k}": v for k, v in scores.items()})
            bar.update(seen, logs, finalize=True)
            hooks.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        hooks.on_train_end(logs)
        assert hooks.history is not None
        return hooks.history

    def test_step(self, data: Any) -> Any:
        """One evaluation step on a batch ``(x, y)`` or ``(x, y, sample_weight)``: the
        logs, as Keras 2's ``test_step`` (``evaluate`` calls a subclass's own, batch by
        batch)."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        self.compute_loss(x, y, y_pred, sample_weight)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def evaluate(
        self,
        x: Any = None,
        y: Any = None,
        batch_size: Any = None,
        verbose: Any = "auto",
        return_dict: bool = False,
        **kwargs: Any,
    ) -> Any:
        """The loss (and metrics) on ``(x, y)``, each row weighted by
        ``sample_weight`` when given."""
        _refuse_options("evaluate", kwargs)
        if isinstance(x, Dataset):
            x, y, kwargs["sample_weight"], batch_size = _from_dataset(x)
        weights = kwargs.get("sample_weight")
        own = type(self).test_step is not Model.test_step
        if own or weights is not None or type(self).compute_loss is not Model.compute_loss:
            return self._evaluate_steps(x, y, batch_size, verbose, return_dict, weights)
        x, y = np.asarray(x), np.asarray(y)
        size = batch_size or 32
        steps = -(-len(x) // size)
        bar = Progbar(steps, verbosity(verbose))  # timed from here
        # batch by batch, as Keras: each batch's loss with the losses its call added
        # (``add_loss``), averaged over the batches weighted by their sizes
        total, parts = 0.0, []
        for start in range(0, len(x), size):
            batch_x, batch_y = x[start : start + size], y[start : start + size]
            batch_pred = self(tensor(batch_x), training=False)
            batch_loss = float(self.loss(tensor(batch_y), batch_pred))
            batch_loss += sum(float(np.asarray(extra)) for extra in self.losses)
            total += batch_loss * len(batch_x)
            parts.append(np.asarray(batch_pred))
        y_pred = np.concatenate(parts) if parts else self.predict(x, verbose=0)
        scores = {"loss": total / max(len(x), 1)}
        for metric in self.compiled_metrics:
            metric.reset_state()
            metric.update_state(np.asarray(y), y_pred)
            scores[metric.name] = float(metric.result())
        bar.update(steps, scores, finalize=True)
        if return_dict:
            return scores
        return scores["loss"] if len(scores) == 1 else list(scores.values())

    def _evaluate_steps(
        self,
        x: Any,
        y: Any,
        batch_size: Any,
        verbose: Any,
        return_dict: bool,
        weights: Any = None,
    ) -> Any:
        """``evaluate`` through a ``test_step`` of the model's own: the metrics reset,
        the step called on each batch, the last batch's logs returned (Keras 2's)."""
        x = np.asarray(x)
        y = np.asarray(y) if y is not None else None
        size = batch_size or 32
        steps = -(-len(x) // size)
        bar = Progbar(steps, verbosity(verbose))
        self.reset_metrics()
        logs: dict[str, float] = {}
        for step in range(steps):
            rows = slice(step * size, (step + 1) * size)
            batch = tensor(x[rows]) if y is None else (tensor(x[rows]), tensor(y[rows]))
            if weights is not None and y is not None:
                batch = (*batch, tensor(np.asarray(weights, np.float32)[rows]))
            logs = {k: float(np.asarray(v)) for k, v in self.test_step(batch).items()}
        bar.update(steps, logs, finalize=True)
        if return_dict:
            return logs
        values = list(logs.values())
        return values[0] if len(values) == 1 else values

    def predict(self, x: Any, batch_size: Any = None, verbose: Any = "auto", **kwargs: Any) -> Any:
        if isinstance(x, Dataset):
            x, _, _, batch_size = _from_dataset(x)
        steps = -(-len(np.asarray(x)) // (batch_size or 32))
        bar = Progbar(steps, verbosity(verbose))
        out = self(tensor(np.asarray(x)), training=False)
        bar.update(steps, finalize=True)
        return np.asarray(out)

    def summary(
        self,
        line_length: int | None = None,
        positions: Any = None,
        print_fn: Any = None,
        **kwargs: Any,
    ) -> None:
        """Print the table of the layers, their output shapes and parameter counts, in
        Keras 2's layout (see :mod:`.summary`)."""
        summarize(self, line_length=line_length, positions=positions, print_fn=print_fn)


class Sequential(Model):
    """Layers applied one after the other; built on the first call (or at once when the
    first layer declares ``input_shape=``)."""

    _scoped_build = False  # its build calls its layers: they keep their own names, as in Keras

    def __init__(self, layers: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self._layers: list[Layer] = []
        self._declared: Any = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer: Layer) -> None:
        if isinstance(layer, KerasTensor):  # keras.Input(...) first: declares the shape
            if not self._layers:
                self._declared = tuple(layer.shape)
                self.build(self._declared)
            return
        self._layers.append(layer)
        self._tracked.append(layer)
        if len(self._layers) == 1 and getattr(layer, "_input_shape", None) is not None:
            self._declared = (None, *tuple(layer._input_shape))
        if self._declared is not None:
            self.build(self._declared)

    def pop(self) -> None:
        """Remove the last layer."""
        if not self.layers:
            raise TypeError("There are no layers in the model.")
        layer = self.layers[-1]
        self._layers = [k for k in self._layers if k is not layer]
        self._tracked[:] = [t for t in self._tracked if t is not layer]

    def build(self, input_shape: Any) -> None:
        """Build every layer by running a zero example of this shape through them (the
        output shapes summary() shows: with the batch size of ``input_shape``, ``None``
        when declared, the first input's otherwise, as in Keras 2)."""
        self.built = True
        batch = input_shape[0] if len(input_shape) else None
        x: Any = np.zeros(tuple(1 if d is None else d for d in input_shape), np.float32)
        for layer in self._layers:
            x = layer(x)
            layer._output_shape = (batch, *np.shape(x)[1:])
        self._output_shape = (batch, *np.shape(x)[1:])
        if self._declared is not None:  # the symbolic graph (``layer.output``, ``inputs``)
            value = KerasTensor((None, *tuple(input_shape)[1:]), np.float32)
            self._given_inputs = [value]
            for layer in self._layers:
                if isinstance(layer, InputLayer):
                    continue
                made = KerasTensor(layer._output_shape, np.float32, layer, value)
                layer._inbound = (value, made)
                value = made
            self._graph_outputs = [value]

    @property
    def layers(self) -> list[Layer]:
        return [layer for layer in self._layers if not isinstance(layer, InputLayer)]

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not self._layers:
            return inputs
        # the first layer apart: differentiated code needs no gradient of the inputs
        # when they are constants (the loop's later layers take a varied x)
        x = self._layers[0](inputs, training=training)
        for layer in self._layers[1:]:
            x = layer(x, training=training)
        return x


# options of fit and evaluate that would change the numbers and are not modelled
_REFUSED = ("class_weight", "steps_per_epoch", "validation_steps", "validation_freq", "steps")


def _from_dataset(data: Dataset) -> tuple[Any, Any, Any, int]:
    """``(x, y, sample_weight, batch_size)`` of a ``tf.data.Dataset`` of ``x``, ``(x, y)``
    or ``(x, y, sample_weight)`` slices."""
    parts = list(data.parts)
    if data.single and isinstance(parts[0], np.ndarray) is False:
        raise NotImplementedError("a Dataset of nested structures as fit's data")
    x = parts[0]
    y = parts[1] if len(parts) > 1 else None
    weights = parts[2] if len(parts) > 2 else None
    return x, y, weights, data.size or 1


def _refuse_options(method: str, kwargs: dict[str, Any]) -> None:
    """Raise for an option given that is not modelled (rather than ignore it)."""
    for name in _REFUSED:
        if kwargs.get(name) is not None:
            raise NotImplementedError(f"Model.{method}({name}=...) is not supported by s2s_ad.tf")


def _zeros(shape: Any) -> Any:
    """A zero batch of ``shape`` (a list of them for a list of shapes)."""
    if isinstance(shape, list) and shape and isinstance(shape[0], (list, tuple)):
        return [_zeros(tuple(one)) for one in shape]
    return np.zeros(tuple(1 if d is None else d for d in shape), np.float32)
