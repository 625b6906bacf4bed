"""``GradientTape``: TensorFlow's tape API, answered by code generated from the block.

``__enter__`` finds the ``with`` statement in the caller's source and remembers what the
block reads; the block then runs natively, once, with its random draws recorded.
``gradient()`` builds one function from the statements of the block that lead to the
targets (the others, such as prints, are not run again), differentiates it with respect
to every source at once, and runs it on the values the block started from (or, for an
intermediate source, the value it was given in the block), with the block's draws given
back and the state it changes restored (see :mod:`.replay`).
Called inside the block, ``gradient()`` slices the statements before the calling one
(TensorFlow differentiates what was recorded up to the call).

Variables the block reaches through objects (``model(x)`` reading ``self.kernel``) get
their gradients in the transformer's variables mode: each attribute read that is one of
them adds its adjoint to a table the tape hands over.
"""

from __future__ import annotations

import builtins
import enum
import sys
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
import numpy as np

from . import replay, runtime, tape_fast
from . import variable as _variable
from .analysis import depends
from .api import compile_adjoint, fix_grad
from .custom import stop_gradient
from .errors import TransformError
from .tape_block import (
    Block,
    assigns_names,
    attribute_store,
    block_at,
    build_function,
    from_library,
    inline_inner_tapes,
    leaves,
    names,
    rebuild,
    slice_block,
)
from .variable import ResourceVariable, Tensor, Variable, tensor

# values the block reads that are code, not data: looked up as globals, never parameters
_CODE_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


@dataclass
class _Plan:
    """One function for a (block, targets, sources) request and what to feed it."""

    fns: dict[str, Any]
    fn: Any
    params: list[str]
    wrt: list[str]
    connected: list[bool]
    containers: list[str]
    variables: bool
    statements: list[int]
    drawn: dict[str, Any] = field(default_factory=dict)
    calls_user_code: bool = False
    nested: bool = False  # differentiates an inner tape's gradient
    cuts: frozenset[str] = frozenset()  # sources computed in the block
    plain: bool = False  # every parameter is a value the block started from
    assigns: bool = False  # every statement assigns names (no attribute or item writes)
    # lists and dicts made before the block that its statements fill: given as copies
    refill: frozenset[str] = frozenset()


_PLANS: dict[tuple[Any, ...], _Plan] = {}
_EMPTY: Any = types.MappingProxyType({})  # a tape's mappings before its block runs
_NO_NAMES: frozenset[str] = frozenset()


