"""Dict methods (``d.items()``, ``d.values()``, ``d.keys()``, ``d.get(k, default)``), the
concatenation of tuples and lists (``args + (x,)``), and the packing of star-call
arguments (``f(a, *parts, **opts)``, ``zip(*pairs)``).

A dict's adjoint is a dict with the same keys. ``items()`` and ``values()`` hand out the
values in the dict's order, so their adjoints (lists, entry by entry) go back to the keys
in that order; ``keys()`` carries no gradient. The helpers below are reached from
templates as ``_ad.<name>``. Their samples are dicts, which the registry walk does not
build: ``tests/test_containers.py`` checks them on programs against finite differences.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..along import along_axes
from ..built_objects import _dense as dense
from ..runtime import (
    _refusal_here,
    add,
    build_record,
    field_index,
    member_grad,
    member_tangent,
    new_record,
    new_record_parts,
    new_record_tangent,
    record_parts,
    record_tangent,
    reduce_start,
    super_method,
    try_path,
    unbroadcast,
    unpack_count,
    zeros_like,
)
from .registry import method, nondiff, set_jvps, vjp_rule
from .vjps import is_zero


def values_vjp(g: Any, d: dict[Any, Any]) -> Any:
    """Adjoint of ``d`` from the adjoint of ``list(d.values())``."""
    if is_zero(g):
        return 0.0
    return {k: (0.0 if gv is None else gv) for k, gv in zip(d, g)}


def items_vjp(g: Any, d: dict[Any, Any]) -> Any:
    """Adjoint of ``d`` from the adjoint of ``list(d.items())`` (pairs ``(key, value)``)."""
    if is_zero(g):
        return 0.0
    return {k: (0.0 if is_zero(pair) or pair[1] is None else pair[1]) for k, pair in zip(d, g)}


def get_vjp(g: Any, d: dict[Any, Any], key: Any) -> Any:
    """Adjoint of ``d`` for ``d.get(key, default)``: ``g`` at ``key`` when it is there."""
    if is_zero(g) or key not in d:
        return 0.0
    return {k: (g if k == key else 0.0) for k in d}


def get_default_vjp(g: Any, d: dict[Any, Any], key: Any) -> Any:
    """Adjoint of ``default`` for ``d.get(key, default)``: ``g`` when ``key`` is missing."""
    return 0.0 if key in d else g


def values_jvp(t: Any, d: dict[Any, Any]) -> Any:
    """Tangent of ``list(d.values())``."""
    return [0.0 if is_zero(t) else t.get(k, 0.0) for k in d]


def items_jvp(t: Any, d: dict[Any, Any]) -> Any:
    """Tangent of ``list(d.items())``: the keys' tangents are ``None``."""
    return [(None, 0.0 if is_zero(t) else t.get(k, 0.0)) for k in d]


def get_jvp(t: Any, d: dict[Any, Any], key: Any) -> Any:
    """Tangent of ``d.get(key, ...)`` from the dict's tangent."""
    return 0.0 if is_zero(t) or key not in d else t.get(key, 0.0)


# Rules whose samples are dicts, which the registry walk does not build: their derivatives
# are checked on programs against finite differences in tests/test_containers.py.
_FFT_NAMES = "fft ifft fftn ifftn fft2 ifft2 rfft irfft rfftn rfft2 irfftn irfft2"
CHECKED_ON_PROGRAMS = frozenset(
    {
        # the transforms of np.fft (rules/fft.py): complex outputs, checked on programs
        # in tests/test_open_world_fft.py and tests/sweep
        *(f"np.fft.{name}" for name in _FFT_NAMES.split()),
        # random draws (numpy_random): each call draws anew, checked on programs seeding
        # their generator in tests/test_open_world.py
        "np.random.Generator.normal",
        "np.random.Generator.laplace",
        "np.random.Generator.logistic",
        "np.random.Generator.gumbel",
        "np.random.Generator.uniform",
        "np.random.Generator.exponential",
        "np.random.Generator.gamma",
        "np.random.Generator.lognormal",
        "ndarray.values",
        "ndarray.items",
        "ndarray.get",
        "packed keyword arguments",
        "unzip",
        "in_container",
        "container_entries",
        "values_vjp",
        "values_jvp",
        "items_vjp",
        "items_jvp",
        "get_vjp",
        "get_jvp",
        "get_default_vjp",
        "dict",
        "dict_vjp",
        "dict_jvp",
        "dict merge {**a, **b}",
        "merge_vjp",
        "merge_jvp",
        "namedtuple._replace",
        "namedtuple._asdict",
        "replace_obj_vjp",
        "replace_obj_jvp",
        "replace_changes_vjp",
        "replace_changes_jvp",
        "fields_dict_vjp",
        "fields_dict_jvp",
    }
)

