"""GradientTape shim benchmark: a training step through the tape against the same
gradient from ``s2s_ad.value_and_grad`` called directly (the shim's overhead).

Each round times every case's tape and direct calls in turn; the ratio is taken per
round (median and quartiles reported, with the ratio of the best times). Cases: the
linear-regression step of seed 001 (batch 32), an MLP step (64-128-10, batch 64, tanh)
with its Variables named in the block, the same MLP as a Keras ``Sequential`` model
(Variables found through the layers), and a GAN-like step: two tapes opened by one
``with``, each asked for its own loss (against two ``value_and_grad`` calls). ``--quick``
for CI smoke runs; each timed batch follows an untimed one of the same call (``--cold``:
not); ``--gc`` keeps the garbage collector on while timing, as in a training
loop (off by default, so that a collection triggered by other code is not timed).
``--opcodes`` counts instead the Python opcodes one step of each runs (``sys.settrace``
with opcode events: CPython 3.11 has no ``sys.monitoring``), by function with ``--top N``.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import statistics
import sys
import time
import types
from collections.abc import Callable
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import s2s_ad  # noqa: E402
import s2s_ad.tf as tf  # noqa: E402

# the clock: wall time, or with ``--cpu`` this process's CPU time (time another job takes
# from the process on a shared machine is then not counted)
CLOCK = [time.perf_counter]
# whether the garbage collector stays on in the timed batches (``--gc``: as in a training
# loop, where a step that leaves objects in reference cycles pays for the collections)
KEEP_GC = [False]
# untimed batches before each timed one (``--cold``: none, as before branch ``tfspeed8``)
WARM = [1]


def batch_time(call: Callable[[], Any], number: int) -> float:
    """Per-call seconds of ``number`` calls in a row, after as many untimed ones (unless
    ``--cold``), the garbage collector off (unless ``--gc``).

    The untimed calls take the cost of the first calls after another case, which falls
    on the tape's batch only (each case's tape batch follows the case before, its direct
    batch follows the tape's): the GAN-like step's first call after the MLP case took
    40-130 us more and the 20 that follow about 3 us more each, with the same opcodes
    and no page fault (the machine's caches, warming again).
    """
    clock = CLOCK[0]
    enabled = gc.isenabled()
    if not KEEP_GC[0]:
        gc.disable()
    try:
        for _ in range(WARM[0] * number):
            call()
        start = clock()
        for _ in range(number):
            call()
        return (clock() - start) / number
    finally:
        if enabled:
            gc.enable()


def interleaved(
    pairs: list[tuple[Callable[[], Any], Callable[[], Any]]], rounds: int, number: int
) -> list[list[tuple[float, float]]]:
    """Per case, per round: (tape, direct) per-call seconds, every case timed in turn
    within each round so that a burst of load from a neighbour hits all alike."""
    for tape_call, direct_call in pairs:
        tape_call()
        direct_call()
    out: list[list[tuple[float, float]]] = [[] for _ in pairs]
    for _ in range(rounds):
        for k, (tape_call, direct_call) in enumerate(pairs):
            out[k].append((batch_time(tape_call, number), batch_time(direct_call, number)))
    return out


def linear_loss(w, b, x, y):
    return np.mean(np.square(w * x + b - y))


def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    return np.mean(np.square(h @ w2 + b2 - y))


def gen_loss(g, x, y):
    return np.mean(np.square(g * x - y))


def disc_loss(d, g, x, y):
    return np.mean(np.square(d * x + g - y))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--cpu", action="store_true", help="time CPU time (time.process_time), not wall time"
    )
    parser.add_argument(
        "--gc", action="store_true", help="keep the garbage collector on in the timed batches"
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="no untimed batch before each timed one (a case then pays for the one before)",
    )
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds")
    parser.add_argument("--number", type=int, default=30, help="calls per case per round")
    parser.add_argument(
        "--opcodes", action="store_true", help="count Python opcodes per step instead of timing"
    )
    parser.add_argument("--top", type=int, default=0, help="with --opcodes: the N largest")
    args = parser.parse_args(argv)
    if args.opcodes:
        count_opcodes(make_cases(), args.top)
        return 0
    if args.cpu:
        CLOCK[0] = time.process_time
    KEEP_GC[0] = args.gc
    WARM[0] = 0 if args.cold else 1
    rounds, number = (3, 5) if args.quick else (args.rounds, args.number)
    cases = make_cases()
    timed = interleaved([(t, d) for _, t, d in cases], rounds, number)
    report(cases, timed, args)
    return 0


def make_cases() -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """The cases: (name, the step through the tape, the same by ``value_and_grad``)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(32).astype(np.float32)
    y = (2.0 * x + 1.0).astype(np.float32)
    w, b = tf.Variable(0.5), tf.Variable(0.1)

    def tape_linear() -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * x + b - y))
        return tape.gradient(loss, [w, b])

    direct_linear = s2s_ad.value_and_grad(linear_loss, (0, 1))
    w0, b0 = np.float32(0.5), np.float32(0.1)

    xs = rng.standard_normal((64, 64)).astype(np.float32)
    ys = rng.standard_normal((64, 10)).astype(np.float32)
    params = [
        rng.standard_normal((64, 128)).astype(np.float32) * 0.1,
        np.zeros(128, np.float32),
        rng.standard_normal((128, 10)).astype(np.float32) * 0.1,
        np.zeros(10, np.float32),
    ]
    variables = [tf.Variable(p) for p in params]
    w1, b1, w2, b2 = variables

    def tape_mlp() -> Any:
        with tf.GradientTape() as tape:
            h = np.tanh(xs @ w1 + b1)
            loss = np.mean(np.square(h @ w2 + b2 - ys))
        return tape.gradient(loss, variables)

    direct_mlp = s2s_ad.value_and_grad(mlp_loss, (0, 1, 2, 3))

    # the same MLP as Keras layers: the tape finds the kernels through the model
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(128, activation="tanh", input_shape=(64,)),
            tf.keras.layers.Dense(10),
        ]
    )
    model.set_weights(params)
    mse = tf.keras.losses.MeanSquaredError()

    def tape_keras() -> Any:
        with tf.GradientTape() as tape:
            loss = mse(ys, model(xs, training=True))
        return tape.gradient(loss, model.trainable_variables)

    # two losses of one block, each with its own tape (a GAN's generator and critic)
    g, d = tf.Variable(0.3), tf.Variable(-0.6)

    def tape_gan() -> Any:
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            g_loss = tf.reduce_mean(tf.square(g * x - y))
            d_loss = tf.reduce_mean(tf.square(d * x + g - y))
        return gen_tape.gradient(g_loss, [g]), disc_tape.gradient(d_loss, [d])

    direct_gen = s2s_ad.value_and_grad(gen_loss, 0)
    direct_disc = s2s_ad.value_and_grad(disc_loss, 0)
    g0, d0 = np.float32(0.3), np.float32(-0.6)

    return [
        ("linear regression step", tape_linear, lambda: direct_linear(w0, b0, x, y)),
        ("MLP 64-128-10 step", tape_mlp, lambda: direct_mlp(*params, xs, ys)),
        ("Keras Sequential MLP step", tape_keras, lambda: direct_mlp(*params, xs, ys)),
        (
            "GAN-like step, two tapes",
            tape_gan,
            lambda: (direct_gen(g0, x, y), direct_disc(d0, g0, x, y)),
        ),
    ]


