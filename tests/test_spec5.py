"""What the fifth round of random user programs left: an internal error in grad-of-grad and
SPEC constructs (star-calls of local functions, closures from module factories, decorated
local functions), written as the user code that found them."""

from __future__ import annotations

import functools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad


def kalman_2d(ys, F, Q, R):
    m = np.zeros(2)
    P = np.eye(2)
    H = np.array([[1.0, 0.0]])
    ll = 0.0
    for t in range(len(ys)):
        m = F @ m
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        v = ys[t] - H @ m
        K = P @ H.T / S[0, 0]
        m = m + K[:, 0] * v[0]
        P = P - K @ H @ P
        ll = ll - 0.5 * (v[0] ** 2 / S[0, 0] + np.log(S[0, 0]))
    return ll


def kalman_2d_autograd(ys, F, Q, R):
    m = anp.zeros(2)
    P = anp.eye(2)
    H = anp.array([[1.0, 0.0]])
    ll = 0.0
    for t in range(len(ys)):
        m = F @ m
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        v = ys[t] - H @ m
        K = P @ H.T / S[0, 0]
        m = m + K[:, 0] * v[0]
        P = P - K @ H @ P
        ll = ll - 0.5 * (v[0] ** 2 / S[0, 0] + anp.log(S[0, 0]))
    return ll


def smoothed_loss(x, F0):
    """The caller reuses ``Q`` for a 4 x 4 array after the filter: the filter's ``Q`` then
    counts as active, its adjoint carries ``Q_bar`` and zero cotangents that start as
    scalars (``m_bar``, ``P_bar``) and are broadcast into ``K[:, 0]`` and a 2 x 2 product."""
    h = x * 1.0
    F = np.eye(2) + 0.1 * F0
    Q = 0.1 * np.eye(2)
    R = np.array([[0.5]])
    s = 0.1 * kalman_2d(h, F, Q, R)
    Q = np.outer(h, x)
    h = h + Q @ h
    return s + np.sum(h**2)


def smoothed_loss_autograd(x, F0):
    h = x * 1.0
    F = anp.eye(2) + 0.1 * F0
    Q = 0.1 * anp.eye(2)
    R = anp.array([[0.5]])
    s = 0.1 * kalman_2d_autograd(h, F, Q, R)
    Q = anp.outer(h, x)
    h = h + Q @ h
    return s + anp.sum(h**2)


def test_grad_of_grad_through_a_kalman_filter_whose_caller_reuses_q():
    rng = np.random.default_rng(0)
    x, F0, v = rng.normal(size=4), rng.normal(size=(2, 2)), np.ones(4)
    grad = s2s_ad.grad(smoothed_loss)

    def directional(u):
        return np.dot(grad(u, F0), v)

    want = autograd.grad(lambda u: anp.dot(autograd.grad(smoothed_loss_autograd)(u, F0), v))(x)
    np.testing.assert_allclose(s2s_ad.grad(directional)(x), want, rtol=1e-9)
    s2s_ad.check_grads(smoothed_loss, (x, F0), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda u: smoothed_loss(u, F0), (x,), order=2, modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda Fm: kalman_2d(x, Fm, 0.2 * np.eye(2), np.eye(1)), (F0,), order=2)


def _mlp(rng, n=3):
    return [(0.5 * rng.normal(size=(n, n)), 0.3 * rng.normal(size=n)) for _ in range(2)]


def test_local_function_with_star_args_and_keyword_weights():
    def loss(x, net):
        def combine(*parts, **weights):
            tot = 0.0
            for k, part in enumerate(parts):
                tot = tot + weights.get(f"w{k}", 1.0) * part
            return tot

        (W1, b1), (W2, b2) = net
        h = np.tanh(W1 @ x + b1)
        h = combine(h, np.sin(h), x, w0=0.5, w2=0.1)
        return np.sum((W2 @ h + b2) ** 2)

    def oracle(x, net):
        (W1, b1), (W2, b2) = net
        h = anp.tanh(W1 @ x + b1)
        h = 0.5 * h + anp.sin(h) + 0.1 * x
        return anp.sum((W2 @ h + b2) ** 2)

    rng = np.random.default_rng(2)
    x, net = rng.normal(size=3), _mlp(rng)
    gx, gnet = s2s_ad.grad(loss, (0, 1))(x, net)
    wx, wnet = autograd.grad(oracle, (0, 1))(x, net)
    np.testing.assert_allclose(gx, wx, rtol=1e-10)
    for got, want in zip(gnet, wnet):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    s2s_ad.check_grads(loss, (x, net), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda u: loss(u, net), (x,), order=2, modes=("rev", "fwd"))


