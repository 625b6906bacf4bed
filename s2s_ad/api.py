"""Public transformations: ``grad``, ``value_and_grad``, ``vjp`` and the transform cache."""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .emit import Compiled, emit
from .errors import TransformError
from .normalize import normalize
from .reverse import Reverse
from .source import parse_function

_CACHE: dict[tuple[Any, ...], Compiled] = {}
_IN_PROGRESS: set[tuple[Any, ...]] = set()
STATS = {"transforms": 0}


def clear_cache() -> None:
    """Forget every generated function (after ``defgrad`` changes the rules)."""
    _CACHE.clear()
    _NORMALIZED.clear()


def _key(
    func: Any, wrt: tuple[str, ...], has_aux: bool, scalars: frozenset[str] = frozenset()
) -> tuple[Any, ...]:
    return (func.__code__, wrt, has_aux, scalars)


def compile_adjoint(
    func: Any, wrt: tuple[str, ...], has_aux: bool = False, scalars: frozenset[str] = frozenset()
) -> Compiled:
    """Generated code for ``func`` differentiated with respect to the parameters ``wrt``.

    Cached by (code object, wrt, has_aux, scalars): a second request does not re-parse.
    ``scalars`` names parameters known to hold Python/NumPy scalars; the code generated
    for them skips the shape bookkeeping that arrays need.
    """
    func = inspect.unwrap(func)
    if not isinstance(func, types.FunctionType):
        raise TransformError(
            f"{getattr(func, '__qualname__', func)!s}: not a Python function",
            hint="register a gradient rule with s2s_ad.defgrad",
        )
    key = _key(func, wrt, has_aux, scalars)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    _IN_PROGRESS.add(key)
    try:
        parsed, fn = _normalized(func)
        unknown = [w for w in wrt if w not in fn.params]
        if unknown:
            raise ValueError(f"{fn.name} has no parameter {unknown[0]!r}")
        rev = Reverse(fn, list(wrt), _resolve_callee, has_aux, scalars)
        sweeps = rev.run()
        returned = str(rev.returned)
        origin = f"{parsed.filename}:{parsed.first_line}"
        compiled = emit(sweeps, func, fn.name, fn.params, rev.ad, rev.tape, returned, origin)
        _CACHE[key] = compiled
        return compiled
    finally:
        _IN_PROGRESS.discard(key)


_NORMALIZED: dict[Any, tuple[Any, Any]] = {}


def _normalized(func: Any) -> tuple[Any, Any]:
    """Parse and normalize once per code object (every variant starts from the same tree)."""
    hit = _NORMALIZED.get(func.__code__)
    if hit is None:
        STATS["transforms"] += 1
        parsed = parse_function(func)
        hit = _NORMALIZED[func.__code__] = (parsed, normalize(parsed))
    return hit


@dataclass
class _Pair:
    fwd: Callable[..., Any]
    bwd: Callable[..., Any]


_BOUND: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], _Pair]] = weakref.WeakKeyDictionary()


def _resolve_callee(func: Any, wrt: tuple[str, ...]) -> _Pair:
    """Adjoint of a user function called from generated code (recursion made lazy)."""
    per_func = _BOUND.setdefault(func, {})
    pair = per_func.get(wrt)
    if pair is None or _key(func, wrt, False) not in _CACHE:
        pair = per_func[wrt] = _make_pair(func, wrt)
    return pair


def _make_pair(func: Any, wrt: tuple[str, ...]) -> _Pair:
    key = _key(func, wrt, False)
    if key in _IN_PROGRESS:
        cell: dict[str, Any] = {}

        def bound() -> dict[str, Any]:
            if not cell:
                cell.update(compile_adjoint(func, wrt).bind(func))
            return cell

        return _Pair(lambda *a, **k: bound()["fwd"](*a, **k), lambda s, g: bound()["bwd"](s, g))
    fns = compile_adjoint(func, wrt).bind(func)
    return _Pair(fns["fwd"], fns["bwd"])


# --- argument handling --------------------------------------------------------------------


def _param_names(fun: Any) -> list[str]:
    return list(inspect.signature(fun).parameters)