_rule = method("values", ("self",), {"self": "_ad.values_vjp(g, self)"}, [])
set_jvps(_rule, self="_ad.values_jvp(t, self)")
_rule = method("items", ("self",), {"self": "_ad.items_vjp(g, self)"}, [])
set_jvps(_rule, self="_ad.items_jvp(t, self)")
method("keys", ("self",), {}, [], nondiff=True)
_rule = method(
    "get",
    ("self", "key", "default"),
    {"self": "_ad.get_vjp(g, self, key)", "default": "_ad.get_default_vjp(g, self, key)"},
    [],
    defaults={"default": "None"},
)
set_jvps(_rule, self="_ad.get_jvp(t, self, key)", default="0.0 if key in self else t")


def _linear_helper(
    name: str,
    func: Any,
    params: tuple[str, ...],
    transpose: str,
    *,
    linear: bool = False,
    **others: str,
) -> None:
    """Register the rule of a helper linear in its first parameter (a cotangent): its VJP
    is ``transpose`` (``{}`` standing for the cotangent), its JVP the helper itself applied
    to the tangent. The other parameters give only shapes or keys (``0.0``) unless
    ``others`` states their template (``{}`` for the cotangent or tangent)."""
    first, rest = params[0], params[1:]
    vjps = {first: transpose.format("g")}
    jvps = {first: f"_ad.{func.__name__}(t, {', '.join(rest)})"}
    for param in rest:
        vjps[param] = others[param].format("g") if param in others else "0.0"
        jvps[param] = others[param].format("t") if param in others else "0.0"
    set_jvps(vjp_rule(name, [func], params, vjps, [], linear=linear), **jvps)


# --- tuple and list concatenation ---------------------------------------------------------


def concat(a: Any, b: Any) -> Any:
    """``a + b`` where the normalizer saw a list or tuple side (``args + (x,)``).

    Should a side be an array after all (``x + [1.0, 2.0]`` adds), ``+`` adds, and the
    derivatives below do the same.
    """
    return a + b


def _joined(a: Any, b: Any) -> bool:
    """Whether ``a + b`` was a concatenation (both lists or tuples), not an addition."""
    return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))


def concat_vjp(g: Any, parts: tuple[Any, Any]) -> tuple[Any, Any]:
    """Adjoints of the two parts of a concatenation (each in its own container type)."""
    a, b = parts
    if is_zero(g):
        return 0.0, 0.0
    if not _joined(a, b):
        return unbroadcast(g, a), unbroadcast(g, b)
    return type(a)(g[: len(a)]), type(b)(g[len(a) :])


def concat_jvp(t: tuple[Any, Any], parts: tuple[Any, Any]) -> Any:
    """Tangent of a concatenation: the parts' tangents joined (zeros for a symbolic zero)."""
    if not _joined(*parts):
        if is_zero(t) or all(is_zero(v) for v in t):
            return 0.0
        ta, tb = (0.0 if is_zero(v) else v for v in t)
        total = ta + tb
        shape = np.broadcast_shapes(np.shape(parts[0]), np.shape(parts[1]))
        # the shape of ``a + b`` (a scalar's tangent added to an array's zero: per column
        # of a batched tangent, the stacked columns need it)
        return total if np.shape(total) == shape else total + np.zeros(shape)
    joined: list[Any] = []
    for tangent, part in zip(t, parts):
        joined += zeros_like(part) if is_zero(tangent) else list(tangent)
    return type(parts[0])(joined)


