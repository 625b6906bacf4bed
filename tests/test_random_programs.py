"""Property test: random small programs, generated derivatives against finite differences.

Programs mix assignments (arithmetic and elementwise NumPy calls), data-dependent ``if``,
``for`` over ``range`` with overwritten variables, ``break`` and ``continue``. They are
written to a module file so that their source can be read, then differentiated with
respect to every argument, in reverse mode (``grad``) and forward mode (``jvp``).
"""

import importlib.util
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s_ad

VARS = ["a", "b", "c"]
UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(0.3 * {})", "({} * {})"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (1.5 + {} * {})", "0.5 * {} - {}"]

_counter = itertools.count()


@st.composite
def expressions(draw, depth=0):
    if depth >= 2 or draw(st.booleans()):
        if draw(st.integers(0, 4)) == 0:
            return repr(draw(st.sampled_from([0.5, 1.25, -0.75, 2.0])))
        return draw(st.sampled_from(VARS))
    if draw(st.booleans()):
        inner = draw(expressions(depth + 1))
        template = draw(st.sampled_from(UNARY))
        return template.format(*([inner] * template.count("{}")))
    left = draw(expressions(depth + 1))
    right = draw(expressions(depth + 1))
    template = draw(st.sampled_from(BINARY))
    if template.count("{}") == 3:
        return template.format(left, right, right)
    return template.format(left, right)


@st.composite
def statements(draw, depth=0, in_loop=False):
    kind = draw(st.sampled_from(["assign", "assign", "if", "for"] if depth < 2 else ["assign"]))
    pad = "    " * (depth + 1)
    if kind == "assign":
        target = draw(st.sampled_from(VARS))
        op = draw(st.sampled_from(["=", "=", "+=", "*="]))
        return [f"{pad}{target} {op} {draw(expressions())}"]
    if kind == "if":
        cond = f"{draw(expressions())} > {draw(st.sampled_from(['0.0', '0.5', '-0.3']))}"
        lines = [f"{pad}if {cond}:"]
        lines += draw(blocks(depth + 1, in_loop))
        if in_loop and draw(st.integers(0, 3)) == 0:
            lines.append(f"{pad}    {draw(st.sampled_from(['break', 'continue']))}")
        if draw(st.booleans()):
            lines.append(f"{pad}else:")
            lines += draw(blocks(depth + 1, in_loop))
        return lines
    n = draw(st.integers(0, 3))
    lines = [f"{pad}for i{depth} in range({n}):"]
    lines += draw(blocks(depth + 1, True))
    return lines


@st.composite
def blocks(draw, depth=0, in_loop=False):
    out = []
    for _ in range(draw(st.integers(1, 3))):
        out += draw(statements(depth, in_loop))
    return out


@st.composite
def programs(draw):
    body = draw(blocks())
    ret = draw(expressions())
    return "def f(a, b):\n    c = a * b\n" + "\n".join(body) + f"\n    return {ret} + a + b + c\n"


def _load(source: str, tmp_path) -> object:
    path = tmp_path / f"prog_{next(_counter)}.py"
    path.write_text("import numpy as np\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def _fd(f, args, i, eps=1e-6):
    plus, minus = list(args), list(args)
    plus[i] += eps
    minus[i] -= eps
    return (f(*plus) - f(*minus)) / (2 * eps)


def _one_sided(f, args, i, value, eps=1e-6):
    plus, minus = list(args), list(args)
    plus[i] += eps
    minus[i] -= eps
    return (f(*plus) - value) / eps, (value - f(*minus)) / eps


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(programs(), st.floats(-1.5, 1.5), st.floats(-1.5, 1.5))
def test_random_program_gradients(tmp_path, source, a, b):
    f = _load(source, tmp_path)
    # off round numbers, where branch conditions like ``a > 0.0`` switch
    a, b = a + 0.01371, b - 0.02137
    with np.errstate(all="ignore"):
        value = f(a, b)
        if not np.isfinite(value) or abs(value) > 1e6:
            return
        ga, gb = s2s_ad.grad(f, (0, 1))(a, b)
        ta = s2s_ad.jvp(f, (a, b), (1.0, 0.0))[1]
        tb = s2s_ad.jvp(f, (a, b), (0.0, 1.0))[1]
        for i, got in enumerate((ga, gb, ta, tb)):
            i = i % 2
            want = _fd(f, [a, b], i)
            # at a branch boundary the one-sided quotients differ: no derivative to compare
            ahead, behind = _one_sided(f, [a, b], i, value)
            if abs(ahead - behind) > 1e-3 * (1 + abs(want)):
                continue
            assert abs(got - want) <= 1e-4 * (1 + abs(want)), (source, a, b, i, got, want)


def _arrayize(source: str) -> str:
    """The same program on 1-d arrays: conditions and the result summed."""
    import re

    source = re.sub(r"if (.*) > (-?[0-9.]+):", r"if np.sum(\1) > \2:", source)
    return re.sub(r"return (.*)\n", r"return np.sum(\1)\n", source)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(programs(), st.floats(-1.5, 1.5), st.floats(-1.5, 1.5))
def test_random_array_program_derivatives(tmp_path, source, a, b):
    f = _load(_arrayize(source), tmp_path)
    x = np.array([a + 0.01371, a * 0.5 - 0.3, 0.7])
    y = np.array([b - 0.02137, 0.4, -b])
    v = np.array([0.3, -0.7, 0.5])

    def call(p, q):  # the program may update its arguments in place (b += ...)
        return f(p.copy(), q.copy())

    with np.errstate(all="ignore"):
        value = call(x, y)
        if not np.isfinite(value) or abs(value) > 1e6:
            return
        try:
            gx, _ = s2s_ad.grad(f, (0, 1))(x, y)
        except s2s_ad.TransformError as exc:
            assert "also names" in str(exc)  # y = x; y += ...: refused, Python would alias
            return
        _, tangent = s2s_ad.jvp(f, (x, y), (v, np.zeros(3)))
        eps = 1e-6
        ahead, behind = call(x + eps * v, y), call(x - eps * v, y)
        want = (ahead - behind) / (2 * eps)
        if abs((ahead - value) - (value - behind)) / eps > 1e-3 * (1 + abs(want)):
            return  # a branch boundary within eps
        assert abs(np.dot(gx, v) - want) <= 1e-4 * (1 + abs(want)), (source, "rev")
        assert abs(tangent - want) <= 1e-4 * (1 + abs(want)), (source, "fwd")


def test_in_place_update_through_a_chain_of_copies_is_refused(tmp_path):
    # found by the array property test: ``a += a`` writes into c, which ``a`` names
    # through ``b = c; a = b``; the generated code would rebind instead
    source = (
        "def f(a, b):\n"
        "    c = a * b\n"
        "    b = c\n"
        "    a = b\n"
        "    b = np.sin(1.0)\n"
        "    a += a\n"
        "    return np.sum(a + b + c)\n"
    )
    f = _load(source, tmp_path)
    with pytest.raises(s2s_ad.TransformError, match="also names"):
        s2s_ad.grad(f, (0, 1))(np.array([0.3, -0.2]), np.array([0.1, 0.4]))
