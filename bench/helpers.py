"""How much of a gradient call the runtime helpers take (``_ad.unbroadcast``, ``_ad.sum_vjp``...).

For small functions of the kinds users write (an elementwise chain on a short and a long
vector, a ``while`` loop over an array, a ``while`` loop over floats, a small MLP) and for
the cases of ``bench/run.py``, prints the time of the gradient next to the primal's
(interleaved rounds, ratio taken round by round, see ``bench/timing.py``) and the share
of the gradient's time cProfile attributes to the helpers of ``s2s_ad/runtime.py`` and
``s2s_ad/rules/*`` (the profiler inflates per-call costs: read the share, not the time).
``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))  # the checkout's s2s_ad, not an installed one

import numpy as np  # noqa: E402
from cases import CASES  # noqa: E402
from timing import FULL, QUICK, Timer, run_interleaved, warm_up  # noqa: E402

import s2s_ad  # noqa: E402


def chain(x, a):
    """An elementwise chain ending in two reductions."""
    y = np.sin(x) * a + np.exp(-x * x)
    z = np.tanh(y) ** 2 + np.log1p(y * y)
    w = np.maximum(z, 0.1) / (1.0 + np.abs(x))
    return np.sum(w * np.cos(x)) + np.mean(np.sqrt(z + 1.0))


def damped_iteration(x, n):
    """A ``while`` loop over an array."""
    k = 0
    s = x
    while k < n:
        s = s * 0.9 + np.sin(s)
        k += 1
    return np.sum(s * s)


def newton_sqrt(a, tol):
    """A ``while`` loop over floats with a data-dependent trip count."""
    x = a
    while abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
    return x


def small_mlp(params, x, y):
    """A two-layer tanh MLP's squared error, params as [(W, b), ...]."""
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return np.mean((h @ W + b - y) ** 2)


def _cases() -> list[tuple[str, Callable[..., Any], tuple[Any, ...], Any]]:
    rng = np.random.default_rng(0)
    sizes = [(4, 16), (16, 1)]
    params = [(rng.standard_normal(s) * 0.3, rng.standard_normal(s[1])) for s in sizes]
    out = [
        ("elementwise chain, n=10", chain, (rng.standard_normal(10), 0.7), (0, 1)),
        ("elementwise chain, n=1000", chain, (rng.standard_normal(1000), 0.7), (0, 1)),
        (
            "while loop over a 50-vector, 30 trips",
            damped_iteration,
            (rng.standard_normal(50), 30),
            0,
        ),
        ("while loop over floats (Newton sqrt)", newton_sqrt, (2.0, 1e-12), 0),
        (
            "small MLP 4-16-1, batch 32, [(W, b), ...]",
            small_mlp,
            (params, rng.standard_normal((32, 4)), rng.standard_normal((32, 1))),
            0,
        ),
    ]
    for case in CASES:
        out.append((case.name, case.f, tuple(case.inputs(np.random.default_rng(0))), case.wrt))
    return out


def _is_helper(filename: str) -> bool:
    top = os.sep + "s2s_ad" + os.sep
    return top in filename and (
        filename.endswith("runtime.py") or (os.sep + "rules" + os.sep) in filename
    )


def helper_share(call: Callable[[], Any], repeats: int) -> float:
    """Share of ``call``'s profiled time spent inside s2s_ad's runtime helpers (each
    helper's cumulative time on the calls made from outside the helpers)."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeats):
        call()
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values())  # every function's own time
    inside = 0.0
    for (filename, _, _), entry in stats.items():
        if _is_helper(filename):
            for caller, edge in entry[4].items():
                if not _is_helper(caller[0]):
                    inside += edge[3]
    return inside / total if total else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats (CI smoke run)")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    print(f"  {'case':42} {'f':>10} {'grad':>10} {'grad/f':>7} {'helpers':>8}")
    for label, f, inputs, wrt in _cases():
        df = s2s_ad.grad(f, wrt)
        calls = [lambda f=f, a=inputs: f(*a), lambda df=df, a=inputs: df(*a)]
        timers = []
        for call in calls:
            _, first = warm_up(call)
            timer = Timer(call)
            timer.calibrate(first, settings)
            timers.append(timer)
        run_interleaved(timers, settings)
        ratio = statistics.median(a / b for a, b in zip(timers[1].samples, timers[0].samples))
        repeats = max(1, int(0.2 / max(timers[1].best, 1e-7)))
        share = helper_share(calls[1], 3 if args.quick else repeats)
        print(
            f"  {label[:42]:42} {timers[0].best * 1e6:8.1f}us {timers[1].best * 1e6:8.1f}us "
            f"{ratio:6.2f}x {share * 100:7.1f}%"
        )
    print("  (grad/f: median over rounds of the per-round ratio; helpers: share of the")
    print("   gradient's profiled time inside s2s_ad/runtime.py and s2s_ad/rules/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
