"""Elementwise functions: NumPy ufuncs and their ``math`` counterparts, as partials.

Each rule states the partial derivative of the output with respect to each input as
an expression of the parameters and ``ans`` (the output), which serves both modes and
is checked against SymPy (``sympy=`` names the primal in :mod:`sympy`, or in
:mod:`sympy.codegen.cfunctions` for ``expm1 log1p exp2 log2 log10 hypot``).
Binary rules are wrapped in ``_ad.unbroadcast`` by :func:`~.registry.elementwise`.

``np.power`` and the arithmetic ufuncs live in :mod:`.operators`; ``np.sign`` has a
zero derivative and is registered in :mod:`.nondiff` so that no gradient flows at all.
"""

from __future__ import annotations

import math

import numpy as np

from .registry import elementwise

# Sample inputs: a Python float and arrays, inside each function's domain, away from kinks.
_REAL = np.array([[-1.2, 0.3, 0.8], [1.7, -0.4, 2.1]])
_POS = np.array([[0.4, 1.3, 2.2], [0.7, 3.1, 1.6]])
_UNIT = np.array([-0.8, -0.3, 0.2, 0.6])
_BIG = np.array([1.2, 1.9, 3.5])
_ROW = np.array([0.5, -1.5, 2.0])
_COL = np.array([[1.2], [-0.4]])

R = [(0.7,), (-1.3,), (_REAL,)]
P = [(0.7,), (2.5,), (_POS,)]
U = [(0.3,), (-0.6,), (_UNIT,)]
PAIRS = [(1.3, -0.7), (-0.4, 2.2), (_ROW, _COL)]
POS_PAIRS = [(1.3, 0.7), (np.abs(_ROW), np.abs(_COL))]

# --- exponentials and logarithms ---------------------------------------------------

exp = elementwise("np.exp", [np.exp, math.exp], ("x",), ("ans",), R, sympy="exp")
exp2 = elementwise("np.exp2", [np.exp2, math.exp2], ("x",), ("ans * np.log(2.0)",), R, sympy="exp2")
expm1 = elementwise("np.expm1", [np.expm1, math.expm1], ("x",), ("ans + 1.0",), R, sympy="expm1")
log = elementwise("np.log", [np.log], ("x",), ("1.0 / x",), P, sympy="log")
math_log = elementwise(
    "math.log",
    [math.log],
    ("x", "base"),
    ("1.0 / (x * np.log(base))", "-ans / (base * np.log(base))"),
    [(2.5,), (2.5, 2.0), (0.7, 10.0)],
    sympy="log",
    defaults={"base": "np.e"},
)
log2 = elementwise(
    "np.log2", [np.log2, math.log2], ("x",), ("1.0 / (x * np.log(2.0))",), P, sympy="log2"
)
log10 = elementwise(
    "np.log10", [np.log10, math.log10], ("x",), ("1.0 / (x * np.log(10.0))",), P, sympy="log10"
)
log1p = elementwise(
    "np.log1p", [np.log1p, math.log1p], ("x",), ("1.0 / (1.0 + x)",), P, sympy="log1p"
)
logaddexp = elementwise(
    "np.logaddexp", [np.logaddexp], ("x", "y"), ("np.exp(x - ans)", "np.exp(y - ans)"), PAIRS
)
logaddexp2 = elementwise(
    "np.logaddexp2", [np.logaddexp2], ("x", "y"), ("np.exp2(x - ans)", "np.exp2(y - ans)"), PAIRS
)

# --- powers and roots ----------------------------------------------------------------

sqrt = elementwise("np.sqrt", [np.sqrt, math.sqrt], ("x",), ("0.5 / ans",), P, sympy="sqrt")
cbrt = elementwise(
    "np.cbrt",
    [np.cbrt, math.cbrt],
    ("x",),
    ("1.0 / (3.0 * ans * ans)",),
    P + [(-2.0,)],
    sympy="cbrt",
)
square = elementwise("np.square", [np.square], ("x",), ("2.0 * x",), R)
reciprocal = elementwise("np.reciprocal", [np.reciprocal], ("x",), ("-ans * ans",), R)
float_power = elementwise(
    "np.float_power",
    [np.float_power],
    ("x", "y"),
    ("y * x ** (y - 1)", "ans * _ad.safe_log(x)"),
    POS_PAIRS,
    sympy="Pow",
)
math_pow = elementwise(
    "math.pow",
    [math.pow],
    ("x", "y"),
    ("y * x ** (y - 1)", "ans * _ad.safe_log(x)"),
    POS_PAIRS[:1],
    sympy="Pow",
)
hypot = elementwise(
    "np.hypot", [np.hypot, math.hypot], ("x", "y"), ("x / ans", "y / ans"), PAIRS, sympy="hypot"
)

# --- trigonometric and hyperbolic -----------------------------------------------------

