"""docs/optimizations.md: each optimization of the generated code as before/after.

"Before" is the generated function as the reverse pass builds it, the optimizer off and
for arguments of any shape (``python -m s2s_ad FILE.py:FUNC --stage sweeps``); "after"
is what runs (``s2s_ad.source(df)`` after a call with float64 arrays: optimized, and
lowered for the call's shape class). Written by ``python docs/generate.py``.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

import examples
import s2s_ad
from s2s_ad.stages import stage


def mlp_layer(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def soft_features(x, a):
    y = np.sin(x) * a + np.exp(-x * x)
    z = np.tanh(y) ** 2 + np.log1p(y * y)
    return np.sum(z * np.cos(x))


def square_sum(x):
    return np.sum(x * x)


def smoothed(x, k):
    y = x
    for _ in range(k):
        y = 0.5 * (y + np.sin(y))
    return np.sum(y)


def branchy(x, n):
    s = x
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + math.sin(x * i)
        else:
            s = s + x * x
    return s


def leaky_energy(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            total = total + w * x[i] ** 2
        else:
            total = total + 0.1 * w * x[i]
    return total


def shrink(v, w, tol):
    while np.linalg.norm(v) > tol:
        z = np.tanh(v * w)
        v = 0.5 * z
    return np.sum(v * v)


def _args_leaky(rng: np.random.Generator) -> tuple[Any, ...]:
    return rng.normal(size=6), 1.3


def _args_shrink(rng: np.random.Generator) -> tuple[Any, ...]:
    return rng.normal(size=4), rng.normal(size=4), 1e-3


def _args_branchy(rng: np.random.Generator) -> tuple[Any, ...]:
    return 0.9, 10


def _args_mlp(rng: np.random.Generator) -> tuple[Any, ...]:
    return rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(8, 4)), rng.normal(size=3)


def _args_soft(rng: np.random.Generator) -> tuple[Any, ...]:
    return rng.standard_normal(100_000), 0.7


def _args_x(rng: np.random.Generator) -> tuple[Any, ...]:
    return (rng.normal(size=5),)


def _args_smoothed(rng: np.random.Generator) -> tuple[Any, ...]:
    return rng.normal(size=5), 3


def _args_early(rng: np.random.Generator) -> tuple[Any, ...]:
    return np.abs(rng.normal(size=6)) * np.array([1, 1, 1, -1, 1, 1]), 6


#: (title, what the optimization does, function, wrt, arguments of the call).
EXAMPLES: list[tuple[str, str, Callable[..., Any], Any, Callable[..., tuple[Any, ...]]]] = [
    (
        "A dense layer: shapes known",
        "With the shapes of the arguments known (a *shape class*: sizes as symbols), the "
        "runtime helpers become the NumPy they stand for: the seed of a scalar output is "
        "`1.0`, a mean's adjoint stays a scalar that the next line broadcasts, an "
        "`unbroadcast` between equal shapes disappears and the one over the batch is the "
        "`.sum(axis=0)` it does, and a matrix product's adjoint is `x.T @ g`. Copies are "
        "propagated, temporaries read once are folded back into the line that reads them "
        "(the forward sweep gets the user's line back), dead stores go.",
        mlp_layer,
        (0, 1),
        _args_mlp,
    ),
    (
        "Arrays released after their last use",
        "Once the shapes are known, a name that holds an array and is bound at the top of "
        "the function is released (`del`) right after the last statement that reads it, "
        "when a later statement computes another array (`s2s_ad/release.py`). Before, "
        "every array the forward sweep made lived until the return, through the whole "
        "backward sweep; now NumPy reuses the released buffers for the adjoints made next. "
        "On a 100,000-vector the peak memory of this gradient (`tracemalloc`) goes from "
        "10.7 to 8.4 MiB (the elementwise chain of `bench/`, this function and one line "
        "more: 1.19x to 0.99x the hand-written gradient's peak). Not in code differentiated again "
        "(`del` is outside what the transformer reads), and not in the general variant, "
        "where nothing tells an array from a float.",
        soft_features,
        (0, 1),
        _args_soft,
    ),
    (
        "Contributions merged",
        "`x * x` reads `x` twice: the two contributions to `x_bar` are one product, doubled "
        "(the same value to the last bit), and the first contribution is assigned, not added "
        "to a zero.",
        square_sum,
        0,
        _args_x,
    ),
    (
        "A loop that overwrites its variable",
        "Each trip overwrites `y`, whose old value the adjoint of `np.sin` reads: `y` alone "
        "is pushed before it is overwritten and popped in the backward sweep. Shapes known, "
        "`np.sum`'s adjoint is `np.full` and the `unbroadcast`s between equal shapes go.",
        smoothed,
        0,
        _args_smoothed,
    ),
    (
        "Per-trip records in a list of the loop's own",
        "Each trip records which branch it took (its test reads `s`, which the trips "
        "change). The test is read by nothing but the `if`, in a loop over `range(n)` "
        "that runs every trip: the record of the loop's own is made whole before the loop, "
        "one byte per trip (`bytearray(n)`: 1 KiB for 1000 trips where a list of "
        "`[False] * n` took 8 KiB, at about 8% of the gradient's time here, CPython "
        "indexing lists faster than bytes), the trips that take the branch set their "
        "entry, and backward trip `i` reads entry `i` (before: `_t1_tape.append(True)` / "
        "`append(False)` in the branches, and `for i, _t1 in "
        "zip(reversed(range(n)), reversed(_t1_tape)):` with `if _t1:`; about 5% of the "
        "gradient's time here). A loop whose trip count is not known before it (a "
        "`while`, a `break`) appends a byte per trip (`bytearray()`, `append(1)` / "
        "`append(0)`). No tape pop per trip, and "
        "here no tape at all (both loops are at the top of "
        "the function, the list stays a local). Values only the shapes needed (`s`, "
        "`x * i`) are no longer recorded once shapes are known, and `x * x` contributes "
        "`2.0 * (s_bar * x)` (a float: CPython multiplies two floats faster than an int "
        "and a float).",
        branchy,
        0,
        _args_branchy,
    ),
    (
        "A branch tested again instead of recorded",
        "The test `x[i] > 0` reads only what no trip of its loop changes (`x` is never "
        "written, `i` is the loop's variable), so the backward trip tests it again: "
        "nothing is stored that is still available. This happens in the sweeps already "
        "(the test is a recomputed temporary, like `x[i]`), so the code before the "
        "optimizer has no flag either; until then each trip recorded its branch "
        "(`_t3_tape.append(True)` / `append(False)` in the forward loop, "
        "`for i, _t3 in zip(reversed(range(x.shape[0])), reversed(_t3_tape)):` and "
        "`if _t3:` in the backward one). A test on a value the trips change (`if s > 1.0` "
        "above) is still recorded.",
        leaky_energy,
        0,
        _args_leaky,
    ),
    (
        "Per-trip records of a `while` loop",
        "`z` is recorded in every trip the backward loop reverses (after the loop's test, "
        "before any jump), so it goes into a list of the loop's own, as in a `for` loop. "
        "The backward loop, which only counted the trips (`for _k in range(_trips5):`), "
        "walks the list instead (`for z in reversed(_z_tape):`), the trip count goes, and "
        "with it the `while True:` / `if not ...: break` form it needed: the test is back "
        "in the loop's header. "
        "The same holds in a loop with `break` or `continue` for a value recorded and "
        "assigned before the jump (or, when the trip that breaks is not reversed, after "
        "every `break`); what comes after a jump stays on the tape.",
        shrink,
        0,
        _args_shrink,
    ),
    (
        "A loop with a `break` (GENERATED.md's second target)",
        "Nothing with an adjoint runs in a trip before its `break`, so the trip is counted "
        "at its end: the trip that breaks is not counted, and neither sweep needs an exit "
        "flag (the backward loop reverses every trip it counts, without a guard). In the "
        "variant for a 1-d `x` (what runs), `x[i]` is a scalar, so `np.cos(x[i])` is "
        "recomputed in the backward sweep instead of recorded: one push per trip (`s`, "
        "which the trip overwrites). Both contributions to `x_bar[i]` are gathered into one "
        "`x_bar[i] += ...` before `s_bar` is overwritten, and the seed of the float result "
        "is `1.0`.",
        examples.for_break,
        0,
        _args_early,
    ),
]

INTRO = """# The generated code before and after the optimizer

