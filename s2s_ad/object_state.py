"""Differentiated values stored in objects' attributes: object state as variables.

``model.W = W; return loss(model(x), y)``, ``opt_state.m = beta * opt_state.m + g``, a
method that caches ``self.h = np.tanh(...)`` for another method to read: an attribute
write inside the differentiated function is a change of state that the backward sweep
models. The forward sweep stores the primal values (after the call the caller's objects
hold what Python leaves in them); each float value stored is noted in a table by its
``id`` (the table keeps it alive, so the id stays its own), every later read of an
attribute adds its adjoint there (``runtime.variable_grad``), and the backward sweep
hands it to the stored value where the store happened (``runtime.stored_gradient``). An
object reached through two names or a list is one object: its attribute's value is the
same Python object whichever way it is read, so aliases need no bookkeeping.

That is the code the tape's *variables mode* generates (``s2s_ad.tape``). A function is
transformed that way when its plain transformation meets such a store
(:class:`StoredState`): :func:`compile_top` retries it in variables mode and
:func:`with_state_table` runs its gradient with a table of its own.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from . import ir, runtime
from .analysis import classify, stored_value
from .errors import TransformError
from .normal_forms import code_key


class StoredState(TransformError):
    """A differentiated value stored in an attribute of an object, met by a plain
    transformation: modelled in variables mode (see :func:`compile_top`), refused where
    that mode does not reach (forward mode, a gradient differentiated again)."""

    @classmethod
    def from_error(cls, error: TransformError) -> StoredState:
        """The same refusal, as this class (where it is seen, object state is not modelled:
        its hint says where it is)."""
        hint = (error.hint + "; " if error.hint else "") + _WHERE
        return cls(error.construct, error.filename, error.lineno, error.col, hint, error.line_text)


#: what a refusal of object state says it is modelled by
_WHERE = (
    "grad, value_and_grad and vjp differentiate values stored in attributes; forward mode "
    "(jvp, hvp, hessian) and a gradient differentiated again do not"
)


#: code keys of the functions whose gradient needs the object state table
_STATEFUL: set[Any] = set()


def compile_top(compile_adjoint: Callable[..., Any], func: Any, *args: Any) -> Any:
    """``compile_adjoint(func, *args)`` for a gradient entry (``grad``, ``value_and_grad``):
    in variables mode, with the attribute ``state_table`` set, when the plain
    transformation stores a differentiated value in an object's attribute."""
    from .api import python_function

    key = code_key(python_function(func))
    if key not in _STATEFUL:
        try:
            return compile_adjoint(func, *args)
        except StoredState:
            _STATEFUL.add(key)
    compiled = compile_adjoint(func, *args, variables=STATE)
    compiled.state_table = True
    return compiled


def needs_table(compiled: Any) -> bool:
    """Whether the generated gradient must run with an object state table."""
    return getattr(compiled, "state_table", False)


def with_state_table(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a generated gradient in variables mode) run with a table of stored values'
    adjoints (a running tape's table when there is one)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        saved = runtime.VARIABLE_GRADS
        if saved is not None:  # inside a tape's run: its table serves
            return fn(*args, **kwargs)
        table = runtime.VARIABLE_GRADS = runtime.GradTable()
        table.state = True  # the functions the dispatcher transforms: in state mode
        try:
            return fn(*args, **kwargs)
        finally:
            runtime.VARIABLE_GRADS = saved

    return run


#: the ``variables`` flag of a transformation for object state (``grad`` of a function
#: that stores differentiated values in attributes): variables mode, and the calls whose
#: result is dropped (``layer.set_weights(W, b)``, ``stats.update(x)``) differentiated
STATE = "state"

#: methods of lists, dicts and arrays that change them in place (``update`` and ``add``
#: are common names of user methods too: a dict's or set's is refused when it runs)
_CONTAINER_METHODS = frozenset(
    "append extend insert pop remove clear reverse sort setdefault popitem fill put resize "
    "discard".split()
)


def attribute_held(body: list[ir.Stmt]) -> dict[str, str]:
    """The names of ``body`` bound to an attribute's value (``_t3 = rec.history``), each
    with the attribute's name."""
    return {
        s.target: s.value.name
        for s in ir.walk(body)
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Attr)
    }


def container_method(call: ir.Call) -> bool:
    """Whether ``call`` is a list's, dict's or array's in-place method by its name
    (``xs.append(v)``): never a store into object state, refused where it is met."""
    return call.callee.method in _CONTAINER_METHODS


