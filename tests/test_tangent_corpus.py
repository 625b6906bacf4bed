"""The kinds of function Tangent's test corpus differentiates (our own programs), run the
way Tangent's users request derivatives, mapped to s2s_ad:

* ``tangent.grad(f)`` and ``grad(f, wrt=(0, 1))`` -> ``s2s_ad.grad`` (a tuple ``wrt`` gives
  a tuple, as in JAX); ``preserve_result=True`` -> ``value_and_grad``; the seed Tangent's
  gradient takes as a last argument -> ``vjp``'s pullback;
* ``grad(grad(f))`` (reverse over reverse), ``grad(f, mode='forward')`` -> ``jvp``, and the
  Hessian-vector products in three configurations.

Scalar programs are checked at inputs on both sides of their branches, against finite
differences and autograd running the same source; array programs through
``check_program`` (also ``jvp``, ``hvp`` and the optimizer off).
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest

import s2s_ad
from tests.fd import numerical_grad
from tests.user_checks import autograd_twin, check_program, close

# --- scalar programs: arithmetic, rebinding, branches, loops, calls -----------------------


def affine(u, w, z):
    return u * w + z


def scale_by(u, w):
    return u * w


def shift_by(u, w):
    return u + w


def affine_by_calls(u, w, z):
    return shift_by(scale_by(u, w), z)


def affine_rebound(u, w, z):
    t = u * w
    t = t + z
    return t


def quotients(u):
    return u / 3.0 + 3.0 / u + u / u - (3.0 - u) + (u - u) * u


def adjoint_like_names(u):
    du = u * u
    bu = du + u
    return bu


def sign_dependent_scale(u):
    if u > 0:
        u = u * 3.0
    elif 0 > u:
        u = u * 2.0
    else:
        u = 1.0 * u
    return u


def nested_conditions(u):
    if u > 0:
        u = u * 3.0
        if u < 4:
            u = u * u
        else:
            u = u * 2.0
    else:
        u = 3.0 * u
    return u


def tangled_conditions(u):
    if u * u / 3.0 > 0:
        k = 3.0
    else:
        k = 4.0
    u = u * k
    if u < k - u * k:
        u = u * u
    elif u > k + 3.0 * u:
        u = u / k if u / 2.0 < 0 else u * k
    else:
        u = -u
    return u


def conditions_in_series(u):
    if u > 0:
        u = u * u
    u = u + u
    if u < 0:
        u = 3.0 * u
    return u


def compare_arguments(u, w):
    if u > w:
        u = u * u
    else:
        u = u * w
    return u


def loops_in_series(u, n):
    for _ in range(n):
        u = u * u
    u = 2.0 * u
    for _ in range(n + 1):
        u = u * 0.5
    return u


def branch_then_loop(u, n):
    if u > 0:
        u = u * u
    for _ in range(n):
        u = np.sin(u) * u
    return u


def guarded_squaring(u):
    for _ in range(3):
        if u < 2.0:
            u = u * u
    return u


def nested_loops(u):
    for _ in range(2):
        for _ in range(3):
            u = np.tanh(u) * 1.5
    return u


def power_by_accumulation(u):
    acc = 1.0
    for _ in range(3):
        acc = acc * u
    return acc


def scaled_by_inner_def(u, n):
    def damp(a, b):
        return a * b * 0.5

    for _ in range(n):
        u = damp(u, u + 1.0)
    return u


def squared_in_place(u):
    s = u * u
    s *= s
    s -= u
    return s


def chained_helper_calls(u):
    v = scale_by(u, u)
    v = scale_by(v, v)
    return shift_by(v, np.exp(u))


def power_of_arguments(u, w):
    return np.abs(u) ** w


def halving_loop(u):
    while np.abs(u) > 0.3:
        u = u * 0.5
    return u


def scalar_of_list(u):
    items = [1.0, u * u, 2.0]
    items2 = [1.0, u, 3.0]
    return np.sum(items) * items2[1]


SCALAR = {
    "affine": (affine, 3),
    "affine_by_calls": (affine_by_calls, 3),
    "affine_rebound": (affine_rebound, 3),
    "quotients": (quotients, 1),
    "adjoint_like_names": (adjoint_like_names, 1),
    "sign_dependent_scale": (sign_dependent_scale, 1),
    "nested_conditions": (nested_conditions, 1),
    "tangled_conditions": (tangled_conditions, 1),
    "conditions_in_series": (conditions_in_series, 1),
    "compare_arguments": (compare_arguments, 2),
    "guarded_squaring": (guarded_squaring, 1),
    "nested_loops": (nested_loops, 1),
    "power_by_accumulation": (power_by_accumulation, 1),
    "squared_in_place": (squared_in_place, 1),
    "chained_helper_calls": (chained_helper_calls, 1),
    "power_of_arguments": (power_of_arguments, 2),
    "halving_loop": (halving_loop, 1),
    "scalar_of_list": (scalar_of_list, 1),
}
WITH_COUNT = {
    "loops_in_series": loops_in_series,
    "branch_then_loop": branch_then_loop,
    "scaled_by_inner_def": scaled_by_inner_def,
}
POINTS = [-1.3, 0.45, 1.7]


def _second(fun, args, h=1e-5):
    g = s2s_ad.grad(fun)
    up, down = list(args), list(args)
    up[0] += h
    down[0] -= h
    return (g(*up) - g(*down)) / (2 * h)


@pytest.mark.parametrize("name", sorted(SCALAR))
@pytest.mark.parametrize("point", POINTS)
def test_scalar_program(name, point):
    fun, arity = SCALAR[name]
    args = tuple(point + 0.35 * k for k in range(arity))
    wrt = tuple(range(arity))
    want = numerical_grad(fun, args, wrt)
    got = s2s_ad.grad(fun, wrt=wrt)(*args)
    close(got, want, 1e-5)
    close(got, autograd.grad(autograd_twin(fun), wrt)(*args), 1e-9)
    value, first = s2s_ad.value_and_grad(fun)(*args)  # Tangent's preserve_result=True
    close((value, first), (fun(*args), want[0]), 1e-5)
    close(s2s_ad.grad(s2s_ad.grad(fun))(*args), _second(fun, args), 1e-4)
    _, tangent = s2s_ad.jvp(fun, args, (1.0,) + (0.0,) * (arity - 1))  # mode='forward'
    close(tangent, want[0], 1e-5)


@pytest.mark.parametrize("name", sorted(WITH_COUNT))
@pytest.mark.parametrize("n", [1, 2, 3])
def test_scalar_program_with_trip_count(name, n):
    fun = WITH_COUNT[name]
    for point in POINTS:
        args = (point, n)
        got = s2s_ad.grad(fun)(*args)
        close(got, numerical_grad(fun, args, 0), 1e-5)
        close(got, autograd.grad(autograd_twin(fun))(*args), 1e-9)
        close(s2s_ad.grad(s2s_ad.grad(fun))(*args), _second(fun, args), 1e-4)
    with pytest.raises(TypeError, match="integer"):
        s2s_ad.grad(fun, wrt=(0, 1))(0.5, n)


# --- containers as arguments ---------------------------------------------------------------


def unpack_and_combine(triple):
    u, w, z = triple
    return u * w + z


def combine_named(d):
    return d["u"] * d["w"] + d["z"]


def via_dict_literal(triple):
    u, w, z = triple
    return combine_named(dict(u=u, w=w, z=z))


def nested_lookup(cfg):
    return cfg["layer"]["gain"] * cfg["layer"]["bias"] + cfg["scale"]


def pick_by_index(u, w, z, i):
    packed = u, w, z
    return packed[i] * packed[(i + 1) % 3]


def test_tuple_and_dict_arguments():
    triple = (0.7, -1.2, 2.0)
    for fun in (unpack_and_combine, via_dict_literal):
        got = s2s_ad.grad(fun)(triple)
        assert isinstance(got, tuple)
        close(got, numerical_grad(fun, (triple,), 0))
    d = {"u": 0.7, "w": -1.2, "z": 2.0}
    got = s2s_ad.grad(combine_named)(d)
    assert set(got) == set(d)
    close(got, numerical_grad(combine_named, (d,), 0))
    cfg = {"layer": {"gain": 3.0, "bias": 4.0}, "scale": 0.5}
    got = s2s_ad.grad(nested_lookup)(cfg)
    assert got["layer"]["gain"] == 4.0 and got["layer"]["bias"] == 3.0 and got["scale"] == 1.0
    for i in range(3):
        got = s2s_ad.grad(pick_by_index, wrt=(0, 1, 2))(0.7, -1.2, 2.0, i)
        close(got, numerical_grad(pick_by_index, (0.7, -1.2, 2.0, i), (0, 1, 2)))


# --- array programs ------------------------------------------------------------------------


def rebound_to_total(x):
    x = np.sum(x)
    x = x * x
    return x


def product_of_entries(x):
    items = [1.0, x[0] * x[1] * x[2], 3.0]
    return np.sum(items) + np.mean(x)


def overwrite_first(x):
    sq = x**2.0
    x[0] = sq[1] * sq[2]
    return np.sum(x * sq)


def copy_by_loop(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = np.exp(x[i])
    return np.sum(out * x)


def rows_from_entries(x):
    rows = np.zeros((len(x), 3))
    for t in range(len(rows)):
        rows[t] = x[t] * np.arange(3.0)
    return np.sum(rows**2)


def comprehension_total(x):
    return np.sum([e * 3.0 + e**2 for e in x]) + np.sum(x[1:])


def strided_with_newaxis(m):
    return np.sum(m[::2, np.newaxis] ** 2)


def hidden_sum(h):
    return np.sum(h * h * h * h**2.0)


def tiny_recurrence(W, seq):
    h = np.zeros((len(seq) + 1, W.shape[1]))
    for t in range(len(seq)):
        h[t + 1] = np.tanh(np.dot(seq[t], W) + h[t])
    return np.sum(h[1:] ** 2)


def tanh_likelihood(W, b, features, labels):
    h = np.dot(features, W) + b
    prob = 0.5 * (np.tanh(h) + 1)
    likelihood = prob * labels + (1 - prob) * (1 - labels)
    return -np.sum(np.log(likelihood))


RS = np.random.RandomState(7)
FEATURES, LABELS = RS.rand(4, 3), (RS.rand(4, 5) > 0.5).astype(float)
ARRAYS = {
    "rebound_to_total": (rebound_to_total, (RS.randn(5),), 0),
    "product_of_entries": (product_of_entries, (RS.randn(4),), 0),
    "copy_by_loop": (copy_by_loop, (RS.randn(5),), 0),
    "rows_from_entries": (rows_from_entries, (RS.randn(4),), 0),
    "comprehension_total": (comprehension_total, (RS.randn(5),), 0),
    "strided_with_newaxis": (strided_with_newaxis, (RS.randn(5, 3),), 0),
    "hidden_sum": (hidden_sum, (RS.randn(6),), 0),
    "recurrence_W": (tiny_recurrence, (RS.randn(2, 3), RS.randn(3, 2)), 0),
    "recurrence_seq": (tiny_recurrence, (RS.randn(2, 3), RS.randn(3, 2)), 1),
    "likelihood_W": (tanh_likelihood, (RS.randn(3, 5), RS.randn(5), FEATURES, LABELS), 0),
    "likelihood_b": (tanh_likelihood, (RS.randn(3, 5), RS.randn(5), FEATURES, LABELS), 1),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_array_program(name):
    fun, args, wrt = ARRAYS[name]
    writes = ("copy_by_loop", "rows_from_entries", "recurrence_W", "recurrence_seq")
    twin = None if name in writes else autograd_twin  # autograd cannot write into arrays
    check_program(fun, args, wrt, rs=np.random.RandomState(3), twin=twin)


def test_program_writing_into_its_argument():
    """The primal writes into ``x``: every call gets a fresh copy, as Tangent's tests do."""
    x = RS.randn(4)
    got = s2s_ad.grad(overwrite_first)(x.copy())
    close(got, numerical_grad(lambda y: overwrite_first(y.copy()), (x,), 0), 1e-5)
    value, dx = s2s_ad.value_and_grad(overwrite_first)(x.copy())
    close((value, dx), (overwrite_first(x.copy()), got), 1e-12)
    v = RS.randn(4)
    hvp = s2s_ad.hvp(overwrite_first)(x.copy(), v)
    g = s2s_ad.grad(overwrite_first)
    close(hvp, (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5, 1e-4)


# --- how Tangent's users ask for derivatives -----------------------------------------------


def test_several_wrt_positions_and_names_like_tangent_wrt():
    args = (RS.randn(3, 5), RS.randn(5), FEATURES, LABELS)
    by_position = s2s_ad.grad(tanh_likelihood, wrt=(0, 1))(*args)
    by_name = s2s_ad.grad(tanh_likelihood, wrt=("W", "b"))(*args)
    want = autograd.grad(autograd_twin(tanh_likelihood), (0, 1))(*args)
    close(by_position, want, 1e-9)
    close(by_name, want, 1e-9)


def test_seeded_gradient_is_a_pullback():
    """Tangent's gradient takes the output's seed as a last argument: ``vjp``'s pullback."""
    W, seq = RS.randn(2, 3), RS.randn(3, 2)
    value, pullback = s2s_ad.vjp(tiny_recurrence, W, seq)
    dW, dseq = pullback(2.5)
    close(value, tiny_recurrence(W, seq))
    close((dW, dseq), tuple(2.5 * g for g in numerical_grad(tiny_recurrence, (W, seq), (0, 1))))


def cubed(a):
    return a * a * a


def through_a_helper(x):
    a = cubed(x)
    return np.sum(a * x**2.0)


@pytest.mark.parametrize("fun", [hidden_sum, through_a_helper])
def test_hessian_vector_products_three_ways(fun):
    x, v = RS.randn(12), RS.randn(12)
    want = 20.0 * x**3 * v  # both are sum(x**5)
    close(s2s_ad.hvp(fun)(x, v), want, 1e-8)
    close(s2s_ad.jvp(s2s_ad.grad(fun), (x,), (v,))[1], want, 1e-8)  # forward over reverse
    reverse_over_reverse = s2s_ad.grad(lambda y: np.vdot(s2s_ad.grad(fun)(y), v))
    close(reverse_over_reverse(x), want, 1e-8)


def reverse_over_forward(x, v):
    return s2s_ad.jvp(hidden_sum, (x,), (v,))[1]


def test_reverse_over_forward_is_refused_at_the_users_line():
    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(reverse_over_forward)(RS.randn(3), RS.randn(3))
    text = str(info.value)
    assert "s2s_ad.jvp" in text and "test_tangent_corpus.py" in text
    assert "return s2s_ad.jvp(hidden_sum" in text and "hvp" in text


def polar_sum(u, w):
    radius = np.sqrt(u**2.0 + w**2.0)
    angle = np.arctan(w, u)  # a second positional argument is NumPy's out=
    return radius + angle


def test_positional_out_argument_is_refused():
    with pytest.raises(s2s_ad.TransformError, match="out="):
        s2s_ad.grad(polar_sum)(1.0, 2.0)
