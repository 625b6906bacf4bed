"""Walk the rule registry in forward mode: every JVP template against finite differences
and against its rule's VJP (the dot-product identity ``<u, J v> == <J^T u, v>``), the
``0.0`` entries of sequence tangents, behaviour at ties and degenerate points, and the
bookkeeping (which rules still lack a JVP).

Templates are evaluated as forward mode runs them: :func:`substitute` puts variable names
for the parameters (defaults are source text, evaluated too), :func:`fold` simplifies, and
the expression is evaluated with ``np``, ``_ad``, ``t`` (the parameter's tangent) and
``ans`` (the primal output) in scope.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_rules import ON_SIMPLEX, along_simplex
from trees import flat, is_float, random_like, unflat

from s2s_ad.emit import AD  # the helpers generated code reaches as _ad
from s2s_ad.rules import REGISTRY
from s2s_ad.rules.containers import CHECKED_ON_PROGRAMS
from s2s_ad.rules.registry import Rule, substitute
from s2s_ad.simplify import fold

REGISTRY.load_optional()  # SciPy's rules, when SciPy is installed
EPS = 1e-6
RTOL = 1e-5  # finite differences
EXACT = 1e-9  # JVP against VJP: both exact
ZERO = "0.0"  # the template of a parameter the output does not depend on

# Differentiable parameters with a VJP but no JVP template (forward mode then builds the
# Jacobian-vector product from the VJP, one output entry at a time).
WITHOUT_JVP: dict[tuple[str, str], str] = {}

Call = tuple[tuple[Any, ...], dict[str, Any]]
# Rules whose samples are not also run with their optional arguments at the defaults.
NO_SHORT_CALLS = {
    "np.linalg.svd": "full_matrices=True (the default) of a non-square matrix is refused",
    "scipy.linalg.svd": "full_matrices=True (the default) of a non-square matrix is refused",
    "scipy.linalg.qr": "mode='full' (the default) of a tall matrix is refused",
}


# --- helpers -------------------------------------------------------------------------


def primal(rule: Rule) -> Callable[..., Any]:
    """The callable a rule describes (methods and attributes through ``getattr``)."""
    if rule.funcs:
        return rule.funcs[0]
    name = rule.name.removeprefix("ndarray.")
    if REGISTRY.attrs.get(name) is rule:
        return lambda self: getattr(self, name)
    return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)


def _split(sample: tuple[Any, ...]) -> Call:
    if sample and isinstance(sample[-1], dict):
        return tuple(sample[:-1]), dict(sample[-1])
    return tuple(sample), {}


def calls(rule: Rule) -> list[Call]:
    """The sample calls of a rule, plus each sample cut down to its required arguments
    (so every template also runs with the other parameters at their defaults)."""
    out = [_split(s) for s in rule.samples]
    out += [(out[0][0], dict(kw)) for kw in rule.kw_samples]
    required = len([p for p in rule.params if p not in rule.defaults])
    seen = {(tuple(map(id, a)), tuple(k)) for a, k in out}
    for args, kwargs in list(out):
        if rule.varargs or rule.name in NO_SHORT_CALLS or (len(args) <= required and not kwargs):
            continue
        short = args[:required]
        key = (tuple(map(id, short)), ())
        if key in seen:
            continue
        try:
            primal(rule)(*short)
        except Exception:  # not a valid call without those arguments
            continue
        seen.add(key)
        out.append((short, {}))
    return out


def zeros_like(value: Any) -> Any:
    """A dense zero with the structure of ``value``."""
    if isinstance(value, (list, tuple)):
        return type(value)(zeros_like(v) for v in value)
    return np.zeros(np.shape(value)) if np.ndim(value) else 0.0


def densify(tangent: Any, like: Any) -> Any:
    """``tangent`` with its symbolic-zero entries replaced by zeros shaped like ``like``'s."""
    if type(tangent) is float and tangent == 0.0:
        return zeros_like(like)
    if isinstance(like, (list, tuple)):
        return type(like)(densify(t, x) for t, x in zip(tangent, like))
    return tangent


