"""Programs users bring that the closed-world suite did not: dicts keyed by floats,
draws from a seeded ``np.random.Generator`` with differentiated parameters, and writes
through an index array that repeats an entry (NumPy keeps the last write).

Every gradient is checked against central finite differences, in reverse mode, forward
mode and (where it exists) the Hessian-vector product; autograd runs the same code where
it can.
"""

from __future__ import annotations

import types
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from tests.fd import flatten, numerical_grad


def _close(got: Any, want: Any, tol: float = 1e-6) -> None:
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=tol, atol=tol)


def _check(fun: Any, args: tuple[Any, ...], wrt: int = 0, second: bool = True) -> Any:
    """Reverse, forward and (with ``second``) forward-over-reverse against differences."""
    got = s2s_ad.grad(fun, wrt)(*args)
    want = numerical_grad(fun, args, wrt)
    _close(got, want, 1e-5)
    x = args[wrt]
    v = np.linspace(0.3, 1.1, np.size(x)).reshape(np.shape(x))
    if not np.shape(x):
        v = 0.7

    def along(y: Any) -> Any:
        return fun(*args[:wrt], y, *args[wrt + 1 :])

    _, tangent = s2s_ad.jvp(along, (x,), (v,))
    _close(tangent, np.sum(np.asarray(got) * v), 1e-6)
    if second:
        hv = s2s_ad.hvp(along)(x, v)
        dg = s2s_ad.grad(along)
        eps = 1e-5
        want_hv = (np.asarray(dg(x + eps * v)) - np.asarray(dg(x - eps * v))) / (2 * eps)
        _close(hv, want_hv, 1e-4)
    return got


def _twin(fun: Any) -> Any:
    """``fun`` with ``np`` bound to autograd's NumPy."""
    glob = {**fun.__globals__, "np": anp}
    return types.FunctionType(fun.__code__, glob, fun.__name__, fun.__defaults__)


# --- dicts keyed by floats -------------------------------------------------------------


def weighted_by_key(d):
    total = 0.0
    for k in d:
        total += k * d[k] ** 2
    return total


def quadrature(x):
    # Gauss-Legendre-like nodes as keys, integrand values as entries
    nodes = {-0.5: x, 0.0: x * x, 0.5: np.sin(x)}
    total = 0.0
    for node in nodes:
        total = total + (1.0 + node) * nodes[node]
    return total


def test_iterating_a_dict_with_float_keys_gives_no_gradient_to_the_keys():
    d = {0.5: 2.0, 1.5: 3.0}
    got = s2s_ad.grad(weighted_by_key)(d)
    assert list(got) == [0.5, 1.5]
    _close(got, {0.5: 2 * 0.5 * 2.0, 1.5: 2 * 1.5 * 3.0})
    _close(got, autograd.grad(_twin(weighted_by_key))(d))


def test_dict_literal_with_float_keys():
    _check(quadrature, (0.8,))


# --- draws of a seeded np.random.Generator ---------------------------------------------


def reparameterised_elbo(mu, log_sigma):
    """A Monte Carlo objective as in variational inference: draws ``mu + sigma * eps``
    through the generator's own ``normal(loc=, scale=)``."""
    rng = np.random.default_rng(7)
    z = rng.normal(loc=mu, scale=np.exp(log_sigma), size=(64, mu.shape[0]))
    log_lik = -0.5 * np.sum((z - 1.5) ** 2, axis=1)
    return np.mean(log_lik) + np.sum(log_sigma)


def uniform_jitter(lo, width):
    rng = np.random.default_rng(3)
    u = rng.uniform(lo, lo + width, size=5)
    return np.sum(np.log1p(u**2))


def exponential_waits(rate):
    rng = np.random.default_rng(11)
    waits = rng.exponential(1.0 / rate, 8)
    return np.mean(np.sqrt(waits))


def random_state_draw(mu):
    state = np.random.RandomState(0)
    return np.sum(state.normal(mu, 0.5, 4) ** 2)


def test_generator_normal_with_keyword_loc_and_scale_is_reparameterised():
    mu = np.array([0.2, -0.4, 1.0])
    log_sigma = np.array([-0.3, 0.1, 0.0])
    _check(reparameterised_elbo, (mu, log_sigma), 0, second=False)
    got = _check(reparameterised_elbo, (mu, log_sigma), 1, second=False)
    # the same draws written by hand: loc + scale * eps
    eps = np.random.default_rng(7).standard_normal((64, 3))

    def by_hand(ls):
        z = mu + anp.exp(ls) * eps
        return anp.mean(-0.5 * anp.sum((z - 1.5) ** 2, axis=1)) + anp.sum(ls)

    _close(got, autograd.grad(by_hand)(log_sigma))