class GradientTape:
    """Records nothing: the gradient is computed by code generated from the block.

    Args:
        persistent: Allow several calls of ``gradient``/``jacobian``.
        watch_accessed_variables: Watch every trainable ``Variable`` the block reads.
    """

    # what a tape holds before its block runs: __enter__ and _take_inputs give each
    # tape its own (the empty values here are never changed in place)
    _block: Block | None = None
    _start = 0
    _before: dict[str, Any] = _EMPTY
    _objects: dict[str, Any] = _EMPTY
    # (target name, ids of the sources) -> an inner gradient with respect to
    # Variables reached through objects, for an outer tape (see ``tape_nested``)
    _variable_calls: dict[tuple[str, tuple[int, ...]], _VariablesCall] = _EMPTY
    # plans of this run that call inner tapes' gradients (not cached across runs)
    _nested_plans: dict[tuple[Any, ...], _Plan] = _EMPTY
    _after: dict[str, Any] = _EMPTY
    _globals: dict[str, Any] = _EMPTY
    _code: dict[str, Any] = _EMPTY
    _frame: types.FrameType | None = None
    # ids of the Variables the block read: their first arrays
    _read: dict[int, Any] = _EMPTY
    _facts: dict[str, Any] = _EMPTY
    _entry: dict[str, Any] = _EMPTY
    _assigned: set[str] = frozenset()  # type: ignore[assignment]  # Variables the block assigned
    _user_code = False  # the block calls code that may read Variables
    _held: set[int] = frozenset()  # type: ignore[assignment]
    _holders: list[str] = ()  # type: ignore[assignment]
    # ids of the arrays the block read from before it
    _arrays: dict[int, str] = _EMPTY
    _user_functions = False  # the block calls user functions (not only objects)
    # a gradient called in the block: the index of the statement that calls it (what
    # ran before that statement is differentiated), else None
    _end: int | None = None
    # (statement, [(Variable, its array)]) at each gradient called in the block: a
    # later gradient through statements before it needs those arrays unchanged
    _checkpoints: list[tuple[int, list[tuple[Variable, Any]]]] = ()  # type: ignore[assignment]
    # id of a Variable assigned in the block -> (the Variable, the statement that
    # assigned it last, its array when the block ended, [(statement, array before,
    # array after)] for each assignment)
    _assigns: dict[int, list[Any]] = _EMPTY
    # lists and dicts made before the block that it changes in place (``outs.append``):
    # their copies on entry are in ``_before``
    _refill: frozenset[str] = frozenset()
    # ``with a, b:`` where ``b`` took ``a``'s entry (``_share_inputs``): ``b`` leaves the
    # block first and hands ``a`` what it found on leaving (nothing runs in between);
    # ``b._partner`` is ``a`` until then, ``a._left`` is (id of the frame, the names'
    # values on leaving, the Variables assigned) until ``a`` leaves
    _partner: GradientTape | None = None
    # whether ``_read`` is the dict of another tape of the same ``with`` too
    _shared_read = False
    # whether ``_recording`` is the other tape's too (until both left the block)
    _shares_recording = False
    _left: tuple[int, dict[str, Any], set[str]] | None = None

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._watched: list[Any] = []
        self._watched_ids: set[int] = set()

    _used = False  # whether a gradient or jacobian was asked

    # the draws and calls of the tape's last block (see ``replay``), from its start on
    _recording: replay.Recording | None = None
    # the plans this tape ran, with their targets: for an outer tape that differentiates
    # this tape's gradient call (see ``_calls``); made by the first plan kept
    _ran_kept: _Ran | None = None

    @property
    def _ran(self) -> _Ran:
        ran = self._ran_kept
        if ran is None:
            ran = self._ran_kept = _Ran()
        return ran

    # --- the block ----------------------------------------------------------------------

    def __enter__(self) -> GradientTape:
        frame = sys._getframe(1)
        if self._block is not None:  # a tape entered again: the class's empty defaults
            self._start = 0
            # (what is empty for most blocks stays the class's empty default until a first
            # entry: see _note_assign, _checkpoint, _plan, _gradients)
            self._variable_calls = self._nested_plans = self._assigns = _EMPTY
            self._checkpoints = ()  # type: ignore[assignment]
            self._end = None
        self._block = _block = block_at(frame)
        self._globals = frame.f_globals
        notes = _variable.ASSIGNS
        if notes and _block.shares_entry:
            last = notes[-1].__self__  # (ASSIGNS holds tapes' bound methods only)
            if (
                type(last) is GradientTape
                and last._block is _block
                and last._frame is frame
                and last._start == 0
                and not last._read
            ):  # the tape before this one in ``with tf.GradientTape() as a, tf.GradientTape()...``
                self._share_inputs(last)
                # (a bound method: kept only in ASSIGNS, so that the tape is in no reference
                # cycle and is freed as soon as it is dropped, see ``__exit__``)
                notes.append(self._note_assign)
                return self
        self._take_inputs(frame, _block.inputs)
        self._read = {}
        _variable.READS.append(self._read)
        if self._shared_read:  # (a tape entered again)
            self._shared_read = False
            self._shares_recording = False
        self._frame = frame
        notes.append(self._note_assign)  # (see above)
        self._recording = recording = replay.start(frame, _block.statement_at)
        if _block.plain and not _block.receivers and not self._user_functions:
            recording.keeps_calls = True  # (what _bind_constant finds for such a block)
            recording.inputs = (self._arrays, self._watched_ids)
        else:
            self._bind_constant()
        return self

    def _bind_constant(self) -> None:
        """Tell the recording which values are constants of the block (with no reference
        to the tape: the tape holds the recording), and whether it keeps the calls of
        Keras layers: when no statement can change in place an array such a call saved."""
        recording = self._recording
        if recording is not None:
            recording.keeps_calls = keeps = self._keeps_calls()
            if keeps:  # only a kept call asks which of its arguments are constants
                recording.inputs = (self._arrays, self._watched_ids)

    def _keeps_calls(self) -> bool:
        """Whether the block only assigns names and calls methods of objects that are not
        arrays (and no user function): the values its layer calls saved stay as they
        were."""
        block = self._block
        if block is None or not block.plain or self._user_functions:
            return False
        objects = self._objects
        for name in block.receivers:
            if isinstance(objects.get(name), np.ndarray) or name in block.written_set:
                return False
        return True

    def _take_inputs(self, frame: types.FrameType, reads: list[str]) -> None:
        """Remember the values the block starts from (arrays copied), watch its Variables,
        and note whether it calls user code and which containers hold Variables."""
        self._facts = _EMPTY  # filled by _name_of
        self._entry: dict[str, Any] = {}  # the arrays of the block's Variables on entry
        local, glob = frame.f_locals, frame.f_globals
        self._before = before = {}
        self._objects = objects = {}
        self._code = code = {}
        self._user_code = False
        self._user_functions = False
        self._arrays = arrays = {}
        held_ids: set[int] = set()  # Variables held in lists, tuples, dicts
        holders: list[str] = []  # the names of those containers
        block = self._block
        written = block.written_set if block is not None else frozenset()
        changed = block.changed if block is not None else frozenset()
        refill: list[str] = []
        entry, watched = self._entry, self._watched_ids
        watch_all = self.watch_accessed_variables
        kept = self._watched
        code_kinds = _CODE_KINDS
        for name in reads:
            if name in local:
                value = local[name]
            else:
                value = glob.get(name, _CODE_TYPES)
            kind = type(value)
            if kind is np.ndarray:
                objects[name] = value  # for identity: which name a source is
                before[name] = value.copy()
                arrays[id(value)] = name
                continue
            if kind is ResourceVariable:
                objects[name] = before[name] = value
                entry[name] = value.value
                if watch_all and value.trainable and id(value) not in watched:
                    kept.append(value)  # kept alive: its id stays its own
                    watched.add(id(value))
                continue
            if kind is _MODULE:  # (``tf``, ``np``: neither data nor a user's function)
                continue
            if kind in _OPAQUE:  # an object of a class seen before (a layer, a loss)
                objects[name] = before[name] = value
                self._user_code = True  # its methods may read Variables
                continue
            seen = code_kinds.get(id(value)) if kind in _CODE_KINDS_OF else None
            if seen is not None and seen[0] is value:  # code seen before: what it is
                if kind is types.FunctionType and name in local and local is not glob:
                    code[name] = value  # a local function: passed to the slice
                if seen[1] and name not in written:
                    self._user_code = True  # a user function may read Variables
                    self._user_functions = True
                continue
            if isinstance(value, Variable):
                objects[name] = before[name] = value
                entry[name] = value.value
                if watch_all and value.trainable and id(value) not in watched:
                    kept.append(value)
                    watched.add(id(value))
            elif value is _CODE_TYPES or isinstance(value, _CODE_TYPES):
                if kind is types.FunctionType and name in local and local is not glob:
                    code[name] = value
                user = (
                    value is not _CODE_TYPES
                    and callable(value)
                    and not isinstance(value, type)
                    and not _library(value)
                )
                if value is not _CODE_TYPES and (name not in local or local is glob):
                    if len(code_kinds) > 4096:  # (a global's: local functions are new per call)
                        code_kinds.clear()
                    code_kinds[id(value)] = (value, user)
                if user and name not in written:
                    self._user_code = True  # a user function may read Variables
                    self._user_functions = True
            else:
                objects[name] = before[name] = value
                if isinstance(value, np.ndarray):
                    arrays[id(value)] = name
                if not _is_plain(value):
                    self._user_code = True  # an object whose methods may read Variables
                    if not isinstance(value, (np.ndarray, list, tuple, dict)):
                        if len(_OPAQUE) > 4096:  # (classes made at run time)
                            _OPAQUE.clear()
                        _OPAQUE.add(kind)  # (what this branch finds depends on the class only)
                if isinstance(value, (list, tuple, dict)):
                    held = [id(v) for v in leaves(value) if isinstance(v, Variable)]
                    if held:
                        held_ids.update(held)
                        holders.append(name)
                    if name in changed and kind in (list, dict):
                        before[name] = value.copy()  # filled again when re-run
                        refill.append(name)
        self._held = held_ids
        self._holders = holders
        self._refill = frozenset(refill) if refill else _NO_NAMES

    def _share_inputs(self, other: GradientTape) -> None:
        """What :meth:`_take_inputs` finds, from the tape that entered the same block just
        before (nothing ran in between: see ``Block.shares_entry``); the dicts are
        shared, as neither tape changes them after entry but for the arrays of the
        Variables on exit, the same for both. So are the dict of the Variables read in
        the block (``reset`` parts them) and the recording of its draws, which keeps no
        calls of layers (as when each tape had its own: a call made by the blocks of two
        tapes is not kept)."""
        # (attribute by attribute: reading ``self.__dict__`` would make the instance keep
        # a dict instead of its attributes' inline values, which costs more than it saves)
        self._entry = other._entry
        self._before = other._before
        self._objects = other._objects
        self._code = other._code
        self._user_code = other._user_code
        self._user_functions = other._user_functions
        self._arrays = other._arrays
        self._held = other._held
        self._holders = other._holders
        self._refill = other._refill
        self._read = other._read
        self._frame = other._frame
        self._recording = other._recording
        self._facts = _EMPTY
        self._shared_read = self._shares_recording = True
        self._partner = other
        other._shared_read = other._shares_recording = True
        recording = other._recording
        if recording is not None:
            recording.keeps_calls = False
        if self.watch_accessed_variables:
            if other.watch_accessed_variables:
                # (both fresh tapes: the other watched the entry's trainable Variables)
                self._watched = other._watched.copy()
                self._watched_ids = other._watched_ids.copy()
                return
            watched, kept, objects = self._watched_ids, self._watched, self._objects
            for name in self._entry:
                value = objects[name]
                if value.trainable and id(value) not in watched:
                    kept.append(value)  # kept alive: its id stays its own
                    watched.add(id(value))

    def __exit__(self, *exc: Any) -> None:
        left = self._left
        if left is not None:  # the tape opened after this one by the same ``with`` left
            self._left = None  # just before: what it found (the dicts of entry are shared)
            if left[0] == id(sys._getframe(1)):
                # (neither tape called ``reset``: the other one stopped the recording of
                # draws and dropped the dict of reads they share)
                self._leave()
                self._after, self._assigned = left[1], left[2]
                return
        recording = self._recording
        if recording is not None:
            replay.stop(recording)
        self._leave()
        reads, read = _variable.READS, self._read
        if reads and reads[-1] is read:
            reads.pop()
        elif any(r is read for r in reads):
            reads[:] = [r for r in reads if r is not read]
        frame = sys._getframe(1)
        block = self._block
        assert block is not None
        local, glob = frame.f_locals, frame.f_globals
        self._after = after = {}
        for n in block.written:
            if n in local:
                after[n] = local[n]
            elif n in glob:
                after[n] = glob[n]
        # a Variable assigned in the block is read afterwards with its new value (its
        # assign itself is not differentiated: TensorFlow cuts the gradient there too)
        self._assigned = assigned = set()
        objects, before = self._objects, self._before
        for name, first in self._entry.items():
            value = objects[name].value  # assign() makes a new array: no copy needed
            before[name] = value
            if value is not first:
                assigned.add(name)
        partner = self._partner
        if partner is not None:
            self._partner = None
            if partner._entry is self._entry:  # (still the entry this tape took from it)
                partner._left = (id(frame), after, assigned)

    def _leave(self) -> None:
        """What every tape does on leaving its block: forget the frame, drop its hook of
        assignments, and keep each assigned Variable's array as the block left it."""
        self._frame = None
        self._facts = _EMPTY
        notes = _variable.ASSIGNS
        if notes and notes[-1].__self__ is self:
            notes.pop()
        else:
            notes[:] = [n for n in notes if getattr(n, "__self__", None) is not self]
        if self._assigns:
            for entry in self._assigns.values():
                entry[2] = entry[0].value  # its array when the block ended

    def _note_assign(self, variable: Variable, old: Any) -> None:
        """A Variable assigned while the block runs: the statement of the block that did
        it (a later statement reads its new value only), and its arrays before and
        after, statement by statement (a gradient of statements that ran before reads
        the array they read)."""
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None and frame is not self._frame:
            frame = frame.f_back
        if frame is None or self._block is None:
            return  # not by the block's code (a re-run, another thread)
        index = self._block.statement_at(frame.f_lineno)
        assigns = self._assigns
        if assigns is _EMPTY:
            assigns = self._assigns = {}
        entry = assigns.get(id(variable))
        if entry is None:
            entry = assigns[id(variable)] = [variable, index, None, []]
        entry[1] = index
        entry[3].append((index, old, variable.value))

    def _watch_one(self, value: Any) -> None:
        if id(value) not in self._watched_ids:
            self._watched.append(value)  # kept alive, so its id stays its own
            self._watched_ids.add(id(value))

    def _is_watched(self, value: Any) -> bool:
        return id(value) in self._watched_ids

    def watch(self, tensor_or_nested: Any) -> None:
        """Differentiate with respect to these values too (tensors are not watched by default)."""
        for leaf in leaves(tensor_or_nested):
            self._watch_one(leaf)

    def watched_variables(self) -> tuple[Variable, ...]:
        return tuple(w for w in self._watched if isinstance(w, Variable))

    def reset(self) -> None:
        """Forget what was recorded: inside the block, only the statements after this call
        are differentiated, and values computed before it are constants."""
        self._watched = []
        self._watched_ids = set()
        self._used = False
        frame = sys._getframe(1)
        if self._frame is None or frame is not self._frame:
            return
        block = self._block
        assert block is not None
        index = block.statement_at(frame.f_lineno)
        if not block.simple[index] and not _only_resets(block.statements[index]):
            raise TransformError(
                "tape.reset() inside a loop or branch of the block",
                block.filename,
                frame.f_lineno,
                hint="call reset() as a statement of the with block itself",
            )
        self._start = index + 1
        if self._shared_read:  # the other tape of the ``with`` keeps what it read
            self._shared_read = False
            self._read = {}
            _variable.READS.append(self._read)
        else:
            self._read.clear()
        later = [n for s in block.statements[self._start :] for n in names(s).reads]
        self._take_inputs(frame, list(dict.fromkeys(later)))
        if not self._shares_recording:  # (a shared recording keeps no calls)
            self._bind_constant()

    def stop_recording(self) -> _StopRecording:
        """A block inside the tape whose values carry no gradient."""
        return _StopRecording()

    # --- gradients ----------------------------------------------------------------------

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """d ``target`` / d ``sources``, in the structure of ``sources``.

        ``target`` may be a list or dict of targets (their gradients add up). A
        non-scalar target is summed (weighted by ``output_gradients``); sources the
        target does not depend on give ``None`` (or zeros with ``'zero'``).

        Called in the tape's block, it differentiates what the statements before the
        call computed (a persistent tape goes on recording after it).
        """
        if self._used and not self.persistent:
            self._use()  # (refuses)
        self._used = True
        if self._frame is not None:
            return self._inside(
                sys._getframe(1),
                self._gradient,
                target,
                sources,
                output_gradients,
                unconnected_gradients,
            )
        if output_gradients is None and unconnected_gradients is UnconnectedGradients.NONE:
            kind = type(sources)
            if kind is list or kind is tuple:  # the common request: see tape_fast
                fast = tape_fast.fast_gradient(self, target, sources, _ones_like)
                if fast is not None:
                    return fast
                grads = tape_fast.fast_variables(self, target, sources, _ones_like)
                if grads is not None:  # Variables reached through objects (a Keras model)
                    return grads if kind is list else tuple(grads)
        return self._gradient(target, sources, output_gradients, unconnected_gradients)

    def _gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any,
        unconnected_gradients: UnconnectedGradients | str,
    ) -> Any:
        kind = type(sources)
        flat = kind is list or kind is tuple
        if flat:
            for s in sources:
                if isinstance(s, (list, tuple, dict)):
                    flat = False
                    break
        found = list(sources) if flat else leaves(sources)
        if output_gradients is None:
            grads = self._gradients(target, found, _ones_like)
        else:
            grads = self._gradients(target, found, lambda outs: _cotangents(outs, output_gradients))
        out = [None if g is None else _as_tensor(g, leaf) for g, leaf in zip(grads, found)]
        if unconnected_gradients is not UnconnectedGradients.NONE and _is_zero_policy(
            unconnected_gradients
        ):
            out = [self._unconnected(leaf, True) if g is None else g for g, leaf in zip(out, found)]
        if flat:
            return out if kind is list else tuple(out)
        return rebuild(sources, iter(out))

    def jacobian(
        self,
        target: Any,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: Any = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """d ``target[i...]`` / d ``source[j...]`` for every entry: ``target.shape +
        source.shape`` per source, in the structure of ``sources``."""
        self._use()
        if self._frame is not None:
            return self._inside(
                sys._getframe(1), self._jacobian, target, sources, unconnected_gradients
            )
        return self._jacobian(target, sources, unconnected_gradients)

    def _jacobian(
        self, target: Any, sources: Any, unconnected_gradients: UnconnectedGradients | str
    ) -> Any:
        zero = _is_zero_policy(unconnected_gradients)
        shape = np.shape(target)
        found = leaves(sources)
        rows: list[list[Any]] = []
        for k in np.ndindex(*shape) if shape else [()]:
            basis = np.zeros(shape)
            basis[k] = 1.0
            rows.append(self._gradients(target, found, lambda outs, b=basis: b))
        out = []
        for j, leaf in enumerate(found):
            column = [row[j] for row in rows]
            value = np.asarray(_value(leaf))
            if all(g is None for g in column):
                out.append(
                    tensor(np.zeros(shape + value.shape), dtype=value.dtype) if zero else None
                )
                continue
            parts = [np.zeros(value.shape) if g is None else np.asarray(g) for g in column]
            stacked = np.stack(parts).reshape(shape + value.shape)
            out.append(tensor(stacked, dtype=value.dtype))
        return rebuild(sources, iter(out))

    def batch_jacobian(self, target: Any, source: Any, **options: Any) -> Any:
        """The Jacobian of each example: ``target[b]`` against ``source[b]``."""
        full = self.jacobian(target, source, **options)
        if full is None:
            return None
        full = np.asarray(full)
        batch = np.shape(target)[0]
        t_rank = len(np.shape(target)) - 1
        rows = [full[(b,) + (slice(None),) * t_rank + (b,)] for b in range(batch)]
        return tensor(np.stack(rows), dtype=full.dtype)

    def _inside(self, caller: types.FrameType, compute: Any, *args: Any) -> Any:
        """``compute(*args)`` for a gradient called in the block: on what the statements
        before the calling one left, with the block's recording paused (the re-run's
        draws and calls are not the block's)."""
        block = self._block
        assert block is not None
        frame: types.FrameType | None = caller
        while frame is not None and frame is not self._frame:
            frame = frame.f_back
        if frame is None:
            raise RuntimeError("a GradientTape's gradient called from outside its block")
        end = block.statement_at(frame.f_lineno)
        local, glob = frame.f_locals, frame.f_globals
        earlier = {n for st in block.statements[self._start : end] for n in names(st).writes}
        if not block.simple[end]:  # a loop or branch: what it assigns is not settled
            earlier -= set(names(block.statements[end]).writes)
        saved = (self._after, self._assigned, self._facts, self._end)
        self._after = {
            n: local[n] if n in local else glob[n]
            for n in block.written
            if n in earlier and (n in local or n in glob)
        }
        objects = self._objects
        self._assigned = {n for n, v in self._entry.items() if objects[n].value is not v}
        self._facts = _EMPTY
        self._end = end
        recording = self._recording
        paused = replay.RECORDING.index(recording) if recording in replay.RECORDING else -1
        if paused >= 0:
            del replay.RECORDING[paused]
        try:
            return compute(*args)
        finally:
            self._after, self._assigned, self._facts, self._end = saved
            if paused >= 0:
                replay.RECORDING.insert(paused, recording)

    def _checkpoint(self, found: list[Any]) -> None:
        """Remember the arrays of the Variables a gradient called in the block saw."""
        end = self._end
        assert end is not None
        if self._checkpoints and self._checkpoints[-1][0] == end:
            return  # the rows of one jacobian, or a second gradient at the same statement
        held = [v for v in (*found, *self._watched) if isinstance(v, Variable)]
        if not self._checkpoints:
            self._checkpoints = []
        self._checkpoints.append((end, [(v, v.value) for v in held]))

    def _check_checkpoints(self, plan: _Plan, pins: dict[int, Any]) -> None:
        """Refuse to re-run statements that ran before a gradient called in the block
        when a Variable that gradient saw has changed since (an optimizer step in the
        block): the re-run would read its new value."""
        if not plan.statements:
            return
        first = min(plan.statements)
        block = self._block
        assert block is not None
        for end, pairs in self._checkpoints:
            if first >= end:
                continue
            for variable, value in pairs:
                if variable.value is not value and id(variable) not in pins:
                    raise TransformError(
                        f"a gradient through statements of the block that ran before the "
                        f"Variable {variable.name} changed (after the gradient called at "
                        f"line {block.starts[end]})",
                        block.filename,
                        block.starts[first],
                        hint="take that gradient in the block, before the Variable changes",
                    )

    def _check_changed(
        self,
        plan: _Plan,
        found: list[Any],
        found_names: list[tuple[str | None, str]],
        read: dict[int, Any],
        pins: dict[int, Any],
    ) -> None:
        """Refuse a source Variable that changed after the block first read it, by code
        the tape cannot see (``optimizer.apply_gradients`` in the block): the re-run
        would read its new value where the block read the old one. A Variable assigned
        by name in the block (``w.assign_sub(...)``) is checked by ``_check_assigned``;
        one a gradient called in the block saw unchanged before the slice's first
        statement is fine."""
        block = self._block
        assert block is not None
        first = min(plan.statements)
        for leaf, (name, _) in zip(found, found_names):
            if not isinstance(leaf, Variable):
                continue
            then = read.get(id(leaf))
            if then is None or then is leaf.value or id(leaf) in pins:
                continue
            if name is not None and any(
                f"{name}.assign" in block.source(st) for st in block.statements[: self._end]
            ):
                continue  # assigned by name: _check_assigned knows where
            if any(
                end <= first and any(v is leaf and a is leaf.value for v, a in pairs)
                for end, pairs in self._checkpoints
            ):
                continue  # unchanged since before the slice's first statement ran
            assigned = self._assigns.get(id(leaf))
            if (
                assigned is not None
                and assigned[1] < first
                and (assigned[2] if self._frame is None else leaf.value) is leaf.value
            ):
                continue  # last assigned before the slice's first statement: it read this
            raise TransformError(
                f"a gradient with respect to the Variable {leaf.name}, changed in the block "
                "after it was read (an optimizer step?): the statements that read it would "
                "run again on its new value",
                block.filename,
                block.starts[first],
                hint="take the gradient in the block before the Variable changes, or after "
                "the block of values computed from its new value only",
            )

    def _use(self) -> None:
        if self._used and not self.persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians)"
            )
        self._used = True

    def _name_of(self, value: Any, target: bool = False) -> tuple[str | None, str]:
        """The name a value has in the block: assigned there (``'block'``) or read from
        before it (``'input'``)."""
        objects, after = self._objects, self._after
        if len(objects) + len(after) <= 16:  # a few names: look, do not index
            if not target:
                for name, before in objects.items():
                    if before is value:
                        return name, "input"  # a source by the name it came in with
            for name, made in after.items():
                if made is value:
                    return name, "block"
            if target:
                for name, before in objects.items():
                    if before is value:
                        return name, "input"
            return None, ""
        facts = self._facts
        if facts is _EMPTY:
            facts = self._facts = {}
        inputs = facts.get("inputs")
        if inputs is None:  # the first name wins
            inputs = facts["inputs"] = {
                id(v): (n, "input") for n, v in reversed(self._objects.items())
            }
            facts["block"] = {id(v): (n, "block") for n, v in reversed(self._after.items())}
        key = id(value)
        if not target and key in inputs:
            return inputs[key]  # a source by the name it came in with
        return facts["block"].get(key) or inputs.get(key) or (None, "")

    def _gradients(self, target: Any, found: list[Any], cotangent: Any) -> list[Any]:
        """The gradient of ``target`` for each source in ``found`` (``None`` when not
        connected), from one forward and one backward sweep; ``cotangent(out)`` seeds it."""
        block = self._block
        assert block is not None
        targets = []
        read = self._read
        whole = None  # a list or dict the block filled, as one target (the sum of its leaves)
        if isinstance(target, (list, tuple, dict)):
            name, where = self._name_of(target, target=True)
            if name is not None and (where == "block" or name in self._refill):
                whole = name
                targets.append(name)
        for leaf in (
            ()
            if whole
            else leaves(target)
            if isinstance(target, (list, tuple, dict))
            else (target,)
        ):
            name, where = self._name_of(leaf, target=True)
            if name is None or where != "block":
                if self._end is not None and not block.simple[self._end]:
                    raise TransformError(
                        "tape.gradient inside a loop or branch of the block, of a value "
                        "computed in that loop or branch",
                        block.filename,
                        block.starts[self._end],
                        hint="compute the target in a statement of the block itself, "
                        "before the loop or branch, or take the gradient after the block",
                    )
                raise ValueError("the target was not computed in the tape's with block")
            targets.append(name)
            if isinstance(leaf, Variable):
                read = {**read, id(leaf): leaf.value}  # a Variable that is the target was read
        reached = self._user_code
        held = self._held
        named: list[str] = []  # sources passed as parameters
        cuts: set[str] = set()
        hidden: list[Variable] = []  # Variables whose gradients come from the table
        hidden_ids: set[int] = set()
        watch_all = self.watch_accessed_variables
        found_names = [self._name_of(leaf) for leaf in found]
        tensors: list[Any] = []  # watched tensors held in lists and dicts the block reads
        tensor_ids: set[int] = set()
        held_tensors: list[str] = []  # the names of those lists and dicts
        for leaf, (name, where) in zip(found, found_names):
            if isinstance(leaf, Variable):
                if id(leaf) not in read or not (
                    id(leaf) in self._watched_ids or watch_all and leaf.trainable
                ):
                    continue  # not read in the block (a branch not taken), or not watched
                if name is not None and name not in named and leaf.dtype.kind in "fc":
                    named.append(name)  # a parameter; one made in the block is given
                    if where == "block":
                        cuts.add(name)
                if (reached or id(leaf) in held or name is None) and id(leaf) not in hidden_ids:
                    hidden.append(leaf)
                    hidden_ids.add(id(leaf))
            elif where == "block" and name not in named:
                if np.asarray(leaf).dtype.kind in "fc":
                    named.append(name)
                    cuts.add(name)
            elif name is None and self._is_watched(leaf) and id(leaf) not in tensor_ids:
                holder = self._holder_of(leaf, self._objects)  # tape.watch(xs) of a list
                if holder is None and self._holder_of(leaf, self._after) is None:
                    continue  # not read in the block: unconnected, as in TensorFlow
                if holder is None:
                    raise TransformError(
                        "a gradient with respect to a tensor the block watched that no "
                        "name holds after it (a value computed in a loop of the block, "
                        "kept in a list the block made)",
                        block.filename,
                        block.line,
                        hint="differentiate with respect to a value a name holds after "
                        "the block (the loop's input), or take one tape per value",
                    )
                tensors.append(leaf)
                tensor_ids.add(id(leaf))
                if holder not in held_tensors:
                    held_tensors.append(holder)
            elif where == "input" and self._is_watched(leaf) and name not in named:
                if np.asarray(_value(self._before[name])).dtype.kind in "fc":
                    named.append(name)
                else:
                    warnings.warn(
                        "The dtype of the source tensor must be floating; got an integer: "
                        "its gradient is None",
                        stacklevel=4,
                    )
        plan = self._plan(targets, named, cuts, hidden, tuple(held_tensors))
        if plan is None:
            return [None] * len(found)
        pins = self._pins(plan, found, read)
        if self._assigned:
            self._check_assigned(plan, pins)
        if self._checkpoints:
            self._check_checkpoints(plan, pins)
        if plan.statements:
            self._check_changed(plan, found, found_names, read, pins)
        if self._end is not None:
            self._checkpoint(found)
        if plan.variables and len(targets) == 1 and not plan.containers and _variable.READS:
            # inside another tape's block (only there can an outer tape differentiate
            # this call): what that tape needs to differentiate it
            if self._variable_calls is _EMPTY:
                self._variable_calls = {}
            self._variable_calls[(targets[0], tuple(id(leaf) for leaf in found))] = _VariablesCall(
                plan, found, [n for n, _ in found_names], targets[0], cotangent
            )
        by_name, table = self._run(plan, [*hidden, *tensors], cotangent, pins)
        if cotangent is _ones_like and not tensors and not plan.refill:
            tape_fast.remember(self, plan, targets, found, found_names, hidden)
        grads: list[Any] = []
        for leaf, (name, _) in zip(found, found_names):
            variable = isinstance(leaf, Variable)
            if variable and id(leaf) not in read:
                grads.append(None)
                continue
            part = by_name.get(name) if name is not None else None
            extra = table.get(id(leaf)) if (variable or id(leaf) in tensor_ids) and table else None
            if part is None:
                grads.append(extra)
            elif extra is None:
                grads.append(part)
            else:
                grads.append(np.asarray(part) + np.asarray(extra))
        return grads

    def _plan(
        self,
        targets: list[str],
        named: list[str],
        cuts: set[str],
        hidden: list[Variable],
        held_tensors: tuple[str, ...] = (),
    ) -> _Plan | None:
        """The function differentiated for this request (cached unless it calls an inner
        tape's gradient, whose function is the inner tape's own); ``held_tensors``: the
        lists and dicts holding watched tensors that are sources."""
        block = self._block
        assert block is not None
        stores = self._float_stores()
        variables = bool(hidden) or bool(stores)
        held_in: tuple[str, ...] = ()
        if self._holders and hidden:
            hidden_ids = {id(h) for h in hidden}
            held_in = tuple(
                n
                for n in self._holders
                if any(id(leaf) in hidden_ids for leaf in leaves(self._objects[n]))
            )
        if held_tensors:
            held_in = tuple(dict.fromkeys([*held_in, *held_tensors]))
        key = (
            id(block),
            self._start,
            self._end,
            tuple(targets),
            tuple(named),
            tuple(sorted(cuts)) if cuts else (),
            variables,
            held_in,
            stores,
            self._refill,
        )
        plan = _PLANS.get(key) or self._nested_plans.get(key)
        if plan is not None:
            return self._register(plan, targets)
        statements, reached_cuts = slice_block(
            block, targets, cuts, self._start, self._end, stores, self._refill
        )
        self._refuse_own_gradient(statements)
        named = [n for n in named if n not in cuts or n in reached_cuts]
        statements, drawn = self._without_draws(statements)
        indices = [block.index[id(s)] for s in statements]
        reads = {n for s in statements for n in names(s).reads}
        inputs = [
            n
            for n in dict.fromkeys(block.reads)
            if n in reads and (n in self._before or n in self._code) and n not in named
        ]
        containers = [n for n in held_in if n in reads and n not in named]
        inputs = [n for n in inputs if n not in containers]
        params = [*named, *containers, *inputs, *drawn]
        wrt = [*named, *containers]
        if not wrt and not hidden:
            return None
        namespace = dict(self._globals)
        tapes = {n: obj for n, obj in self._after.items() if isinstance(obj, GradientTape)}
        inlined = inline_inner_tapes(statements, tapes, namespace, stop_gradient, self._lookup)
        reusable = inlined is statements
        fn = build_function(
            block, inlined, params, targets, self._globals if reusable else namespace
        )
        try:
            fns = compile_adjoint(fn, tuple(wrt), variables=variables).bind(fn)
        except TransformError as error:
            _refuse_nested(error, any(k.startswith("_inner_gradient_") for k in namespace))
            raise
        # a source reached only through round, stop_gradient... is not connected; through
        # an inner tape's gradient function the static check is not trusted
        nested = any(k.startswith("_inner_gradient_") for k in namespace)
        # a value stored in an attribute connects through what reads it: not seen statically
        stored = any(k in stores for k in indices)
        connected = [n in containers or nested or stored or depends(fn, n) for n in wrt]
        plan = _Plan(fns, fn, params, wrt, connected, containers, variables, indices, drawn)
        plan.calls_user_code = self._user_code
        plan.nested = nested
        plan.cuts = frozenset(reached_cuts)
        plan.plain = not drawn and not reached_cuts and not any(n in self._code for n in params)
        plan.assigns = all(assigns_names(s) for s in statements)
        plan.refill = frozenset(n for n in self._refill if n in params)
        if reusable:
            _PLANS[key] = plan
        else:  # for this run only: the inner tapes it calls are this run's
            if self._nested_plans is _EMPTY:
                self._nested_plans = {}
            self._nested_plans[key] = plan
        return self._register(plan, targets)

    @staticmethod
    def _holder_of(value: Any, objects: dict[str, Any]) -> str | None:
        """The name of a list, tuple or dict among ``objects`` (what the block read from
        before it, or assigned) that holds ``value`` (``tape.watch(xs)`` of a list of
        tensors)."""
        for name, obj in objects.items():
            if isinstance(obj, (list, tuple, dict)) and any(leaf is value for leaf in leaves(obj)):
                return name
        return None

    def _float_stores(self) -> frozenset[int]:
        """The statements of the block (their indices) that store a float array in an
        object's attribute (``layer.W = 2.0 * V``): re-run with the statements that read
        the object after them, their value differentiated through those reads."""
        block = self._block
        assert block is not None
        found = []
        for k, statement in enumerate(block.statements):
            chain = attribute_store(statement)
            if chain is None or chain[0] not in self._objects:
                continue
            value = self._objects[chain[0]]
            try:
                for attr in chain[1:]:
                    value = getattr(value, attr)
            except Exception:  # noqa: BLE001 (a property that fails: not a stored array)
                continue
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                found.append(k)
        return frozenset(found)

    def _refuse_own_gradient(self, statements: list[cst.CSTNode]) -> None:
        """A target computed from a gradient of this tape (or of another one its ``with``
        statement opens), called in its block: its second derivative needs an outer tape."""
        block = self._block
        assert block is not None
        own = block.tape_names
        if not own:
            return
        for statement in statements:
            found = names(statement)
            if found.attrs & {"gradient", "jacobian", "batch_jacobian"} and own & set(found.reads):
                raise TransformError(
                    "a gradient of a value computed from the same tape's gradient, called in "
                    "its block",
                    block.filename,
                    block.starts[block.index[id(statement)]],
                    hint="differentiate the inner gradient with a second tape around this one",
                )

    def _lookup(self, name: str) -> Any:
        """The value a name has in the block (as it left it), or had before it."""
        if name in self._after:
            return self._after[name]
        if name in self._objects:
            return self._objects[name]
        if name in self._code:
            return self._code[name]
        if name in self._globals:
            return self._globals[name]
        raise KeyError(name)

    def _register(self, plan: _Plan, targets: list[str]) -> _Plan:
        """Remember the plan for an outer tape that differentiates this tape's
        ``gradient`` call."""
        if len(targets) == 1:
            self._ran.append((plan, targets))
        return plan

    @property
    def _calls(self) -> dict[tuple[str, str], tuple[Any, list[str]]]:
        """(target name, source name) -> the function differentiated and its parameters."""
        calls: dict[tuple[str, str], tuple[Any, list[str]]] = {}
        for plan, targets in self._ran:
            for n in plan.wrt:
                if n not in plan.containers:
                    calls[(targets[0], n)] = (plan.fn, plan.params)
        return calls

    def _pins(
        self, plan: _Plan, found: list[Any], read: dict[int, Any]
    ) -> dict[int, tuple[Variable, Any]]:
        """The Variables whose array is known for the whole run of the slice's statements
        in the block, with that array: those assigned in the block (the array they held
        when the slice's first statement ran: TensorFlow differentiates the values that
        were read), unless an assignment falls between its first and last statements,
        and the sources changed since the block read them (an optimizer step after it).
        The re-run reads these arrays."""
        if not plan.statements or not (self._assigns or found):
            return {}
        first, last = min(plan.statements), max(plan.statements)
        pins: dict[int, tuple[Variable, Any]] = {}
        for variable, _, _, entries in self._assigns.values():
            if any(first <= k <= last for k, _, _ in entries):
                continue  # changed while the slice ran: the checks decide
            earlier = [new for k, _, new in entries if k < first]
            pins[id(variable)] = (variable, earlier[-1] if earlier else entries[0][1])
        for leaf in found:
            if isinstance(leaf, Variable) and id(leaf) not in self._assigns:
                then = read.get(id(leaf))
                if then is not None and then is not leaf.value:
                    pins[id(leaf)] = (leaf, then)  # changed after the block
        return pins

    def _run(
        self,
        plan: _Plan,
        hidden: list[Variable],
        cotangent: Any,
        pins: dict[int, tuple[Variable, Any]] | None = None,
    ) -> tuple[dict[str, Any], dict[int, Any]]:
        """Run the plan's sweeps; gradients by parameter name and by Variable id."""
        swapped = [(v, v.value) for v, then in pins.values() if v.value is not then] if pins else []
        if not swapped:
            return self._sweeps(plan, hidden, cotangent, None)
        for variable, _ in swapped:
            variable.value = pins[id(variable)][1]  # type: ignore[index]
        try:
            return self._sweeps(plan, hidden, cotangent, pins)
        finally:
            for variable, now in swapped:
                variable.value = now

    def _sweeps(
        self,
        plan: _Plan,
        hidden: list[Variable],
        cotangent: Any,
        pins: dict[int, tuple[Variable, Any]] | None,
    ) -> tuple[dict[str, Any], dict[int, Any]]:
        """The plan's forward and backward sweeps on the block's values."""
        before, objects = self._before, self._objects
        if plan.plain and self._frame is None:  # every parameter a value the block started
            # from (after the block: a Variable's entry is its array)
            if plan.variables:  # Variables not differentiated by name: as objects
                # (the names in ``_entry`` are those of the Variables the block read)
                wrt, entry = plan.wrt, self._entry
                values = [
                    objects[n] if n in entry and n not in wrt else before[n] for n in plan.params
                ]
            else:
                values = [before[n] for n in plan.params]
        else:
            values = self._values(plan)
        if plan.refill:  # the slice fills them again: a fresh copy per run
            values = [v.copy() if n in plan.refill else v for n, v in zip(plan.params, values)]
        if pins:  # Variables passed by name: the arrays the slice read
            for k, n in enumerate(plan.params):
                obj = objects.get(n)
                if isinstance(obj, Variable) and id(obj) in pins and values[k] is not obj:
                    values[k] = pins[id(obj)][1]
        recording = self._recording
        draws = recording.queue(plan.statements) if recording and recording.draws else []
        roots = [v for v in values if not isinstance(v, np.ndarray)] if plan.calls_user_code else []
        calls = recording.unused_calls(plan.statements) if recording and recording.calls else []
        given = None
        if calls:  # the layers the block called give back their values and pullbacks
            copies = {id(v): id(objects[n]) for n, v in zip(plan.params, values) if n in objects}
            given = (calls, copies)
        table = runtime.GradTable(dict.fromkeys(map(id, hidden), 0.0) if hidden else ())
        fns = plan.fns
        saved_table = runtime.VARIABLE_GRADS
        if plan.variables:
            runtime.VARIABLE_GRADS = table
        try:
            if draws or roots or given:
                # when the statements only assign names and call no user function, state
                # changes only in calls: saved before the first that runs again
                lazy = plan.assigns and not self._user_functions
                # an inner tape's gradient computes its block's draws again, several
                # times: given back by the object that drew them
                inner = self._inner_draws(plan) if plan.nested and draws else None
                if inner is None and draws and recording.inner:  # see tape_inner
                    draws, inner = recording.split(draws)
                with replay.replaying(draws, roots, given, lazy, keyed=inner):
                    out, saved = fns["fwd"](*values)
                    grads = fns["bwd"](saved, cotangent(out))
            else:  # nothing drawn, no object whose state a re-run could change
                out, saved = fns["fwd"](*values)
                grads = fns["bwd"](saved, cotangent(out))
        except TransformError as error:
            _refuse_nested(error, plan.nested)
            raise
        finally:
            runtime.VARIABLE_GRADS = saved_table
        by_name: dict[str, Any] = {}
        containers = plan.containers
        for k, name in enumerate(plan.wrt):
            g = grads[k]
            if containers and name in containers:
                for leaf, part in zip(leaves(values[k]), leaves(g)):
                    if id(leaf) in table and part is not None and not runtime.is_zero(part):
                        table[id(leaf)] = runtime.add(table[id(leaf)], part)
            elif plan.connected[k] and g is not None and not (type(g) is float and g == 0.0):
                value = values[k]
                if type(value) is not np.ndarray or _shape(g) != _ARRAY_SHAPE(value):
                    g = fix_grad(g, np.asarray(value))  # shape of its source
                by_name[name] = g
        if not table:
            return by_name, table
        # a Variable whose entry is still the symbolic zero 0.0 got no gradient
        return by_name, {
            key: None if type(value) is float and value == 0.0 else value
            for key, value in table.items()
        }

    def _inner_draws(self, plan: _Plan) -> list[tuple[str, Any, int | None]]:
        """The draws of the plan's statements that hold an inner tape's block."""
        block, recording = self._block, self._recording
        assert block is not None and recording is not None
        inner = [k for k in plan.statements if "GradientTape" in names(block.statements[k]).attrs]
        return recording.queue(inner)

    def _values(self, plan: _Plan) -> list[Any]:
        """The plan's arguments: the block's draws, sources made in the block as given,
        local functions, and the values the block started from."""
        values = []
        before, objects = self._before, self._objects
        drawn, cuts = plan.drawn, plan.cuts
        for n in plan.params:
            if n in drawn:
                values.append(self._after[n])
            elif n in cuts:
                values.append(_value(self._after[n]))  # a source made in the block, as given
            elif n in self._code:
                values.append(self._code[n])
            elif isinstance(objects.get(n), Variable):
                # a source as the block left it; other Variables as objects in variables
                # mode (their methods run), else as their values
                keep = plan.variables and n not in plan.wrt
                values.append(objects[n] if keep else _value(before[n]))
            else:
                values.append(before[n])
        return values

    def _check_assigned(self, plan: _Plan, pins: dict[int, Any]) -> None:
        """A Variable the block assigns is read, when the slice runs again, with the value
        it had when the slice's first statement ran (``pins``); refuse when the slice
        reads it both before and after an assignment (the two reads saw different
        values)."""
        block = self._block
        assert block is not None
        for name in self._assigned & set(plan.params):
            if id(self._objects[name]) in pins:
                continue
            assigns = [
                k
                for k, st in enumerate(block.statements[: self._end])
                if f"{name}.assign" in block.source(st)
            ]
            first_read = [k for k in plan.statements if name in names(block.statements[k]).reads]
            last = max(assigns) if assigns else -1
            if first_read and (
                min(first_read) < last or min(first_read) == last and not block.simple[last]
            ):
                raise TransformError(
                    f"the Variable {name} is read in the block both before and after it is "
                    "assigned",
                    block.filename,
                    block.starts[last],
                    hint="read it into a tensor before the assignment (v0 = tf.identity(v))",
                )

    def _resolve(self, name: str) -> Any:
        """The function or module a name the block reads (and does not assign) stands for."""
        if name in self._code:
            return self._code[name]
        if name in self._globals:
            return self._globals[name]
        return getattr(builtins, name, None)

    def _without_draws(
        self, statements: list[cst.CSTNode]
    ) -> tuple[list[cst.CSTNode], dict[str, Any]]:
        """Take the values of the slice's draws (``r = np.random.normal()``: assignments
        that read no data and call only library functions) from the block's own run:
        running them again would draw other numbers."""
        assert self._block is not None
        once = self._block.assigned_once
        kept: list[cst.CSTNode] = []
        drawn: dict[str, Any] = {}
        for statement in statements:
            writes = names(statement).writes
            if (
                writes
                and all(n in once and n in self._after for n in writes)
                and self._is_draw(statement)
            ):
                drawn.update({n: self._after[n] for n in writes})
            else:
                kept.append(statement)
        return kept, drawn

    def _is_draw(self, statement: cst.CSTNode) -> bool:
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign)
        ):
            return False
        assert self._block is not None
        found = names(statement)
        for name in set(found.reads) - found.keywords:
            if name in self._objects or name in self._block.writes and name not in found.writes:
                return False  # reads data (x = x * 2.0 reads the x it came in with)
            if name not in found.writes and not from_library(self._resolve(name)):
                return False  # a user function may read Variables
        return True

    def _unconnected(self, source: Any, zero: bool) -> Any:
        if not zero:
            return None
        value = _value(source)
        return tensor(np.zeros(np.shape(value)), dtype=np.asarray(value).dtype)


