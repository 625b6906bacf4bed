"""Callee classification and activity analysis on the normal form.

Activity is flow-insensitive and conservative: a variable is *varied* when some
assignment to it reads a varied value through a differentiable operation, *useful*
when some statement that leads to the output reads it; *active* = varied and useful.
Only active variables get adjoints.
"""

from __future__ import annotations

import functools
import inspect
import types
from dataclasses import dataclass
from typing import Any

from . import ir
from .custom import CustomGradient
from .ir import expr_atoms, walk
from .normal_forms import code_key, normalized_parts
from .rules import REGISTRY
from .rules.defaults import DEFAULTS
from .rules.operators import BINARY, UNARY
from .rules.registry import Rule
from .shifts import stabilising_shifts
from .targets import REFUSE, is_transform, primal, signature, spec_of


@dataclass
class CallInfo:
    """How a call is differentiated.

    ``kind`` is one of ``rule`` (a table rule), ``method`` (an array method rule),
    ``custom`` (``defgrad``), ``custom_gradient`` (TF-style decorated function),
    ``user`` (a Python function transformed from source), ``dynamic`` (callee known
    only at run time) or ``nondiff`` (no gradient flows).
    """

    kind: str
    rule: Rule | None = None
    func: Any = None


def classify(call: ir.Call) -> CallInfo:
    """Decide how a call is differentiated."""

    callee = call.callee
    if callee.method is not None:
        rule = REGISTRY.methods.get(callee.method)
        if rule is not None:
            return CallInfo("nondiff" if rule.nondiff else "method", rule)
        return CallInfo("dynamic")
    if not callee.resolved:
        return CallInfo("dynamic")
    obj = callee.obj
    if getattr(obj, "_s2s_dispatched", False):
        return CallInfo("dynamic")  # _ad.vjp_apply: differentiated by the dispatcher
    if id(obj) in REGISTRY.custom:
        return CallInfo("custom", func=REGISTRY.custom[id(obj)])
    if isinstance(obj, CustomGradient):
        return CallInfo("custom_gradient", func=obj)
    rule = REGISTRY.lookup(obj)
    if rule is not None:
        return CallInfo("nondiff" if rule.nondiff else "rule", rule)
    if REGISTRY.opaque(obj):  # a library function without a rule: never its source
        return CallInfo("unknown", func=obj)
    if isinstance(obj, (types.FunctionType, functools.partial, functools._lru_cache_wrapper)):
        return CallInfo("user", func=obj)  # a partial or a cache: see targets.primal
    if isinstance(obj, (types.MethodType,)) and isinstance(obj.__func__, types.FunctionType):
        return CallInfo("dynamic")
    if isinstance(obj, type) and not _constructs_from_arguments(obj):
        return CallInfo("nondiff", func=obj)
    if isinstance(inspect.getattr_static(type(obj), "__call__", None), types.FunctionType):
        return CallInfo("dynamic")
    if hasattr(obj, "_s2s_call"):  # a gradient function (api.GradientFunction)
        return CallInfo("dynamic")
    return CallInfo("unknown", func=obj)


def _constructs_from_arguments(cls: type) -> bool:
    """Whether a class builds its instance from its arguments' values (``dict``, ``map``,
    ``functools.partial``, a user's class): such a call is refused when a differentiated
    value reaches it, never taken as a constant. Exceptions and warnings are not."""
    return not issubclass(cls, (BaseException, str))


