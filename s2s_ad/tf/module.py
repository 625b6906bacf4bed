"""``tf.Module``: collects the Variables its attributes hold."""

from __future__ import annotations

from typing import Any

from ..variable import Variable


class Module:
    """A container of Variables and sub-modules (``trainable_variables`` finds them)."""

    def __init__(self, name: str | None = None) -> None:
        self._module_name = name or type(self).__name__

    @property
    def trainable_variables(self) -> list[Variable]:
        return [v for v in self.variables if v.trainable]

    @property
    def variables(self) -> list[Variable]:
        found: list[Variable] = []
        _collect(self, found, set())
        return found


def _collect(value: Any, found: list[Variable], seen: set[int]) -> None:
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, Variable):
        found.append(value)
    elif isinstance(value, Module):
        for attr in vars(value).values():
            _collect(attr, found, seen)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, found, seen)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, found, seen)
