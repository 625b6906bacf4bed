"""Random draws of ``np.random``: no gradient flows through them.

Loaded once ``numpy.random`` is imported (``REGISTRY.defer``): ``import numpy`` does not
import it, and importing it costs more than the rest of the rules (about 40 ms).
"""

from __future__ import annotations

import numpy as np

from .nondiff import _names
from .registry import nondiff

random = nondiff(
    "np.random",
    _names(
        np.random,
        "rand randn randint random random_sample standard_normal seed default_rng "
        "RandomState binomial poisson",
    ),
)
