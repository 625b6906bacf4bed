"""``_ad.restore_item(obj, key, old)`` of a backward sweep that is differentiated again.

A first-order backward sweep undoes ``obj[key] = v`` on a dict with
``_ad.restore_item(obj, key, old)``: it writes the saved entry back, or removes the key
when ``old`` is the marker ``old_item`` returns for a key the dict did not hold. Grad of
grad differentiates that sweep: the call is lowered to the write it is
(:class:`~s2s_ad.ir.SetItem` marked ``restore``), which the sweeps undo like any keyed
write, never by transforming ``runtime.restore_item``'s source.
"""

from __future__ import annotations

from . import ir
from .runtime import restore_item


def restores(value: ir.Expr) -> bool:
    """Whether ``value`` is ``_ad.restore_item(obj, key, old)`` on a local name ``obj``."""
    return (
        isinstance(value, ir.Call)
        and value.callee.resolved
        and value.callee.obj is restore_item
        and len(value.args) == 3
        and isinstance(value.args[0], ir.Var)
        and not value.kwargs
        and value.star is None
        and value.starstar is None
    )


def restore_write(line: int, src: str, call: ir.Call) -> ir.SetItem:
    """The keyed write ``obj[key] = old`` a :func:`restores` call makes (``restore``)."""
    obj, key, old = call.args
    assert isinstance(obj, ir.Var)
    reads = (key.name,) if isinstance(key, ir.Var) else ()
    return ir.SetItem(line, src, obj.name, ir.Index(str(key), reads), old, restore=True)
