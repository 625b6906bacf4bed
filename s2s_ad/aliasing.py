"""Which variables may share memory with an array that is written in place.

The tape keeps a reference to the value it records. When that value is an array another
name also sees (``a = d; a = np.sin(a) * w; d[0] = 1.0``: the push at the second line
records the array ``d`` names), a later in-place write through the other name changes the
recorded value; the backward sweep then undoes that write (in place) before it reads the
record (``Reverse._shared_with_recorded``).

The analysis is flow-insensitive: each variable gets the set of variables whose arrays it
may be (or be a view of) over all its assignments. A plain copy, an index, an attribute
(``x.T``), an unpacking, a container holding it (``[a, b]``, ``xs.append(a)``), a
loop over an array and a call that may return its argument or a
view of it (``x.reshape``, ``np.asarray``, a user's function) link their target to their
operands; arithmetic and NumPy's other functions make new arrays. ``normalize`` uses the
names of the view-making functions to refuse writes a live view would see.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from . import ir

#: NumPy functions that may return their argument or a view of it.
VIEW_FUNCTIONS = frozenset(
    {
        "asarray",
        "asanyarray",
        "ascontiguousarray",
        "asfortranarray",
        "reshape",
        "ravel",
        "transpose",
        "squeeze",
        "expand_dims",
        "swapaxes",
        "moveaxis",
        "rollaxis",
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        "broadcast_to",
        "broadcast_arrays",
        "diagonal",
        "real",
        "imag",
        "split",
        "array_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "matrix_transpose",
        "permute_dims",
        "flip",
        "fliplr",
        "flipud",
        "rot90",
        "diag",  # of a matrix: its diagonal, a view (of a vector: a new matrix)
        "trim_zeros",
        "asarray_chkfinite",
        "require",
        "real_if_close",
        "asmatrix",
        "unstack",
        "sliding_window_view",
    }
)

#: Array methods that may return the array itself or a view of it.
VIEW_METHODS = frozenset(
    {"reshape", "ravel", "view", "transpose", "squeeze", "swapaxes", "diagonal", "__getitem__"}
    | {"conj", "conjugate"}  # of a real array: the array itself
    | {"astype"}  # with copy=False (a write is refused only while the result is read later)
)


def _returns_view(call: ir.Call) -> bool:
    """Whether a call may return one of its operands or a view of one."""
    callee = call.callee
    if callee.method is not None:
        obj = callee.obj
        if obj is None or _is_numpy(obj):
            return callee.method in VIEW_METHODS
        return True
    obj = callee.obj
    if isinstance(obj, np.ufunc):
        return False
    if _is_numpy(obj):
        return getattr(obj, "__name__", "") in VIEW_FUNCTIONS
    return True  # a user's function may hand back its argument


def _is_numpy(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == "numpy" or module.startswith("numpy.")


def _operands(call: ir.Call) -> Iterable[ir.Atom]:
    yield from call.args
    yield from (a for _, a in call.kwargs)
    if call.callee.receiver is not None:
        yield call.callee.receiver
    if call.star is not None:
        yield call.star


def sources(stmts: Iterable[ir.Stmt]) -> dict[str, set[str]]:
    """For each variable assigned from another one's array, the variables it comes from.

    ``stmts`` holds every statement, nested ones included (``analysis.walk``).
    """
    links: dict[str, set[str]] = {}

    def link(target: str, atoms: Iterable[ir.Atom | None]) -> None:
        names = {a.name for a in atoms if isinstance(a, ir.Var) and a.name != target}
        if names:
            links.setdefault(target, set()).update(names)

    for s in stmts:
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, ir.Copy):
                link(s.target, [v.value])
            elif isinstance(v, (ir.Subscript, ir.Attr)):
                link(s.target, [v.obj])
            elif isinstance(v, ir.Call) and _returns_view(v):
                link(s.target, _operands(v))
            elif isinstance(v, ir.Build):  # a list, tuple or dict holds its entries' arrays
                link(s.target, v.elts)
        elif isinstance(s, ir.Append):  # xs.append(a): the list holds a's array
            link(s.obj, [s.value])
        elif isinstance(s, ir.Unpack):
            for t in s.targets:
                link(t, [s.value])
        elif isinstance(s, ir.For) and s.iterable is not None:
            link(s.target, [s.iterable])
    return links


def bases(stmts: Iterable[ir.Stmt]) -> dict[str, frozenset[str]]:
    """Each linked variable's bases: itself and every variable its array may come from."""
    links = sources(stmts)
    out: dict[str, frozenset[str]] = {}

    def reach(var: str) -> frozenset[str]:
        seen, todo = {var}, [var]
        while todo:
            for nxt in links.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return frozenset(seen)

    for var in links:
        out[var] = reach(var)
    for var in {b for bs in out.values() for b in bs}:
        out.setdefault(var, frozenset({var}))
    return out


def may_share(a: str, b: str, base: dict[str, frozenset[str]]) -> bool:
    """Whether variables ``a`` and ``b`` may name one array (or views of one)."""
    return bool(base.get(a, {a}) & base.get(b, {b}))
