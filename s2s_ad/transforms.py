"""Forward mode and the transformations built from the two modes.

``jvp`` runs generated tangent code; ``jacobian`` pulls back a batch of cotangents
(``mode='rev'``) or pushes forward a batch of tangents (``mode='fwd'``); ``hessian`` and
``hvp`` are forward mode over the generated gradient; ``elementwise_grad`` is the ``grad``
of the summed function, so that, like any ``grad`` function, it carries what it computes
and can be differentiated again. The results of
``jacobian``, ``hessian`` and ``hvp`` cannot (they are refused, never taken for the
function they were made from).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import _CACHE as _api_cache
from .api import (
    SOURCE,
    _check_float,
    _wrt_names,
    check_not_none,
    check_returns_value,
    code_key,
    compile_adjoint,
    compile_forward,
    fix_grad,
    grad,
    pick_wrt,
    pullback_wrt,
    sweeps_source,
)
from .passed_objects import holds_floats, is_plain_object, object_gradient, tangent_parts
from .targets import WEIGHT, as_method, mark, primal, signature, summed, weighted
from .varargs import fixed_arity, per_call, star_index
from .wrapper import refuse_complex_gradient

_ndarray = np.ndarray
_F64 = np.dtype(np.float64)


def _check_tangent(name: str, primal: Any, tangent: Any) -> None:
    if isinstance(primal, (tuple, list)):
        if not isinstance(tangent, (tuple, list)) or len(tangent) != len(primal):
            raise ValueError(f"tangent for {name!r} must be a sequence of {len(primal)} entries")
        for k, (p, t) in enumerate(zip(primal, tangent)):
            _check_tangent(f"{name}[{k}]", p, t)
        return
    if isinstance(primal, dict):
        if not isinstance(tangent, dict) or set(tangent) != set(primal):
            raise ValueError(f"tangent for {name!r} must be a dict with keys {sorted(primal)}")
        for k in primal:
            _check_tangent(f"{name}[{k!r}]", primal[k], tangent[k])
        return
    if dataclasses.is_dataclass(primal) and not isinstance(primal, type):
        for f in dataclasses.fields(primal):
            value = getattr(primal, f.name)
            if _numeric(value):
                if not hasattr(tangent, f.name) and not isinstance(tangent, dict):
                    raise ValueError(f"tangent for {name!r} has no field {f.name!r}")
                part = tangent[f.name] if isinstance(tangent, dict) else getattr(tangent, f.name)
                _check_tangent(f"{name}.{f.name}", value, part)
        return
    if is_plain_object(primal) and hasattr(primal, "__dict__"):
        for label, value, part in tangent_parts(name, primal, tangent):
            _check_tangent(label, value, part)
        return
    if np.shape(primal) != np.shape(tangent):
        raise ValueError(
            f"tangent for {name!r} has shape {np.shape(tangent)}, "
            f"but the primal has shape {np.shape(primal)}"
        )
    t_kind = np.asarray(tangent).dtype.kind
    if t_kind not in "fc" and not (t_kind in "iu" and np.all(np.asarray(tangent) == 0)):
        raise ValueError(
            f"tangent for {name!r} has dtype {np.asarray(tangent).dtype}; use a float tangent"
        )


def _numeric(value: Any) -> bool:
    """Whether a dataclass field holds numbers (not a name, a flag or a function)."""
    return not (isinstance(value, (str, bytes, bool, type(None))) or callable(value))


_RESOLVED: weakref.WeakKeyDictionary[Any, tuple[Any, Any, list[str]]] = weakref.WeakKeyDictionary()


def _resolve(fun: Callable[..., Any]) -> tuple[Any, Any, list[str]]:
    """``fun`` as the transforms take it (a callable object as its bound ``__call__``), the
    function whose tangent program runs, and the parameter names; checked once per
    function (``hvp`` and ``jacobian`` call the same gradient again and again)."""
    try:
        hit = _RESOLVED.get(fun)
    except TypeError:  # not weakly referenceable
        hit = None
    if hit is not None:
        made, target, _ = hit
        if (primal(made.__func__) if inspect.ismethod(made) else primal(made)) is target:
            return hit
    made = as_method(fun)
    target = primal(made.__func__) if inspect.ismethod(made) else primal(made)
    params = list(signature(made).parameters)
    check_returns_value(made)
    if made is fun:  # a bound __call__ would keep its object alive: not cached
        try:
            _RESOLVED[fun] = (made, target, params)
        except TypeError:
            pass
    return made, target, params


def _jvp_wrt(
    fun: Callable[..., Any],
    args: Sequence[Any],
    positions: Sequence[int],
    tangents: Sequence[Any],
) -> tuple[Any, Any]:
    """Run the tangent program of ``fun`` with tangents for the arguments at ``positions``."""
    fun, target, params = _resolve(fixed_arity(fun, len(args)))
    names = [params[p] for p in positions]
    for name, pos, t in zip(names, positions, tangents):
        _check_float(name, args[pos])
        _check_tangent(name, args[pos], t)
    jvp_fn, tp = _bound_jvp(target, tuple(names))
    call = (fun.__self__, *args) if inspect.ismethod(fun) else tuple(args)
    out, out_dot = jvp_fn(*call, **{tp[n]: t for n, t in zip(names, tangents)})
    check_not_none(fun, out)
    return out, _tangent_like(out_dot, out)


_BOUND: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], tuple[Any, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _bound_jvp(target: Any, names: tuple[str, ...]) -> tuple[Any, dict[str, str]]:
    """The tangent program of ``target`` bound to it, bound again only when it was
    generated again (``compile_forward`` keeps the cache valid)."""
    compiled = compile_forward(target, names)
    per_target = _BOUND.setdefault(target, {})
    hit = per_target.get(names)
    if hit is None or hit[0] is not compiled:
        hit = per_target[names] = (compiled, compiled.bind(target)["jvp"])
    return hit[1], compiled.tangent_params or {}


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[Any, Any]:
    """Forward mode: ``(fun(*primals), J tangents)``, from generated tangent code.

    Args:
        fun: A Python function.
        primals: Its positional arguments.
        tangents: One tangent per primal, with the primal's shape.

    Raises:
        ValueError: When a tangent's shape or dtype does not match its primal.
        TypeError: For integer primals.
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents")
    return _jvp_wrt(fun, primals, range(len(primals)), tangents)


