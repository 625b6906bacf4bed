"""Public transformations: ``grad``, ``value_and_grad``, ``vjp`` and the transform cache."""

from __future__ import annotations

import functools
import inspect
import operator
import sys
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import TransformError
from .html import repr_html
from .normal_forms import (
    NORMALIZED,
    code_key,
    normalized_for,
    normalized_parts,
    paused_gc,
)
from .normal_forms import STATS as STATS
from .normal_forms import normalized as normalized
from .object_state import (
    StateBound,
    compile_top,
    mark_stateful,
    needs_table,
    with_state_table,
)
from .source import user_origin
from .targets import REFUSE, SPEC, as_method, bind_first, define, mark, primal, signature
from .varargs import fixed_arity
from .wrapper import Binder, Variants, check_not_none, make_entry
from .wrapper import check_float as _check_float
from .wrapper import fix_grad as fix_grad
from .wrapper import label as _label

if TYPE_CHECKING:
    from .emit import Compiled

# The transformer (``normalize``, ``reverse``, ``emit``) and with it libcst are imported by
# the functions that transform, not here: ``import s2s_ad`` stays light. (``source`` is
# imported here, before the package binds its function ``source`` over the module name.)

_CACHE: dict[tuple[Any, ...], Compiled] = {}
_IN_PROGRESS: set[tuple[Any, ...]] = set()
#: Per function and options (the cache key without argument kinds): the variants made,
#: as (normal form, the scalar and vector sets' answers, their program).
_VARIANTS: dict[tuple[Any, ...], list[tuple[Any, Any, Any, Compiled]]] = {}


def clear_cache() -> None:
    """Forget every generated function (after ``defgrad`` changes the rules)."""
    _CACHE.clear()
    _VARIANTS.clear()
    NORMALIZED.clear()
    _MADE.clear()
    emit = sys.modules.get(f"{__package__}.emit")  # imported by the first transform
    if emit is not None:
        emit.PROGRAMS.clear()


def _key(
    func: Any,
    wrt: tuple[str, ...],
    has_aux: bool,
    scalars: frozenset[str] = frozenset(),
    vectors: frozenset[str] = frozenset(),
    pure: str = "",
    variables: bool = False,
) -> tuple[Any, ...]:
    return (code_key(func), wrt, has_aux, scalars, vectors, pure, variables)


class _GradSpec:
    """What a ``grad`` function computes, so that it can be differentiated again.

    Higher order transforms the *pure* generated gradient: the same sweeps, returning
    only the gradient(s) and updating no adjoint in place.
    """

    def __init__(self, fun: Any, wrt: tuple[str, ...], single: bool) -> None:
        self.fun, self.wrt, self.single = fun, wrt, single
        self._pure: Any = None
        self._compiled: Any = None  # what made _pure, from _target (made again when stale)
        self._target: Any = None
        self.owner: Any = None  # the gradient function it describes (targets.spec_of)

    def pure_function(self) -> Any:
        if self._pure is None or not _pins_hold(self._compiled, self._target):
            target = primal(self.fun)
            bound = inspect.ismethod(target)
            if bound:
                target = primal(target.__func__)
            compiled = compile_adjoint(target, self.wrt, pure="one" if self.single else "many")
            self._compiled, self._target = compiled, target
            self._pure = compiled.bind(target)["grad"]
            if bound:  # a Python function of the method's own parameters
                self._pure = bind_first(self._pure, self.fun.__self__, signature(self.fun))
        return self._pure


