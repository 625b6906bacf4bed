"""Keras losses: functions of ``(y_true, y_pred)`` giving one value per example (the mean
over the last axis), and classes whose call averages them over the batch."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import replay
from ...variable import tensor
from ..ops import reduce_mean, reduce_sum

_EPSILON = 1e-7


def _log_softmax(logits: Any, axis: int = -1) -> Any:
    z = logits - np.max(logits, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def _log_probabilities(y_pred: Any, from_logits: bool) -> Any:
    if from_logits:
        return _log_softmax(y_pred)
    probs = y_pred / np.sum(y_pred, axis=-1, keepdims=True)
    return np.log(np.clip(probs, _EPSILON, 1.0 - _EPSILON))


def _prediction(y_pred: Any) -> np.ndarray:
    """Predictions as a plain array (NumPy's reductions of a plain array are the fast
    ones) with TensorFlow's dtypes (lists of floats: float32)."""
    return np.asarray(tensor(y_pred))


def _labels(y_true: Any, dtype: np.dtype) -> np.ndarray:
    """Labels as a plain array of the predictions' dtype (float64 for other kinds)."""
    return np.asarray(y_true, dtype=dtype if dtype.kind == "f" else np.float64)


def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    y_pred = _prediction(y_pred)
    y_true = _labels(y_true, y_pred.dtype)
    error = y_pred - y_true
    # the mean over the last axis as a sum over the count (np.mean's dispatch costs more)
    return tensor(np.square(error).sum(axis=-1) / error.shape[-1])


def _mean_squared_error_over_batch(y_true: Any, y_pred: Any) -> Any:
    """``MeanSquaredError()(y_true, y_pred)``: :func:`mean_squared_error` averaged over
    the batch, the same operations in one function (what differentiated code calls:
    one generated function instead of five, see :meth:`Loss._s2s_forward`)."""
    y_pred = np.asarray(tensor(y_pred))
    y_true = np.asarray(y_true, dtype=y_pred.dtype if y_pred.dtype.kind == "f" else np.float64)
    error = y_pred - y_true
    return reduce_mean(tensor(np.square(error).sum(axis=-1) / error.shape[-1]))


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    y_pred = _prediction(y_pred)
    y_true = _labels(y_true, y_pred.dtype)
    return tensor(np.mean(np.abs(y_pred - y_true), axis=-1))


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    y_pred = _prediction(y_pred)
    y_true = _labels(y_true, y_pred.dtype)
    error = np.abs(y_pred - y_true)
    quadratic = np.minimum(error, delta)
    return tensor(np.mean(0.5 * quadratic**2 + delta * (error - quadratic), axis=-1))


def binary_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0
) -> Any:
    y_pred = _prediction(y_pred)
    y_true = _labels(y_true, y_pred.dtype)
    y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        per_entry = np.maximum(y_pred, 0.0) - y_pred * y_true + np.log1p(np.exp(-np.abs(y_pred)))
    else:
        p = np.clip(y_pred, _EPSILON, 1.0 - _EPSILON)
        per_entry = -(y_true * np.log(p) + (1.0 - y_true) * np.log(1.0 - p))
    return tensor(np.mean(per_entry, axis=-1))


def categorical_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0
) -> Any:
    y_pred = _prediction(y_pred)
    y_true = _labels(y_true, y_pred.dtype)
    classes = np.shape(y_pred)[-1]
    y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    return tensor(-np.sum(y_true * _log_probabilities(y_pred, from_logits), axis=-1))


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False) -> Any:
    y_pred = _prediction(y_pred)
    y_true = _labels(y_true, y_pred.dtype)
    logp = _log_probabilities(y_pred, from_logits)
    labels = np.asarray(y_true).astype(np.int64).reshape(np.shape(logp)[:-1])
    picked = np.where(np.arange(np.shape(logp)[-1]) == labels[..., None], 1.0, 0.0)
    return tensor(-np.sum(picked * logp, axis=-1))


