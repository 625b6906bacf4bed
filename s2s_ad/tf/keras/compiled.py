"""What ``Model.compile`` gives a custom ``train_step``: ``compiled_loss`` (the loss plus
the regularization losses, whose running mean the ``loss`` metric keeps) and
``compiled_metrics`` (the metrics named in ``compile``, updated together), as Keras 2's
``LossesContainer`` and ``MetricsContainer`` do."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import metrics as metrics_module


class CompiledLoss:
    """``model.compiled_loss(y_true, y_pred, sample_weight=None,
    regularization_losses=None)``: the loss, plus the regularization losses; each call
    adds the value to the ``loss`` metric, weighted by the batch size (what ``fit``
    logs as the epoch's running loss)."""

    def __init__(self, loss: Any) -> None:
        self.loss = loss
        self.metric = metrics_module.Mean(name="loss")

    def __call__(
        self,
        y_true: Any,
        y_pred: Any,
        sample_weight: Any = None,
        regularization_losses: Any = None,
    ) -> Any:
        if sample_weight is None:
            value = self.loss(y_true, y_pred)
        else:
            value = self.loss(y_true, y_pred, sample_weight=sample_weight)
        if regularization_losses:
            value = value + sum(regularization_losses)
        self.metric.update_state(value, sample_weight=_batch(y_pred))
        return value

    @property
    def metrics(self) -> list[Any]:
        return [self.metric]

    def reset_state(self) -> None:
        self.metric.reset_state()


class CompiledMetrics(list):  # type: ignore[type-arg]
    """The metrics given to ``compile`` (a list of them): ``update_state(y_true,
    y_pred, sample_weight=None)`` updates each; the ``sample_weight`` weighs only the
    ``weighted_metrics`` (as Keras 2: those given as ``metrics`` ignore it)."""

    def __init__(self, metrics: Any = (), weighted: Any = ()) -> None:
        metrics, weighted = list(metrics), list(weighted)
        super().__init__(metrics + weighted)
        self.weighted = weighted

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        weighted = self.weighted
        for metric in self:
            if sample_weight is None or all(metric is not w for w in weighted):
                metric.update_state(y_true, y_pred)
            else:
                metric.update_state(y_true, y_pred, sample_weight=sample_weight)

    @property
    def metrics(self) -> list[Any]:
        return list(self)

    def reset_state(self) -> None:
        for metric in self:
            metric.reset_state()


def _batch(y_pred: Any) -> float:
    shape = np.shape(y_pred)
    return float(shape[0]) if shape else 1.0