def compile_adjoint(
    func: Any,
    wrt: tuple[str, ...],
    has_aux: bool = False,
    scalars: frozenset[str] = frozenset(),
    vectors: frozenset[str] = frozenset(),
    pure: str = "",
    variables: bool = False,
) -> Compiled:
    """Generated code for ``func`` differentiated with respect to the parameters ``wrt``.

    Cached by (code object, wrt, has_aux, scalars): a second request does not re-parse.
    ``scalars`` names parameters known to hold Python/NumPy scalars and ``vectors`` those
    holding 1-d arrays; the code generated for them skips shape bookkeeping that general
    arrays need (an element of a vector is a scalar).
    """
    func = python_function(func, "register a gradient rule with s2s_ad.defgrad")
    key = _key(func, wrt, has_aux, scalars, vectors, pure, variables)
    hit = _CACHE.get(key)
    if hit is not None and _pins_hold(hit, func):
        return hit
    _IN_PROGRESS.add(key)
    try:
        with paused_gc():
            return _compile_adjoint(func, key, wrt, has_aux, scalars, vectors, pure, variables)
    finally:
        _IN_PROGRESS.discard(key)


def _compile_adjoint(
    func: Any,
    key: tuple[Any, ...],
    wrt: tuple[str, ...],
    has_aux: bool,
    scalars: frozenset[str],
    vectors: frozenset[str],
    pure: str,
    variables: bool,
) -> Compiled:
    """:func:`compile_adjoint` on a cache miss: normalize, reverse pass, emit."""
    from .emit import emit
    from .reverse import Reverse

    parsed, fn = normalized_for(func, wrt)
    resolver = functools.partial(_resolve_callee, pure=bool(pure), variables=variables)
    rev = Reverse(
        fn,
        list(wrt),
        resolver,
        has_aux,
        scalars,
        parsed.globals,
        vectors,
        bool(pure),
        variables,
    )
    # the reverse pass asks of the argument kinds only which variables hold scalars and
    # which 1-d arrays: a variant whose sets answer its questions alike gets the same code
    made = _VARIANTS.setdefault((*key[:3], *key[5:]), [])
    for normal, scalar, vector, compiled in made:
        if (
            normal is fn
            and scalar.agrees(rev.scalar.names)
            and vector.agrees(rev.vectors.names)
            and _pins_hold(compiled, func)
        ):
            _CACHE[key] = compiled
            return compiled
    sweeps = rev.run()
    returned = str(rev.returned)
    origin = user_origin(parsed.filename, parsed.first_line)
    compiled = emit(sweeps, func, fn.name, fn.params, rev.ad, rev.tape, returned, origin, pure)
    compiled.pinned = dict(rev.pinned)
    _CACHE[key] = compiled
    made.append((fn, rev.scalar, rev.vectors, compiled))
    return compiled


def _pins_hold(compiled: Compiled, func: Any) -> bool:
    """Whether the global names of user functions that ``compiled`` (a gradient
    differentiated again) calls still name those functions."""
    pinned = getattr(compiled, "pinned", None)
    if not pinned:
        return True
    scope = getattr(func, "__globals__", {})
    return all(scope.get(name) is obj for name, obj in pinned.items())


def python_function(func: Any, hint: str = "") -> types.FunctionType:
    """``func``'s primal (what this library's wrappers wrap): refused unless it is a
    Python function, the only thing the transforms read the source of."""
    func = primal(func)
    if not isinstance(func, types.FunctionType):
        raise TransformError(
            f"{getattr(func, '__qualname__', func)!s}: not a Python function", hint=hint
        )
    return func


def compile_forward(func: Any, wrt: tuple[str, ...]) -> Compiled:
    """The tangent program of ``func`` for the parameters ``wrt`` (cached like the adjoints)."""
    from .emit import emit_forward
    from .forward import Forward

    func = python_function(func)
    key = ("fwd", code_key(func), wrt)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    parsed, fn = normalized_for(func, wrt)
    with paused_gc():
        forward = Forward(fn, list(wrt), _resolve_callee, parsed.globals)
        tan = forward.run_forward()
        origin = user_origin(parsed.filename, parsed.first_line)
        compiled = emit_forward(tan, func, fn.name, fn.params, forward.ad, origin)
    _CACHE[key] = compiled
    return compiled


@dataclass
class _Pair:
    fwd: Callable[..., Any]
    bwd: Callable[..., Any]