sin = elementwise("np.sin", [np.sin, math.sin], ("x",), ("np.cos(x)",), R, sympy="sin")
cos = elementwise("np.cos", [np.cos, math.cos], ("x",), ("-np.sin(x)",), R, sympy="cos")
tan = elementwise("np.tan", [np.tan, math.tan], ("x",), ("1.0 + ans * ans",), R, sympy="tan")
arcsin = elementwise(
    "np.arcsin",
    [np.arcsin, math.asin],
    ("x",),
    ("1.0 / np.sqrt(1.0 - x * x)",),
    U,
    sympy="asin",
)
arccos = elementwise(
    "np.arccos",
    [np.arccos, math.acos],
    ("x",),
    ("-1.0 / np.sqrt(1.0 - x * x)",),
    U,
    sympy="acos",
)
arctan = elementwise(
    "np.arctan", [np.arctan, math.atan], ("x",), ("1.0 / (1.0 + x * x)",), R, sympy="atan"
)
arctan2 = elementwise(
    "np.arctan2",
    [np.arctan2, math.atan2],
    ("y", "x"),
    ("x / (x * x + y * y)", "-y / (x * x + y * y)"),
    PAIRS,
    sympy="atan2",
)
sinh = elementwise("np.sinh", [np.sinh, math.sinh], ("x",), ("np.cosh(x)",), R, sympy="sinh")
cosh = elementwise("np.cosh", [np.cosh, math.cosh], ("x",), ("np.sinh(x)",), R, sympy="cosh")
tanh = elementwise("np.tanh", [np.tanh, math.tanh], ("x",), ("1.0 - ans * ans",), R, sympy="tanh")
arcsinh = elementwise(
    "np.arcsinh",
    [np.arcsinh, math.asinh],
    ("x",),
    ("1.0 / np.sqrt(x * x + 1.0)",),
    R,
    sympy="asinh",
)
arccosh = elementwise(
    "np.arccosh",
    [np.arccosh, math.acosh],
    ("x",),
    ("1.0 / np.sqrt(x * x - 1.0)",),
    [(1.5,), (_BIG,)],
    sympy="acosh",
)
arctanh = elementwise(
    "np.arctanh", [np.arctanh, math.atanh], ("x",), ("1.0 / (1.0 - x * x)",), U, sympy="atanh"
)
deg2rad = elementwise(
    "np.deg2rad", [np.deg2rad, np.radians, math.radians], ("x",), ("np.pi / 180.0",), R
)
rad2deg = elementwise(
    "np.rad2deg", [np.rad2deg, np.degrees, math.degrees], ("x",), ("180.0 / np.pi",), R
)
erf = elementwise(
    "math.erf",
    [math.erf],
    ("x",),
    ("2.0 / np.sqrt(np.pi) * np.exp(-x * x)",),
    R[:2],
    sympy="erf",
)
erfc = elementwise(
    "math.erfc",
    [math.erfc],
    ("x",),
    ("-2.0 / np.sqrt(np.pi) * np.exp(-x * x)",),
    R[:2],
    sympy="erfc",
)

# --- piecewise: abs, max/min, where, clip --------------------------------------------

absolute = elementwise(
    "np.abs", [np.abs, np.fabs, math.fabs], ("x",), ("np.sign(x)",), R, sympy="Abs"
)
maximum = elementwise(
    "np.maximum",
    [np.maximum, np.fmax],
    ("x", "y"),
    ("_ad.max_weight(x, y)", "_ad.max_weight(y, x)"),
    PAIRS,
    sympy="Max",
)
minimum = elementwise(
    "np.minimum",
    [np.minimum, np.fmin],
    ("x", "y"),
    ("_ad.min_weight(x, y)", "_ad.min_weight(y, x)"),
    PAIRS,
    sympy="Min",
)
where = elementwise(
    "np.where",
    [np.where],
    ("condition", "x", "y"),
    ("np.where(condition, 1.0, 0.0)", "np.where(condition, 0.0, 1.0)"),
    [(True, 1.5, -0.5), (_ROW > 0, _ROW, _COL), (np.array([True, False]), _REAL[:, :2].T, 2.0)],
    diff=("x", "y"),
)
clip = elementwise(
    "np.clip",
    [np.clip],
    ("a", "a_min", "a_max"),
    (
        "_ad.clip_mask(a, a_min, a_max)",
        "_ad.clip_mask(a, a_min, a_max, 'a_min')",
        "_ad.clip_mask(a, a_min, a_max, 'a_max')",
    ),
    [
        (0.7, -0.5, 1.0),
        (_REAL, -0.5, 1.0),
        (_REAL, np.array([-1.0, 0.0, 0.5]), 1.5),
        (_ROW, None, 1.0),
        (_ROW, -1.0, None),
        (_REAL, np.array([-1.0, 0.5, 2.5]), np.array([1.5, 0.8, 0.3])),  # crossed bounds
    ],
)

# --- sign transfer and remainders (math) -------------------------------------------

copysign = elementwise(
    "np.copysign",
    [np.copysign, math.copysign],
    ("x", "y"),
    ("np.sign(x) * np.sign(ans)", "0.0"),  # piecewise constant in y
    [(1.3, -0.7), (-0.4, 2.2), (_ROW, _COL)],
)
fmod = elementwise(
    "np.fmod",
    [np.fmod, math.fmod],
    ("x", "y"),
    ("1", "-np.trunc(x / y)"),
    [(1.3, 0.7), (-2.9, 1.1)],
)
