"""The progress lines ``fit``, ``evaluate`` and ``predict`` print, in Keras 2's format.

``verbose=1``: a bar redrawn in place (backspaces and a carriage return, as Keras 2
writes it on a POSIX system) at most every 0.05 s and at the end::

    4/4 [==============================] - 0s 2ms/step - loss: 0.7418 - mae: 0.6909

``verbose=2``: one line per epoch, written when it ends::

    4/4 - 0s - loss: 0.0406 - mae: 0.1589 - 8ms/epoch - 2ms/step

The times are this process's, so they differ from TensorFlow's by nature; so does which
intermediate bars are drawn (that depends on how long the steps take).
"""

from __future__ import annotations

import sys
import time
from typing import Any

_WIDTH = 30  # characters of the bar between its brackets
_INTERVAL = 0.05  # seconds between two redraws of the bar


def verbosity(verbose: Any) -> int:
    """``'auto'`` is 1, as in Keras 2 outside distribution strategies."""
    return 1 if verbose == "auto" else int(verbose)


class Progbar:
    """The progress of ``target`` steps, written to ``sys.stdout``.

    Args:
        target: The number of steps.
        verbose: 1 for the bar, 2 for one line at the end, 0 for nothing.
    """

    def __init__(self, target: int, verbose: int = 1) -> None:
        self.target = target
        self.verbose = verbose
        self._start = time.time()
        self._last_update = 0.0
        self._width = 0  # of the bar line last written (to rub it out)

    def update(
        self, current: int, values: dict[str, Any] | None = None, finalize: bool = False
    ) -> None:
        """Show step ``current`` with the logged ``values`` (already averaged); at
        ``finalize`` the elapsed time and time per step instead of the ETA."""
        if not self.verbose or (self.verbose == 2 and not finalize):
            return
        now = time.time()
        elapsed = now - self._start
        per_step = elapsed / current if current else 0.0
        metrics = "".join(_metric(k, v) for k, v in (values or {}).items())
        count = f"{current:>{len(str(self.target))}}/{self.target}"
        if self.verbose == 1:
            if now - self._last_update < _INTERVAL and not finalize:
                return
            line = f"{count} [{_bar(current, self.target)}]"
            if finalize:
                line += f" - {elapsed:.0f}s {_per(per_step, 'step')}"
            else:
                line += f" - ETA: {_eta(per_step * (self.target - current))}"
            line += metrics
            shown = line + " " * max(0, self._width - len(line))
            sys.stdout.write("\b" * self._width + "\r" + shown + ("\n" if finalize else ""))
            self._width = len(line)
        elif self.verbose == 2 and finalize:
            line = f"{count} - {elapsed:.0f}s{metrics} - {_per(elapsed, 'epoch')}"
            sys.stdout.write(line + f" - {_per(per_step, 'step')}\n")
        sys.stdout.flush()
        self._last_update = now


def _bar(current: int, target: int) -> str:
    done = int(_WIDTH * current / target) if target else _WIDTH
    bar = "=" * max(0, done - 1)
    if done > 0:
        bar += ">" if current < target else "="
    return bar + "." * (_WIDTH - done)


def _metric(name: str, value: Any) -> str:
    value = float(value)
    return f" - {name}: {value:.4f}" if abs(value) > 1e-3 else f" - {name}: {value:.4e}"


def _eta(seconds: float) -> str:
    if seconds > 3600:
        return f"{int(seconds // 3600)}:{int(seconds % 3600 // 60):02d}:{int(seconds % 60):02d}"
    if seconds > 60:
        return f"{int(seconds // 60)}:{int(seconds % 60):02d}"
    return f"{seconds:.0f}s"


def _per(seconds: float, unit: str) -> str:
    """``'20ms/step'``: a time per unit in s, ms or us."""
    if seconds >= 1 or seconds == 0:
        return f"{seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/{unit}"
    return f"{seconds * 1e6:.0f}us/{unit}"