_BOUND: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], _Pair]] = weakref.WeakKeyDictionary()


def _resolve_callee(
    func: Any, wrt: tuple[str, ...], pure: bool = False, variables: bool = False
) -> _Pair:
    """Adjoint of a user function called from generated code (recursion made lazy)."""
    func = primal(func)
    per_func = _BOUND.setdefault(func, {})
    pair = per_func.get((wrt, pure, variables))
    flag = "many" if pure else ""
    if pair is None or _key(func, wrt, False, pure=flag, variables=variables) not in _CACHE:
        pair = per_func[(wrt, pure, variables)] = _make_pair(func, wrt, flag, variables)
    return pair


def _make_pair(func: Any, wrt: tuple[str, ...], pure: str = "", variables: bool = False) -> _Pair:
    key = _key(func, wrt, False, pure=pure, variables=variables)
    options = {"pure": pure, "variables": variables}
    if key in _IN_PROGRESS:
        cell: dict[str, Any] = {}

        def bound() -> dict[str, Any]:
            if not cell:
                cell["fns"] = compile_adjoint(func, wrt, **options).bind(func)
            return cell["fns"]

        return _Pair(lambda *a, **k: bound()["fwd"](*a, **k), lambda s, g: bound()["bwd"](s, g))
    fns = compile_adjoint(func, wrt, **options).bind(func)
    return _Pair(fns["fwd"], fns["bwd"])


# --- argument handling --------------------------------------------------------------------


def _param_names(fun: Any) -> list[str]:
    """The parameters of what is differentiated for ``fun`` (see ``targets.signature``)."""
    return list(signature(fun).parameters)


def _wrt_names(fun: Any, wrt: Any) -> tuple[list[str], bool]:
    """Parameter names for ``wrt`` (an int, a str, or a tuple/list of them) and whether
    it was a single one.

    Raises:
        TypeError: For anything but an int, a str or a tuple/list of them (naming it).
        ValueError: For a position out of range, an unknown name, or an empty tuple.
    """
    names = _param_names(fun)
    single = _single_wrt(wrt)
    if not single and not isinstance(wrt, (tuple, list)):
        raise TypeError(f"wrt must be an int, a str or a tuple of them, got {wrt!r}")
    items = [wrt] if single else list(wrt)
    if not items:
        raise ValueError("wrt is empty: name at least one parameter to differentiate")
    out = []
    for item in items:
        if _single_wrt(item) and not isinstance(item, str):
            pos = int(item)
            if not -len(names) <= pos < len(names):
                raise ValueError(
                    f"wrt={pos} is out of range: {getattr(fun, '__name__', fun)} has "
                    f"{len(names)} parameter{'s' if len(names) != 1 else ''}"
                )
            out.append(names[pos])
        elif isinstance(item, str):
            if item not in names:
                raise ValueError(f"{getattr(fun, '__name__', fun)} has no parameter {item!r}")
            out.append(item)
        else:
            raise TypeError(f"wrt must be an int, a str or a tuple of them, got {item!r}")
    return out, single


def _single_wrt(wrt: Any) -> bool:
    """Whether ``wrt`` names one parameter: a str, or an integer that is not a bool."""
    if isinstance(wrt, (bool, np.bool_)):
        return False
    return isinstance(wrt, (int, np.integer, str))


def pick_wrt(wrt: Any, argnums: Any, default: Any = 0) -> Any:
    """``wrt``, or ``argnums`` (its alias, as in JAX and autograd) when that is given.

    Raises:
        TypeError: When both are given with different values.
    """
    if argnums is None:
        return wrt
    if wrt != default and wrt != argnums:
        raise TypeError(f"give wrt or argnums, not both (got wrt={wrt!r}, argnums={argnums!r})")
    return argnums


_RETURNS_VALUE: set[types.CodeType] = set()


