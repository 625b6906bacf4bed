"""Scatter-adds into a local array (``np.add.at(buf, idx, v)``), lowered to a pure call.

``np.add.at`` writes into its first argument in place: every entry ``idx`` names receives
its share of ``v``, once per time it is named (embedding gradients, histograms, segment
sums). The normal form rebinds the buffer instead::

    np.add.at(buf, idx, v)        ->  buf = _ad.scatter_add(buf, idx, v)
    np.subtract.at(buf, idx, v)   ->  _t = -v; buf = _ad.scatter_add(buf, idx, _t)

``scatter_add``'s rule (:mod:`s2s_ad.rules.generated_rules`) passes the buffer's adjoint
through and gives ``v`` the gather ``g[idx]`` summed down to its shape.

Rebinding equals writing in place only when no other name sees the buffer: before the
call the normalizer's alias check runs (``runtime.not_a_view``), which refuses when the
code runs a buffer that is a view (``row = M[0]``), that another variable names
(``a = buf``) or that a container holds. A buffer that is not a local variable (an
attribute, an element of a list, a global) keeps the call as it is: refused as before
when the gradient depends on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
import numpy as np

from . import ir
from .runtime import scatter_add

if TYPE_CHECKING:  # pragma: no cover
    from .normalize import Normalizer

#: The ufuncs whose ``.at`` is lowered, and whether the added value is negated.
_UFUNCS = ((np.add, False), (np.subtract, True))


def lower_ufunc_at(norm: Normalizer, node: cst.Call) -> bool:
    """Lower the statement ``np.add.at(buf, idx, v)`` (or ``np.subtract.at``) into
    ``norm``'s output when ``buf`` is a local variable; ``False`` (nothing emitted) for
    any other call.

    Args:
        norm: The normalizer lowering the enclosing function.
        node: The call, whose result the statement drops.

    Returns:
        Whether the call was lowered.
    """
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "at":
        return False
    parts = norm.dotted(func.value)
    if parts is None:
        return False
    ufunc = norm.resolve_dotted(parts)
    negate = next((neg for u, neg in _UFUNCS if ufunc is u), None)
    if negate is None:
        return False
    args = node.args
    if len(args) != 3 or any(a.keyword is not None or a.star for a in args):
        return False
    buf = args[0].value
    if not isinstance(buf, cst.Name) or buf.value not in norm.locals:
        return False
    index = norm.atom(args[1].value)
    value = norm.atom(args[2].value)
    if negate:
        neg = norm.fresh()
        norm.assign(neg, ir.UnaryOp("-", value))
        value = ir.Var(neg)
    norm.alias_check(buf.value, node=buf)
    callee = ir.Callee("_ad.scatter_add", scatter_add, resolved=True)
    norm.assign(buf.value, ir.Call(callee, [ir.Var(buf.value), index, value], []))
    return True
