"""Keras losses as callables ``loss(y_true, y_pred)`` (mean over the batch)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _log_softmax(logits: Any) -> Any:
    z = logits - np.max(logits, axis=-1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def _log_probabilities(y_pred: Any, from_logits: bool) -> Any:
    if from_logits:
        return _log_softmax(y_pred)
    return np.log(np.clip(y_pred, 1e-7, 1.0))


class MeanSquaredError:
    def __call__(self, y_true: Any, y_pred: Any) -> Any:
        return np.mean((y_true - y_pred) ** 2)


class CategoricalCrossentropy:
    def __init__(self, from_logits: bool = False) -> None:
        self.from_logits = from_logits

    def __call__(self, y_true: Any, y_pred: Any) -> Any:
        logp = _log_probabilities(y_pred, self.from_logits)
        return -np.mean(np.sum(y_true * logp, axis=-1))


class SparseCategoricalCrossentropy:
    def __init__(self, from_logits: bool = False) -> None:
        self.from_logits = from_logits

    def __call__(self, y_true: Any, y_pred: Any) -> Any:
        logp = _log_probabilities(y_pred, self.from_logits)
        labels = np.asarray(y_true).astype(np.int64).reshape(-1)
        rows = np.arange(labels.shape[0])
        picked = logp[rows, labels]
        return -np.mean(picked)
