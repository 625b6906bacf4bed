"""The few helpers generated code calls, reached there as ``_ad.<name>``.

Adjoints use ``0.0`` as the zero of any value (it broadcasts); the helpers here accept
it wherever an adjoint can be zero.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from . import duck
from .along import along_finish, along_rows, apply_along_axis  # noqa: F401 (as _ad.*)
from .built_objects import (  # noqa: F401 (build_record, *record_*: called as _ad.*)
    build_record,
    is_record,
    new_record,
    new_record_parts,
    new_record_tangent,
    record_parts,
    record_tangent,
    super_method,
)
from .endless import endless as _endless
from .errors import TransformError
from .passed_objects import computed_attribute
from .view_checks import view_of  # noqa: F401 (called as _ad.view_of)

_is_foreign = duck.is_foreign  # a local name: runtime helpers are the _ad namespace
_ndarray = np.ndarray
_float = float
_float64 = np.float64
_add_reduce = np.add.reduce
_ndarray_sum = np.ndarray.sum
_zeros = np.zeros
_ARRAY_HOLDERS = duck.ARRAY_HOLDERS


def unbroadcast(g: Any, x: Any) -> Any:
    """Sum ``g`` down to the shape of ``x`` (undoes NumPy broadcasting)."""
    tg = type(g)
    if tg is _ndarray:  # the common case first (the same steps as below)
        tx = type(x)
        if tx is _ndarray:
            xshape = x.shape
        elif tx is _float:
            return _add_reduce(g, None)  # what g.sum() calls, without its Python frame
        elif tx in _ARRAY_HOLDERS:  # a tf Variable: its array's shape (a plain tuple)
            xshape = x.value.shape
        else:
            xshape = np.shape(x)
        if g.shape == xshape:
            return g
        return _reduce_to(g, xshape)
    if tg is _float or tg is _float64:
        return g
    if type(x) is _float:
        return g.sum() if isinstance(g, _ndarray) or _is_foreign(g) else g
    # an array whose ``sum`` is ndarray's (a tf tensor; not np.matrix, np.ma)
    array = isinstance(g, _ndarray) and tg.sum is _ndarray_sum
    if array or isinstance(g, _ndarray) or _is_foreign(g):  # other subclasses, Dask too
        if type(x) is _ndarray:
            xshape = x.shape
        elif type(x) in _ARRAY_HOLDERS:  # a tf Variable: its array's shape (a plain tuple)
            xshape = x.value.shape
        else:
            xshape = np.shape(x)
        if g.shape == xshape:
            return g
        return _reduce_to(g, xshape, array)
    if tg in (list, tuple) and isinstance(x, (list, tuple)) and len(g) != len(x):
        raise _concat_refusal()
    return g


def _reduce_to(g: Any, xshape: tuple[int, ...], array: bool = True) -> Any:
    """:func:`unbroadcast` of an array ``g`` whose shape is not ``xshape``; ``array``: its
    ``sum`` is ndarray's, called as ``np.add.reduce`` without its Python frame."""
    if not xshape:
        return _add_reduce(g, None) if array else g.sum()
    extra = g.ndim - len(xshape)
    if extra:
        lead = tuple(range(extra))
        g = _add_reduce(g, lead) if array else g.sum(axis=lead)
    gshape = g.shape
    axes = tuple([i for i, n in enumerate(xshape) if n == 1 and gshape[i] != 1])
    if axes:
        g = _add_reduce(g, axes, None, None, True) if array else g.sum(axis=axes, keepdims=True)
    return g


def unbroadcast_vjp(ct: Any, like: Any) -> Any:
    """Adjoint of ``g`` in ``unbroadcast(g, x)`` where ``g`` was ``like``: ``ct``
    broadcast back to ``like``'s shape; ``ct`` as it is where ``like`` is a container
    (a tuple of saved values, which ``unbroadcast`` returns unchanged); summed down where
    ``ct`` is larger than ``like`` (a scalar zero ``g`` returned as it is, then broadcast)."""
    if isinstance(like, (list, tuple, dict)) or like is None:
        return ct
    if np.size(ct) > np.size(like):
        return unbroadcast(ct, like)
    return np.broadcast_to(ct, np.shape(like))


def _concat_refusal() -> TransformError:
    """``a + b`` of two lists or tuples the normalizer could not tell were containers."""
    return _refusal_here(  # at the user's line
        "list concatenation with '+' of two named lists or tuples",
        "annotate a parameter as a container (def f(enc: list, dec: list)), build the "
        "list with append, or write one side as a literal (a + [b, c])",
    )


def zeros_like(x: Any) -> Any:
    """A zero adjoint with the structure of ``x`` (floats for non-float leaves)."""
    tx = type(x)
    if tx is _ndarray and x.flags.c_contiguous:  # what np.zeros_like gives, without its frame
        return _zeros(x.shape, x.dtype if x.dtype.kind in "fc" else _float64)
    if isinstance(x, np.ndarray):
        if np.issubdtype(x.dtype, np.inexact):
            return np.zeros_like(x)
        return np.zeros(x.shape)
    if tx is tuple or tx is list:
        parts = [zeros_like(v) for v in x]
        return parts if tx is list else tuple(parts)
    if isinstance(x, tuple):
        return tuple([zeros_like(v) for v in x])
    if isinstance(x, list):
        return [zeros_like(v) for v in x]
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    if isinstance(x, np.generic) and np.issubdtype(x.dtype, np.inexact):
        return x.dtype.type(0)
    return 0.0


def entry_tangent(t: Any, x: Any) -> Any:
    """The tangent ``t`` of a container's entry ``x`` as the operand of a rule that is not
    elementwise (a matrix product): the symbolic zero of an entry without a tangent
    becomes zeros shaped like ``x`` (also what :func:`pop_tangent` gives back)."""
    if type(x) is _ndarray and is_zero(t):
        return zeros_like(x)
    return t


def is_zero(g: Any) -> bool:
    """Whether ``g`` is the symbolic zero ``0.0`` (or ``None``)."""
    return g is None or (type(g) is _float and g == 0.0)


