"""Benchmark s2s_ad gradients against the primal, hand-written NumPy gradients and peers.

Usage::

    python bench/run.py                  # full run (about 2-3 minutes)
    python bench/run.py --quick          # smoke run for CI (< 30 s)
    python bench/run.py --case rnn_loss  # one case (repeatable)
    python bench/run.py --show-source    # also print the generated gradient code
    python bench/run.py --no-peers       # skip autograd / JAX / PyTorch

See ``bench/README.md`` for what the columns mean.
"""

from __future__ import annotations

import os
import sys


def _pin_threads(argv: list[str]) -> int:
    """Set the thread count of every math library from ``--threads`` (default 1).

    This must run before NumPy, PyTorch or JAX are imported. One thread by default:
    on a small shared machine, OpenBLAS, PyTorch's OpenMP pool and XLA's pool otherwise
    spin-wait against each other and slow the NumPy rows down by several times.
    """
    threads = 1
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            threads = int(argv[i + 1])
        elif arg.startswith("--threads="):
            threads = int(arg.split("=", 1)[1])
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    if threads == 1:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()
    return threads


THREADS = _pin_threads(sys.argv[1:])
# the checkout this script lives in, not whichever s2s_ad is installed
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402
import gc  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from cases import CASES, Case  # noqa: E402
from introspect import code_run_by  # noqa: E402
from peers import Peer, all_peers  # noqa: E402
from timing import (  # noqa: E402
    CLOCKS,
    FULL,
    QUICK,
    Settings,
    Timer,
    run_interleaved,
    use_clock,
    warm_up,
)

GRAD_RTOL = 1e-8  # s2s_ad and peers vs the hand-written gradient (float64 everywhere)
FD_RTOL = 1e-5  # hand-written gradient vs a central finite difference
FD_EPS = 1e-6
ERR_WIDTH = 110  # error messages are cut to this many characters in the table
SLOW_CALL = 1.0  # a peer whose second call takes longer is timed on that call alone


# --- results -----------------------------------------------------------------------------


F_LABEL = "f (primal)"
HAND_LABEL = "hand-written"
S2S_LABEL = "s2s_ad"
RAW_LABEL = "  s2s_ad generated code only"
AUTOGRAD_LABEL = "autograd"
#: Rows whose memory ``tracemalloc`` sees: NumPy reports its array allocations to it;
#: JAX's and PyTorch's allocators do not, so their rows get no memory column.
TRACED_LABELS = (F_LABEL, HAND_LABEL, S2S_LABEL, RAW_LABEL, AUTOGRAD_LABEL)
MEMORY_TARGET = 1.2  # peak memory, s2s_ad / hand-written (the issue on generated code)


@dataclass
class Row:
    """One implementation of one case.

    Attributes:
        label: Implementation name, first column.
        timer: Its timing samples, or ``None`` when it was not timed.
        status: Why it was not timed ("not installed", "unsupported (...)", "WRONG ...").
        note: Free text for the last column (transform / compile time, target, caveats).
        peak: Peak memory one call allocates (bytes, ``tracemalloc``), or ``None`` where
            it is not measured (peers whose arrays NumPy does not allocate).
    """

    label: str
    timer: Timer | None = None
    status: str = ""
    note: str = ""
    peak: int | None = None


@dataclass
class CaseResult:
    """Everything measured for one case."""

    case: Case
    rows: list[Row] = field(default_factory=list)
    source: str | None = None
    variant_source: str | None = None

    def best(self, label: str) -> float | None:
        """Best per-call time of the row with this label, if it was timed."""
        for row in self.rows:
            if row.label == label and row.timer is not None and row.timer.samples:
                return row.timer.best
        return None

    def round_ratio(self, label: str, base: str = HAND_LABEL) -> float | None:
        """Median over rounds of the ratio of this row's batch to ``base``'s batch timed
        in the same round (interleaved: a burst of load hits both sides of a round)."""
        rows = {r.label: r for r in self.rows if r.timer is not None and r.timer.samples}
        if label not in rows or base not in rows:
            return None
        pairs = zip(rows[label].timer.samples, rows[base].timer.samples)  # type: ignore[union-attr]
        return statistics.median(a / b for a, b in pairs)

    def peak(self, label: str) -> int | None:
        """Peak memory of one call of the row with this label, if it was measured."""
        for row in self.rows:
            if row.label == label and row.peak is not None:
                return row.peak
        return None