def _state_call(s: ir.Stmt) -> bool:
    """Whether ``s`` calls a user function or method for its effect (its result dropped):
    in state mode it may store differentiated values in attributes, or read them."""
    if not isinstance(s, ir.ExprStmt) or not isinstance(s.value, ir.Call):
        return False
    call = s.value
    if stored_value(call) is not None or call.callee.method in _CONTAINER_METHODS:
        return False  # obj.a = v, self.add_loss(v), xs.append(v): modelled as they are
    return classify(call).kind in ("user", "dynamic")


def state_calls(
    body: list[ir.Stmt], mint: Callable[[str], str], filename: str
) -> tuple[list[ir.Stmt], set[str]]:
    """``body`` with each call made for its effect (see :func:`_state_call`) assigned to a
    fresh name, and those names: seeds of the activity analysis, so that the backward
    sweep runs the call's pullback (what its stores took in comes back through it).

    Raises:
        TransformError: A list or array held in an attribute changed in place
            (``self.history.append(v)``): its slot's adjoint would not follow.
    """
    seeds: set[str] = set()
    held = attribute_held(body)

    def refuse_in_place(s: ir.Stmt) -> None:
        name = None
        if isinstance(s, (ir.SetItem, ir.Append, ir.ListPop)):
            name = s.obj
        elif isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call):
            receiver = s.value.callee.receiver
            if s.value.callee.method in _CONTAINER_METHODS and isinstance(receiver, ir.Var):
                name = receiver.name
        if name in held:
            raise TransformError(
                f"an in-place change of the value held in the attribute .{held[name]} of an "
                "object, in a function that stores differentiated values in attributes",
                filename,
                s.line,
                hint=f"store a new value instead (obj.{held[name]} = obj.{held[name]} + [v])",
            )

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            refuse_in_place(s)
            if _state_call(s):
                assert isinstance(s, ir.ExprStmt)
                name = mint("_effect")
                seeds.add(name)
                out.append(ir.Assign(s.line, s.src, name, s.value))
            elif (
                isinstance(s, ir.Assign)
                and isinstance(s.value, ir.Call)
                and classify(s.value).kind in ("user", "dynamic")
            ):
                seeds.add(s.target)  # its stores happen where its pullback undoes them
                out.append(s)
            elif isinstance(s, ir.If):
                out.append(dataclasses.replace(s, body=block(s.body), orelse=block(s.orelse)))
            elif isinstance(s, ir.For):
                out.append(dataclasses.replace(s, body=block(s.body), orelse=block(s.orelse)))
            elif isinstance(s, ir.While):
                out.append(
                    dataclasses.replace(
                        s,
                        test_body=block(s.test_body),
                        body=block(s.body),
                        orelse=block(s.orelse),
                    )
                )
            else:
                out.append(s)
        return out

    return block(body), seeds


def state_mode(table: Any) -> bool | str:
    """The ``variables`` flag of a function transformed while ``table`` runs (the
    dispatcher's callees): :data:`STATE` under a gradient's object state table, ``True``
    under a tape's, else ``False``."""
    if table is None:
        return False
    return STATE if getattr(table, "state", False) else True


_CONTAINER_WRITES: dict[Any, set[str]] = {}


def container_writes(func: Any) -> set[str]:
    """The parameters of ``func`` it may change in place other than by storing attributes
    (``u[0] = v``, ``u.append(v)``, a library call that writes into ``u``): refused in
    state mode too, where ``self.W = W`` is modelled. A method it calls for its effect is
    transformed in state mode and checked when it runs."""
    from .analysis import call_writes
    from .normal_forms import normalized_parts
    from .targets import primal

    func = primal(func)
    key = code_key(func)
    if key in _CONTAINER_WRITES:
        return _CONTAINER_WRITES[key]
    _CONTAINER_WRITES[key] = set()  # while in progress (recursion)
    fn = normalized_parts(func)[1]
    rebound: set[str] = set()
    written: set[str] = set()

    def mark(atom: Any) -> None:
        name = atom.name if isinstance(atom, ir.Var) else atom
        if name in fn.params and name not in rebound:
            written.add(name)

    for s in ir.walk(fn.body):
        if isinstance(s, (ir.SetItem, ir.Append, ir.ListPop)):
            mark(s.obj)
        call = s.value if isinstance(s, (ir.Assign, ir.ExprStmt)) else None
        if isinstance(call, ir.Call) and stored_value(call) is None:
            kind = classify(call).kind
            if kind == "dynamic":
                pass  # transformed in state mode when it runs, and checked then
            elif isinstance(s, ir.ExprStmt) and call.callee.method in _CONTAINER_METHODS:
                mark(call.callee.receiver)
            elif kind == "user":
                for atom in _written_arguments(call):
                    mark(atom)
            else:
                for atom in call_writes(call):
                    mark(atom)
        if isinstance(s, ir.Assign):
            rebound.add(s.target)
        elif isinstance(s, ir.Unpack):
            rebound.update(s.targets)
    _CONTAINER_WRITES[key] = written
    return written


