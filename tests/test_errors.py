"""Refusals: TransformError at transform time, naming the construct, file, line and source."""

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError

COUNTER = 0


def gen(x):
    yield x * 2


def with_global(x):
    global COUNTER
    COUNTER = x
    return x


def uses_fft(x):
    return np.sum(np.fft.hfft(x))


def nested_def(x):
    @np.vectorize
    def inner(y):
        if y > 0:
            return y * 2
        return y

    return inner(x)


def with_try(x):
    out = []
    try:
        out.append(x * 2)  # run twice (once to find the path): refused
    except ValueError:
        out.append(x)
    return out[0]


def _counter():
    total = 0.0

    def writes_nonlocal(x):
        # a name of the scope around the differentiated function (a local function
        # inlined where it is called may write its caller's names with nonlocal)
        nonlocal total
        total += x
        return total * x

    return writes_nonlocal


writes_nonlocal = _counter()


@pytest.mark.parametrize(
    ("fun", "construct"),
    [
        (gen, "generator function"),
        (with_global, "global"),
        (uses_fft, "np.fft.hfft"),
        (nested_def, "a decorated local function"),
        (with_try, "in-place method .append() inside a 'try' body"),
        (writes_nonlocal, "nonlocal"),
    ],
)
def test_refusals_name_construct_file_and_line(fun, construct):
    with pytest.raises(TransformError) as info:
        s2s_ad.grad(fun)
    message = str(info.value)
    assert construct in message
    assert "test_errors.py:" in message
    assert info.value.lineno > 0
    assert info.value.line_text.strip() in message


def test_fft_error_suggests_defgrad():
    with pytest.raises(TransformError, match="defgrad"):
        s2s_ad.grad(uses_fft)


def test_builtin_without_rule_is_refused_naming_defgrad():
    import math

    with pytest.raises(TransformError, match=r"(?s)call to remainder .*defgrad\(remainder"):
        s2s_ad.grad(math.remainder)


def test_exec_code_has_no_source():
    namespace = {}
    exec("def f(x):\n    return x * 2\n", namespace)
    with pytest.raises(TransformError, match="source"):
        s2s_ad.grad(namespace["f"])


def test_transform_error_is_exception_not_syntax_error():
    assert issubclass(TransformError, Exception)
    assert not issubclass(TransformError, (SyntaxError, KeyError))


def set_comprehension(x):
    return sum({v * 2 for v in x})


def test_active_set_comprehension_refused():
    with pytest.raises(TransformError, match="comprehension"):
        s2s_ad.grad(set_comprehension)


def test_cli(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "mod.py"
    script.write_text("def f(x, y):\n    return x * y + y\n")
    ok = subprocess.run(
        [sys.executable, "-m", "s2s_ad", f"{script}:f", "--wrt", "x,y"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and "def f_grad(x, y):" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "s2s_ad", f"{script}:g"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def _refusals():
    from corpus import calls, mutation

    return [
        (calls.callee_mutates_argument, (np.ones(3),), "write into its argument"),
        (mutation.inplace_augmented_aliasing, (np.ones(3),), "another variable also names"),
        (_parameter_view_written, (np.ones(4),), "view"),
        (_parameter_lists_joined, ([np.ones(3), np.ones(3)], [np.ones(3)]), "list concatenation"),
    ]


def _pair(x):
    return [x, 2.0 * x]


def _parameter_view_written(x):
    v = x[1:3]  # a view of the caller's array (a local's view is written through its base)
    v *= 3.0
    return np.sum(x**2)


def _parameter_lists_joined(a, b):
    a, b = _pair(a[0]), _pair(b[0])  # lists from calls: which side is which is unknown
    c = a + b
    return np.sum(c[2] * c[1])


@pytest.mark.parametrize("index", range(4))
def test_aliasing_and_side_effects_are_refused_not_miscomputed(index):
    fun, args, message = _refusals()[index]
    with pytest.raises(TransformError, match=message):
        s2s_ad.grad(fun)(*args)


def test_cli_wrt_out_of_range_is_one_line_and_exit_2(tmp_path, capsys):
    from s2s_ad.__main__ import main

    script = tmp_path / "mod.py"
    script.write_text("def f(x, y):\n    return x * y + y\n")
    for bad in ("7", "-3", "0,2", "q"):
        assert main([f"{script}:f", "--wrt", bad]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert main([f"{script}:f", "--wrt", "-1"]) == 0
    assert "def f_grad(x, y):" in capsys.readouterr().out


# --- a function that returns None ------------------------------------------------------


def forgot_return(x):
    y = np.sum(x * x)  # noqa: F841


def returns_none_explicitly(x):
    y = np.sum(x * x)  # noqa: F841
    return None


def returns_on_one_branch(x):
    if x > 0.0:
        return x * x


@pytest.mark.parametrize("fun", [forgot_return, returns_none_explicitly])
def test_function_without_a_returned_value_is_refused_at_transform_time(fun):
    with pytest.raises(TransformError, match="returns None") as info:
        s2s_ad.grad(fun)
    assert info.value.lineno == fun.__code__.co_firstlineno
    with pytest.raises(TransformError, match="returns None"):
        s2s_ad.vjp(fun, np.ones(2))
    with pytest.raises(TransformError, match="returns None"):
        s2s_ad.jvp(fun, (np.ones(2),), (np.ones(2),))


def test_none_returned_on_the_path_taken_is_an_error_at_run_time():
    from s2s_ad.errors import OutputError

    df = s2s_ad.grad(returns_on_one_branch)
    assert df(1.5) == pytest.approx(3.0)
    with pytest.raises(OutputError, match="returned None"):
        df(-1.0)
    # both a TypeError (as JAX raises) and a ValueError (as for a non-scalar output)
    with pytest.raises(TypeError):
        df(-1.0)
    with pytest.raises(ValueError):
        s2s_ad.value_and_grad(returns_on_one_branch)(-1.0)
    with pytest.raises(OutputError):
        s2s_ad.vjp(returns_on_one_branch, -1.0)
    with pytest.raises(OutputError):
        s2s_ad.jvp(returns_on_one_branch, (-1.0,), (1.0,))


def calls_helper_without_return(x):
    return np.sum(forgot_return(x))


def test_callee_returning_none_does_not_give_a_silent_zero():
    with pytest.raises((TransformError, TypeError)):
        s2s_ad.grad(calls_helper_without_return)(np.ones(2))


def test_cli_decorated_function_takes_the_wrappers_parameters(tmp_path, capsys):
    from s2s_ad.__main__ import main

    script = tmp_path / "decorated.py"
    script.write_text(
        "import functools\n\n\n"
        "def twice(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def wrapper(t):\n"
        "        return 2.0 * fn(t)\n\n"
        "    return wrapper\n\n\n"
        "@twice\n"
        "def f(x):\n"
        "    return x * x\n"
    )
    assert main([f"{script}:f", "--wrt", "t"]) == 0
    assert "def wrapper_grad(t):" in capsys.readouterr().out
    assert main([f"{script}:f", "--wrt", "x"]) == 2
    assert "no parameter 'x'" in capsys.readouterr().err