def test_other_location_scale_draws():
    _check(uniform_jitter, (0.3, 1.2), 0, second=False)
    _check(uniform_jitter, (0.3, 1.2), 1, second=False)
    _check(exponential_waits, (2.0,), second=False)
    _check(random_state_draw, (np.array([0.5, 1.0, -1.0, 2.0]),))


def shape_of_gamma(k):
    rng = np.random.default_rng(1)
    return np.sum(np.log(rng.gamma(k, 1.0, size=5)))


def resample(x):
    rng = np.random.default_rng(1)
    return np.sum(rng.choice(x, 3) ** 2)


def scale_twice(s):
    rng = np.random.default_rng(1)
    return np.sum(rng.normal(size=5, scale=s) ** 2)


def test_draws_that_are_not_differentiable_are_refused_by_name():
    with pytest.raises(TransformError, match="'shape' of np.random.Generator.gamma"):
        s2s_ad.grad(shape_of_gamma)(1.5)
    with pytest.raises(TransformError, match="random draw Generator.choice"):
        s2s_ad.grad(resample)(np.array([0.5, 1.0, 2.0]))
    # the second derivative would call the draw again: refused, not a new sample
    with pytest.raises(TransformError, match="drawn again"):
        s2s_ad.hvp(scale_twice)(0.8, 1.0)
    _check(scale_twice, (0.8,), second=False)


# --- writes through an index that repeats an entry ----------------------------------------


def histogram_like(v, idx):
    buf = np.zeros(4)
    buf[idx] += v**2
    return np.sum(buf * np.arange(1.0, 5.0))


def assign_rows(W, x):
    """Overwrites rows of a copy of ``W``; row 0 is written twice (the last one stays)."""
    out = W * 1.0
    out[np.array([0, 2, 0]), :] = np.tanh(np.outer(x, x[:2]))
    return np.sum(out**2)


def scatter_columns(v):
    A = np.ones((2, 3)) * v[0]
    A[:, [2, 0, 2]] += v[None, :] ** 2
    return np.sum(A * np.arange(6.0).reshape(2, 3))


def test_augmented_write_with_repeated_index_keeps_the_last_write():
    idx = np.array([0, 2, 2, 1])
    v = np.array([1.0, 2.0, 3.0, 4.0])
    got = _check(histogram_like, (v, idx))
    # buf = [v0^2, v3^2, v2^2, 0]: the first write of entry 2 (v1) is overwritten
    _close(got, [2 * v[0], 0.0, 3 * 2 * v[2], 2 * 2 * v[3]])
    _close(s2s_ad.hessian(histogram_like)(v, idx), np.diag([2.0, 0.0, 6.0, 4.0]))


def test_assignments_with_repeated_rows_and_columns():
    W = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
    x = np.array([0.3, -0.7, 1.1])
    _check(assign_rows, (W, x), 0)
    _check(assign_rows, (W, x), 1)
    _check(scatter_columns, (np.array([1.0, 2.0, 3.0]),))


# --- a finite-volume update in a loop, differentiated twice ------------------------------


def diffuse(u, dt=0.1):
    """Fluxes between neighbouring cells move mass from one to the other."""
    f = u
    for _ in range(4):
        f = f.copy()
        flux = dt * (f[1:] - f[:-1]) ** 2
        f[:-1] += flux
        f[1:] -= flux
    return np.sum(f**2 * np.linspace(1.0, 2.0, f.shape[0]))


def diffuse_in_place(f):
    for _ in range(3):
        s = 0.1 * np.tanh(f[1:] - f[:-1])
        f[:-1] += s
        f[1:] -= s
    return np.sum(f**3)


def relax(u):
    f = u * 1.0
    for i in range(3):
        previous = f
        f = f.copy()
        f[i] = 0.5 * (f[i] + np.sum(previous) / 3.0)
    return np.sum(f**2)


def test_stencil_updates_in_a_loop_have_second_derivatives():
    u = np.array([1.0, 2.0, 0.5, 3.0])
    _check(diffuse, (u,))
    _check(diffuse_in_place, (u.copy(),), second=False)
    got = s2s_ad.hvp(diffuse_in_place)(u.copy(), np.array([0.3, -0.2, 0.5, 1.0]))
    dg = s2s_ad.grad(diffuse_in_place)
    v = np.array([0.3, -0.2, 0.5, 1.0])
    _close(got, (dg(u + 1e-5 * v) - dg(u - 1e-5 * v)) / 2e-5, 1e-4)
    _close(s2s_ad.hessian(diffuse)(u) @ v, s2s_ad.hvp(diffuse)(u, v), 1e-8)
    _check(relax, (u,))


