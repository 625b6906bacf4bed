"""The common ``tape.gradient`` request, answered without the general bookkeeping.

A training step asks the same thing at every step: the gradient of one target computed
in the block with respect to Variables the block read by name (``tape.gradient(loss,
[w, b])``). The first such request of a block goes the general way
(:meth:`GradientTape._gradients`), which names the target and the sources, builds or
finds the plan and checks what may have changed; when the request had the common shape
(every source a watched Variable the block read by name, nothing drawn, no call kept,
no user code, no Variable assigned), :func:`remember` keeps the names and the plan per
block. Later requests are answered by :func:`fast_gradient` after checking, per call,
every condition the general way would have checked: the same target and source objects
under the same names, each source read, watched, of a float dtype and not changed since
it was read, the block's run with no draws, no kept calls, no assignment and no
gradient called inside it. Any other request, or any failed check, takes the general
way, so the answer is the same either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .api import fix_grad
from .variable import EagerTensor, ResourceVariable, Variable, tensor

if TYPE_CHECKING:
    from .tape import GradientTape, _Plan

_ARRAY_SHAPE = np.ndarray.shape.__get__


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


# id(block) -> the last request of the common shape made of that block
_REQUESTS: dict[int, Request] = {}


def remember(
    tape: GradientTape,
    plan: _Plan,
    targets: list[str],
    found: list[Any],
    found_names: list[tuple[str | None, str]],
    hidden: list[Any],
) -> None:
    """Keep a request the general way answered, when it has the common shape."""
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
    _REQUESTS[id(block)] = Request(block, tape._start, targets[0], names, plan)


def fast_gradient(
    tape: GradientTape, target: Any, sources: list[Any] | tuple[Any, ...], seed: Any
) -> Any:
    """The gradients of ``target`` with respect to ``sources`` (a flat list or tuple)
    as :meth:`GradientTape._gradient` gives them, or ``None`` when the request is not
    the remembered one of the block or a condition of the common shape fails.
    ``seed(out)`` is the cotangent of the target's value ``out``."""
    block = tape._block
    request = _REQUESTS.get(id(block))
    if (
        request is None
        or request.block is not block
        or request.start != tape._start
        or len(request.names) != len(sources)
        or tape._user_code
        or tape._held
        or tape._assigned
        or tape._assigns
        or tape._checkpoints
    ):
        return None
    if tape._after.get(request.target) is not target or isinstance(target, Variable):
        return None
    recording = tape._recorder.recording
    if recording is not None and (recording.draws or recording.calls):
        return None
    objects, read, watched = tape._objects, tape._read, tape._watched_ids
    watch_all = tape.watch_accessed_variables
    for leaf, name in zip(sources, request.names):
        if objects.get(name) is not leaf or type(leaf) is not ResourceVariable:
            return None
        value = leaf.value
        if read.get(id(leaf)) is not value or value.dtype.kind not in "fc":
            return None  # not read (None), or changed since it was read: the general way
        if id(leaf) not in watched and not (watch_all and leaf.trainable):
            return None
    plan = request.plan
    tape._ran.append((plan, request.targets))  # what ``tape._register`` keeps
    before = tape._before
    values = [before[n] for n in plan.params]
    fns = plan.fns
    out, saved = fns["fwd"](*values)  # (a remembered plan is never nested)
    dtype, one = request.seed
    if type(out) is not EagerTensor or out.dtype is not dtype or out.ndim:
        one = seed(out)
        if isinstance(one, np.generic):  # immutable: the same for the next step
            request.seed = (out.dtype if type(out) is EagerTensor else None, one)
    grads = fns["bwd"](saved, one)
    result = []
    connected = plan.connected
    for k in range(len(sources)):
        g = grads[k]
        if not connected[k] or g is None or (type(g) is float and g == 0.0):
            result.append(None)
            continue
        value = values[k]  # the source's array (its entry in ``tape._before``)
        shape = _ARRAY_SHAPE(g) if isinstance(g, np.ndarray) else getattr(g, "shape", None)
        if shape != _ARRAY_SHAPE(value):
            g = fix_grad(g, value)  # the shape of its source
        result.append(as_tensor(g, value.dtype))
    return result if type(sources) is list else tuple(result)


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
