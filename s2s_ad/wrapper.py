"""The function ``grad``/``value_and_grad`` return: what runs around the generated code.

Each call binds the arguments to the primal's parameters, checks that the differentiated
ones are real floats, picks the generated variant specialised on which arguments are
scalars or vectors, runs it, checks that the value is a scalar and gives each gradient
the structure, shape and dtype of its input.

The entry function is generated with the primal's own parameters (its defaults,
keyword-only and positional-only markers), so Python binds each call, keyword calls
included, and reports a wrong call the way the function would. Most calls repeat the
argument types of an earlier call. When every argument's key (its type; for a NumPy array
its shape and dtype; a differentiated argument must be a Python or NumPy float or a float
array) decides every check and the variant, the variant is looked up by the tuple of those
keys and the checks are skipped; arguments that are all Python floats skip the lookup too
(the variant for them is kept aside). When the value is a float and each gradient already
has its input's type (for an array: its shape and dtype; a NumPy float for a Python float
is converted), the result is returned untouched. A function with ``*args``/``**kwargs``
gets an entry that binds its arguments each call; one whose parameter names clash with the
entry's own names gets an entry taking ``*args, **kwargs`` with the fast path for a
positional call of every parameter. The entry's text depends only on the parameters and
the differentiated positions, and is compiled once per such shape.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .duck import fix_foreign, is_foreign
from .errors import OutputError
from .passed_objects import is_plain_object, object_gradient, register_passed
from .targets import identifier, parameter_list, signature

_SCALAR_TYPES = (float, int, bool, np.generic)
#: At most this many argument-type tuples are remembered per gradient function.
_TABLE_LIMIT = 64
#: At most this many shape classes get a variant of their own per gradient function.
SHAPE_LIMIT = 8


def check_float(name: str, value: Any) -> None:
    """Refuse an integer, boolean or complex value (or array) as a differentiated input.

    Raises:
        TypeError: Naming the argument and what to pass instead.
    """
    tv = type(value)
    if tv is float or (tv is np.ndarray and value.dtype.kind == "f"):
        return
    if isinstance(value, (tuple, list)):
        for v in value:
            check_float(name, v)
        return
    if isinstance(value, dict):
        for v in value.values():
            check_float(name, v)
        return
    if is_plain_object(value) or dataclasses.is_dataclass(value):
        register_passed(name, value)  # its attributes (a model's arrays) are fields
        return
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer))):
        raise TypeError(
            f"grad requires real-valued inputs; argument {name!r} is an integer "
            f"({type(value).__name__}). Pass a float (e.g. {float(value)!r}) or leave it out of wrt"
        )
    if isinstance(value, (complex, np.complexfloating)) or (
        (isinstance(value, np.ndarray) or is_foreign(value)) and value.dtype.kind == "c"
    ):
        kind = value.dtype if hasattr(value, "dtype") else type(value).__name__
        raise TypeError(
            f"complex inputs are not supported; argument {name!r} is complex ({kind}). "
            "Pass its real and imaginary parts as separate float arguments"
        )
    if (isinstance(value, np.ndarray) or is_foreign(value)) and value.dtype.kind not in "fc":
        raise TypeError(
            f"grad requires real-valued inputs; argument {name!r} has dtype {value.dtype}. "
            "Convert it with .astype(float) or leave it out of wrt"
        )


def fix_grad(g: Any, x: Any) -> Any:
    """Give a gradient the structure, shape and float dtype of its input."""
    tx, tg = type(x), type(g)
    if tx is float and (tg is float or tg is np.float64):
        return g if tg is float else float(g)
    if tx is np.ndarray and tg is np.ndarray and g.shape == x.shape and g.dtype == x.dtype:
        return g
    if (tx is list or tx is tuple) and not is_foreign(g):  # parameter lists, (W, b) pairs
        if _zero(g):
            parts = [fix_grad(0.0, v) for v in x]
        else:
            parts = [fix_grad(g[i], v) for i, v in enumerate(x)]
        return parts if tx is list else tuple(parts)
    if is_foreign(g):  # a Dask or CuPy gradient stays in its library, unevaluated
        dtype = getattr(x, "dtype", np.float64)
        return fix_foreign(g, np.shape(x), dtype if np.dtype(dtype).kind == "f" else np.float64)
    refuse_complex_gradient(g, x)
    if tx is float:
        if isinstance(g, (float, np.floating)):
            return float(g)
        return float(np.asarray(g).reshape(()))
    if tx is np.ndarray and type(g) is np.ndarray and g.shape == x.shape and g.dtype == x.dtype:
        return g
    if isinstance(x, (tuple, list)):
        parts = [fix_grad(g[i] if not _zero(g) else 0.0, v) for i, v in enumerate(x)]
        return type(x)(*parts) if hasattr(type(x), "_fields") else type(x)(parts)  # namedtuple
    if isinstance(x, dict):
        return {k: fix_grad(g[k] if not _zero(g) else 0.0, v) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return _dataclass_grad(g, x)
    if is_plain_object(x) and hasattr(x, "__dict__"):
        return object_gradient(g, x, fix_grad)
    if isinstance(x, np.ndarray):
        dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
        out = np.asarray(g, dtype=dtype)
        if out.shape != x.shape:
            out = np.broadcast_to(out, x.shape).copy() if out.size == 1 else out.reshape(x.shape)
        return out
    if isinstance(x, np.generic):
        if type(g) is tx:
            return g
        return x.dtype.type(np.asarray(g).reshape(()))
    if isinstance(x, float):
        return float(np.asarray(g).reshape(()))
    return g


def _dataclass_grad(g: Any, x: Any) -> Any:
    """The gradient of a dataclass as the same dataclass (as JAX gives for a pytree):
    each numeric field holds its gradient (a dict of them, or zero, came back); a field
    that holds no number (a name, a function) keeps its value."""
    out = copy.copy(x)
    for f in dataclasses.fields(x):
        value = getattr(x, f.name)
        if isinstance(value, (str, bytes, bool, type(None))) or callable(value):
            continue
        part = g.get(f.name, 0.0) if isinstance(g, dict) else getattr(g, f.name, 0.0)
        object.__setattr__(out, f.name, fix_grad(0.0 if part is None else part, value))
    return out


def refuse_complex_gradient(g: Any, x: Any) -> None:
    """Refuse a complex gradient for a real input: complex intermediate values (``1j * x``,
    ``np.exp(1j * x)``) are not differentiated with a specified convention, and dropping
    the imaginary part would give a wrong number."""
    if isinstance(g, (complex, np.complexfloating)) or (
        isinstance(g, np.ndarray) and g.dtype.kind == "c"
    ):
        if not (np.iscomplexobj(x) or isinstance(x, complex)):
            raise TypeError(
                "complex intermediate values: the gradient of a real input came out complex "
                "(complex differentiation is not supported; keep the computation real, "
                "e.g. np.cos(x) and np.sin(x) for np.exp(1j * x))"
            )


def _zero(g: Any) -> bool:
    return g is None or (type(g) is float and g == 0.0)


def check_not_none(fun: Any, value: Any) -> None:
    """Raise :class:`OutputError` when ``fun`` returned ``None`` (at run time)."""
    if value is None:
        raise OutputError(
            f"{label(fun)} returned None: there is no value to differentiate "
            "(a return statement that was not reached, or a forgotten return?)"
        )


def label(fun: Any) -> str:
    """The name of ``fun`` for messages."""
    return str(getattr(fun, "__name__", None) or type(fun).__name__)


def check_scalar(value: Any) -> None:
    """Refuse a value that is not a scalar (a float, a NumPy scalar or a size-1 array).

    Raises:
        ValueError: Naming the shape, and what to use for non-scalar outputs.
    """
    tv = type(value)
    if tv is float or (tv is np.ndarray and value.size == 1) or isinstance(value, np.generic):
        return
    shape = np.shape(value)
    size = 1
    for n in shape:
        size *= int(n)
    if size != 1 or isinstance(value, (tuple, list, dict)):
        raise ValueError(
            f"grad requires a scalar output, got shape {shape}; "
            "use s2s_ad.vjp or s2s_ad.jacobian for non-scalar outputs"
        )


class Binder:
    """Binds call arguments to the primal's parameters (the signature is read once)."""

    def __init__(self, fun: Any) -> None:
        self.sig = signature(fun)
        self.n = len(self.sig.parameters)
        packed = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        if any(p.kind in packed for p in self.sig.parameters.values()):
            self.n = -1  # ``*args``/``**kwargs``: the arguments are always bound (packed)

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not kwargs and len(args) == self.n:
            return args
        ba = self.sig.bind(*args, **kwargs)
        ba.apply_defaults()
        return tuple([ba.arguments[p] for p in self.sig.parameters])