def diff_reads(expr: ir.Expr) -> list[str]:
    """The variables through which a gradient can flow into the value of ``expr``."""
    if isinstance(expr, ir.Compare):
        return []
    if isinstance(expr, ir.BinOp):
        if expr.op not in BINARY or BINARY[expr.op].nondiff:
            return []
    if isinstance(expr, ir.UnaryOp) and expr.op not in UNARY:
        return []
    if isinstance(expr, ir.Subscript):
        # the index reads too: a differentiated value inside the brackets of an object
        # that is not an array (``np.r_[x, 2 * x]``) must not be taken as a constant
        obj = [expr.obj.name] if isinstance(expr.obj, ir.Var) else []
        return obj + [r for r in expr.index.reads if r not in obj]
    if isinstance(expr, ir.Call):
        if getattr(expr.callee.obj, "_s2s_dispatched", False):
            # _ad.vjp_apply(func, labels, g, *args): no gradient flows into the labels, nor
            # into func but for a function value's differentiated defaults (rules.defaults)
            labels = expr.args[1] if len(expr.args) > 1 else None
            own = isinstance(labels, ir.Const) and repr(DEFAULTS) in labels.code
            args = [*expr.args[:1], *expr.args[2:]] if own else expr.args[2:]
            expr = ir.Call(expr.callee, args, expr.kwargs, expr.star, expr.starstar)
            return [a.name for a in expr_atoms(expr) if isinstance(a, ir.Var)]
        info = classify(expr)
        if info.kind == "nondiff":
            return []
        if info.kind == "method" and info.rule and not info.rule.vjps:
            return []
    if isinstance(expr, ir.Attr):
        rule = REGISTRY.attrs.get(expr.name)
        if rule is not None and rule.nondiff:
            return []
    return [a.name for a in expr_atoms(expr) if isinstance(a, ir.Var)]


def outside_names(fn: ir.Function) -> set[str]:
    """Data names a function reads but neither takes nor assigns (globals, closures)."""

    read: set[str] = set()
    for s in walk(fn.body):
        if isinstance(s, ir.Assign):
            read.update(a.name for a in expr_atoms(s.value) if isinstance(a, ir.Var))
    return read - set(fn.params) - ir.bound_names(fn.body)


def _may_read_variables(expr: ir.Expr, varied: set[str]) -> bool:
    if isinstance(expr, ir.Attr):
        rule = REGISTRY.attrs.get(expr.name)
        return rule is None or not rule.nondiff
    if isinstance(expr, ir.Call):
        return classify(expr).kind in ("user", "dynamic") or _object_method(expr, varied)
    return False


def _object_method(call: ir.Call, varied: set[str]) -> bool:
    """A method called on a value that is not differentiated: an object's method (a
    layer's ``flatten``), not an array's, whatever its name."""
    recv = call.callee.receiver
    return call.callee.method is not None and not (isinstance(recv, ir.Var) and recv.name in varied)


@dataclass
class Activity:
    """Result of activity analysis."""

    varied: set[str]
    useful: set[str]

    def active(self, name: str) -> bool:
        return name in self.varied and name in self.useful


def _flows(stmts: list[ir.Stmt]) -> dict[str, list[str]]:
    """Variable -> the variables a statement makes from it through a differentiable
    operation (assignments, unpacking, item writes and appends, pops, a method updating
    its receiver). Variedness flows along these edges, usefulness against them."""
    edges: dict[str, list[str]] = {}

    def add(reads: list[str], targets: list[str]) -> None:
        for r in reads:
            edges.setdefault(r, []).extend(targets)

    callees = _dispatched_callees(stmts)
    for s in stmts:
        if isinstance(s, ir.Assign):
            value = s.value
            if isinstance(value, ir.Subscript) and s.target in callees:
                # a callee read from a container (``ACTS[name]``, ``layers[i]``): what it
                # holds comes from the container, not from the key (a string or an index,
                # in code differentiated again read back from a tape and so looking
                # differentiated): a constant container makes a constant callee
                add([value.obj.name] if isinstance(value.obj, ir.Var) else [], [s.target])
            else:
                add(diff_reads(value), [s.target])
            # the callee of a dispatched call (``_ad.vjp_apply(layer, (0,), g, h)`` in a
            # gradient) may be a record whose fields reach the result, which a mixed second
            # derivative follows (second_order._held_callee): an attribute read
            # (``other.project``), a container's item (a layer of a list, read back from
            # the tape), a record built here or passed in (``run_layer(layer, x)``). A
            # module's function or an array's method read so only looks differentiated
            # (_ad.field_index), a plain function passed in carries no gradient
            # (second_order._inert_label, _nested)
            if isinstance(value, ir.Call) and _dispatched(value):
                add([value.args[0].name], [s.target])
        elif isinstance(s, ir.Unpack):
            if isinstance(s.value, ir.Var):
                add([s.value.name], list(s.targets))
        elif isinstance(s, (ir.SetItem, ir.Append)):
            if isinstance(s.value, ir.Var):
                add([s.value.name], [s.obj])
        elif isinstance(s, ir.ListPop):
            add([s.obj], [s.target])
        elif isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call):
            recv = s.value.callee.receiver
            if isinstance(recv, ir.Var) and s.value.callee.method != "add_loss":
                add(diff_reads(s.value), [recv.name])
    return edges


