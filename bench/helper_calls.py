"""Runtime helper calls (``_ad.<name>(...)``) left in the generated code users read.

For every corpus function (``tests/corpus``, first point) and every benchmark case
(``bench/cases.py``), calls the gradient once, so that the variant for the arguments'
kinds and shape class is made, and counts the helper calls and code lines of the
variant that ran (``s2s_ad.source``), by helper name.

```sh
python bench/helper_calls.py            # corpus and bench cases
python bench/helper_calls.py bench      # only the bench cases
S2S_AD_OPTIMIZE=0 python bench/helper_calls.py   # the general code, nothing lowered
```
"""

from __future__ import annotations

import collections
import contextlib
import copy
import io
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent))  # this checkout's s2s_ad

import cases  # noqa: E402
import numpy as np  # noqa: E402
from corpus import collect  # noqa: E402

import s2s_ad  # noqa: E402


def count(functions: list[tuple[Any, Any, tuple[Any, ...]]]) -> None:
    """Print the helper calls and code lines of the variants that ran."""
    calls: collections.Counter[str] = collections.Counter()
    lines = made = 0
    for fun, wrt, args in functions:
        try:
            df = s2s_ad.grad(fun, wrt)
            with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
                df(*copy.deepcopy(args))
            text = s2s_ad.source(df)
        except Exception:  # noqa: BLE001, S112 (refused functions are not counted)
            continue
        made += 1
        code = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
        lines += len(code)
        calls.update(m.group(1) for m in re.finditer(r"_ad\.(\w+)\(", text))
    print(f"functions {made}, code lines {lines}, _ad calls {sum(calls.values())}")
    for name, n in calls.most_common(12):
        print(f"  {name:24s} {n}")


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    if which in ("all", "corpus"):
        print("corpus (tests/corpus, first point):")
        count([(c.fun, c.wrt, c.args(next(iter(c.points)))) for c in collect()])
    if which in ("all", "bench"):
        print("bench cases (bench/cases.py):")
        count([(c.f, c.wrt, c.inputs(np.random.default_rng(0))) for c in cases.CASES])


if __name__ == "__main__":
    main()
