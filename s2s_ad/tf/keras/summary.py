"""``Model.summary()`` in Keras 2's layout.

A ruled table of the model's layers (name and class, output shape, parameter count; the
layers each takes its inputs from when the model is a functional graph that is not a
chain), then the total, trainable and non-trainable parameter counts with the bytes
they take::

    Model: "classifier"
    _________________________________________________________________
     Layer (type)                Output Shape              Param #
    =================================================================
     dense (Dense)               (None, 10)                50
    ...

Columns end at fixed fractions of ``line_length`` (65 characters for a chain, 98 with
the ``Connected to`` column); a value too wide for its column continues on the next
line, broken after ``'),'``-like separators where there is one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_CHAIN_POSITIONS = (0.45, 0.85, 1.0)
_GRAPH_POSITIONS = (0.3, 0.6, 0.7, 1.0)
_BREAKS = ("),", "},", "],", "',")


def summarize(
    model: Any,
    line_length: int | None = None,
    positions: Any = None,
    print_fn: Callable[..., Any] | None = None,
) -> None:
    """Print ``model``'s table through ``print_fn`` (``print`` by default), one line per
    call.

    Raises:
        ValueError: For a subclassed model that was never called (it has no layers'
            weights yet), as Keras says.
    """
    if not model.built:
        raise ValueError(
            "This model has not yet been built. Build the model first by calling `build()` "
            "or by calling the model on a batch of data."
        )
    emit = print_fn or print
    chain = _is_chain(model)
    width = line_length or (65 if chain else 98)
    fractions = positions or (_CHAIN_POSITIONS if chain else _GRAPH_POSITIONS)
    ends = [int(width * p) for p in fractions] if fractions[-1] <= 1 else list(fractions)
    header = ["Layer (type)", "Output Shape", "Param #"]
    if not chain:
        header.append("Connected to")
    emit(f'Model: "{model.name}"')
    emit("_" * width)
    for line in _row_lines(header, ends):
        emit(line)
    emit("=" * width)
    for fields in _rows(model, chain):
        for line in _row_lines(fields, ends):
            emit(line)
        emit(" " * width)
    emit("=" * width)
    weights = _unique(model.weights)
    trainable = _unique(model.trainable_weights)
    trained = {id(w) for w in trainable}
    frozen = [w for w in weights if id(w) not in trained]
    for label, group in (("Total", weights), ("Trainable", trainable), ("Non-trainable", frozen)):
        count = sum(int(np.prod(w.shape)) for w in group)
        size = sum(int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize for w in group)
        emit(f"{label} params: {count} ({_readable(size)})")
    emit("_" * width)


def _rows(model: Any, chain: bool) -> list[list[str]]:
    """The fields of each row, in the order of Keras's layers (a functional model's
    inputs among them)."""
    rows = []
    for item in _ordered(model):
        if not hasattr(item, "count_params"):  # a symbolic input: its InputLayer
            row = [f"{item.name} (InputLayer)", f"[{tuple(item.shape)}]", "0"]
            rows.append(row if chain else [*row, "[]"])
            continue
        shape = getattr(item, "_output_shape", "multiple")
        row = [f"{item.name} ({type(item).__name__})", str(shape), str(item.count_params())]
        rows.append(row if chain else [*row, _connections(model, item)])
    return rows


def _ordered(model: Any) -> list[Any]:
    """A functional model's inputs and layers as Keras orders them: by depth (the longest
    way to an output), deepest first, ties in the order a depth-first walk from the
    outputs finishes them; the layers of other models as they are."""
    nodes = getattr(model, "_node_inputs", None)
    if nodes is None or getattr(model, "_output_index", None) is None:
        return list(model.layers)
    parents = {id(out): sources for _, sources, out in nodes}
    made_by = {id(out): layer for layer, _, out in nodes}
    finished: list[Any] = []

    def visit(value: Any) -> None:
        if any(value is f for f in finished):
            return
        for parent in parents.get(id(value), ()):
            visit(parent)
        finished.append(value)

    for value in _outputs(model):
        visit(value)
    depth = {id(value): 0 for value in finished}
    for value in reversed(finished):
        for parent in parents.get(id(value), ()):
            depth[id(parent)] = max(depth[id(parent)], depth[id(value)] + 1)
    items: list[Any] = []
    item_depth: dict[int, int] = {}
    for value in finished:
        item = made_by.get(id(value), value)
        if not any(item is i for i in items):
            items.append(item)
        item_depth[id(item)] = max(item_depth.get(id(item), 0), depth[id(value)])
    order = {id(item): k for k, item in enumerate(items)}
    return sorted(items, key=lambda item: (-item_depth[id(item)], order[id(item)]))


def _outputs(model: Any) -> list[Any]:
    """A functional model's symbolic outputs, in order."""
    index = model._output_index
    known = [*model._given_inputs, *(out for _, _, out in model._node_inputs)]
    return [known[k] for k in (index if isinstance(index, list) else [index])]


def _inputs(model: Any) -> list[Any]:
    """The symbolic inputs of a functional model (none for the others)."""
    return list(getattr(model, "_given_inputs", None) or [])


def _connections(model: Any, layer: Any) -> str:
    """``"['dense_1[0][0]', 'dense_2[0][0]']"``: the values each call of ``layer`` in the
    graph takes, by the layer that made them and the call of it."""
    names = []
    for node_layer, sources, _ in getattr(model, "_node_inputs", ()):
        if node_layer is layer:
            names += [f"{s.name}[{s.node_index}][0]" for s in sources]
    return str(names)


def _is_chain(model: Any) -> bool:
    """Whether each layer takes the one value the layer before it made (a ``Sequential``
    or subclassed model always counts as one, as in Keras)."""
    node_inputs = getattr(model, "_node_inputs", None)
    if node_inputs is None or getattr(model, "_output_index", None) is None:
        return True
    if len(_inputs(model)) != 1 or isinstance(model._output_index, list):
        return False
    previous = _inputs(model)[0]
    seen: list[Any] = []
    for layer, sources, output in node_inputs:
        if len(sources) != 1 or sources[0] is not previous or any(layer is s for s in seen):
            return False
        seen.append(layer)
        previous = output
    return True


def _row_lines(fields: list[str], ends: list[int]) -> list[str]:
    """The lines of one row: each field in its column, what does not fit continued on
    the next line."""
    left = list(fields)
    lines = []
    while any(left):
        line = ""
        for col, text in enumerate(left):
            start = ends[col - 1] if col else 0
            last = col == len(ends) - 1
            room = ends[col] - start - (0 if last else 2) - (1 if col == 0 else 0)
            cut = room
            piece = text[:cut]
            found = [piece.find(b) + len(b) for b in _BREAKS if piece.find(b) >= 0]
            if found:
                cut = min(found)
                piece = piece[:cut]
            line += (" " if col == 0 else "") + piece
            left[col] = text[cut:]
            line += " " * (ends[col] - len(line))
        lines.append(line)
    return lines


def _readable(size: float) -> str:
    """``'88.00 Byte'``, ``'64.49 KB'``: a byte count in the largest unit below 1024."""
    for unit in ("Byte", "KB", "MB", "GB", "TB"):
        if size < 1024:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _unique(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if all(item is not o for o in out):
            out.append(item)
    return out