class _Ran:
    """The plans a tape ran, with their targets, for an outer tape that differentiates
    its ``gradient`` calls: one entry per (plan, targets), the latest last (a persistent
    tape's ``gradient`` called at every step of a loop does not make it grow)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[tuple[int, tuple[str, ...]], tuple[_Plan, list[str]]] = {}

    def append(self, item: tuple[_Plan, list[str]]) -> None:
        key = (id(item[0]), tuple(item[1]))  # the entry keeps the plan: its id stays its own
        entries = self.entries
        if key in entries:
            del entries[key]  # moved to the end: the latest wins in ``_calls``
        entries[key] = item

    def __iter__(self) -> Any:
        return iter(self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)


@dataclass
class _VariablesCall:
    """An inner gradient that differentiated Variables in variables mode, as an outer
    tape's rewrite of ``tape.gradient(target, sources)`` needs it."""

    plan: _Plan
    sources: list[Any]
    names: list[str | None]  # each source's name in the block, if it has one
    target: str
    cotangent: Any

    def function(self, sources: Any, seed_of: Any, label: str) -> Any:
        """The inner gradient as a function of the plan's parameters."""
        from .tape_nested import VariablesGradient

        wrt = tuple(self.plan.wrt)
        named = [wrt.index(n) if n in wrt else None for n in self.names]
        seed = self.cotangent(seed_of(self.target))
        return VariablesGradient(self.plan.fn, wrt, sources, named, seed, label)


