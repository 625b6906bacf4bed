"""Second order and Jacobians: Hessian, Hessian-vector product, forward Jacobian.

Prints, measured side by side in interleaved rounds (``bench/timing.py``: each round runs
a batch of every implementation in turn; the ratio to the hand-written version is taken
round by round and its median reported), the time of a hand-written Hessian (and its
product with a vector), of ``s2s_ad.hessian`` (one batched run of the tangent program
of the generated gradient) and ``s2s_ad.hvp``; then a forward Jacobian of a map R^n -> R^m
(``s2s_ad.jacobian(f, mode='fwd')``) against ``n`` hand-written JVPs and a hand-written
Jacobian; then the reverse Jacobian of the same map (``s2s_ad.jacobian(f)``: one forward
sweep and one batched backward sweep) against ``m`` hand-written VJPs, and against
``s2s_ad``'s one pullback per output entry. Peers, when installed (not with ``--quick``,
the CI smoke run): ``autograd`` (``hessian``, grad of grad·v, ``jacobian``), ``jax.jit`` of
``jax.hessian``, ``jvp`` of ``grad``, ``jacfwd`` and ``jacrev``, and ``torch.func``'s
``hessian``, ``jvp`` of ``grad``, ``jacfwd`` and ``jacrev`` (CPU, float64, one thread).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
if os.environ["OMP_NUM_THREADS"] == "1":  # XLA's pool too (see run.py's _pin_threads)
    _xla = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _xla).strip()
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


#: The four things timed, in table order, and the baseline each is divided by.
WHATS = ("hessian", "hvp", "jacobian", "jacrev")
BASE_OF = {
    "hessian": "hessian/hand-written",
    "hvp": "hvp/hand-written",
    "jacobian": f"jacobian/{N} hand-written jvps",
    "jacrev": f"jacrev/{M} hand-written vjps",
}
#: The targets of the issue on speed (ratio to the baseline above).
TARGETS = {"hessian/s2s_ad": 10.0, "hvp/s2s_ad": 4.0, "jacobian/s2s_ad fwd": 3.0}


def peers(x: np.ndarray, v: np.ndarray) -> dict[str, dict[str, Callable[[], Any]]]:
    """name -> {what -> zero-argument call} for the installed peer libraries.

    ``what`` is one of :data:`WHATS`: the Hessian of :func:`objective` at ``x``, its
    product with ``v``, the forward (``jacobian``) and reverse (``jacrev``) Jacobian of
    :func:`vector_map` at ``x``. Inputs are converted to each library's arrays once,
    here; each call returns the library's array (finished: JAX's ``block_until_ready``).
    """
    out: dict[str, dict[str, Callable[[], Any]]] = {}
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        pass
    else:

        def f_ag(y):
            return anp.sum(anp.sin(y) * y**2) + anp.sum(anp.tanh(anp.dot(A, y)))

        def g_ag(y):
            return anp.tanh(anp.dot(A, y)) * y[:M] + anp.sin(y[:M])

        h_ag, grad_ag, jac_ag = autograd.hessian(f_ag), autograd.grad(f_ag), autograd.jacobian(g_ag)
        hvp_ag = autograd.grad(lambda y: anp.dot(grad_ag(y), v))
        out["autograd"] = {
            "hessian": lambda: h_ag(x),
            "hvp": lambda: hvp_ag(x),
            "jacrev": lambda: jac_ag(x),
        }
    try:
        import jax
    except ImportError:
        pass
    else:
        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        import jax.numpy as jnp

        a, xj, vj = jnp.asarray(A), jnp.asarray(x), jnp.asarray(v)

        def f_jax(y):
            return jnp.sum(jnp.sin(y) * y**2) + jnp.sum(jnp.tanh(a @ y))

        def g_jax(y):
            return jnp.tanh(a @ y) * y[:M] + jnp.sin(y[:M])

        jitted = {
            "hessian": (jax.jit(jax.hessian(f_jax)), (xj,)),
            "hvp": (jax.jit(lambda y, w: jax.jvp(jax.grad(f_jax), (y,), (w,))[1]), (xj, vj)),
            "jacobian": (jax.jit(jax.jacfwd(g_jax)), (xj,)),
            "jacrev": (jax.jit(jax.jacrev(g_jax)), (xj,)),
        }
        out["jax.jit"] = {
            what: (lambda fn=fn, args=args: jax.block_until_ready(fn(*args)))
            for what, (fn, args) in jitted.items()
        }
    try:
        import torch
        import torch.func as tf
    except ImportError:
        pass
    else:
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        at = torch.as_tensor(A)
        xt, vt = torch.as_tensor(x), torch.as_tensor(v)

        def f_torch(y):
            return torch.sum(torch.sin(y) * y**2) + torch.sum(torch.tanh(at @ y))

        def g_torch(y):
            return torch.tanh(at @ y) * y[:M] + torch.sin(y[:M])

        h_t, jf_t, jr_t = tf.hessian(f_torch), tf.jacfwd(g_torch), tf.jacrev(g_torch)
        grad_t = tf.grad(f_torch)
        out["torch.func"] = {
            "hessian": lambda: h_t(xt),
            "hvp": lambda: tf.jvp(grad_t, (xt,), (vt,))[1],
            "jacobian": lambda: jf_t(xt),
            "jacrev": lambda: jr_t(xt),
        }
    return out


def _as_numpy(value: Any) -> np.ndarray:
    """A peer's result as a NumPy array (a torch tensor is detached first)."""
    detach = getattr(value, "detach", None)
    return np.asarray(detach() if callable(detach) else value)