def _wrt_names(fun: Any, wrt: int | str | Sequence[int | str]) -> tuple[list[str], bool]:
    names = _param_names(fun)
    single = isinstance(wrt, (int, str))
    items = [wrt] if single else list(wrt)  # type: ignore[list-item]
    out = []
    for item in items:
        if isinstance(item, int):
            if not -len(names) <= item < len(names):
                raise ValueError(f"wrt={item} is out of range for {len(names)} parameters")
            out.append(names[item])
        elif isinstance(item, str):
            if item not in names:
                raise ValueError(f"{getattr(fun, '__name__', fun)} has no parameter {item!r}")
            out.append(item)
        else:
            raise TypeError(f"wrt must be an int, a str or a tuple of them, got {item!r}")
    return out, single


def _check_float(name: str, value: Any) -> None:
    if isinstance(value, (tuple, list)):
        for v in value:
            _check_float(name, v)
        return
    if isinstance(value, dict):
        for v in value.values():
            _check_float(name, v)
        return
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer))):
        raise TypeError(
            f"grad requires real-valued inputs; argument {name!r} is an integer "
            f"({type(value).__name__}). Pass a float (e.g. {float(value)!r}) or leave it out of wrt"
        )
    if isinstance(value, np.ndarray) and not np.issubdtype(value.dtype, np.inexact):
        raise TypeError(
            f"grad requires real-valued inputs; argument {name!r} has dtype {value.dtype}. "
            "Convert it with .astype(float) or leave it out of wrt"
        )


