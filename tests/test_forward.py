"""Forward mode: ``jvp`` against ``vjp`` over the whole corpus, errors, ``jacobian``."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import collect
from fd import positions

import s2s_ad
from s2s_ad.transforms import _jvp_wrt

CASES = collect()
# forward mode is refused (TransformError) or not meaningful for these
SKIP = {
    "calls.callee_varargs",
    "calls.call_with_star_args",
    "calls.call_with_double_star_kwargs",
}


def _random_like(x, rng):
    if isinstance(x, (tuple, list)):
        return type(x)(_random_like(v, rng) for v in x)
    if isinstance(x, dict):
        return {k: _random_like(v, rng) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape).astype(x.dtype)
    return float(rng.standard_normal())


def _dot(a, b):
    if isinstance(a, (tuple, list)):
        return sum(_dot(u, v) for u, v in zip(a, b))
    if isinstance(a, dict):
        return sum(_dot(a[k], b[k]) for k in a)
    return float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))


def _cases():
    out = []
    for c in CASES:
        if c.label in SKIP:
            continue
        point = next(iter(c.points))
        out.append(pytest.param(c, point, id=f"{c.label}[{point}]"))
    return out


@pytest.mark.parametrize(("case", "point"), _cases())
def test_jvp_agrees_with_vjp(case, point):
    args = case.args(point)
    where, single = positions(case.fun, case.wrt)
    rng = np.random.default_rng(7)
    directions = [_random_like(args[p], rng) for p in where]
    _, tangent = _jvp_wrt(case.fun, args, where, directions)
    grads = s2s_ad.grad(case.fun, case.wrt)(*case.args(point))
    grads = (grads,) if single else grads
    want = sum(_dot(g, d) for g, d in zip(grads, directions))
    tol = 1e-3 if any(getattr(a, "dtype", None) == np.float32 for a in args) else 1e-7
    assert float(np.sum(tangent)) == pytest.approx(want, rel=tol * 10, abs=tol)


def poly(x, y):
    return x * x * y + np.sin(y)


def test_jvp_tangent_shape_mismatch_names_the_argument():
    with pytest.raises(ValueError, match="'y'.*shape"):
        s2s_ad.jvp(poly, (np.ones(3), np.ones(3)), (np.ones(3), np.ones(2)))


def test_jvp_tangent_dtype_mismatch():
    with pytest.raises(ValueError, match="dtype"):
        s2s_ad.jvp(poly, (np.ones(2), np.ones(2)), (np.ones(2), np.array(["a", "b"])))


def test_jvp_counts_must_match():
    with pytest.raises(ValueError, match="2 primals but 1"):
        s2s_ad.jvp(poly, (1.0, 2.0), (1.0,))


def vector_map(x, w):
    h = np.tanh(w @ x)
    return np.concatenate([h * x[0], np.cumsum(h)])


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_matches_finite_differences(mode):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(3), rng.standard_normal((4, 3))
    jac = s2s_ad.jacobian(vector_map, 0, mode=mode)(x, w)
    assert jac.shape == (8, 3)
    eps = 1e-6
    fd = np.stack(
        [(vector_map(x + eps * e, w) - vector_map(x - eps * e, w)) / (2 * eps) for e in np.eye(3)],
        axis=-1,
    )
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-8)


def test_jacobian_of_matrix_argument_has_out_by_in_shape():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(3), rng.standard_normal((4, 3))
    jac_rev = s2s_ad.jacobian(vector_map, "w")(x, w)
    jac_fwd = s2s_ad.jacobian(vector_map, "w", mode="fwd")(x, w)
    assert jac_rev.shape == (8, 4, 3)
    np.testing.assert_allclose(jac_rev, jac_fwd, rtol=1e-10, atol=1e-12)


def test_elementwise_grad():
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(
        s2s_ad.elementwise_grad(lambda v: np.tanh(v) * 2.0)(x), 2.0 * (1 - np.tanh(x) ** 2)
    )


def branchy(x, y):
    z = x * y + np.sin(x)
    for _ in range(3):
        if np.sum(z) > 0:
            z = z * 0.5 + y
        else:
            z = z - x
    return np.tanh(z) * y


def test_check_grads_both_modes():
    rng = np.random.default_rng(2)
    s2s_ad.check_grads(
        branchy, [rng.standard_normal(3), rng.standard_normal(3)], modes=("fwd", "rev")
    )


def test_generated_tangent_code_is_readable():
    from s2s_ad.api import compile_forward

    text = compile_forward(poly, ("x",)).text
    assert "def poly_jvp(x, y, *, x_dot=0.0):" in text
    assert "y_dot" not in text
    assert "return ans, ans_dot" in text


def test_defjvp_takes_precedence_in_forward_mode():
    def softplus(x):
        return np.log(1.0 + np.exp(x))

    def uses(x):
        return softplus(x) * 2.0

    s2s_ad.defjvp(softplus, lambda ts, x: ts[0] * 100.0)
    try:
        _, tangent = s2s_ad.jvp(uses, (1.0,), (1.0,))
        assert tangent == pytest.approx(200.0)
    finally:
        from s2s_ad.api import clear_cache
        from s2s_ad.rules import REGISTRY

        REGISTRY.drop_custom(softplus, jvp=True)
        clear_cache()


def test_custom_gradient_in_forward_mode_uses_its_vjp():
    @s2s_ad.custom_gradient
    def log1pexp(x):
        e = np.exp(x)

        def grad_fn(upstream):
            return upstream * (1 - 1 / (1 + e))

        return np.log(1 + e), grad_fn

    def f(x):
        return log1pexp(x)

    with np.errstate(over="ignore"):
        assert s2s_ad.jvp(f, (100.0,), (1.0,))[1] == pytest.approx(1.0)


def test_tangent_of_a_broadcast_operand_has_the_value_shape():
    jac = s2s_ad.jacobian(lambda x, z: np.sum(x + z), 0, mode="fwd")(1.5, np.arange(3.0))
    assert jac == pytest.approx(3.0)