def opcodes_of(call: Callable[[], Any], steps: int = 5) -> collections.Counter[str]:
    """Python opcodes per call of ``call`` (the mean of ``steps`` calls after two
    warm-up calls), by function (``file:line name``)."""
    counts: collections.Counter[str] = collections.Counter()

    def tracer(frame: types.FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        code = frame.f_code
        key = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno} {code.co_name}"

        def local(frame: types.FrameType, event: str, arg: Any) -> Any:
            if event == "opcode":
                counts[key] += 1
            return local

        return local

    call()
    call()
    sys.settrace(tracer)
    try:
        for _ in range(steps):
            call()
    finally:
        sys.settrace(None)
    return collections.Counter({k: v // steps for k, v in counts.items()})


def count_opcodes(cases: list[tuple[str, Any, Any]], top: int) -> None:
    """Print the opcodes per step of each case, through the tape and directly."""
    print("== GradientTape shim: Python opcodes per step (tape / value_and_grad)")
    for name, tape_call, direct_call in cases:
        tape_counts, direct_counts = opcodes_of(tape_call), opcodes_of(direct_call)
        tape_n, direct_n = sum(tape_counts.values()), sum(direct_counts.values())
        print(f"  {name:26} {tape_n:7d} {direct_n:7d} {tape_n / direct_n:5.2f}x")
        for key, n in tape_counts.most_common(top):
            print(f"      {n:6d}  {key}")


def report(
    cases: list[tuple[str, Any, Any]], timed: list[list[tuple[float, float]]], args: Any
) -> None:
    """Print the table of per-call times and per-round ratios."""
    rounds, number = (3, 5) if args.quick else (args.rounds, args.number)
    print("== GradientTape shim: tape.gradient against value_and_grad on the same function")
    clock = "CPU time" if args.cpu else "wall time"
    collector = "collector on" if args.gc else "collector off"
    print(
        f"   ({rounds} interleaved rounds of {number} calls, {clock}, {collector}; ratio per round)"
    )
    print("   best: per-call times and their ratio, the least disturbed by other load;")
    print("   median, q1-q3: of the per-round ratios")
    print(f"  {'case':26} {'tape':>9} {'direct':>9} {'best':>6} {'median':>7} {'q1-q3':>12}")
    for (name, _, _), samples in zip(cases, timed):
        ratios = sorted(t / d for t, d in samples)
        q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        tape_s = min(t for t, _ in samples)
        direct_s = min(d for _, d in samples)
        print(
            f"  {name:26} {tape_s * 1e6:7.1f}us {direct_s * 1e6:7.1f}us "
            f"{tape_s / direct_s:5.2f}x {statistics.median(ratios):6.2f}x "
            f"{q1:5.2f}-{q3:4.2f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