def _ratio(samples: list[float], base: list[float]) -> float:
    """Median over rounds of the per-round ratio (noise hits both sides of a round alike)."""
    return float(np.median([a / b for a, b in zip(samples, base)]))


def _relative_error(got: Any, want: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(got) - want)) / np.max(np.abs(want)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats (CI smoke run)")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time CPU time of the process (default: steady on a shared machine) or wall time",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import FULL, QUICK, use_clock

    settings = QUICK if args.quick else FULL
    use_clock(args.clock)
    import s2s_ad

    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(N), rng.standard_normal(N)
    reference = hessian_by_hand(x)
    jac_ref = jacobian_by_hand(x)
    want = {"hessian": reference, "hvp": reference @ v, "jacobian": jac_ref, "jacrev": jac_ref}
    assert _relative_error(n_jvps_by_hand(x), jac_ref) < 1e-12
    assert _relative_error(m_vjps_by_hand(x), jac_ref) < 1e-12
    from s2s_ad.transforms import _jacobian_rows

    s2s_hessian, s2s_hvp = s2s_ad.hessian(objective), s2s_ad.hvp(objective)
    jac_fwd, jac_rev = s2s_ad.jacobian(vector_map, mode="fwd"), s2s_ad.jacobian(vector_map)
    by_what: dict[str, dict[str, Callable[[], Any]]] = {
        "hessian": {"hand-written": lambda: hessian_by_hand(x), "s2s_ad": lambda: s2s_hessian(x)},
        "hvp": {"hand-written": lambda: hvp_by_hand(x, v), "s2s_ad": lambda: s2s_hvp(x, v)},
        "jacobian": {
            "hand-written": lambda: jacobian_by_hand(x),
            f"{N} hand-written jvps": lambda: n_jvps_by_hand(x),
            "s2s_ad fwd": lambda: jac_fwd(x),
        },
        "jacrev": {
            "hand-written": lambda: jacobian_by_hand(x),
            f"{M} hand-written vjps": lambda: m_vjps_by_hand(x),
            "s2s_ad rev": lambda: jac_rev(x),
            "s2s_ad per entry": lambda: _jacobian_rows(vector_map, (x,), 0, x),
        },
    }
    notes: dict[str, str] = {}
    for name, fns in ({} if args.quick else peers(x, v)).items():
        for what, call in fns.items():
            by_what[what][name] = call
    calls: dict[str, Callable[[], Any]] = {}
    for what in WHATS:
        for name, call in by_what[what].items():
            key = f"{what}/{name}"
            try:
                err = _relative_error(_as_numpy(call()), want[what])
            except Exception as exc:  # noqa: BLE001 (a failing peer is reported, not fatal)
                notes[key] = f"failed: {str(exc).splitlines()[0][:60]}"
                continue
            notes[key] = "WRONG" if err > 1e-8 else ""
            calls[key] = call
    times = interleaved(calls, settings)
    print(f"== clock: {args.clock} time; second order: f: R^{N} -> R (sin(x) x^2 + tanh {M}x{N})")
    print(f"== jacobian: g: R^{N} -> R^{M} (tanh layer times x[:{M}] + sin(x[:{M}]))")
    print(f"  {'what':8} {'implementation':24} {'best':>10} {'vs base':>8}  note")
    for key in calls:
        what, name = key.split("/", 1)
        best, samples = times[key]
        ratio = _ratio(samples, times[BASE_OF[what]][1])
        shown = f"{ratio:7.2f}" if ratio < 1 else f"{ratio:7.1f}"
        note = notes.get(key, "")
        if key in TARGETS:
            verdict = "met" if ratio <= TARGETS[key] else "MISSED"
            note = f"{note}; target <= {TARGETS[key]:g}x: {verdict}".lstrip("; ")
        print(f"  {what:8} {name:24} {best * 1e6:8.1f}us {shown}x  {note}")
    for key, note in notes.items():
        if key not in calls:
            print(f"  {key.replace('/', ' '):33} {'-':>10} {'-':>8}  {note}")
    print("  (vs base: median over rounds of the per-round ratio to hessian/hvp hand-written")
    print(f"   and, for the jacobian, to {N} hand-written jvps; for jacrev, to {M} vjps)")
    if not args.quick:
        print("  (peers not installed are not listed; autograd has no forward Jacobian)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
