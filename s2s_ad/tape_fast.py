"""The common ``tape.gradient`` request, answered without the general bookkeeping.

A training step asks the same thing at every step: the gradient of one target computed
in the block with respect to Variables the block read by name (``tape.gradient(loss,
[w, b])``). The first such request of a block goes the general way
(:meth:`GradientTape._gradients`), which names the target and the sources, builds or
finds the plan and checks what may have changed; when the request had the common shape
(every source a watched Variable the block read by name, nothing drawn, no call kept,
no user code, no Variable assigned), :func:`remember` keeps the names and the plan per
block (the last :data:`PER_BLOCK` such requests: a GAN step asks for two targets of one
block, by two tapes or one persistent tape). Later requests are answered by
:func:`fast_gradient` after checking, per call, every condition the general way would
have checked: the same target and source objects under the same names, each source
read, watched, of a float dtype and not changed since it was read, the block's run
with no draws, no kept calls, no assignment and no gradient called inside it. Any other
request, or any failed check, takes the general way, so the answer is the same either
way.

The Keras step (``tape.gradient(loss, model.trainable_variables)``: every source a
Variable the block reached through its objects, none with a name in the block) is kept
the same way (:func:`_remember_variables`) and answered by :func:`fast_variables`, which
checks what the general way would decide (the same target name; each source read,
unchanged, watched, named nowhere in the block and given once; no assignment, no
gradient called in the block, no outer tape recording) and runs the remembered plan
through :meth:`GradientTape._run`, kept calls and all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import variable as _variable
from .api import fix_grad
from .variable import EagerTensor, ResourceVariable, Variable, tensor

if TYPE_CHECKING:
    from .tape import GradientTape, _Plan

_ARRAY_SHAPE = np.ndarray.shape.__get__
_asarray = np.asarray


class Request:
    """A request of the common shape, for one block: the target's and sources' names
    and the plan that answered it."""

    __slots__ = ("block", "start", "target", "targets", "names", "plan", "seed")

    def __init__(self, block: Any, start: int, target: str, names: tuple[str, ...], plan: Any):
        self.block = block
        self.start = start
        self.target = target
        self.targets = [target]
        self.names = names
        self.plan = plan
        # the cotangent of a scalar target, by its dtype: an immutable NumPy scalar
        self.seed: tuple[Any, Any] = (None, None)


# id(block) -> the last requests of the common shape made of that block, the latest
# first (a GAN step asks two: the generator's loss, then the discriminator's)
_REQUESTS: dict[int, list[Request]] = {}
# how many requests are kept per block
PER_BLOCK = 4


def _keep(table: dict[int, list[Any]], request: Any, same: Any) -> None:
    """Put ``request`` first in its block's entry of ``table``, replacing the one
    ``same(kept)`` says it answers too, keeping at most :data:`PER_BLOCK`."""
    block = request.block
    kept = table.get(id(block))
    if kept is None or kept[0].block is not block:  # none, or an earlier block's id
        table[id(block)] = [request]
        return
    kept[:] = [request, *(k for k in kept if not same(k))][:PER_BLOCK]


def remember(
    tape: GradientTape,
    plan: _Plan,
    targets: list[str],
    found: list[Any],
    found_names: list[tuple[str | None, str]],
    hidden: list[Any],
) -> None:
    """Keep a request the general way answered, when it has the common shape (or its
    sources are all Variables reached through the block's objects)."""
    if hidden:
        _remember_variables(tape, plan, targets, found, found_names, hidden)
        return
    block = tape._block
    if (
        block is None
        or tape._end is not None
        or len(targets) != 1
        or hidden
        or not plan.plain
        or plan.variables
        or plan.calls_user_code
        or plan.containers
        or plan.nested
        or plan.cuts
        or plan.drawn
    ):
        return
    names = tuple(name for name, _ in found_names)
    if (
        len(set(names)) != len(names)
        or tuple(plan.wrt) != names
        or any(type(leaf) is not ResourceVariable for leaf in found)
        or any(where != "input" for _, where in found_names)
    ):
        return
    request = Request(block, tape._start, targets[0], names, plan)
    _keep(
        _REQUESTS,
        request,
        lambda k: k.start == request.start and k.target == request.target and k.names == names,
    )


def _find(tape: GradientTape, target: Any, sources: list[Any] | tuple[Any, ...]) -> Any:
    """The remembered request of the tape's block for this target and these sources
    (the same objects under the same names), or ``None``."""
    requests = _REQUESTS.get(id(tape._block))
    if requests is None:
        return None
    block, start, after, objects = tape._block, tape._start, tape._after, tape._objects
    count = len(sources)
    for request in requests:
        if (
            request.block is block
            and request.start == start
            and len(request.names) == count
            and after.get(request.target) is target
        ):
            for leaf, name in zip(sources, request.names):
                if objects.get(name) is not leaf:
                    break
            else:
                return request
    return None


def fast_gradient(
    tape: GradientTape, target: Any, sources: list[Any] | tuple[Any, ...], seed: Any
) -> Any:
    """The gradients of ``target`` with respect to ``sources`` (a flat list or tuple)
    as :meth:`GradientTape._gradient` gives them, or ``None`` when the request is not
    the remembered one of the block or a condition of the common shape fails.
    ``seed(out)`` is the cotangent of the target's value ``out``."""
    if (
        tape._user_code
        or tape._held
        or tape._assigned
        or tape._assigns
        or tape._checkpoints
        or type(target) is not EagerTensor
        and isinstance(target, Variable)
    ):
        return None
    requests = _REQUESTS.get(id(tape._block))
    if requests is None:
        return None
    # the remembered request of the tape's block for this target and these sources (the
    # same objects under the same names: see ``_find``), inline
    block, start, after, objects = tape._block, tape._start, tape._after, tape._objects
    count = len(sources)
    for request in requests:
        if (
            request.block is block
            and request.start == start
            and len(request.names) == count
            and after.get(request.target) is target
        ):
            for leaf, name in zip(sources, request.names):
                if objects.get(name) is not leaf:
                    break
            else:
                break
    else:
        return None
    recording = tape._recording
    if recording is not None and (recording.draws or recording.calls):
        return None
    read, watched = tape._read, tape._watched_ids
    watch_all = tape.watch_accessed_variables
    for leaf in sources:  # (each the object of its name in the block, as checked above)
        if type(leaf) is not ResourceVariable:
            return None
        value = leaf.value
        key = id(leaf)
        if read.get(key) is not value or value.dtype.kind not in "fc":
            return None  # not read (None), or changed since it was read: the general way
        if key not in watched and not (watch_all and leaf.trainable):
            return None
    plan = request.plan
    if _variable.READS:  # inside another tape's block: what ``tape._register`` keeps
        tape._ran.append((plan, request.targets))  # (that tape may differentiate this call)
    values = list(map(tape._before.__getitem__, plan.params))
    fns = plan.fns
    out, saved = fns["fwd"](*values)  # (a remembered plan is never nested)
    dtype, one = request.seed
    if type(out) is not EagerTensor or out.dtype is not dtype or out.ndim:
        one = seed(out)
        if isinstance(one, np.generic):  # immutable: the same for the next step
            request.seed = (out.dtype if type(out) is EagerTensor else None, one)
    grads = fns["bwd"](saved, one)
    result = []
    for g, value, connected in zip(grads, values, plan.connected):
        # (``value``: the source's array, its entry in ``tape._before``)
        if not connected or g is None or (type(g) is float and g == 0.0):
            result.append(None)
            continue
        kind = type(g)
        if kind is np.ndarray or kind is EagerTensor:
            if _ARRAY_SHAPE(g) != _ARRAY_SHAPE(value):
                g = fix_grad(g, value)  # the shape of its source
            result.append(as_tensor(g, value.dtype))
            continue
        if kind is value.dtype.type and not value.ndim:  # a scalar source's NumPy scalar
            result.append(_asarray(g).view(EagerTensor))  # (as_tensor, inline)
            continue
        shape = _ARRAY_SHAPE(g) if isinstance(g, np.ndarray) else getattr(g, "shape", None)
        if shape != _ARRAY_SHAPE(value):
            g = fix_grad(g, value)
        result.append(as_tensor(g, value.dtype))
    return result if type(sources) is list else tuple(result)


class VariablesRequest:
    """A request whose sources are all Variables the block reached through its objects
    (``model.trainable_variables``: none has a name in the block), for one block: the
    target's name and the plan that answered it."""

    __slots__ = ("block", "start", "target", "targets", "count", "plan")

    def __init__(self, block: Any, start: int, target: str, count: int, plan: Any):
        self.block = block
        self.start = start
        self.target = target
        self.targets = [target]
        self.count = count
        self.plan = plan


# id(block) -> the last requests of that block whose sources were all reached Variables,
# the latest first
_VARIABLE_REQUESTS: dict[int, list[VariablesRequest]] = {}


def _remember_variables(
    tape: GradientTape,
    plan: _Plan,
    targets: list[str],
    found: list[Any],
    found_names: list[tuple[str | None, str]],
    hidden: list[Any],
) -> None:
    """Keep a request whose sources were all hidden Variables (given by the plan's
    table, none a parameter), each once."""
    block = tape._block
    if (
        block is None
        or tape._end is not None
        or len(targets) != 1
        or not plan.variables
        or plan.wrt
        or plan.containers
        or plan.nested
        or plan.cuts
        or any(p is plan for p in tape._nested_plans.values())
        or len(hidden) != len(found)
        or any(h is not leaf for h, leaf in zip(hidden, found))
        or any(type(leaf) is not ResourceVariable for leaf in found)
        or any(name is not None for name, _ in found_names)
    ):
        return
    request = VariablesRequest(block, tape._start, targets[0], len(found), plan)
    _keep(
        _VARIABLE_REQUESTS,
        request,
        lambda k: k.start == request.start and k.target == request.target,
    )


def fast_variables(
    tape: GradientTape, target: Any, sources: list[Any] | tuple[Any, ...], seed: Any
) -> list[Any] | None:
    """The gradients (tensors, ``None`` when not connected) of ``target`` with respect to
    ``sources`` as :meth:`GradientTape._gradients` gives them for a request of the
    remembered variables shape, or ``None`` when a condition of that shape fails.
    ``seed(out)`` is the cotangent of the target's value ``out``."""
    requests = _VARIABLE_REQUESTS.get(id(tape._block))
    if (
        requests is None
        or tape._assigned
        or tape._checkpoints
        or tape._holders
        or _variable.READS  # inside another tape's block: the general way keeps more
        or isinstance(target, Variable)
    ):
        return None
    block, start, after, count = tape._block, tape._start, tape._after, len(sources)
    for request in requests:
        if (
            request.block is block
            and request.start == start
            and request.count == count
            and after.get(request.target) is target
        ):
            break
    else:
        return None
    ids = set(map(id, sources))
    if len(ids) != count:  # a source given twice: the general way
        return None
    # a source with a name in the block is a parameter: the general way
    if not ids.isdisjoint(map(id, tape._objects.values())) or not ids.isdisjoint(
        map(id, tape._after.values())
    ):
        return None
    read, watched = tape._read, tape._watched_ids
    watch_all = tape.watch_accessed_variables
    for leaf in sources:
        if type(leaf) is not ResourceVariable or read.get(id(leaf)) is not leaf.value:
            return None  # not read (None), or changed since it was read: the general way
        if not (watch_all and leaf.trainable) and id(leaf) not in watched:
            return None
    plan = request.plan  # (not kept for an outer tape: none is recording, see above)
    _, table = tape._run(plan, list(sources), seed)
    out: list[Any] = []
    for leaf in sources:  # each as a tensor of its source's dtype (``None``: unconnected)
        g = table.get(id(leaf))
        if g is None:
            out.append(None)
            continue
        dtype = leaf.value.dtype
        if type(g) is np.ndarray and g.dtype == dtype:
            out.append(g.view(EagerTensor))
        else:
            out.append(as_tensor(g, dtype))
    return out


def as_tensor(g: Any, dtype: Any) -> Any:
    """A gradient as a tensor of its source's ``dtype`` (the array itself, viewed, when it
    has that dtype already)."""
    kind = type(g)
    if kind is np.ndarray:
        if g.dtype == dtype:
            return g.view(EagerTensor)
    elif kind is dtype.type:  # a NumPy scalar of the source's dtype
        return np.asarray(g).view(EagerTensor)
    return tensor(g, dtype=dtype)