def add(a: Any, b: Any) -> Any:
    """Sum of two adjoints of the same structure (tuples, lists and dicts elementwise)."""
    if type(a) is _ndarray and type(b) is _ndarray:
        return a + b
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, (tuple, list)):
        parts = []
        for u, v in zip(a, b):
            parts.append(u + v if type(u) is _ndarray and type(v) is _ndarray else add(u, v))
        return parts if isinstance(a, list) else tuple(parts)
    if isinstance(a, dict):
        if a.keys() == b.keys():
            return {k: add(a[k], b[k]) for k in a}
        # an entry missing on one side has a zero adjoint (records' fields; a dict the
        # backward sweep shrank again, as ``restore_item`` does, in forward mode over it)
        return {k: add(a.get(k, 0.0), b.get(k, 0.0)) for k in {**a, **b}}
    return a + b


def getitem(g: Any, index: Any) -> Any:
    """``g[index]`` where ``g`` may be the symbolic zero (or a dict without that key).

    A part of an array never shares memory with ``g`` (``g`` may be updated in place
    later); an entry of a container is returned as is.
    """
    if type(g) is _ndarray and type(index) is int and g.ndim == 1:
        return g[index]
    if is_zero(g) or index is UNREACHED:
        return 0.0
    if index is WHOLE:
        return g
    if isinstance(g, dict):
        return g.get(index, 0.0)
    if type(index) is str and is_record(g):  # a field of a dataclass tangent
        return getattr(g, index)
    if type(index) is str and type(g) is _ndarray and not g.any():
        return 0.0  # a record's zero made dense (zeros of a 0-d shape) has zero fields
    if type(g) is _float or type(g) is _float64:  # of a 0-d array (``y[mask]`` of one)
        g = np.asarray(g)
    part = g[index]
    return part.copy() if isinstance(part, _ndarray) else part


_MISSING = object()
#: ``_ad.DELETED`` in generated code: ``del d[key]`` is ``restore_item(d, key, DELETED)``
DELETED = _MISSING


def old_item(obj: Any, index: Any) -> Any:
    """The entry about to be overwritten (a marker when a dict has no such key yet).

    ``index`` (a list index or a dict key) is named as the other helpers' positions are:
    an argument that never has a gradient, also when a tape hands it back in code
    differentiated again."""
    if isinstance(obj, dict):
        return copy(obj.get(index, _MISSING))
    return copy(obj[index])


def old_item_vjp(obj: Any, key: Any, g: Any) -> Any:
    """Adjoint of ``obj`` for ``old_item(obj, key)``: ``g`` at ``key``; nothing when a
    dict had no such key (the marker returned has no adjoint)."""
    if isinstance(obj, dict) and key not in obj:
        return 0.0
    return add_at(0.0, obj, key, g)


def restore_item(obj: Any, key: Any, old: Any) -> None:
    """Undo ``obj[key] = ...`` with the value ``old_item`` saved (the marker: the key was
    new, it is removed again; also ``del d[key]`` of a dict)."""
    if old is _MISSING:
        if not isinstance(obj, dict):  # a list's entries would shift: never undone so
            raise TypeError(f"del of an entry of a {type(obj).__name__}, not a dict")
        del obj[key]
    else:
        obj[key] = old


def add_at(x_bar: Any, x: Any, index: Any, g: Any) -> Any:
    """Adjoint of ``x[index]`` read: ``x_bar`` plus ``g`` scattered at ``index``.

    Returns a new value; ``x_bar`` is not modified (it may alias another adjoint).
    """
    if is_zero(g) or index is HANDED or index is UNREACHED:
        return x_bar
    if index is WHOLE:
        return add(x_bar, g)
    if type(index) is str and is_record(x):  # a record's field: its adjoint is a dict
        out_r = dict(x_bar) if isinstance(x_bar, dict) else {}
        out_r[index] = add(out_r.get(index, 0.0), unbroadcast(g, getattr(x, index)))
        return out_r
    tg, tb = type(g), type(x_bar)
    if (
        type(x) is _ndarray
        and (tg is _ndarray or tg is _float or tg is _float64)
        and (tb is _ndarray or tb is _float or x_bar is None)
    ):  # plain NumPy: the steps below, without the checks for containers and other libraries
        if tb is _ndarray:
            out_a = np.array(x_bar, dtype=np.result_type(x_bar, g))
        elif x_bar is None or x_bar == 0.0:
            out_a = _zeros(x.shape, x.dtype if x.dtype.kind in "fc" else _float64)
        else:
            out_a = np.array(x_bar, dtype=np.result_type(x_bar, g))
        if tg is _ndarray and g.ndim:
            g = unbroadcast(g, out_a[index])
        if _basic(index):
            out_a[index] += g
        else:
            np.add.at(out_a, index, g)
        return out_a
    if isinstance(x, (tuple, list)):
        out = list(zeros_like(x) if is_zero(x_bar) else x_bar)
        if isinstance(index, slice):
            for pos, val in zip(range(*index.indices(len(x))), g):
                out[pos] = add(out[pos], unbroadcast(val, x[pos]))
        else:
            out[index] = add(out[index], unbroadcast(g, x[index]))
        return out if isinstance(x, list) else tuple(out)  # a namedtuple's adjoint: a tuple
    if isinstance(x, dict):
        out_d = dict(zeros_like(x) if is_zero(x_bar) else x_bar)
        out_d[index] = add(out_d.get(index, 0.0), unbroadcast(g, x[index]))
        return out_d
    if (type(x) is not _ndarray and _is_foreign(x)) or (
        type(x_bar) not in (_ndarray, _float) and _is_foreign(x_bar)
    ):  # Dask, CuPy: stay in that library
        out_a = np.zeros_like(x, dtype=float) if is_zero(x_bar) else duck.writable_copy(x_bar, g)
    elif is_zero(x_bar):
        out_a = np.zeros(np.shape(x))
        if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.inexact):
            out_a = out_a.astype(x.dtype, copy=False)
        if _complex(g):  # kept complex: a real input's complex gradient is refused later
            out_a = out_a.astype(np.result_type(out_a, g))
    else:
        out_a = np.array(x_bar, dtype=np.result_type(x_bar, g))
    if (isinstance(g, _ndarray) or _is_foreign(g)) and g.ndim:
        g = unbroadcast(g, out_a[index])
    if _basic(index):
        out_a[index] += g
    else:
        np.add.at(out_a, index, g)
    return out_a


def scatter_add(a: Any, index: Any, b: Any) -> Any:
    """``np.add.at(a, index, b)`` on a copy of ``a``: the buffer after a scatter-add, where
    an entry ``index`` names several times receives every addition. ``a`` is unchanged.

    Generated code calls it for a user's ``np.add.at(buf, idx, v)`` (and ``np.subtract.at``
    with ``-v``), rebinding ``buf`` to the result (see :mod:`s2s_ad.scatter`).
    """
    out = a.copy() if isinstance(a, np.ndarray) else np.array(a)
    np.add.at(out, index, b)
    return out


