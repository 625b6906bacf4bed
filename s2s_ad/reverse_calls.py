"""Call planning for the reverse pass: how each active call site is emitted.

Each assignment of a call whose arguments are differentiated gets a
:class:`~s2s_ad.call_plans.CallPlan`: through a gradient rule, the called Python
function's own generated sweeps (bound as ``f_fwd``/``f_bwd``, rebound when a global
name changes), a pullback made when the code runs (``_ad.vjp_call``), a
``custom_gradient`` object or a ``defgrad`` rule. What none of them can differentiate
is refused here, before any code is generated.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import ir
from .analysis import CallInfo, classify, walk
from .built_objects import unknown_call_refusal
from .call_plans import CallPlan
from .ir import expr_atoms
from .object_state import STATE
from .rebind import GlobalCallee
from .rules.defaults import DEFAULTS
from .rules.registry import Rule
from .sweep_base import STRUCTURAL, Resolver, SweepBase, ident
from .targets import REFUSE, TRANSFORM_HINT, is_transform, signature, spec_of


def _refuse_out(sw: SweepBase, call: ir.Call, s: ir.Stmt) -> None:
    """Refuse ``np.sin(x, out=y)`` (or a ufunc's positional ``out``) on differentiated
    values: the write into ``y`` is not an assignment the transformer sees."""
    obj = call.callee.obj
    positional_out = isinstance(obj, np.ufunc) and len(call.args) > obj.nin
    if not (positional_out or any(k == "out" for k, _ in call.kwargs)):
        return
    if any(isinstance(a, ir.Var) and a.name in sw.activity.varied for a in expr_atoms(call)):
        raise sw.error(
            f"call to {call.callee.code} with an out= argument",
            s,
            "assign the result instead: y = np.sin(x)",
        )


def _refuse_transform(sw: SweepBase, func: Any, s: ir.Stmt) -> None:
    """Refuse, at the call, an s2s_ad transform (``jvp``, ``vjp``, ``hessian``) or a
    function one made that cannot be differentiated (a ``jacobian``), called on
    differentiated values: never their own source."""
    if is_transform(func):
        name = f"s2s_ad.{func.__name__}"
        raise sw.error(f"call to {name} inside a differentiated function", s, TRANSFORM_HINT)
    refusal = getattr(func, REFUSE, None)
    if refusal and spec_of(func) is None:
        raise sw.error(refusal, s, TRANSFORM_HINT)


def plan_calls(sw: SweepBase, token: str | None = None) -> dict[int, CallPlan]:
    """A plan for each assignment of an active call (statement id -> plan); refuses the
    calls neither rules nor generated sweeps can differentiate. With a ``token`` (pure code
    in variables mode) a user function is called as a dynamic one: its Variables'
    adjoints come back with a token."""
    plans: dict[int, CallPlan] = {}
    guards: dict[tuple[str, tuple[str, ...]], _Halves] = {}
    for s in walk(sw.body):
        if isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call):
            _refuse_out(sw, s.value, s)
        if not isinstance(s, ir.Assign) or not isinstance(s.value, ir.Call):
            continue
        call = s.value
        _refuse_out(sw, call, s)
        info = classify(call)
        if info.kind == "user" and any(sw.active(a) for a in expr_atoms(call)):
            _refuse_transform(sw, info.func, s)
        if token is not None and info.kind == "user":
            info = CallInfo("dynamic")  # its Variables' adjoints come back with a token
        if info.kind == "user" and (
            call.star is not None or call.starstar is not None or _packs(info.func, call)
        ):
            # what binds to which parameter is known when it runs: the dispatcher
            info = CallInfo("dynamic")
        elif info.kind in ("rule", "method") and (call.star or call.starstar):
            if any(sw.active(a) for a in expr_atoms(call)):
                if info.kind == "method":
                    raise sw.error(
                        f"method call .{call.callee.method}() with * or ** arguments on "
                        "differentiated values",
                        s,
                        "pass the arguments one by one",
                    )
                info = CallInfo("dynamic")
        if sw.variables and info.kind in ("method", "nondiff") and call.callee.method:
            if not sw.active(call.callee.receiver):
                info = CallInfo("dynamic")  # an object's method, not an array's
        elif info.kind == "method" and not sw.active(call.callee.receiver):
            if any(sw.active(a) for a in expr_atoms(call)) and (
                _array_only(call) or not rule_takes(info.rule, call, sw.active)
            ):
                # the receiver may be a module or an object (``anp.sum(x)`` with numpy
                # passed in, a user's ``parser.get(vect, name)``): which function runs
                # is known when it runs
                info = CallInfo("dynamic")
        active_args = [a for a in expr_atoms(call) if sw.active(a)]
        reads_variables = sw.variables and info.kind in ("user", "dynamic")
        if not (active_args or reads_variables) or info.kind == "nondiff":
            continue
        if not sw.activity.active(s.target):
            continue
        plan = CallPlan(info)
        if info.kind == "user":
            plan.labels = _user_labels(sw, info.func, call, s)
            sw._refuse_written_arguments(call, s)
            params = tuple(str(label) for label, _ in plan.labels)
            pair = sw.resolver(info.func, params)
            if sw.user_globals.get(call.callee.code) is info.func and sw.pure:
                sw.pinned[call.callee.code] = info.func
            if sw.user_globals.get(call.callee.code) is info.func and not sw.pure:
                # a global name may be rebound later (a notebook cell run again)
                key = (call.callee.code, params)
                if key not in guards:
                    guard = GlobalCallee(
                        sw.user_globals,
                        [call.callee.code],
                        info.func,
                        functools.partial(_resolve_again, sw.resolver, params),
                    )
                    guards[key] = _Halves(guard.fwd, guard.bwd)
                pair = guards[key]
            base = ident(info.func)
            plan.fwd = sw.bind(f"{base}_fwd", pair.fwd)
            plan.bwd = sw.bind(f"{base}_bwd", pair.bwd)
            plan.aux = sw.mint(f"_{base}_saved")
        elif info.kind == "dynamic":
            if sw.pure and isinstance(call.callee.var, ir.Var):
                _refuse_changing_closure(sw, call.callee.var.name, s)
            labels: list[tuple[Any, ir.Atom]] = []
            if sw.active(call.callee.var) and sw.variables in (False, STATE):
                # a function value made with differentiated defaults (``lambda z, s=s:``):
                # its adjoint is theirs (checked when it runs, see rules.defaults)
                assert call.callee.var is not None
                labels.append((DEFAULTS, call.callee.var))
            if call.callee.receiver is not None and sw.active(call.callee.receiver):
                if sw.variables == STATE:
                    pass  # a model's method: its attributes' adjoints go through the table
                elif sw.variables:
                    raise sw.error(
                        f"method call .{call.callee.method}() on a differentiated value",
                        s,
                        "only NumPy array methods are supported on differentiated values",
                    )
                # a method of an object built from differentiated values: its adjoint is
                # its fields' (dispatch.record_method, checked when it runs)
                labels.append((DEFAULTS, call.callee.receiver))
            for pos, a in enumerate(call.args):
                if sw.active(a):
                    labels.append((pos, a))
            for key, a in call.kwargs:
                if sw.active(a):
                    labels.append((key, a))
            if sw.active(call.star):
                labels.append((("*", len(call.args)), call.star))
            if sw.active(call.starstar):
                labels.append((("**", tuple(k for k, _ in call.kwargs)), call.starstar))
            plan.labels = labels
            plan.aux = sw.mint("_pullback")
        elif info.kind == "custom_gradient":
            plan.aux = sw.mint("_grad_fn")
        elif info.kind == "custom":
            plan.bwd = sw.bind(f"{ident(call.callee.obj)}_rule", info.func)
        elif info.kind == "unknown":
            construct, hint = unknown_call_refusal(call.callee.code, call.callee.obj)
            raise sw.error(construct, s, hint)
        plans[id(s)] = plan
    return plans


def _user_labels(
    sw: SweepBase, func: Any, call: ir.Call, stmt: ir.Stmt
) -> list[tuple[Any, ir.Atom]]:
    try:
        sig = signature(func)  # the differentiated function's own (not __wrapped__'s)
        marks = [object() for _ in call.args]
        kmarks = {k: object() for k, _ in call.kwargs}
        bound = sig.bind(*marks, **kmarks)
    except (TypeError, ValueError) as exc:
        raise sw.error(f"call to {call.callee.code} ({exc})", stmt) from None
    atom_of = {id(m): a for m, a in zip(marks, call.args)}
    atom_of.update({id(kmarks[k]): a for k, a in call.kwargs})
    labels = []
    for name, value in bound.arguments.items():
        atom = atom_of.get(id(value))
        if atom is None:
            raise sw.error(f"call to {call.callee.code} with variadic arguments", stmt)
        if sw.active(atom):
            labels.append((name, atom))
    return labels


@dataclass
class _Halves:
    fwd: Callable[..., Any]
    bwd: Callable[..., Any]


def _array_only(call: ir.Call) -> bool:
    """Whether a method call's rule is an array method's (``.sum``, ``.dot``): on a receiver
    that is not differentiated it may be a module or another object (``anp.sum(x)``)."""
    return hasattr(np.ndarray, call.callee.method or "")


def rule_takes(rule: Rule | None, call: ir.Call, active: Callable[[ir.Atom], bool]) -> bool:
    """Whether a method rule differentiates every differentiated argument of ``call`` (the
    receiver first): ``d.get(key, x)`` on a dict, not ``parser.get(vect, "W")``."""
    if rule is None:
        return False
    args = [call.callee.receiver, *call.args]
    if len(args) > len(rule.params):
        return not any(active(a) for a in args[len(rule.params) :])
    pairs = list(zip(rule.params, args)) + list(call.kwargs)
    return all(
        p in rule.partials or p in rule.vjps or p in STRUCTURAL for p, a in pairs if active(a)
    )


def _packs(func: Any, call: ir.Call) -> bool:
    """Whether a call binds arguments to ``func``'s ``*args``/``**kwargs`` parameters."""
    try:
        sig = signature(func)
    except (TypeError, ValueError):
        return False
    packed = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    if not any(p.kind in packed for p in sig.parameters.values()):
        return False
    try:
        bound = sig.bind(*call.args, **dict(call.kwargs))
    except TypeError:
        return False  # refused with the binding error by _user_labels
    return any(sig.parameters[name].kind in packed for name in bound.arguments)


def _resolve_again(resolver: Resolver, params: tuple[str, ...], func: Any) -> Any:
    return resolver(func, params)


def _refuse_changing_closure(sw: SweepBase, name: str, s: ir.Stmt) -> None:
    """Refuse, in code differentiated again, a call of a lambda held in ``name`` whose body
    reads a variable bound again later (a loop variable): its pullback, run in the
    backward sweep, would look the variable up then (the first derivatives bind a copy of
    the lambda's cells when it is called, see ``dispatch._frozen``)."""
    bound: dict[str, int] = {}
    lambdas: list[str] = []
    for t in walk(sw.body):
        names = [t.target] if isinstance(t, (ir.Assign, ir.ListPop)) else []
        names += list(t.targets) if isinstance(t, ir.Unpack) else []
        names += [t.target, t.target] if isinstance(t, ir.For) else []  # every trip
        for n in names:
            bound[n] = bound.get(n, 0) + 1
        if (
            isinstance(t, ir.Assign)
            and t.target == name
            and isinstance(t.value, ir.Opaque)
            and t.value.code.startswith("lambda")
        ):
            lambdas.append(t.value.code)
    for code in lambdas:
        tree = ast.parse(code, mode="eval").body
        assert isinstance(tree, ast.Lambda)
        own = {a.arg for a in [*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs]}
        free = {n.id for n in ast.walk(tree.body) if isinstance(n, ast.Name)} - own
        changing = sorted(n for n in free if bound.get(n, 0) > 1)
        if changing:
            raise sw.error(
                f"call of {name}, a lambda reading {changing[0]!r}, which is bound again "
                "later, in code differentiated twice",
                s,
                f"bind the value as a default: lambda ..., {changing[0]}={changing[0]}: ...",
            )
