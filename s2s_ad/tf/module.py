"""``tf.Module``: a named container whose Variables and sub-modules are found by walking
its attributes, in TensorFlow's order (attributes sorted by name, a module's own
Variables before those of its sub-modules, each object once)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..variable import Variable


def to_snake_case(name: str) -> str:
    """``'MyDense'`` -> ``'my_dense'`` (how TensorFlow and Keras name objects by class)."""
    first = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", first).lower().lstrip("_") or "module"


class Module:
    """A container of Variables and sub-modules.

    Args:
        name: The module's name (default: its class name in snake case).
    """

    def __init__(self, name: str | None = None) -> None:
        self._name = name or to_snake_case(type(self).__name__)

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> Any:
        return name_scope(self._name)

    @property
    def variables(self) -> tuple[Variable, ...]:
        """Every Variable of the module and its sub-modules, each once."""
        return tuple(walk(self, lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(walk(self, lambda v: isinstance(v, Variable) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple[Variable, ...]:
        return tuple(walk(self, lambda v: isinstance(v, Variable) and not v.trainable))

    @property
    def submodules(self) -> tuple[Module, ...]:
        """Every module reachable from this one (not itself), each once."""
        return tuple(walk(self, lambda v: isinstance(v, Module)))

    @classmethod
    def with_name_scope(cls, method: Callable[..., Any]) -> Callable[..., Any]:
        return method


def _leaves(value: Any) -> Iterator[Any]:
    """The leaves of nested lists, tuples and dicts (dicts by sorted key), as TensorFlow's
    ``nest`` flattens them."""
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from _leaves(value[key])
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def walk(module: Module, predicate: Callable[[Any], bool]) -> Iterator[Any]:
    """The objects matching ``predicate`` reachable from ``module``'s attributes: the
    module's own first (attributes sorted by name), then each sub-module's, in the order
    they were found."""
    seen: set[int] = {id(module)}
    found: list[Any] = []
    _walk(module, predicate, seen, found, [id(module)])
    return iter(found)


def _walk(
    module: Any, predicate: Callable[[Any], bool], seen: set[int], out: list[Any], stack: list[int]
) -> None:
    submodules = []
    attrs = vars(module)
    for key in sorted(attrs):
        for leaf in _leaves(attrs[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                out.append(leaf)
            if isinstance(leaf, Module):
                submodules.append(leaf)
    for sub in submodules:
        if id(sub) not in stack:
            _walk(sub, predicate, seen, out, [*stack, id(sub)])


_SCOPES: list[str] = []


@contextmanager
def name_scope(name: str) -> Iterator[str]:
    """``with tf.name_scope('block'):`` prefixes the names of Variables made inside."""
    _SCOPES.append(name)
    try:
        yield name + "/"
    finally:
        _SCOPES.pop()


@contextmanager
def outside_scopes() -> Iterator[None]:
    """No name scope inside (Keras 2 builds a subclassed model's layers in a graph of its
    own: their Variables are not named under the model's name)."""
    saved = _SCOPES[:]
    _SCOPES.clear()
    try:
        yield
    finally:
        _SCOPES[:] = saved


def scoped(name: str) -> str:
    """``name`` under the open name scopes (``'dense/kernel'``)."""
    return "/".join([*_SCOPES, name])
