"""Gradient rules for the ``tf`` functions a training step calls most.

``tf.square``, ``tf.reduce_sum`` and ``tf.reduce_mean`` are otherwise differentiated from
their source, which wraps NumPy (``tensor(np.square(x))``): a generated forward and
backward function per call, with the reduction's branches. As rules, the generated code
calls them once and writes their adjoint inline, as for ``np.square`` and ``np.mean``.
"""

from __future__ import annotations

import numpy as np

from ..rules.registry import set_jvps, vjp_rule
from .math import square
from .ops import reduce_mean, reduce_sum

_A = np.array([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]])
_AXES = "tuple(axis) if isinstance(axis, list) else axis"  # TensorFlow's axis, as NumPy's

square_rule = vjp_rule(
    "tf.square",
    [square],
    ("x", "name"),
    {"x": "g * (2.0 * np.asarray(x))"},
    [(_A,), (0.7,)],
    defaults={"name": "None"},
)
set_jvps(square_rule, x="t * (2.0 * np.asarray(x))")

_REDUCE = {"axis": "None", "keepdims": "False", "name": "None"}
_SAMPLES = [(_A,), (_A, 1), (_A, 0, True), (_A, [0, 1])]

sum_rule = vjp_rule(
    "tf.reduce_sum",
    [reduce_sum],
    ("x", "axis", "keepdims", "name"),
    {"x": "_ad.sum_vjp(g, np.asarray(x), axis, keepdims)"},
    _SAMPLES,
    defaults=_REDUCE,
    linear=True,
)
set_jvps(sum_rule, x=f"np.sum(t, {_AXES}, keepdims=keepdims)")

mean_rule = vjp_rule(
    "tf.reduce_mean",
    [reduce_mean],
    ("x", "axis", "keepdims", "name"),
    {"x": "_ad.mean_vjp(g, np.asarray(x), axis, keepdims)"},
    _SAMPLES,
    defaults=_REDUCE,
    linear=True,
)
set_jvps(mean_rule, x=f"np.mean(t, {_AXES}, keepdims=keepdims)")
