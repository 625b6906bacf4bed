"""What holds the memory of a generated gradient: its peak and the names alive at its return.

For each case of ``bench/cases.py`` (or those named), the peak memory of one call of the
hand-written gradient and of the generated one (``tracemalloc``, as ``bench/run.py``
measures it), then the names the generated gradient still holds when it returns, largest
first (what a release after the last use, or a record not kept, could give back)::

    python bench/memory.py                       # every case
    python bench/memory.py scalar_loop recurrence
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CASES  # noqa: E402
from run import fmt_bytes, peak_bytes  # noqa: E402

import s2s_ad  # noqa: E402


def _size(value: Any) -> int:
    """Bytes a value holds itself (an array's buffer, a list's slots and items)."""
    if isinstance(value, np.ndarray):
        return value.nbytes if value.base is None else 0
    size = sys.getsizeof(value)
    if isinstance(value, (list, tuple)):
        size += sum(sys.getsizeof(v) for v in value if isinstance(v, float))
    return size


def alive_at_return(grad: Any, args: tuple[Any, ...]) -> dict[str, tuple[str, int]]:
    """Name -> (type, bytes) of the locals of the generated function when it returns
    (its parameters left out: the caller holds them)."""
    found: dict[str, tuple[str, int]] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "return" and code.co_filename.startswith("<s2s_ad:"):
            params = set(code.co_varnames[: code.co_argcount])
            found.update(
                (k, (type(v).__name__, _size(v)))
                for k, v in frame.f_locals.items()
                if k not in params and not isinstance(v, ModuleType)
            )

    sys.setprofile(profile)
    try:
        grad(*args)
    finally:
        sys.setprofile(None)
    return found


def main(names: list[str]) -> None:
    """Print each case's peaks and the names its gradient holds at its return."""
    for case in CASES:
        if names and case.name not in names:
            continue
        args = case.inputs(np.random.default_rng(0))
        df = s2s_ad.grad(case.f, wrt=case.wrt)
        df(*args)  # the variant for these shapes made
        hand = peak_bytes(lambda case=case, args=args: case.grad(*args))
        ours = peak_bytes(lambda df=df, args=args: df(*args))
        print(
            f"== {case.name}: hand-written {fmt_bytes(hand)}, s2s_ad {fmt_bytes(ours)} "
            f"({ours / hand:.2f}x)"
        )
        alive = alive_at_return(df, args)
        total = sum(size for _, size in alive.values())
        print(f"   {len(alive)} names alive at the return, {fmt_bytes(total)}:")
        for name, (kind, size) in sorted(alive.items(), key=lambda kv: -kv[1][1])[:12]:
            print(f"   {name:>14} {kind:<10} {fmt_bytes(size):>10}")


if __name__ == "__main__":
    main(sys.argv[1:])
