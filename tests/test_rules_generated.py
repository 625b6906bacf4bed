"""Rules for the ``_ad`` helpers themselves (s2s_ad/rules/generated_rules.py), which
higher derivatives need: generated code is differentiated again.

* every VJP and JVP template of every such rule, on every sample: against central finite
  differences, against each other (``<u, JVP(v)> == <VJP(u), v>``), shapes and containers;
* symbolic zeros (``0.0``/``None``) as cotangent, as tangent, and as the helper's own
  structural argument (an adjoint that is still zero);
* the ``0.0`` templates of tie patterns (``max_vjp``'s ``a`` and ``res``...) along
  consistent perturbations;
* coverage: every ``_ad.<name>`` in docs/constructs.md and tests/golden has a rule or is
  listed here, every call of a helper inside a template binds to that helper's rule;
* end to end: derivatives of generated gradients (reverse over reverse, forward over
  reverse) against finite differences of the generated gradient.

Templates are evaluated as generated code runs them: :func:`substitute` puts variable
names for the parameters, :func:`fold` simplifies, and the expression is evaluated with
``np``, ``_ad`` (the helpers), ``g``/``t`` and ``ans`` in scope.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.linalg as sla
from fd import numerical_grad
from trees import flat, random_like, unflat

import s2s_ad
from s2s_ad import runtime
from s2s_ad.emit import AD  # the helpers generated code reaches as _ad
from s2s_ad.rules import REGISTRY, vjps
from s2s_ad.rules import generated_rules as G
from s2s_ad.rules.registry import Rule, substitute
from s2s_ad.simplify import fold

REGISTRY.load_optional()  # SciPy's rules, when SciPy is installed
ROOT = Path(__file__).resolve().parent.parent
EPS = 1e-6
RTOL = 1e-5
EXACT = 1e-9
ZERO = "0.0"
RULES = G.RULES
IDS = [r.name for r in RULES]

# --- helpers ---------------------------------------------------------------------------------


def is_float(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return len(value) > 0 and all(is_float(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f"
    return isinstance(value, (float, np.floating))


def check_structure(value: Any, like: Any, where: str) -> None:
    """Same containers, shapes, and float leaves."""
    if isinstance(like, (list, tuple)):
        assert type(value) is type(like), f"{where}: {type(value).__name__} for a {like!r}"
        assert len(value) == len(like), where
        for i, (v, x) in enumerate(zip(value, like)):
            check_structure(v, x, f"{where}[{i}]")
        return
    assert np.shape(value) == np.shape(like), f"{where}: shape {np.shape(value)} {np.shape(like)}"
    assert np.asarray(value).dtype.kind == "f", f"{where}: dtype {np.asarray(value).dtype}"


def evaluate(rule: Rule, template: str, args: tuple[Any, ...], extra: dict[str, Any]) -> Any:
    names = [f"_v{i}" for i in range(len(args))]
    bound = rule.bind(names, {})
    assert bound is not None, f"{rule.name}: {len(args)} arguments do not bind"
    env = {"np": np, "_ad": AD, **dict(zip(names, args)), **extra}
    return eval(fold(substitute(template, bound)), env)  # noqa: S307


def vjp(rule: Rule, param: str, args: tuple[Any, ...], g: Any, ans: Any) -> Any:
    return evaluate(rule, rule.vjps[param], args, {"g": g, "ans": ans})


def jvp(rule: Rule, param: str, args: tuple[Any, ...], t: Any, ans: Any) -> Any:
    return evaluate(rule, rule.jvps[param], args, {"t": t, "ans": ans})


def replaced(rule: Rule, args: tuple[Any, ...], param: str, value: Any) -> tuple[Any, ...]:
    pos = rule.params.index(param)
    return args[:pos] + (value,) + args[pos + 1 :]


def float_params(rule: Rule, args: tuple[Any, ...]) -> list[tuple[str, Any]]:
    values = dict(zip(rule.params, args))
    return [(p, values[p]) for p in rule.vjps if p in values and is_float(values[p])]


def dot(a: Any, b: Any) -> float:
    return float(flat(a) @ flat(b))


# --- the rules --------------------------------------------------------------------------------


def test_rules_cover_both_modes_and_have_samples() -> None:
    assert len(RULES) > 60
    for rule in RULES:
        assert rule.samples, rule.name
        if rule.partials:
            continue  # elementwise: the partials serve both modes
        assert set(rule.jvps) == set(rule.vjps), rule.name
        assert not {"g", "ans", "t", "args", "np", "_ad"} & set(rule.params), rule.name
        assert REGISTRY.lookup(rule.funcs[0]) is rule, rule.name


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_templates_against_finite_differences_and_each_other(rule: Rule) -> None:
    rng = np.random.default_rng(7)
    f = rule.funcs[0]
    tested = set()
    for n, args in enumerate(rule.samples):
        ans = f(*args)
        for param, value in float_params(rule, args):
            tested.add(param)
            where = f"{rule.name} sample {n} d/d{param}"
            t = random_like(value, rng)
            u = random_like(ans, rng)
            x0 = flat(value)
            up = f(*replaced(rule, args, param, unflat(x0 + EPS * flat(t), value)))
            down = f(*replaced(rule, args, param, unflat(x0 - EPS * flat(t), value)))
            fd = (flat(up) - flat(down)) / (2 * EPS)
            tol = RTOL * (1.0 + np.max(np.abs(fd), initial=0.0))
            if rule.vjps[param] == ZERO:
                assert rule.jvps.get(param, ZERO) == ZERO, where
                np.testing.assert_allclose(fd, 0.0, atol=tol, err_msg=f"{where}: not constant")
                continue
            back = vjp(rule, param, args, u, ans)
            check_structure(back, value, f"{where} (vjp)")
            assert abs(dot(back, t) - dot(u, fd)) <= tol * np.linalg.norm(flat(u)), where
            if rule.partials:
                continue
            forward = jvp(rule, param, args, t, ans)
            check_structure(forward, ans, f"{where} (jvp)")
            np.testing.assert_allclose(flat(forward), fd, rtol=RTOL, atol=tol, err_msg=where)
            left, right = dot(u, forward), dot(back, t)
            scale = max(abs(left), abs(right), np.linalg.norm(flat(u)) * np.linalg.norm(x0 + 1))
            assert abs(left - right) <= EXACT * scale, f"{where}: {left} != {right}"
    assert tested == set(rule.vjps), f"{rule.name}: no float sample for {set(rule.vjps) - tested}"


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_symbolic_zero_cotangent_and_tangent(rule: Rule) -> None:
    """``g = 0.0`` and ``t = 0.0`` (an adjoint or tangent nothing has reached) give zeros."""
    f = rule.funcs[0]
    for n, args in enumerate(rule.samples):
        ans = f(*args)
        for param, _ in float_params(rule, args):
            if rule.vjps[param] == ZERO:
                continue
            where = f"{rule.name} sample {n} d/d{param}"
            assert not np.any(flat(vjp(rule, param, args, 0.0, ans))), where
            if not rule.partials:
                assert not np.any(flat(jvp(rule, param, args, 0.0, ans))), where


def _rule(func: Any) -> Rule:
    rule = REGISTRY.lookup(func)
    assert rule is not None, func
    return rule


_W = np.array([1.1, -0.4, 0.7])
_A = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])

# (helper, arguments, parameter, cotangent of the output): an argument is a symbolic zero
# (an adjoint nothing has reached yet, or None), so the output does not depend on the
# parameter; its cotangent must come out as zeros: the symbolic zero, or for a list/tuple
# parameter a list/tuple (the reverse pass indexes it), never an error.
ZERO_PRIMALS = [
    (runtime.getitem, (0.0, 1), "ct", 0.7),
    (runtime.getitem, (None, (0, slice(1, 3))), "ct", 0.7),
    (runtime.add_at, (0.0, _A, 1, _W), "acc", np.ones((2, 3))),
    (runtime.add_at, (_A, _A, 1, 0.0), "ct", np.ones((2, 3))),
    (runtime.add_at, ([0.5, 1.0], [1.5, -2.0], slice(0, 2), 0.0), "ct", [0.3, 0.4]),
    (runtime.zero_at, (0.0, 1), "acc", 0.7),
    (runtime.add, (0.0, _A), "a", np.ones((2, 3))),
    (runtime.add, (None, [_W, 1.5]), "a", [_W, 0.5]),
    (runtime.add, ([_W, 1.5], 0.0), "b", [_W, 0.5]),
    (runtime.drop_last, (0.0,), "acc", 0.7),
    (runtime.append_bar, (0.0, [1.0, 2.0], 0.5), "acc", [0.1, 0.2, 0.3]),
    (runtime.append_bar, ([0.5, 1.5], [1.0, 2.0], None), "last", [0.1, 0.2, 0.3]),
    (vjps.add_at_t, (np.ones((2, 3)), _A, 1, 0.0), "ct", 0.7),
    (vjps.array_vjp_t, ([0.5, 1.5], 0.0, [1.0, 2.0], None), "ct", 0.7),
    (vjps.tolist_vjp, (0.0, _W), "ct", _W),
]


@pytest.mark.parametrize("case", ZERO_PRIMALS, ids=lambda c: f"{c[0].__name__}-{c[2]}")
def test_symbolic_zero_primal(case: tuple[Any, tuple[Any, ...], str, Any]) -> None:
    func, args, param, g = case
    rule = _rule(func)
    ans = func(*args)
    got = vjp(rule, param, args, g, ans)
    value = args[rule.params.index(param)]
    if isinstance(value, (list, tuple)):
        assert type(got) is type(value) and len(got) == len(value), f"{rule.name}: {got!r}"
    else:
        assert type(got) is float, f"{rule.name} d/d{param}: {got!r}"
    assert not np.any(flat(got)), f"{rule.name} d/d{param}: {got!r}"


def test_none_parts_and_entries() -> None:
    pack, append_bar = _rule(runtime.pack), _rule(runtime.append_bar)
    args = (_A, (None, _W))
    ans = runtime.pack(*args)
    g = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(vjp(pack, "parts", args, g, ans)[1], g[1])
    assert vjp(pack, "parts", args, g, ans)[0] == 0.0
    np.testing.assert_array_equal(jvp(pack, "parts", args, (0.0, _W), ans), [[0, 0, 0], _W])
    assert vjp(pack, "parts", args, 0.0, ans) == (0.0, 0.0)  # a container, never bare 0.0
    args = ([0.5, 1.5], [1.0, 2.0], None)
    assert jvp(append_bar, "acc", args, [0.1, 0.2], runtime.append_bar(*args)) == [0.1, 0.2, 0.0]


def test_dict_adjoints() -> None:
    """Dicts (not covered by the flattened checks above): the dot-product identity."""
    x = {"a": _W, "b": 1.5}
    g = {"a": np.array([0.3, 0.2, -0.1]), "b": 0.7}
    getitem = _rule(runtime.getitem)
    back = vjp(getitem, "ct", (x, "a"), g["a"], runtime.getitem(x, "a"))
    assert set(back) == {"a", "b"} and back["b"] == 0.0
    forward = jvp(getitem, "ct", (x, "a"), g, None)
    assert dot(forward, g["a"]) == pytest.approx(dot(back, g))
    add_at = _rule(runtime.add_at)
    args = ({"a": _W * 2.0, "b": 0.5}, x, "b", 0.25)
    ans = runtime.add_at(*args)
    assert ans["b"] == 0.75
    assert vjp(add_at, "ct", args, g, ans) == pytest.approx(0.7)
    assert jvp(add_at, "ct", args, 2.0, ans)["b"] == 2.0
    add = _rule(runtime.add)
    assert vjp(add, "a", (x, x), g, runtime.add(x, x)) is g


# --- ``0.0`` templates of tie patterns: constant along consistent perturbations -------------

_X = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
_D = np.array([[0.2, 0.5, -0.3], [-0.6, 0.1, 0.4]])
PIECEWISE = [
    ("max_vjp", lambda a: vjps.max_vjp(np.array([0.5, 2.0]), a, np.max(a, 1), 1, False)),
    ("min_vjp", lambda a: vjps.min_vjp(1.5, a, np.min(a), None, False)),
    ("norm_vjp inf", lambda a: vjps.norm_vjp(1.5, a[0], np.linalg.norm(a[0], np.inf), np.inf)),
    ("norm_vjp 1", lambda a: vjps.norm_vjp(1.5, a, np.linalg.norm(a, 1), 1)),
    ("sort_vjp", lambda a: vjps.sort_vjp(_D, a, 1)),
    ("builtin_max_vjp", lambda a: vjps.builtin_max_vjp(0.7, list(a[0]), None, (), max(a[0]))),
    (
        "builtin_max_args",
        lambda a: vjps.builtin_max_args_vjp(0.7, *a[0, :2], (a[0, 2],), max(a[0])),
    ),
]


@pytest.mark.parametrize("case", PIECEWISE, ids=lambda c: c[0])
def test_tie_patterns_are_locally_constant(case: tuple[str, Any]) -> None:
    """Where ``a`` moves and ``res`` follows it (as in generated code), the helper does not
    change: its derivative in ``a`` and ``res`` together is zero, as the templates say."""
    _, func = case
    base = func(_X)
    for step in (1e-3, -1e-3):
        np.testing.assert_array_equal(flat(func(_X + step * _D)), flat(base))


# --- coverage -----------------------------------------------------------------------------------

# Helpers without a rule of their own, and why.
ALLOWED = {
    **G.SKIPPED,
    "not_a_view": "registered (no gradient) by s2s_ad/custom.py",
    # forward mode's own helpers (tangent code): differentiating tangent code again
    # (grad of jvp) needs rules for them too -- not done yet
    "broadcast_like": "forward mode",
    "tangent_parts": "forward mode",
    "set_tangent": "forward mode",
    "append_tangent": "forward mode",
    "pop_tangent": "forward mode",
    "jvp_from_vjp": "forward mode",
    "jvp_call": "forward mode",
}
_NAME = re.compile(r"(?<!\w)_ad\.(\w+)")


def _used_names() -> set[str]:
    texts = [(ROOT / "docs" / "constructs.md").read_text()]
    texts += [p.read_text() for p in sorted((ROOT / "tests" / "golden").glob("*"))]
    return {name for text in texts for name in _NAME.findall(text)}


def test_every_helper_in_generated_code_has_a_rule() -> None:
    used = _used_names()
    assert {"unbroadcast", "seed", "getitem", "sum_vjp", "matmul_vjp_y"} <= used
    for name in sorted(used):
        assert hasattr(AD, name), f"_ad.{name} does not exist"
        if name in ALLOWED:
            continue
        rule = REGISTRY.lookup(getattr(AD, name))
        assert rule is not None, f"_ad.{name} has no rule and is not in ALLOWED"
        assert rule.nondiff or rule.vjps, name


RUNTIME_HELPERS = """
unbroadcast getitem add_at zero_at add pack append_bar drop_last as_grads copy old_item
sequence seed zeros_like is_zero not_a_view
""".split()


def test_every_template_helper_has_a_rule() -> None:
    names = set(vjps.__all__) | set(RUNTIME_HELPERS)
    for name in sorted(names - set(ALLOWED) - set(G.FROM_SOURCE)):
        assert REGISTRY.lookup(getattr(AD, name)) is not None, f"_ad.{name} has no rule"
    for name in G.FROM_SOURCE:
        assert REGISTRY.lookup(getattr(AD, name)) is None, f"_ad.{name}: listed FROM_SOURCE"


def _calls(template: str) -> list[ast.Call]:
    tree = ast.parse(template, mode="eval")
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "_ad"
    ]


def test_helper_calls_in_templates_bind_to_their_rules() -> None:
    """Every ``_ad.f(...)`` any template writes binds to ``f``'s rule, so that the code it
    generates can be differentiated again (positional calls, no missing parameters)."""
    for rule in REGISTRY.rules:
        templates = [*rule.vjps.values(), *rule.jvps.values(), *rule.partials.values()]
        for template in templates:
            for call in _calls(template):
                callee = REGISTRY.lookup(getattr(AD, call.func.attr))
                if callee is None or callee.nondiff:
                    continue
                args = [ast.unparse(a) for a in call.args]
                kwargs = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}
                assert callee.bind(args, kwargs) is not None, f"{rule.name}: {template}"


# --- end to end: derivatives of generated gradients ----------------------------------------------

_M = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, -0.4, 1.8]])


def reductions(x):
    return np.sum(np.sin(x) * x) + np.mean(x**3) + np.prod(x) + np.max(x * x) + np.min(np.cos(x))


def loops_and_items(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * x[i + 1] ** 2
    a, b = x[:2]
    y = np.zeros(4)
    y[1] = x[0] * x[1]
    y[2:] = x[2:] ** 2
    return s + a * b**2 + np.sum(y * y)


def lists(x):
    xs = []
    for i in range(3):
        xs.append(x[i] * x[i])
    last = xs.pop()
    return xs[0] * xs[1] + last**2 + max(x[0], x[1]) ** 2 + sum([x[2], x[3] ** 2])


def statistics(x):
    norms = np.linalg.norm(x) ** 3 + np.linalg.norm(x, 3)
    return norms + np.var(x) * np.std(x) + np.logaddexp.reduce(x * x)


def linear_algebra(x):
    a = _M + np.diag(x[:3])
    solved = np.sum(np.linalg.solve(a, x[1:4]) ** 2)
    return np.linalg.det(a) + solved + np.dot(x[:3], _M @ x[1:4]) ** 2


def einsums(x):
    return np.sum(x[:3] ** 2) + np.einsum("i,ij,j->", x[:3], _M, x[1:4] ** 2)


def shapes(x):
    y = np.concatenate([x[:2] ** 2, np.sin(x[2:])])
    z = np.stack([x, x * x])
    m = np.reshape(x, (2, 2))
    tiled = np.sum(np.tile(x, 2) ** 2 * np.arange(8.0)) + np.sum(np.repeat(x, 2) ** 3)
    return np.sum(y * y) + np.sum(z**3) + np.sum(m.T @ m * m) + tiled + np.sum(np.cumsum(x) ** 2)


END_TO_END = [reductions, loops_and_items, lists, statistics, linear_algebra, einsums, shapes]
FORWARD = [reductions, statistics, linear_algebra]
# Forward mode sums the contributions of several parameters with ``+``, which joins
# tuples and lists (einsum_vjp's JVP) and fails on ``0.0 + [...]`` (list adjoints).
FORWARD_PENDING = [lists, einsums, shapes]
_X0 = np.array([0.6, -1.3, 0.9, 2.1])
_V0 = np.array([0.3, -0.2, 0.5, 0.7])


@pytest.mark.parametrize("fun", END_TO_END, ids=lambda f: f.__name__)
def test_reverse_over_reverse(fun: Any) -> None:
    df = s2s_ad.grad(fun)

    def directional(x):
        return np.sum(df(x) * _V0)

    got = s2s_ad.grad(directional)(_X0)
    np.testing.assert_allclose(got, numerical_grad(directional, (_X0,), 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fun", FORWARD, ids=lambda f: f.__name__)
def test_forward_over_reverse(fun: Any) -> None:
    transforms = pytest.importorskip("s2s_ad.transforms")
    df = s2s_ad.grad(fun)
    want = numerical_grad(lambda x: np.sum(df(x) * _V0), (_X0,), 0)
    np.testing.assert_allclose(transforms.hvp(fun)(_X0, _V0), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fun", FORWARD_PENDING, ids=lambda f: f.__name__)
def test_forward_over_reverse_through_containers(fun: Any) -> None:
    test_forward_over_reverse(fun)


_V4 = np.array([0.6, -1.3, 0.9, 2.1])
FROM_SOURCE_CASES = {
    "prod_hvp": (lambda w, a: np.sum(vjps.prod_hvp(w, a, None) * np.arange(4.0)), (_V4 / 2, _V4)),
    "norm_vjp_dx": (
        lambda w, x: np.sum(
            vjps.norm_vjp_dx(w, 1.3, x, np.linalg.norm(x, 3), 3, None, False) * np.arange(4.0)
        ),
        (_V4 / 2, _V4),
    ),
    "einsum_jvp": (lambda a, t: vjps.einsum_jvp("ij,j->", (a, _W), (t, _W * 2)), (_A, _A * 0.3)),
    "einsum_vjp_dops": (
        lambda a, x: np.sum(vjps.einsum_vjp_dops((x, _W), np.ones(2), "ij,j->i", (a, _W))[1]),
        (_A, _A * 0.3),
    ),
    "solve_dual": (lambda t, a: np.sum(vjps.solve_dual(t, _W, a, _W) * _W), (_M / 5, _M)),
    "solve_vjp_a_dct": (lambda g, a: np.sum(vjps.solve_vjp_a_dct(g, a, _W, _W) * _W), (_M / 5, _M)),
}
_SPD = _M @ _M.T + np.eye(3)
_SYM = np.array([[1.0, 0.4, -0.3], [0.4, -0.5, 0.8], [-0.3, 0.8, 2.2]])
_TALL = np.array([[0.9, -0.3], [0.4, 1.2], [-0.7, 0.5], [0.2, 0.8]])
_GT = np.cos(np.arange(8.0)).reshape(4, 2)
_G3 = np.cos(np.arange(9.0)).reshape(3, 3)
_LSQ_B = np.array([0.3, -1.1, 0.8, 0.5])


def _through(fun: Any, primal: Any) -> Any:
    """``fun(a)`` with its ``ans`` argument computed from ``a`` by ``primal``."""
    return lambda a: fun(a, primal(a))


FROM_SOURCE_CASES.update(
    {
        "cholesky_vjp": (
            lambda g, b: np.sum(vjps.cholesky_vjp(g, np.linalg.cholesky(b + b.T), False) * _G3),
            (np.tril(_G3), _SPD / 2),
        ),
        "cholesky_jvp": (
            lambda t, b: np.sum(vjps.cholesky_jvp(t, np.linalg.cholesky(b + b.T), True) * _G3),
            (_SYM, _SPD / 2),
        ),
        "eigh_vjp": (
            lambda b: np.sum(vjps.eigh_vjp((_G3[0], _G3), b + b.T, np.linalg.eigh(b + b.T)) * _G3),
            (_SYM / 2,),
        ),
        "eigh_jvp": (
            lambda b: np.sum(vjps.eigh_jvp(_G3 + _G3.T, b + b.T, np.linalg.eigh(b + b.T))[1]),
            (_SYM / 2,),
        ),
        "svd_vjp": (
            lambda a: np.sum(
                vjps.svd_vjp((_GT, _GT[0], _G3[:2, :2]), a, np.linalg.svd(a, False)) * _GT
            ),
            (_TALL,),
        ),
        "svd_jvp": (
            lambda a: np.sum(vjps.svd_jvp(_GT, a, np.linalg.svd(a, False))[0] * _GT),
            (_TALL,),
        ),
        "qr_vjp": (
            lambda a: np.sum(vjps.qr_vjp((_GT, _G3[:2, :2]), a, np.linalg.qr(a)) * _GT),
            (_TALL,),
        ),
        "qr_jvp": (lambda a: np.sum(vjps.qr_jvp(_GT, a, np.linalg.qr(a))[0] * _GT), (_TALL,)),
        "cumulative_vjp": (
            lambda g, x: np.sum(vjps.cumulative_vjp(g, x, 1, True, True) * _A),
            (np.cos(np.arange(8.0)).reshape(2, 4), _A),
        ),
        "cumulative_prod_jvp": (
            lambda t, x: np.sum(vjps.cumulative_prod_jvp(t, x, 0, True) ** 2),
            (_A[::-1], _A),
        ),
        "quantile_vjp": (
            lambda g, a: np.sum(vjps.quantile_vjp(g, a, np.array([0.2, 0.7]), 1) ** 2 * a),
            (_GT[:2].T * 1.0, _TALL.T * np.array([[1.0], [2.0]])),
        ),
        "quantile_jvp": (
            lambda t, a: np.sum(vjps.quantile_jvp(t, a, 0.4, None, True) ** 2 * np.sum(a)),
            (_TALL * 0.5, _TALL),
        ),
        "sl_eigh_vjp": (
            lambda a: np.sum(
                vjps.sl_eigh_vjp(_G3[0], (a + a.T) / 2, None, None, True, True, None) * _G3
            ),
            (_SPD,),
        ),
        "sl_eigh_jvp": (
            lambda a: np.sum(
                vjps.sl_eigh_jvp(_G3, (a + a.T) / 2, None, None, True, True, None) ** 2
            ),
            (_SPD,),
        ),
        "sl_qr_vjp": (
            lambda a: np.sum(
                vjps.sl_qr_vjp((_G3[:2, :2],), a, (np.linalg.qr(a, "r"),), "r", False) * _GT
            ),  # fmt: skip
            (_TALL,),
        ),
        "sl_qr_jvp": (
            lambda a: np.sum(vjps.sl_qr_jvp(_GT, a, np.linalg.qr(a), "economic", False)[1] ** 2),
            (_TALL,),
        ),
        "sl_pinv_vjp": (
            lambda a: np.sum(vjps.sl_pinv_vjp(_GT.T, a, np.linalg.pinv(a), False) * _GT),
            (_TALL,),
        ),
        "sl_pinv_jvp": (
            lambda a: np.sum(vjps.sl_pinv_jvp(_GT, a, np.linalg.pinv(a), False) ** 2),
            (_TALL,),
        ),
        "slogdet_vjp": (lambda a: np.sum(vjps.slogdet_vjp((0.0, 1.3), a) * _G3), (_SPD,)),
        "pinv_vjp": (
            lambda a: np.sum(vjps.pinv_vjp(_GT.T, a, np.linalg.pinv(a)) * _GT),
            (_TALL,),
        ),
        "pinv_jvp": (
            lambda a: np.sum(vjps.pinv_jvp(_GT, a, np.linalg.pinv(a)) * _GT.T),
            (_TALL,),
        ),
        "lstsq_vjp_a": (
            lambda a, b: np.sum(
                vjps.lstsq_vjp_a((_GT[:, 0][:2], np.ones(1), 0.0, 0.0), a, b, np.linalg.lstsq(a, b))
                * _GT
            ),
            (_TALL, _LSQ_B),
        ),
        "lstsq_vjp_b": (
            lambda a, b: np.sum(
                vjps.lstsq_vjp_b((_GT[:, 0][:2], np.ones(1), 0.0, 0.0), a, b, np.linalg.lstsq(a, b))
                * _LSQ_B
            ),
            (_TALL, _LSQ_B),
        ),
        "lstsq_jvp": (
            lambda a, b: np.sum(vjps.lstsq_jvp(_GT, 0.0, a, b, np.linalg.lstsq(a, b))[0]),
            (_TALL, _LSQ_B),
        ),
        "matrix_power_vjp": (lambda a: np.sum(vjps.matrix_power_vjp(_G3, a, 3) * _G3), (_M,)),
        "matrix_power_jvp": (lambda a: np.sum(vjps.matrix_power_jvp(_G3, a, -2) * _G3), (_M,)),
    }
)
_LOW = np.linalg.cholesky(_SPD)


def _cho(c: Any) -> tuple[Any, bool]:
    return (c, True)


FROM_SOURCE_CASES.update(
    {
        "sl_solve_vjp_a": (
            lambda a, g: np.sum(vjps.sl_solve_vjp_a(g, a, _W, np.linalg.solve(a.T, _W), True)),
            (_M, _W),
        ),
        "sl_solve_vjp_b": (lambda a: np.sum(vjps.sl_solve_vjp_b(_W, a, _W, False) * _W), (_M,)),
        "sl_solve_jvp_a": (
            lambda a, t: np.sum(vjps.sl_solve_jvp_a(t, a, _G3, np.linalg.solve(a, _G3), False)),
            (_M, _G3),
        ),
        "sl_solve_jvp_b": (lambda a: np.sum(vjps.sl_solve_jvp_b(_W, a, _W, True) * _W), (_M,)),
        "cho_factor_vjp": (
            lambda g, b: np.sum(
                vjps.cho_factor_vjp((g, 0.0), b + b.T, (np.linalg.cholesky(b + b.T), True)) * _G3
            ),
            (_G3, _SPD / 2),
        ),
        "cho_factor_jvp": (
            lambda t, b: np.sum(
                vjps.cho_factor_jvp(t, b + b.T, (np.linalg.cholesky(b + b.T).T, False))[0] * _G3
            ),
            (_SYM, _SPD / 2),
        ),
        "cho_solve_vjp_c": (
            lambda c, g: np.sum(vjps.cho_solve_vjp_c(g, _cho(c), _W, _W * 0.5)[0] * _G3),
            (_LOW, _W),
        ),
        "cho_solve_vjp_b": (lambda c: np.sum(vjps.cho_solve_vjp_b(_W, _cho(c), _W) * _W), (_LOW,)),
        "cho_solve_jvp_c": (
            lambda c, t: np.sum(vjps.cho_solve_jvp_c((t, 0.0), _cho(c), _W, _W * 0.5)),
            (_LOW, _G3),
        ),
        "cho_solve_jvp_b": (lambda c: np.sum(vjps.cho_solve_jvp_b(_W, _cho(c), _W) * _W), (_LOW,)),
        "triangular_vjp_a": (
            lambda a, g: np.sum(vjps.triangular_vjp_a(g, a, _W, _W * 0.5, "T", True, False)),
            (_M, _W),
        ),
        "triangular_vjp_b": (
            lambda a: np.sum(vjps.triangular_vjp_b(_W, a, _W, 0, False, True) * _W),
            (_M,),
        ),
        "triangular_jvp_a": (
            lambda a, t: np.sum(vjps.triangular_jvp_a(t, a, _W, _W * 0.5, 0, False, False)),
            (_M, _G3),
        ),
        "triangular_jvp_b": (
            lambda a: np.sum(vjps.triangular_jvp_b(_W, a, _W, 1, True, False) * _W),
            (_M,),
        ),
    }
)
_XS = np.array([[0.5, -0.2, 1.3], [-1.0, 0.4, 0.2]])
FROM_SOURCE_CASES.update(
    {
        "mvn_vjp": (
            lambda x, m, b: np.sum(
                vjps.mvn_vjp(np.array([0.3, -0.6]), x, m, b + b.T, np.array([-1.2, -2.0]), True)[2]
                * _G3
            ),
            (_XS, _W, _SPD / 2),
        ),
        "mvn_jvp": (
            lambda x, m, b: np.sum(
                vjps.mvn_jvp(_XS, _W, _G3, x, m, b + b.T, np.array([-1.2, -2.0]), False)
            ),
            (_XS, _W, _SPD / 2),
        ),
    }
)
FROM_SOURCE_CASES.update(
    {
        "r_vjp": (
            lambda g: (
                np.sum(vjps.r_vjp(g, (_W, 1.5, _A))[2] * _A[::-1]) + vjps.r_vjp(g, (_W, 1.5))[1]
            ),
            (np.arange(10.0).reshape(5, 2)[:, 0] + 0.5,),
        ),
        "trapezoid_vjp_y": (
            lambda g, x: np.sum(vjps.trapezoid_vjp_y(g, _A, x, 1.0, 1) * _A),
            (np.array([0.3, -0.7]), _W * np.array([1.0, 2.0, 3.0])),
        ),
        "trapezoid_vjp_x": (
            lambda g, y: np.sum(vjps.trapezoid_vjp_x(g, y, _W, 1) * _W),
            (np.array([0.3, -0.7]), _A),
        ),
        "trapezoid_jvp_x": (
            lambda t, y: np.sum(vjps.trapezoid_jvp_x(t, y, _W, -1) * np.array([0.3, -0.7])),
            (_W * 0.5, _A),
        ),
        "dstack_vjp": (
            lambda g: np.sum(vjps.dstack_vjp(g, [_A, _A[:, :, None] * 1.0])[1] * _A[:, :, None]),
            (np.cos(np.arange(12.0)).reshape(2, 3, 2),),
        ),
        "c_vjp": (
            lambda g: (
                np.sum(vjps.c_vjp(g, (_A[0], _A.T))[1] * _A.T)
                + np.sum(vjps.c_vjp(g, [_A[0], 1.5, _A.T])[1])
            ),
            (np.cos(np.arange(9.0)).reshape(3, 3),),
        ),
    }
)
_XP = np.array([0.0, 0.5, 1.3, 2.0])
_X4 = np.array([0.2, 0.9, 1.7, -0.5])
FROM_SOURCE_CASES.update(
    {
        "cumprod_vjp": (
            lambda g, a: np.sum(vjps.cumprod_vjp(g, a, 1) ** 2),
            (np.cos(np.arange(6.0)).reshape(2, 3), np.array([[0.5, 0.0, 1.2], [0.8, -0.7, 0.0]])),
        ),
        "cumprod_jvp": (
            lambda t, a: np.sum(vjps.cumprod_jvp(t, a, None) ** 2),
            (np.cos(np.arange(6.0)).reshape(2, 3), np.array([[0.5, 0.0, 1.2], [0.8, -0.7, 0.0]])),
        ),
        "diff_vjp": (
            lambda g: np.sum(vjps.diff_vjp(g, _V4, 2, -1, 0.5, np._NoValue) * _V4),
            (np.array([0.3, -0.2, 0.5]),),
        ),
        "diff_jvp": (
            lambda t: np.sum(vjps.diff_jvp(t, _V4, 1, 0, np._NoValue, _V4[:1]) * _V4),
            (_V4 * 0.3,),
        ),
        "gradient_vjp": (
            lambda g: np.sum(vjps.gradient_vjp(g, _A, (0.5,), 1, 1) * _A),
            (_A[::-1] * 1.0,),
        ),
        "select_vjp": (
            lambda g: np.sum(vjps.select_vjp(g, [_A > 0, _A < -1], [_A, _W])[1] * _W),
            (np.cos(_A),),
        ),
        "interp_vjp_x": (
            lambda g, fp: np.sum(vjps.interp_vjp_x(g, _X4, _XP, fp)),
            (_V4 * 0.3, _V4),
        ),
        "interp_vjp_fp": (
            lambda g, x: np.sum(vjps.interp_vjp_fp(g, x, _XP, _V4) * _V4),
            (_V4 * 0.3, _X4),
        ),
        "convolve_vjp": (
            lambda g, v: np.sum(vjps.convolve_vjp(g, _V4, v, "same") * _V4),
            (_V4[::-1] * 1.0, _W),
        ),
        "kron_vjp_a": (
            lambda g, b: np.sum(vjps.kron_vjp_a(g, _W, b) * _W),
            (np.cos(np.arange(12.0)), _V4),
        ),
        "kron_vjp_b": (
            lambda g, a: np.sum(vjps.kron_vjp_b(g, a, _V4) * _V4),
            (np.cos(np.arange(12.0)), _W),
        ),
        "take_vjp": (
            lambda g: np.sum(vjps.take_vjp(g, _A, [0, 2, 2], 1) * _A),
            (np.cos(np.arange(6.0)).reshape(2, 3),),
        ),
        "take_along_axis_vjp": (
            lambda g: np.sum(vjps.take_along_axis_vjp(g, _A, np.array([[0, 0], [2, 1]]), 1) * _A),
            (np.cos(np.arange(4.0)).reshape(2, 2),),
        ),
        "meshgrid_vjp": (
            lambda g: np.sum(vjps.meshgrid_vjp((g, g * 2.0), (_W, _V4), "xy", False)[1] * _V4),
            (np.cos(np.arange(12.0)).reshape(4, 3),),
        ),
        "pad_vjp": (
            lambda g: np.sum(vjps.pad_vjp(g, _W, 2, "reflect", "even") * _W),
            (np.cos(np.arange(7.0)),),
        ),
        "pad_jvp": (
            lambda t: np.sum(vjps.pad_jvp(t, _W, (1, 2), "edge", "even") * np.arange(6.0)),
            (_W * 0.5,),
        ),
    }
)
_PIV = np.array([2, 2, 2])  # rows 0 and 2 swapped


def _lu(m: Any) -> tuple[Any, Any]:
    return (m, _PIV)


FROM_SOURCE_CASES.update(
    {
        "lu_factor_vjp": (
            lambda g, lu: np.sum(vjps.lu_factor_vjp((g, 0.0), _M, _lu(lu)) * _G3),
            (_G3 * 0.5, _M + np.eye(3)),
        ),
        "lu_factor_jvp": (
            lambda t, lu: np.sum(vjps.lu_factor_jvp(t, _M, _lu(lu))[0] * _G3),
            (_G3 * 0.5, _M + np.eye(3)),
        ),
        "lu_solve_vjp_lu": (
            lambda lu, g: np.sum(vjps.lu_solve_vjp_lu(g, _lu(lu), _W, _W * 0.5, 1)[0] * _G3),
            (_M + np.eye(3), _W),
        ),
        "lu_solve_vjp_b": (
            lambda lu: np.sum(vjps.lu_solve_vjp_b(_W, _lu(lu), _W, 0) * _W),
            (_M + np.eye(3),),
        ),
        "lu_solve_jvp_lu": (
            lambda lu, t: np.sum(vjps.lu_solve_jvp_lu((t, 0.0), _lu(lu), _W, _W * 0.5, 0)),
            (_M + np.eye(3), _G3),
        ),
        "lu_solve_jvp_b": (
            lambda lu: np.sum(vjps.lu_solve_jvp_b(_W, _lu(lu), _W, 1) * _W),
            (_M + np.eye(3),),
        ),
    }
)
_T3 = np.sin(np.arange(1.0, 25.0)).reshape(2, 3, 4)
FROM_SOURCE_CASES.update(
    {
        "vector_norm_vjp": (
            lambda x: np.sum(
                vjps.vector_norm_vjp(_W, x, np.linalg.vector_norm(x, axis=(0, 2)), 3, (0, 2), 0)
                * _T3
            ),
            (np.transpose(_T3, (0, 1, 2)) + 0.0,),
        ),
        "multi_dot_vjp": (
            lambda a: np.sum(vjps.multi_dot_vjp(_W, [_W, a, _M])[1] * _M),
            (_M.T + 0.1,),
        ),
        "multi_dot_jvp": (lambda a: np.sum(vjps.multi_dot_jvp([0.0, _M, 0.0], [_W, a, _M])), (_M,)),
    }
)
_LSE_B = np.array([[0.5], [2.0]])
FROM_SOURCE_CASES.update(
    {
        "lse_weights": (
            lambda a, ans: np.sum(vjps.lse_weights(a, _LSE_B, ans, 1, False) * _A),
            (_A, np.array([0.4, 1.1])),
        ),
        "logsumexp_vjp_a": (
            lambda g, a: np.sum(vjps.logsumexp_vjp_a(g, a, _LSE_B, np.sum(a, 1), 1, False) * _A),
            (np.array([0.3, -0.7]), _A),
        ),
        "logsumexp_vjp_b": (
            lambda a, b: np.sum(vjps.logsumexp_vjp_b(0.3, a, b, 1.5, None, False)),
            (_A, _LSE_B),
        ),
        "diff_vjp_edge": (
            lambda g: np.sum(np.sin(vjps.diff_vjp_edge(g, _W, 2, -1, 0.5, _W[:2], "append"))),
            (np.cos(np.arange(4.0)),),
        ),
        "diff_jvp_edge": (
            lambda t: np.sum(np.sin(vjps.diff_jvp_edge(t, _W, 1, -1, 0.5, np._NoValue, "prepend"))),
            (0.3,),
        ),
        "lse_tangent": (
            lambda d: np.sum(vjps.lse_tangent(d, (0.5, np.ones(2)), True)[0] ** 2),
            (np.array([0.3, -0.7]),),
        ),
    }
)

_P2 = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])
FROM_SOURCE_CASES.update(
    {
        "cross_vjp_a": (
            lambda g, b: (
                np.sum(vjps.cross_vjp_a(g, _P2, b) * _P2)
                + np.sum(vjps.cross_vjp_a(g[:, 0], _P2[:, :2], b[:2]) ** 2)
            ),
            (np.cos(np.arange(6.0)).reshape(2, 3), _W),
        ),
        "cross_vjp_b": (
            lambda g, a: np.sum(vjps.cross_vjp_b(g, a, _P2.T, axisb=0) * _P2.T),
            (np.cos(np.arange(6.0)).reshape(2, 3), _W),
        ),
        "rollaxis_vjp": (
            lambda g: np.sum(vjps.rollaxis_vjp(g, _T3, 2, 0) * _T3),
            (np.cos(np.arange(24.0)).reshape(4, 2, 3),),
        ),
    }
)

_X35 = np.cos(np.arange(15.0)).reshape(3, 5) + np.arange(15.0).reshape(3, 5) % 4
_Y5 = np.array([0.7, -0.1, 1.3, 0.4, -0.9])
_W3V = np.array([0.5, 1.5, 1.0])
FROM_SOURCE_CASES.update(
    {
        "average_vjp_a": (
            lambda g, w: np.sum(vjps.average_vjp_a(g, _A, 1, w, False, False) * _A),
            (np.array([0.3, -0.7]), _W3V),
        ),
        "average_vjp_w": (
            lambda a, w: np.sum(
                vjps.average_vjp_w(np.array([0.3, -0.7]), a, 1, w, False, False, np.sum(a, 1))
            ),
            (_A, _W3V),
        ),
        "average_jvp_w": (
            lambda t, a: np.sum(vjps.average_jvp_w(t, a, 1, _W3V, True, np.ones((2, 1))) ** 2),
            (_W3V - 1.0, _A),
        ),
        "median_vjp": (
            lambda g, a: np.sum(vjps.median_vjp(g, a, 0, False) * _A),
            (np.array([0.3, -0.7, 1.2]), _A),
        ),
        "nanmean_vjp": (
            lambda g: np.sum(vjps.nanmean_vjp(g, _A, 1, True) * _A),
            (np.array([[0.3], [-0.7]]),),
        ),
        "polyval_vjp_p": (
            lambda g, x: np.sum(vjps.polyval_vjp_p(g, _W3V, x) ** 2),
            (np.array([0.3, -0.7]), np.array([1.1, 0.4])),
        ),
        "polyval_dx": (
            lambda p, x: np.sum(vjps.polyval_dx(p, x) ** 2),
            (np.array([0.3, -0.7, 1.2, 0.5]), np.array([1.1, 0.4])),
        ),
        "cov_vjp": (
            lambda g, m: np.sum(vjps.cov_vjp(g, m, _Y5, True, False, None, None, None, 0) ** 2),
            (np.cos(np.arange(16.0)).reshape(4, 4), _X35),
        ),
        "cov_jvp": (
            lambda t, m: np.sum(
                vjps.cov_jvp(t, m, _Y5, True, False, None, None, None, 1, np.ones((4, 4))) ** 2
            ),
            (_Y5 * 0.5, _X35),
        ),
        "corrcoef_vjp": (
            lambda g, m: np.sum(vjps.corrcoef_vjp(g, m, None, True, 0) ** 2),
            (np.cos(np.arange(9.0)).reshape(3, 3), _X35),
        ),
        "corrcoef_jvp": (
            lambda t, m: np.sum(vjps.corrcoef_jvp(t, m, None, True, 0, np.corrcoef(_X35)) ** 2),
            (np.cos(np.arange(15.0)).reshape(3, 5), _X35),
        ),
    }
)

_SPD3 = _M @ _M.T + np.eye(3)
FROM_SOURCE_CASES.update(
    {
        "expm_frechet": (
            lambda a, e: np.sum(vjps.expm_frechet(a, e) * _M),
            (0.5 * _M, np.cos(np.arange(9.0)).reshape(3, 3)),
        ),
        "sqrtm_vjp": (
            lambda g, x: np.sum(vjps.sqrtm_vjp(g, x) * _M),
            (np.cos(np.arange(9.0)).reshape(3, 3), _SPD3),
        ),
        "sqrtm_jvp": (
            lambda t, x: np.sum(vjps.sqrtm_jvp(t, x) ** 2),
            (np.cos(np.arange(9.0)).reshape(3, 3), _SPD3),
        ),
    }
)

FROM_SOURCE_CASES["dirichlet_score"] = (
    lambda alpha: np.sum(vjps.dirichlet_score(np.array([[0.2, 0.1], [0.5, 0.6]]), alpha) ** 2),
    (np.array([1.5, 2.0, 0.7]),),
)

# the helpers of the rules found missing by the autograd sweep
_C6 = np.cos(np.arange(6.0))
FROM_SOURCE_CASES.update(
    {
        "einsum_parts_vjp": (
            lambda g, y: np.sum(vjps.einsum_parts_vjp(g, _P2, ([0, 1], y, [1, 2]))[0] ** 2),
            (_G3[:2], _G3),
        ),
        "correlate_vjp_a": (
            lambda g, v: np.sum(vjps.correlate_vjp_a(g, _V4, v, "full") * _V4),
            (_C6, _W),
        ),
        "correlate_vjp_v": (
            lambda g, a: np.sum(vjps.correlate_vjp_v(g, a, _W, "same") * _W),
            (_V4 * 1.0, _V4),
        ),
        "choose_vjp": (
            lambda g: np.sum(vjps.choose_vjp(g, np.array([0, 1, 0, 1]), [_V4, _V4])[1] ** 2),
            (_V4 * 1.0,),
        ),
        "diagflat_vjp": (
            lambda g: np.sum(vjps.diagflat_vjp(g, _W, 1) ** 2),
            (_G3[:1, :1] + np.ones((4, 4)),),
        ),
        "ediff1d_vjp": (
            lambda g: np.sum(vjps.ediff1d_vjp(g, _V4, _W[:1], None, "ary") ** 2),
            (_V4 * 1.0,),
        ),
        "ediff1d_jvp": (
            lambda t: np.sum(vjps.ediff1d_jvp(t, _V4, None, _W, "ary") ** 2),
            (_V4 * 1.0,),
        ),
        "broadcast_arrays_vjp": (
            lambda g: np.sum(vjps.broadcast_arrays_vjp((g, g), (_W, _P2))[0] ** 2),
            (_P2 * 1.0,),
        ),
        "broadcast_arrays_jvp": (
            lambda t: np.sum(vjps.broadcast_arrays_jvp((t, 0.0), (_W, _P2), (_P2, _P2))[0] ** 2),
            (_W * 1.0,),
        ),
        "reorder_vjp": (
            lambda g: np.sum(vjps.reorder_vjp(g, _P2, "F") * _P2),
            (_C6.reshape(3, 2),),
        ),
        "reorder_jvp": (
            lambda t: np.sum(vjps.reorder_jvp(t, _P2, (3, 2), "F") * _C6.reshape(3, 2)),
            (_P2 * 1.0,),
        ),
        "multidigamma": (lambda a: np.sum(vjps.multidigamma(a, 3)), (np.array([4.2, 5.5]),)),
        "mvn_entropy_vjp": (
            lambda b: np.sum(vjps.mvn_entropy_vjp(0.7, None, b + b.T) * _G3),
            (_SPD,),
        ),
        "dirichlet_dx": (
            lambda x: np.sum(vjps.dirichlet_dx(x, np.array([1.5, 2.0, 0.7])) ** 2),
            (np.array([[0.2, 0.1], [0.5, 0.6]]),),
        ),
        "sliding_window_view_vjp": (
            lambda g: np.sum(np.sin(vjps.sliding_window_view_vjp(g, _T3, (2, 2), (0, 2)))),
            (np.cos(np.arange(36.0)).reshape(1, 3, 3, 2, 2),),
        ),
        "sliding_window_view_jvp": (
            lambda t: np.sum(np.sin(vjps.sliding_window_view_jvp(t, 2, 1))),
            (np.cos(np.arange(24.0)).reshape(2, 3, 4),),
        ),
    }
)


# The helpers of rules/corpus.py (np.insert, np.vander, np.polyfit, statistics, ...).
_X6 = np.array([0.1, 0.5, 0.9, 1.4, 2.0, 2.2])
_TS = np.sin(np.arange(1.0, 37.0)).reshape(2, 3, 6) + 3.0 * np.eye(6).reshape(2, 3, 6)
_PF = np.polyfit(_X6, np.cos(_X6), 2)
FROM_SOURCE_CASES.update(
    {
        "moved_vjp": (
            lambda g: np.sum(np.sin(vjps.moved_vjp(g, _W, np.array([2, 0, 2, 1])))),
            (_V4,),
        ),
        "moved_jvp": (
            lambda t: np.sum(np.sin(vjps.moved_jvp(t, _W, np.array([2, 0, 2, 1])))),
            (_W * 1.0,),
        ),
        "insert_vjp": (
            lambda g: np.sum(np.sin(vjps.insert_vjp(g, _W, 1, _W[:2], None, "values"))),
            (_C6[:5] * 1.0,),
        ),
        "insert_jvp": (
            lambda t: np.sum(np.sin(vjps.insert_jvp(t, _W, 1, _W[:2], None, "arr"))),
            (_W * 1.0,),
        ),
        "vander_vjp": (
            lambda g, x: np.sum(np.sin(vjps.vander_vjp(g, x, 3, False))),
            (_G3 * 1.0, _W * 1.0),
        ),
        "vander_jvp": (
            lambda t, x: np.sum(np.sin(vjps.vander_jvp(t, x, None, True))),
            (_W * 0.5, _W * 1.0),
        ),
        "tuple_first_vjp": (
            lambda g: np.sum(np.sin(vjps.tuple_first_vjp((g, 0.0), _W))),
            (_W * 1.0,),
        ),
        "frexp_vjp": (
            lambda g: np.sum(np.sin(vjps.frexp_vjp((g, 0.0), _W, np.frexp(_W)))),
            (_W * 1.0,),
        ),
        "tensorinv_vjp": (
            lambda a: np.sum(np.sin(vjps.tensorinv_vjp(_G3, a, np.linalg.tensorinv(a, 1), 1))),
            (_M,),
        ),
        "tensorinv_jvp": (
            lambda a: np.sum(np.sin(vjps.tensorinv_jvp(_G3, a, np.linalg.tensorinv(a, 1), 1))),
            (_M,),
        ),
        "tensorsolve_vjp_a": (
            lambda a: np.sum(
                vjps.tensorsolve_vjp_a(_W, a, _W, np.linalg.tensorsolve(a, _W), None) * _G3
            ),
            (_M,),
        ),
        "tensorsolve_vjp_b": (
            lambda a: np.sum(vjps.tensorsolve_vjp_b(_W, a, _W, None, None) * _W),
            (_M,),
        ),
        "tensorsolve_jvp_a": (
            lambda a: np.sum(
                vjps.tensorsolve_jvp_a(_G3, a, _W, np.linalg.tensorsolve(a, _W), None) * _W
            ),
            (_M,),
        ),
        "tensorsolve_jvp_b": (
            lambda a: np.sum(vjps.tensorsolve_jvp_b(_W, a, _W, _W, None) * _W),
            (_M,),
        ),
        "cond_vjp": (
            lambda a: np.sum(vjps.cond_vjp(1.0, a, "fro", np.linalg.cond(a, "fro")) * _G3),
            (_M,),
        ),
        "polyfit_vjp_y": (
            lambda y: np.sum(np.sin(vjps.polyfit_vjp_y(_W, _X6, y, 2, None, False, False))),
            (np.cos(_X6),),
        ),
        "polyfit_vjp_x": (
            lambda y: np.sum(np.sin(vjps.polyfit_vjp_x(_W, _X6, y, 2, None, False, False, _PF))),
            (np.cos(_X6),),
        ),
        "polyfit_jvp_x": (
            lambda y: np.sum(np.sin(vjps.polyfit_jvp_x(_X6, _X6, y, 2, None, False, False, _PF))),
            (np.cos(_X6),),
        ),
        "stat_mean_vjp": (
            lambda g: np.sum(np.sin(np.array(vjps.stat_mean_vjp(g, [0.5, 1.0, 2.0])))),
            (0.7,),
        ),
        "stat_variance_vjp": (
            lambda x: np.sum(np.sin(vjps.stat_variance_vjp(0.7, x, None, 1))),
            (_W * 1.0,),
        ),
        "polar_vjp": (
            lambda a: np.sum(vjps.polar_vjp((_G3, 0.0), a, sla.polar(a), "right") * _G3),
            (_M,),
        ),
        "polar_jvp": (
            lambda a: np.sum(vjps.polar_jvp(_G3, a, sla.polar(a), "left")[1] * _G3),
            (_M,),
        ),
        "toeplitz_vjp": (
            lambda g: np.sum(np.sin(vjps.toeplitz_vjp(g, _W, _W[:2], "r"))),
            (np.cos(np.arange(6.0)).reshape(3, 2),),
        ),
        "toeplitz_jvp": (
            lambda t: np.sum(np.sin(vjps.toeplitz_jvp(t, _W, None, "c"))),
            (_W * 0.5,),
        ),
        "block_diag_vjp": (
            lambda g: np.sum(np.sin(vjps.block_diag_vjp(g, (_W, _M))[1])),
            (np.cos(np.arange(24.0)).reshape(4, 6),),
        ),
        "block_diag_jvp": (
            lambda t: np.sum(np.sin(vjps.block_diag_jvp((t, 0.0), (_W, _M)))),
            (_W * 0.5,),
        ),
        "logm_frechet": (
            lambda e: np.sum(vjps.logm_frechet(_SPD, e) * _G3),
            (_G3 * 1.0,),
        ),
        "lu_vjp": (
            lambda a: np.sum(vjps.lu_vjp((0.0, _G3, _G3.T), a, None, False) * _G3),
            (_M,),
        ),
        "lu_jvp": (
            lambda t: np.sum(np.sin(vjps.lu_jvp(t, _M, sla.lu(_M), False)[2])),
            (_G3 * 1.0,),
        ),
        "stat_dot": (lambda t: vjps.stat_dot([t, 0.0, t * 2.0], [0.5, 1.0, 2.0]), (0.7,)),
    }
)


def test_from_source_list_is_complete() -> None:
    assert set(FROM_SOURCE_CASES) == set(G.FROM_SOURCE)


@pytest.mark.parametrize("name", sorted(FROM_SOURCE_CASES))
def test_second_order_pieces_transform_from_source(name: str) -> None:
    """The helpers without a rule (they appear only in second-order code) can themselves be
    differentiated from their source, as a third derivative would."""
    fun, args = FROM_SOURCE_CASES[name]
    s2s_ad.check_grads(fun, args)