def _dispatched(call: ir.Call) -> bool:
    """Whether ``call`` is a dispatched call (``_ad.vjp_apply(f, (0,), g, h)``) of a name."""
    return (
        getattr(call.callee.obj, "_s2s_dispatched", False)
        and bool(call.args)
        and isinstance(call.args[0], ir.Var)
    )


def _dispatched_callees(stmts: list[ir.Stmt]) -> set[str]:
    """The names called through a dispatched call."""
    return {
        s.value.args[0].name
        for s in stmts
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and _dispatched(s.value)
    }


def _reach(start: set[str], edges: dict[str, list[str]]) -> set[str]:
    """The names reachable from ``start`` along ``edges`` (``start`` included)."""
    seen = set(start)
    todo = list(start)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _varied_to_fixpoint(stmts: list[ir.Stmt], varied: set[str]) -> set[str]:
    """Variables mode: an attribute read or a call may vary by itself, and whether an
    object's method may read a Variable depends on what varies so far, so the statements
    are swept until nothing changes."""
    changed = True
    while changed:
        changed = False
        for s in stmts:
            new: list[str] = []
            if isinstance(s, ir.Assign):
                if any(r in varied for r in diff_reads(s.value)) or _may_read_variables(
                    s.value, varied
                ):
                    new = [s.target]
            elif isinstance(s, ir.Unpack):
                if isinstance(s.value, ir.Var) and s.value.name in varied:
                    new = list(s.targets)
            elif isinstance(s, (ir.SetItem, ir.Append)):
                if isinstance(s.value, ir.Var) and s.value.name in varied:
                    new = [s.obj]
            elif isinstance(s, ir.ListPop):
                if s.obj in varied:
                    new = [s.target]
            elif isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call):
                recv = s.value.callee.receiver
                if (
                    isinstance(recv, ir.Var)
                    and s.value.callee.method != "add_loss"  # a stored value, not an update
                    and any(r in varied for r in diff_reads(s.value))
                ):
                    new = [recv.name]
            for name in new:
                if name not in varied:
                    varied.add(name)
                    changed = True
    return varied


def analyze(
    fn: ir.Function,
    wrt: list[str],
    output: str,
    variables: bool | str = False,
    seeds: frozenset[str] = frozenset(),
) -> Activity:
    """Compute varied and useful variables.

    Args:
        fn: The normalized function.
        wrt: Parameters we differentiate with respect to.
        output: The variable holding the differentiated output.
        variables: Variables mode (tapes): an attribute read may be a watched
            ``Variable`` and a called function may read some, so both vary.
        seeds: Variables useful besides the output (the results of calls made for their
            effect on objects, see ``object_state.state_calls``).
    """
    # one pass builds the graph, one search each answers: linear in the program's size
    stmts = list(walk(fn.body))
    flows = _flows(stmts)
    for shift in stabilising_shifts(fn):  # the result does not depend on it: no adjoint
        flows.pop(shift, None)
    if variables:
        # (object state, ``variables="state"``: no Variables among the globals, and the
        # calls of user code all differentiated: they may store attributes)
        outside = outside_names(fn) if variables is True else set()
        varied = _varied_to_fixpoint(stmts, set(wrt) | outside | seeds)
    else:
        varied = _reach(set(wrt), flows)
    backward: dict[str, list[str]] = {}
    for source, targets in flows.items():
        for target in targets:
            backward.setdefault(target, []).append(source)
    start = {output} | (seeds & varied)
    if variables:  # a value stored in an attribute may be read later (a layer's call)
        start |= {a.name for a in _stored_values(stmts) if a.name in varied}
    useful = _reach(start, backward)
    return Activity(varied, useful)