s2s_ad first writes the adjoint statement by statement, the way the rules say (the
*sweeps*: `python -m s2s_ad FILE.py:FUNC --stage sweeps`), general enough for arguments
of any shape. Then `s2s_ad/optimize.py` removes what the result does not need (dead
stores, dead tape pushes and pops, copies) and merges contributions, and at the first call
with arrays `s2s_ad/lower.py` rewrites the runtime helpers as the plain NumPy they do for
that call's shape class. Each section below shows one function, the code before (the
sweeps, optimizer off) and after (what runs: `s2s_ad.source(df)` after a call), and how
many lines and runtime-helper (`_ad.`) calls each has. This page is written by
`python docs/generate.py` (a test checks it is current). Every optimization keeps the
gradient: the tests compare it with the optimizer on and off (`S2S_AD_OPTIMIZE=0`).
"""


def _counts(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    helpers = len(re.findall(r"\b_ad\d*\.\w+\(", text))
    return f"{len(lines)} lines, {helpers} helper call{'s' if helpers != 1 else ''}"


def render() -> str:
    """The page."""
    parts = [INTRO]
    for title, what, fun, wrt, make_args in EXAMPLES:
        names = list(inspect.signature(fun).parameters)
        chosen = (wrt,) if isinstance(wrt, int) else wrt
        before = stage(fun, "sweeps", tuple(names[i] for i in chosen))
        df = s2s_ad.grad(fun, wrt)
        df(*make_args(np.random.default_rng(0)))
        after = s2s_ad.source(df)
        parts.append(f"\n## {title}\n\n{what}\n\n```python\n{inspect.getsource(fun)}```\n")
        parts.append(f"\nBefore ({_counts(before)}):\n\n```python\n{before}```\n")
        parts.append(f"\nAfter ({_counts(after)}):\n\n```python\n{after}```\n")
    return "".join(parts)