def kind(value: Any) -> str:
    """``s`` for a scalar, ``v`` for a 1-d array, ``.`` for anything else."""
    if isinstance(value, _SCALAR_TYPES):
        return "s"
    if type(value) is np.ndarray and value.ndim == 1:
        return "v"
    return "."


class Variants:
    """The generated gradient, specialised on which arguments are scalars or vectors,
    and further on their shape class (:mod:`shape_facts`), made on demand.

    Args:
        make: ``make(scalars, vectors)`` -> the generated gradient for those parameter
            sets (with a bound method's instance already bound).
        params: The parameters the call binds (a bound method's without ``self``).
        general: The variant for no known scalars or vectors.
        shaped: ``shaped(scalars, vectors, key)`` -> that variant lowered for the shape
            class ``key``, or ``None`` when lowering changes nothing.
    """

    def __init__(
        self,
        make: Callable[..., Any],
        params: list[str],
        general: Any,
        shaped: Callable[..., Any] | None = None,
    ) -> None:
        self.make, self.params, self.shaped = make, params, shaped
        # no scalar or vector known: the general code
        self.by_mask: dict[tuple[str, ...], Any] = {tuple("." for _ in params): general}
        self.by_shape: dict[tuple[Any, ...], Any] = {}
        self.last = [general]  # the variant that ran last (what ``source`` shows)
        #: ``restate()``: take the gradient for one with object state (see
        #: ``object_state.mark_stateful``) and forget the variants made; whether it did
        self.restate: Callable[[], bool] | None = None

    def reset(self, general: Any) -> None:
        """Forget the variants made: ``general`` is the new one for no known kinds."""
        self.by_mask = {tuple("." for _ in self.params): general}
        self.by_shape = {}
        self.last[0] = general

    def get(self, values: tuple[Any, ...]) -> Any:
        """The variant for the arguments ``values`` (all parameters, in order)."""
        mask = tuple([kind(v) for v in values])
        fn = self.by_mask.get(mask)
        if fn is None:
            fn = self.by_mask[mask] = self.make(*self._sets(mask))
        if self.shaped is not None:
            fn = self._for_shapes(values, mask, fn)
        self.last[0] = fn
        return fn

    def _sets(self, mask: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
        """The parameters holding scalars and those holding vectors."""
        scalars = frozenset(p for p, m in zip(self.params, mask) if m == "s")
        vectors = frozenset(p for p, m in zip(self.params, mask) if m == "v")
        return scalars, vectors

    def _for_shapes(self, values: tuple[Any, ...], mask: tuple[str, ...], fn: Any) -> Any:
        """The variant for the shape class of ``values`` (made from ``fn``, the variant
        for their kinds), or ``fn`` itself: optimizer off, beyond the cap, or nothing
        lowered."""
        optimize, shape_key = _transformer()
        if not optimize.ENABLED:
            return fn
        key = shape_key(values)
        hit = self.by_shape.get(key)
        if hit is None:
            if len(self.by_shape) >= SHAPE_LIMIT:
                return fn
            assert self.shaped is not None
            hit = self.by_shape[key] = self.shaped(*self._sets(mask), key) or fn
        return hit


_LAZY: list[Any] = []


def _transformer() -> list[Any]:
    """``[optimize, shape_key]``, imported on the first call that needs them (they belong
    to the transformer, which ``import s2s_ad`` does not load)."""
    if not _LAZY:
        from . import optimize
        from .shape_facts import shape_key

        _LAZY.extend((optimize, shape_key))
    return _LAZY


def _type_decides(t: type, value: Any, differentiated: bool) -> bool:
    """Whether every check and the variant choice for ``value`` follow from its key: its
    type, or for a NumPy array its shape and dtype (:func:`table_key`)."""
    if t is np.ndarray:  # the variant: the shape; the float check: the dtype's kind
        return not differentiated or value.dtype.kind == "f"
    if differentiated:
        return t is float or issubclass(t, np.floating)
    return ("s" if issubclass(t, _SCALAR_TYPES) else ".") == kind(value)


def table_key(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key of the variant table for these arguments: each one's type, or for a NumPy
    array ``(shape, dtype)`` (what the generated entry function computes)."""
    out = []
    for v in values:
        t = type(v)
        out.append((v.shape, v.dtype) if t is np.ndarray else t)
    return tuple(out)


#: Names the entry function's text uses besides the parameters: a parameter (or the
#: function's name) with one of them gets the ``*args`` entry, which names none.
_RESERVED = frozenset(
    ["type", "float", "len", "call", "args", "kwargs", "_s2s_entry"]
    + ["_table", "_floats", "_general", "_finish", "_f64", "_nd", "_last", "_binder"]
    + ["_fn", "_value", "_grads", "_v", "_tv", "_tg"]
)

#: The entry's numbered names: ``_t<k>`` (types), ``_g<i>`` (gradients), ``_d<k>`` (defaults).
_NUMBERED = re.compile(r"_[tgd][0-9]+$")

_ENTRY_CODES: dict[tuple[Any, ...], Any] = {}


def _out(result: str, mode: str, has_aux: bool) -> str:
    """What the entry function returns, given the text of the gradient(s)."""
    if mode == "grad":
        return f"({result}, _value[1])" if has_aux else result
    return f"_value, {result}"


def _tuple(items: list[str]) -> str:
    """The text of a tuple display of ``items``."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _entry_body(
    values: list[str], where: tuple[int, ...], single: bool, has_aux: bool, mode: str
) -> list[str]:
    """The lines after the entry function's prologue: the variant looked up by the
    argument types (``values`` name the bound arguments), run, and its result returned
    untouched when it already has the types of the inputs."""
    n = len(values)
    types_ = [f"_t{k}" for k in range(n)]
    keys = [f"_t{k} if _t{k} is not _nd else ({v}.shape, {v}.dtype)" for k, v in enumerate(values)]
    bound = _tuple(values)
    lines = [
        f"{', '.join(types_)}{',' if n == 1 else ''} = "
        + ", ".join(f"type({v})" for v in values)
        + ("," if n == 1 else ""),
        "if " + " and ".join(f"{t} is float" for t in types_) + ":",
        "    _fn = _floats[0]",
        "else:",
        f"    _fn = _table.get({_tuple(keys)})",
        "if _fn is None:",
        f"    return _general({bound}, True)",
        "_last[0] = _fn",
        f"_value, _grads = _fn({', '.join(values)})",
    ]
    if has_aux:  # the value (of ``(value, aux)``)'s type
        lines.append(
            "_tv = type(_value[0]) if type(_value) is tuple and len(_value) == 2 else None"
        )
    else:
        lines.append("_tv = type(_value)")
    lines.append("if _tv is float or _tv is _f64:")
    inner = " " * 4
    # each gradient as it is when it has its input's type (an array: shape and dtype; the
    # dtypes of float64 arrays are one object), a NumPy float for a Python float
    # converted (np.sum(...)): what fix_grad returns; anything else goes through fix_grad
    for i, p in enumerate(where):
        a = values[p]
        lines += [
            f"{inner}_g{i} = _grads[{i}]",
            f"{inner}_tg = type(_g{i})",
            f"{inner}if _tg is not _t{p} or (_tg is _nd and (_g{i}.shape != {a}.shape or "
            f"(_g{i}.dtype is not {a}.dtype and _g{i}.dtype != {a}.dtype))):",
            f"{inner}    if _t{p} is float and _tg is _f64:",
            f"{inner}        _g{i} = float(_g{i})",
            f"{inner}    else:",
            f"{inner}        return _finish(_value, _grads, {bound})",
        ]
    result = "_g0" if single else _tuple([f"_g{i}" for i in range(len(where))])
    lines.append(f"{inner}return {_out(result, mode, has_aux)}")
    lines.append(f"return _finish(_value, _grads, {bound})")
    return lines


def _named(params: list[inspect.Parameter], name: str, star: bool) -> bool:
    """Whether the entry function takes ``params`` by their names (see ``_entry_factory``)."""
    taken = [p.name for p in params] + [name]
    return not star and not any(n in _RESERVED or _NUMBERED.match(n) for n in taken)


def _entry_factory(
    params: list[inspect.Parameter],
    name: str,
    where: tuple[int, ...],
    single: bool,
    has_aux: bool,
    mode: str,
    star: bool,
) -> Any:
    """The compiled factory of the entry function for this shape of call (cached).

    With ``star`` (the function has ``*args``/``**kwargs``) the entry packs its
    arguments and binds them each call; otherwise it takes ``params`` as they are
    (defaults from the factory's ``_d<k>`` arguments), unless a name clashes with the
    entry's own: then it takes ``*args, **kwargs`` and runs the fast path for a
    positional call of every parameter.
    """
    shape = tuple((p.name, p.kind, p.default is not p.empty) for p in params)
    key = (shape, name, where, single, has_aux, mode, star)
    factory = _ENTRY_CODES.get(key)
    if factory is not None:
        return factory
    n = len(params)
    names = [p.name for p in params]
    head = "def _s2s_entry(_table, _floats, _general, _finish, _f64, _nd, _last, _binder"
    if star:
        body = ["return _general(_binder(args, kwargs), False)"]
        text = [f"{head}):", "    def call(*args, **kwargs):"]
        name = "call"
    elif _named(params, name, star):
        defaults = [f"_d{k}" for k, p in enumerate(params) if p.default is not p.empty]
        text = [head + "".join(f", {d}" for d in defaults) + "):"]
        text.append(f"    def {name}({parameter_list(params, lambda k, p: f'_d{k}')}):")
        body = _entry_body(names, where, single, has_aux, mode)
    else:
        values = [f"a{k}" for k in range(n)]
        name = "call"
        text = [f"{head}):", "    def call(*args, **kwargs):"]
        body = [
            f"if kwargs or len(args) != {n}:",
            "    return _general(_binder(args, kwargs), False)",
            f"{', '.join(values)}{',' if n == 1 else ''} = args",
            *_entry_body(values, where, single, has_aux, mode),
        ]
    text += [" " * 8 + line for line in body]
    text.append(f"    return {name}")
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(text) + "\n", f"<s2s_ad entry {n}>", "exec"), namespace)  # noqa: S102
    factory = _ENTRY_CODES[key] = namespace["_s2s_entry"]
    return factory


