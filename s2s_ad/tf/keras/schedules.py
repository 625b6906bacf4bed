"""``keras.optimizers.schedules``: learning rates as functions of the optimizer's step
(``optimizer.iterations``), computed in float32 as Keras 2 computes them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...variable import Tensor, tensor


class LearningRateSchedule:
    """A learning rate that depends on the step; subclasses define ``__call__(step)``."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


def _f32(value: Any) -> np.float32:
    return np.float32(np.asarray(value))


class _RateDecay(LearningRateSchedule):
    """A rate decayed by ``decay_rate`` per ``decay_steps`` steps (whole periods only with
    ``staircase``)."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        decay_rate: float,
        staircase: bool = False,
        name: str | None = None,
    ) -> None:
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def _periods(self, step: Any) -> Any:
        """``step / decay_steps`` in float32, floored with ``staircase``."""
        p = _f32(step) / _f32(self.decay_steps)
        return np.floor(p) if self.staircase else p


class ExponentialDecay(_RateDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the exponent
    floored with ``staircase``)."""

    def __call__(self, step: Any) -> Tensor:
        p = self._periods(step)
        return tensor(_f32(self.initial_learning_rate) * _f32(self.decay_rate) ** p)


class InverseTimeDecay(_RateDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``."""

    def __call__(self, step: Any) -> Tensor:
        p = self._periods(step)
        one = np.float32(1.0)
        return tensor(_f32(self.initial_learning_rate) / (one + _f32(self.decay_rate) * p))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` up to ``boundaries[0]`` (included), ``values[1]`` up to
    ``boundaries[1]``, ..., ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries: list[Any], values: list[Any], name: str | None = None) -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError("The length of boundaries should be 1 less than the length of values")
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        now = np.asarray(step)
        for boundary, value in zip(self.boundaries, self.values):
            if now <= boundary:
                return tensor(value)
        return tensor(self.values[-1])


class PolynomialDecay(LearningRateSchedule):
    """From ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps``:
    ``(initial - end) * (1 - step / decay_steps) ** power + end``."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        end_learning_rate: float = 0.0001,
        power: float = 1.0,
        cycle: bool = False,
        name: str | None = None,
    ) -> None:
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        now, steps = _f32(step), _f32(self.decay_steps)
        if self.cycle:
            multiplier = np.float32(1.0) if now == 0 else np.ceil(now / steps)
            steps = steps * multiplier
        else:
            now = min(now, steps)
        start, end = _f32(self.initial_learning_rate), _f32(self.end_learning_rate)
        fraction = (np.float32(1.0) - now / steps) ** _f32(self.power)
        return tensor((start - end) * fraction + end)


class CosineDecay(LearningRateSchedule):
    """``initial_learning_rate * ((1 - alpha) * (1 + cos(pi * step / decay_steps)) / 2
    + alpha)``, the step capped at ``decay_steps``."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        alpha: float = 0.0,
        name: str | None = None,
    ) -> None:
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        fraction = min(_f32(step), _f32(self.decay_steps)) / _f32(self.decay_steps)
        cosine = np.float32(0.5) * (np.float32(1.0) + np.cos(np.float32(math.pi) * fraction))
        alpha = _f32(self.alpha)
        return tensor(_f32(self.initial_learning_rate) * ((1 - alpha) * cosine + alpha))


__all__ = [
    "CosineDecay",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
]