def _tangent_like(t: Any, x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        parts = [0.0] * len(x) if isinstance(t, float) and t == 0.0 else list(t)
        return type(x)(_tangent_like(u, v) for u, v in zip(parts, x))
    if isinstance(x, dict):
        return {k: _tangent_like(0.0 if isinstance(t, float) else t[k], x[k]) for k in x}
    if is_plain_object(x) and hasattr(x, "__dict__"):  # hvp of a model object
        return object_gradient(t, x, _tangent_like)
    return fix_grad(t, x) if isinstance(x, (np.ndarray, float, np.generic)) else t


def _positions(fun: Callable[..., Any], wrt: Any) -> tuple[list[int], bool]:
    """Positions of the parameters ``wrt`` names, and whether it named a single one."""
    names, single = _wrt_names(fun, wrt)
    params = list(signature(fun).parameters)
    return [params.index(n) for n in names], single


def jacobian(
    fun: Callable[..., Any],
    wrt: int | str | Sequence[int | str] = 0,
    mode: str = "rev",
    *,
    argnums: int | str | Sequence[int | str] | None = None,
) -> Callable[..., Any]:
    """The Jacobian of ``fun``: shape ``out.shape + in.shape``.

    ``mode='rev'`` runs the forward sweep once and pulls back every output entry in one
    batched backward sweep (cotangents on a leading batch axis, in chunks; a function
    whose backward sweep has no batched form, e.g. one calling a function value, is
    pulled back one output entry at a time); ``mode='fwd'`` pushes forward every input
    entry in one batched run of the tangent program. With a tuple ``wrt``
    the result is a tuple of Jacobians, one per parameter. ``argnums`` is an alias of
    ``wrt``.

    Raises:
        ValueError: For an unknown ``mode`` or a ``wrt`` out of range.
        TypeError: For a ``wrt`` that is not an int, a str or a tuple of them.
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"mode must be 'rev' or 'fwd', got {mode!r}")
    wrt = pick_wrt(wrt, argnums)
    inner = getattr(fun, _JACOBIAN_OF, None)
    if inner is not None and inner[0] is fun:  # jacobian(jacobian(f)): JAX's hessian
        return _jacobian_of_jacobian(*inner[1:], wrt, mode)
    if star_index(fun) is not None:
        return _star_made(fun, lambda g: jacobian(g, wrt, mode), "jacobian")
    positions, single = _positions(fun, wrt)

    def jacobian_fun(*args: Any, **kwargs: Any) -> Any:
        # keyword arguments are fixed for the call, as in autograd and JAX
        args, kwargs = _as_positional(fun, args, kwargs)
        bound = functools.partial(fun, **kwargs) if kwargs else fun
        out = tuple(_jacobian_at(bound, args, pos, mode) for pos in positions)
        return out[0] if single else out

    mark(jacobian_fun, fun, _AGAIN.format(kind="jacobian", name=_label(fun)))
    shown = "fwd" if mode == "fwd" else "rev"
    setattr(jacobian_fun, SOURCE, lambda: _sources(fun, positions, shown))
    setattr(jacobian_fun, _JACOBIAN_OF, (jacobian_fun, fun, positions, single))
    return jacobian_fun


#: Why the result of a transform is refused by ``grad``/``jvp`` (the transformer's
#: message reads "cannot differentiate <this>").
_AGAIN = (
    "{kind}({name}) inside another transform: only s2s_ad.jacobian can take it; "
    "for second derivatives use s2s_ad.hessian, s2s_ad.hvp or grad(grad(f))"
)

#: Attribute of a ``jacobian`` function: ``(itself, fun, positions, single)``, what a
#: Jacobian of it differentiates twice.
_JACOBIAN_OF = "_s2s_jacobian_of"


def _jacobian_of_jacobian(
    fun: Callable[..., Any], inner: list[int], inner_single: bool, wrt: Any, mode: str
) -> Callable[..., Any]:
    """``jacobian(jacobian(fun, i), j)``, JAX's ``jacfwd(jacrev(f))``: shape
    ``out.shape + x_i.shape + x_j.shape`` (tuples of them for tuple ``wrt``s, outer
    index first). Each output entry of ``fun`` is differentiated twice: the Jacobian of
    its gradient (``fun`` itself for a scalar output, else :func:`weighted` with a one-hot
    weight), so every block is one batched pass per output entry."""
    outer, outer_single = _positions(fun, wrt)
    blocks: dict[tuple[bool, int, int], Callable[..., Any]] = {}

    def block(scalar: bool, i: int, j: int) -> Callable[..., Any]:
        key = (scalar, i, j)
        if key not in blocks:
            target = fun if scalar else weighted(fun)
            blocks[key] = jacobian(grad(target, i), j, mode)
        return blocks[key]

    def jacobian_fun(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = _as_positional(fun, args, kwargs)
        out = fun(*args, **kwargs)
        if not isinstance(out, (np.ndarray, np.generic, float, int)):
            raise ValueError(
                f"the Jacobian of a Jacobian needs an array output; {_label(fun)} "
                f"returned {type(out).__name__}"
            )
        shape = np.shape(out)
        rows = []
        for i in inner:
            row = []
            for j in outer:
                if not shape:
                    row.append(block(True, i, j)(*args, **kwargs))
                    continue
                entries = []
                for k in range(int(np.prod(shape))):
                    onehot = np.zeros(shape)
                    onehot.flat[k] = 1.0
                    entries.append(block(False, i, j)(*args, **kwargs, **{WEIGHT: onehot}))
                h = np.stack([np.asarray(e) for e in entries])
                row.append(h.reshape(shape + h.shape[1:]))
            rows.append(row[0] if outer_single else tuple(row))
        return rows[0] if inner_single else tuple(rows)

    mark(jacobian_fun, fun, _AGAIN.format(kind="jacobian", name=_label(fun)))
    return jacobian_fun


def _as_positional(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Keyword arguments of parameters that can be positional passed by position;
    keyword-only ones stay keywords (with them, every default is filled in)."""
    try:
        bound = signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs  # the call itself reports what does not fit
    if bound.kwargs:  # a partial will fix them: every parameter gets its value
        bound.apply_defaults()
    return bound.args, bound.kwargs


def _sources(fun: Callable[..., Any], positions: Sequence[int], kind: str) -> str:
    """The programs a Jacobian, a Hessian (``fwd``) or an ``hvp`` (``jvp``) runs, one per
    position: the batched tangent program (``fwd``), the forward sweep and the batched
    backward sweep (``rev``; the one-row sweeps where a VJP has no batched form), the
    tangent program (``jvp``)."""
    from .forward_batch import compile_batched
    from .reverse_batch import Unbatched, compile_batched_adjoint

    _, target, params = _resolve(fun)
    target = primal(target)
    texts = []
    for pos in positions:
        names = (params[pos],)
        if kind == "jvp":
            texts.append(compile_forward(target, names).source_of("jvp"))
        elif kind == "fwd":
            texts.append(compile_batched(target, names).source_of("jvp"))
        else:
            try:
                texts.append(sweeps_source(compile_batched_adjoint(target, names)))
            except Unbatched:
                texts.append(sweeps_source(compile_adjoint(target, names)))
    return "\n\n".join(texts)


def _jacobian_at(fun: Callable[..., Any], args: tuple[Any, ...], pos: int, mode: str) -> Any:
    x = args[pos]
    _check_float(f"argument {pos}", x)
    if isinstance(x, (tuple, list, dict)) or dataclasses.is_dataclass(x) or _plain(x):
        return _jacobian_of_tree(fun, args, pos)
    x_arr = np.asarray(x, dtype=float)
    if mode == "rev":
        rows = _jacobian_rev_batched(fun, args, pos, x_arr)
        return rows if rows is not None else _jacobian_rows(fun, args, pos, x_arr)
    batched = _jacobian_batched(fun, args, pos, x_arr)
    return batched if batched is not None else _jacobian_columns(fun, args, pos, x_arr)


def _jacobian_rows(fun: Callable[..., Any], args: tuple[Any, ...], pos: int, x_arr: Any) -> Any:
    """The reverse Jacobian one pullback per output entry."""
    out, pullback = pullback_wrt(fun, args, [pos])
    if isinstance(out, (tuple, list, dict)):  # one Jacobian per output leaf, as in JAX
        leaves = _leaves(out)
        blocks = []
        for i, leaf in enumerate(leaves):
            shape = np.shape(leaf)
            block = np.zeros((int(np.prod(shape)), x_arr.size))
            for k in range(block.shape[0]):
                cots = [np.zeros(np.shape(other)) for other in leaves]
                cots[i].flat[k] = 1.0
                (g,) = pullback(_rebuilt(out, iter(cots)))
                block[k] = np.ravel(g)
            blocks.append(block.reshape(shape + x_arr.shape))
        return _rebuilt(out, iter(blocks))
    out_arr = np.asarray(out, dtype=float)
    rows = np.zeros((out_arr.size, x_arr.size))
    basis = np.zeros(out_arr.size)
    for k in range(out_arr.size):
        basis[k] = 1.0
        cot = basis.reshape(out_arr.shape) if out_arr.shape else 1.0
        (g,) = pullback(cot)
        rows[k] = np.ravel(g)
        basis[k] = 0.0
    return rows.reshape(out_arr.shape + x_arr.shape)


def _jacobian_rev_batched(
    fun: Callable[..., Any], args: tuple[Any, ...], pos: int, x_arr: Any
) -> Any | None:
    """The reverse Jacobian from one forward sweep and one batched backward sweep run on
    identity cotangents, in chunks (a chunk after the first runs the forward sweep
    again: the backward sweep consumes the tape); ``None`` when the backward sweep has no
    batched form or the output is not an array or a number (then the caller pulls back
    one output entry at a time)."""
    from .reverse_batch import batched_pullback

    if not _float_leaf(args[pos]):
        return None  # a list or a dict: its entries' rows are gathered one pullback each
    fun, target, params = _resolve(fun)
    name = params[pos]
    fns = batched_pullback(target, (name,))
    if fns is None:
        return None
    call = (fun.__self__, *args) if inspect.ismethod(fun) else tuple(args)
    out, saved = fns["fwd"](*call)
    check_not_none(fun, out)
    if not _float_leaf(out):
        return None
    shape = np.shape(out)
    m = int(np.prod(shape)) if shape else 1
    if not m:
        return np.zeros(shape + x_arr.shape)
    try:
        return _rev_rows(fns, call, saved, target, f"{name}/rev", args, shape, x_arr)
    except (IndexError, ValueError):
        # a batched VJP met shapes it does not handle (the one-row sweeps of a gradient
        # differentiated again: a known gap): the one-pullback-per-entry path is exact
        return None


def _rev_rows(
    fns: Any,
    call: tuple[Any, ...],
    saved: Any,
    target: Any,
    label: str,
    args: tuple[Any, ...],
    shape: tuple[int, ...],
    x_arr: Any,
) -> Any:
    """The reverse Jacobian's rows from the batched sweeps ``fns`` (``saved``: what the
    forward sweep already run recorded), chunk by chunk."""
    from .forward_batch import chunk_size, measured

    m = int(np.prod(shape)) if shape else 1
    blocks = []
    start = 0
    chunk = chunk_size(target, label, args, m)
    while start < m:
        stop = min(m, start + chunk)
        if start:
            _, saved = fns["fwd"](*call)
        seeds = np.eye(stop - start, m, start).reshape((stop - start, *shape))
        if chunk < m and not start:  # the first chunk also measures the memory a row takes
            (g,) = measured(target, label, args, stop - start, fns["bwd"], (saved, seeds), {})
            chunk = chunk_size(target, label, args, m)
        else:
            (g,) = fns["bwd"](saved, seeds)
        if np.ndim(g) == 0:  # the symbolic zero: the output does not depend on x
            g = np.zeros((stop - start, *x_arr.shape))
        blocks.append(np.broadcast_to(g, (stop - start, *x_arr.shape)).reshape(stop - start, -1))
        start = stop
    rows = np.concatenate(blocks) if len(blocks) > 1 else blocks[0]
    return np.asarray(rows, dtype=float).reshape(shape + x_arr.shape)


def _float_leaf(x: Any) -> bool:
    """Whether ``x`` is a real float array or number (one block of Jacobian rows)."""
    return isinstance(x, (float, np.floating)) or (
        isinstance(x, np.ndarray) and x.dtype.kind == "f"
    )


def _jacobian_columns(fun: Callable[..., Any], args: tuple[Any, ...], pos: int, x_arr: Any) -> Any:
    """The forward Jacobian one tangent program run per input entry."""
    cols: list[list[Any]] = []
    out: Any = 0.0
    basis = np.zeros(x_arr.size)
    for k in range(x_arr.size):
        basis[k] = 1.0
        t = basis.reshape(x_arr.shape).copy() if x_arr.shape else 1.0
        out, out_dot = _jvp_wrt(fun, args, [pos], [t])
        cols.append([np.ravel(np.asarray(d, dtype=float)) for d in _leaves(out_dot)])
        basis[k] = 0.0
    if not cols:
        return np.zeros(x_arr.shape)
    blocks = [
        np.stack([col[i] for col in cols], axis=-1).reshape(np.shape(leaf) + x_arr.shape)
        for i, leaf in enumerate(_leaves(out))
    ]
    return _rebuilt(out, iter(blocks))


def _jacobian_of_tree(fun: Callable[..., Any], args: tuple[Any, ...], pos: int) -> Any:
    """The Jacobian with respect to a tuple, list or dict of arrays (JAX's pytree):
    the input's structure, each leaf ``out.shape + leaf.shape``, one pullback per output
    entry (in either mode: the values are the same)."""
    x = args[pos]
    out, pullback = pullback_wrt(fun, args, [pos])
    if isinstance(out, (tuple, list, dict)):
        raise TypeError(
            f"jacobian of {_label(fun)} with respect to a {type(x).__name__} of arrays needs "
            f"an array output, got a {type(out).__name__}: take one jacobian per output"
        )
    out_arr = np.asarray(out, dtype=float)
    leaves = _leaves(x)
    rows: list[list[Any]] = [[] for _ in leaves]
    for k in range(out_arr.size):
        cot = np.zeros(out_arr.shape)
        cot.flat[k] = 1.0
        (g,) = pullback(cot if out_arr.shape else 1.0)
        for i, (leaf, part) in enumerate(zip(leaves, _leaves_along(g, x))):
            rows[i].append(np.broadcast_to(np.asarray(part, dtype=float), np.shape(leaf)))
    blocks = [
        np.stack(r).reshape(out_arr.shape + np.shape(leaf))
        if r
        else np.zeros(out_arr.shape + np.shape(leaf))
        for r, leaf in zip(rows, leaves)
    ]
    return _rebuilt(x, iter(blocks))


def _leaves(tree: Any) -> list[Any]:
    """The arrays and numbers of a (nested) tuple, list or dict, in order."""
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in _leaves(part)]
    if isinstance(tree, dict):
        return [leaf for part in tree.values() for leaf in _leaves(part)]
    if dataclasses.is_dataclass(tree) or _plain(tree):
        return _leaves(_fields_of(tree))
    return [tree]


