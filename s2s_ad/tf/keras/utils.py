"""``keras.utils``: the helpers a custom ``train_step`` uses to take a batch apart
(``unpack_x_y_sample_weight``) and a few others of Keras 2's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..random import set_seed

__all__ = [
    "pack_x_y_sample_weight",
    "set_random_seed",
    "to_categorical",
    "unpack_x_y_sample_weight",
]


def unpack_x_y_sample_weight(data: Any) -> tuple[Any, Any, Any]:
    """``(x, y, sample_weight)`` from a batch ``x``, ``(x,)``, ``(x, y)`` or
    ``(x, y, sample_weight)``; what is missing is ``None``."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise ValueError(
        "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
        f"found: {data}"
    )


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """The batch ``fit`` would give: ``x`` alone, ``(x, y)`` or ``(x, y, sample_weight)``."""
    if y is None:
        return x if not isinstance(x, (list, tuple)) else (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def set_random_seed(seed: int) -> None:
    """Seed Python's, NumPy's and ``tf.random``'s generators."""
    import random

    random.seed(seed)
    np.random.seed(seed)
    set_seed(seed)


def to_categorical(y: Any, num_classes: int | None = None, dtype: str = "float32") -> Any:
    """One-hot rows of the integer labels ``y``."""
    labels = np.asarray(y, dtype=np.int64)
    if labels.ndim and labels.shape[-1] == 1 and labels.ndim > 1:
        labels = labels[..., 0]
    count = int(num_classes) if num_classes is not None else int(labels.max()) + 1
    return np.eye(count, dtype=dtype)[labels]