def extend(a: Any, b: Any) -> Any:
    """``a += b`` where the normalizer saw a list or tuple ``a``: a list is extended by the
    entries of a tuple or list ``b`` (as Python's ``list += tuple`` does); otherwise
    ``a + b`` (a tuple joins only a tuple; arrays add).

    Raises:
        TypeError: A list extended by another iterable (an array's rows, a generator):
            not modeled, as ``+`` would add it instead.
    """
    if isinstance(a, list):
        if isinstance(b, (list, tuple)):
            return a + list(b)
        raise TypeError(
            f"list += {type(b).__name__}: extending a list by the entries of a "
            f"{type(b).__name__} is not differentiated; write xs += list(...) or xs.extend"
        )
    return a + b


_rule = vjp_rule(
    "concatenation",
    [concat],
    (),
    {"args": "_ad.concat_vjp(g, args)"},
    [((1.5, np.array([0.3, -0.2])), (0.7,)), ([np.array([1.0, 2.0])], [0.5, -1.5])],
    linear=True,
    varargs=True,
)
set_jvps(_rule, args="_ad.concat_jvp(t, args)")
# ``xs += (f,)`` on a list: the same parts (the adjoint of a tuple part is a tuple)
_rule = vjp_rule(
    "list extended by +=",
    [extend],
    (),
    {"args": "_ad.concat_vjp(g, args)"},
    [([np.array([1.0, 2.0])], (0.5, -1.5))],
    linear=True,
    varargs=True,
)
set_jvps(_rule, args="_ad.concat_jvp(t, args)")
# the backward sweep's split is linear in the cotangent: its adjoint joins, its tangent
# splits (a gradient differentiated again: hvp of ``np.hstack(args + (ones,))``)
_linear_helper(
    "_ad.concat_vjp", concat_vjp, ("g", "parts"), "_ad.concat_jvp({}, parts)", linear=True
)


# --- list repetition: [x] * n ----------------------------------------------------------


def list_repeat(seq: Any, n: Any) -> Any:
    """``[x] * n`` / ``n * [x]`` of a list or tuple literal: ``n`` references to each entry.

    Should ``n`` be an array or a float after all (``[1.0, 2.0] * x``), NumPy multiplies,
    and the derivatives below do the same.
    """
    return seq * n


def _repeats(n: Any) -> bool:
    """Whether ``seq * n`` repeats the list (``n`` an integer), not multiplies."""
    return isinstance(n, (int, np.integer))


def list_repeat_vjp(g: Any, seq: Any, n: Any) -> Any:
    """Adjoint of the repeated list or tuple: each entry's adjoint is the sum of the
    adjoints of its copies."""
    if is_zero(g):
        return 0.0
    if not _repeats(n):  # a product: an adjoint per entry of the literal
        return type(seq)(unbroadcast(g * n, np.asarray(seq)))
    k = len(seq)
    return type(seq)(_sum_entries(g[i::k]) for i in range(k))


def list_repeat_vjp_n(g: Any, seq: Any, n: Any) -> Any:
    """Adjoint of the count: none for a repetition, ``g * seq`` for a product."""
    if is_zero(g) or _repeats(n):
        return 0.0
    return unbroadcast(g * np.asarray(seq), n)


def _sum_entries(entries: Any) -> Any:
    total: Any = 0.0
    for entry in entries:
        total = add(total, entry)
    return total


def list_repeat_jvp(t: Any, seq: Any, n: Any) -> Any:
    """Tangent of the repeated list or tuple: the entries' tangents repeated."""
    if is_zero(t):
        return 0.0
    if not _repeats(n):
        return np.asarray(t) * n
    return type(seq)(t) * n


def list_repeat_jvp_n(t: Any, seq: Any, n: Any) -> Any:
    """Tangent through the count: none for a repetition, ``seq * t`` for a product."""
    if is_zero(t) or _repeats(n):
        return 0.0
    return np.asarray(seq) * t