def _plain(tree: Any) -> bool:
    """Whether ``tree`` is a plain object whose attributes are its parts (a model)."""
    return is_plain_object(tree) and hasattr(tree, "__dict__")


def _fields_of(tree: Any) -> dict[str, Any]:
    """A dataclass's numeric fields, or a plain object's attributes that hold floats, as
    a dict (its leaves in :func:`_leaves`)."""
    if _plain(tree):
        return {key: v for key, v in vars(tree).items() if holds_floats(v)}
    return {f.name: v for f in dataclasses.fields(tree) if _numeric(v := getattr(tree, f.name))}


def _leaves_along(grads: Any, tree: Any) -> list[Any]:
    """The leaves of ``grads`` in the order of ``tree``'s (dicts read by ``tree``'s keys;
    an unconnected part given as one ``0.0`` is zero for each of its leaves)."""
    if dataclasses.is_dataclass(tree):
        if dataclasses.is_dataclass(grads):
            grads = {f.name: getattr(grads, f.name) for f in dataclasses.fields(grads)}
        return _leaves_along(grads, _fields_of(tree))
    if _plain(tree):
        if _plain(grads):
            grads = vars(grads)
        return _leaves_along(grads, _fields_of(tree))
    if isinstance(tree, (tuple, list, dict)):
        keys = tree.keys() if isinstance(tree, dict) else range(len(tree))
        parts = [grads[k] if isinstance(grads, (tuple, list, dict)) else 0.0 for k in keys]
        return [leaf for k, p in zip(keys, parts) for leaf in _leaves_along(p, tree[k])]
    return [grads]