def fix_grad(g: Any, x: Any) -> Any:
    """Give a gradient the structure, shape and float dtype of its input."""
    if isinstance(x, (tuple, list)):
        parts = [fix_grad(g[i] if not _zero(g) else 0.0, v) for i, v in enumerate(x)]
        return type(x)(parts)
    if isinstance(x, dict):
        return {k: fix_grad(g[k] if not _zero(g) else 0.0, v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
        out = np.asarray(g, dtype=dtype)
        if out.shape != x.shape:
            out = np.broadcast_to(out, x.shape).copy() if out.size == 1 else out.reshape(x.shape)
        return out
    if isinstance(x, np.generic):
        return x.dtype.type(np.asarray(g).reshape(()))
    if isinstance(x, float):
        return float(np.asarray(g).reshape(()))
    return g


def _zero(g: Any) -> bool:
    return g is None or (type(g) is float and g == 0.0)


class _Bound:
    """Arguments of one call, bound to the primal's parameters."""

    def __init__(self, fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        sig = inspect.signature(fun)
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        self.values = [ba.arguments[p] for p in sig.parameters]


def _generated(
    fun: Any, wrt: tuple[str, ...], has_aux: bool, scalars: frozenset[str] = frozenset()
) -> dict[str, Any]:
    compiled = compile_adjoint(fun, wrt, has_aux, scalars)
    return compiled.bind(inspect.unwrap(fun))


_SCALAR_TYPES = (float, int, bool, np.generic)


class _Variants:
    """The generated gradient, specialized on which arguments are scalars, made on demand."""

    def __init__(self, fun: Any, wrt: tuple[str, ...], has_aux: bool, general: Any) -> None:
        self.fun, self.wrt, self.has_aux = fun, wrt, has_aux
        self.target = fun.__func__ if inspect.ismethod(fun) else fun
        self.params = _param_names(self.target)
        self.offset = 1 if inspect.ismethod(fun) else 0
        self.by_mask: dict[tuple[bool, ...], Any] = {(): general}

    def get(self, values: list[Any]) -> Any:
        mask = tuple(isinstance(v, _SCALAR_TYPES) for v in values)
        fn = self.by_mask.get(mask)
        if fn is None:
            names = frozenset(p for p, m in zip(self.params[self.offset :], mask) if m)
            fn = _generated(self.target, self.wrt, self.has_aux, names)["grad"]
            if self.offset:
                fn = functools.partial(fn, self.fun.__self__)
            self.by_mask[mask] = fn
        return fn


def _scalar(value: Any) -> None:
    shape = np.shape(value)
    if int(np.prod(shape)) != 1 or isinstance(value, (tuple, list, dict)):
        raise ValueError(
            f"grad requires a scalar output, got shape {shape}; "
            "use s2s_ad.vjp or s2s_ad.jacobian for non-scalar outputs"
        )


def _prepare(fun: Any, wrt: Any, has_aux: bool) -> tuple[list[str], bool, list[str], Any]:
    names, single = _wrt_names(fun, wrt)
    if inspect.ismethod(fun):
        # a bound method: differentiate the function, with the instance passed first
        fns = _generated(fun.__func__, tuple(names), has_aux)
        return names, single, _param_names(fun), functools.partial(fns["grad"], fun.__self__)
    fns = _generated(fun, tuple(names), has_aux)
    return names, single, _param_names(fun), fns["grad"]


def value_and_grad(
    fun: Callable[..., Any], wrt: int | str | Sequence[int | str] = 0, *, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning ``(value, gradient)`` of ``fun``, in one forward and backward sweep.

    Args:
        fun: A Python function with a scalar output.
        wrt: Position or name of the parameter to differentiate, or a tuple of them.
        has_aux: ``fun`` returns ``(value, aux)``; the result is then ``((value, aux), grads)``.

    Raises:
        TransformError: When ``fun`` cannot be differentiated (raised here, at transform time).
    """
    names, single, params, generated = _prepare(fun, wrt, has_aux)
    where = [params.index(n) for n in names]
    variants = _Variants(fun, tuple(names), has_aux, generated)

    @functools.wraps(fun)
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        values = _Bound(fun, args, kwargs).values
        for name, pos in zip(names, where):
            _check_float(name, values[pos])
        value, grads = variants.get(values)(*values)
        _scalar(value[0] if has_aux else value)
        grads = tuple(fix_grad(g, values[pos]) for g, pos in zip(grads, where))
        return value, (grads[0] if single else grads)

    value_and_grad_fun.__wrapped__ = getattr(generated, "func", generated)  # type: ignore[attr-defined]
    return value_and_grad_fun


def grad(
    fun: Callable[..., Any], wrt: int | str | Sequence[int | str] = 0, *, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient function of ``fun``, generated from its source.

    Args:
        fun: A Python function with a scalar output (float, 0-d or size-1 array).
        wrt: Position or name of the parameter to differentiate, or a tuple of them
            (then the gradient function returns a tuple).
        has_aux: ``fun`` returns ``(value, aux)``; the gradient function then returns
            ``(grads, aux)``.

    Returns:
        A function with ``fun``'s signature returning the gradient(s).

    Raises:
        TransformError: When ``fun`` cannot be differentiated (raised here, at transform time).
    """
    inner = value_and_grad(fun, wrt, has_aux=has_aux)

    @functools.wraps(fun)
    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        value, grads = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    grad_fun.__wrapped__ = inner.__wrapped__  # type: ignore[attr-defined]
    return grad_fun


def source(df: Callable[..., Any]) -> str:
    """The generated source of a gradient function (from ``grad`` or ``value_and_grad``).

    ``inspect.getsource(df)`` returns the same text.
    """
    generated = getattr(df, "__wrapped__", None)
    if (
        generated is None
        or not getattr(generated, "__code__", None)
        or not (generated.__code__.co_filename.startswith("<s2s_ad:"))
    ):
        raise TypeError("source() expects a function returned by s2s_ad.grad or value_and_grad")
    return inspect.getsource(generated)


def pullback_wrt(
    fun: Callable[..., Any], args: Sequence[Any], positions: Sequence[int]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """Run ``fun(*args)`` and return ``(out, pullback)`` for the arguments at ``positions``.

    The first call of ``pullback`` reuses the forward sweep's tape; later calls run the
    forward sweep again (the backward sweep consumes its tape).
    """
    params = _param_names(fun)
    names = tuple(params[i] for i in positions)
    for name, pos in zip(names, positions):
        _check_float(name, args[pos])
    if inspect.ismethod(fun):
        args = (fun.__self__, *args)
        positions = [p + 1 for p in positions]
        fun = fun.__func__
    fns = _generated(fun, names, False)
    out, saved = fns["fwd"](*args)
    state = {"saved": saved}

    def pullback(cotangent: Any) -> tuple[Any, ...]:
        current = state.pop("saved", None)
        if current is None:
            _, current = fns["fwd"](*args)
        grads = fns["bwd"](current, cotangent)
        return tuple(fix_grad(g, args[pos]) for g, pos in zip(grads, positions))

    return out, pullback


def vjp(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """Evaluate ``fun(*primals)`` and return ``(out, pullback)``.

    ``pullback(cotangent)`` returns one gradient per primal (a tuple). The output may
    have any shape or structure; the cotangent has the output's structure.
    """
    return pullback_wrt(fun, primals, range(len(primals)))