def make_entry(
    fun: Any,
    names: list[str],
    single: bool,
    has_aux: bool,
    mode: str,
    variants: Variants,
    binder: Binder,
) -> Callable[..., Any]:
    """The function a user calls: ``mode`` ``"grad"`` returns the gradient(s) (and the
    aux), ``"value_and_grad"`` returns ``(value, gradient(s))``.

    Args:
        fun: What is differentiated (for messages; its name names the entry function).
        names: The differentiated parameters.
        single: Whether one parameter was asked for (not a tuple of them).
        has_aux: ``fun`` returns ``(value, aux)``.
        mode: ``"grad"`` or ``"value_and_grad"``.
        variants: The generated gradient's variants.
        binder: Binds the call's arguments to the parameters.
    """
    params = variants.params
    where = tuple(params.index(n) for n in names)
    table: dict[tuple[type, ...], Any] = {}
    floats: list[Any] = [None]  # the variant for all-float arguments, once made
    checked = list(zip(names, where))
    differentiated = set(where)

    def finish(value: Any, grads: Any, values: tuple[Any, ...]) -> Any:
        if value is None or (has_aux and value[0] is None):
            check_not_none(fun, None)
        check_scalar(value[0] if has_aux else value)
        if single:
            out = fix_grad(grads[0], values[where[0]])
        else:
            out = tuple([fix_grad(g, values[pos]) for g, pos in zip(grads, where)])
        if mode == "grad":
            return (out, value[1]) if has_aux else out
        return value, out

    def general(values: tuple[Any, ...], remember: bool) -> Any:
        """The call of bound arguments ``values`` with every check; with ``remember``
        (the entry's fast path can see these arguments) its variant is remembered by
        their key when that key decides the checks."""
        for name, pos in checked:
            value = values[pos]
            if type(value) is not float and not (
                type(value) is np.ndarray and value.dtype.kind == "f"
            ):
                check_float(name, value)
        fn = variants.get(values)
        if remember and len(table) < _TABLE_LIMIT:
            types_ = tuple([type(v) for v in values])
            pairs = enumerate(zip(types_, values))
            if all(_type_decides(t, v, k in differentiated) for k, (t, v) in pairs):
                table[table_key(values)] = fn
                if all(t is float for t in types_):
                    floats[0] = fn
        restate = variants.restate
        if restate is None:
            value, grads = fn(*values)
            return finish(value, grads, values)
        from .object_state import StoredState, restore, snapshot

        saved = snapshot(values)
        try:
            value, grads = fn(*values)
        except StoredState:
            # a method it called stores differentiated values in attributes: from now on
            # differentiated with object state, run again on the state it started from
            if not restate():
                raise
            restore(saved)
            table.clear()
            floats[0] = None
            return general(values, remember)
        return finish(value, grads, values)

    sig_params = list(binder.sig.parameters.values())
    assert [p.name for p in sig_params] == list(params)
    defaults = [p.default for p in sig_params if p.default is not p.empty]
    entry_name = identifier(fun)
    factory = _entry_factory(sig_params, entry_name, where, single, has_aux, mode, binder.n < 0)
    closure = (table, floats, general, finish, np.float64, np.ndarray, variants.last, binder)
    named = _named(sig_params, entry_name, binder.n < 0)
    call = factory(*closure, *defaults) if named else factory(*closure)
    call.variants = variants
    return call