def _complex(g: Any) -> bool:
    """Whether ``g`` is a complex number or array (which a real array would truncate)."""
    tg = type(g)
    if tg is _float:
        return False
    return tg is complex or tg is np.complex128 or (tg is _ndarray and g.dtype.kind == "c")


def _basic(index: Any) -> bool:
    """Whether an index selects each element at most once (ints, slices, None, ...)."""
    ti = type(index)
    if ti is int or ti is slice:
        return True
    if isinstance(index, (int, np.integer, slice)) or index is None or index is Ellipsis:
        return True
    return type(index) is tuple and all(_basic(i) for i in index if type(i) is not tuple)


def add_at_owned(x_bar: Any, x: Any, index: Any, g: Any) -> Any:
    """``add_at`` that may write into ``x_bar`` (an array no other adjoint shares)."""
    if index is HANDED or index is UNREACHED:
        return x_bar
    if index is WHOLE or (type(index) is str and is_record(x)):
        return add_at(x_bar, x, index, g)
    if (type(x_bar) is list and isinstance(x, (list, tuple))) or (
        type(x_bar) is dict and isinstance(x, dict)
    ):
        # a dense adjoint of a container: each entry adds by its own structure
        x_bar[index] = add(getitem(x_bar, index), unbroadcast(g, x[index]))
        return x_bar
    if type(x_bar) is _ndarray and not isinstance(x, (tuple, list, dict)):
        if _complex(g) and x_bar.dtype.kind != "c":
            return add_at(x_bar, x, index, g)  # a complex part into a real array: promoted
        if isinstance(g, _ndarray) and g.ndim:
            g = unbroadcast(g, x_bar[index])
        if _basic(index):
            x_bar[index] += g
        else:
            np.add.at(x_bar, index, g)
        return x_bar
    return add_at(x_bar, x, index, g)


def zero_at_owned(x_bar: Any, index: Any) -> Any:
    """``zero_at`` that may write into ``x_bar`` (an array no other adjoint shares)."""
    if type(x_bar) is _ndarray:
        x_bar[index] = 0
        return x_bar
    return zero_at(x_bar, index)


def pack(x: Any, parts: Any) -> Any:
    """Adjoint of unpacking ``a, b = x``: the parts' adjoints in the structure of ``x``.

    A container part no adjoint reached is the symbolic zero: its structure may have
    changed since (a saved tape a backward sweep has already popped)."""
    parts = [
        (0.0 if isinstance(v, (list, tuple, dict)) else zeros_like(v)) if p is None else p
        for v, p in zip(x, parts)
    ]
    if isinstance(x, np.ndarray):
        return np.stack([np.broadcast_to(p, x.shape[1:]) for p in parts])
    if isinstance(x, list):
        return parts
    return tuple(parts)


def seed(ans: Any) -> Any:
    """The cotangent ``1`` for a scalar output, or ``ValueError`` naming the shape."""
    t = type(ans)
    if t is float or t is np.float64:
        return 1.0
    if t is np.ndarray and ans.size == 1:
        return np.ones(ans.shape, dtype=ans.dtype if ans.dtype.kind in "fc" else np.float64)
    shape = np.shape(ans)
    size = int(np.prod(shape)) if shape else 1
    if size != 1 or isinstance(ans, (tuple, list, dict)):
        raise ValueError(
            f"grad requires a scalar output, got shape {shape}; "
            "use s2s_ad.vjp or s2s_ad.jacobian for non-scalar outputs"
        )
    if isinstance(ans, np.ndarray):
        dtype = ans.dtype if np.issubdtype(ans.dtype, np.inexact) else np.float64
        return np.ones(shape, dtype=dtype)
    return 1.0


def dense(x_bar: Any, x: Any) -> Any:
    """A fresh adjoint a loop may update element by element: a float array shaped like ``x``
    (a list for a list, a dict for a dict)."""
    if isinstance(x, np.ndarray):
        if is_zero(x_bar):
            return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind == "f" else float)
        return np.array(np.broadcast_to(x_bar, x.shape), dtype=np.result_type(x_bar, 0.0))
    if isinstance(x, (list, tuple)):
        return list(zeros_like(x)) if is_zero(x_bar) else list(x_bar)
    if isinstance(x, dict):
        return zeros_like(x) if is_zero(x_bar) else dict(x_bar)
    return x_bar


_SCALARS = (float, int, np.float64, np.float32)


def copy(x: Any) -> Any:
    """A copy of a value about to be written in place (arrays, lists, dicts)."""
    if type(x) in _SCALARS:
        return x
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, dict)):
        return type(x)(x) if isinstance(x, list) else dict(x)
    return x


def last_writes(shape: tuple[int, ...], index: Any) -> Any:
    """For a write ``y[index] = v`` into an array of ``shape``: ``None`` when ``index``
    selects each entry at most once, else a boolean mask shaped like ``y[index]``'s leading
    axes, true where the entry is written for the last time (NumPy keeps the last write
    of a repeated index, ``y[[0, 0]] = [1, 2]`` leaves 2)."""
    if _basic(index) or isinstance(index, (dict, str)):
        return None
    kind = getattr(index, "dtype", None)
    if kind is not None and kind.kind == "b":
        return None  # a mask selects each entry once
    if type(index) is not tuple and shape:
        where = np.asarray(index)
        if where.dtype.kind not in "iu":
            return None
        where = where % shape[0]  # -1 and n - 1 are the same row
    else:
        where = np.arange(int(np.prod(shape))).reshape(shape)[index]
    flat = where.ravel()
    _, first = np.unique(flat[::-1], return_index=True)
    if first.size == flat.size:
        return None
    keep = np.zeros(flat.size, dtype=bool)
    keep[flat.size - 1 - first] = True
    return keep.reshape(where.shape)


def keep_last(part: Any, y: Any, index: Any) -> Any:
    """``part``, shaped like ``y[index]``, with zeros where ``index`` names an entry of
    ``y`` that it names again later (the writes NumPy's ``y[index] = v`` overwrites)."""
    if type(index) is int or type(y) is not _ndarray or is_zero(part):
        return part
    keep = last_writes(y.shape, index)
    if keep is None:
        return part
    return part * keep.reshape(keep.shape + (1,) * (np.ndim(part) - keep.ndim))


