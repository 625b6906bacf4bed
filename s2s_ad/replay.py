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

A Keras layer, model or loss called by a statement of the block runs there through its
generated forward sweep (once a gradient has compiled it): the block keeps its value and
pullback (:class:`Call`), and the re-run takes them back (:class:`Calls`) instead of
calling it again: the layer runs once, its draws and state changes happen once.
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

from . import dispatch, runtime
from .errors import TransformError
from .rules import (
    REGISTRY,
    numpy_random,  # noqa: F401  (the draws' rules, before they are wrapped)
)
from .rules.registry import nondiff
from .variable import EagerTensor

# NumPy's global-state draws; a Generator's methods cannot be intercepted
_NUMPY_DRAWS = (
    "beta binomial chisquare choice dirichlet exponential gamma geometric gumbel "
    "hypergeometric laplace logistic lognormal multinomial multivariate_normal "
    "negative_binomial normal pareto permutation poisson power rand randint randn random "
    "random_integers random_sample ranf rayleigh sample standard_cauchy "
    "standard_exponential standard_gamma standard_normal standard_t triangular uniform "
    "vonmises wald weibull zipf"
).split()


_NONE: Any = frozenset()
_NO_DRAWS: Any = types.MappingProxyType({})


class Recording:
    """The draws made while one tape's block runs, by top-level statement."""

    # what a recording holds until its block draws or a call is kept (class defaults,
    # never changed in place: ``add`` and ``recorded_call`` give a recording its own)
    draws: dict[int, list[tuple[str, Any]]] = _NO_DRAWS
    calls: list[Call] = ()  # type: ignore[assignment]
    keeps_calls = False  # whether the block's calls may be kept (see the tape)
    # the ids of the arrays the block read from before it, and of the values its tape
    # watches (see ``constant``), when the block's calls may be kept
    inputs: tuple[dict[int, str], set[int]] | None = None
    # ids of the draws made in the block of an inner tape opened by a function the block
    # called (a gradient penalty's helper; see ``tape_inner``)
    inner: set[int] = _NONE  # (a set of its own from the first such draw)

    def __init__(self, frame: types.FrameType, statement_at: Callable[[int], int]) -> None:
        self.frame: types.FrameType | None = frame
        self.statement_at = statement_at

    def add(self, name: str, value: Any, caller: types.FrameType | None) -> None:
        others = [r.frame for r in _RECORDING if r is not self] if len(_RECORDING) > 1 else ()
        inner = False
        frame = caller
        while frame is not None and frame is not self.frame:
            if others and any(frame is other for other in others):
                inner = True  # in another tape's block, below this one's
            frame = frame.f_back
        if frame is None:
            return  # not drawn by this block's code
        index = self.statement_at(frame.f_lineno)
        entry = (name, _copy(value), owner_of(caller, frame))
        if self.draws is _NO_DRAWS:
            self.draws = {}
        self.draws.setdefault(index, []).append(entry)
        if inner:
            if self.inner is _NONE:
                self.inner = set()
            self.inner.add(id(entry))

    def constant(self, value: Any) -> bool:
        """Whether a value is a constant of the block: an array it read from before it
        and does not watch (a layer called on it needs no gradient for it)."""
        inputs = self.inputs
        return inputs is not None and id(value) in inputs[0] and id(value) not in inputs[1]

    def queue(self, statements: list[int]) -> list[tuple[str, Any, int | None]]:
        """The draws of these statements, in order (name, value, owner)."""
        return [d for k in statements for d in self.draws.get(k, ())]

    def split(
        self, draws: list[tuple[str, Any, int | None]]
    ) -> tuple[list[tuple[str, Any, int | None]], list[tuple[str, Any, int | None]]]:
        """The draws made outside and inside inner tapes' blocks of called functions:
        the re-run computes the latter again (see :class:`Keyed`)."""
        inner = self.inner
        return [d for d in draws if id(d) not in inner], [d for d in draws if id(d) in inner]

    def unused_calls(self, statements: list[int]) -> list[Call]:
        """The recorded calls of these statements not yet handed back, in order."""
        if not self.calls:
            return []
        wanted = set(statements)
        return [c for c in self.calls if c.pullback is not None and c.statement in wanted]