def check_returns_value(fun: Any) -> None:
    """Refuse a function none of whose ``return`` statements gives a value: it returns
    ``None`` (a forgotten ``return``), which has no derivative.

    Raises:
        TransformError: Naming the function and pointing at its ``def`` line.
    """
    target = fun.__func__ if inspect.ismethod(fun) else fun
    parsed, _ = normalized_parts(target)
    code = parsed.func.__code__
    if code in _RETURNS_VALUE:
        return  # checked already
    if code.co_flags & inspect.CO_GENERATOR:
        raise parsed.error(
            f"{parsed.name}: a generator function (its value is a generator, not a number)",
            parsed.node,
            "differentiate a function that consumes it (for item in "
            f"{parsed.name}(...): ...): generators called that way are differentiated",
        )
    if parsed.returns_value():
        _RETURNS_VALUE.add(code)
    else:
        raise parsed.error(
            f"{parsed.name}: a function that returns None (no return statement gives a value)",
            parsed.node,
            "return the value to differentiate",
        )


class GradientFunction:
    """A function returned by ``grad``/``value_and_grad``: calls the generated code.

    It pickles by reference to its primal (module and qualified name, with ``wrt`` and
    ``has_aux``): unpickling calls the same transformation again, so the derivative is
    regenerated (or taken from the cache) where it is loaded. In a notebook it shows the
    side-by-side view of the primal and the generated code.
    """

    def __init__(
        self, call: Callable[..., Any], maker: Callable[..., Any], fun: Any, wrt: Any, has_aux: bool
    ) -> None:
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(self, attr, getattr(call, attr, None))
        self.__dict__.update(call.__dict__)  # __wrapped__ (the generated code), _s2s_spec
        self._s2s_call = call
        self._s2s_primal = fun
        self._s2s_recipe = (maker, fun, wrt, has_aux)

    # Calling the instance calls ``_s2s_call`` itself: the property's getter is a C
    # function, so no Python frame of this class runs per call.
    __call__ = property(operator.attrgetter("_s2s_call"))

    @property
    def __wrapped__(self) -> Any:
        """The generated code that ran last: the variant for the argument kinds of the
        last call (what ``source`` and ``inspect.getsource`` show)."""
        variants = self.__dict__.get("_s2s_variants")
        if variants is not None:
            fn = variants.last[0]
            return getattr(fn, "func", fn)  # a bound method's variant is a partial
        return self.__dict__.get("__wrapped__")

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, self._s2s_recipe)

    def __repr__(self) -> str:
        return f"<gradient function of {self.__qualname__}>"

    def _repr_html_(self) -> str:
        return repr_html(self)

    def _s2s_source(self) -> str:
        """The generated source (what :func:`source` returns), for the HTML view."""
        return source(self)


def _rebuild(maker: Callable[..., Any], fun: Any, wrt: Any, has_aux: bool) -> Any:
    """Unpickle a gradient function: transform its primal again (cached per process)."""
    return maker(fun, wrt, has_aux=has_aux)