def test_local_function_forwarding_its_keywords_and_a_star_call():
    def loss(x, W, gain):
        def act(u, gain=1.0, bias=0.0):
            return np.tanh(gain * u + bias)

        def apply(u, **kw):
            return act(u, **kw)

        def total(*terms):
            out = 0.0
            for t in terms:
                out = out + np.sum(t**2)
            return out

        h = W @ x
        parts = [apply(h, gain=gain) + apply(h), apply(h, bias=0.1 * x)]
        return total(*parts) + total(x, 2.0 * h)

    def oracle(x, W, gain):
        h = W @ x
        a = anp.tanh(gain * h) + anp.tanh(h)
        b = anp.tanh(h + 0.1 * x)
        return anp.sum(a**2) + anp.sum(b**2) + anp.sum(x**2) + anp.sum((2.0 * h) ** 2)

    rng = np.random.default_rng(3)
    x, W, gain = rng.normal(size=3), 0.5 * rng.normal(size=(3, 3)), 0.7
    got = s2s_ad.grad(loss, (0, 1, 2))(x, W, gain)
    want = autograd.grad(oracle, (0, 1, 2))(x, W, gain)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    s2s_ad.check_grads(loss, (x, W, gain), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda u, g: loss(u, W, g), (x, gain), order=2, modes=("rev", "fwd"))


def test_layer_with_extra_inputs_keyword_only_scale_and_options():
    def loss(x, W):
        def layer(u, M, *extra, scale=1.0, **opts):
            z = M @ u * scale
            for e in extra:
                z = z + e
            if opts.get("act", "tanh") == "tanh":
                z = np.tanh(z)
            return z

        h = layer(x, W, 0.1 * x, x**2, scale=0.5, act="tanh")
        h = layer(h, W, act="linear")
        return np.sum(h**2)

    def oracle(x, W):
        h = anp.tanh(W @ x * 0.5 + 0.1 * x + x**2)
        return anp.sum((W @ h) ** 2)

    rng = np.random.default_rng(4)
    x, W = rng.normal(size=3), 0.5 * rng.normal(size=(3, 3))
    got = s2s_ad.grad(loss, (0, 1))(x, W)
    want = autograd.grad(oracle, (0, 1))(x, W)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    s2s_ad.check_grads(loss, (x, W), modes=("rev", "fwd"), order=2)


def test_keywords_forwarded_after_the_dict_is_written_are_refused():
    def loss(x):
        def act(u, gain=1.0):
            return np.tanh(gain * u)

        def apply(u, **kw):
            kw["gain"] = 2.0
            return act(u, **kw)

        return np.sum(apply(x, gain=0.5))

    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(loss)(np.ones(3))
    message = str(info.value)
    assert "starred arguments" in message and "return act(u, **kw)" in message, message


def make_act(k):
    def act(u):
        return np.tanh(k * u)

    return act


def test_factory_closure_called_twice_in_one_statement():
    """Was a wrong gradient: the second ``act(x)`` reused ``k * u`` of ``act(W @ x)``
    (the inlined body's expressions shared the caller's per-statement memo)."""

    def loss(x, W):
        act = make_act(0.5)
        return np.sum(act(W @ x) + act(x))

    def oracle(x, W):
        return anp.sum(anp.tanh(0.5 * (W @ x)) + anp.tanh(0.5 * x))

    rng = np.random.default_rng(5)
    x, W = rng.normal(size=3), 0.5 * rng.normal(size=(3, 3))
    got = s2s_ad.grad(loss, (0, 1))(x, W)
    want = autograd.grad(oracle, (0, 1))(x, W)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    s2s_ad.check_grads(loss, (x, W), modes=("rev", "fwd"), order=2)


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def scaled_by(k):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(u, *args, **kwargs):
            return k * fn(u, *args, **kwargs)

        return wrapper

    return deco


def test_local_functions_decorated_by_module_decorators():
    def loss(x, W, c):
        @traced
        def energy(u, w):
            return np.sum(w * u**2)

        @scaled_by(0.5)
        @traced
        def smooth(u, c=1.0):
            return np.log(np.cosh(c * u))

        h = np.tanh(W @ x)
        return 0.1 * energy(h, W[1]) + np.sum(smooth(h, c=c)) + np.sum(smooth(x))

    def oracle(x, W, c):
        h = anp.tanh(W @ x)
        smooth = 0.5 * anp.log(anp.cosh(c * h)) + 0.5 * anp.log(anp.cosh(x))
        return 0.1 * anp.sum(W[1] * h**2) + anp.sum(smooth)

    rng = np.random.default_rng(6)
    x, W, c = rng.normal(size=3), 0.5 * rng.normal(size=(3, 3)), 0.7
    got = s2s_ad.grad(loss, (0, 1, 2))(x, W, c)
    want = autograd.grad(oracle, (0, 1, 2))(x, W, c)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    s2s_ad.check_grads(loss, (x, W, c), modes=("rev", "fwd"), order=2)


