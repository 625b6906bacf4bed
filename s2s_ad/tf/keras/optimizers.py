"""SGD and Adam with ``apply_gradients(zip(grads, variables))``."""

from __future__ import annotations

from typing import Any

import numpy as np


class SGD:
    def __init__(self, learning_rate: float = 0.01) -> None:
        self.learning_rate = learning_rate

    def apply_gradients(self, pairs: Any) -> None:
        for grad, var in pairs:
            if grad is not None:
                var.assign_sub(self.learning_rate * np.asarray(grad))


class Adam:
    def __init__(
        self,
        learning_rate: float = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
    ) -> None:
        self.learning_rate = learning_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.iterations = 0
        self._slots: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def apply_gradients(self, pairs: Any) -> None:
        pairs = [(g, v) for g, v in pairs if g is not None]
        self.iterations += 1
        t = self.iterations
        lr = self.learning_rate * np.sqrt(1 - self.beta_2**t) / (1 - self.beta_1**t)
        for grad, var in pairs:
            g = np.asarray(grad, dtype=var.dtype)
            m, v = self._slots.get(id(var), (np.zeros_like(g), np.zeros_like(g)))
            m = self.beta_1 * m + (1 - self.beta_1) * g
            v = self.beta_2 * v + (1 - self.beta_2) * g * g
            self._slots[id(var)] = (m, v)
            var.assign_sub(lr * m / (np.sqrt(v) + self.epsilon))
