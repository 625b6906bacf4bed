"""``tf.data.Dataset`` with ``from_tensor_slices``, ``batch`` and ``shuffle``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..variable import tensor


class Dataset:
    """Slices of one array, or of a tuple of arrays, along the first axis."""

    def __init__(
        self, parts: tuple[np.ndarray, ...], single: bool, size: int = 0, seed: int | None = None
    ) -> None:
        self.parts, self.single, self.size, self.seed = parts, single, size, seed

    @staticmethod
    def from_tensor_slices(data: Any) -> Dataset:
        if isinstance(data, tuple):
            return Dataset(tuple(np.asarray(d) for d in data), False)
        return Dataset((np.asarray(data),), True)

    def batch(self, size: int) -> Dataset:
        return Dataset(self.parts, self.single, size, self.seed)

    def shuffle(self, buffer_size: int, seed: int | None = None) -> Dataset:
        return Dataset(self.parts, self.single, self.size, 0 if seed is None else seed)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.parts[0])
        order = np.arange(n)
        if self.seed is not None:
            np.random.default_rng(self.seed).shuffle(order)
            self.seed += 1
        step = self.size or 1
        for start in range(0, n, step):
            rows = order[start : start + step] if self.size else order[start]
            items = tuple(tensor(p[rows]) for p in self.parts)
            yield items[0] if self.single else items
