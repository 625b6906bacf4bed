"""Recompute an elementwise temporary in the backward sweep, or record it on the tape?

Two hand-written reverse sweeps of ``h = h * np.cos(x[t]) + x[t] ** 2`` (GENERATED.md's
``break`` loop without the ``break``): one pushes ``np.cos(x[t])`` and pops it, the other
recomputes it in the backward sweep (what ``Reverse._rematerializable`` does for a
scalar). Rounds are interleaved and the ratio recompute / push is taken round by round,
for a scalar ``x[t]`` and for rows of growing length::

    python bench/recompute.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np


def _start(x: np.ndarray) -> tuple[list[object], object, object]:
    row = x.shape[1:]
    return [], (np.zeros(row) if row else 0.0), (np.ones(row) if row else 1.0)


def grad_push(x: np.ndarray) -> np.ndarray:
    """The reverse sweep that records ``np.cos(x[t])``."""
    tape, h, h_bar = _start(x)
    for t in range(x.shape[0]):
        c = np.cos(x[t])
        tape.append(h)
        tape.append(c)
        h = h * c + x[t] ** 2
    x_bar = np.zeros_like(x)
    for t in reversed(range(x.shape[0])):
        c = tape.pop()
        h = tape.pop()
        x_bar[t] += h_bar * (2 * x[t]) + h_bar * h * -np.sin(x[t])
        h_bar = h_bar * c
    return x_bar


def grad_recompute(x: np.ndarray) -> np.ndarray:
    """The reverse sweep that recomputes ``np.cos(x[t])`` (``x`` is never written)."""
    tape, h, h_bar = _start(x)
    for t in range(x.shape[0]):
        tape.append(h)
        h = h * np.cos(x[t]) + x[t] ** 2
    x_bar = np.zeros_like(x)
    for t in reversed(range(x.shape[0])):
        h = tape.pop()
        x_bar[t] += h_bar * (2 * x[t]) + h_bar * h * -np.sin(x[t])
        h_bar = h_bar * np.cos(x[t])
    return x_bar


def _ratios(a: Callable[[np.ndarray], object], b: Callable[[np.ndarray], object], x: np.ndarray):
    out = []
    for _ in range(15):
        t0 = time.perf_counter()
        a(x)
        t1 = time.perf_counter()
        b(x)
        t2 = time.perf_counter()
        out.append((t2 - t1) / (t1 - t0))
    return out


def main() -> None:
    """Print recompute / push per shape of ``x`` (median, min and max over rounds)."""
    rng = np.random.default_rng(0)
    for shape in [(1000,), (1000, 16), (500, 128), (100, 4096)]:
        x = rng.uniform(0.1, 0.5, size=shape)
        np.testing.assert_allclose(grad_push(x), grad_recompute(x))
        r = _ratios(grad_push, grad_recompute, x)
        print(
            f"x {shape}: recompute / push {statistics.median(r):.3f} "
            f"(min {min(r):.3f}, max {max(r):.3f})"
        )


if __name__ == "__main__":
    main()
