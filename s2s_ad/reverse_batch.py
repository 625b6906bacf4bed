"""Batched reverse mode: one backward sweep pulls back a whole batch of cotangents.

The batched backward program is the reverse-mode program with every cotangent carrying
a leading batch axis (one row of a Jacobian per entry; :mod:`s2s_ad.cotangents` states
the convention). Its forward sweep is the one-row program's; the backward sweep differs
only where a VJP needs to know about that axis:

* elementwise adjoints (``g * partial``) broadcast as they are, and the helpers the
  sweep calls as ``_ad`` (sums down to a shape, scatters for indexing, packing) are the
  batched ones of :mod:`s2s_ad.cotangents`;
* a rule's VJP template batches when it is a call of a batched helper on ``g``
  (``_ad.sum_vjp(g, a, axis, keepdims)``, ``_ad.matmul_vjp_x(g, x, y)``) or one of
  :data:`TEMPLATES` (reshapes, transposes);
* every other VJP template runs once per row (``_ad.rows(lambda _g: ..., g)``), with the
  one-row helpers as ``_ad1``;
* a call of another Python function runs that function's batched sweeps, also when the
  function is a value known only when the code runs (:func:`vjp_call`; what is not a
  Python function is then pulled back once per row).

A program that calls what has no batched form at all (a ``defgrad`` rule, a function
value given ``*args``, a helper of one-row cotangents) is not batched: ``jacobian`` then
pulls back one output entry at a time (:class:`Unbatched`).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import weakref
from typing import Any

from . import cotangents, ir
from .analysis import CallInfo
from .call_plans import CallPlan
from .custom import CustomGradient
from .dispatch import _target, call_with_pullback
from .emit import AD as ONE_ROW
from .emit import Compiled, emit
from .reverse import Reverse
from .rules import REGISTRY
from .rules.registry import Rule
from .source import user_origin
from .sweep_base import Resolver

#: One-row VJP templates -> their batched form (``g`` carries the batch axis).
TEMPLATES = {
    "g": "g",
    "np.transpose(g)": "_ad.transpose(g)",
}
_SHAPED = re.compile(r"^np\.(reshape|broadcast_to)\(g, np\.shape\((\w+)\)\)$")
_HELPER_ON_G = re.compile(r"^_ad\.(\w+)\(g(?:,|\))")
_G = re.compile(r"(?<![\w.])g(?!\w)")
_AD = re.compile(r"(?<![\w.])_ad\.")
#: Helpers of :mod:`s2s_ad.cotangents` that take a batched cotangent first.
BATCHED_HELPERS = frozenset(
    {"sum_vjp", "mean_vjp", "matmul_vjp_x", "matmul_vjp_y", "dot_vjp_a", "dot_vjp_b"}
    | {"transpose_vjp", "max_vjp", "min_vjp", "unbroadcast"}
)


class Unbatched(Exception):
    """A function whose backward sweep has no batched form (the reason as message)."""


def batched_template(template: str) -> str | None:
    """The batched form of a one-row VJP template, or ``None`` (run once per row)."""
    text = template.strip()
    if text in TEMPLATES:
        return TEMPLATES[text]
    shaped = _SHAPED.match(text)
    if shaped:
        return f"_ad.{shaped.group(1)}(g, np.shape({shaped.group(2)}))"
    helper = _HELPER_ON_G.match(text)
    if helper and helper.group(1) in BATCHED_HELPERS and len(_G.findall(text)) == 1:
        return text
    return None


class BatchedReverse(Reverse):
    """Builds the batched backward program (cotangents with a leading batch axis)."""

    def __init__(
        self,
        fn: ir.Function,
        wrt: list[str],
        resolver: Resolver,
        user_globals: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(fn, wrt, resolver, user_globals=user_globals)
        self.bindings[self.ad] = cotangents.AD
        self.one_row = self.bind("_ad1", ONE_ROW)
        self.row = self.mint("_g")
        self._batched_rules: dict[int, Rule] = {}
        self._original: dict[int, Rule] = {}  # id of a batched rule -> its rule

    @property
    def dense(self) -> set[str]:
        """No adjoint is taken for a dense 1-d array written element by element
        (``b[i] += g`` would index the batch axis): always empty."""
        return set()

    @dense.setter
    def dense(self, value: set[str]) -> None:
        pass

    def zero(self, var: str, dense: bool = False) -> Any:
        # no dense zero arrays: their batch size is known only once a cotangent arrives
        return super().zero(var, False)

    def render_expr(self, expr: ir.Expr) -> str:
        text = super().render_expr(expr)
        if isinstance(expr, ir.Call) and expr.callee.code.startswith("_ad."):
            # a helper called by the code differentiated (a gradient): the one-row helper
            text = self.one_row + text[len(self.ad) :]
        return text

    def _batched_rule(self, rule: Rule) -> Rule:
        """``rule`` with batched VJP templates (see :func:`batched_template`)."""
        hit = self._batched_rules.get(id(rule))
        if hit is not None:
            return hit
        vjps = {}
        for param, template in rule.vjps.items():
            if param in rule.partials or template.strip() in ("0", "0.0"):
                vjps[param] = template
                continue
            batched = batched_template(template)
            if batched is None:
                one = _AD.sub(f"{self.one_row}.", _G.sub(self.row, template))
                like = "" if param == "args" else f", {param}"
                batched = f"_ad.rows(lambda {self.row}: {one}, g{like})"
            vjps[param] = batched
        made = self._batched_rules[id(rule)] = dataclasses.replace(rule, vjps=vjps)
        self._original[id(made)] = rule
        return made

    def apply_rule(
        self,
        rule: Rule,
        names: dict[str, str],
        s: ir.Assign,
        add: Any,
        atoms: list[tuple[str, ir.Atom]],
        use_math: bool = False,
    ) -> None:
        rule = self._batched_rule(self._original.get(id(rule), rule))
        super().apply_rule(rule, names, s, add, atoms, use_math)

    def call_contribs(
        self,
        s: ir.Assign,
        call: ir.Call,
        plan: CallPlan | None,
        add: Any,
        pre: list[Any],
    ) -> None:
        if plan is not None:
            kind = plan.info.kind
            if kind in ("rule", "method") and plan.info.rule is not None:
                # the plan may hold the batched rule already (a loop's body is
                # reversed twice): batch the rule it came from, never the batched one
                rule = plan.info.rule
                rule = self._batched_rule(self._original.get(id(rule), rule))
                plan.info = CallInfo(kind, rule, plan.info.func)
            elif kind not in ("user", "dynamic") or any(
                isinstance(label, tuple) for label, _ in plan.labels
            ):
                raise Unbatched(f"line {s.line}: call to {call.callee.code} ({kind})")
        super().call_contribs(s, call, plan, add, pre)

    def contributions(self, s: ir.Assign, plan: CallPlan | None) -> Any:
        if isinstance(s.value, ir.Build):
            # a list's cotangent may be one batched array: entries read through _ad.getitem
            self.zero_filled.add(s.target)
        return super().contributions(s, plan)


_REFUSED = "rev_batched_refused"
_IN_PROGRESS: set[Any] = set()


def compile_batched_adjoint(func: Any, wrt: tuple[str, ...]) -> Compiled:
    """The batched backward program of ``func`` for the parameters ``wrt`` (with its
    forward sweep), cached with the other generated programs.

    Raises:
        Unbatched: When a VJP it needs has no batched form (remembered until
            ``clear_cache``).
    """
    from .api import _CACHE, code_key, normalized_for, python_function

    func = python_function(func)
    key = ("rev_batched", code_key(func), wrt)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    refused = _CACHE.get((_REFUSED, *key[1:]))
    if refused is not None:
        raise Unbatched(refused)
    _IN_PROGRESS.add(key)
    try:
        parsed, fn = normalized_for(func, wrt)
        rev = BatchedReverse(fn, list(wrt), _callee, parsed.globals)
        sweeps = rev.run()
        origin = user_origin(parsed.filename, parsed.first_line)
        name = f"{fn.name}_batched"
        compiled = emit(sweeps, func, name, fn.params, rev.ad, rev.tape, str(rev.returned), origin)
        lacking = cotangents.missing(compiled.text, rev.ad)
        if lacking:
            raise Unbatched(f"helpers without a batched form: {', '.join(lacking)}")
    except Unbatched as e:
        _CACHE[(_REFUSED, *key[1:])] = str(e)
        raise
    finally:
        _IN_PROGRESS.discard(key)
    _CACHE[key] = compiled
    return compiled


@dataclasses.dataclass
class _Pair:
    fwd: Any
    bwd: Any


def _callee(func: Any, wrt: tuple[str, ...]) -> _Pair:
    """The batched sweeps of a Python function called from a batched program (bound when
    first called for a function calling itself)."""
    from .api import code_key, primal

    func = primal(func)
    if ("rev_batched", code_key(func), wrt) in _IN_PROGRESS:
        cell: dict[str, Any] = {}

        def bound() -> dict[str, Any]:
            if not cell:
                cell["fns"] = compile_batched_adjoint(func, wrt).bind(func)
            return cell["fns"]

        return _Pair(lambda *a, **k: bound()["fwd"](*a, **k), lambda s, g: bound()["bwd"](s, g))
    fns = compile_batched_adjoint(func, wrt).bind(func)
    return _Pair(fns["fwd"], fns["bwd"])


_BOUND: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], tuple[Compiled, Any, Any]]] = (
    weakref.WeakKeyDictionary()
)


def batched_pullback(func: Any, wrt: tuple[str, ...]) -> Any | None:
    """``{'fwd': ..., 'bwd': ...}``: the batched sweeps of ``func`` bound to it, or
    ``None`` when its backward sweep has no batched form.

    Bound once per compiled program: a function bound before is taken as it is while its
    program is still the cached one (``clear_cache`` and ``defgrad`` empty the cache)."""
    from .api import _CACHE, code_key, primal

    try:
        per_func = _BOUND.get(func)
    except TypeError:  # not weakly referenceable
        per_func = None
    hit = per_func.get(wrt) if per_func is not None else None
    if hit is not None and _CACHE.get(hit[2]) is hit[0]:
        return hit[1]
    target = primal(func)
    try:
        compiled = compile_batched_adjoint(target, wrt)
    except Unbatched:
        return None
    fns = compiled.bind(target)
    try:
        _BOUND.setdefault(func, {})[wrt] = (compiled, fns, ("rev_batched", code_key(target), wrt))
    except TypeError:
        pass
    return fns


def vjp_call(func: Any, labels: tuple[Any, ...], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Call ``func`` (known only when the code runs) and return ``(value, pullback)``
    where ``pullback`` takes a batch of cotangents: the batched sweeps of a Python
    function, else one pullback per row (``func`` called again for each: exact, slower)."""
    from .api import primal

    target, pre = _target(func)
    plain = not (
        target is None
        or REGISTRY.custom.get(id(func)) is not None
        or isinstance(func, CustomGradient)
        or REGISTRY.lookup(func) is not None
        or getattr(func, "_s2s_dispatched", False)  # _ad.vjp_apply: per row, as dispatched
    )
    if plain and all(isinstance(label, int) for label in labels):
        target = primal(target)
        params = list(inspect.signature(target, follow_wrapped=False).parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if all(label + len(pre) < len(positional) for label in labels):
            names = [positional[label + len(pre)].name for label in labels]
            order = tuple(p.name for p in params if p.name in names)
            fns = batched_pullback(target, order)
            if fns is not None:
                value, saved = fns["fwd"](*pre, *args, **kwargs)

                def batched(g: Any) -> tuple[Any, ...]:
                    grads = fns["bwd"](saved, g)
                    return tuple(grads[order.index(name)] for name in names)

                return value, batched
    value, _ = call_with_pullback(func, labels, args, kwargs)

    def per_row(g: Any) -> tuple[Any, ...]:
        def one(row: Any) -> tuple[Any, ...]:
            return call_with_pullback(func, labels, args, kwargs)[1](row)

        out = cotangents.rows(one, g)
        if not isinstance(out, (tuple, list)):
            return tuple(0.0 for _ in labels)
        # (the callee's own label, DEFAULTS: its adjoint as the per-row pullbacks give it)
        given = [
            args[lab] if isinstance(lab, int) else kwargs.get(lab, o) for lab, o in zip(labels, out)
        ]
        return tuple(o if x is o else cotangents.shaped(o, x) for o, x in zip(out, given))

    return value, per_row


cotangents.AD.vjp_call = vjp_call  # what the forward sweep of a batched program calls