def kl_divergence(y_true: Any, y_pred: Any) -> Any:
    y_pred = _prediction(y_pred)
    y_true = _labels(y_true, y_pred.dtype)
    t = np.clip(y_true, _EPSILON, 1.0)
    p = np.clip(y_pred, _EPSILON, 1.0)
    return tensor(np.sum(t * np.log(t / p), axis=-1))


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kl_divergence


class Reduction:
    """The ways a ``Loss`` reduces its per-example values (``keras.losses.Reduction``)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)


class Loss:
    """A loss function averaged over the batch (``reduction='sum_over_batch_size'``),
    summed (``'sum'``) or per example (``'none'``)."""

    def __init__(self, reduction: str = "sum_over_batch_size", name: str | None = None) -> None:
        self.reduction = reduction
        self.name = name

    def call(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if replay.RECORDING:  # called by a tape's block: its pullback kept for the tape
            given = {} if sample_weight is None else {"sample_weight": sample_weight}
            found = replay.recorded_call(self, (y_true, y_pred), given)
            if found is not replay.NOT_RECORDED:
                return found
        return self._value(y_true, y_pred, sample_weight)

    def _s2s_forward(
        self, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
        """What differentiated code calls for ``loss(y_true, y_pred)``: :meth:`_value`,
        as ``__call__`` does outside a tape's block (its generated code then carries no
        branch for the recording)."""
        if type(self).__call__ is not Loss.__call__:
            return None
        fused = type(self)._over_batch
        if (
            fused is not None
            and not kwargs
            and len(args) == 2
            and type(self).call is fused[0]
            and self.reduction in ("sum_over_batch_size", "auto")
        ):
            return fused[1], args, {}  # the loss's function and the mean, in one
        return self._value, args, kwargs

    # (the ``call`` of a loss class, the function that computes ``_value`` of that call
    # averaged over the batch in one body), for the classes that have one
    _over_batch: tuple[Any, Any] | None = None

    def _value(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        """The loss, reduced as ``reduction`` says."""
        per_example = self.call(y_true, y_pred)
        if sample_weight is not None:
            per_example = per_example * sample_weight
        if self.reduction == "none":
            return per_example
        if self.reduction == "sum":
            return reduce_sum(per_example)
        return reduce_mean(per_example)


class MeanSquaredError(Loss):
    def call(self, y_true: Any, y_pred: Any) -> Any:
        return mean_squared_error(y_true, y_pred)


MeanSquaredError._over_batch = (MeanSquaredError.call, _mean_squared_error_over_batch)


class MeanAbsoluteError(Loss):
    def call(self, y_true: Any, y_pred: Any) -> Any:
        return mean_absolute_error(y_true, y_pred)


class Huber(Loss):
    def __init__(self, delta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delta = delta

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return huber(y_true, y_pred, self.delta)


class BinaryCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.from_logits, self.label_smoothing = from_logits, label_smoothing

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return binary_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing)


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.from_logits, self.label_smoothing = from_logits, label_smoothing

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return categorical_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing)


class SparseCategoricalCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.from_logits = from_logits

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits)


class KLDivergence(Loss):
    def call(self, y_true: Any, y_pred: Any) -> Any:
        return kl_divergence(y_true, y_pred)


_BY_NAME = {
    "mean_squared_error": mean_squared_error,
    "mse": mean_squared_error,
    "mean_absolute_error": mean_absolute_error,
    "mae": mean_absolute_error,
    "huber": huber,
    "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "kl_divergence": kl_divergence,
}


def _batch_mean(fn: Any) -> Any:
    def loss(y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        per_example = fn(y_true, y_pred)
        if sample_weight is not None:  # each example weighted, divided by their count
            per_example = per_example * np.reshape(sample_weight, np.shape(per_example))
        return tensor(np.mean(per_example))

    loss.__name__ = getattr(fn, "__name__", "loss")
    return loss


def get(identifier: Any) -> Any:
    """A loss averaged over the batch, from a name, a function or a ``Loss``."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown loss function: {identifier!r}")
        identifier = _BY_NAME[identifier]
    if isinstance(identifier, type):
        return identifier()
    return _batch_mean(identifier)
