"""Interleaved wall-clock timing for noisy shared machines.

Every implementation of one case is timed in rounds: each round runs one batch of calls
of every implementation in turn, so a burst of load from a neighbour hits all of them
alike instead of one. Each batch is long enough (``batch_seconds``) for
the clock to be precise, the garbage collector is off during a batch (as in
:mod:`timeit`), and the per-call time reported is the minimum over batches (the median
is kept too, as a noise indicator).

The clock is wall time (``time.perf_counter``) or, with :func:`use_clock` ``("cpu")``, the
CPU time of the process (``time.process_time``: user and system time of all its threads).
On a machine shared with other jobs, a wall-time batch also counts the time the process
waited for a core; CPU time does not, so ratios stay steady under load (cache and memory
bandwidth shared with the other jobs still slow every implementation a little). Every
library is pinned to one thread by the scripts, so CPU time is the work done.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: The clock batches are timed with (see :func:`use_clock`); a list so it can be swapped.
CLOCK: list[Callable[[], float]] = [time.perf_counter]
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def use_clock(name: str) -> None:
    """Time batches with ``"wall"`` (``time.perf_counter``) or ``"cpu"`` time
    (``time.process_time``)."""
    CLOCK[0] = CLOCKS[name]


@dataclass(frozen=True)
class Settings:
    """How long to measure.

    Attributes:
        batch_seconds: Target duration of one batch of calls.
        rounds: Maximum number of rounds (batches per implementation).
        budget_seconds: An implementation stops being timed once it has used this much
            time and has ``min_samples`` batches.
        min_samples: Batches every implementation gets, however slow.
    """

    batch_seconds: float
    rounds: int
    budget_seconds: float
    min_samples: int


FULL = Settings(batch_seconds=0.04, rounds=25, budget_seconds=2.0, min_samples=3)
QUICK = Settings(batch_seconds=0.005, rounds=4, budget_seconds=0.15, min_samples=1)


@dataclass
class Timer:
    """Samples of one implementation's per-call time.

    Attributes:
        call: Zero-argument callable to time.
        number: Calls per batch (set by :meth:`calibrate`).
        samples: Per-call seconds of each batch.
        spent: Wall time used so far, warm-up and calibration included.
        final: No more batches (set for calls so slow that one sample is enough).
    """

    call: Callable[[], Any]
    number: int = 1
    samples: list[float] = field(default_factory=list)
    spent: float = 0.0
    final: bool = False

    def _batch(self, number: int) -> float:
        call = self.call
        enabled = gc.isenabled()
        gc.disable()
        try:
            clock = CLOCK[0]
            start = clock()
            for _ in range(number):
                call()
            elapsed = clock() - start
        finally:
            if enabled:
                gc.enable()
        self.spent += elapsed
        return elapsed

    def calibrate(self, first_call_seconds: float, settings: Settings) -> None:
        """Choose the batch size from a warm-up that has already run once.

        Args:
            first_call_seconds: Duration of the first (warm-up) call.
            settings: The run's settings.
        """
        self.spent += first_call_seconds
        if first_call_seconds >= settings.batch_seconds:
            # the first call may have done one-time work (a variant generated, a JIT
            # compile): a batch of one call only if a second call is as slow
            if self._batch(1) >= settings.batch_seconds:
                self.number = 1
                return
        # A second warm-up call; then grow the batch until it is long enough to estimate.
        number = 1
        while True:
            elapsed = self._batch(number)
            if elapsed >= settings.batch_seconds / 5 or number >= 1_000_000:
                break
            number *= 4
        per_call = elapsed / number
        self.number = max(1, math.ceil(settings.batch_seconds / max(per_call, 1e-9)))

    def done(self, settings: Settings) -> bool:
        """Whether this implementation has been measured enough."""
        n = len(self.samples)
        return (
            self.final
            or n >= settings.rounds
            or (n >= settings.min_samples and self.spent >= settings.budget_seconds)
        )

    def run_batch(self) -> None:
        """Time one batch and record its per-call time."""
        self.samples.append(self._batch(self.number) / self.number)

    @property
    def best(self) -> float:
        """Minimum per-call time over batches."""
        return min(self.samples)

    @property
    def median(self) -> float:
        """Median per-call time over batches."""
        return statistics.median(self.samples)


def run_interleaved(timers: list[Timer], settings: Settings) -> None:
    """Time every timer in rounds until each has enough samples or has used its budget."""
    while True:
        active = [t for t in timers if not t.done(settings)]
        if not active:
            return
        for timer in active:
            timer.run_batch()


def warm_up(call: Callable[[], Any]) -> tuple[Any, float]:
    """Call once; return the result and the duration."""
    clock = CLOCK[0]
    start = clock()
    out = call()
    return out, clock() - start
