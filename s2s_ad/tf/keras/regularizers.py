"""``keras.regularizers``: penalties on a layer's weights (``kernel_regularizer=``,
``add_weight(regularizer=...)``) or outputs (``activity_regularizer=``), added to the
layer's ``losses``."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["L1", "L1L2", "L2", "Regularizer", "get", "l1", "l1_l2", "l2"]


class Regularizer:
    """A penalty ``regularizer(x)``: a scalar."""

    def __call__(self, x: Any) -> Any:
        return 0.0

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Regularizer:
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x: Any) -> Any:
        total: Any = 0.0
        if self.l1:
            total = total + self.l1 * np.sum(np.abs(x))
        if self.l2:
            total = total + self.l2 * np.sum(np.square(x))
        return total

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``l1 * sum(|x|)`` (Keras's default factor 0.01)."""

    def __init__(self, l1: float = 0.01, **kwargs: Any) -> None:
        super().__init__(l1=kwargs.pop("l", l1))

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1}


class L2(L1L2):
    """``l2 * sum(x ** 2)`` (Keras's default factor 0.01)."""

    def __init__(self, l2: float = 0.01, **kwargs: Any) -> None:
        super().__init__(l2=kwargs.pop("l", l2))

    def get_config(self) -> dict[str, Any]:
        return {"l2": self.l2}


def l1_l2(l1: float = 0.01, l2: float = 0.01) -> L1L2:
    return L1L2(l1=l1, l2=l2)


l1 = L1
l2 = L2

_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": l1_l2, "l1l2": l1_l2}


def get(identifier: Any) -> Any:
    """A regularizer from ``None``, a name, an instance or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in _BY_NAME:
            raise ValueError(f"Unknown regularizer: {identifier!r}")
        return _BY_NAME[key]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
