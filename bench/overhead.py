"""What s2s_ad costs around the generated code: per call, per ``grad``, per transform, at import.

```sh
python bench/overhead.py            # about a minute
python bench/overhead.py --quick    # a smoke run, < 20 s
```

Sections (each timed in interleaved rounds, see ``timing.py``):

* **per call**: the gradient of ``f(x, y) = x*x*y + y*y`` on Python floats, and of
  ``np.sum(x*x*y) + y*y`` on a 3-vector, called as a user calls it, next to the generated
  code alone, a hand-written gradient and the installed peers. The ratio to the
  hand-written gradient is taken round by round (both timed in the same round) and its
  median reported: on a shared machine back-to-back medians drift by 2x. The cost around
  the generated code is the difference of the two best times and the median of their
  differences round by round.
* **grad(f) again**: ``s2s_ad.grad(f)`` for a function already transformed (the cache).
* **transform**: ``grad()`` of a generated 300-line function (``generated.py``), cold
  (parse, normalize, reverse pass, optimize, compile), then its first call (which makes
  the variant for the call's argument kinds: the reverse pass again, on the cached normal
  form), a call with other argument kinds (another variant), and a second ``grad`` with
  other ``wrt``. A fresh module per sample; wall and CPU time.
* **import**: ``python -c "import s2s_ad"`` against ``python -c "import numpy"`` in fresh
  interpreters with bytecode cached (as installed), once more compiling from source (no
  ``.pyc``), and whether libcst (only needed to transform) was imported.
* **first transform**: the cold ``grad()`` of the 300-line function as the first
  transform of a fresh interpreter (bytecode cached), which imports libcst and the
  transformer, next to ``import libcst`` alone (CPU time, measured in the interpreter).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import generated  # noqa: E402
import numpy as np  # noqa: E402
import peers  # noqa: E402
from introspect import code_run_by  # noqa: E402
from timing import (  # noqa: E402
    FULL,
    QUICK,
    Settings,
    Timer,
    run_interleaved,
    use_clock,
    warm_up,
)

import s2s_ad  # noqa: E402


def f_floats(x, y):
    return x * x * y + y * y


def hand_floats(x, y):
    return 2.0 * x * y, x * x + 2.0 * y


def f_small(x, y):
    return np.sum(x * x * y) + y * y


def hand_small(x, y):
    return 2.0 * x * y, float(np.sum(x * x)) + 2.0 * y


_RNG = np.random.default_rng(0)
X_MLP, Y_MLP = _RNG.standard_normal((8, 4)), _RNG.standard_normal(8)


def f_mlp(w1, w2):
    """A small MLP's squared error (tanh layer 4 -> 6, linear read-out) on a batch of 8."""
    h = np.tanh(X_MLP @ w1)
    return np.mean((h @ w2 - Y_MLP) ** 2)


def hand_mlp(w1, w2):
    h = np.tanh(X_MLP @ w1)
    r = 2.0 * (h @ w2 - Y_MLP) / len(Y_MLP)
    return X_MLP.T @ (np.outer(r, w2) * (1.0 - h * h)), h.T @ r


def _fmt(seconds: float) -> str:
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def _round_ratios(timer: Timer, base: Timer) -> float:
    """Median over rounds of this timer's batch time / the base's batch time that round."""
    pairs = list(zip(timer.samples, base.samples))
    return statistics.median(a / b for a, b in pairs) if pairs else float("nan")