def owner_of(frame: types.FrameType | None, stop: types.FrameType | None = None) -> int | None:
    """The id of the object whose method made a draw (the nearest ``self`` on the stack,
    below ``stop``: a layer's ``call``, a module's ``__call__``), or ``None``."""
    depth = 0
    while frame is not None and frame is not stop and depth < 16:
        owner = frame.f_locals.get("self")
        if owner is not None and not _machinery(type(owner)):
            return id(owner)
        frame = frame.f_back
        depth += 1
    return None


def _machinery(kind: type) -> bool:
    """Whether a class is the transformer's own (a tape, a guard of a global callee), not
    one whose methods are differentiated (``s2s_ad.tf``'s layers and modules are)."""
    module = kind.__module__ or ""
    return module.startswith("s2s_ad.") and not module.startswith("s2s_ad.tf")


class Keyed:
    """The draws of a block for a re-run that differentiates an inner tape's gradient:
    the re-run's own statements take the block's draws in order; the derivative of the
    inner gradient computes the inner block's draws again, several times (inside the
    derivatives of the calls that drew them), and gets back the value that the object
    which draws drew in the inner block."""

    def __init__(
        self,
        draws: list[tuple[str, Any, int | None]],
        inner: list[tuple[str, Any, int | None]],
    ) -> None:
        self.ordered = iter(draws)
        self.owned: dict[tuple[int | None, str], list[Any]] = {}
        for name, value, owner in inner:
            self.owned.setdefault((owner, name), []).append(value)

    def __iter__(self) -> Keyed:
        return self

    def __next__(self) -> tuple[str, Any, int | None]:
        return next(self.ordered)

    def take(self, name: str, owner: int | None) -> Any:
        """The value the inner block drew for a draw computed again."""
        values = self.owned.get((owner, name)) if owner is not None else None
        if values is None:
            raise TransformError(
                f"an outer tape over an inner tape's gradient computes again a draw of "
                f"{name} that no layer or module of the inner block made",
                hint="draw random values in a layer's or module's call, or in the outer "
                "block and pass them in",
            )
        if len(values) > 1:
            raise TransformError(
                f"an outer tape over an inner tape's gradient through an object that drew "
                f"{name} {len(values)} times in the inner block (a dropout layer called "
                "twice): the derivative computes each draw again and cannot tell which "
                "of them it is",
                hint="give each call its own layer, or draw the mask in the block and pass it",
            )
        return values[0]


_AGAIN = ("second_order.py", "tape_nested.py", "tape_inner.py")


def _computed_again(frame: types.FrameType | None) -> bool:
    """Whether a draw happens inside the derivative of an inner tape's gradient (the
    pullbacks of its calls differentiated again, its summed function's sweeps), not in
    the re-run's own statements."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.endswith(_AGAIN) or name.startswith("<s2s_ad:_tape_block_summed"):
            return True
        frame = frame.f_back
    return False


def _nothing() -> None:
    return None


class Call:
    """A call the block made through generated code: what it was given, its value and
    its pullback (usable once), its statement and how many draws it made."""

    __slots__ = (
        "func",
        "labels",
        "args",
        "kwargs",
        "value",
        "pullback",
        "statement",
        "draws",
        "stored",
    )

    def __init__(
        self,
        func: Any,
        labels: tuple[int, ...],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        value: Any,
        pullback: Any,
        statement: int,
        draws: int,
        stored: tuple[Any, ...] = (),
    ) -> None:
        self.stored = stored  # float values the call stored on objects (add_loss)
        self.func = func
        self.labels = labels
        self.args = args
        self.kwargs = kwargs
        self.value = value
        self.pullback = pullback
        self.statement = statement
        self.draws = draws

    @property
    def used(self) -> bool:
        return self.pullback is None


NOT_RECORDED = object()


def recorded_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func(*args, **kwargs)`` called by a statement of a tape's block: run through the
    generated forward sweep a gradient compiled for it, its value and pullback kept for
    the tape (see :class:`Calls`); ``NOT_RECORDED`` when it is not called from a block,
    or was not compiled yet, or takes an argument it cannot match again (a container)."""
    if _REPLAY or _UNRECORDED[0] or runtime.VARIABLE_GRADS is not None:
        return NOT_RECORDED
    caller = sys._getframe(2)  # the frame that called the layer (or loss)
    recording = None
    for candidate in _RECORDING:
        if candidate.frame is caller:
            if recording is not None:  # the blocks of nested tapes: not kept
                return NOT_RECORDED
            recording = candidate
    if recording is None or not recording.keeps_calls:  # not called by a block's statement
        return NOT_RECORDED  # or not to be kept
    found = []
    inputs = recording.inputs  # (``recording.constant``, inline for arrays)
    for k, value in enumerate(args):
        if type(value) in _ARRAY_TYPES:  # (the common case, as the checks below find it)
            if value.dtype.kind in "fc" and not (
                inputs is not None and id(value) in inputs[0] and id(value) not in inputs[1]
            ):
                found.append(k)
            continue
        if not _matchable(value):
            return NOT_RECORDED
        if _carries(value) and not recording.constant(value):
            found.append(k)
    labels = tuple(found)
    for value in kwargs.values():
        if value is True or value is False or value is None:  # ``training=True``
            continue
        if not _matchable(value) or _carries(value):
            return NOT_RECORDED  # a differentiable keyword argument
    table = runtime.GradTable()  # variables mode, as the tape's re-run calls it
    runtime.VARIABLE_GRADS = table
    try:
        target, targs, tkwargs = func, args, kwargs
        redirect = getattr(type(func), "_s2s_forward", None)
        if redirect is not None:
            redirected = redirect(func, labels, args, kwargs)
            if redirected is not None:
                target, targs, tkwargs = redirected
        fast = dispatch._fast_path(target, labels, targs, tkwargs)
        if fast is None:
            return NOT_RECORDED  # the first time: called as it is, compiled by the gradient
        hit, pre = fast
        index = recording.statement_at(caller.f_lineno)
        drawn = len(recording.draws.get(index, ())) if recording.draws else 0
        value, saved = hit.fns["fwd"](*pre, *targs, **tkwargs)
    finally:
        runtime.VARIABLE_GRADS = None
    if recording.draws:  # the draws the call made (given back when the call runs again)
        drawn = len(recording.draws.get(index, ())) - drawn
    pullback = dispatch._pullback(hit, saved)
    stored = tuple(table.stored.values()) if table.stored else ()
    if not recording.calls:
        recording.calls = []
    recording.calls.append(Call(func, labels, args, kwargs, value, pullback, index, drawn, stored))
    return value