def written(g: Any, index: Any) -> Any:
    """The cotangent of ``v`` in ``y[index] = v`` from ``y``'s cotangent ``g``: ``g[index]``,
    except that an entry written more than once passes ``g`` only to its last write."""
    return keep_last(getitem(g, index), g, index)


def zero_at(x_bar: Any, index: Any) -> Any:
    """``x_bar`` with the entries at ``index`` set to zero (a new value)."""
    if is_zero(x_bar):
        return x_bar
    if isinstance(x_bar, dict):
        out_d = dict(x_bar)
        out_d[index] = 0.0
        return out_d
    if isinstance(x_bar, (list, tuple)):
        out = list(x_bar)
        # an entry that is a container: the symbolic zero (the entry the sweep restores
        # may be a list of another length, ``rows[1] = rows[1] + [v]`` in a loop)
        entry = out[index]
        nested = not isinstance(index, slice) and isinstance(entry, (list, tuple, dict))
        out[index] = 0.0 if nested else zeros_like(entry)
        return type(x_bar)(out)
    out_a = np.array(x_bar, dtype=float) if not isinstance(x_bar, np.ndarray) else x_bar.copy()
    out_a[index] = 0
    return out_a


def set_attribute(obj: Any, name: str, value: Any) -> None:
    """``obj.name = value`` in code differentiated in variables mode (tapes): counters and
    flags are state; a float value could carry a gradient the tape would lose: refused."""
    if _floating(value):
        raise TransformError(
            f"a float value stored in the attribute .{name} of {type(obj).__name__} while "
            "a tape differentiates",
            hint="keep state in a tf.Variable (assign/assign_add), or return the value",
        )
    setattr(obj, name, value)