def per_call(settings: Settings, with_peers: bool) -> list[tuple[str, str, str, str, str]]:
    """Rows ``(case, row, best, median, median ratio to hand-written)``."""
    rows = []
    small = np.array([0.5, -1.0, 2.0])
    cases = [
        ("floats: x*x*y + y*y", f_floats, hand_floats, (1.5, 2.0)),
        ("3-vector: sum(x*x*y) + y*y", f_small, hand_small, (small, 2.0)),
        (
            "small MLP: 8x4 batch, 4x6 tanh layer, 6-vector read-out",
            f_mlp,
            hand_mlp,
            (_RNG.standard_normal((4, 6)), _RNG.standard_normal(6)),
        ),
    ]
    for label, f, hand, args in cases:
        df = s2s_ad.grad(f, (0, 1))
        got, want = df(*args), hand(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
        body = code_run_by(df, args)
        impls: list[tuple[str, Callable[[], Any]]] = [
            ("hand-written", lambda fn=hand, a=args[0], b=args[1]: fn(a, b)),
            ("s2s_ad.grad(f, (0, 1))", lambda fn=df, a=args[0], b=args[1]: fn(a, b)),
            ("generated code only", lambda fn=body, a=args[0], b=args[1]: fn(a, b)),
        ]
        if with_peers:
            for peer in peers.all_peers():
                if peer.available():
                    try:
                        prepared = peer.prepare(f, args, (0, 1))
                        prepared.call()  # a peer may fail only when called
                    except Exception as exc:  # noqa: BLE001
                        print(f"  {label}, {peer.name}: unsupported ({peers._first_line(exc)})")
                        continue
                    impls.append((peer.name, prepared.call))
        timers = []
        for _, call in impls:
            _, first = warm_up(call)
            timer = Timer(call)
            timer.calibrate(first, settings)
            timers.append(timer)
        run_interleaved(timers, settings)
        for (name, _), timer in zip(impls, timers):
            ratio = _round_ratios(timer, timers[0])
            rows.append((label, name, _fmt(timer.best), _fmt(timer.median), f"{ratio:.2f}x"))
        # best: the difference of the best times; median: of the differences round by round
        around = [a - b for a, b in zip(timers[1].samples, timers[2].samples)]
        best = _fmt(timers[1].best - timers[2].best)
        median_around = _fmt(statistics.median(around))
        rows.append((label, "around the generated code", best, median_around, "—"))
    return rows


def repeated_grad(settings: Settings) -> list[tuple[str, str, str]]:
    """Rows ``(what, best, median)`` for ``grad(f)`` of a transformed function."""
    s2s_ad.grad(f_floats)
    calls = [
        ("s2s_ad.grad(f) (cached)", lambda: s2s_ad.grad(f_floats)),
        ("s2s_ad.value_and_grad(f) (cached)", lambda: s2s_ad.value_and_grad(f_floats)),
    ]
    timers = []
    for _, call in calls:
        _, first = warm_up(call)
        timer = Timer(call)
        timer.calibrate(first, settings)
        timers.append(timer)
    run_interleaved(timers, settings)
    return [(name, _fmt(t.best), _fmt(t.median)) for (name, _), t in zip(calls, timers)]


def transform(samples: int, n_lines: int = 300) -> list[tuple[str, str, str, str, str]]:
    """Rows ``(what, best, median, CPU best, CPU median)`` for the transform of a generated
    long function (CPU time: this process's, less sensitive to other jobs on the machine)."""
    rng = np.random.default_rng(0)
    w, x, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 4)), rng.standard_normal(3)
    steps = [
        (f"grad() of a {n_lines}-line function, cold", lambda m, df: s2s_ad.grad(m.long_loss)),
        ("its first call (a new variant: arrays)", lambda m, df: df(w, x, b)),
        ("a call with other argument kinds (b a float)", lambda m, df: df(w, x, 0.5)),
        (
            "grad() with another wrt (normal form cached)",
            lambda m, df: s2s_ad.grad(m.long_loss, (0, 2)),
        ),
    ]
    wall: list[list[float]] = [[] for _ in steps]
    cpu: list[list[float]] = [[] for _ in steps]
    for k in range(samples):
        module = generated.write_module(n_lines, name=f"bench_long_{os.getpid()}_{k}")
        df = None
        for i, (_, step) in enumerate(steps):
            t0, c0 = time.perf_counter(), time.process_time()
            made = step(module, df)
            wall[i].append(time.perf_counter() - t0)
            cpu[i].append(time.process_time() - c0)
            df = made if i == 0 else df
    return [
        (label, _fmt(min(w_)), _fmt(median(w_)), _fmt(min(c_)), _fmt(median(c_)))
        for (label, _), w_, c_ in zip(steps, wall, cpu)
    ]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def import_time(samples: int) -> tuple[list[tuple[str, str, str]], bool]:
    """Rows for ``import s2s_ad`` and ``import numpy`` in fresh interpreters (interleaved),
    and whether ``import s2s_ad`` imported libcst.

    Bytecode is cached (in a temporary ``PYTHONPYCACHEPREFIX``, written by one import
    before timing) as it is for an installed package; the last row times ``import s2s_ad``
    compiling every module from source, as under ``PYTHONDONTWRITEBYTECODE=1``."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base["PYTHONPATH"] = str(HERE.parent)
    cache = tempfile.mkdtemp(prefix="s2s_pyc_")
    cached = {**base, "PYTHONPYCACHEPREFIX": cache}
    no_pyc = {**base, "PYTHONDONTWRITEBYTECODE": "1"}
    codes = {
        "import numpy": ("import numpy", cached),
        "import s2s_ad": ("import s2s_ad", cached),
        "import s2s_ad, no .pyc": ("import s2s_ad", no_pyc),
    }
    subprocess.run([sys.executable, "-c", "import s2s_ad"], env=cached, check=True)
    times: dict[str, list[float]] = {k: [] for k in codes}
    for _ in range(samples):
        for label, (code, env) in codes.items():
            prog = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
            out = subprocess.run(
                [sys.executable, "-c", prog], env=env, capture_output=True, text=True, check=True
            )
            times[label].append(float(out.stdout))
    shutil.rmtree(cache, ignore_errors=True)
    check = "import sys, s2s_ad; print('libcst' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", check], env=cached, capture_output=True, text=True, check=True
    )
    extra = [a - b for a, b in zip(times["import s2s_ad"], times["import numpy"])]
    rows = [(k, _fmt(min(v)), _fmt(median(v))) for k, v in times.items()]
    rows.insert(2, ("s2s_ad beyond numpy (per sample)", _fmt(min(extra)), _fmt(median(extra))))
    return rows, out.stdout.strip() == "True"


def first_transform(samples: int, n_lines: int = 300) -> list[tuple[str, str, str]]:
    """Rows ``(what, CPU best, CPU median)`` for the first ``grad()`` in a fresh
    interpreter (``import s2s_ad`` done, bytecode cached) and for ``import libcst`` alone."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), str(HERE)])
    cache = tempfile.mkdtemp(prefix="s2s_pyc_")
    env["PYTHONPYCACHEPREFIX"] = cache
    clock = "import time; c = time.process_time; "
    codes = {
        f"first grad() of a {n_lines}-line function in a new interpreter": (
            "import s2s_ad, generated; "
            f"m = generated.write_module({n_lines}, name='first_transform'); "
            + clock
            + "t = c(); s2s_ad.grad(m.long_loss); print(c() - t)"
        ),
        "import libcst (imported by the first transform)": (
            "import numpy, s2s_ad; " + clock + "t = c(); import libcst; print(c() - t)"
        ),
    }
    for code in codes.values():  # writes the bytecode
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
    times: dict[str, list[float]] = {k: [] for k in codes}
    for _ in range(samples):
        for label, code in codes.items():
            out = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            times[label].append(float(out.stdout.split()[-1]))
    shutil.rmtree(cache, ignore_errors=True)
    return [(k, _fmt(min(v)), _fmt(median(v))) for k, v in times.items()]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time CPU time of the process (default: steady on a shared machine) or wall time",
    )
    parser.add_argument("--no-peers", action="store_true", help="skip autograd, JAX, PyTorch")
    parser.add_argument("--calls-only", action="store_true", help="only the per-call table")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    use_clock(args.clock)
    version = sys.version.split()[0]
    print(f"Python {version}, NumPy {np.__version__}, {os.cpu_count()} cores, clock {args.clock}")
    print("\n## Per call\n")
    rows = per_call(settings, not args.no_peers)
    print(_table(["case", "implementation", "best", "median", "/ hand (median of rounds)"], rows))
    if args.calls_only:
        return 0
    print("\n## grad(f) again\n")
    print(_table(["what", "best", "median"], repeated_grad(settings)))
    print("\n## Transform\n")
    header = ["what", "best", "median", "CPU best", "CPU median"]
    print(_table(header, transform(2 if args.quick else 7)))
    print("\n## First transform\n")
    print(_table(["what", "CPU best", "CPU median"], first_transform(2 if args.quick else 7)))
    print("\n## Import\n")
    rows, libcst = import_time(3 if args.quick else 9)
    print(_table(["what", "best", "median"], rows))
    print(f"\nlibcst imported by `import s2s_ad`: {'yes' if libcst else 'no'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
