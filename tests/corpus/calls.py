"""Calls: other user functions (nested, keyword and default arguments, tuple returns),
module globals, closures over enclosing-function variables, nested ``def``, lambdas (named
inside the function, at module level, passed to ``grad`` directly), methods and callable
objects whose attributes hold arrays, functions passed as arguments."""

import math
from math import sqrt as msqrt

import numpy as np
import numpy as onp
from numpy import exp as nexp

from s2s_ad import grad

from . import case, const, fl, normal, scalars

GAIN = 1.7
WEIGHTS = np.array([0.5, -1.0, 2.0, 0.25])
OFFSETS = {"a": 0.3, "b": np.array([1.0, 2.0, 3.0, 4.0])}


def _square(v):
    return v * v


def _add(a, b=2.0):
    return a + b


def _affine(x, scale=1.0, *, shift=0.0):
    return scale * x + shift


def _stats(v):
    return np.mean(v), np.std(v)


def _layer(h, w):
    return np.tanh(w @ h)


def call_user_function(x):
    return np.sum(_square(x) + _square(np.sin(x)))


def call_nested_user_functions(x):
    return _square(_square(x)) + _add(x) + _add(x, x * x) + _add(b=3.0 * x, a=x)


def call_keyword_arguments(x):
    return np.sum(_affine(x, shift=1.0, scale=2.0) ** 2) + np.sum(_affine(x) * _affine(x, 3.0))


def call_keyword_only_differentiable(x, s):
    return np.sum(_affine(x, shift=s * s, scale=s) ** 2)


def default_parameter(x, p=3.0):
    return x**p + p * x


def differentiate_by_name(x, y):
    return np.sum(x * np.sin(y)) + np.sum(y**2)


def call_returning_tuple(x):
    m, s = _stats(x)
    pair = _stats(x * x)
    return m * s + pair[0] / pair[1]


def call_with_two_parameters(h, w1, w2):
    return np.sum(_layer(_layer(h, w1), w2) ** 2)


def module_globals(x):
    return np.sum(GAIN * x * WEIGHTS) + np.sum(OFFSETS["b"] * x**2) * OFFSETS["a"]


def module_function_via_math(x):
    return math.sin(x) * _add(x, math.pi)


def _make_polynomial(c):
    def polynomial(x):
        return np.sum(c[0] + c[1] * x + c[2] * x**2)

    return polynomial


def _make_scaled(k):
    def scaled(x):
        return np.sum(np.sin(k * x) * k)

    return scaled


closure_polynomial = _make_polynomial(np.array([0.5, -1.0, 0.7]))
closure_scaled = _make_scaled(2.5)


def nested_def_reads_enclosing(x):
    def inner(y):
        return y * x

    return np.sum(inner(x) + inner(2.0))


def nested_def_with_default(x):
    def inner(y, k=2.0):
        return np.exp(-k * y * y)

    return np.sum(inner(x) + inner(x, 0.5))


def lambda_inside(x):
    sq = lambda v: v**2 + x
    return np.sum(sq(x) * sq(2.0))


def lambda_two_args_inside(x, y):
    mix = lambda a, b: a * np.cos(b)
    return np.sum(mix(x, y) + mix(y, x))


module_lambda = lambda x: np.sum(1.0 / (1.0 + np.exp(-x)) * x)


class Affine:
    """A callable model: ``__call__`` reads ``self.w`` and ``self.b``."""

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(self.w @ x + self.b)


class Quadratic:
    """An object whose method reads an array attribute."""

    def __init__(self, a):
        self.a = a

    def energy(self, x):
        return 0.5 * x @ self.a @ x + np.sum(np.sin(x))

    def scaled_energy(self, x, k):
        return k * self.energy(x)


def callable_instance_argument(x, model):
    return np.sum(model(x) ** 2)


def method_on_argument(x, obj):
    return obj.energy(x) + obj.scaled_energy(x, 2.0)


def function_argument(x, fn):
    return np.sum(fn(x) * x)


_quadratic = Quadratic(np.array([[2.0, 0.3, 0.0], [0.3, 1.5, -0.2], [0.0, -0.2, 1.0]]))
bound_method = _quadratic.energy


def _affine_model(rng):
    return Affine(rng.normal(size=(2, 3)), rng.normal(size=2))