def stored_value(call: ir.Call) -> ir.Atom | None:
    """The value a call stores on an object for later reads: ``v`` of ``obj.a = v``
    (lowered to ``setattr(obj, 'a', v)``) or of a Keras layer's ``self.add_loss(v)``."""
    if call.callee.obj is setattr and len(call.args) == 3:
        return call.args[2]
    if (
        call.callee.receiver is not None
        and call.callee.method == "add_loss"
        and len(call.args) == 1
        and not call.kwargs
    ):
        return call.args[0]
    return None


def _stored_values(stmts: list[ir.Stmt]) -> list[ir.Var]:
    """The values statements store on objects (see :func:`stored_value`)."""
    out = []
    for s in stmts:
        call = s.value if isinstance(s, ir.ExprStmt) else None
        if isinstance(call, ir.Call):
            value = stored_value(call)
            if isinstance(value, ir.Var):
                out.append(value)
    return out


# Libraries whose functions only look at their arguments (plots, logs, files): a call of
# one whose result is unused runs in the forward sweep and leaves the gradient alone.
_OBSERVERS = ("matplotlib", "logging", "warnings", "IPython", "tqdm", "json", "pickle", "csv")
_NUMPY_WRITERS = frozenset("save savez savez_compressed savetxt".split())


def observes_only(obj: Any) -> bool:
    """Whether a library callable reads its arguments without writing into them."""
    func = getattr(obj, "__func__", obj)
    module = getattr(func, "__module__", None) or ""
    if module.split(".")[0] in _OBSERVERS:
        return True
    return module.startswith("numpy") and getattr(func, "__name__", "") in _NUMPY_WRITERS


_WRITTEN: dict[Any, set[str]] = {}


def written_params(func: Any) -> set[str]:
    """Parameters a Python function may write into in place while they still name the
    caller's object (before the name is rebound): ``u[0] = ...``, ``u.append(...)``, an
    in-place method, or passing ``u`` on to a callee that writes into it, or to a library
    function that is neither a rule nor known to only read (it may write)."""
    func = primal(func)  # a wrapper's own code, a partial's or a cache's function
    if is_transform(func):
        return set()  # s2s_ad.grad(inner)(u) inside the function: makes a function
    code = code_key(func)
    if code in _WRITTEN:
        return _WRITTEN[code]
    _WRITTEN[code] = set()  # while in progress (recursion)
    try:
        fn = normalized_parts(func)[1]
    except Exception:
        del _WRITTEN[code]  # what cannot be read is refused with its own reason
        raise
    rebound: set[str] = set()
    written: set[str] = set()

    def mark(atom: Any) -> None:
        name = atom.name if isinstance(atom, ir.Var) else atom
        if name in fn.params and name not in rebound:
            written.add(name)

    for s in walk(fn.body):
        if isinstance(s, (ir.SetItem, ir.Append, ir.ListPop)):
            mark(s.obj)
        call = s.value if isinstance(s, (ir.Assign, ir.ExprStmt)) else None
        if isinstance(call, ir.Call):
            if isinstance(s, ir.ExprStmt) and call.callee.receiver is not None:
                mark(call.callee.receiver)
            for atom in call_writes(call):
                mark(atom)
        if isinstance(s, ir.Assign):
            rebound.add(s.target)
        elif isinstance(s, ir.Unpack):
            rebound.update(s.targets)
    _WRITTEN[code] = written
    return written


def attribute_store(call: ir.Call) -> tuple[str, str, str] | None:
    """For ``obj.name = value`` (lowered to ``setattr(obj, 'name', value)``): the construct
    and hint of its refusal when the stored value is differentiated, and the attribute's
    name; else ``None``.

    The object is not a differentiated value, so what later reads the attribute (a model's
    ``__call__``) would see the value without its gradient.
    """
    if not (call.callee.resolved and call.callee.obj is setattr and len(call.args) == 3):
        return None
    name = call.args[1]
    attr = name.code.strip("'\"") if isinstance(name, ir.Const) else "?"
    return (
        f"a differentiated value stored in the attribute .{attr} of an object: what reads "
        "the attribute later would not carry its gradient",
        "pass the value to the code that uses it (model(x, W)), keep the parameters in a "
        "list or dict argument, or hold them in s2s_ad.Variable attributes and take "
        "s2s_ad.GradientTape().gradient(loss, [layer.W, ...])",
        attr,
    )