def _generated(
    fun: Any,
    wrt: tuple[str, ...],
    has_aux: bool,
    scalars: frozenset[str] = frozenset(),
    vectors: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    compiled = compile_top(compile_adjoint, fun, wrt, has_aux, scalars, vectors)
    bound = compiled.bind(primal(fun))
    if needs_table(compiled):  # object state: run with a table of stored values
        return StateBound(bound)
    return bound


def _make_call(fun: Any, wrt: Any, has_aux: bool, mode: str) -> Callable[..., Any]:
    """The function ``grad`` (``mode="grad"``) or ``value_and_grad`` returns, before it is
    wrapped in a :class:`GradientFunction`."""
    names, single = _wrt_names(fun, wrt)
    check_returns_value(fun)
    method = inspect.ismethod(fun)
    target = fun.__func__ if method else fun  # a bound method: the instance passed first

    def make(scalars: frozenset[str], vectors: frozenset[str]) -> Any:
        fn = _generated(target, tuple(names), has_aux, scalars, vectors)["grad"]
        return functools.partial(fn, fun.__self__) if method else fn

    def shaped(scalars: frozenset[str], vectors: frozenset[str], key: tuple[Any, ...]) -> Any:
        from .lower import shape_variant

        compiled = compile_top(compile_adjoint, target, tuple(names), has_aux, scalars, vectors)
        with paused_gc():
            fn = shape_variant(compiled, primal(target), key, _param_names(fun))
        if fn is not None and needs_table(compiled):
            fn = with_state_table(fn)
        return functools.partial(fn, fun.__self__) if method and fn is not None else fn

    general = make(frozenset(), frozenset())
    variants = Variants(make, _param_names(fun), general, shaped)

    def restate() -> bool:
        if not mark_stateful(target):
            return False
        variants.reset(make(frozenset(), frozenset()))
        return True

    variants.restate = restate
    call = make_entry(fun, names, single, has_aux, mode, variants, Binder(fun))
    if mode == "value_and_grad":
        mark(
            call,
            fun,
            f"value_and_grad({_label(fun)}) returns (value, gradient), not a scalar: "
            f"differentiate grad({_label(fun)}) instead",
        )
    elif has_aux:
        refusal = (
            f"grad({_label(fun)}, has_aux=True) returns (gradient, aux): differentiate "
            "grad of a function without aux instead"
        )
        mark(call, fun, refusal)
    else:
        mark(call, fun)
        spec = _GradSpec(fun, tuple(names), single)  # carries what it computes
        spec.owner = call
        setattr(call, SPEC, spec)
    call.__wrapped__ = getattr(general, "func", general)  # type: ignore[attr-defined]
    call._s2s_variants = variants  # type: ignore[attr-defined]
    return call


#: Entry functions made by ``grad``/``value_and_grad`` for plain functions, by request:
#: a repeated ``grad(f)`` reuses one while ``f``'s code, defaults and primal are the same
#: objects (``clear_cache`` forgets them all).
_MADE: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]]] = (
    weakref.WeakKeyDictionary()
)


_STAR_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _state(fun: types.FunctionType) -> tuple[Any, ...]:
    """What the made function depends on besides the rules (``defgrad`` clears the
    cache): the code, the defaults, the markers of s2s_ad's own functions, and for a
    pass-through wrapper (``*args``) the function it forwards to."""
    code = fun.__code__
    forwards = primal(fun) if code.co_flags & _STAR_FLAGS else None
    marks = fun.__dict__.get(SPEC), fun.__dict__.get(REFUSE)
    return code, fun.__defaults__, fun.__kwdefaults__, forwards, *marks


def _request_key(mode: str, wrt: Any, argnums: Any, has_aux: bool) -> tuple[Any, ...]:
    """The key of a ``grad``/``value_and_grad`` request as given (its arguments before
    they are read): a repeated ``grad(f)`` finds its made function by it at once."""
    return ("request", mode, wrt, argnums, has_aux)


def _made(fun: Any, key: tuple[Any, ...]) -> GradientFunction | None:
    """A copy of the gradient function made for the same request on the same plain
    function, while what it depends on (:func:`_state`: code, defaults, ...) is still the
    same objects."""
    try:
        hit = _MADE.get(fun, _NONE).get(key)
    except TypeError:  # an unhashable wrt (a list): not remembered
        return None
    if hit is None:
        return None
    code, defaults, kwdefaults, forwards, spec, refuse, made = hit
    if code is not fun.__code__ or defaults is not fun.__defaults__:
        return None
    if kwdefaults is not fun.__kwdefaults__:
        return None
    marks = fun.__dict__
    if spec is not marks.get(SPEC) or refuse is not marks.get(REFUSE):
        return None
    if forwards is not None and forwards is not primal(fun):  # a pass-through wrapper
        return None
    return _copy(made)


