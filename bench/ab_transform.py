"""Time the transform of the generated 300-line function with two copies of s2s_ad loaded
in one process, alternating round by round (the way transform-time changes are measured
on a shared machine, where separate processes drift apart by more than the change).

```sh
cp -r /path/to/old/s2s_ad /tmp/base/s2s_base      # the old package under another name
PYTHONPATH=$PWD python bench/ab_transform.py /tmp/base/s2s_base --rounds 12
```

Each round transforms a fresh copy of the function (a new module) with each package, in
an order that alternates, and calls the gradient once (a new variant). Printed: CPU time
best / median per package and the median of the per-round ratios (new / base).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generated  # noqa: E402

import s2s_ad  # noqa: E402


def _load_base(folder: Path) -> ModuleType:
    """Import the package copy at ``folder`` under its folder's name."""
    sys.path.insert(0, str(folder.parent))
    return importlib.import_module(folder.name)


def _one(package: Any, module: ModuleType, args: tuple[Any, ...]) -> tuple[float, float]:
    """CPU seconds of ``grad()`` of ``module.long_loss`` and of its first call."""
    gc.collect()
    c0 = time.process_time()
    df = package.grad(module.long_loss)
    c1 = time.process_time()
    df(*args)
    c2 = time.process_time()
    return c1 - c0, c2 - c1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="folder of the old package, renamed")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--lines", type=int, default=300)
    args = parser.parse_args(argv)
    base = _load_base(args.base.resolve())
    rng = np.random.default_rng(0)
    call_args = (rng.standard_normal((4, 3)), rng.standard_normal((5, 4)), rng.standard_normal(3))
    packages = {"base": base, "new": s2s_ad}
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in packages}
    for r in range(args.rounds + 1):  # round 0 warms both up
        order = list(packages) if r % 2 else list(reversed(packages))
        for name in order:
            module = generated.write_module(args.lines, name=f"ab_{name}_{r}")
            cold, first = _one(packages[name], module, call_args)
            if r:
                times[name].append((cold, first))
    for i, what in enumerate(("cold grad()", "first call")):
        cols = {k: [t[i] * 1e3 for t in v] for k, v in times.items()}
        ratios = [n / b for n, b in zip(cols["new"], cols["base"])]
        print(
            f"{what}: base {min(cols['base']):.0f} / {statistics.median(cols['base']):.0f} ms, "
            f"new {min(cols['new']):.0f} / {statistics.median(cols['new']):.0f} ms, "
            f"ratio {statistics.median(ratios):.2f}x "
            f"(rounds {min(ratios):.2f}-{max(ratios):.2f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
