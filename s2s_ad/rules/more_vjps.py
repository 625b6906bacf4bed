"""Helpers of the rules in :mod:`.more` (``np.correlate``, ``np.choose``, ``order='F'``
reshapes, ``math.gamma`` ...) reached as
``_ad.<name>``.

Plain NumPy, so that the transformer can differentiate them from their source for higher
derivatives (``FROM_SOURCE``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..runtime import is_zero

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from typing import Any

__all__ = [
    "correlate_vjp_a",
    "correlate_vjp_v",
    "choose_vjp",
    "ravel_vjp",
    "digamma_scalar",
    "block_vjp",
]
FROM_SOURCE = (
    "correlate_vjp_a",
    "correlate_vjp_v",
    "choose_vjp",
    "ravel_vjp",
    "block_vjp",
)