def _copy(made: GradientFunction) -> GradientFunction:
    """A new gradient function with the attributes of ``made`` (each ``grad(f)`` returns
    its own object, as a first ``grad(f)`` does, without building it again)."""
    out = object.__new__(GradientFunction)
    out.__dict__.update(made.__dict__)
    return out


def _remember(fun: Any, key: tuple[Any, ...], made: Any) -> None:
    """Keep a copy of ``made`` (attributes a caller sets on ``made`` stay its own) for
    :func:`_made` (a plain function and a hashable request only)."""
    if type(fun) is types.FunctionType and isinstance(made, GradientFunction):
        try:
            _MADE.setdefault(fun, {})[key] = (*_state(fun), _copy(made))
        except TypeError:
            pass


_NONE: dict[Any, Any] = {}


def _build(maker: Callable[..., Any], fun: Any, wrt: Any, has_aux: bool) -> GradientFunction:
    """A :class:`GradientFunction` for ``maker`` (``grad`` or ``value_and_grad``)."""
    mode = maker.__name__
    key: tuple[Any, ...] | None = None
    if type(fun) is types.FunctionType:
        key = (mode, tuple(wrt) if isinstance(wrt, list) else wrt, has_aux)
        try:
            hash(key)
        except TypeError:
            key = None
    if key is not None:
        hit = _MADE.get(fun, {}).get(key)
        if hit is not None:
            before, call = hit
            if all(a is b for a, b in zip(before, _state(fun))):
                return GradientFunction(call, maker, fun, wrt, has_aux)
    call = _make_call(fun, wrt, has_aux, mode)
    if key is not None:
        _MADE.setdefault(fun, {})[key] = (_state(fun), call)
    return GradientFunction(call, maker, fun, wrt, has_aux)


def value_and_grad(
    fun: Callable[..., Any],
    wrt: int | str | Sequence[int | str] = 0,
    *,
    has_aux: bool = False,
    argnums: int | str | Sequence[int | str] | None = None,
) -> Callable[..., Any]:
    """A function returning ``(value, gradient)`` of ``fun``, in one forward and backward sweep.

    Args:
        fun: A Python function with a scalar output.
        wrt: Position or name of the parameter to differentiate, or a tuple of them.
        has_aux: ``fun`` returns ``(value, aux)``; the result is then ``((value, aux), grads)``.
        argnums: Alias of ``wrt`` (JAX's and autograd's name).

    Raises:
        TransformError: When ``fun`` cannot be differentiated (raised here, at transform time).
    """
    request = _request_key("value_and_grad", wrt, argnums, has_aux)
    if type(fun) is types.FunctionType:
        made = _made(fun, request)
        if made is not None:
            return made
    given = fun
    wrt = pick_wrt(wrt, argnums)
    fun = as_method(fun)  # a callable object: its bound __call__
    star = _star_entries(fun, wrt)
    if star is not None:
        out = _value_and_grad_of_entries(fun, wrt, has_aux, *star)
    else:
        out = _build(value_and_grad, fun, wrt, has_aux)
    _remember(given, request, out)
    return out