def test_layer_decorated_by_a_local_wraps_decorator():
    def loss(x, net):
        def logged(fn):
            @functools.wraps(fn)
            def inner(*args, **kwargs):
                return fn(*args, **kwargs)

            return inner

        @logged
        def layer(u, W, b=0.0):
            return np.tanh(W @ u + b)

        h = x
        for W, b in net:
            h = layer(h, W, b=b)
        return np.sum(h**2) + np.sum(layer(x, net[0][0]))

    def oracle(x, net):
        h = x
        for W, b in net:
            h = anp.tanh(W @ h + b)
        return anp.sum(h**2) + anp.sum(anp.tanh(net[0][0] @ x))

    rng = np.random.default_rng(7)
    x, net = rng.normal(size=3), _mlp(rng)
    gx, gnet = s2s_ad.grad(loss, (0, 1))(x, net)
    wx, wnet = autograd.grad(oracle, (0, 1))(x, net)
    np.testing.assert_allclose(gx, wx, rtol=1e-10)
    for got, want in zip(gnet, wnet):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    s2s_ad.check_grads(loss, (x, net), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda u: loss(u, net), (x,), order=2)


def counted(fn):
    calls = []

    def wrapper(*args):
        calls.append(1)
        return fn(*args)

    return wrapper


def test_a_decorator_that_keeps_state_is_refused_with_the_line():
    def loss(x):
        @counted
        def sq(u):
            return u**2

        return np.sum(sq(x))

    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(loss)(np.ones(3))
    message = str(info.value)
    assert "a decorated local function" in message and "def sq(u):" in message, message


def make_loss(target, weight=1.0):
    def loss(u):
        return weight * np.sum((u - target) ** 2)

    return loss


def make_leaky(a, shift):
    return lambda u: np.where(u > 0, u, a * u) + 0.1 * np.tanh(u - shift)


def test_closures_returned_by_module_factories_called_at_once_and_later():
    def objective(x, W, shift):
        act = make_leaky(0.1, shift)
        h = act(W @ x)
        fit = make_loss(x, weight=0.5)
        return fit(h) + make_loss(W[0])(h) + np.sum(act(h) ** 2)

    def oracle(x, W, shift):
        def act(u):
            return anp.where(u > 0, u, 0.1 * u) + 0.1 * anp.tanh(u - shift)

        h = act(W @ x)
        return 0.5 * anp.sum((h - x) ** 2) + anp.sum((h - W[0]) ** 2) + anp.sum(act(h) ** 2)

    rng = np.random.default_rng(8)
    x, W, shift = rng.normal(size=3), 0.5 * rng.normal(size=(3, 3)), rng.normal(size=3)
    got = s2s_ad.grad(objective, (0, 1, 2))(x, W, shift)
    want = autograd.grad(oracle, (0, 1, 2))(x, W, shift)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    s2s_ad.check_grads(objective, (x, W, shift), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda u: objective(u, W, shift), (x,), order=2)


def test_np_piecewise_with_lambdas_a_constant_and_an_otherwise_function():
    """Each function sees only its region, as NumPy's: the sqrt of the negative region
    never sees a positive entry (no nan in the gradient)."""

    def loss(x, W):
        h = W @ x
        y = np.piecewise(
            h, [h < -0.5, h > 0.5], [lambda v: -np.sqrt(-v), 0.25, lambda v: 0.3 * np.tanh(v)]
        )
        s = np.sum(h)
        z = np.piecewise(s, [s < 0.0], [lambda v: v**2, np.sin])
        return np.sum(y**2) + np.sum(np.piecewise(x, [x < 0], [np.sin, np.cos])) + z

    def oracle(x, W):
        h = W @ x
        y = anp.where(h < -0.5, -anp.sqrt(anp.abs(h)), anp.where(h > 0.5, 0.25, 0.3 * anp.tanh(h)))
        s = anp.sum(h)
        z = s**2 if s < 0.0 else anp.sin(s)
        return anp.sum(y**2) + anp.sum(anp.where(x < 0, anp.sin(x), anp.cos(x))) + z

    rng = np.random.default_rng(9)
    x, W = rng.normal(size=4), rng.normal(size=(4, 4))
    got = s2s_ad.grad(loss, (0, 1))(x, W)
    want = autograd.grad(oracle, (0, 1))(x, W)
    for g, w in zip(got, want):
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, w, rtol=1e-10)
    s2s_ad.check_grads(loss, (x, W), modes=("rev", "fwd"), order=2)