def check_structure(tangent: Any, ans: Any, where: str, zero_entries: bool = False) -> None:
    """A tangent has exactly the structure and shapes of the output, with float leaves
    (with ``zero_entries``, an entry of a list/tuple output may be the symbolic zero)."""
    if isinstance(ans, (list, tuple)):
        named = hasattr(ans, "_fields") and type(tangent) is tuple  # namedtuple: any tuple
        assert named or type(tangent) is type(ans), f"{where}: {type(tangent)} for a {type(ans)}"
        assert len(tangent) == len(ans), where
        for i, (t, a) in enumerate(zip(tangent, ans)):
            if not (zero_entries and type(t) is float and t == 0.0):
                check_structure(t, a, f"{where}[{i}]", zero_entries)
        return
    assert np.shape(tangent) == np.shape(ans), (
        f"{where}: shape {np.shape(tangent)} != {np.shape(ans)}"
    )
    assert np.asarray(tangent).dtype.kind == "f", f"{where}: dtype {np.asarray(tangent).dtype}"


def param_values(rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The sample value of each parameter with a JVP that was passed."""
    values = dict(zip(rule.params, args))
    values.update(kwargs)
    if rule.varargs:
        values["args"] = tuple(args[len(rule.params) :])
    return {p: values[p] for p in rule.jvps if p in values}


def with_param(
    rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any], param: str, value: Any
) -> Call:
    """The call with one parameter replaced."""
    if param == "args":
        return args[: len(rule.params)] + tuple(value), kwargs
    if param in kwargs:
        return args, {**kwargs, param: value}
    pos = rule.params.index(param)
    return args[:pos] + (value,) + args[pos + 1 :], kwargs


def evaluate(rule: Rule, template: str, call: Call, extra: dict[str, Any]) -> Any:
    """Evaluate a template for a call, as generated code would."""
    args, kwargs = call
    names = [f"_v{i}" for i in range(len(args))]
    kw_names = {k: f"_k_{k}" for k in kwargs}
    bound = rule.bind(names, kw_names)
    assert bound is not None, f"{rule.name} does not bind {len(args)} args and {list(kwargs)}"
    env = {"np": np, "_ad": AD, **dict(zip(names, args)), **extra}
    env.update({kw_names[k]: v for k, v in kwargs.items()})
    return eval(fold(substitute(template, bound)), env)  # noqa: S307


def jvp(rule: Rule, param: str, call: Call, t: Any, ans: Any) -> Any:
    return evaluate(rule, rule.jvps[param], call, {"t": t, "ans": ans})


def vjp(rule: Rule, param: str, call: Call, g: Any, ans: Any) -> Any:
    return evaluate(rule, rule.vjps[param], call, {"g": g, "ans": ans})


def dot(a: Any, b: Any) -> float:
    return float(flat(a) @ flat(b))


def assert_transpose(
    rule: Rule, param: str, call: Call, t: Any, ans: Any, rng: Any, where: str
) -> None:
    """``<u, JVP(t)> == <VJP(u), t>`` for a random cotangent ``u``."""
    u = random_like(ans, rng)
    forward = 0.0 if rule.jvps[param] == ZERO else dot(u, jvp(rule, param, call, t, ans))
    backward = 0.0 if rule.vjps[param] == ZERO else dot(vjp(rule, param, call, u, ans), t)
    scale = max(abs(forward), abs(backward), np.linalg.norm(flat(u)) * np.linalg.norm(flat(t)))
    assert abs(forward - backward) <= EXACT * scale, (
        f"{where}: <u, jvp(t)> = {forward!r} but <vjp(u), t> = {backward!r}"
    )


JVP_RULES = [r for r in REGISTRY.rules if r.jvps and r.samples]


# --- each template, on every sample ------------------------------------------------------


@pytest.mark.parametrize("rule", JVP_RULES, ids=lambda r: r.name)
def test_jvp_matches_finite_differences_and_vjp(rule: Rule) -> None:
    rng = np.random.default_rng(0)
    f = primal(rule)
    tested: set[str] = set()
    for n, call in enumerate(calls(rule)):
        args, kwargs = call
        ans = f(*args, **kwargs)
        for param, value in param_values(rule, args, kwargs).items():
            if not is_float(value):
                continue
            tested.add(param)
            where = f"{rule.name} call {n} ({len(args)} args, {sorted(kwargs)}) d/d{param}"
            t = random_like(value, rng)
            if param in rule.symmetric and np.ndim(value) >= 2:  # reads one triangle
                t = 0.5 * (t + np.swapaxes(t, -1, -2))
            if (rule.name, param) in ON_SIMPLEX:
                t = along_simplex(t)
            got = jvp(rule, param, call, t, ans)
            if rule.jvps[param] != ZERO:
                check_structure(got, ans, where)
            up, down = (
                with_param(rule, args, kwargs, param, unflat(flat(value) + step * flat(t), value))
                for step in (EPS, -EPS)
            )
            fd = (flat(f(*up[0], **up[1])) - flat(f(*down[0], **down[1]))) / (2 * EPS)
            have = np.zeros_like(fd) if rule.jvps[param] == ZERO else flat(got)
            np.testing.assert_allclose(
                have,
                fd,
                rtol=RTOL,
                atol=RTOL * (1.0 + np.max(np.abs(fd), initial=0.0)),
                err_msg=where,
            )
            assert_transpose(rule, param, call, t, ans, rng, where)
    untested = set(rule.jvps) - tested
    assert not untested, f"{rule.name}: no float sample for {sorted(untested)}"


def _sequence_params(rule: Rule) -> list[tuple[int, Call, str, Any]]:
    found = []
    for n, (args, kwargs) in enumerate(calls(rule)):
        for param, value in param_values(rule, args, kwargs).items():
            if isinstance(value, (list, tuple)) and is_float(value) and rule.jvps[param] != ZERO:
                found.append((n, (args, kwargs), param, value))
    return found


SEQUENCE_RULES = [r for r in JVP_RULES if r.samples and _sequence_params(r)]


@pytest.mark.parametrize("rule", SEQUENCE_RULES, ids=lambda r: r.name)
def test_sequence_tangents_with_zero_entries(rule: Rule) -> None:
    """A list/tuple tangent (varargs: the tuple ``t``) may hold the symbolic zero ``0.0``
    for elements that are not differentiated, whatever their shape."""
    rng = np.random.default_rng(1)
    f = primal(rule)
    for n, call, param, value in _sequence_params(rule):
        ans = f(*call[0], **call[1])
        t = random_like(value, rng)
        for i in range(len(value)):
            sparse = type(value)(t[j] if j == i else 0.0 for j in range(len(value)))
            dense = type(value)(t[j] if j == i else zeros_like(value[j]) for j in range(len(value)))
            where = f"{rule.name} call {n} d/d{param}[{i}]"
            got = jvp(rule, param, call, sparse, ans)
            check_structure(got, ans, where, zero_entries=True)
            want = jvp(rule, param, call, dense, ans)
            np.testing.assert_allclose(flat(densify(got, ans)), flat(want), err_msg=where)


# --- kinks and degenerate points ----------------------------------------------------------

_TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]])
_INF = float("inf")
# (callable, positional args, parameter): points where the output is not differentiable
# (ties) or degenerate (zeros); the JVP must still be the transpose of the VJP there.
KINKS: list[tuple[Any, tuple[Any, ...], str]] = [
    (np.max, (_TIES,), "a"),
    (np.max, (_TIES, 1), "a"),
    (np.min, (_TIES, 0, None, True), "a"),
    (np.maximum.reduce, (_TIES, 1), "array"),
    (np.minimum.reduce, (_TIES, None), "array"),
    ("max", (_TIES,), "self"),
    ("min", (_TIES, 1), "self"),
    (max, ([1.0, 3.0, 3.0],), "a"),
    (min, ((2.0, 0.5, 0.5),), "a"),
    (max, (2.0, 2.0), "a"),
    (max, (2.0, 2.0), "b"),
    (max, (1.0, 3.0, 3.0, 0.0), "args"),
    (min, (0.5, 0.5, 0.5), "args"),
    (np.linalg.norm, (np.array([1.0, -3.0, 3.0]), _INF), "x"),
    (np.linalg.norm, (_TIES, 1), "x"),
    (np.linalg.norm, (np.zeros(3),), "x"),
    (np.linalg.norm, (np.zeros((2, 2)), "fro"), "x"),
    (np.linalg.norm, (np.zeros((2, 3)), None, 1), "x"),
    (np.std, (np.ones(4),), "a"),
    (np.std, (np.array([[1.0, 1.0], [0.0, 2.0]]), 1), "a"),
    ("std", (np.ones((2, 2)),), "self"),
    (np.prod, (np.array([0.0, 2.0, 0.0]),), "a"),
    (np.prod, (np.array([[0.0, 2.0], [3.0, 0.5]]), 1), "a"),
    (np.multiply.reduce, (np.array([[0.0, 2.0], [0.0, 0.5]]), 0), "array"),
    (np.sort, (np.array([2.0, 1.0, 2.0, 1.0]),), "a"),
    ("clip", (np.array([0.0, 0.5, 1.0]), 0.0, 1.0), "self"),
    ("clip", (np.array([0.0, 0.5, 1.0]), 0.0, 1.0), "min"),
    ("clip", (np.array([0.0, 0.5, 1.0]), 0.0, 1.0), "max"),
]


def _rule_for(func: Any) -> Rule:
    rule = REGISTRY.methods[func] if isinstance(func, str) else REGISTRY.lookup(func)
    assert rule is not None, func
    return rule


@pytest.mark.parametrize("case", KINKS, ids=lambda c: f"{getattr(c[0], '__name__', c[0])}-{c[2]}")
def test_jvp_is_the_transpose_of_the_vjp_at_kinks(case: tuple[Any, tuple[Any, ...], str]) -> None:
    func, args, param = case
    rule = _rule_for(func)
    call: Call = (args, {})
    ans = primal(rule)(*args)
    rng = np.random.default_rng(2)
    value = param_values(rule, args, {})[param]
    for _ in range(3):
        t = random_like(value, rng)
        got = jvp(rule, param, call, t, ans)
        check_structure(got, ans, f"{rule.name} d/d{param}")
        assert np.all(np.isfinite(flat(got)))
        assert_transpose(rule, param, call, t, ans, rng, f"{rule.name} d/d{param}")


def test_ties_share_the_tangent() -> None:
    rule = REGISTRY.lookup(np.max)
    t = np.array([[9.0, 1.0, 0.0], [5.0, 5.0, 5.0]])
    got = jvp(rule, "a", ((_TIES,), {}), t, np.max(_TIES))
    assert got == 0.5
    got = jvp(rule, "a", ((_TIES, 1), {}), t, np.max(_TIES, 1))
    np.testing.assert_allclose(got, [0.5, 5.0])
    builtin = REGISTRY.lookup(max)
    assert jvp(builtin, "a", (([1.0, 3.0, 3.0],), {}), [0.0, 1.0, 0.0], 3.0) == 0.5
    assert jvp(builtin, "a", ((2.0, 2.0), {}), 1.0, 2.0) == 0.5
    assert jvp(builtin, "args", ((1.0, 3.0, 3.0), {}), (1.0,), 3.0) == 0.5


def test_degenerate_points_give_zero_tangents() -> None:
    norm = REGISTRY.lookup(np.linalg.norm)
    assert jvp(norm, "x", ((np.zeros(3),), {}), np.ones(3), 0.0) == 0.0
    std = REGISTRY.lookup(np.std)
    assert jvp(std, "a", ((np.ones(4),), {}), np.arange(4.0), 0.0) == 0.0
    prod = REGISTRY.lookup(np.prod)
    a = np.array([0.0, 2.0, 3.0])
    assert jvp(prod, "a", ((a,), {}), np.array([1.0, 0.0, 0.0]), 0.0) == 6.0
    assert jvp(prod, "a", ((a,), {}), np.array([0.0, 1.0, 1.0]), 0.0) == 0.0


def test_integer_casts_cut_the_tangent() -> None:
    a = np.array([0.5, 1.5])
    for func, args, param in [(np.array, (a, int), "object"), (np.asarray, (a, int), "a")]:
        rule = REGISTRY.lookup(func)
        got = jvp(rule, param, (args, {}), np.ones(2), func(*args))
        np.testing.assert_array_equal(got, [0.0, 0.0])
    astype = REGISTRY.methods["astype"]
    np.testing.assert_array_equal(
        jvp(astype, "self", ((a, np.int64), {}), np.ones(2), a.astype(int)), 0.0
    )


# --- bookkeeping ---------------------------------------------------------------------------


def test_every_differentiable_parameter_has_a_jvp() -> None:
    """Non-elementwise rules state a JVP for every parameter that has a VJP."""
    missing = {
        (rule.name, param)
        for rule in REGISTRY.rules
        if not rule.partials and not rule.nondiff
        for param in rule.vjps
        if param not in rule.jvps
    }
    assert sorted(missing - set(WITHOUT_JVP)) == []
    assert sorted(set(WITHOUT_JVP) - missing) == [], "stale entries in WITHOUT_JVP"


def test_jvps_belong_to_differentiable_parameters() -> None:
    for rule in REGISTRY.rules:
        if not rule.jvps:
            continue
        assert not rule.partials, f"{rule.name}: elementwise rules use their partials"
        assert not rule.nondiff, rule.name
        assert set(rule.jvps) <= set(rule.vjps), (
            f"{rule.name}: {sorted(set(rule.jvps) - set(rule.vjps))}"
        )
        internal = any(
            (getattr(f, "__module__", None) or "").startswith("s2s_ad") for f in rule.funcs
        )
        assert rule.samples or internal or rule.name in CHECKED_ON_PROGRAMS, (
            f"{rule.name}: a JVP without samples is never tested"
        )


def test_templates_are_safe_in_a_sum() -> None:
    """Forward mode joins the contributions of several parameters with ``+``: a template
    must not be a conditional, lambda, comparison or boolean expression at its top, unless
    parenthesized (the reshapes' ``(... if order == 'C' else ...)``)."""
    for rule in JVP_RULES:
        for param, template in rule.jvps.items():
            node = ast.parse(template, mode="eval").body
            assert not isinstance(
                node, (ast.IfExp, ast.Lambda, ast.BoolOp, ast.Compare, ast.NamedExpr)
            ) or (template.startswith("(") and template.endswith(")")), (
                f"{rule.name} d/d{param}: {template}"
            )
            joined = ast.parse(f"_l + {template} + _r", mode="eval").body
            assert isinstance(joined, ast.BinOp) and isinstance(joined.op, ast.Add), template


def test_templates_use_existing_helpers_and_known_names() -> None:
    builtins_ok = {"type", "zip", "enumerate", "None", "True", "False", "len", "isinstance"}
    builtins_ok |= {"tuple", "list"}
    for rule in JVP_RULES:
        for param, template in rule.jvps.items():
            for helper in re.findall(r"_ad\.(\w+)", template):
                assert hasattr(AD, helper), f"{rule.name}: _ad.{helper} is missing"
            tree = ast.parse(template, mode="eval")
            local = {
                n.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            known = set(rule.params) | set(rule.kwonly) | {"t", "ans", "np", "_ad", "args"}
            known |= builtins_ok | local
            assert names <= known, f"{rule.name} d/d{param}: unknown names {sorted(names - known)}"
