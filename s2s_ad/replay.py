"""What a tape's block did once, given back when ``gradient()`` re-runs part of it.

``gradient()`` runs the generated code of the block's statements again. Two things must
not happen twice:

* random draws (``np.random.*`` and ``tf.random.*``): while a block runs they are
  recorded, per top-level statement of the block; the re-run gets the same values back,
  in the same order (a re-run that draws differently is refused). From the first tape
  on, ``np.random``'s functions are wrappers that call NumPy's own when no block runs;
  a ``np.random.Generator``'s methods cannot be wrapped;
* state changes (``v.assign_add(1.0)`` on a Variable, ``self.calls += 1``): the objects the
  re-run can reach are restored afterwards to the state the block left.
"""

from __future__ import annotations

import functools
import operator
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .errors import TransformError

# NumPy's global-state draws; a Generator's methods cannot be intercepted
_NUMPY_DRAWS = (
    "beta binomial chisquare choice dirichlet exponential gamma geometric gumbel "
    "hypergeometric laplace logistic lognormal multinomial multivariate_normal "
    "negative_binomial normal pareto permutation poisson power rand randint randn random "
    "random_integers random_sample ranf rayleigh sample standard_cauchy "
    "standard_exponential standard_gamma standard_normal standard_t triangular uniform "
    "vonmises wald weibull zipf"
).split()


class Recording:
    """The draws made while one tape's block runs, by top-level statement."""

    def __init__(self, frame: types.FrameType, statement_at: Callable[[int], int]) -> None:
        self.frame: types.FrameType | None = frame
        self.statement_at = statement_at
        self.draws: dict[int, list[tuple[str, Any]]] = {}

    def add(self, name: str, value: Any, caller: types.FrameType | None) -> None:
        frame = caller
        while frame is not None and frame is not self.frame:
            frame = frame.f_back
        if frame is None:
            return  # not drawn by this block's code
        index = self.statement_at(frame.f_lineno)
        self.draws.setdefault(index, []).append((name, _copy(value)))

    def queue(self, statements: list[int]) -> list[tuple[str, Any]]:
        """The draws of these statements, in order."""
        return [d for k in statements for d in self.draws.get(k, ())]


_RECORDING: list[Recording] = []
_REPLAY: list[Iterator[tuple[str, Any]]] = []
_ORIGINALS: dict[str, Any] = {}
_WRAPPERS: dict[str, Any] = {}
_PATCHED = [0]


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


_UNRECORDED = [0]


@contextmanager
def unrecorded() -> Iterator[None]:
    """Draws made here (weights initialized when a layer is built) are neither recorded nor
    replayed: a re-run finds the layer built and does not draw them again."""
    _UNRECORDED[0] += 1
    try:
        yield
    finally:
        _UNRECORDED[0] -= 1


