"""Derivative rules: importing this package registers every rule in ``REGISTRY``.

* :mod:`.operators` -- Python operators (``+ - * / ** @`` ...)
* :mod:`.elementwise` -- ufuncs and ``math`` functions, as partial derivatives
* :mod:`.arrays` -- reductions, linear algebra, shape ops, copies, constructors
* :mod:`.linalg` -- decompositions and the rest of ``np.linalg``
* :mod:`.shapes` -- the rest of NumPy's array manipulation, ``np.r_``/``np.c_``
* :mod:`.shapes_more` -- ``np.cross``, ``np.rollaxis``, ``np.partition``, ``np.ptp``, ...
* :mod:`.more` -- ``np.correlate``, ``np.block``, ``np.choose``, ``order='F'``, ``math.gamma``
* :mod:`.stats` -- ``np.average``, ``np.median``, ``np.nansum``, ``np.cov``, ``np.polyval``, ...
* :mod:`.methods` -- array methods and attributes (``x.sum()``, ``x.T``)
* :mod:`.containers` -- dict methods (``d.items()``, ``d.values()``, ``d.get(k)``)
* :mod:`.corpus` -- ``np.vander``, ``np.insert``, ``np.linalg.cond``, ``np.polyfit``,
  ``statistics.mean``, ``copy.copy``, ... (found missing by JAX's test corpus)
* :mod:`.defaults` -- function values whose defaults are differentiated (``lambda z, s=s:``)
* :mod:`.orderings` -- ``sorted`` and ``min``/``max`` with a key, as an order and a pick
* :mod:`.builtins_rules` -- ``abs sum min max pow float`` and ``math.fsum``
* :mod:`.nondiff` -- callables without gradient
* :mod:`.vjps` -- the helpers templates call as ``_ad.<name>``

SciPy's rules (:mod:`.scipy_special`, :mod:`.scipy_stats`, :mod:`.scipy_linalg`,
:mod:`.scipy_signal`) load
only once the user has imported the SciPy module they cover (``REGISTRY.defer``):
SciPy is optional and importing it costs more than a second. So do the rules of
``np.random``'s draws (:mod:`.numpy_random`): ``import numpy`` does not load
``numpy.random``.
"""

from . import (  # noqa: F401
    arrays,
    builtins_rules,
    containers,
    corpus,
    defaults,
    elementwise,
    fft,
    linalg,
    methods,
    more,
    nondiff,
    numpy2,
    operators,
    orderings,
    shapes,
    shapes_more,
    stats,
    vjps,
)
from .generated_rules import RULES as _helper_rules  # noqa: F401  (the _ad helpers)
from .registry import REGISTRY

REGISTRY.defer("numpy.random", "s2s_ad.rules.numpy_random")
REGISTRY.defer("scipy.special", "s2s_ad.rules.scipy_special")
REGISTRY.defer("scipy.linalg", "s2s_ad.rules.scipy_linalg")
REGISTRY.defer("scipy.stats", "s2s_ad.rules.scipy_stats")
REGISTRY.defer("scipy.signal", "s2s_ad.rules.scipy_signal")

__all__ = ["REGISTRY"]