def call_writes(call: ir.Call) -> list[ir.Atom]:
    """The arguments a call may write into in place."""
    out = [a for k, a in call.kwargs if k == "out"]
    if call.callee.resolved and observes_only(call.callee.obj):
        return out
    info = classify(call)
    if info.kind in ("rule", "method", "nondiff", "custom", "custom_gradient"):
        return out
    if info.kind == "user":
        written = written_params(info.func)
        if not written:
            return out
        try:
            bound = signature(info.func).bind(*call.args, **dict(call.kwargs))
        except TypeError:
            return list(expr_atoms(call))
        if call.star is not None or call.starstar is not None:
            return list(expr_atoms(call))  # where the packed arguments land is not known
        return out + [a for p, a in bound.arguments.items() if p in written]
    obj = call.callee.obj
    if not call.callee.resolved or getattr(obj, "_s2s_dispatched", False):
        return out  # known when it runs: the dispatcher transforms it (see dispatch.py)
    if getattr(type(obj), "_s2s_reads_only", False):
        return out  # an inner tape's block or gradient (tape_inner): computes, writes nothing
    if getattr(obj, REFUSE, None):
        return out  # made by s2s_ad, refused by name when it is differentiated
    if spec_of(obj) is not None:
        # a gradient function (``grad(f)``): what its generated code writes into
        try:
            bound = signature(obj).bind(*call.args, **dict(call.kwargs))
        except TypeError:
            return list(expr_atoms(call))
        if call.star is not None or call.starstar is not None:
            return list(expr_atoms(call))
        written = written_params(obj)
        return out + [a for p, a in bound.arguments.items() if p in written]
    if isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
        try:
            bound = inspect.signature(obj).bind(*call.args, **dict(call.kwargs))
        except TypeError:
            return list(expr_atoms(call))
        written = written_params(obj.__func__)
        return out + [a for p, a in bound.arguments.items() if p in written]
    return [a for a in call.args] + [a for _, a in call.kwargs]


_DEPENDS: dict[tuple[Any, str], bool] = {}


def depends(func: Any, param: str) -> bool:
    """Whether ``func``'s output depends differentiably on its parameter ``param``.

    Calls to other Python functions are followed (so a wrapper of a function without
    gradient, such as ``round``, does not connect); recursion is assumed to connect.
    """

    key = (code_key(func), param)
    if key in _DEPENDS:
        return _DEPENDS[key]
    _DEPENDS[key] = True  # while in progress (recursion)
    _, fn = normalized_parts(func)
    ret = fn.body[-1]
    result = False
    if isinstance(ret, ir.Return) and isinstance(ret.value, ir.Var):

        def reads(expr: ir.Expr) -> list[str]:
            if isinstance(expr, ir.Call):
                info = classify(expr)
                if info.kind == "user":
                    try:
                        bound = signature(info.func).bind(*expr.args, **dict(expr.kwargs))
                    except TypeError:
                        return diff_reads(expr)
                    return [
                        a.name
                        for p, a in bound.arguments.items()
                        if isinstance(a, ir.Var) and depends(info.func, p)
                    ]
            return diff_reads(expr)

        varied = {param}
        changed = True
        while changed:
            changed = False
            for s in walk(fn.body):
                new: list[str] = []
                if isinstance(s, ir.Assign) and any(r in varied for r in reads(s.value)):
                    new = [s.target]
                elif isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var):
                    new = list(s.targets) if s.value.name in varied else []
                elif isinstance(s, (ir.SetItem, ir.Append)) and isinstance(s.value, ir.Var):
                    new = [s.obj] if s.value.name in varied else []
                elif isinstance(s, ir.ListPop) and s.obj in varied:
                    new = [s.target]
                for name in new:
                    if name not in varied:
                        varied.add(name)
                        changed = True
        result = ret.value.name in varied
    _DEPENDS[key] = result
    return result