class _StopRecording:
    """``with tape.stop_recording():`` (the tape reads the block's source: the values
    assigned inside are treated as constants when the tape differentiates)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _only_resets(statement: cst.CSTNode) -> bool:
    """A compound statement whose simple statements all call ``.reset()`` (``if reset:
    tape.reset()``): the statements after it are the ones recorded."""

    class _Simple(cst.CSTVisitor):
        def __init__(self) -> None:
            self.other = False

        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
            for small in node.body:
                call = small.value if isinstance(small, cst.Expr) else None
                is_reset = (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "reset"
                )
                self.other = self.other or not (is_reset or isinstance(small, cst.Pass))
            return False

    visitor = _Simple()
    statement.visit(visitor)
    return not visitor.other and isinstance(statement, cst.If)


def _refuse_nested(error: TransformError, nested: bool) -> None:
    """Say plainly what is missing when an outer tape meets a dynamic call (``layer(x)``)
    in an inner tape's gradient."""
    if nested and "vjp_call" in str(error):
        raise TransformError(
            "an outer tape over an inner tape's gradient through a call resolved at run "
            "time (a layer or model called in the inner block): second derivatives "
            "through such calls are not supported yet",
            hint="inside the inner block, compute with the Variables themselves "
            "(x @ layer.kernel + layer.bias), or with plain functions",
        ) from error