def sees_the_write(x):
    f = np.ones(3) * x
    total = 0.0
    for i in range(3):
        seen = f
        f[i] = f[i] * x
        total = total + np.sum(seen**2)
    return total


def sees_it_next_trip(x):
    f = np.ones(3) * x
    seen = f * 2.0
    total = 0.0
    for i in range(3):
        total = total + np.sum(seen)
        seen = f
        f[i] = f[i] * x
    return total


def test_a_write_another_name_sees_later_is_still_refused():
    for fun in (sees_the_write, sees_it_next_trip):
        with pytest.raises(TransformError, match="another variable also names"):
            s2s_ad.grad(fun)(0.7)


# --- imports and try inside the function ---------------------------------------------------


def log_partition(theta):
    import math

    from scipy.special import logsumexp

    scores = np.tanh(theta) * math.pi
    return logsumexp(scores) + math.log(2.0) * theta[0]


def mlp_loss(params, x, y):
    import numpy as xp

    def layer(h, W, b):
        from numpy import tanh

        return tanh(h @ W + b)

    h = x
    for W, b in params:
        h = layer(h, W, b)
    return xp.mean((h[:, 0] - y) ** 2)


def missing_module(x):
    import s2s_ad_no_such_module  # noqa: F401

    return x


def guarded_cholesky(K):
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K + 1e-3 * np.eye(K.shape[0]))
    return np.sum(np.log(np.diag(L)))


def test_imports_inside_the_function_bind_what_they_import():
    theta = np.array([0.3, -0.2, 0.9])
    _check(log_partition, (theta,))
    rs = np.random.RandomState(0)
    params = [(rs.randn(3, 4) * 0.5, np.zeros(4)), (rs.randn(4, 1) * 0.5, np.zeros(1))]
    x, y = rs.randn(5, 3), rs.randn(5)
    got = s2s_ad.grad(mlp_loss)(params, x, y)
    _close(got, numerical_grad(mlp_loss, (params, x, y), 0), 1e-5)
    _close(got, autograd.grad(_twin(mlp_loss))(params, x, y))
    with pytest.raises(TransformError, match="import of s2s_ad_no_such_module"):
        s2s_ad.grad(missing_module)(1.0)


def test_try_around_cholesky_takes_the_path_that_ran():
    """Formerly refused; both paths now differentiate (tests/test_open_world_try.py has
    more), the matrix built symmetric so that finite differences see what the rule sees."""

    def loss(X, shift):
        return guarded_cholesky(X @ X.T + shift * np.eye(2))

    X = np.array([[1.0, 0.099], [0.99, 0.1]])
    for shift in (0.5, -2e-4):  # positive definite; not, but with the jitter
        K = X @ X.T + shift * np.eye(2)
        assert np.all(np.linalg.eigvalsh(K) > 0) == (shift > 0)
        _check(loss, (X, shift))


# --- truth tests whose branch rebinds the tested name; 'and'/'or' values ----------------------


def warm_start(x, cache=0.0):
    """``if cached:`` then rebinding ``cached`` in the branch: the backward sweep must take
    the branch the forward sweep took, not the one the new value would pick."""
    cached = cache
    if cached:
        cached = cached * x
    else:
        cached = x * x
    return cached * 3.0


def scaled(x, scale=None, bias=None):
    scale = scale or 2.0
    bias = bias or x**2
    gate = x > 0.5 and np.tanh(x)
    return x * scale + bias + gate


def first_nonzero(x):
    step = 0.0 or x * x
    return (step and np.sin(step)) + (x or 1.0) * 2.0


def test_a_branch_that_rebinds_its_own_test_is_differentiated_along_the_path_taken():
    _check(warm_start, (0.7,))
    _check(warm_start, (0.7, 1.5))
    _close(s2s_ad.grad(warm_start)(0.7), 3.0 * 2 * 0.7)
    _close(s2s_ad.grad(warm_start)(0.7), autograd.grad(_twin(warm_start))(0.7))