# --- checking ----------------------------------------------------------------------------


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message``, cut to :data:`ERR_WIDTH` characters."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}"
    return text if len(text) <= ERR_WIDTH else text[: ERR_WIDTH - 3] + "..."


def rel_err(got: Sequence[Any], ref: Sequence[Any]) -> float:
    """Largest relative error over gradient components (``inf`` on a structure mismatch)."""
    if len(got) != len(ref):
        return float("inf")
    worst = 0.0
    for g, r in zip(got, ref):
        g_arr = np.asarray(g, dtype=float)
        r_arr = np.asarray(r, dtype=float)
        if g_arr.shape != r_arr.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(r_arr))), 1e-300)
        worst = max(worst, float(np.max(np.abs(g_arr - r_arr))) / scale)
    return worst


def check_hand_written(case: Case, args: tuple[Any, ...], hand: tuple[Any, ...]) -> float:
    """Assert the hand-written gradient matches a central difference along a random direction.

    Returns:
        The relative error found.
    """
    rng = np.random.default_rng(1)
    direction = [rng.standard_normal(np.shape(args[i])) for i in case.wrt]

    def shifted(sign: float) -> float:
        moved = list(args)
        for pos, d in zip(case.wrt, direction):
            value = args[pos] + sign * FD_EPS * d
            moved[pos] = float(value) if isinstance(args[pos], float) else value
        return float(case.f(*moved))

    numeric = (shifted(1.0) - shifted(-1.0)) / (2 * FD_EPS)
    analytic = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(hand, direction))
    err = abs(numeric - analytic) / max(abs(analytic), 1e-300)
    assert err < FD_RTOL, (
        f"{case.name}: hand-written gradient disagrees with finite differences "
        f"(directional derivative {analytic!r} vs {numeric!r}, rel err {err:.2e})"
    )
    return err


# --- s2s_ad ------------------------------------------------------------------------------


def import_s2s() -> tuple[Any, str | None]:
    """``(s2s_ad module, None)`` or ``(None, error)``: a broken package must not stop a run."""
    try:
        import s2s_ad
    except Exception as exc:  # noqa: BLE001
        return None, first_line(exc)
    return s2s_ad, None


def transform_seconds(s2s: Any, case: Case, tries: int) -> float:
    """Best time of ``s2s_ad.grad(f)`` with the transform cache emptied before each try."""
    clear = getattr(getattr(s2s, "api", None), "clear_cache", None)
    best = float("inf")
    for _ in range(tries if clear is not None else 1):
        if clear is not None:
            clear()
        start = time.perf_counter()
        s2s.grad(case.f, wrt=case.wrt)
        best = min(best, time.perf_counter() - start)
    return best


def s2s_rows(
    s2s: Any,
    s2s_error: str | None,
    case: Case,
    args: tuple[Any, ...],
    hand: tuple[Any, ...],
    settings: Settings,
    result: CaseResult,
) -> list[Row]:
    """Rows for ``s2s_ad.grad(f)`` (as a user calls it) and for its bare generated code."""
    if s2s is None:
        return [Row(S2S_LABEL, status=f"unsupported (import failed: {s2s_error})")]
    try:
        start = time.perf_counter()
        df = s2s.grad(case.f, wrt=case.wrt)
        first_transform = time.perf_counter() - start
        out, first = warm_up(lambda: df(*args))
    except Exception as exc:  # noqa: BLE001  (report, never crash the run)
        return [Row(S2S_LABEL, status=f"unsupported ({first_line(exc)})")]
    try:
        result.source = s2s.source(df)
    except Exception as exc:  # noqa: BLE001
        result.source = f"# s2s_ad.source failed: {first_line(exc)}"
    err = rel_err(out, hand)
    if not err <= GRAD_RTOL:
        return [Row(S2S_LABEL, status=f"WRONG (rel err {err:.2e} vs hand-written)")]
    tries = 3 if settings is FULL else 1
    transform = min(first_transform, transform_seconds(s2s, case, tries))
    timer = Timer(lambda: df(*args))
    timer.calibrate(first, settings)
    # The first call may generate more code (variants specialized on argument types).
    note = f"transform {fmt_time(transform)}, first call {fmt_time(first)}"
    rows = [Row(S2S_LABEL, timer, note=note)]
    generated = code_run_by(df, args)
    if generated is not None and generated is not getattr(df, "__wrapped__", None):
        try:
            result.variant_source = inspect.getsource(generated)
        except (OSError, TypeError):
            result.variant_source = None
    if callable(generated):
        try:
            _, raw_first = warm_up(lambda: generated(*args))
        except Exception as exc:  # noqa: BLE001
            rows.append(Row(RAW_LABEL, status=f"unsupported ({first_line(exc)})"))
        else:
            raw = Timer(lambda: generated(*args))
            raw.calibrate(raw_first, settings)
            rows.append(Row(RAW_LABEL, raw, note="no per-call argument checks / result shaping"))
    return rows


