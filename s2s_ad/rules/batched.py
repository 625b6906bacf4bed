"""Batched forward-mode templates: how the rules that are not elementwise carry a batch
of tangents along a leading axis (``t`` has shape ``(B,) + shape``; ``_batch`` is
:mod:`s2s_ad.batching`). Rules not listed here run their one-column template once per
column, which is exact but slower.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import runtime as _rt
from . import vjps as _vjps
from .registry import REGISTRY, set_batched

_SUM = "_batch.reduce_sum(t, axis, keepdims)"
_MEAN = "_batch.reduce_mean(t, axis, keepdims)"

for _func, _templates in [
    (np.sum, {"a": _SUM}),
    (np.mean, {"a": _MEAN}),
    (operator.matmul, {"x": "_batch.matmul_x(t, y, ans)", "y": "_batch.matmul_y(x, t, ans)"}),
    (np.dot, {"a": "_batch.dot_a(t, b, ans)", "b": "_batch.dot_b(a, t, ans)"}),
    (np.transpose, {"a": "_batch.transpose(t, axes)"}),
    (np.reshape, {"a": "_batch.reshape(t, np.shape(ans))"}),
    (np.ravel, {"a": "_batch.reshape(t, -1)"}),
    (_rt.unbroadcast, {"ct": "_batch.unbroadcast(t, x)"}),
    (_vjps.sum_vjp, {"ct": "_batch.sum_vjp(t, a, axis, keepdims)"}),
    (_vjps.mean_vjp, {"ct": "_batch.mean_vjp(t, a, axis, keepdims)"}),
    (
        _vjps.matmul_vjp_x,
        {"ct": "_batch.matmul_vjp_x(t, x, y)", "y": "_batch.matmul_vjp_x_wrt_y(ct, x, t)"},
    ),
    (
        _vjps.matmul_vjp_y,
        {"ct": "_batch.matmul_vjp_y(t, x, y)", "x": "_batch.matmul_vjp_y_wrt_x(ct, t, y)"},
    ),
]:
    _rule = REGISTRY.lookup(_func)
    assert _rule is not None, _func
    set_batched(_rule, **_templates)

set_batched(REGISTRY.methods["sum"], self=_SUM)
set_batched(REGISTRY.methods["mean"], self=_MEAN)
set_batched(REGISTRY.methods["dot"], self="_batch.dot_a(t, b, ans)", b="_batch.dot_b(self, t, ans)")
set_batched(REGISTRY.methods["reshape"], self="_batch.reshape(t, np.shape(ans))")
set_batched(REGISTRY.methods["ravel"], self="_batch.reshape(t, -1)")
set_batched(REGISTRY.methods["flatten"], self="_batch.reshape(t, -1)")
set_batched(REGISTRY.attrs["T"], self="_batch.transpose(t)")