def _written_arguments(call: ir.Call) -> list[ir.Atom]:
    """The arguments a call of a user function changes in place other than by storing
    attributes (all of them when their binding is not known)."""
    from .targets import signature

    everything = list(ir.expr_atoms(call))
    if call.star is not None or call.starstar is not None:
        return everything
    func = classify(call).func
    try:
        bound = signature(func).bind(*call.args, **dict(call.kwargs))
    except TypeError:
        return everything
    inside = container_writes(func)
    return [a for p, a in bound.arguments.items() if p in inside]


def attribute_writes_only(call: ir.Call, atom: ir.Atom) -> bool:
    """Whether a call of a user function writes into the argument ``atom`` only by
    storing attributes on it (``momentum_step(w, g, opt_state)`` setting ``opt_state.m``):
    object state, modelled in state mode."""
    if classify(call).kind != "user":
        return False
    return atom not in _written_arguments(call)


class StateBound(dict):  # type: ignore[type-arg]
    """The generated functions of a gradient in state mode (as ``Compiled.bind`` gives
    them), each run with an object state table: ``grad`` with its own; ``fwd`` (a ``vjp``)
    with a new one it returns with its residuals, which ``bwd`` runs with."""

    def __init__(self, bound: Any) -> None:
        super().__init__()
        self.bound, self.compiled = bound, bound.compiled

    def __missing__(self, kind: str) -> Callable[..., Any]:
        fn = self.bound[kind]
        if kind == "grad":
            made = with_state_table(fn)
        elif kind == "fwd":
            made = functools.partial(_fwd_with_table, fn)
        elif kind == "bwd":
            made = functools.partial(_bwd_with_table, fn)
        else:
            made = fn
        self[kind] = made
        return made


def _fwd_with_table(fwd: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    saved_table = runtime.VARIABLE_GRADS
    table = runtime.VARIABLE_GRADS = runtime.GradTable()
    table.state = True
    try:
        out, saved = fwd(*args)
    finally:
        runtime.VARIABLE_GRADS = saved_table
    return out, (table, saved)


def _bwd_with_table(bwd: Callable[..., Any], saved: Any, cotangent: Any) -> Any:
    table, inner = saved
    saved_table = runtime.VARIABLE_GRADS
    runtime.VARIABLE_GRADS = table
    try:
        return bwd(inner, cotangent)
    finally:
        runtime.VARIABLE_GRADS = saved_table


def mark_stateful(func: Any) -> bool:
    """Take ``func``'s gradient for one that needs object state from now on (a method it
    calls turned out to store differentiated values in attributes when it ran): whether
    that is new."""
    from .api import python_function

    key = code_key(python_function(func))
    if key in _STATEFUL:
        return False
    _STATEFUL.add(key)
    return True


def snapshot(values: tuple[Any, ...]) -> list[tuple[Any, dict[str, Any]]]:
    """The attributes of the plain objects reachable from ``values`` (through lists,
    tuples, dicts and attributes), to put back with :func:`restore` before a call runs
    again in state mode."""
    from .passed_objects import is_plain_object

    out: list[tuple[Any, dict[str, Any]]] = []
    seen: set[int] = set()
    todo = list(values)
    while todo:
        value = todo.pop()
        if isinstance(value, (list, tuple)):
            todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(value.values())
        elif is_plain_object(value) and id(value) not in seen and hasattr(value, "__dict__"):
            seen.add(id(value))
            state = dict(vars(value))
            out.append((value, state))
            todo.extend(state.values())
    return out


def restore(saved: list[tuple[Any, dict[str, Any]]]) -> None:
    """Put back the attributes :func:`snapshot` took."""
    for obj, state in saved:
        obj.__dict__.clear()
        obj.__dict__.update(state)