# --- peers -------------------------------------------------------------------------------


def peer_row(
    peer: Peer, case: Case, args: tuple[Any, ...], hand: tuple[Any, ...], settings: Settings
) -> Row:
    """Prepare, check and calibrate one peer on one case (falling back to ``peer_f``)."""
    if not peer.available():
        return Row(peer.name, status=peer.error or "not installed")
    note = ""
    try:
        prepared = peer.prepare(case.f, args, case.wrt)
        raw_out, first = warm_up(prepared.call)
    except Exception as exc:  # noqa: BLE001
        as_written = first_line(exc)
        if case.peer_f is None:
            return Row(peer.name, status=f"unsupported ({as_written})")
        skip = case.peer_skip.get(peer.module)
        if skip is not None:
            return Row(
                peer.name,
                status=f"unsupported ({as_written})",
                note=f"rewrite not timed: {skip}",
            )
        try:
            prepared = peer.prepare(case.peer_f, args, case.wrt)
            raw_out, first = warm_up(prepared.call)
        except Exception as exc2:  # noqa: BLE001
            return Row(peer.name, status=f"unsupported ({first_line(exc2)})")
        note = f"ran {case.peer_f.__name__}: as written, {as_written}"
    err = rel_err(prepared.to_numpy(raw_out), hand)
    if not err <= GRAD_RTOL:
        return Row(peer.name, status=f"WRONG (rel err {err:.2e} vs hand-written)", note=note)
    if prepared.setup_seconds:
        note = f"compile {fmt_time(prepared.setup_seconds)} (once)" + (f"; {note}" if note else "")
    timer = Timer(prepared.call)
    if first >= SLOW_CALL:
        _, second = warm_up(prepared.call)
        if second >= SLOW_CALL:  # seconds per call: one sample is enough to compare
            timer.samples.append(second)
            timer.final = True  # run_interleaved takes no more batches
            note = "one call timed (over 1 s)" + (f"; {note}" if note else "")
            return Row(peer.name, timer, note=note)
        first = second
    timer.calibrate(first, settings)
    return Row(peer.name, timer, note=note)


# --- memory ------------------------------------------------------------------------------


def peak_bytes(call: Callable[[], Any], tries: int = 3) -> int:
    """Peak memory allocated during one call (bytes above what was allocated before it),
    from ``tracemalloc``, which sees Python objects and NumPy's array buffers.

    The smallest of ``tries`` calls (each after a full collection), so that a cache
    filled by the first call does not count. Run after the timing: tracing slows calls.
    """
    best = None
    for _ in range(tries):
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            out = call()
            peak = tracemalloc.get_traced_memory()[1] - base
            del out
        finally:
            tracemalloc.stop()
        best = peak if best is None else min(best, peak)
    return int(best or 0)


def fmt_bytes(n: int | None) -> str:
    """Bytes with a binary unit (``-`` for ``None``)."""
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value >= 100 else f"{value:.3g} {unit}"
    return f"{n} B"


# --- one case ----------------------------------------------------------------------------