class GradTable(dict):
    """A tape run's table of adjoints by ``id`` (see :data:`VARIABLE_GRADS`), which also
    holds the float values ``obj.a = v`` stored while it runs (kept alive: their ids
    are keys of the table until :func:`stored_gradient` takes their adjoint out)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.stored: dict[int, Any] = {}


def store_attribute(obj: Any, name: str, value: Any) -> None:
    """``obj.name = value`` in the forward sweep of a tape's code (variables mode): a
    float value's later reads (``variable_grad``) add to the table under its ``id``,
    taken out by :func:`stored_gradient` in the backward sweep; where no tape table
    runs, as :func:`set_attribute`."""
    if getattr(VARIABLE_GRADS, "stored", None) is None or not note_stored(value):
        set_attribute(obj, name, value)
        return
    setattr(obj, name, value)


def note_stored(value: Any) -> bool:
    """Make the later reads of a float array stored on an object (``obj.a = value``,
    ``self.add_loss(value)``) add to the running tape's table under its ``id``; whether
    it can (a tape's table runs, the value is not a Python float)."""
    table = VARIABLE_GRADS
    stored = getattr(table, "stored", None)
    if stored is None or not _floating(value) or type(value) is _float:
        return False
    key = id(value)
    if key not in table:  # a Variable the tape differentiates: its reads add to it
        table[key] = 0.0
        stored[key] = value
    return True


def stored_gradient(value: Any) -> Any:
    """The adjoint the reads of a value stored by :func:`store_attribute` added."""
    table = VARIABLE_GRADS
    stored = getattr(table, "stored", None)
    key = id(value)
    if stored is None or stored.pop(key, None) is None:
        return 0.0
    g = table.pop(key)
    return 0.0 if type(g) is _float and g == 0.0 else g


def _floating(value: Any) -> bool:
    return isinstance(value, (float, complex, np.floating, np.complexfloating)) or (
        isinstance(value, np.ndarray) and value.dtype.kind in "fc"
    )


def check_state_call(method: Any, *varied: Any) -> None:
    """A method called for its effect in variables mode: fine when it cuts the gradient
    (``Variable.assign``) or no float value it is given may carry one; refused when it
    may change a differentiated array in place."""
    from .rules import REGISTRY

    rule = REGISTRY.lookup(getattr(method, "__func__", method))
    if rule is not None and rule.nondiff:
        return
    owner = getattr(method, "__self__", None)
    if isinstance(owner, np.ndarray) or any(_floating(v) for v in varied):
        name = getattr(method, "__qualname__", None) or type(method).__name__
        raise _refusal_here(
            f"call to {name} whose result is not used, with values a tape differentiates",
            hint="assign its result: changes a called function makes in place are not "
            "differentiated",
        )


def not_a_view(
    x: Any,
    *aliases: Any,
    entry: bool = False,
    at: Any = None,
    within: Any = None,
    grown: bool = False,
) -> None:
    """Refuse an in-place write that another name would see.

    ``v = y[1:3]; v *= 3`` changes ``y``; ``z = y; y *= 2`` (or ``z = y.reshape(-1);
    y[0] = 1``) changes ``z``; ``rows = [h]; h[0] = 1`` changes ``rows[0]``; ``b = a;
    b.append(v)`` changes the list ``a``. The generated code keeps each name's value apart,
    so such code is refused when it runs. ``aliases`` are the other names that may share
    ``x`` or hold it (in a list, tuple or dict, at any depth); ``entry``: ``x`` was read
    out of a container or an object (``row = grid[i]``), so a list or dict is refused;
    ``at``: the index of an element write (``x[at] = v``), so that a view of other entries
    (``h = H[t, :]; H[t + 1, :] = v``) is left alone; ``within``: ``x`` is the entry
    ``a[k]`` of the list, tuple or dict ``within`` about to be updated in place
    (``a[k] += v``), refused when another entry or one of ``aliases`` also holds it
    (``a = [v, v]``): the generated code rebinds the entry; with ``grown``, ``x`` is a
    list entry about to be appended to (``log["a"].append(v)``, rebound as a longer list):
    refused unless it is a list that no other entry and none of ``aliases`` hold.
    """
    if grown:
        _check_grown(x, within, aliases)
        return
    if within is not None:
        if isinstance(x, np.ndarray) and isinstance(within, (list, tuple, dict)):
            entries = within.values() if isinstance(within, dict) else within
            seen = sum(1 for e in entries if e is x or _overlaps(e, x, None) or _holds(e, x))
            if seen > 1 or any(a is x or _overlaps(a, x, None) or _holds(a, x) for a in aliases):
                raise _refusal_here(
                    "an in-place update of an entry of a list or dict holding an array "
                    "another entry or variable also holds (a = [v, v]; a[0] += ...)",
                    hint="write a[k] = a[k] + ..., or store copies (a = [v.copy(), v.copy()])",
                )
        return
    if isinstance(x, (list, dict)):
        if entry:
            raise _refusal_here(
                "a write into a list or dict read out of another container or an object "
                "(row = grid[i]; row[k] = ...)",
                hint="build a new container (row = list(grid[i])) and store it back",
            )
        if any(a is x or _holds(a, x) for a in aliases):
            raise _refusal_here(
                "a write into a list or dict another variable also names or holds "
                "(b = a; b[k] = ...)",
                hint="build a new container (b = list(a) or dict(a)) before writing into it",
            )
        return
    if not isinstance(x, np.ndarray):
        return
    if x.base is not None:
        raise _refusal_here(
            "an in-place update of a view (v = y[...]; v op= ...)",
            hint="update y[...] directly, or copy the slice first",
        )
    if any(a is x or _overlaps(a, x, at) for a in aliases):
        raise _refusal_here(
            "an in-place update of an array another variable also names (z = y; y op= ...)",
            hint="write y = y op ... , or copy the array first",
        )
    if any(_holds(a, x) for a in aliases):
        raise _refusal_here(
            "an in-place update of an array a list, tuple or dict also holds "
            "(rows = [h]; h[0] = ...)",
            hint="store a copy (rows.append(h.copy())), or write into a new array",
        )


def _check_grown(x: Any, within: Any, aliases: tuple[Any, ...]) -> None:
    """Refuse ``within[k].append(v)`` where the entry ``x`` is not a list, or where the
    list is also held by another entry of ``within`` (``rows = [[]] * 2``) or by one of
    ``aliases`` (``hist = log["a"]``), which Python's append would change as well."""
    if not isinstance(x, list):
        raise _refusal_here(
            f"an .append() on an entry of a container that is a {type(x).__name__}, not a list",
            hint="store lists in the container, or build the value with +",
        )
    entries = within.values() if isinstance(within, dict) else within
    seen = sum(1 for e in entries if e is x or _holds(e, x))
    if seen > 1 or any(_reaches(a, x, within) for a in aliases):
        raise _refusal_here(
            "an .append() on a list in a container that another entry or variable also "
            "holds (rows = [[]] * 2; rows[0].append(v))",
            hint="build each entry as its own list (rows = [[] for _ in range(2)])",
        )


def _reaches(obj: Any, x: Any, skip: Any) -> bool:
    """Whether ``obj`` is ``x`` or holds it (in lists, tuples and dicts, at any depth)
    other than through the container ``skip``."""
    if obj is x:
        return True
    if obj is skip:
        return False
    if isinstance(obj, dict):
        return any(_reaches(e, x, skip) for e in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_reaches(e, x, skip) for e in obj)
    return False


def _refusal_here(construct: str, hint: str) -> Exception:
    """A ``TransformError`` for a write refused when it runs: located, as any raised while
    generated code runs, at the user's line that code comes from (see ``errors``)."""
    return TransformError(construct, hint=hint)


def _overlaps(a: Any, x: np.ndarray, at: Any) -> bool:
    """Whether the array ``a`` sees the entries of ``x`` that ``x[at] = ...`` writes (all of
    ``x`` without ``at``; when ``x[at]`` is a copy, a fancy index, any memory of ``x``)."""
    if not isinstance(a, np.ndarray) or not np.may_share_memory(a, x):
        return False
    if at is None:
        return True
    try:
        region = x[at]
    except (IndexError, TypeError, ValueError):
        return True
    if not isinstance(region, np.ndarray) or not np.may_share_memory(region, x):
        return True  # a copy (fancy index) or a scalar: where it lands is not followed
    return bool(np.shares_memory(a, region))


def _holds(container: Any, x: Any) -> bool:
    """Whether ``container`` (a list, tuple or dict, nested too) holds ``x`` or a view of it."""
    if isinstance(container, dict):
        entries: Any = container.values()
    elif isinstance(container, (list, tuple)):
        entries = container
    else:
        return False
    for e in entries:
        if e is x or _holds(e, x):
            return True
        if isinstance(e, np.ndarray) and isinstance(x, np.ndarray) and np.may_share_memory(e, x):
            return True
    return False


def drop_last(xs_bar: Any) -> Any:
    """Adjoint of a list before its last ``append``: all entries but the last."""
    if is_zero(xs_bar):
        return xs_bar
    return list(xs_bar[:-1])


def append_bar(xs_bar: Any, xs: Any, last: Any) -> Any:
    """Adjoint of a list before ``xs.pop()``: the adjoint after it plus the popped one's."""
    out = list(zeros_like(xs)) if is_zero(xs_bar) else list(xs_bar)
    out.append(0.0 if last is None else last)
    return out


def sequence(xs: Any) -> Any:
    """What ``for x in xs`` iterates over, as an indexable sequence."""
    if isinstance(xs, (list, tuple, np.ndarray, range, str)):
        return xs
    counting = _endless(xs)  # itertools.count(): refused by list() only by never ending
    return list(xs) if counting is None else counting


def sequence_now(xs: Any) -> Any:
    """:func:`sequence` as it is now, for a loop whose body writes into ``xs`` in place
    (``for i, v in enumerate(h): h[i] = ...``): a copy of an array or a list, so that the
    element a trip read stays what it was when the backward sweep reads it again."""
    if isinstance(xs, np.ndarray):
        return xs.copy()
    if isinstance(xs, list):
        return list(xs)
    return sequence(xs)


def sequence_part(t: Any, xs: Any) -> Any:
    """The tangent (or adjoint) of ``sequence(xs)`` from that of ``xs``, or back: the same
    entries, except that a dict's or a set's sequence holds its keys, which carry none."""
    return 0.0 if holds_keys(xs) else t


def holds_keys(xs: Any) -> bool:
    """Whether iterating ``xs`` gives keys (a dict, a set): no gradient flows to them."""
    return isinstance(xs, (dict, set, frozenset))


def unpack_count(xs: Any, least: int) -> None:
    """Refuse, as Python does, ``a, *rest, b = xs`` when ``xs`` has fewer than ``least``
    items."""
    if len(xs) < least:
        raise ValueError(f"not enough values to unpack (expected at least {least}, got {len(xs)})")


def reduce_start(count: int) -> None:
    """Refuse, as ``functools.reduce`` does, an empty sequence without an initial value."""
    if not count:
        raise TypeError("reduce() of empty iterable with no initial value")


def member_grad(g: Any, obj: Any, name: str) -> Any:
    """Adjoint of ``obj`` from the callee's adjoint in a call ``obj.name(...)``: a bound
    method's is the object's own (``model.predict(x)``); an attribute holding a callable
    object (``self.l1(u)``, a sublayer) gives its adjoint to that attribute."""
    member = getattr(obj, name, None)
    if is_zero(g) or getattr(member, "__self__", None) is obj:
        return g
    index = field_index(obj, name)
    return g if index is WHOLE else add_at(0.0, obj, index, g)


def member_tangent(t: Any, obj: Any, name: str) -> Any:
    """Tangent of the callee ``obj.name`` from ``obj``'s tangent ``t`` (see
    :func:`member_grad`)."""
    member = getattr(obj, name, None)
    if is_zero(t) or getattr(member, "__self__", None) is obj:
        return t
    index = field_index(obj, name)
    return t if index is WHOLE else getitem(t, index)


def field_index(obj: Any, name: str, again: bool = False) -> Any:
    """The position of the field ``name`` of a namedtuple ``obj`` (reading ``obj.name`` of
    a differentiated value), a record's field name or :data:`WHOLE` for its method; any
    other object is refused, but in code differentiated ``again`` (a gradient's), where a
    module or an array only looks differentiated (read back from the saved values, the
    callee of a dispatched call: ``np.tanh``, ``A.dot``), :data:`UNREACHED`."""
    fields = getattr(type(obj), "_fields", None)
    if isinstance(obj, tuple) and isinstance(fields, tuple) and name in fields:
        return fields.index(name)
    if isinstance(obj, tuple) and isinstance(fields, tuple) and callable(getattr(obj, name, None)):
        return WHOLE  # a namedtuple's method: its adjoint is the tuple's
    if is_record(obj) and hasattr(obj, name):
        computed = computed_attribute(obj, name)
        if computed is not None:  # its value is not a field: no adjoint would reach one
            raise _refusal_here(
                f"{computed} .{name} of a differentiated {type(obj).__name__} (computed "
                "from its attributes when read)",
                "make it a method and call it (its source is differentiated), or compute "
                "the value in the differentiated function",
            )
        if name not in getattr(obj, "__dict__", ()) and callable(getattr(obj, name)):
            return WHOLE  # a bound method: its adjoint is the object's
        return name  # a dataclass's field, or an attribute of an object built or passed in
    if again and (
        isinstance(obj, types.ModuleType)
        or (isinstance(obj, np.ndarray) and callable(getattr(obj, name, None)))
    ):
        return UNREACHED  # a module's function, an array's method: the user's code refused
    slots = "" if hasattr(obj, "__dict__") or not hasattr(obj, "__slots__") else " with __slots__"
    raise _refusal_here(
        f"attribute .{name} of a differentiated value (a {type(obj).__name__}{slots}, not a "
        "namedtuple, a dataclass or an object whose instance dict holds arrays)",
        "pass the arrays themselves, or a namedtuple, dataclass, list or dict of them",
    )


class _Whole:
    """The index :func:`field_index` gives for a bound method read from a record
    (``model.predict``): the method value's adjoint (and tangent) is the object's."""

    def __repr__(self) -> str:
        return "WHOLE"


WHOLE = _Whole()


class _Handed:
    """The index :func:`attr_index` gives when the adjoint went to the tape's table:
    ``add_at`` then adds nothing to the object's adjoint."""

    def __repr__(self) -> str:
        return "HANDED"


HANDED = _Handed()


class _Unreached:
    """The index :func:`field_index` gives, in code differentiated again, for a module's
    function or an array's method read as a callee: no derivative reaches it (its tangent
    is zero, ``add_at`` adds nothing)."""

    def __repr__(self) -> str:
        return "UNREACHED"


UNREACHED = _Unreached()


def attr_index(obj: Any, name: str, g: Any) -> Any:
    """Adjoint of ``obj.name`` read from a differentiated value in variables mode: a
    namedtuple's field position; for another object (a layer reached through
    ``model.layers[0]``), ``g`` goes to the table as the adjoint of the attribute's value
    (a Variable a running tape differentiates) and :data:`HANDED` is returned."""
    fields = getattr(type(obj), "_fields", None)
    if isinstance(obj, tuple) and isinstance(fields, tuple) and name in fields:
        return fields.index(name)
    if is_record(obj) and hasattr(obj, name):
        return field_index(obj, name)
    if isinstance(obj, (tuple, list, dict, _ndarray)) or not hasattr(obj, name):
        return field_index(obj, name)  # refused, as without variables mode
    variable_grad(getattr(obj, name), g)
    return HANDED


def as_grads(grads: Any, n: int) -> tuple[Any, ...]:
    """Normalize a user rule's result to a tuple of ``n`` gradients."""
    if n == 1 and not (isinstance(grads, (tuple, list)) and len(grads) == 1):
        return (grads,)
    if not isinstance(grads, (tuple, list)) or len(grads) != n:
        raise ValueError(f"gradient rule returned {grads!r}; expected {n} gradients")
    return tuple(0.0 if g is None else g for g in grads)


def rule_grads(grads: Any, args: tuple[Any, ...], name: str) -> tuple[Any, ...]:
    """Check what a user's gradient rule returned: one gradient per argument, each shaped
    like its argument (``None`` for no gradient). Raises ``ValueError`` naming the rule."""
    n = len(args)
    if n == 1 and not (isinstance(grads, (tuple, list)) and len(grads) == 1):
        grads = (grads,)
    if not isinstance(grads, (tuple, list)) or len(grads) != n:
        got = len(grads) if isinstance(grads, (tuple, list)) else 1
        raise ValueError(f"gradient rule {name} returned {got} gradients for {n} arguments")
    out = []
    for k, (grad, arg) in enumerate(zip(grads, args)):
        if grad is None:
            out.append(0.0)
            continue
        if isinstance(arg, (np.ndarray, float, int, np.generic)) and not isinstance(arg, bool):
            if np.shape(grad) != np.shape(arg) and np.size(grad) != 1:
                raise ValueError(
                    f"gradient rule {name} returned shape {np.shape(grad)} for argument {k}, "
                    f"which has shape {np.shape(arg)}"
                )
        out.append(grad)
    return tuple(out)


def restructure(g: Any, like: Any) -> Any:
    """The cotangent of ``rule_grads``'s input, in the structure the rule returned."""
    if isinstance(like, (tuple, list)):
        return type(like)(g)
    return g[0]


def as_tuple(g: Any, like: Any) -> tuple[Any, ...]:
    """``g`` (shaped like ``like``: a tuple or one value) as a tuple."""
    return tuple(g) if isinstance(like, (tuple, list)) else (g,)


def vjp_call(func: Any, labels: tuple[Any, ...], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Call ``func`` (known only at run time) and return ``(value, pullback)``.

    ``labels`` names the differentiated arguments: positions into ``args`` and keyword
    names. ``pullback(g)`` returns their gradients in the same order.
    """
    if CALL_HOOKS:  # a tape's re-run: the block's own call, with its pullback, if it made it
        found = CALL_HOOKS[-1](func, labels, args, kwargs)
        if found is not None:
            return found
    call = _CALL_WITH_PULLBACK
    if not call:
        from .dispatch import call_with_pullback

        call.append(call_with_pullback)
    return call[0](func, labels, args, kwargs)  # a refusal: at the user's line (errors.py)


_CALL_WITH_PULLBACK: list[Any] = []  # dispatch.call_with_pullback, imported on first use


# hooks a tape's re-run of its block installs (see ``replay.Calls``)
CALL_HOOKS: list[Any] = []


def vjp_apply(func: Any, labels: tuple[Any, ...], g: Any, *args: Any, **kwargs: Any) -> Any:
    """The gradients of ``func``'s labelled arguments for the cotangent ``g``.

    What a gradient that is differentiated again calls instead of a pullback: it runs
    ``func``'s forward sweep again, and has a derivative of its own (the dispatcher
    differentiates ``func``'s generated pullback).
    """
    from .dispatch import call_with_pullback

    return call_with_pullback(func, labels, args, kwargs)[1](g)


vjp_apply._s2s_dispatched = True  # type: ignore[attr-defined]


# --- forward mode -------------------------------------------------------------------------


def broadcast_like(t: Any, ans: Any) -> Any:
    """A tangent with the shape of its value (an operand's tangent may be smaller)."""
    if type(t) is _ndarray and type(ans) is _ndarray and t.shape == ans.shape:
        return t
    tt, ta = type(t), type(ans)
    if (tt is _float or tt is _float64) and (ta is _float or ta is _float64):
        return t
    if tt in (list, tuple) and isinstance(ans, (list, tuple)) and len(t) != len(ans):
        raise _concat_refusal()  # one side's tangent of ``a + b``: which side is unknown
    shape = np.shape(ans)
    if np.shape(t) == shape or is_zero(t):
        return t
    if ta is _float and ans == 0.0 and np.ndim(t) > 0 and not np.any(t):
        # the symbolic zero (an adjoint entry zeroed, differentiated again) whose tangent
        # came out as dense zeros: zero as well
        return 0.0
    return np.broadcast_to(t, shape)


def tangent_parts(t: Any, x: Any) -> list[Any]:
    """Tangents of the parts of ``a, b = x`` (zeros when ``t`` is zero).

    A part whose tangent is the symbolic zero while others are not gets dense zeros: its
    name has a tangent in the generated code, which matrix products read as an array.
    """
    if is_zero(t):  # (in a loop, another trip may give the parts tangents: dense too)
        return [zeros_like(v) if isinstance(v, _ndarray) else 0.0 for v in x]
    return [zeros_like(v) if is_zero(p) else p for p, v in zip(t, x)]


def set_tangent(old: Any, x: Any, index: Any, t: Any) -> Any:
    """Tangent of ``x`` after ``x[index] = v`` (a new value; ``t`` is the tangent of v)."""
    out = dense(old, x)
    out[index] = 0.0 if is_zero(t) else t
    return out


def restore_tangent(
    t: Any, obj: Any, key: Any, old: Any, old_t: Any, set_at: Any = set_tangent
) -> Any:
    """Tangent of ``obj`` after :func:`restore_item` put ``old`` (tangent ``old_t``) back
    at ``key`` (in forward mode over a backward sweep); ``set_at`` writes one entry."""
    if old is _MISSING:  # the entry was new: it is gone again
        if isinstance(t, dict):
            t = dict(t)
            t.pop(key, None)
        return t
    return set_at(t, obj, key, old_t)


def append_tangent(old: Any, xs: Any, t: Any) -> list[Any]:
    """Tangent of a list after ``xs.append(v)``."""
    out = [0.0] * (len(xs) - 1) if is_zero(old) else list(old)
    out.append(t)
    return out


def pop_tangent(t: Any, value: Any = None) -> tuple[Any, Any]:
    """Tangents of ``v`` and of the list after ``v = xs.pop()``; the tangent of an array
    ``value`` (``v``) as zeros of its shape where it is zero (a tape hands back the
    symbolic zero, and a matrix product or ``np.ravel`` reads it as an array)."""
    if is_zero(t):
        last, out = 0.0, 0.0
    else:
        out = list(t)
        last = out.pop()
    return entry_tangent(last, value), out


def _inner(a: Any, b: Any) -> Any:
    if is_zero(a) or is_zero(b):
        return 0.0
    if isinstance(a, (tuple, list)):
        return sum((_inner(u, v) for u, v in zip(a, b)), 0.0)
    if isinstance(a, dict):
        return sum((_inner(a[k], b[k]) for k in a if k in b), 0.0)
    return np.sum(np.multiply(a, b))


def jvp_from_vjp(pull: Any, ans: Any, tangents: tuple[Any, ...]) -> Any:
    """``J t`` from a pullback, one output entry at a time (exact; used where a rule
    has no forward template). ``pull(g)`` returns one gradient per tangent."""
    if isinstance(ans, (tuple, list, dict)):
        raise TransformError("forward mode through a rule with several outputs")
    shape = np.shape(ans)
    if not shape:
        return _inner(pull(1.0), tangents)
    out = np.zeros(shape)
    flat = out.reshape(-1)
    basis = np.zeros(flat.size)
    for k in range(flat.size):
        basis[k] = 1.0
        flat[k] = _inner(pull(basis.reshape(shape)), tangents)
        basis[k] = 0.0
    return out


def jvp_call(
    func: Any, labels: tuple[Any, ...], tangents: tuple[Any, ...], *args: Any, **kwargs: Any
) -> tuple[Any, Any]:
    """Call ``func`` (a Python function, method or rule known at run time) in forward mode.

    ``labels`` names the arguments (positions, keywords) whose ``tangents`` are given.
    """
    from .dispatch import call_with_tangent

    return call_with_tangent(func, labels, tangents, args, kwargs)


# --- variables mode (tapes) -----------------------------------------------------------------

VARIABLE_GRADS: dict[int, Any] | None = None


def variable_grad(value: Any, g: Any) -> None:
    """Adjoint of an attribute read in variables mode: when the value is a Variable the
    running tape differentiates, add ``g`` to its gradient."""
    table = VARIABLE_GRADS
    if table is None:
        return
    key = id(value)
    if key not in table or g is None or (type(g) is _float and g == 0.0):  # (is_zero inline)
        kind = type(value)
        if (kind is list or kind is tuple) and isinstance(g, (list, tuple)):
            for item, part in zip(value, g):  # Variables held in a list an object holds
                variable_grad(item, part)
        elif kind is dict and isinstance(g, dict):
            for name, part in g.items():
                if name in value:
                    variable_grad(value[name], part)
        return
    # generated code has most often summed ``g`` to the Variable's shape already
    held = getattr(value, "value", value)  # a Variable's array
    if type(g) is not _ndarray or type(held) is not _ndarray or g.shape != held.shape:
        g = unbroadcast(g, np.asarray(value))
    old = table[key]
    table[key] = g if type(old) is _float and old == 0.0 else add(old, g)


# --- variables mode, differentiated again (an outer tape over an inner tape's gradient) ----

# id(Variable) -> the outer cotangent of that Variable's inner gradient, while the outer
# backward sweep runs through an inner gradient with respect to Variables
VARIABLE_COTANGENTS: dict[int, Any] | None = None


def variable_grad_acc(acc: Any, value: Any, grad: Any) -> Any:
    """:func:`variable_grad` in code that will be differentiated again: returns the token
    ``acc``, whose derivative carries the adjoint of ``grad`` (see
    :func:`variable_cotangent`)."""
    variable_grad(value, grad)
    return acc


def variable_cotangent(value: Any, grad: Any) -> Any:
    """The adjoint of ``grad`` in ``variable_grad_acc(acc, value, grad)``: the outer
    cotangent of ``value``'s gradient, in the shape of ``grad`` (``variable_grad`` sums
    ``grad`` to the Variable's shape), when ``value`` is a Variable the inner gradient is
    taken with respect to; else zero."""
    table = VARIABLE_COTANGENTS
    if table is None:
        return zeros_like(grad)
    u = table.get(id(value))
    if u is None:
        kind = type(value)
        if (kind is list or kind is tuple) and isinstance(grad, (list, tuple)):
            if len(grad) == len(value):  # Variables held in a list an object holds
                parts = [variable_cotangent(v, p) for v, p in zip(value, grad)]
                return parts if type(grad) is list else tuple(parts)
        elif kind is dict and isinstance(grad, dict):
            return {
                k: variable_cotangent(value[k], p) if k in value else 0.0 for k, p in grad.items()
            }
        return zeros_like(grad)
    if type(grad) is _float and grad == 0.0:
        return 0.0  # a symbolic zero: nothing was added, nothing flows back
    shape = np.shape(grad)
    if np.shape(u) == shape:
        return u
    if np.size(u) <= int(np.prod(shape)):
        return np.broadcast_to(u, shape).copy()  # the adjoint of the sum to its shape
    return unbroadcast(u, grad)  # a smaller grad that variable_grad broadcast


def merge_tokens(acc: Any, token: Any) -> Any:
    """Join a callee's token (what it added to Variables' gradients) to the caller's
    (tokens are zeros: their sum is, and its derivative reaches both)."""
    return acc + token


def vjp_apply_vars(func: Any, labels: tuple[Any, ...], g: Any, *args: Any, **kwargs: Any) -> Any:
    """:func:`vjp_apply` in variables mode, with a token last: the callee's adjoints of
    Variables go to the tape, and the token's derivative carries them (see
    :mod:`s2s_ad.tape_nested`)."""
    return (*vjp_apply(func, labels, g, *args, **kwargs), 0.0)


vjp_apply_vars._s2s_dispatched = True  # type: ignore[attr-defined]
vjp_apply_vars._s2s_variables = True  # type: ignore[attr-defined]


#: the bodies of ``try`` statements, as plain functions (see :mod:`s2s_ad.norm_try`)
_TRY_PROBES: list[Any] = []
_TRY_KEYS: dict[tuple[str, int], int] = {}


def register_try_probe(source: str, globals_: dict[str, Any]) -> int:
    """Compile the body of a ``try`` statement (``def _try_body(<locals>): ...``) in the
    user's module globals; the key :func:`try_path` finds it by."""
    key = (source, id(globals_))
    found = _TRY_KEYS.get(key)
    if found is not None:
        return found
    space: dict[str, Any] = {}
    exec(compile(source, "<s2s_ad:try body>", "exec"), globals_, space)  # noqa: S102
    probe = space["_try_body"]
    _TRY_PROBES.append(probe)
    _TRY_KEYS[key] = len(_TRY_PROBES) - 1
    return len(_TRY_PROBES) - 1


def try_path(key: int, caught: tuple[Any, ...], *args: Any) -> int:
    """Which path a ``try`` statement takes: ``0`` when its body raises nothing, ``k``
    when the ``k``-th handler (of the exception types ``caught``) catches what it raised;
    an exception no handler catches propagates, as in Python."""
    try:
        _TRY_PROBES[key](*args)
    except BaseException as exc:
        for k, kind in enumerate(caught, 1):
            if isinstance(exc, kind):
                return k
        raise
    return 0


def written_argument(value: Any, callee: str, param: str, whole: bool) -> None:
    """Refuse passing an array (a list or dict too unless ``whole``) to a function that
    writes its parameter ``param`` in place: the caller's value would change unseen by
    the derivative."""
    if isinstance(value, np.ndarray) or (not whole and isinstance(value, (list, dict))):
        raise _refusal_here(
            f"a call to {callee}, which writes its argument {param!r} in place "
            f"({param} op= ... or {param}[...] = ...)",
            hint=f"make {callee} return the new value (and assign it), or pass a copy",
        )


# object state (grad of code that stores differentiated values in attributes)
from .state_slots import slot_grad, slot_gradient, slot_index, store_slot  # noqa: E402, F401
