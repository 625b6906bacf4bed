"""Names and source forms that a code generator can trip over: locals that look like the
generated temporaries (``_t1``, ``_tape``, ``x_bar``, ``_ad``), parameters named like the
rule templates' variables (``g``, ``ans``) or swapped relative to a rule's parameter names,
locals shadowing builtins and NumPy names, non-ASCII identifiers, annotations, docstrings,
decorators, multi-line statements."""

import functools

import numpy as np

from . import case, fl, normal, uni, wellcond


def generated_name_lookalikes(x):
    _t1 = x * 2.0
    _t2 = _t1**2
    _tape = np.sin(_t2)
    _trips1 = 3
    for _k in range(_trips1):
        _tape = _tape * _t1
    return np.sum(_tape + _t2)


def bar_suffixed_locals(x):
    x_bar = x * 2.0
    y = x_bar**2
    y_bar = np.sin(y)
    return np.sum(y_bar + x_bar * y)


def local_named_ad(x):
    _ad = x * 2.0
    return np.sum(_ad**2)


def params_named_g_and_ans(g, ans):
    return np.sum(np.tanh(g) * np.exp(ans)) + np.sum(np.power(ans, 2.0) * g)


def swapped_parameter_names(x, y):
    return np.sum(np.power(y, x)) + np.sum(np.arctan2(x, y)) + np.sum(np.maximum(y, 2.0 * x))


def swapped_solve_names(b, a):
    return np.sum(np.linalg.solve(b, a) ** 2) + np.sum(np.dot(a, b))


def locals_shadow_builtins(x):
    sum = np.sum(x)
    max = np.max(x)
    abs = x * 2.0
    return sum * max + np.sum(abs**2)


def local_shadows_numpy_name(x):
    exp = 2.0
    sin = x * 3.0
    return np.sum(np.exp(x) * exp + np.sin(sin))


def param_named_like_numpy_function(exp, sin):
    return np.sum(np.exp(exp) * np.sin(sin))


def unicode_identifiers(α, β):
    γ = α * β
    return np.sum(γ**2 + np.sin(α))


def type_changes(x):
    v = x[0]
    v = x * v
    v = np.sum(v)
    return v * x[1]


def annotated_with_docstring(x: np.ndarray, k: float = 2.0) -> float:
    """A docstring.

    With several lines.
    """
    # a comment
    y: np.ndarray = x * k  # trailing comment

    return float(np.sum(y**2))


def _identity_decorator(fun):
    return fun


def _wrapping_decorator(fun):
    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        return fun(*args, **kwargs)

    return wrapper


@_identity_decorator
def decorated_identity(x):
    return np.sum(x**3)


@_wrapping_decorator
def decorated_wraps(x):
    return np.sum(np.cos(x) * x)


# fmt: off
def multiline_statements(x):
    a = x * 2.0; b = a * x  # noqa: E702
    c = (
        a
        + b
        * np.sin(
            x,
        )
    )
    d = a + \
        c
    return np.sum(d * b)
# fmt: on


def long_expression(x, y):
    return np.sum(
        ((x * y + np.sin(x)) ** 2 - np.exp(-y * y) / (1.0 + x**2)) * np.tanh(x - y)
        + np.log1p(x**2 * y**2) * np.cos(x + 2.0 * y) ** 3
    )


CASES = [
    case(generated_name_lookalikes, normal(3)),
    case(bar_suffixed_locals, normal(3)),
    case(local_named_ad, normal(3)),
    case(params_named_g_and_ans, normal(3), uni(0.5, 1.5, 3), wrt=(0, 1)),
    case(swapped_parameter_names, uni(-1.0, 1.0, 3), uni(2.5, 3.0, 3), wrt=(0, 1)),
    case(swapped_solve_names, wellcond(3), normal(3, 3), wrt=(0, 1)),
    case(locals_shadow_builtins, normal(4)),
    case(local_shadows_numpy_name, normal(3)),
    case(param_named_like_numpy_function, normal(3), normal(3), wrt=(0, 1)),
    case(unicode_identifiers, normal(3), normal(3), wrt=(0, 1)),
    case(type_changes, normal(3)),
    case(annotated_with_docstring, normal(3)),
    case(decorated_identity, normal(3)),
    case(decorated_wraps, normal(3)),
    case(multiline_statements, normal(3)),
    case(long_expression, normal(3), fl(-1.0, 1.0), wrt=(0, 1)),
]