def run_case(
    case: Case, settings: Settings, s2s: Any, s2s_error: str | None, peers: list[Peer]
) -> CaseResult:
    """Check and time every implementation of ``case``, interleaved."""
    args = case.inputs(np.random.default_rng(0))
    result = CaseResult(case)

    def timed(label: str, call: Callable[[], Any], note: str = "") -> Row:
        _, first = warm_up(call)
        timer = Timer(call)
        timer.calibrate(first, settings)
        return Row(label, timer, note=note)

    hand = case.grad(*args)
    fd = check_hand_written(case, args, hand)
    result.rows.append(timed(F_LABEL, lambda: case.f(*args)))
    result.rows.append(timed(HAND_LABEL, lambda: case.grad(*args), f"FD check {fd:.0e}"))
    result.rows.extend(s2s_rows(s2s, s2s_error, case, args, hand, settings, result))
    for peer in peers:
        result.rows.append(peer_row(peer, case, args, hand, settings))
    run_interleaved([r.timer for r in result.rows if r.timer is not None], settings)
    for row in result.rows:
        if row.label in TRACED_LABELS and row.timer is not None and row.timer.samples:
            row.peak = peak_bytes(row.timer.call)
    s2s_best, hand_best = result.best(S2S_LABEL), result.best(HAND_LABEL)
    if case.target is not None and s2s_best is not None and hand_best is not None:
        ratio = s2s_best / hand_best
        verdict = "met" if ratio <= case.target else "MISSED"
        for row in result.rows:
            if row.label == S2S_LABEL:
                row.note += f"; target <= {case.target:g}x: {verdict}"
    return result


# --- printing ----------------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    """Seconds with a unit chosen for 3-4 significant digits."""
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def fmt_ratio(value: float | None) -> str:
    """``1.23x`` (or ``-``)."""
    if value is None:
        return "-"
    return f"{value:.3g}x" if value < 1000 else f"{value:.0f}x"


LABEL_W, TIME_W, RATIO_W, MEM_W = 30, 10, 9, 11


def print_case(result: CaseResult, show_source: bool) -> None:
    """The table of one case."""
    case = result.case
    target = f"target s2s_ad/hand <= {case.target:g}x" if case.target else "no target"
    print(f"\n== {case.name}: {case.description}  [{target}]")
    if show_source:
        print("-- s2s_ad.source(grad_fn):")
        print(result.source if result.source is not None else "# (no generated code)")
        if result.variant_source is not None:
            print("-- the variant these arguments run (specialized on argument types):")
            print(result.variant_source)
    f_best, hand_best = result.best(F_LABEL), result.best(HAND_LABEL)
    hand_peak = result.peak(HAND_LABEL)
    head = (
        f"  {'implementation':<{LABEL_W}}{'best':>{TIME_W}}{'median':>{TIME_W}}"
        f"{'vs hand':>{RATIO_W}}{'rounds':>{RATIO_W}}{'vs f':>{RATIO_W}}"
        f"{'peak mem':>{MEM_W}}{'vs hand':>{RATIO_W}}"
        "  note"
    )
    print(head)
    print("  " + "-" * (len(head) + 20))
    for row in result.rows:
        if row.timer is None or not row.timer.samples:
            line = f"  {row.label:<{LABEL_W}}{row.status}"
            print(line + (f"  [{row.note}]" if row.note else ""))
            continue
        best, med = row.timer.best, row.timer.median
        vs_hand = best / hand_best if hand_best else None
        vs_f = best / f_best if f_best else None
        mem_vs = row.peak / hand_peak if row.peak is not None and hand_peak else None
        print(
            f"  {row.label:<{LABEL_W}}{fmt_time(best):>{TIME_W}}{fmt_time(med):>{TIME_W}}"
            f"{fmt_ratio(vs_hand):>{RATIO_W}}{fmt_ratio(result.round_ratio(row.label)):>{RATIO_W}}"
            f"{fmt_ratio(vs_f):>{RATIO_W}}"
            f"{fmt_bytes(row.peak):>{MEM_W}}{fmt_ratio(mem_vs):>{RATIO_W}}  {row.note}"
        )
    sys.stdout.flush()


def print_summary(results: list[CaseResult]) -> None:
    """s2s_ad / hand-written per case against the targets."""
    print(
        "\n== summary: s2s_ad / hand-written (time: ratio of the best times, and median of"
        " the per-round ratios; peak memory of one call)"
    )
    print(
        f"  {'case':<18}{'time':>8}{'rounds':>8}{'target':>8}  {'verdict':<10}"
        f"{'memory':>8}{'target':>8}  verdict"
    )
    for res in results:
        case = res.case
        s2s_best, hand_best = res.best(S2S_LABEL), res.best(HAND_LABEL)
        target = f"{case.target:g}x" if case.target else "-"
        if s2s_best is None or hand_best is None:
            status = next((r.status for r in res.rows if r.label == S2S_LABEL), "not run")
            print(f"  {case.name:<18}{'-':>8}{'-':>8}{target:>8}  {status}")
            continue
        ratio = s2s_best / hand_best
        verdict = (
            "no target" if case.target is None else ("met" if ratio <= case.target else "MISSED")
        )
        s2s_peak, hand_peak = res.peak(S2S_LABEL), res.peak(HAND_LABEL)
        mem = s2s_peak / hand_peak if s2s_peak is not None and hand_peak else None
        mem_verdict = "-" if mem is None else ("met" if mem <= MEMORY_TARGET else "MISSED")
        rounds = res.round_ratio(S2S_LABEL)
        print(
            f"  {case.name:<18}{fmt_ratio(ratio):>8}{fmt_ratio(rounds):>8}{target:>8}  "
            f"{verdict:<10}{fmt_ratio(mem):>8}{MEMORY_TARGET:>7g}x  {mem_verdict}"
        )