def _rebuilt(tree: Any, leaves: Any) -> Any:
    """``tree``'s structure with its leaves taken in order from the iterator ``leaves``."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuilt(part, leaves) for part in tree)
    if isinstance(tree, dict):
        return {key: _rebuilt(part, leaves) for key, part in tree.items()}
    if dataclasses.is_dataclass(tree):
        out = copy.copy(tree)
        for key, part in _fields_of(tree).items():
            object.__setattr__(out, key, _rebuilt(part, leaves))
        return out
    if _plain(tree):
        return object_gradient(
            {key: _rebuilt(part, leaves) for key, part in _fields_of(tree).items()},
            tree,
            lambda g, x: g,
        )
    return next(leaves)


def _jacobian_batched(
    fun: Callable[..., Any], args: tuple[Any, ...], pos: int, x_arr: Any
) -> Any | None:
    """The forward Jacobian from the batched tangent program run on identity tangents,
    in chunks (:func:`forward_batch.chunk_size`); ``None`` when the output is not an
    array or a number (then the caller runs one column at a time)."""
    from .forward_batch import batched_jvp, chunk_size, measured

    fun, target, params = _resolve(fun)
    name = params[pos]
    jvp_fn, tangent_params = batched_jvp(target, (name,))
    call = (fun.__self__, *args) if inspect.ismethod(fun) else tuple(args)
    n = x_arr.size
    blocks = []
    out: Any = None
    start = 0
    chunk = chunk_size(target, name, args, n)
    while start < n:
        stop = min(n, start + chunk)
        seeds = np.eye(stop - start, n, start)  # rows: the unit tangents start..stop-1
        seeds = seeds.reshape((stop - start, *x_arr.shape))
        if chunk < n and not start:  # the first chunk also measures the memory a column takes
            out, out_dot = measured(
                target, name, args, stop - start, jvp_fn, call, {tangent_params[name]: seeds}
            )
            chunk = chunk_size(target, name, args, n)
        else:
            out, out_dot = jvp_fn(*call, **{tangent_params[name]: seeds})
        check_not_none(fun, out)
        if isinstance(out, (tuple, list, dict)) or isinstance(out_dot, (tuple, list, dict)):
            return None
        shape = np.shape(out)
        if np.ndim(out_dot) == 0:  # the symbolic zero: the output does not depend on x
            out_dot = np.zeros((stop - start, *shape))
        blocks.append(np.broadcast_to(out_dot, (stop - start, *shape)).reshape(stop - start, -1))
        start = stop
    if not blocks:
        return np.zeros(x_arr.shape)
    rows = np.concatenate(blocks) if len(blocks) > 1 else blocks[0]
    return np.asarray(rows, dtype=float).T.reshape(np.shape(out) + x_arr.shape)


def elementwise_grad(
    fun: Callable[..., Any],
    wrt: int | str | Sequence[int | str] = 0,
    *,
    argnums: int | str | Sequence[int | str] | None = None,
) -> Callable[..., Any]:
    """The gradient of ``sum(fun(...))``: for an elementwise ``fun``, each entry's derivative.

    It is ``grad`` of a generated function returning ``np.sum(fun(...))``, so it can be
    differentiated again (``elementwise_grad(elementwise_grad(f))``, ``jacobian`` of it).
    """
    if star_index(fun) is not None:
        return _star_made(fun, lambda g: elementwise_grad(g, wrt, argnums=argnums), "")
    gradient = grad(summed(fun), pick_wrt(wrt, argnums))

    def elementwise_grad_fun(*args: Any, **kwargs: Any) -> Any:
        return gradient(*args, **kwargs)

    mark(elementwise_grad_fun, fun)
    elementwise_grad_fun._s2s_spec = gradient._s2s_spec  # type: ignore[attr-defined]
    elementwise_grad_fun.__wrapped__ = gradient.__wrapped__  # type: ignore[attr-defined]
    return elementwise_grad_fun


def hvp(fun: Callable[..., Any], wrt: int | str = 0) -> Callable[..., Any]:
    """``hvp(fun)(x, v)``: the Hessian of ``fun`` at ``x`` times ``v``, without forming it
    (forward mode over the generated gradient)."""
    if star_index(fun) is not None:
        return _star_made(fun, lambda g: hvp(g, wrt), "hvp", trailing=1)
    gradient = grad(fun, wrt)
    (pos,), _ = _positions(fun, wrt)
    bound: list[Any] = []  # [method, tangent program, its compiled code, cache key, tangent kw]

    def hvp_fun(*args: Any, **kwargs: Any) -> Any:
        *primals, v = args
        if kwargs:  # fixed for the call: the slower path through a partial of the gradient
            primals, kwargs = _as_positional(fun, tuple(primals), kwargs)
            fixed = functools.partial(gradient, **kwargs) if kwargs else gradient
            return _as_input(_jvp_wrt(fixed, list(primals), [pos], [v])[1], primals, pos)
        if bound and bound[1] is not None and len(primals) > pos:
            x = primals[pos]
            if (
                type(x) is _ndarray
                and type(v) is _ndarray
                and x.dtype == _F64
                and v.dtype == _F64
                and x.shape == v.shape
                and _api_cache.get(bound[3]) is bound[2]  # not generated again since
            ):  # the checks of _jvp_wrt hold: run the bound tangent program directly
                call = (bound[0].__self__, *primals) if bound[0] is not None else primals
                out, out_dot = bound[1](*call, **{bound[4]: v})
                if type(out) is _ndarray and type(out_dot) is _ndarray:
                    if out_dot.shape == out.shape and out_dot.dtype == out.dtype:
                        return out_dot
                check_not_none(gradient, out)
                return _tangent_like(out_dot, out)
        result = _as_input(_jvp_wrt(gradient, primals, [pos], [v])[1], primals, pos)
        if len(primals) > pos:
            refuse_complex_gradient(result, primals[pos])
        if not bound or _api_cache.get(bound[3]) is not bound[2]:  # first call, or stale
            bound[:] = _hvp_program(gradient, pos)
        return result

    mark(hvp_fun, fun, _AGAIN.format(kind="hvp", name=_label(fun)))
    setattr(hvp_fun, SOURCE, lambda: _sources(gradient, [pos], "jvp"))
    return hvp_fun


def _as_input(result: Any, primals: Sequence[Any], pos: int) -> Any:
    """An ``hvp`` of a model object or a dataclass (its tangent program gives a dict of
    attribute parts) as an object of the input's class."""
    if len(primals) > pos:
        x = primals[pos]
        if _plain(x) or (dataclasses.is_dataclass(x) and not isinstance(x, type)):
            return fix_grad(result, x)
    return result