_rule = vjp_rule(
    "list repetition",
    [list_repeat],
    ("seq", "n"),
    {"seq": "_ad.list_repeat_vjp(g, seq, n)", "n": "_ad.list_repeat_vjp_n(g, seq, n)"},
    [
        ([np.array([1.0, 2.0]), 0.5], 3),
        ((0.7, np.array([0.3, -0.2])), 2),
        ([1.5, -0.5], np.array([[0.3, -0.2], [0.7, 1.1]])),
    ],
)
set_jvps(_rule, seq="_ad.list_repeat_jvp(t, seq, n)", n="_ad.list_repeat_jvp_n(t, seq, n)")
# the backward sweep's sum is linear in the cotangent (a gradient differentiated again)
_linear_helper(
    "_ad.list_repeat_vjp",
    list_repeat_vjp,
    ("g", "seq", "n"),
    "_ad.list_repeat_jvp({}, seq, n)",
    n="_ad.list_repeat_vjp_n({}, seq, n)",
)


# --- star-calls: f(a, *parts, **opts) and zip(*pairs) --------------------------------------


def pack_args(*pieces: Any) -> tuple[Any, ...]:
    """The positional arguments of a star-call after its first ``*``, as one tuple."""
    out: list[Any] = []
    for piece in pieces:
        out.extend(piece)
    return tuple(out)


def in_container(g: Any, like: Any) -> Any:
    """An adjoint given entry by entry (a tuple, ``None`` or a symbolic zero for an entry
    without gradient) in the container type of ``like``: a tuple, a list, an array whose
    rows are the entries, or a dict; zero for what cannot carry a gradient (a range)."""
    if is_zero(g):
        return 0.0
    if isinstance(like, dict):
        return {k: (0.0 if g.get(k) is None else g[k]) for k in like}
    entries = [0.0 if gi is None else gi for gi in g]
    if isinstance(like, (tuple, list)):
        return type(like)(entries)
    if isinstance(like, np.ndarray):
        out = np.zeros(like.shape, dtype=np.result_type(like.dtype, float))
        for i, gi in enumerate(entries):
            if not is_zero(gi):
                out[i] = gi
        return out
    return 0.0


def _lengths(pieces: tuple[Any, ...], total: int) -> list[int]:
    """How many entries each piece gave (one piece that has no length: the rest)."""
    sized = [len(p) if hasattr(p, "__len__") else None for p in pieces]
    unknown = [i for i, n in enumerate(sized) if n is None]
    if len(unknown) > 1:
        raise TypeError("star-call: more than one iterator among differentiated arguments")
    if unknown:
        sized[unknown[0]] = total - sum(n for n in sized if n is not None)
    return [int(n) for n in sized]  # type: ignore[arg-type]


def pack_args_vjp(g: Any, pieces: tuple[Any, ...]) -> tuple[Any, ...]:
    """Adjoints of the pieces of :func:`pack_args`, each in its own container type."""
    if is_zero(g):
        return tuple(0.0 for _ in pieces)
    out, start = [], 0
    for piece, n in zip(pieces, _lengths(pieces, len(g))):
        out.append(in_container(g[start : start + n], piece))
        start += n
    return tuple(out)


def pack_args_jvp(t: tuple[Any, ...], pieces: tuple[Any, ...]) -> tuple[Any, ...]:
    """Tangent of :func:`pack_args`: the pieces' tangents entry by entry."""
    out: list[Any] = []
    for tangent, piece in zip(t, pieces):
        out.extend([0.0] * len(piece) if is_zero(tangent) else list(tangent))
    return tuple(out)


def pack_kwargs(*mappings: Any) -> dict[str, Any]:
    """The ``**`` mappings of a star-call merged into one dict (a key twice is an error,
    as in the call itself)."""
    out: dict[str, Any] = {}
    for mapping in mappings:
        for key in mapping:
            if key in out:
                raise TypeError(f"got multiple values for keyword argument {key!r}")
            out[key] = mapping[key]
    return out


