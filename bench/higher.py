"""Second order and Jacobians: Hessian, Hessian-vector product, forward Jacobian.

Prints, measured side by side in interleaved rounds (``bench/timing.py``: each round runs
a batch of every implementation in turn; the ratio to the hand-written version is taken
round by round and its median reported), the time of a hand-written Hessian (and its
product with a vector), of ``s2s_ad.hessian`` (one batched run of the tangent program
of the generated gradient) and ``s2s_ad.hvp``, and of ``jax.hessian`` /
``autograd.hessian`` when installed; then a forward Jacobian of a map R^n -> R^m
(``s2s_ad.jacobian(f, mode='fwd')``) against ``n`` hand-written JVPs and a hand-written
Jacobian; then the reverse Jacobian of the same map (``s2s_ad.jacobian(f)``: one forward
sweep and one batched backward sweep) against ``m`` hand-written VJPs, and against
``s2s_ad``'s one pullback per output entry. ``--quick`` for CI smoke runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# the checkout this script lives in, not whichever s2s_ad is installed
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

N, M = 100, 50
A = np.random.default_rng(0).standard_normal((M, N)) / np.sqrt(N)


def objective(x):
    """A smooth 100-d scalar function: separable part plus a dense tanh layer."""
    return np.sum(np.sin(x) * x**2) + np.sum(np.tanh(A @ x))


def hessian_by_hand(x: np.ndarray) -> np.ndarray:
    """Analytic Hessian of :func:`objective`."""
    s, c = np.sin(x), np.cos(x)
    diag = 2 * s + 4 * x * c - x**2 * s
    t = np.tanh(A @ x)
    curvature = -2 * t * (1 - t**2)
    return np.diag(diag) + A.T @ (curvature[:, None] * A)


def hvp_by_hand(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    s, c = np.sin(x), np.cos(x)
    t = np.tanh(A @ x)
    return (2 * s + 4 * x * c - x**2 * s) * v + A.T @ (-2 * t * (1 - t**2) * (A @ v))


def vector_map(x):
    """A map R^100 -> R^50 for the forward Jacobian: a tanh layer times a slice of x."""
    return np.tanh(A @ x) * x[:M] + np.sin(x[:M])


def jvp_by_hand(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Hand-written JVP of :func:`vector_map`."""
    t = np.tanh(A @ x)
    return (1 - t**2) * (A @ v) * x[:M] + t * v[:M] + np.cos(x[:M]) * v[:M]


def jacobian_by_hand(x: np.ndarray) -> np.ndarray:
    """Hand-written Jacobian of :func:`vector_map` (M x N)."""
    t = np.tanh(A @ x)
    jac = ((1 - t**2) * x[:M])[:, None] * A
    jac[:, :M] += np.diag(t + np.cos(x[:M]))
    return jac


def vjp_by_hand(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Hand-written VJP of :func:`vector_map`."""
    t = np.tanh(A @ x)
    g = A.T @ (u * x[:M] * (1 - t**2))
    g[:M] += u * (t + np.cos(x[:M]))
    return g


def m_vjps_by_hand(x: np.ndarray) -> np.ndarray:
    """The Jacobian as ``M`` hand-written VJPs (the reverse-mode baseline)."""
    eye = np.eye(M)
    return np.stack([vjp_by_hand(x, eye[k]) for k in range(M)])


def n_jvps_by_hand(x: np.ndarray) -> np.ndarray:
    """The Jacobian as ``N`` hand-written JVPs (the forward-mode baseline)."""
    eye = np.eye(N)
    return np.stack([jvp_by_hand(x, eye[k]) for k in range(N)], axis=1)


def interleaved(
    calls: dict[str, Callable[[], Any]], settings: Any
) -> dict[str, tuple[float, list[float]]]:
    """name -> (best per-call seconds, per-round times), all timed in the same rounds."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import Timer, warm_up

    timers = {}
    for name, call in calls.items():
        timer = Timer(call)
        _, first = warm_up(call)
        timer.calibrate(first, settings)
        timers[name] = timer
    for _ in range(settings.rounds):
        for timer in timers.values():
            timer.run_batch()
    return {name: (t.best, t.samples) for name, t in timers.items()}


def peers() -> dict[str, tuple[Callable[..., Any], Callable[..., Any]]]:
    """name -> (hessian(x), hvp(x, v)) for the installed peer libraries."""
    out: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}
    try:
        import autograd
        import autograd.numpy as anp

        def f_ag(x):
            return anp.sum(anp.sin(x) * x**2) + anp.sum(anp.tanh(anp.dot(A, x)))

        h = autograd.hessian(f_ag)
        g = autograd.grad(f_ag)
        out["autograd"] = (h, lambda x, v: autograd.grad(lambda y: anp.dot(g(y), v))(x))
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        a = jnp.asarray(A)

        def f_jax(x):
            return jnp.sum(jnp.sin(x) * x**2) + jnp.sum(jnp.tanh(a @ x))

        hj = jax.jit(jax.hessian(f_jax))
        hv = jax.jit(lambda x, v: jax.jvp(jax.grad(f_jax), (x,), (v,))[1])
        out["jax.jit"] = (lambda x: np.asarray(hj(x)), lambda x, v: np.asarray(hv(x, v)))
    except ImportError:
        pass
    return out