def _cotangents(outs: Any, output_gradients: Any) -> Any:
    """Ones in the shape of each target (TensorFlow sums a non-scalar target), or the
    given ``output_gradients``."""
    if isinstance(outs, (tuple, list)):  # several targets, or a list the block filled
        given = output_gradients if output_gradients is not None else [None] * len(outs)
        made = [_cotangents(o, g) for o, g in zip(outs, given)]
        return tuple(made) if isinstance(outs, tuple) else made
    if isinstance(outs, dict):
        given = output_gradients if output_gradients is not None else {}
        return {k: _cotangents(o, given.get(k)) for k, o in outs.items()}
    # NumPy values, never Python floats: a Python ``0.0`` adjoint means "not connected"
    dtype = np.result_type(np.asarray(outs).dtype, np.float32)
    if output_gradients is not None:
        g = np.asarray(output_gradients, dtype=dtype)
        return g[()] if not np.shape(outs) and g.size == 1 else g
    return np.ones(np.shape(outs), dtype=dtype)[()]


def _ones_like(outs: Any) -> Any:
    """The default cotangent: ones in the shape of each target (a NumPy scalar for a
    scalar target: immutable, so the sweeps cannot change it in place)."""
    if type(outs) is not tuple:
        dtype = getattr(outs, "dtype", None)
        if dtype is not None and dtype.kind in "fc" and outs.ndim == 0:
            return (dtype if dtype.itemsize >= 4 else np.dtype(np.float32)).type(1)
    return _cotangents(outs, None)