def pack_kwargs_vjp(g: Any, mappings: tuple[Any, ...]) -> tuple[Any, ...]:
    """Adjoints of the mappings of :func:`pack_kwargs` (dicts with their own keys)."""
    if is_zero(g):
        return tuple(0.0 for _ in mappings)
    return tuple({k: (0.0 if g.get(k) is None else g[k]) for k in m} for m in mappings)


def pack_kwargs_jvp(t: tuple[Any, ...], mappings: tuple[Any, ...]) -> dict[str, Any]:
    """Tangent of :func:`pack_kwargs`."""
    out: dict[str, Any] = {}
    for tangent, mapping in zip(t, mappings):
        for key in mapping:
            out[key] = 0.0 if is_zero(tangent) else tangent.get(key, 0.0)
    return out


def unzip(seqs: Any) -> tuple[tuple[Any, ...], ...]:
    """``zip(*seqs)`` read as a whole: the transpose of a sequence of sequences."""
    return tuple(zip(*seqs))


def _entry(g: Any, i: int) -> Any:
    return 0.0 if is_zero(g) or g[i] is None else g[i]


def unzip_vjp(g: Any, seqs: Any) -> Any:
    """Adjoint of ``seqs`` from the adjoint of its transpose."""
    if is_zero(g):
        return 0.0
    rows = [list(row) for row in seqs]
    width = min((len(row) for row in rows), default=0)
    back = [tuple(_entry(g[j], i) for j in range(width)) for i in range(len(rows))]
    return in_container([in_container(b, row) for b, row in zip(back, seqs)], seqs)


def unzip_jvp(t: Any, seqs: Any) -> Any:
    """Tangent of the transpose from the tangent of ``seqs``."""
    rows = [list(row) for row in seqs]
    width = min((len(row) for row in rows), default=0)
    return tuple(tuple(_entry(_entry(t, i), j) for i in range(len(rows))) for j in range(width))


_rule = vjp_rule(
    "packed positional arguments",
    [pack_args],
    (),
    {"args": "_ad.pack_args_vjp(g, args)"},
    [((1.5, np.array([0.3, -0.2])), [0.7]), (np.array([1.0, 2.0]), (0.5,))],
    linear=True,
    varargs=True,
)
set_jvps(_rule, args="_ad.pack_args_jvp(t, args)")
_rule = vjp_rule(
    "packed keyword arguments",
    [pack_kwargs],
    (),
    {"args": "_ad.pack_kwargs_vjp(g, args)"},
    [],
    linear=True,
    varargs=True,
)
set_jvps(_rule, args="_ad.pack_kwargs_jvp(t, args)")
_rule = vjp_rule("unzip", [unzip], ("seqs",), {"seqs": "_ad.unzip_vjp(g, seqs)"}, [], linear=True)
set_jvps(_rule, seqs="_ad.unzip_jvp(t, seqs)")


def container_entries(c: Any, like: Any) -> Any:
    """The adjoint of :func:`in_container`: a container's adjoint given entry by entry."""
    if is_zero(c):
        return 0.0
    if isinstance(like, dict):
        return {k: c.get(k, 0.0) for k in like}
    if isinstance(like, (tuple, list, np.ndarray)):
        return tuple(c[i] for i in range(len(like)))
    return 0.0


# ``like`` gives only a container type and a length: no gradient flows into it
_linear_helper("in_container", in_container, ("g", "like"), "_ad.container_entries({}, like)")
_linear_helper("container_entries", container_entries, ("c", "like"), "_ad.in_container({}, like)")


# --- dict(source): a copy of a dict, or a dict of (key, value) pairs ----------------------


def _pairs(source: Any) -> list[Any]:
    return list(source.items()) if isinstance(source, dict) else [tuple(p) for p in source]


def dict_vjp(g: Any, source: Any) -> Any:
    """Adjoint of ``source`` for ``dict(source)``: the entries of ``g`` at their keys (of
    pairs, the last pair of each key takes it; keys carry none)."""
    if is_zero(g):
        return 0.0
    if isinstance(source, dict):
        return {k: (0.0 if g.get(k) is None else g[k]) for k in source}
    pairs = _pairs(source)
    last = {k: i for i, (k, _) in enumerate(pairs)}
    back = [(0.0, g.get(k, 0.0)) if last[k] == i else (0.0, 0.0) for i, (k, _) in enumerate(pairs)]
    return in_container(back, source)


