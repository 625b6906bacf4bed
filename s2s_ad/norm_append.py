"""``C[k].append(v)`` on an entry of a local list or dict, lowered to a rebinding.

A log of histories (``log = {"a": [], "b": []}; log["a"].append(h[k])``) or a list of
rows (``rows = [[], []]; rows[0].append(v)``) grows a list held by a container. The
normal form reads the entry, joins the item to it and stores it back::

    log["a"].append(v)   ->  _t = log["a"]; _ad.not_a_view(_t, ..., within=log, grown=True)
                             _t2 = [v]; _t3 = _ad.extend(_t, _t2); log["a"] = _t3

Storing a new list equals appending in place only when nothing else holds the list: the
check refuses, when it runs, an entry that is not a list, or a list that another entry
(``rows = [[]] * 2``), a parameter or a variable read later (``hist = log["a"]``) also
holds. The store into the container is an ordinary element write (its own alias check,
the old entry on the tape).

``d.setdefault(k, v)`` on a local dict (bound only to dicts) becomes the branch it
stands for, its arguments evaluated first as Python does, and then the read ``d[k]``::

    _key = k; _default = v
    if _key not in d:
        d[_key] = _default

so that ``d.setdefault(k, []).append(v)`` is an entry append as above.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from . import ir
from .norm_queries import bound_to_dicts
from .rules.containers import extend
from .runtime import not_a_view

if TYPE_CHECKING:  # pragma: no cover
    from .normalize import Normalizer


def lower_entry_append(norm: Normalizer, node: cst.Call) -> bool:
    """Lower the statement ``C[k].append(v)`` into ``norm``'s output when ``C`` is a local
    variable; ``False`` (nothing emitted) for any other call.

    Args:
        norm: The normalizer lowering the enclosing function.
        node: The call, whose result the statement drops.

    Returns:
        Whether the call was lowered.
    """
    func = node.func
    if not (
        isinstance(func, cst.Attribute)
        and func.attr.value == "append"
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    ):
        return False
    target = func.value
    if isinstance(target, cst.Call) and setdefault_parts(norm, target) is not None:
        target = lower_setdefault(norm, target)
    if not (
        isinstance(target, cst.Subscript)
        and isinstance(target.value, cst.Name)
        and target.value.value in norm.locals
    ):
        return False
    obj = target.value
    assert isinstance(obj, cst.Name)
    name = obj.value
    index = norm.index(target)
    parts = norm.index_parts
    item = norm.atom(node.args[0].value)
    norm.index_parts = parts
    norm.alias_check(name, element=True, node=obj)
    old = norm.fresh()
    norm.assign(old, ir.Subscript(ir.Var(name), index))
    if not norm.generated:
        others = sorted(
            p
            for p in norm.locals
            if p != name and (p in norm.params or norm.scan.live_after(p, obj))
        )
        callee = ir.Callee("_ad.not_a_view", not_a_view, resolved=True)
        args = [ir.Var(old), *(ir.Var(p) for p in others)]
        kwargs = [("within", ir.Var(name)), ("grown", ir.Const("True"))]
        norm.emit(ir.ExprStmt(norm.line, norm.src, ir.Call(callee, args, kwargs)))
    single = norm.fresh()
    norm.assign(single, ir.Build("list", [item]))
    new = norm.fresh()
    joined = ir.Call(
        ir.Callee("_ad.extend", extend, resolved=True), [ir.Var(old), ir.Var(single)], []
    )
    norm.assign(new, joined)
    norm.emit(ir.SetItem(norm.line, norm.src, name, index, ir.Var(new)))
    return True


def setdefault_parts(
    norm: Normalizer, node: cst.BaseExpression
) -> tuple[cst.Name, cst.BaseExpression, cst.BaseExpression] | None:
    """The dict, key and default of ``d.setdefault(k, v)`` (``v`` ``None`` when left out)
    on a local ``d`` bound only to dicts; ``None`` for any other expression."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "setdefault"
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value in norm.locals
        and 1 <= len(node.args) <= 2
        and all(a.keyword is None and not a.star for a in node.args)
        and bound_to_dicts(norm.p.node, node.func.value.value)
    ):
        return None
    default = node.args[1].value if len(node.args) == 2 else cst.Name("None")
    return node.func.value, node.args[0].value, default


def lower_setdefault(norm: Normalizer, node: cst.Call) -> cst.Subscript:
    """Emit ``d.setdefault(k, v)`` (see the module's docstring) into ``norm``'s output;
    the entry ``d[k]`` it returns, to be read or grown by the caller."""
    parts = setdefault_parts(norm, node)
    assert parts is not None
    obj, key, default = parts
    values = [norm.atom(key), norm.atom(default)]  # both evaluated, as Python does
    names: list[cst.BaseExpression] = []
    for base, atom in zip(("_key", "_default"), values):
        name = norm.fresh(base)
        norm.locals.add(name)
        norm.store(cst.Name(name), atom)
        names.append(cst.Name(name))
    entry = cst.Subscript(obj, [cst.SubscriptElement(cst.Index(names[0]))])
    store = cst.Assign([cst.AssignTarget(entry)], names[1])
    test = cst.Comparison(names[0], [cst.ComparisonTarget(cst.NotIn(), obj)])
    norm.statement(cst.If(test, cst.IndentedBlock([cst.SimpleStatementLine([store])])))
    return entry