def _star_entries(fun: Any, wrt: Any) -> tuple[str, int] | None:
    """``(name, k)`` when ``wrt`` has positions that land in ``fun``'s ``*name``
    parameter (the ``k``-th parameter): as in JAX and autograd, positions count the
    arguments of the call, so position ``k + i`` is the entry ``i`` of ``*name``."""
    if isinstance(wrt, (str, bool, np.bool_)):
        return None
    code = getattr(getattr(fun, "__func__", fun), "__code__", None)
    if code is not None and not code.co_flags & inspect.CO_VARARGS:
        return None  # (a plain function without *args: no signature to read)
    try:
        params = list(signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    star = [i for i, p in enumerate(params) if p.kind is inspect.Parameter.VAR_POSITIONAL]
    if not star:
        return None
    items = [wrt] if _single_wrt(wrt) else list(wrt) if isinstance(wrt, (tuple, list)) else []
    if any(isinstance(i, (int, np.integer)) and int(i) >= star[0] for i in items):
        return params[star[0]].name, star[0]
    return None


def _value_and_grad_of_entries(
    fun: Any, wrt: Any, has_aux: bool, star: str, k: int
) -> Callable[..., Any]:
    """``value_and_grad`` for positions inside ``*star``: the gradient of the whole tuple,
    from which each requested position takes its entry."""
    single = _single_wrt(wrt)
    items = [wrt] if single else list(wrt)
    whole = tuple(dict.fromkeys(star if int_pos >= k else int_pos for int_pos in _ints(items)))
    inner = value_and_grad(fun, whole, has_aux=has_aux)._s2s_call

    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        value, grads = inner(*args, **kwargs)
        by = dict(zip(whole, grads))
        out = []
        for pos in _ints(items):
            if pos < k:
                out.append(by[pos])
                continue
            if pos >= len(args):
                raise ValueError(f"wrt={pos} is out of range: the call has {len(args)} arguments")
            g = by[star]
            out.append(fix_grad(0.0 if g is None else g[pos - k], args[pos]))
        return value, (out[0] if single else tuple(out))

    mark(value_and_grad_fun, fun, "differentiate grad of the function instead")
    value_and_grad_fun.__wrapped__ = inner.__wrapped__  # type: ignore[attr-defined]
    return GradientFunction(value_and_grad_fun, value_and_grad, fun, wrt, has_aux)


class _EntrySpec:
    """What ``grad(f, k + i)`` computes for ``f(..., *args)``: entry ``i`` of the gradient
    of the whole ``*args`` tuple, as a generated function that is differentiated again."""

    def __init__(self, fun: Any, star: str, entries: list[int], single: bool) -> None:
        self.whole = _GradSpec(fun, (star,), True)
        self.label, self.entries, self.single = _label(fun), entries, single
        self._pure: Any = None
        self.owner: Any = None

    def pure_function(self) -> Any:
        if self._pure is None:
            picks = [f"{{grad}}(*args, **kwargs)[{i}]" for i in self.entries]
            body = picks[0] if self.single else "(" + ", ".join(picks) + ",)"
            params = [
                inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
            ]
            name = f"{self.label}_grad_entries"
            self._pure = define(name, params, body, {"grad": self.whole.pure_function()})
        return self._pure


def _ints(items: list[Any]) -> list[Any]:
    """Positions as ints (names kept as they are)."""
    return [int(i) if isinstance(i, (int, np.integer)) else i for i in items]


def grad(
    fun: Callable[..., Any],
    wrt: int | str | Sequence[int | str] = 0,
    *,
    has_aux: bool = False,
    argnums: int | str | Sequence[int | str] | None = None,
) -> Callable[..., Any]:
    """The gradient function of ``fun``, generated from its source.

    Args:
        fun: A Python function with a scalar output (float, 0-d or size-1 array).
        wrt: Position or name of the parameter to differentiate, or a tuple of them
            (then the gradient function returns a tuple).
        has_aux: ``fun`` returns ``(value, aux)``; the gradient function then returns
            ``(grads, aux)``.
        argnums: Alias of ``wrt`` (JAX's and autograd's name).

    Returns:
        A function with ``fun``'s signature returning the gradient(s).

    Raises:
        TransformError: When ``fun`` cannot be differentiated (raised here, at transform time).
    """
    request = _request_key("grad", wrt, argnums, has_aux)
    if type(fun) is types.FunctionType:
        made = _made(fun, request)
        if made is not None:
            return made
    given = fun
    wrt = pick_wrt(wrt, argnums)
    fun = as_method(fun)  # a callable object: its bound __call__
    star = _star_entries(fun, wrt)
    if star is None:
        out = _build(grad, fun, wrt, has_aux)
        _remember(given, request, out)
        return out
    inner = _value_and_grad_of_entries(fun, wrt, has_aux, *star)._s2s_call

    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        value, grads = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    items = _ints([wrt] if _single_wrt(wrt) else list(wrt))
    if all(isinstance(i, int) and i >= star[1] for i in items):
        mark(grad_fun, fun)
        spec = _EntrySpec(fun, star[0], [i - star[1] for i in items], _single_wrt(wrt))
        spec.owner = grad_fun
        setattr(grad_fun, SPEC, spec)
    else:
        refusal = (
            f"grad({_label(fun)}) with respect to entries of *args and named parameters, "
            "differentiated again: give the function named parameters for them"
        )
        mark(grad_fun, fun, refusal)
    grad_fun.__wrapped__ = inner.__wrapped__  # type: ignore[attr-defined]
    out = GradientFunction(grad_fun, grad, fun, wrt, has_aux)
    _remember(given, request, out)
    return out


#: The attribute of a function made by s2s_ad (a pullback, ``hvp``, ``hessian``) that
#: holds a callable returning the generated source it runs (what :func:`source` shows).
SOURCE = "_s2s_generated_source"


def source(df: Callable[..., Any]) -> str:
    """The generated source of a gradient function (from ``grad`` or ``value_and_grad``),
    of a ``vjp`` pullback (the forward sweep and the backward sweep the pullback runs), or
    of what ``hvp``, ``hessian`` and ``jacobian`` return (the programs they run).

    For a gradient function, ``inspect.getsource(df)`` returns the same text.

    Raises:
        TypeError: For a function s2s_ad did not make.
    """
    shown = getattr(df, SOURCE, None)
    if shown is not None:
        return shown()
    generated = getattr(df, "__wrapped__", None)
    if generated is not None:  # through object_state.with_state_table
        generated = inspect.unwrap(generated)
    if (
        generated is None
        or not getattr(generated, "__code__", None)
        or not (generated.__code__.co_filename.startswith("<s2s_ad:"))
    ):
        raise TypeError(
            "source() expects a function returned by s2s_ad.grad, value_and_grad, vjp (its "
            "pullback), hvp, hessian or jacobian"
        )
    return inspect.getsource(generated)


def pullback_wrt(
    fun: Callable[..., Any], args: Sequence[Any], positions: Sequence[int]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """Run ``fun(*args)`` and return ``(out, pullback)`` for the arguments at ``positions``.

    The first call of ``pullback`` reuses the forward sweep's tape; later calls run the
    forward sweep again (the backward sweep consumes its tape).
    """
    fun = as_method(fixed_arity(fun, len(args)))
    params = _param_names(fun)
    names = tuple(params[i] for i in positions)
    for name, pos in zip(names, positions):
        _check_float(name, args[pos])
    if inspect.ismethod(fun):
        args = (fun.__self__, *args)
        positions = [p + 1 for p in positions]
        fun = fun.__func__
    check_returns_value(fun)
    fns = _generated(fun, names, False)
    out, saved = fns["fwd"](*args)
    check_not_none(fun, out)
    state = {"saved": saved}

    def pullback(cotangent: Any) -> tuple[Any, ...]:
        current = state.pop("saved", None)
        if current is None:
            _, current = fns["fwd"](*args)
        grads = fns["bwd"](current, cotangent)
        return tuple(fix_grad(g, args[pos]) for g, pos in zip(grads, positions))

    compiled = fns.compiled
    setattr(pullback, SOURCE, lambda: sweeps_source(compiled))
    return out, pullback


def sweeps_source(compiled: Compiled) -> str:
    """The forward sweep and the backward sweep of ``compiled`` as separate functions (what
    a pullback runs: ``fwd`` once, ``bwd`` per cotangent)."""
    return compiled.source_of("fwd") + "\n\n" + compiled.source_of("bwd")


def vjp(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """Evaluate ``fun(*primals)`` and return ``(out, pullback)``.

    ``pullback(cotangent)`` returns one gradient per primal (a tuple). The output may
    have any shape or structure; the cotangent has the output's structure.
    """
    return pullback_wrt(fun, primals, range(len(primals)))