def _fill(buf, v):
    buf[0] = v
    buf[1] = v * 2.0


def _total(*vs):
    acc = 0.0
    for v in vs:
        acc = acc + v
    return acc


def _scale_kw(x, **kw):
    return x * kw["k"] + kw["c"]


class _Helpers:
    @staticmethod
    def cube(v):
        return v**3


def callee_mutates_argument(x):
    y = np.zeros(3)
    _fill(y, x[0] ** 2)
    return np.sum(y * x)


def callee_varargs(x):
    return np.sum(_total(x, x**2, np.sin(x)))


def call_with_star_args(x):
    pair = (x, x * x)
    return _add(*pair) * _total(*[x, 2.0 * x])


def call_with_double_star_kwargs(x):
    opts = {"scale": 2.0, "shift": 0.5}
    return np.sum(_affine(x, **opts) ** 2) + np.sum(_scale_kw(x, k=3.0, c=1.0))


def cross_module_call(x):
    return scalars.poly(x) * scalars.math_trig(x)


def from_import_aliases(x):
    return np.sum(nexp(0.5 * x) * onp.cos(x)) + msqrt(x[0] ** 2 + 1.0)


def staticmethod_call(x):
    return np.sum(_Helpers.cube(x)) + np.sum(_Helpers().cube(x * 2.0))


def lambda_immediately_called(x):
    return np.sum((lambda v: v * np.exp(-v))(x))


def object_created_inside(x):
    q = Quadratic(np.eye(3) * 2.0)
    return q.energy(x)


def _cubic(x):
    return x**3 + 2.0 * x * x


derivative_of_cubic = grad(_cubic)


def calls_grad_inside(x):
    slope = grad(_cubic)
    return slope(x) * x


CASES = [
    case(call_user_function, normal(5)),
    case(call_nested_user_functions, fl(-2.0, 2.0)),
    case(call_keyword_arguments, normal(4)),
    case(call_keyword_only_differentiable, normal(4), fl(0.5, 2.0), wrt=(0, 1)),
    case(default_parameter, fl(0.5, 2.0), name="default_parameter_used"),
    case(default_parameter, fl(0.5, 2.0), fl(1.0, 3.0), wrt=(0, "p")),
    case(differentiate_by_name, normal(3), normal(3), wrt="y", name="differentiate_by_name_y"),
    case(differentiate_by_name, normal(3), normal(3), wrt=("y", "x")),
    case(call_returning_tuple, normal(5)),
    case(call_with_two_parameters, normal(3), normal(3, 3), normal(2, 3), wrt=(0, 1, 2)),
    case(module_globals, normal(4)),
    case(module_function_via_math, fl(-2.0, 2.0)),
    case(closure_polynomial, normal(4)),
    case(closure_scaled, normal(4)),
    case(nested_def_reads_enclosing, normal(4)),
    case(nested_def_with_default, normal(4)),
    case(lambda_inside, normal(4)),
    case(lambda_two_args_inside, normal(3), normal(3), wrt=(0, 1)),
    case(module_lambda, normal(4), name="module_lambda"),
    case(lambda x: np.sum(np.exp(x) * x), normal(4), name="lambda_direct"),
    case(lambda x, y: np.sum(x * y**2), normal(3), normal(3), wrt=(0, 1), name="lambda_direct2"),
    case(callable_instance_argument, normal(3), _affine_model),
    case(method_on_argument, normal(3), const(_quadratic)),
    case(function_argument, normal(4), const(np.sin), name="function_argument_ufunc"),
    case(function_argument, normal(4), const(_square), name="function_argument_user"),
    case(bound_method, normal(3), name="bound_method"),
    case(callee_varargs, normal(3)),
    case(call_with_star_args, fl(-2.0, 2.0)),
    case(call_with_double_star_kwargs, normal(3)),
    case(cross_module_call, fl(-1.5, 1.5)),
    case(from_import_aliases, normal(3)),
    case(staticmethod_call, normal(3)),
    case(lambda_immediately_called, normal(3)),
    case(object_created_inside, normal(3)),
    case(derivative_of_cubic, fl(-2.0, 2.0), name="derivative_of_cubic"),
    case(calls_grad_inside, fl(-2.0, 2.0)),
]