def dict_jvp(t: Any, source: Any) -> Any:
    """Tangent of ``dict(source)`` from the tangent of ``source``."""
    if isinstance(source, dict):
        return {k: (0.0 if is_zero(t) else t.get(k, 0.0)) for k in source}
    out: dict[Any, Any] = {}
    for i, (k, _) in enumerate(_pairs(source)):
        entry = 0.0 if is_zero(t) else t[i]
        out[k] = 0.0 if is_zero(entry) or entry[1] is None else entry[1]
    return out


_rule = vjp_rule(
    "dict", [dict], ("source",), {"source": "_ad.dict_vjp(g, source)"}, [], linear=True
)
set_jvps(_rule, source="_ad.dict_jvp(t, source)")


def merge(a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
    """``{**a, **b}``: the entries of ``b`` replace those of ``a`` with the same key."""
    return {**a, **b}


def merge_vjp(g: Any, a: dict[Any, Any], b: dict[Any, Any], first: bool) -> Any:
    """Adjoint of ``a`` (``first``) or ``b`` for :func:`merge`: ``g`` at the keys whose
    entry the merged dict took from it."""
    if is_zero(g):
        return 0.0
    if first:
        return {k: (0.0 if k in b or g.get(k) is None else g[k]) for k in a}
    return {k: (0.0 if g.get(k) is None else g[k]) for k in b}


def merge_jvp(t: Any, a: dict[Any, Any], b: dict[Any, Any], first: bool) -> Any:
    """What the tangent of ``a`` (``first``) or ``b`` gives the tangent of :func:`merge`
    (a dict with the merged keys, zero at those the other dict gave)."""
    out: dict[Any, Any] = dict.fromkeys(merge(a, b), 0.0)
    if not is_zero(t):
        for k in b if not first else (k for k in a if k not in b):
            out[k] = t.get(k, 0.0)
    return out


_rule = vjp_rule(
    "dict merge {**a, **b}",
    [merge],
    ("a", "b"),
    {"a": "_ad.merge_vjp(g, a, b, True)", "b": "_ad.merge_vjp(g, a, b, False)"},
    [],
    linear=True,
)
set_jvps(_rule, a="_ad.merge_jvp(t, a, b, True)", b="_ad.merge_jvp(t, a, b, False)")
_linear_helper("merge_vjp", merge_vjp, ("g", "a", "b", "first"), "_ad.merge_jvp({}, a, b, first)")
_linear_helper("merge_jvp", merge_jvp, ("t", "a", "b", "first"), "_ad.merge_vjp({}, a, b, first)")


# --- a namedtuple's _replace(field=value) and _asdict() -----------------------------------


def _fields(obj: Any) -> tuple[str, ...]:
    fields = getattr(type(obj), "_fields", None)
    if not isinstance(obj, tuple) or not isinstance(fields, tuple):
        raise _refusal_here(
            f"method _replace or _asdict of a {type(obj).__name__} (not a namedtuple)",
            hint="build the new object with its constructor",
        )
    return fields


def _entry_of(g: Any, i: int) -> Any:
    return 0.0 if is_zero(g) or g[i] is None else g[i]


def _dataclass_fields(obj: Any) -> tuple[str, ...] | None:
    """The field names of a dataclass instance (``None`` for anything else)."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return None
    return tuple(f.name for f in dataclasses.fields(obj))


def _attr_of(g: Any, name: str) -> Any:
    """The adjoint of the field ``name`` in a dataclass's adjoint ``g`` (a dict of
    attribute adjoints, or an instance)."""
    got = g.get(name) if isinstance(g, dict) else getattr(g, name, None)
    return 0.0 if got is None else got


def replace_fields(obj: Any, changes: dict[str, Any]) -> Any:
    """``obj._replace(**changes)`` of a namedtuple ``obj``, ``dataclasses.replace(obj,
    **changes)`` of a dataclass."""
    if _dataclass_fields(obj) is not None:
        return dataclasses.replace(obj, **changes)
    _fields(obj)
    return obj._replace(**changes)


def replace_obj_vjp(g: Any, obj: Any, changes: dict[str, Any]) -> Any:
    """Adjoint of ``obj`` for :func:`replace_fields`: ``g`` but at the replaced fields."""
    if is_zero(g):
        return 0.0
    names = _dataclass_fields(obj)
    if names is not None:
        return {f: _attr_of(g, f) for f in names if f not in changes}
    return tuple(0.0 if f in changes else _entry_of(g, i) for i, f in enumerate(_fields(obj)))


def replace_obj_jvp(t: Any, obj: Any, changes: dict[str, Any]) -> Any:
    """What the tangent of ``obj`` gives the tangent of :func:`replace_fields` (for a
    dataclass, a dict of every field's tangent, zeros of arrays as arrays: the tangent
    code of its methods needs them)."""
    names = _dataclass_fields(obj)
    if names is not None:
        new = {**{f: getattr(obj, f) for f in names}, **changes}
        kept = {f: 0.0 if is_zero(t) or f in changes else _attr_of(t, f) for f in names}
        return {f: dense(kept[f], new[f]) for f in names}
    return replace_obj_vjp(t, obj, changes)


def replace_changes_vjp(g: Any, obj: Any, changes: dict[str, Any]) -> Any:
    """Adjoint of ``changes`` for :func:`replace_fields`: ``g`` at the replaced fields."""
    if is_zero(g):
        return 0.0
    if _dataclass_fields(obj) is not None:
        return {k: _attr_of(g, k) for k in changes}
    fields = _fields(obj)
    return {k: _entry_of(g, fields.index(k)) for k in changes}


def replace_changes_jvp(t: Any, obj: Any, changes: dict[str, Any]) -> Any:
    """What the tangent of ``changes`` gives the tangent of :func:`replace_fields`."""
    names = _dataclass_fields(obj)
    if names is not None:
        new = {**{f: getattr(obj, f) for f in names}, **changes}
        given = {f: 0.0 if is_zero(t) or f not in changes else t.get(f, 0.0) for f in names}
        return {f: dense(given[f], new[f]) for f in names}
    return tuple(0.0 if is_zero(t) or f not in changes else t.get(f, 0.0) for f in _fields(obj))


def fields_dict(obj: Any) -> dict[str, Any]:
    """``obj._asdict()`` of a namedtuple ``obj``."""
    return dict(zip(_fields(obj), obj))


def fields_dict_vjp(g: Any, obj: Any) -> Any:
    """Adjoint of ``obj`` for :func:`fields_dict`."""
    if is_zero(g):
        return 0.0
    return tuple(0.0 if g.get(f) is None else g[f] for f in _fields(obj))


def fields_dict_jvp(t: Any, obj: Any) -> Any:
    """Tangent of :func:`fields_dict`."""
    return {f: _entry_of(t, i) for i, f in enumerate(_fields(obj))}


_rule = vjp_rule(
    "namedtuple._replace",
    [replace_fields],
    ("obj", "changes"),
    {
        "obj": "_ad.replace_obj_vjp(g, obj, changes)",
        "changes": "_ad.replace_changes_vjp(g, obj, changes)",
    },
    [],
    linear=True,
)
set_jvps(
    _rule,
    obj="_ad.replace_obj_jvp(t, obj, changes)",
    changes="_ad.replace_changes_jvp(t, obj, changes)",
)
_rule = vjp_rule(
    "namedtuple._asdict", [fields_dict], ("obj",), {"obj": "_ad.fields_dict_vjp(g, obj)"}, []
)
set_jvps(_rule, obj="_ad.fields_dict_jvp(t, obj)")


# The helpers above are linear in their first argument and transposes of each other: rules
# for them let a gradient that uses them be differentiated again (second order and more).
for _vjp, _jvp, _params in (
    (values_vjp, values_jvp, ("g", "d")),
    (items_vjp, items_jvp, ("g", "d")),
    (get_vjp, get_jvp, ("g", "d", "key")),
    (dict_vjp, dict_jvp, ("g", "source")),
    (replace_obj_vjp, replace_obj_jvp, ("g", "obj", "changes")),
    (replace_changes_vjp, replace_changes_jvp, ("g", "obj", "changes")),
    (fields_dict_vjp, fields_dict_jvp, ("g", "obj")),
):
    _args = ", ".join(_params[1:])
    _linear_helper(_vjp.__name__, _vjp, _params, f"_ad.{_jvp.__name__}({{}}, {_args})")
    _linear_helper(_jvp.__name__, _jvp, _params, f"_ad.{_vjp.__name__}({{}}, {_args})")
# the callee's adjoint of ``self.l1(u)`` given to the attribute, and back (runtime.py)
_linear_helper(
    "member_grad", member_grad, ("g", "obj", "name"), "_ad.member_tangent({}, obj, name)"
)
_linear_helper(
    "member_tangent", member_tangent, ("g", "obj", "name"), "_ad.member_grad({}, obj, name)"
)
_linear_helper(
    "get_default_vjp", get_default_vjp, ("g", "d", "key"), "_ad.get_default_vjp({}, d, key)"
)

# the length check of a starred unpacking ``a, *rest = xs``: a test, no gradient
nondiff("unpack_count", [unpack_count])
# the position of a namedtuple's field (``layer.W`` read as ``layer[0]``): an integer
nondiff("field_index", [field_index])
# an object built from differentiated values (built_objects): its adjoint is a dict of
# its attributes' adjoints (a tuple for a namedtuple), mapped back to the arguments
_rule = vjp_rule(
    "build_record",
    [build_record],
    ("cls", "parts", "keys"),
    {"parts": "_ad.record_parts(g, cls, parts, keys)"},
    [],
)
set_jvps(_rule, parts="_ad.record_tangent(t, cls, parts, keys)")
# the two are linear in g and t, and transposes of each other (for second order)
_rule = vjp_rule(
    "record_parts",
    [record_parts],
    ("g", "cls", "parts", "keys"),
    {"g": "_ad.record_tangent(g, cls, parts, keys)", "parts": "0.0"},
    [],
)
set_jvps(_rule, g="_ad.record_parts(t, cls, parts, keys)", parts="0.0")
_rule = vjp_rule(
    "record_tangent",
    [record_tangent],
    ("t", "cls", "parts", "keys"),
    {"t": "_ad.record_parts(g, cls, parts, keys)", "parts": "0.0"},
    [],
)
set_jvps(_rule, t="_ad.record_tangent(t, cls, parts, keys)", parts="0.0")
# an object built field by field (an inlined __init__, norm_init.py): its adjoint is the
# dict of its fields' adjoints; the two helpers are linear and transposes of each other
_rule = vjp_rule(
    "new_record",
    [new_record],
    ("cls", "names", "values"),
    {"values": "_ad.new_record_parts(g, names, values)"},
    [],
)
set_jvps(_rule, values="_ad.new_record_tangent(t, names, values)")
_rule = vjp_rule(
    "new_record_parts",
    [new_record_parts],
    ("g", "names", "values"),
    {"g": "_ad.new_record_tangent(g, names, values)", "values": "0.0"},
    [],
)
set_jvps(_rule, g="_ad.new_record_parts(t, names, values)", values="0.0")
_rule = vjp_rule(
    "new_record_tangent",
    [new_record_tangent],
    ("t", "names", "values"),
    {"t": "_ad.new_record_parts(g, names, values)", "values": "0.0"},
    [],
)
set_jvps(_rule, t="_ad.new_record_tangent(t, names, values)", values="0.0")
# the method ``super().name`` finds (norm_super): a function, called with the object
nondiff("super_method", [super_method])
# the axes np.apply_along_axis's results move to (along.py): integers
nondiff("along_axes", [along_axes])
# which path a ``try`` statement takes (norm_try): an integer
nondiff("try_path", [try_path])
# the check of ``functools.reduce(f, xs)`` without an initial value: xs is not empty
nondiff("reduce_start", [reduce_start])