def test_and_or_values_carry_the_gradient_of_the_operand_python_returns():
    for x in (0.7, 0.2):
        _check(scaled, (x,))
        _close(s2s_ad.grad(scaled)(x), autograd.grad(_twin(scaled))(x))
    _check(scaled, (0.7, 3.0), 1)
    _check(first_nonzero, (0.7,))
    _close(s2s_ad.grad(first_nonzero)(0.7), autograd.grad(_twin(first_nonzero))(0.7))


def key_weighted(x):
    """Keys used as numbers through the builtins that iterate a dict."""
    weights = {0.5: x, 1.5: x * x, 2.5: np.sin(x)}
    top = max(weights)
    total = top * weights[top] + min(weights) * weights[0.5]
    total = total + sum(weights) * x + sorted(weights)[1] * weights[1.5]
    return total + list(weights)[0] * tuple(weights)[2] * x


def truth_tests_in_a_loop(x):
    total = 0.0
    for i in reversed(range(len(x))):
        if isinstance(x[i], float) or x[i] > -10.0:
            total = total * 0.5 + x[i] ** 2
    return total


def test_builtins_over_dict_keys_pass_no_gradient_to_the_keys():
    _check(key_weighted, (0.8,))
    _close(s2s_ad.grad(key_weighted)(0.8), autograd.grad(_twin(key_weighted))(0.8))
    got = s2s_ad.grad(lambda d: max(d) * d[0.5] + sum(d) * d[1.5])({0.5: 2.0, 1.5: 3.0})
    _close(got, {0.5: 1.5, 1.5: 2.0})


def test_a_condition_of_and_or_inside_a_loop_has_second_derivatives():
    _check(truth_tests_in_a_loop, (np.array([0.3, -0.2, 0.9]),))


# --- complex intermediate values of a real input -------------------------------------------


def modulus_squared(x):
    z = x[0] + 1j * x[1]
    return np.abs(z) ** 2


def phase_power(x):
    return np.real(np.exp(1j * x) * np.conj(np.exp(1j * x))).sum()


def test_complex_intermediates_of_a_literal_are_differentiated_to_first_order():
    """Formerly refused: np.abs, np.conj of complex values have rules of their own now
    (norm_complex); second derivatives through them are refused by name."""
    x = np.array([0.3, 0.4])
    for fun in (modulus_squared, phase_power):
        _check(fun, (x,), second=False)
    _close(s2s_ad.grad(modulus_squared)(x), 2 * x)
    with pytest.raises(TransformError, match="second derivatives through complex values"):
        s2s_ad.hvp(phase_power)(x, np.ones(2))


def scaled_by_a_complex_global(x):
    return np.sum(np.abs(x * _PHASES))


_PHASES = np.exp(1j * np.array([0.5, 1.0]))


def test_a_complex_value_the_transform_cannot_see_is_still_refused_not_truncated():
    with pytest.raises(TypeError, match="complex intermediate values"):
        s2s_ad.grad(scaled_by_a_complex_global)(np.array([0.3, 0.4]))


def _smooth_hinge(v):
    """A scalar piecewise activation, written for one float."""
    if v > 0.0:
        return v * v
    return 0.1 * v


_smooth_hinge_all = np.vectorize(_smooth_hinge)


def _vectorized_loss(w, X):
    return np.sum(_smooth_hinge_all(X @ w))


def _looped_loss(w, X):
    z = X @ w
    total = 0.0
    for v in z:
        total += _smooth_hinge(v)
    return total


@pytest.mark.parametrize("how", ["grad", "jvp", "hvp"])
def test_np_vectorize_of_a_differentiated_value_is_refused_by_name(how):
    """NumPy calls the function entry by entry on Python objects: refused, never a
    gradient through NumPy's machinery; the loop the hint suggests is differentiated."""
    rng = np.random.default_rng(3)
    w, X = rng.normal(size=3), rng.normal(size=(5, 3))
    with pytest.raises(TransformError, match=r"np\.vectorize\(_smooth_hinge\)") as refused:
        if how == "grad":
            s2s_ad.grad(_vectorized_loss)(w, X)
        elif how == "jvp":
            s2s_ad.jvp(_vectorized_loss, (w, X), (np.ones(3), np.zeros((5, 3))))
        else:
            s2s_ad.hvp(_vectorized_loss)(w, X, np.ones(3))
    # located at the user's line, in every mode (raised when the call runs)
    assert refused.value.filename == __file__
    assert refused.value.line_text.strip() == "return np.sum(_smooth_hinge_all(X @ w))"
    got = s2s_ad.grad(_looped_loss)(w, X)
    want = numerical_grad(_looped_loss, (w, X))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