def draw(name: str, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Draw with ``original``; recorded inside a tape's block, replayed when a gradient
    re-runs the block."""
    if _UNRECORDED[0]:
        return original(*args, **kwargs)
    if _REPLAY:
        got = next(_REPLAY[-1], None)
        if got is None or got[0] != name:
            drew = "nothing more" if got is None else got[0]
            raise TransformError(
                f"the gradient's re-run of the block draws {name} where the block drew {drew}",
                hint="draw random values outside the differentiated code, or in the block itself",
            )
        return _copy(got[1])
    value = original(*args, **kwargs)
    if _RECORDING:
        caller = sys._getframe(1)
        for recording in _RECORDING:
            recording.add(name, value, caller)
    return value


def _make_wrappers() -> None:
    from .rules import REGISTRY
    from .rules.registry import nondiff

    cut = []
    for name in _NUMPY_DRAWS:
        original = getattr(np.random, name, None)
        if original is None:
            continue
        _ORIGINALS[name] = original
        wrapper = functools.partial(draw, f"np.random.{name}", original)
        _WRAPPERS[name] = wrapper
        rule = REGISTRY.lookup(original)
        if rule is not None and rule.nondiff:
            cut.append(wrapper)
    nondiff("np.random (recorded by tapes)", cut)


_make_wrappers()


def install() -> None:
    """Route ``np.random``'s draws through :func:`draw` from the first tape on (outside
    blocks and re-runs the wrappers call NumPy's functions as they are)."""
    if not _PATCHED[0]:
        for name, wrapper in _WRAPPERS.items():
            setattr(np.random, name, wrapper)
        _PATCHED[0] = 1


class Recorder:
    """Records the draws of a block between ``start`` and ``stop``."""

    def __init__(self) -> None:
        self.recording: Recording | None = None

    def start(self, frame: types.FrameType, statement_at: Callable[[int], int]) -> None:
        install()
        self.recording = Recording(frame, statement_at)
        _RECORDING.append(self.recording)

    def stop(self) -> None:
        recording = self.recording
        if recording is not None:
            if _RECORDING and _RECORDING[-1] is recording:
                _RECORDING.pop()
            elif recording in _RECORDING:
                _RECORDING.remove(recording)
            recording.frame = None


class replaying:  # noqa: N801 (used as a function: ``with replaying(draws, roots):``)
    """Run code that gets ``draws`` back for its random draws and whose changes to the
    state reachable from ``roots`` are undone afterwards."""

    __slots__ = ("draws", "roots", "saved", "queue")

    def __init__(self, draws: list[tuple[str, Any]], roots: list[Any]) -> None:
        self.draws = draws
        self.roots = roots

    def __enter__(self) -> None:
        self.saved = snapshot(self.roots) if self.roots else []
        self.queue = iter(self.draws)
        _REPLAY.append(self.queue)

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        queue = self.queue
        try:
            left = next(queue, None) if kind is None else None
        finally:
            _REPLAY.remove(queue)
            drew = restore(self.saved)
        if left is not None:
            raise TransformError(
                f"the gradient's re-run of the block did not draw {left[0]} as the block did",
                hint="draw random values outside the differentiated code, or in the block itself",
            )
        if drew and kind is None:
            raise TransformError(
                f"the gradient's re-run of the block drew from a {drew}, whose draws a tape "
                "cannot give back",
                hint="draw with np.random.* or tf.random.* in code a tape differentiates",
            )


_ATOMS = (
    np.ndarray,
    np.generic,
    int,
    float,
    complex,
    str,
    bytes,
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    type(None),
)


_ATOM_TYPES = set(_ATOMS) | {bool, np.float32, np.float64, np.int64, np.bool_}
# per type, how a snapshot treats its values: skipped (an atom, a subclass of one, or
# an object without a __dict__), copied as a list or a dict, walked as a tuple, a random
# generator's state, or an object's attributes
_SKIP, _LIST, _DICT, _TUPLE, _GENERATOR, _LEGACY, _OBJECT = range(7)
_CATEGORY: dict[type, int] = {list: _LIST, dict: _DICT, tuple: _TUPLE}


def _category(kind: type) -> int:
    if issubclass(kind, _ATOMS):
        found = _SKIP
    elif issubclass(kind, list):
        found = _LIST
    elif issubclass(kind, dict):
        found = _DICT
    elif issubclass(kind, tuple):
        found = _TUPLE
    elif issubclass(kind, np.random.Generator):
        found = _GENERATOR
    elif issubclass(kind, np.random.RandomState):
        found = _LEGACY
    else:
        found = _OBJECT if "__dict__" in dir(kind) else _SKIP
    if len(_CATEGORY) < 4096:
        _CATEGORY[kind] = found
    return found


def snapshot(roots: list[Any], limit: int = 20000) -> list[tuple[Any, Any]]:
    """Shallow copies of the lists, dicts and object attributes reachable from ``roots``."""
    saved: list[tuple[Any, Any]] = []
    seen: set[int] = set()
    stack = list(roots)
    atoms = _ATOM_TYPES
    categories = _CATEGORY
    while stack and len(saved) < limit:
        value = stack.pop()
        kind = type(value)
        if kind in atoms:
            continue
        category = categories.get(kind)
        if category is None:
            category = _category(kind)
        if category == _SKIP or id(value) in seen:
            continue
        seen.add(id(value))
        if category == _OBJECT:
            attrs = getattr(value, "__dict__", None)
            if type(attrs) is dict:
                saved.append((attrs, attrs.copy()))
                stack.extend(attrs.values())
        elif category == _DICT:
            saved.append((value, dict(value)))
            stack.extend(value.values())
        elif category == _LIST:
            saved.append((value, list(value)))
            stack.extend(value)
        elif category == _TUPLE:
            stack.extend(value)
        elif category == _GENERATOR:
            saved.append((value, value.bit_generator.state))
        else:
            saved.append((value, value.get_state(legacy=False)))
    return saved


def restore(saved: list[tuple[Any, Any]]) -> str:
    """Put back what :func:`snapshot` copied, where it changed; the kind of random
    generator that was drawn from meanwhile, if one was (else ``''``)."""
    drew = ""
    for container, old in saved:
        kind = type(container)
        if kind is dict or isinstance(container, dict):
            # unchanged: the same keys, in the same order, bound to the same objects
            if not (
                len(container) == len(old)
                and all(map(operator.is_, container.values(), old.values()))
                and container.keys() == old.keys()
            ):
                container.clear()
                container.update(old)
        elif kind is list or isinstance(container, list):
            if len(container) != len(old) or not all(map(operator.is_, container, old)):
                container[:] = old
        elif isinstance(container, np.random.Generator):
            if container.bit_generator.state != old:
                container.bit_generator.state = old
                drew = "np.random.Generator"
        elif isinstance(container, np.random.RandomState):
            if _changed_state(container.get_state(legacy=False), old):
                container.set_state(old)
                drew = "np.random.RandomState"
    return drew


def _changed_state(new: dict[str, Any], old: dict[str, Any]) -> bool:
    return new["state"]["pos"] != old["state"]["pos"] or not np.array_equal(
        new["state"]["key"], old["state"]["key"]
    )
