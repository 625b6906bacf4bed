"""What autograd's examples do beyond one gradient of one loss, written as a user would with
NumPy and s2s_ad, checked against autograd running the same source (and finite
differences): derivatives of tanh to the sixth order by nested ``elementwise_grad``, Newton's
method on a negative-binomial profile likelihood whose score is itself a ``grad``, the
E-step of EM for an HMM as the gradient of its log partition function, and step functions
returned as ``lambda`` by a factory. Also the refusals these programs met, each a clean
``TransformError`` at the user's line.

The programs themselves (GPs, smoke simulation, GAN, ...) are in ``tests/programs_real``.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.scipy.special import gammaln as agammaln
from numpy.lib.stride_tricks import as_strided, sliding_window_view
from scipy.special import gammaln

import s2s_ad
from s2s_ad import TransformError
from tests.fd import numerical_grad
from tests.user_checks import autograd_twin, close

# --- tanh and its derivatives, as autograd's tanh example plots them ---------------------


def tanh(x):
    y = np.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


def test_nested_elementwise_grads_of_tanh_agree_with_autograd():
    x = np.linspace(-3.0, 3.0, 7)
    ours, theirs = tanh, autograd_twin(tanh)
    for order in range(1, 5):
        ours = s2s_ad.elementwise_grad(ours)
        theirs = autograd.elementwise_grad(theirs)
        close(ours(x), theirs(x), 1e-8 * 10**order)
    # the same derivatives through the user's own sums (a closure calling the gradient)
    f = tanh
    for _ in range(5):
        f = _grad_of_sum(f)
    close(f(np.array([0.0, 0.5])), [16.0, autograd_fifth(0.5)], 1e-6)


def _grad_of_sum(g):
    def total(x):
        return np.sum(g(x))

    return s2s_ad.grad(total)


def test_fifth_nested_elementwise_grad_of_tanh():
    fifth = tanh
    for _ in range(5):
        fifth = s2s_ad.elementwise_grad(fifth)
    # the fifth derivative of tanh at 0 is 5! * 2/15 = 16
    close(fifth(np.array([0.0, 0.5])), [16.0, autograd_fifth(0.5)], 1e-8)


def autograd_fifth(x):
    f = autograd_twin(tanh)
    for _ in range(5):
        f = autograd.elementwise_grad(f)
    return float(f(np.array([x]))[0])


# --- Newton's method on the negative binomial's profile likelihood -----------------------


def negbin_loglike(r, p, x):
    return gammaln(r + x) - gammaln(r) - gammaln(x + 1) + x * np.log(p) + r * np.log(1 - p)


def make_profile_score(x, grad):
    """d/dr of the log likelihood at the p that maximises it for this r."""
    loglike = lambda r, p: np.sum(negbin_loglike(r, p, x))  # noqa: E731
    p_of = lambda r: np.sum(x) / np.sum(r + x)  # noqa: E731
    return lambda r: grad(loglike)(r, p_of(r))


def newton(f, fprime, x0, steps=8):
    x = x0
    for _ in range(steps):
        x = x - f(x) / fprime(x)
    return x


COUNTS = np.array([3.0, 7.0, 1.0, 4.0, 9.0, 2.0, 5.0, 12.0, 0.0, 6.0])


def test_newton_on_a_score_that_is_itself_a_gradient():
    score = make_profile_score(COUNTS, s2s_ad.grad)
    curvature = s2s_ad.grad(score)
    twin = {**negbin_loglike.__globals__, "np": anp, "gammaln": agammaln}
    their_loglike = type(negbin_loglike)(negbin_loglike.__code__, twin)

    def their_score(r):
        p = anp.sum(COUNTS) / anp.sum(r + COUNTS)
        return autograd.grad(lambda r, p: anp.sum(their_loglike(r, p, COUNTS)))(r, p)

    for r in (1.5, 4.0, 9.0):
        close(score(r), their_score(r), 1e-10)
        close(curvature(r), autograd.grad(their_score)(r), 1e-8)
        close(curvature(r), numerical_grad(score, (r,), 0), 1e-5)
    r_hat = newton(score, curvature, 2.0)
    assert abs(score(r_hat)) < 1e-8


# --- EM for an HMM: expected counts as the gradient of the log partition -----------------


def logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def log_partition(natural_params, data):
    log_pi, log_A, log_B = natural_params
    total = 0.0
    for seq in data:
        log_alpha = log_pi + log_B[:, seq[0]]
        for y in seq[1:]:
            log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]
        total = total + logsumexp(log_alpha)
    return total


def normalize(a):
    return a / a.sum(-1, keepdims=True)


def em_step(params, data, partition_value_and_grad):
    natural = [np.log(p) for p in params]
    loglike, expected = partition_value_and_grad(natural, data)
    return loglike, [normalize(e) for e in expected]


def test_em_steps_take_expected_counts_from_the_gradient():
    rs = np.random.RandomState(3)
    params = [normalize(rs.rand(3)), normalize(rs.rand(3, 3)), normalize(rs.rand(3, 4))]
    data = [rs.randint(0, 4, size=n) for n in (6, 4, 7)]
    theirs = [p.copy() for p in params]
    their_partition = autograd_twin(log_partition)
    their_partition.__globals__["logsumexp"] = autograd_twin(logsumexp)
    likelihoods = []
    for _ in range(4):
        loglike, params = em_step(params, data, s2s_ad.value_and_grad(log_partition))
        their_loglike, theirs = em_step(theirs, data, autograd.value_and_grad(their_partition))
        close(loglike, their_loglike, 1e-10)
        close(params, theirs, 1e-10)
        likelihoods.append(float(loglike))
    assert np.all(np.diff(likelihoods) > -1e-10), "EM never lowers the likelihood"


# --- step functions a factory returns as lambdas -----------------------------------------


def newton_sqrt_iter(a):
    return lambda x: 0.5 * (x + a / x)


def shifted_decay(rate, shift=0.5):
    offset = shift * rate
    return lambda x, k=2.0: np.exp(-rate * x) * k + offset


def sqrt_by_newton(a):
    step = newton_sqrt_iter(a)
    x = 10.0
    for _ in range(12):
        x = step(x)
    return x


def decay_energy(rate, xs):
    fast = shifted_decay(rate)
    slow = shifted_decay(rate / 4, shift=-1.0)
    return np.sum(fast(xs) ** 2 + slow(xs, k=3.0))


def test_a_lambda_returned_by_a_factory_is_differentiated_in_both_modes_and_second_order():
    for a in (2.0, 0.3):
        assert s2s_ad.grad(sqrt_by_newton)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-10)
        assert s2s_ad.grad(s2s_ad.grad(sqrt_by_newton))(a) == pytest.approx(
            -0.25 * a**-1.5, rel=1e-8
        )
    xs = np.linspace(0.0, 2.0, 5)
    s2s_ad.check_grads(decay_energy, (0.7, xs), order=2, modes=("rev", "fwd"))
    close(s2s_ad.grad(decay_energy)(0.7, xs), autograd.grad(autograd_twin(decay_energy))(0.7, xs))


def fixed_point(make_step, a, x0):
    step = make_step(a)
    x = x0
    for _ in range(12):
        x = step(x)
    return x


def sqrt_through_fixed_point(a):
    return fixed_point(newton_sqrt_iter, a, 10.0)


def test_a_factory_passed_as_an_argument_is_differentiated():
    # was refused: fixed_point is inlined at the call, make_step(a) is the factory call
    for a in (2.0, 0.3):
        assert s2s_ad.grad(sqrt_through_fixed_point)(a) == pytest.approx(0.5 / np.sqrt(a))
    s2s_ad.check_grads(sqrt_through_fixed_point, (2.0,), order=2, modes=("rev", "fwd"))


def fixed_point_named(make_step, a, x0):
    step = make_step(a)
    x = x0
    for _ in range(12):
        x = step(x)
    print(make_step.__name__)  # the factory used as a value too: not inlined
    return x


def sqrt_through_fixed_point_named(a):
    return fixed_point_named(newton_sqrt_iter, a, 10.0)


def test_a_factory_passed_as_an_argument_and_used_as_a_value_is_refused_at_the_users_line():
    with pytest.raises(TransformError) as info:
        s2s_ad.grad(sqrt_through_fixed_point_named)(2.0)
    err = info.value
    assert err.filename == __file__
    assert "lambda x: 0.5 * (x + a / x)" in err.line_text


# --- stride tricks ----------------------------------------------------------------------


def conv_by_windows(image, kernel):
    windows = sliding_window_view(image, kernel.shape)
    return np.sum(np.tanh(np.einsum("ijkl,kl->ij", windows, kernel)) ** 2)


def pooled_rows(x):
    return np.sum(np.max(sliding_window_view(x, 3, axis=1), axis=-1) ** 2)


def test_sliding_window_view_of_a_differentiated_image_second_order_and_jacobians():
    rs = np.random.RandomState(0)
    image, kernel = rs.randn(5, 6), rs.randn(2, 3)
    s2s_ad.check_grads(conv_by_windows, (image, kernel), order=2, modes=("rev", "fwd"))
    x = rs.randn(3, 5)
    close(s2s_ad.grad(pooled_rows)(x), numerical_grad(pooled_rows, (x,), 0), 1e-6)

    def windows(v):
        return sliding_window_view(v, (2, 2))

    close(s2s_ad.jacobian(windows)(image), s2s_ad.jacobian(windows, mode="fwd")(image), 1e-12)


def strided_products(x):
    n, step = x.shape[0] - 2, x.strides[0]
    return np.sum(as_strided(x, shape=(n, 3), strides=(step, step)).prod(axis=1))


def test_as_strided_is_refused_at_the_users_line_in_both_modes():
    x = np.linspace(0.5, 2.0, 6)
    for run in (
        lambda: s2s_ad.grad(strided_products)(x),
        lambda: s2s_ad.jvp(strided_products, (x,), (np.ones(6),)),
    ):
        with pytest.raises(TransformError) as info:
            run()
        assert info.value.filename == __file__
        assert "as_strided(x, shape=(n, 3)" in info.value.line_text


# --- a callback whose result is dropped -------------------------------------------------


def simulate(x, steps, on_step=None):
    for t in range(steps):
        if on_step:
            on_step(t, x)
        x = np.tanh(x) * 1.1
    return np.sum(x**2)


def simulate_kept(x, steps, on_step=None):
    for t in range(steps):
        if on_step:
            _ = on_step(t, x)
        x = np.tanh(x) * 1.1
    return np.sum(x**2)


def overwrite_first(t, v):
    v[0] = 0.0


def test_a_callback_of_a_differentiated_value_runs_when_its_result_is_kept():
    x = np.array([0.3, -0.2, 0.9])
    # its result dropped: a call for its effect, differentiated with object state
    # (s2s_ad/object_state.py); a callback that writes into its argument is refused
    close(s2s_ad.grad(simulate)(x, 3), numerical_grad(simulate, (x, 3), 0), 1e-6)
    with pytest.raises(TransformError, match="writes into its differentiated argument 'v'"):
        s2s_ad.grad(simulate)(x.copy(), 3, overwrite_first)
    seen = []
    got = s2s_ad.grad(simulate_kept)(x, 3, lambda t, v: seen.append(float(np.sum(v))))
    close(got, numerical_grad(simulate_kept, (x, 3), 0), 1e-6)
    close(seen, [np.sum(x), np.sum(np.tanh(x) * 1.1), np.sum(np.tanh(np.tanh(x) * 1.1) * 1.1)])


# --- np.where whose unchosen branch holds NaN or infinities ------------------------------


def nan_masked_moments(x):
    """Entries below a threshold marked missing, then NaN-aware statistics."""
    w = np.where(x > 0.5, x, np.nan)
    return np.nanmean(w**2) + np.nanmax(w) + np.nanstd(w)


def finite_part(x):
    """``log`` kept where its argument is in its domain (the double ``where`` that keeps
    the unchosen branch finite: with ``y = np.log(x - 0.5)`` computed everywhere, its
    NaN reaches the gradient through ``y**2``'s derivative, in JAX and autograd too)."""
    inside = x > 0.5
    y = np.log(np.where(inside, x - 0.5, 1.0))
    return np.sum(np.where(inside, y**2, 0.0))


def inverted_mask(x):
    w = np.where(x < 0.5, np.inf, 2.0 * x)
    return np.sum(1.0 / (1.0 + w**2))


@pytest.mark.parametrize("fun", [nan_masked_moments, finite_part, inverted_mask])
def test_where_gives_no_gradient_through_the_branch_not_chosen(fun):
    """The unchosen branch gets zero, never ``0 * nan``: as finite differences, and JAX's
    select, give. (Forward mode carries ``0 * inf`` on from ``w**2`` of the infinite
    entry before any select, as JAX's ``jvp`` does: only the reverse checks apply there.)"""
    x = np.array([0.7, 1.3, 0.4, 0.9, 0.2])
    want = numerical_grad(fun, (x,), 0)
    assert np.all(np.isfinite(want))
    close(s2s_ad.grad(fun)(x), want, 1e-6)
    v = np.array([0.3, -1.1, 0.8, 0.5, -0.4])
    h = 1e-5
    hv = (s2s_ad.grad(fun)(x + h * v) - s2s_ad.grad(fun)(x - h * v)) / (2 * h)
    close(s2s_ad.vjp(fun, x)[1](1.0), (want,), 1e-6)
    if fun is inverted_mask:
        return
    close(s2s_ad.hvp(fun)(x, v), hv, 1e-5)
    value, tangent = s2s_ad.jvp(fun, (x,), (v,))
    close(value, fun(x))
    close(tangent, want @ v, 1e-6)
    close(s2s_ad.jacobian(fun, mode="fwd")(x), want, 1e-6)