def _is_zero_policy(policy: UnconnectedGradients | str) -> bool:
    """Whether unconnected sources get zeros (``'zero'``) rather than ``None``."""
    if policy is UnconnectedGradients.NONE or policy == "none":
        return False
    return UnconnectedGradients(policy) is UnconnectedGradients.ZERO


def _as_tensor(g: Any, source: Any) -> Tensor:
    """A gradient as a tensor of its source's dtype."""
    dtype = source.value.dtype if isinstance(source, Variable) else np.asarray(source).dtype
    return tape_fast.as_tensor(g, dtype)


_ARRAY_SHAPE = np.ndarray.shape.__get__


def _shape(g: Any) -> Any:
    """The shape of a gradient as a tuple (a tensor's own is a ``TensorShape``)."""
    return _ARRAY_SHAPE(g) if isinstance(g, np.ndarray) else getattr(g, "shape", None)


def _value(source: Any) -> Any:
    return source.value if isinstance(source, Variable) else source


def _dtype(source: Any) -> Any:
    return np.asarray(_value(source)).dtype


_LIBRARY: dict[int, tuple[Any, bool]] = {}
# id of a module, function or class a block read -> (it, whether it is user code that may
# read Variables: a callable, not a class, not from a library)
_CODE_KINDS: dict[int, tuple[Any, bool]] = {}
# classes of objects that are neither data, Variables, containers nor code (the branches
# of ``_take_inputs`` decide by the class alone): their objects are taken at once
_OPAQUE: set[type] = set()
_MODULE = types.ModuleType
_CODE_KINDS_OF = frozenset((types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type))


def _library(value: Any) -> bool:
    """:func:`from_library`, remembered per function or module."""
    hit = _LIBRARY.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    found = from_library(value)
    if len(_LIBRARY) > 4096:
        _LIBRARY.clear()
    _LIBRARY[id(value)] = (value, found)
    return found


def _is_plain(value: Any, depth: int = 0) -> bool:
    """Data that cannot read Variables when used: numbers, arrays, containers of them."""
    if isinstance(value, (np.ndarray, np.generic, Variable, int, float, complex, str, type(None))):
        return True
    if isinstance(value, (list, tuple)) and depth < 2:
        return all(_is_plain(item, depth + 1) for item in value)
    if isinstance(value, dict) and depth < 2:
        return all(_is_plain(item, depth + 1) for item in value.values())
    return False


__all__ = ["GradientTape", "Tensor", "UnconnectedGradients", "Variable"]
