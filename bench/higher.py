"""Second-order benchmark: Hessian-vector product and full Hessian of a 100-d function.

Prints, measured side by side in one run, the time of a hand-written Hessian (and its
product with a vector), of ``s2s_ad.hvp`` and ``s2s_ad.hessian`` (forward mode over the
generated gradient), and of ``jax.hessian`` / ``autograd.hessian`` / ``torch`` when they
are installed, with ratios to the hand-written version. ``--quick`` for CI smoke runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

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


def best_time(call: Callable[[], Any], repeats: int) -> float:
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats (CI smoke run)")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 20
    import s2s_ad

    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(N), rng.standard_normal(N)
    reference = hessian_by_hand(x)
    s2s_hessian = s2s_ad.hessian(objective)
    s2s_hvp = s2s_ad.hvp(objective)
    rows: list[tuple[str, str, float | None, str]] = []
    impls = {"s2s_ad": (s2s_hessian, s2s_hvp), **({} if args.quick else peers())}
    hand_h = best_time(lambda: hessian_by_hand(x), repeats)
    hand_v = best_time(lambda: hvp_by_hand(x, v), repeats)
    rows.append(("hessian", "hand-written", hand_h, ""))
    rows.append(("hvp", "hand-written", hand_v, ""))
    for name, (hess, hvp) in impls.items():
        try:
            err = np.max(np.abs(hess(x) - reference)) / np.max(np.abs(reference))
            note = "WRONG" if err > 1e-8 else ""
            rows.append(("hessian", name, best_time(lambda h=hess: h(x), repeats), note))
            err_v = np.max(np.abs(hvp(x, v) - reference @ v)) / np.max(np.abs(reference @ v))
            note_v = "WRONG" if err_v > 1e-8 else ""
            rows.append(("hvp", name, best_time(lambda h=hvp: h(x, v), repeats), note_v))
        except Exception as exc:  # noqa: BLE001 (a failing peer is reported, not fatal)
            rows.append(("hessian", name, None, f"failed: {str(exc).splitlines()[0][:60]}"))
    print(f"== second order: f: R^{N} -> R (sin(x) x^2 + tanh layer {M}x{N})")
    print(f"  {'what':8} {'implementation':16} {'time':>10} {'vs hand':>8}  note")
    for what, name, seconds, note in rows:
        base = hand_h if what == "hessian" else hand_v
        if seconds is None:
            print(f"  {what:8} {name:16} {'-':>10} {'-':>8}  {note}")
            continue
        print(f"  {what:8} {name:16} {seconds * 1e6:8.1f}us {seconds / base:7.1f}x  {note}")
    if not args.quick:
        print("  (peers not installed are not listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