def _ratio(samples: list[float], base: list[float]) -> float:
    """Median over rounds of the per-round ratio (noise hits both sides of a round alike)."""
    return float(np.median([a / b for a, b in zip(samples, base)]))


def _relative_error(got: Any, want: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(got) - want)) / np.max(np.abs(want)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats (CI smoke run)")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import FULL, QUICK

    settings = QUICK if args.quick else FULL
    import s2s_ad

    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(N), rng.standard_normal(N)
    reference = hessian_by_hand(x)
    s2s_hessian = s2s_ad.hessian(objective)
    s2s_hvp = s2s_ad.hvp(objective)
    impls = {"s2s_ad": (s2s_hessian, s2s_hvp), **({} if args.quick else peers())}
    notes: dict[str, str] = {}
    calls: dict[str, Callable[[], Any]] = {
        "hessian/hand-written": lambda: hessian_by_hand(x),
        "hvp/hand-written": lambda: hvp_by_hand(x, v),
    }
    for name, (hess, hvp) in impls.items():
        try:
            err = _relative_error(hess(x), reference)
            err_v = _relative_error(hvp(x, v), reference @ v)
        except Exception as exc:  # noqa: BLE001 (a failing peer is reported, not fatal)
            notes[f"hessian/{name}"] = f"failed: {str(exc).splitlines()[0][:60]}"
            continue
        notes[f"hessian/{name}"] = "WRONG" if err > 1e-8 else ""
        notes[f"hvp/{name}"] = "WRONG" if err_v > 1e-8 else ""
        calls[f"hessian/{name}"] = lambda h=hess: h(x)
        calls[f"hvp/{name}"] = lambda h=hvp: h(x, v)
    jac = s2s_ad.jacobian(vector_map, mode="fwd")
    jac_ref = jacobian_by_hand(x)
    notes["jacobian/s2s_ad fwd"] = "WRONG" if _relative_error(jac(x), jac_ref) > 1e-8 else ""
    assert _relative_error(n_jvps_by_hand(x), jac_ref) < 1e-12
    calls["jacobian/hand-written"] = lambda: jacobian_by_hand(x)
    calls[f"jacobian/{N} hand-written jvps"] = lambda: n_jvps_by_hand(x)
    calls["jacobian/s2s_ad fwd"] = lambda: jac(x)
    from s2s_ad.transforms import _jacobian_rows

    jac_rev = s2s_ad.jacobian(vector_map)
    notes["jacrev/s2s_ad rev"] = "WRONG" if _relative_error(jac_rev(x), jac_ref) > 1e-8 else ""
    per_entry = _jacobian_rows(vector_map, (x,), 0, x)
    notes["jacrev/s2s_ad per entry"] = "WRONG" if _relative_error(per_entry, jac_ref) > 1e-8 else ""
    assert _relative_error(m_vjps_by_hand(x), jac_ref) < 1e-12
    calls["jacrev/hand-written"] = lambda: jacobian_by_hand(x)
    calls[f"jacrev/{M} hand-written vjps"] = lambda: m_vjps_by_hand(x)
    calls["jacrev/s2s_ad rev"] = lambda: jac_rev(x)
    calls["jacrev/s2s_ad per entry"] = lambda: _jacobian_rows(vector_map, (x,), 0, x)
    times = interleaved(calls, settings)
    base_of = {
        "hessian": "hessian/hand-written",
        "hvp": "hvp/hand-written",
        "jacobian": f"jacobian/{N} hand-written jvps",
        "jacrev": f"jacrev/{M} hand-written vjps",
    }
    print(f"== second order: f: R^{N} -> R (sin(x) x^2 + tanh layer {M}x{N})")
    print(f"== jacobian: g: R^{N} -> R^{M} (tanh layer times x[:{M}] + sin(x[:{M}]))")
    print(f"  {'what':8} {'implementation':24} {'best':>10} {'vs base':>8}  note")
    for key in calls:
        what, name = key.split("/", 1)
        best, samples = times[key]
        ratio = _ratio(samples, times[base_of[what]][1])
        shown = f"{ratio:7.2f}" if ratio < 1 else f"{ratio:7.1f}"
        print(f"  {what:8} {name:24} {best * 1e6:8.1f}us {shown}x  {notes.get(key, '')}")
    for key, note in notes.items():
        if key not in calls:
            print(f"  {key.replace('/', ' '):33} {'-':>10} {'-':>8}  {note}")
    print("  (vs base: median over rounds of the per-round ratio to hessian/hvp hand-written")
    print(f"   and, for the jacobian, to {N} hand-written jvps; for jacrev, to {M} vjps)")
    if not args.quick:
        print("  (peers not installed are not listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
