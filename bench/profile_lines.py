"""Per-line profile of the code s2s_ad generates for one benchmark case.

Usage::

    python bench/profile_lines.py rnn_loss          # needs `pip install line_profiler`
    python bench/profile_lines.py scalar_loop --calls 200 --top 15

Prints the generated gradient function with, per line, the hits, the total and
per-hit time, and the share of the function's time; then the costliest lines. The
profiler adds roughly 0.1-0.2 us per executed line, so for scalar code compare lines
with each other rather than with the unprofiled timings of ``bench/run.py``.
"""

from __future__ import annotations

import argparse
import linecache
import os
import sys
from collections.abc import Sequence

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from cases import CASES  # noqa: E402
from introspect import code_run_by  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    """Profile the generated gradient of one case line by line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=[c.name for c in CASES])
    parser.add_argument("--calls", type=int, default=0, help="calls to profile (default: ~1 s)")
    parser.add_argument("--top", type=int, default=12, help="how many costliest lines to list")
    opts = parser.parse_args(argv)
    try:
        from line_profiler import LineProfiler
    except ImportError:
        print("line_profiler is not installed: pip install line_profiler", file=sys.stderr)
        return 2
    import s2s_ad

    case = next(c for c in CASES if c.name == opts.case)
    args = case.inputs(np.random.default_rng(0))
    df = s2s_ad.grad(case.f, wrt=case.wrt)
    df(*args)  # the first call may generate a variant specialized on argument types
    generated = code_run_by(df, args)
    code = generated.__code__
    profiler = LineProfiler()
    wrapped = profiler(generated)
    calls = opts.calls
    if calls <= 0:
        import time

        start = time.perf_counter()
        generated(*args)
        calls = max(3, int(1.0 / max(time.perf_counter() - start, 1e-6)))
    for _ in range(calls):
        wrapped(*args)
    stats = profiler.get_stats()
    timings = next(
        (
            lines
            for (filename, first, name), lines in stats.timings.items()
            if filename == code.co_filename
            and first == code.co_firstlineno
            and name.split(".")[-1] == code.co_name
        ),
        [],
    )
    per_line = {lineno: (hits, t * stats.unit) for lineno, hits, t in timings}
    total = sum(t for _, t in per_line.values()) or 1.0
    text = linecache.getlines(code.co_filename)
    last = max(per_line, default=code.co_firstlineno)
    print(f"{case.name}: {calls} calls, {total / calls * 1e6:.1f} us per call under the profiler")
    print(f"{'line':>5} {'hits/call':>9} {'us/call':>9} {'us/hit':>8} {'%':>6}  source")
    for lineno in range(code.co_firstlineno, last + 1):
        src = text[lineno - 1].rstrip() if lineno - 1 < len(text) else ""
        if lineno in per_line:
            hits, t = per_line[lineno]
            print(
                f"{lineno:>5} {hits / calls:>9.0f} {t / calls * 1e6:>9.2f} "
                f"{t / hits * 1e6:>8.3f} {100 * t / total:>6.1f}  {src}"
            )
        else:
            print(f"{lineno:>5} {'':>9} {'':>9} {'':>8} {'':>6}  {src}")
    print(f"\ncostliest {opts.top} lines:")
    ranked = sorted(per_line.items(), key=lambda kv: -kv[1][1])[: opts.top]
    for lineno, (_hits, t) in ranked:
        src = text[lineno - 1].strip() if lineno - 1 < len(text) else ""
        print(f"  {100 * t / total:5.1f}%  {t / calls * 1e6:9.2f} us/call  L{lineno}: {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
