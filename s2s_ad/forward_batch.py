"""Batched forward mode: one run of the tangent program pushes a whole batch of tangents.

The batched tangent program is the forward-mode program with every tangent carrying a
leading batch axis (one column of a Jacobian per entry; :mod:`s2s_ad.batching` states
the convention). It differs from the one-column program only where a rule needs to know
about that axis:

* elementwise rules lift an operand's tangent to the rank of the result before
  multiplying by the partial (``_batch.lift``) and shape the sum like the value
  (``_batch.batch_like``);
* rules with a batched template (``Rule.batched``: sums, matrix products, transposes,
  reshapes, the gradient program's own helpers) use it;
* indexing, in-place writes, unpacking and calls to other Python functions use the
  batched runtime helpers;
* every other rule runs its one-column template once per column
  (``_batch.columns(lambda _c: ..., t)``), and a rule without a forward template
  shares one pullback per output entry between all columns (``_batch.jvp_from_vjp``).

``jacobian(mode='fwd')`` and ``hessian`` run it on an identity matrix of tangents, in
chunks whose memory stays under :data:`MAX_BATCH_BYTES` (:func:`chunk_size`).
"""

from __future__ import annotations

import inspect
import tracemalloc
import weakref
from typing import Any

import numpy as np

from . import batching, ir
from .custom import CustomGradient
from .dispatch import _target, call_with_tangent
from .emit import Compiled, emit_forward
from .forward import TANGENTS, Forward, Tangents
from .rules import REGISTRY
from .rules import batched as _batched_rules  # noqa: F401  (attaches the batched templates)
from .rules.registry import Rule, substitute
from .simplify import fold
from .source import user_origin
from .sweep_base import Resolver

#: Memory one batched run may allocate (bytes): the batch is cut in chunks of as many
#: columns as fit, measured on a first chunk of :data:`PROBE_COLUMNS` columns.
MAX_BATCH_BYTES = 2**28
#: Up to this many columns run in one batch without measuring first.
UNMEASURED_COLUMNS = 128
PROBE_COLUMNS = 8

_BATCH = "_batch"  # the name of the batching helpers in generated code
_BATCHED_HELPERS = {
    "tangent_parts",
    "set_tangent",
    "restore_tangent",
    "getitem",
    "jvp_from_vjp",
    "jvp_call",
}


class BatchedForward(Forward):
    """Builds the batched tangent program (tangents with a leading batch axis)."""

    batched = True

    def __init__(
        self,
        fn: ir.Function,
        wrt: list[str],
        resolver: Resolver,
        user_globals: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(fn, wrt, resolver, user_globals)
        self.batch = self.bind(_BATCH, batching)
        self.column = self.mint("_c")

    def runtime(self, name: str) -> str:
        if name in _BATCHED_HELPERS:
            return f"{self.batch}.{name}"
        return super().runtime(name)

    def _all_scalar(self, s: ir.Assign) -> bool:
        value = s.value
        if isinstance(value, ir.BinOp):
            atoms = [value.left, value.right]
        elif isinstance(value, ir.UnaryOp):
            atoms = [value.operand]
        elif isinstance(value, ir.Call):
            atoms = [*value.args, *(a for _, a in value.kwargs)]
        else:
            return False
        return all(isinstance(a, ir.Const) or a.name in self.scalar for a in atoms)

    def operand_tangent(self, t: str, atom: ir.Atom, s: ir.Assign, rule: Rule) -> str:
        if len(rule.params) == 1 or self._all_scalar(s):
            return t  # same shape as the value (or scalars all through)
        return f"{self.batch}.lift({t}, {s.target})"

    def elementwise_total(self, total: str, s: ir.Assign, rule: Rule) -> str:
        return f"{self.batch}.batch_like({total}, {s.target})"

    def template_part(self, rule: Rule, param: str, env: dict[str, str], t: str) -> str:
        env = {**env, "_batch": self.batch}
        template = rule.batched.get(param)
        if template is not None:
            return fold(substitute(template, {**env, "t": t}))
        one = fold(substitute(rule.jvps[param], {**env, "t": self.column}))
        return f"{self.batch}.columns(lambda {self.column}: {one}, {t})"

    def per_column(self, pattern: str, ts: list[str], tuple_: bool = False) -> str:
        names = [f"{self.column}{k}" for k in range(len(ts))]
        joined = ", ".join(names) + ("," if tuple_ and len(names) == 1 else "")
        body = pattern.replace(TANGENTS, joined)
        return f"{self.batch}.columns(lambda {', '.join(names)}: {body}, {', '.join(ts)})"


def compile_batched(func: Any, wrt: tuple[str, ...]) -> Compiled:
    """The batched tangent program of ``func`` for the parameters ``wrt``, cached with the
    other generated programs (``clear_cache`` forgets it when the rules change)."""
    from .api import _CACHE, _resolve_callee, code_key, normalized_for, python_function

    func = python_function(func)
    key = ("batched", code_key(func), wrt)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    parsed, fn = normalized_for(func, wrt)
    forward = BatchedForward(fn, list(wrt), _resolve_callee, parsed.globals)
    tan: Tangents = forward.run_forward()
    origin = user_origin(parsed.filename, parsed.first_line)
    compiled = emit_forward(tan, func, f"{fn.name}_batched", fn.params, forward.ad, origin)
    _CACHE[key] = compiled
    return compiled


_BOUND: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], tuple[Compiled, Any, Any]]] = (
    weakref.WeakKeyDictionary()
)
_CACHE_OF: list[dict[Any, Any]] = []  # api._CACHE, looked up once (api imports this module)


