"""``keras.callbacks``: hooks ``Model.fit`` calls at the start and end of training, of
each epoch and of each batch, with the logs Keras gives them (``History``,
``LambdaCallback``, ``EarlyStopping``, and ``Callback`` to subclass)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback"]

Logs = dict[str, Any]


class Callback:
    """Override the hooks you need; ``self.model`` is the model being trained and
    ``self.params`` holds ``epochs``, ``steps`` and ``verbose``."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def on_train_begin(self, logs: Logs | None = None) -> None:
        """Before the first epoch."""

    def on_train_end(self, logs: Logs | None = None) -> None:
        """After the last epoch (``logs``: the last epoch's)."""

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        """Before epoch ``epoch`` (counted from 0)."""

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        """After epoch ``epoch``: ``logs`` has the loss, the metrics and the validation
        scores (``val_loss``...) of the epoch."""

    def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self.on_batch_end(batch, logs=logs)

    def on_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Before batch ``batch`` of the epoch (counted from 0)."""

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """After batch ``batch``: ``logs`` has the epoch's running loss and metrics."""


class History(Callback):
    """What ``fit`` returns: ``history`` maps each logged quantity to its value at the end
    of each epoch; ``epoch`` lists the epochs run."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[Any]] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self


class LambdaCallback(Callback):
    """A callback made of functions: ``on_epoch_begin(epoch, logs)``,
    ``on_epoch_end(epoch, logs)``, ``on_batch_begin(batch, logs)``, ``on_batch_end(batch,
    logs)``, ``on_train_begin(logs)``, ``on_train_end(logs)``."""

    def __init__(
        self,
        on_epoch_begin: Callable[..., Any] | None = None,
        on_epoch_end: Callable[..., Any] | None = None,
        on_batch_begin: Callable[..., Any] | None = None,
        on_batch_end: Callable[..., Any] | None = None,
        on_train_begin: Callable[..., Any] | None = None,
        on_train_end: Callable[..., Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        given = {
            "on_epoch_begin": on_epoch_begin,
            "on_epoch_end": on_epoch_end,
            "on_batch_begin": on_batch_begin,
            "on_batch_end": on_batch_end,
            "on_train_begin": on_train_begin,
            "on_train_end": on_train_end,
            **kwargs,
        }
        for hook, func in given.items():
            if func is not None:
                setattr(self, hook, func)


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs.

    Args:
        monitor: The logged quantity to watch (``'val_loss'`` by default).
        min_delta: The least change that counts as an improvement.
        patience: Epochs without improvement before stopping.
        verbose: Print the epoch training stopped at.
        mode: ``'min'``, ``'max'``, or ``'auto'`` (``max`` for accuracies and AUC).
        baseline: A value to beat: until it is, the wait is not reset.
        restore_best_weights: At the stop, put back the weights of the best epoch.
        start_from_epoch: Epochs to run before watching.
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        min_delta: float = 0.0,
        patience: int = 0,
        verbose: int = 0,
        mode: str = "auto",
        baseline: float | None = None,
        restore_best_weights: bool = False,
        start_from_epoch: int = 0,
    ) -> None:
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        if mode not in ("auto", "min", "max"):
            warnings.warn(
                f"EarlyStopping mode {mode} is unknown, fallback to auto mode.", stacklevel=2
            )
            mode = "auto"
        if mode == "auto":
            name = monitor.removeprefix("val_")
            mode = "max" if "acc" in name or name.startswith("auc") else "min"
        self.increasing = mode == "max"
        self.min_delta = abs(min_delta)
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf
        self.best_weights: list[Any] | None = None
        self.best_epoch = 0

    def _improves(self, value: float, reference: float) -> bool:
        if self.increasing:
            return bool(value - self.min_delta > reference)
        return bool(value + self.min_delta < reference)

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best = -np.inf if self.increasing else np.inf
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(logs or {})}",
                stacklevel=2,
            )
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()  # if nothing ever improves
        self.wait += 1
        if self._improves(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improves(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print(
                        "Restoring model weights from the end of the best epoch: "
                        f"{self.best_epoch + 1}."
                    )
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs: Logs | None = None) -> None:
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


class CallbackList:
    """The callbacks of one ``fit`` call, the ``History`` last, called in order."""

    def __init__(self, callbacks: Any, model: Any, params: dict[str, Any]) -> None:
        self.callbacks = list(callbacks or [])
        self.history = next((c for c in self.callbacks if isinstance(c, History)), None)
        if self.history is None:
            self.history = History()
            self.callbacks.append(self.history)
        for callback in self.callbacks:
            callback.set_model(model)
            callback.set_params(params)

    def on_train_begin(self, logs: Logs | None = None) -> None:
        for callback in self.callbacks:
            callback.on_train_begin(logs)

    def on_train_end(self, logs: Logs | None = None) -> None:
        for callback in self.callbacks:
            callback.on_train_end(logs)

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        for callback in self.callbacks:
            callback.on_epoch_begin(epoch, logs)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        for callback in self.callbacks:
            callback.on_epoch_end(epoch, dict(logs or {}))

    def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        for callback in self.callbacks:
            callback.on_train_batch_begin(batch, logs)

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        for callback in self.callbacks:
            callback.on_train_batch_end(batch, dict(logs or {}))