def _hvp_program(gradient: Any, pos: int) -> list[Any]:
    """What ``hvp`` runs for arrays of floats: ``[bound method or None, the bound tangent
    program of the gradient, its compiled code, the compiled code's cache key, the name of
    the tangent keyword]`` (the compiled code is checked against the cache at each call:
    ``clear_cache`` and ``defgrad`` generate it again)."""
    made, target, params = _resolve(gradient)
    names = (params[pos],)
    compiled = compile_forward(target, names)
    jvp_fn, tp = _bound_jvp(target, names)
    key = ("fwd", code_key(primal(target)), names)
    if _api_cache.get(key) is not compiled:  # not cached as expected: no fast path
        return [None, None, None, key, None]
    method = made if inspect.ismethod(made) else None
    return [method, jvp_fn, compiled, key, tp[names[0]]]


def hessian(
    fun: Callable[..., Any],
    wrt: int | str = 0,
    *,
    argnums: int | str | None = None,
) -> Callable[..., Any]:
    """The Hessian of a scalar ``fun`` (forward mode over the generated gradient)."""
    wrt = pick_wrt(wrt, argnums)
    if star_index(fun) is not None:
        return _star_made(fun, lambda g: hessian(g, wrt), "hessian")
    if isinstance(wrt, (tuple, list)):  # blocks ((H00, H01), (H10, H11)), as in JAX
        hess = jacobian(jacobian(fun, wrt), wrt, mode="fwd")
        mark(hess, fun, _AGAIN.format(kind="hessian", name=_label(fun)))
        return hess
    scalar = jacobian(grad(fun, wrt), wrt, mode="fwd")  # one batched pass
    nested: list[Callable[..., Any]] = []

    def hessian_fun(*args: Any, **kwargs: Any) -> Any:
        if not nested:
            try:
                return scalar(*args, **kwargs)
            except ValueError as exc:
                if not str(exc).startswith("grad requires a scalar output"):
                    raise
            nested.append(jacobian(jacobian(fun, wrt), wrt, mode="fwd"))  # a vector output
        return nested[0](*args, **kwargs)

    mark(hessian_fun, fun, _AGAIN.format(kind="hessian", name=_label(fun)))
    hessian_fun.__dict__[SOURCE] = getattr(scalar, SOURCE)
    inner = getattr(scalar, _JACOBIAN_OF)  # jacobian(hessian(f)): third derivatives
    setattr(hessian_fun, _JACOBIAN_OF, (hessian_fun, *inner[1:]))
    return hessian_fun


def _star_made(
    fun: Any, transform: Callable[[Any], Callable[..., Any]], kind: str, trailing: int = 0
) -> Callable[..., Any]:
    """``transform(fun)`` for ``fun`` with ``*args``: per call, of the function with one
    named parameter per argument (:mod:`varargs`)."""
    made = per_call(fun, transform, trailing)
    mark(made, fun, f"{kind}({_label(fun)}) cannot be differentiated again" if kind else None)
    return made


def _label(fun: Any) -> str:
    return str(getattr(fun, "__name__", None) or type(fun).__name__)
