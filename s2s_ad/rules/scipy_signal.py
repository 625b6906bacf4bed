"""``scipy.signal.convolve`` (N-dimensional, modes ``full``, ``valid``, ``same``).

Loaded only once the user has imported :mod:`scipy.signal` (see ``REGISTRY.defer``).
Linear in each input: the VJP correlates the cotangent, placed in the full-size output,
with the other input (``_ad.signal_convolve_vjp``).
"""

from __future__ import annotations

import numpy as np
import scipy.signal

from . import scipy_vjps as W
from .registry import set_jvps, vjp_rule

_V = np.array([0.6, -1.3, 0.9, 2.1, -0.4, 1.1])
_W = np.array([1.1, -0.4, 0.7])
_A = np.sin(np.arange(1.0, 13.0)).reshape(3, 4)
_K = np.array([[0.5, -0.3], [1.4, 0.6]])

convolve = vjp_rule(
    "scipy.signal.convolve",
    [scipy.signal.convolve, W.signal_convolve],
    ("in1", "in2", "mode", "method"),
    {
        "in1": "_ad.signal_convolve_vjp(g, in1, in2, mode, 0)",
        "in2": "_ad.signal_convolve_vjp(g, in1, in2, mode, 1)",
    },
    [
        (_V, _W),
        (_W, _V),
        (_V, _W, "valid"),
        (_W, _V, "valid"),
        (_V, _W, "same"),
        (_W, _V, "same"),
        (_A, _K),
        (_A, _K, "valid"),
        (_A, _K, "same"),
        (_K, _A, "same"),
    ],
    defaults={"mode": "'full'", "method": "'auto'"},
    linear=True,
)
set_jvps(
    convolve,
    in1="_ad.signal_convolve(t, in2, mode)",
    in2="_ad.signal_convolve(in1, t, mode)",
)
# its VJP is linear in the cotangent (the adjoint of the convolution): for higher
# derivatives; in the inputs themselves it is not modelled (refused when differentiated)
convolve_vjp = vjp_rule(
    "_ad.signal_convolve_vjp",
    [W.signal_convolve_vjp],
    ("ct", "in1", "in2", "mode", "wrt"),
    {"ct": "_ad.signal_convolve(in1 if wrt else g, g if wrt else in2, mode)"},
    [
        (np.cos(np.arange(8.0)), _V, _W, "full", 0),
        (np.cos(np.arange(8.0)), _V, _W, "full", 1),
        (np.cos(np.arange(6.0)), _V, _W, "same", 1),
        (np.cos(np.arange(4.0)), _W, _V, "valid", 0),
        (np.cos(np.arange(6.0)).reshape(2, 3), _A, _K, "valid", 1),
    ],
    linear=True,
)
set_jvps(convolve_vjp, ct="_ad.signal_convolve_vjp(t, in1, in2, mode, wrt)")