# the types of arrays (exactly): matchable, carrying a gradient when of a float dtype
_ARRAY_TYPES: frozenset[type] = frozenset((np.ndarray, EagerTensor))


def _carries(value: Any) -> bool:
    """Whether an argument may carry a gradient (a float array, scalar or Variable)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind in "fc"
    if isinstance(value, (float, complex)):
        return True
    return hasattr(value, "assign") and hasattr(value, "value")  # a Variable


def _matchable(value: Any) -> bool:
    """Arguments a re-run's call can be matched on: arrays, Variables and plain scalars."""
    return (
        value is None
        or isinstance(value, (np.ndarray, np.generic, bool, int, float, complex, str))
        or hasattr(value, "assign")
    )


class Calls:
    """The recorded calls a re-run may take back, in the order the block made them.

    A call of the re-run that is the next recorded one (the same callable, the same
    arguments: the same objects, or the copy of an input the block read, or equal plain
    values; differentiated arguments among those recorded) gets its value and pullback
    and skips its draws; any other call runs, after ``on_miss`` (the snapshot of the
    state the call may change).
    """

    def __init__(
        self,
        calls: list[Call],
        copies: dict[int, int],
        draws: Iterator[tuple[str, Any, int | None]],
        on_miss: Callable[[], None],
    ) -> None:
        self.calls = calls
        self.copies = copies
        self.draws = draws
        self.on_miss = on_miss
        self.next = 0

    def __call__(
        self, func: Any, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, Any] | None:
        if self.next < len(self.calls):
            call = self.calls[self.next]
            if call.func is func and call.pullback is not None:
                self.next += 1
                if self._same(call, labels, args, kwargs):
                    return self._take(call, labels)
                # the block's call, with other values: it runs again (its draws given back)
        self.on_miss()
        return None

    def _same(
        self, call: Call, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> bool:
        if len(args) != len(call.args) or kwargs.keys() != call.kwargs.keys():
            return False
        for label in labels:
            if label not in call.labels:
                return False
        for now, then in zip(args, call.args):
            if now is not then and not self._matches(now, then):
                return False
        for key, then in call.kwargs.items():
            now = kwargs[key]
            if now is not then and not self._matches(now, then):
                return False
        return True

    def _matches(self, now: Any, then: Any) -> bool:
        """Whether an argument of the re-run is the block's: the copy of an input the
        block read, or an equal plain value (never another array or Variable)."""
        if self.copies.get(id(now)) == id(then):
            return True
        if isinstance(now, np.ndarray) or hasattr(now, "assign"):
            return False
        return type(now) is type(then) and not now != then

    def _take(self, call: Call, labels: tuple[Any, ...]) -> tuple[Any, Any]:
        for _ in range(call.draws):
            next(self.draws, None)
        pullback = call.pullback
        call.pullback = None  # used once: its saved values are consumed
        for value in call.stored:  # what reads them later hands back their adjoints
            runtime.note_stored(value)
        if labels == call.labels:
            return call.value, pullback
        where = [call.labels.index(label) for label in labels]
        return call.value, lambda g: (lambda got: tuple(got[k] for k in where))(pullback(g))


_RECORDING: list[Recording] = []
RECORDING = _RECORDING  # non-empty while a tape's block runs
_REPLAY: list[Iterator[tuple[str, Any, int | None]]] = []
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
        source = _REPLAY[-1]
        if type(source) is Keyed and _computed_again(sys._getframe(1)):
            return _copy(source.take(name, owner_of(sys._getframe(1))))
        got = next(source, None)
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
        elif rule is not None:  # a reparameterised draw: differentiated as without a tape
            REGISTRY.alias(wrapper, rule)
    nondiff("np.random (recorded by tapes)", cut)
    nondiff("a call kept for a tape", [recorded_call])


_make_wrappers()


def install() -> None:
    """Route ``np.random``'s draws through :func:`draw` from the first tape on (outside
    blocks and re-runs the wrappers call NumPy's functions as they are)."""
    if not _PATCHED[0]:
        for name, wrapper in _WRAPPERS.items():
            setattr(np.random, name, wrapper)
        _PATCHED[0] = 1


def start(frame: types.FrameType, statement_at: Callable[[int], int]) -> Recording:
    """A new recording of the draws and calls of the block running in ``frame``, until
    :func:`stop`."""
    if not _PATCHED[0]:
        install()
    recording = Recording(frame, statement_at)
    _RECORDING.append(recording)
    return recording


def stop(recording: Recording) -> None:
    """End a recording (what it recorded stays, for the tape's gradient)."""
    if _RECORDING and _RECORDING[-1] is recording:
        _RECORDING.pop()
    elif recording in _RECORDING:
        _RECORDING.remove(recording)
    recording.frame = None


class replaying:  # noqa: N801 (used as a function: ``with replaying(draws, roots):``)
    """Run code that gets ``draws`` back for its random draws and whose changes to the
    state reachable from ``roots`` are undone afterwards.

    With ``calls`` (the block's recorded calls), the re-run takes those back; when
    ``lazy``, the state is saved only before the first call that runs (the caller knows
    that nothing else in the re-run changes state)."""

    __slots__ = ("draws", "roots", "saved", "queue", "calls", "lazy", "hook", "keyed")

    def __init__(
        self,
        draws: list[tuple[str, Any, int | None]],
        roots: list[Any],
        calls: tuple[list[Call], dict[int, int]] | None = None,
        lazy: bool = False,
        keyed: list[tuple[str, Any, int | None]] | None = None,
    ) -> None:
        self.draws = draws
        self.roots = roots
        # the draws of inner tapes' blocks, given back to their derivatives (see Keyed)
        self.keyed = keyed
        self.calls = None if keyed is not None else calls
        self.lazy = lazy and self.calls is not None

    def __enter__(self) -> None:
        self.saved: list[tuple[Any, Any]] | None = None
        if not self.lazy:
            self.saved = snapshot(self.roots) if self.roots else []
        self.queue: Iterator[tuple[str, Any, int | None]] = (
            Keyed(self.draws, self.keyed) if self.keyed is not None else iter(self.draws)
        )
        _REPLAY.append(self.queue)
        self.hook = None
        if self.calls is not None:
            self.hook = Calls(self.calls[0], self.calls[1], self.queue, self._save)
            runtime.CALL_HOOKS.append(self.hook)

    def _save(self) -> None:
        if self.saved is None:
            self.saved = snapshot(self.roots) if self.roots else []

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        queue = self.queue
        try:
            left = next(queue, None) if kind is None else None
        finally:
            _REPLAY.remove(queue)
            if self.hook is not None:
                runtime.CALL_HOOKS.remove(self.hook)
                self.hook.on_miss = _nothing  # no cycle through the bound method
                self.hook = None
            drew = restore(self.saved) if self.saved is not None else ""
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