def environment(s2s: Any, peers: list[Peer], settings: Settings, clock: str) -> str:
    """One paragraph describing versions and settings."""
    commit = "?"
    try:
        commit = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                capture_output=True,
                text=True,
                cwd=Path(__file__).resolve().parent,
                timeout=10,
                check=False,
            ).stdout.strip()
            or "?"
        )
    except (OSError, subprocess.SubprocessError):
        pass
    version = getattr(s2s, "__version__", "import failed") if s2s is not None else "import failed"
    parts = [
        f"python {platform.python_version()}",
        f"numpy {np.__version__}",
        f"s2s_ad {version} (git {commit})",
    ]
    for peer in peers:
        if peer.available():
            parts.append(f"{peer.name.split(' ')[0]} {peer.version()}")
        else:
            parts.append(f"{peer.name}: {peer.error}")
    mode = "quick" if settings is QUICK else "full"
    return (
        "; ".join(dict.fromkeys(parts))
        + f"\nthreads per library: {THREADS}; clock: {clock}; mode {mode}: batches of"
        f" >= {fmt_time(settings.batch_seconds)}, up to {settings.rounds} interleaved rounds;"
        " best = minimum per-call time over batches"
    )


def to_json(results: list[CaseResult]) -> list[dict[str, Any]]:
    """Results as plain data (for ``--json``)."""
    out = []
    for res in results:
        rows = []
        for row in res.rows:
            timed = row.timer is not None and bool(row.timer.samples)
            rows.append(
                {
                    "implementation": row.label.strip(),
                    "best_s": row.timer.best if timed else None,
                    "median_s": row.timer.median if timed else None,
                    "samples": len(row.timer.samples) if timed else 0,
                    "peak_bytes": row.peak,
                    "vs_hand_rounds": res.round_ratio(row.label) if timed else None,
                    "status": row.status or "ok",
                    "note": row.note,
                }
            )
        out.append({"case": res.case.name, "target": res.case.target, "rows": rows})
    return out


# --- main --------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    names = [c.name for c in CASES]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats (CI smoke)")
    parser.add_argument(
        "--case",
        action="append",
        choices=names,
        metavar="NAME",
        help=f"run only this case (repeatable): {', '.join(names)}",
    )
    parser.add_argument(
        "--show-source", action="store_true", help="print s2s_ad.source(grad_fn) per case"
    )
    parser.add_argument("--no-peers", action="store_true", help="skip autograd, JAX, PyTorch")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="time CPU time of the process (default: steady on a shared machine) or wall time",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for BLAS / OpenMP / XLA (default 1; read before NumPy is imported)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected cases and print one table per case, then a summary."""
    opts = parse_args(argv)
    settings = QUICK if opts.quick else FULL
    use_clock(opts.clock)
    start = time.perf_counter()
    s2s, s2s_error = import_s2s()
    peers = [] if opts.no_peers else all_peers()
    print(environment(s2s, peers, settings, opts.clock))
    selected = [c for c in CASES if not opts.case or c.name in opts.case]
    results = []
    for case in selected:
        result = run_case(case, settings, s2s, s2s_error, peers)
        print_case(result, opts.show_source)
        results.append(result)
    print_summary(results)
    if not opts.case:
        import tape  # the GradientTape shim's linear-regression and MLP steps

        print()
        tape.main((["--quick"] if opts.quick else []) + (["--cpu"] if opts.clock == "cpu" else []))
    print(f"\ntotal wall time {fmt_time(time.perf_counter() - start)}")
    if opts.json:
        Path(opts.json).write_text(json.dumps(to_json(results), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
