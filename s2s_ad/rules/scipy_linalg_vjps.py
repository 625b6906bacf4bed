"""Helpers of the ``scipy.linalg`` rules for ``expm``, ``sqrtm`` and ``solve_sylvester``,
reached as ``_ad.<name>``.

* ``expm`` and ``solve_sylvester`` are wrappers importing :mod:`scipy.linalg` on first
  call (importing s2s_ad never imports SciPy); :mod:`.scipy_linalg` registers each in the
  rule of the function it wraps, so higher derivatives follow that rule.
* ``expm_frechet`` (the Frechet derivative ``L(A, E)``, the top-right block of
  ``expm([[A, E], [0, A]])``) and ``sqrtm_vjp``/``sqrtm_jvp`` are plain NumPy over those
  wrappers, differentiated from their source for higher derivatives (``FROM_SOURCE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TransformError
from ..runtime import is_zero

if TYPE_CHECKING:  # annotations only: keep the ``_ad`` namespace free of typing names
    from types import ModuleType
    from typing import Any

__all__ = ["expm", "solve_sylvester", "expm_frechet", "sqrtm_vjp", "sqrtm_jvp"]
FROM_SOURCE = ("expm_frechet", "sqrtm_vjp", "sqrtm_jvp")


def _linalg() -> ModuleType:
    import scipy.linalg

    return scipy.linalg


def expm(a: Any) -> Any:
    """``scipy.linalg.expm``."""
    return _linalg().expm(a)


def solve_sylvester(a: Any, b: Any, q: Any) -> Any:
    """``scipy.linalg.solve_sylvester``: ``X`` with ``a X + X b = q``."""
    return _linalg().solve_sylvester(a, b, q)


def expm_frechet(a: Any, e: Any) -> Any:
    """The derivative of ``expm`` at ``a`` in the direction ``e`` (stacks of matrices too):
    the top-right block of ``expm([[a, e], [0, a]])``. The VJP of ``expm`` is
    ``expm_frechet(a.T, g)``."""
    n = np.shape(a)[-1]
    if is_zero(e):
        return np.zeros(np.shape(a))
    e = np.broadcast_to(e, np.shape(a))
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([np.zeros(np.shape(a)), a], axis=-1)
    big = np.concatenate([top, bottom], axis=-2)
    return expm(big)[..., :n, n:]


_COMPLEX_ROOT = "scipy.linalg.sqrtm of a matrix without a real square root (not modelled)"


def sqrtm_vjp(g: Any, ans: Any) -> Any:
    """VJP of ``X = sqrtm(A)``: ``Y`` with ``X^T Y + Y X^T = g`` (``X dX + dX X = dA``)."""
    if np.asarray(ans).dtype.kind == "c":
        raise TransformError(_COMPLEX_ROOT)
    if is_zero(g):
        return np.zeros(np.shape(ans))
    xt = np.swapaxes(ans, -1, -2)
    return solve_sylvester(xt, xt, np.broadcast_to(g, np.shape(ans)))


def sqrtm_jvp(t: Any, ans: Any) -> Any:
    """JVP of ``X = sqrtm(A)``: ``dX`` with ``X dX + dX X = t``."""
    if np.asarray(ans).dtype.kind == "c":
        raise TransformError(_COMPLEX_ROOT)
    return solve_sylvester(ans, ans, np.broadcast_to(t, np.shape(ans)))
