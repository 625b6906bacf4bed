"""Optimizers ``SGD`` (with momentum), ``Adam`` and ``RMSprop``:
``apply_gradients(zip(grads, variables))`` or ``minimize(loss, var_list, tape=...)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...variable import Variable, tensor
from . import schedules  # keras.optimizers.schedules


class Optimizer:
    """Updates Variables from their gradients; slots are kept per Variable."""

    def __init__(self, learning_rate: Any = 0.001, name: str | None = None, **kwargs: Any):
        self.learning_rate = learning_rate
        self.name = name or type(self).__name__
        self.iterations = Variable(0, trainable=False, name="iteration", dtype=np.int64)
        self._slots: dict[int, dict[str, np.ndarray]] = {}

    @property
    def learning_rate(self) -> Any:
        """The rate; for a schedule (``keras.optimizers.schedules``, or any function of
        the step), the value the last step used (the first step's before any), as Keras
        2 gives it."""
        rate = self._learning_rate
        if callable(rate):
            last = max(int(self.iterations.numpy()) - 1, 0)
            return tensor(np.asarray(rate(last), dtype=np.float32))
        return rate

    @learning_rate.setter
    def learning_rate(self, rate: Any) -> None:
        self._learning_rate = rate

    lr = learning_rate

    def _rate(self) -> float:
        rate = self._learning_rate
        return float(rate(int(self.iterations.numpy())) if callable(rate) else rate)

    def _slot(self, var: Variable, name: str) -> np.ndarray:
        slots = self._slots.setdefault(id(var), {})
        if name not in slots:
            slots[name] = np.zeros(var.shape, dtype=var.dtype)
        return slots[name]

    def apply_gradients(self, grads_and_vars: Any, **kwargs: Any) -> Variable:
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        for grad, var in pairs:
            self._update(np.asarray(grad, dtype=var.dtype), var)
        self.iterations.assign_add(1)
        return self.iterations

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Variable:
        """One step on ``loss`` (a tensor computed under ``tape``, or a function)."""
        from ...tape import GradientTape

        variables = list(var_list() if callable(var_list) else var_list)
        if tape is None:
            with GradientTape() as tape:
                value = loss()
        else:
            value = loss
        grads = tape.gradient(value, variables)
        return self.apply_gradients(zip(grads, variables))

    def _update(self, grad: np.ndarray, var: Variable) -> None:
        raise NotImplementedError


class SGD(Optimizer):
    """``v = momentum * v - lr * g; var += v`` (plain steps without momentum)."""

    def __init__(
        self, learning_rate: Any = 0.01, momentum: float = 0.0, nesterov: bool = False, **kw: Any
    ) -> None:
        super().__init__(learning_rate, **kw)
        self.momentum, self.nesterov = float(momentum), nesterov

    def _update(self, grad: np.ndarray, var: Variable) -> None:
        lr = self._rate()
        if self.momentum == 0.0:
            var.assign_sub(lr * grad)
            return
        velocity = self.momentum * self._slot(var, "momentum") - lr * grad
        self._slots[id(var)]["momentum"] = velocity
        if self.nesterov:
            var.assign_add(self.momentum * velocity - lr * grad)
        else:
            var.assign_add(velocity)


class Adam(Optimizer):
    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        **kw: Any,
    ) -> None:
        super().__init__(learning_rate, **kw)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def _update(self, grad: np.ndarray, var: Variable) -> None:
        t = int(self.iterations.numpy()) + 1
        lr = self._rate() * np.sqrt(1 - self.beta_2**t) / (1 - self.beta_1**t)
        m = self.beta_1 * self._slot(var, "m") + (1 - self.beta_1) * grad
        v = self.beta_2 * self._slot(var, "v") + (1 - self.beta_2) * grad * grad
        self._slots[id(var)].update(m=m, v=v)
        var.assign_sub(lr * m / (np.sqrt(v) + self.epsilon))


class RMSprop(Optimizer):
    """``ms = rho * ms + (1 - rho) * g**2; var -= lr * g / sqrt(ms + epsilon)`` (Keras 2's
    epsilon is inside the square root)."""

    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = 1e-7,
        centered: bool = False,
        **kw: Any,
    ) -> None:
        super().__init__(learning_rate, **kw)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered

    def _update(self, grad: np.ndarray, var: Variable) -> None:
        lr = self._rate()
        ms = self.rho * self._slot(var, "rms") + (1 - self.rho) * grad * grad
        self._slots[id(var)]["rms"] = ms
        denominator = ms
        if self.centered:
            mg = self.rho * self._slot(var, "mg") + (1 - self.rho) * grad
            self._slots[id(var)]["mg"] = mg
            denominator = ms - mg * mg
        step = lr * grad / np.sqrt(denominator + self.epsilon)
        if self.momentum > 0.0:
            step = self.momentum * self._slot(var, "momentum") + step
            self._slots[id(var)]["momentum"] = step
        var.assign_sub(step)


__all__ = ["SGD", "Adam", "Optimizer", "RMSprop", "get", "schedules"]

_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop}


def get(identifier: Any) -> Optimizer:
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Unknown optimizer: {identifier!r}")
