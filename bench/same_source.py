"""Dump the generated source of many gradients, to check a transform-time change keeps the
generated code byte for byte.

```sh
PYTHONPATH=$PWD python bench/same_source.py before.txt     # on the old code
PYTHONPATH=$PWD python bench/same_source.py after.txt      # on the new code
cmp before.txt after.txt
```

What is dumped: for every corpus function (``tests/corpus``), every real program
(``tests/programs_real``) and every bench case (``bench/cases.py``), ``s2s_ad.source`` of
its gradient before the first call and after each call (each call may make a variant,
and a lowered variant per shape class); for two generated long functions
(``bench/generated.py``), the same for calls with arrays, with a float where an array
was, and for a second ``grad`` with other ``wrt``. A transform that fails is dumped as
its error message, so a change in what is refused shows up too.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import cases  # noqa: E402
import generated  # noqa: E402

import s2s_ad  # noqa: E402

Call = tuple[str, tuple[Any, ...]]


def _jobs() -> Iterator[tuple[str, Callable[..., Any], Any, list[Call]]]:
    """``(label, function, wrt, calls)`` for every function dumped."""
    import corpus
    import programs_real

    for c in corpus.collect():
        calls = [(point, c.args(point)) for point in c.points]
        yield c.label, c.fun, c.wrt, calls
    for p in programs_real.collect():
        yield p.label, p.fun(), p.wrt, [("args", p.args)]
    for c in cases.CASES:
        yield f"bench.{c.name}", c.f, c.wrt, [("inputs", c.inputs(np.random.default_rng(0)))]
    rng = np.random.default_rng(0)
    w, x, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 4)), rng.standard_normal(3)
    w2, x2, b2 = rng.standard_normal((6, 2)), rng.standard_normal((3, 6)), rng.standard_normal(2)
    for n_lines, seed in ((300, 0), (120, 1)):
        module = generated.write_module(n_lines, seed, name=f"same_source_{n_lines}_{seed}")
        calls = [("arrays", (w, x, b)), ("b float", (w, x, 0.5)), ("other shapes", (w2, x2, b2))]
        for wrt in (0, (0, 2)):
            yield f"generated[{n_lines}, {seed}]", module.long_loss, wrt, calls


def _source(df: Callable[..., Any]) -> str:
    try:
        return s2s_ad.source(df)
    except Exception as exc:  # noqa: BLE001 - dumped, compared as text
        return f"<source failed: {type(exc).__name__}: {exc}>"


def dump(out: Path) -> int:
    """Write every source to ``out``; returns the number of functions dumped."""
    np.seterr(all="ignore")
    parts: list[str] = []
    n = 0
    for label, fun, wrt, calls in _jobs():
        n += 1
        head = f"=== {label} wrt={wrt!r}"
        try:
            df = s2s_ad.grad(fun, wrt)
        except Exception as exc:  # noqa: BLE001
            parts.append(f"{head}: grad failed: {type(exc).__name__}: {exc}\n")
            continue
        parts.append(f"{head}: cold\n{_source(df)}\n")
        for point, args in calls:
            try:
                df(*args)
                parts.append(f"{head} after {point}\n{_source(df)}\n")
            except Exception as exc:  # noqa: BLE001
                last = traceback.format_exception_only(type(exc), exc)[-1].strip()
                parts.append(f"{head} after {point}: call failed: {last}\n")
    out.write_text("".join(parts))
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="file to write the sources to")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    n = dump(args.out)
    print(f"{n} functions, {args.out.stat().st_size} bytes -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