def batched_jvp(func: Any, wrt: tuple[str, ...]) -> Any:
    """The bound batched tangent function of ``func`` (bound once per compiled program).

    A function bound before is taken as it is while its compiled program is still the
    cached one (``clear_cache`` and ``defgrad`` empty the cache); its keys are the
    functions ``primal`` returned, for which ``primal`` returns them again."""
    try:
        per_func = _BOUND.get(func)
    except TypeError:  # not weakly referenceable
        per_func = None
    if per_func is not None and _CACHE_OF:
        hit = per_func.get(wrt)
        if hit is not None and _CACHE_OF[0].get(hit[2]) is hit[0]:
            return hit[1], hit[0].tangent_params or {}
    from .api import _CACHE, code_key, primal

    if not _CACHE_OF:
        _CACHE_OF.append(_CACHE)
    func = primal(func)
    compiled = compile_batched(func, wrt)
    per_func = _BOUND.setdefault(func, {})
    hit = per_func.get(wrt)
    if hit is not None and hit[0] is compiled:
        return hit[1], compiled.tangent_params or {}
    fn = compiled.bind(func)["jvp"]
    per_func[wrt] = (compiled, fn, ("batched", code_key(func), wrt))
    return fn, compiled.tangent_params or {}


def call_batched(
    func: Any,
    labels: tuple[Any, ...],
    tangents: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, Any]:
    """``func(*args, **kwargs)`` and the batched tangent of its value: the callee's own
    batched program for a Python function, one forward-mode run per column otherwise."""
    target, pre = _target(func)
    plain = not (
        target is None
        or id(func) in REGISTRY.custom_jvp
        or REGISTRY.custom.get(id(func)) is not None
        or isinstance(func, CustomGradient)
        or REGISTRY.lookup(func) is not None
        or getattr(func, "_s2s_dispatched", False)  # _ad.vjp_apply: per column, as dispatched
    )
    if plain and all(isinstance(label, int) for label in labels):
        from .api import primal

        target = primal(target)
        full = (*pre, *args)
        params = list(inspect.signature(target, follow_wrapped=False).parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        given = {}
        for label, tangent in zip(labels, tangents):
            index = label + len(pre)
            if index >= len(positional):
                break  # variadic: the per-column path below refuses or handles it
            given[positional[index].name] = tangent
        else:
            order = tuple(p.name for p in params if p.name in given)
            fn, tp = batched_jvp(target, order)
            return fn(*full, **kwargs, **{tp[p]: given[p] for p in order})
    size = batching.batch_size(*tangents)
    if size is None:
        return call_with_tangent(func, labels, tuple(0.0 for _ in tangents), args, kwargs)[0], 0.0
    runs = [
        call_with_tangent(
            func, labels, tuple(batching.column(t, i) for t in tangents), args, kwargs
        )
        for i in range(size)
    ]
    return runs[0][0], batching.stack([r[1] for r in runs])


# --- chunks ---------------------------------------------------------------------------------

_PER_COLUMN: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], float]] = (
    weakref.WeakKeyDictionary()
)


def _shapes(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(np.shape(a) if isinstance(a, np.ndarray) else type(a) for a in args)


def chunk_size(target: Any, name: str, args: tuple[Any, ...], n: int) -> int:
    """Columns per batched run for ``n`` columns: all of them up to
    :data:`UNMEASURED_COLUMNS`, else as many as :data:`MAX_BATCH_BYTES` holds given the
    memory one column took when last measured for these argument shapes (a first chunk of
    :data:`PROBE_COLUMNS` columns is measured when nothing is known)."""
    if n <= UNMEASURED_COLUMNS:
        return n
    per_column = _PER_COLUMN.get(target, {}).get((name, _shapes(args)))
    if per_column is None:
        return PROBE_COLUMNS if not tracemalloc.is_tracing() else UNMEASURED_COLUMNS
    return int(max(1, min(n, MAX_BATCH_BYTES // max(per_column, 1.0))))


def measured(
    target: Any,
    name: str,
    args: tuple[Any, ...],
    columns: int,
    jvp_fn: Any,
    call: tuple[Any, ...],
    tangents: dict[str, Any],
) -> Any:
    """Run ``jvp_fn`` and record the peak memory it allocated per column (NumPy reports
    its allocations to ``tracemalloc``); not measured when the user is already tracing."""
    if tracemalloc.is_tracing():
        return jvp_fn(*call, **tangents)
    tracemalloc.start()
    try:
        result = jvp_fn(*call, **tangents)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    try:
        _PER_COLUMN.setdefault(target, {})[(name, _shapes(args))] = peak / columns
    except TypeError:  # not weakly referenceable: measured again next time
        pass
    return result
