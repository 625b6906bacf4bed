"""Lowering: runtime helpers replaced by plain NumPy where shape facts prove it exact.

A generated gradient calls helpers that decide at run time what a value's shape asks for
(``_ad.unbroadcast(g, x)`` sums ``g`` down to ``x``'s shape, ``_ad.sum_vjp`` broadcasts
a reduction's cotangent back, ``_ad.matmul_vjp_y`` picks the product for the operands'
ranks). For a call whose arguments fall in one shape class (:mod:`shape_facts`), those
decisions are known in advance (:mod:`shape_analysis` proves them), and this module
writes them out:

=====================================  ===================================================
``_ad.seed(ans)``                      ``1.0`` (a scalar output)
``_ad.unbroadcast(g, x)``              ``g`` (same shape, or ``g`` a scalar), else the
                                       sums it does (``g.sum(axis=0)``)
``_ad.sum_vjp(g, a, axis, keepdims)``  ``np.full(a.shape, g)`` (``g / a.size`` for
                                       ``mean_vjp``); a fresh, writable array as before
``_ad.matmul_vjp_x/_y``, ``dot_vjp_*`` ``g @ y.T``, ``x.T @ g``, ``np.outer(g, y)`` ...
``_ad.dense(0.0, x)``                  ``np.zeros_like(x)``
``x_bar = _ad.add_at_owned(x_bar, x,   ``x_bar[i] += g``
i, g)``
``_ad.getitem(g, i)``, ``_ad.add``     ``g[i]``, ``a + b``
=====================================  ===================================================

Each replacement gives the same value, type, shape and dtype for every call of the class
(products written ``x.T @ g`` may round differently in the last bit from the helper's
``(x.T @ g[:, None])[:, 0]``: NumPy picks another BLAS routine). The function is then
cleaned up again by :mod:`optimize` (copies such as ``p_bar = _t2_bar`` go).
"""

from __future__ import annotations

import ast
import builtins
import math
from typing import Any

import numpy as np

from . import optimize
from .codefacts import Info, Liveness, children, is_tape_call, nodes, statements
from .emit import Compiled, _free, program
from .release import release_arrays
from .rewrite import Unparsed, as_rendered, attach, remove, render, text_of
from .shape_analysis import Analysis, Unsupported
from .shape_facts import Arr, Fact, Scalar, param_facts

STATS = {"lowered": 0}


def _is_helper(node: ast.expr, name: str | None = None) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "_ad"
        and (name is None or node.func.attr == name)
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    )


def _np(attr: str, *args: ast.expr, **kwargs: ast.expr) -> ast.Call:
    func = ast.Attribute(ast.Name("np", ast.Load()), attr, ast.Load())
    keywords = [ast.keyword(k, v) for k, v in kwargs.items()]
    return ast.Call(func, list(args), keywords)


def _sum(value: ast.expr, **kwargs: ast.expr) -> ast.Call:
    """``value.sum(...)`` (the method: NumPy's ``np.sum`` adds a Python layer around it)."""
    keywords = [ast.keyword(k, v) for k, v in kwargs.items()]
    return ast.Call(_attr(value, "sum"), [], keywords)


def _attr(value: ast.expr, attr: str) -> ast.Attribute:
    return ast.Attribute(value, attr, ast.Load())


def _matmul(a: ast.expr, b: ast.expr) -> ast.BinOp:
    return ast.BinOp(a, ast.MatMult(), b)


def _const(value: Any) -> ast.expr:
    if isinstance(value, tuple):
        return ast.Tuple([ast.Constant(v) for v in value], ast.Load())
    return ast.Constant(value)


def _numeric(f: Fact) -> bool:
    """A Python or NumPy number (not None, not a slice)."""
    return isinstance(f, Scalar) and (
        f.type in (float, int, bool) or issubclass(f.type, (np.number, np.bool_))
    )


def _float_scalar(f: Fact) -> bool:
    return isinstance(f, Scalar) and (f.type is float or issubclass(f.type, np.floating))


def _pure_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Name)


class _Lowering:
    """Rewrites the helper calls of one function, given its analysis."""

    def __init__(self, analysis: Analysis) -> None:
        self.facts = analysis.calls
        self.hits = 0

    def facts_of(self, call: ast.Call) -> list[Fact] | None:
        facts = self.facts.get(id(call))
        return facts if facts is not None and len(facts) == len(call.args) else None

    def expr(self, node: ast.expr) -> ast.expr:
        """``node`` with the helper calls inside it lowered (innermost first)."""
        for field in node._fields:  # (as ``ast.iter_fields``, without its generator)
            value = getattr(node, field, None)
            if value.__class__ is list:
                setattr(
                    node, field, [self.expr(v) if isinstance(v, ast.expr) else v for v in value]
                )
            elif isinstance(value, ast.expr):
                setattr(node, field, self.expr(value))
        if isinstance(node, ast.Call) and _is_helper(node):
            facts = self.facts_of(node)
            rule = getattr(self, f"lower_{node.func.attr}", None)  # type: ignore[attr-defined]
            if facts is not None and rule is not None:
                out = rule(node.args, facts)
                if out is not None:
                    self.hits += 1
                    return ast.copy_location(out, node)
        return node

    # one method per helper: arguments' nodes and facts -> the replacement or None -------

    def lower_seed(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        return ast.Constant(1.0) if _numeric(facts[0]) else None

    def lower_unbroadcast(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        g, x = facts
        if _numeric(g):
            return args[0]
        if not isinstance(g, Arr) or not g.known or g.dtype.kind != "f":
            return None
        if isinstance(x, Scalar) and x.type is float:
            return _sum(args[0])
        if _numeric(x):
            return args[0] if g.shape == () else _sum(args[0])
        if not isinstance(x, Arr) or not x.known:
            return None
        if g.shape == x.shape:
            return args[0]
        if not x.shape:
            return _sum(args[0])
        out, shape = args[0], g.shape
        extra = len(g.shape) - len(x.shape)
        if extra < 0:
            return None
        if extra:
            axes = tuple(range(extra))
            out = _sum(out, axis=_const(axes[0] if extra == 1 else axes))
            shape = shape[extra:]
        keep = tuple(i for i, n in enumerate(x.shape) if n == 1 and shape[i] != 1)
        if keep:
            axis = _const(keep[0] if len(keep) == 1 else keep)
            out = _sum(out, axis=axis, keepdims=ast.Constant(True))
        return out

    def _fill(self, args: list[ast.expr], facts: list[Fact], mean: bool) -> ast.expr | None:
        if len(args) != 4 or not _pure_name(args[1]):
            return None
        g, a = facts[0], facts[1]
        if not all(isinstance(a, ast.Constant) for a in args[2:]):
            return None
        axis, keepdims = args[2].value, args[3].value  # type: ignore[attr-defined]
        if not isinstance(a, Arr) or not a.known or not a.shape or type(keepdims) is not bool:
            return None
        shape = _attr(args[1], "shape")
        if axis is None:
            if not _float_scalar(g):
                return None
            value = args[0]
            if mean:
                value = ast.BinOp(args[0], ast.Div(), _attr(args[1], "size"))
            out = _np("full", shape, value)
            out.scalar_fill = (value, a, g)  # type: ignore[attr-defined]
            return out
        if type(axis) is not int or not -len(a.shape) <= axis < len(a.shape):
            return None
        axis %= len(a.shape)
        if _float_scalar(g):
            value = args[0]
        elif isinstance(g, Arr) and g.known and g.dtype.kind == "f":
            kept = list(a.shape)
            kept[axis] = 1
            expected = tuple(kept) if keepdims else tuple(a.shape[:axis] + a.shape[axis + 1 :])
            if g.shape != expected:
                return None
            value = args[0] if keepdims else _np("expand_dims", args[0], _const(axis))
        else:
            return None
        if mean:
            count = ast.Subscript(_attr(args[1], "shape"), ast.Constant(axis), ast.Load())
            value = ast.BinOp(value, ast.Div(), count)
        return _np("full", shape, value)

    def lower_sum_vjp(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        return self._fill(args, facts, mean=False)

    def lower_mean_vjp(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        return self._fill(args, facts, mean=True)

    def lower_max_vjp(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        """``g`` shared equally among the maxima along a kept axis (as ``_ad.max_vjp``)."""
        if len(args) != 5 or not all(isinstance(a, ast.Constant) for a in args[3:]):
            return None
        g, a, ans = facts[:3]
        axis, keepdims = args[3].value, args[4].value  # type: ignore[attr-defined]
        if keepdims is not True or type(axis) is not int:
            return None
        if not all(isinstance(f, Arr) and f.known for f in (g, a, ans)):
            return None
        assert isinstance(g, Arr) and isinstance(a, Arr) and isinstance(ans, Arr)
        if not -len(a.shape) <= axis < len(a.shape) or g.dtype.kind != "f":
            return None
        kept = list(a.shape)
        kept[axis % len(a.shape)] = 1
        if g.shape != tuple(kept) or ans.shape != tuple(kept):
            return None
        hit = ast.Compare(args[1], [ast.Eq()], [args[2]])
        count = _sum(
            ast.Compare(args[1], [ast.Eq()], [args[2]]),
            axis=ast.Constant(axis),
            keepdims=ast.Constant(True),
        )
        return ast.BinOp(ast.BinOp(args[0], ast.Mult(), hit), ast.Div(), count)

    lower_min_vjp = lower_max_vjp

    def lower_matmul_vjp_x(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        return self._product(args, facts, first=True)

    def lower_matmul_vjp_y(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        return self._product(args, facts, first=False)

    def lower_dot_vjp_a(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        return self._product(args, facts, first=True)

    def lower_dot_vjp_b(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        return self._product(args, facts, first=False)

    def _product(self, args: list[ast.expr], facts: list[Fact], first: bool) -> ast.expr | None:
        """The cotangent of one operand of ``x @ y`` (or ``np.dot``) for 1-d and 2-d arrays
        of one float dtype."""
        if len(args) != 3:
            return None
        g, x, y = facts
        if not all(isinstance(f, Arr) and f.known for f in facts):
            return None
        assert isinstance(g, Arr) and isinstance(x, Arr) and isinstance(y, Arr)
        if not (g.dtype == x.dtype == y.dtype and g.dtype.kind == "f"):
            return None
        ga, xa, ya = args
        nx, ny = len(x.shape), len(y.shape)
        if nx not in (1, 2) or ny not in (1, 2) or (nx == ny == 1):
            return None
        if x.shape[-1] != y.shape[0]:
            return None
        expected = x.shape[:-1] + y.shape[1:]
        if g.shape != expected:
            return None
        if first:
            if ny == 1:
                return _np("outer", ga, ya)  # x (n, k), y (k,), g (n,)
            if nx == 1:
                return _matmul(ya, ga)  # x (k,), y (k, m), g (m,)
            return _matmul(ga, _attr(ya, "T"))
        if nx == 1:
            return _np("outer", xa, ga)  # x (k,), y (k, m), g (m,)
        return _matmul(_attr(xa, "T"), ga)

    def lower_dense(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        if len(args) != 2 or not isinstance(facts[1], Arr):
            return None
        x = facts[1]
        if isinstance(args[0], ast.Constant) and args[0].value == 0.0 and x.dtype.kind == "f":
            if type(args[0].value) is float:
                return _np("zeros_like", args[1])
        g = facts[0]
        if isinstance(g, Arr) and g.known and g.shape == x.shape and g.dtype.kind == "f":
            return ast.Call(_attr(args[0], "copy"), [], [])
        return None

    def lower_getitem(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        g, i = facts
        if isinstance(g, Arr) and len(g.shape) == 1 and isinstance(i, Scalar) and i.type is int:
            return ast.Subscript(args[0], args[1], ast.Load())
        return None

    def lower_add(self, args: list[ast.expr], facts: list[Fact]) -> ast.expr | None:
        if len(args) == 2 and all(isinstance(f, Arr) for f in facts):
            return ast.BinOp(args[0], ast.Add(), args[1])
        return None

    def add_at_owned(self, s: ast.stmt) -> ast.stmt | None:
        """``x_bar = _ad.add_at_owned(x_bar, x, i, g)`` as ``x_bar[i] += g``."""
        if not (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and _is_helper(s.value, "add_at_owned")
        ):
            return None
        call = s.value
        assert isinstance(call, ast.Call)
        facts = self.facts_of(call)
        if facts is None or len(facts) != 4:
            return None
        xb, x, i, g = facts
        target = s.targets[0].id
        if not (isinstance(call.args[0], ast.Name) and call.args[0].id == target):
            return None
        if not (isinstance(xb, Arr) and xb.known and xb.dtype.kind == "f" and xb.shape):
            return None
        if not isinstance(x, Arr) or not (isinstance(i, Scalar) and i.type is int):
            return None
        if not (
            _numeric(g) or (isinstance(g, Arr) and len(xb.shape) > 1 and g.shape == xb.shape[1:])
        ):
            return None
        sub = ast.Subscript(ast.Name(target, ast.Load()), call.args[2], ast.Store())
        self.hits += 1
        return ast.copy_location(ast.AugAssign(sub, ast.Add(), self.expr(call.args[3])), s)


def _tape(func: ast.FunctionDef, every: list[ast.AST]) -> str | None:
    """The tape's name: a list made at the top of the function and popped from
    (``every``: the function's nodes, ``codefacts.nodes(func)``)."""
    made = {
        s.targets[0].id
        for s in func.body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.List)
        and not s.value.elts
    }
    for node in every:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "pop"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in made
        ):
            return node.func.value.id
    return None


def _scalar_adjoints(func: ast.FunctionDef, analysis: Analysis) -> set[int]:
    """``t_bar = np.full(a.shape, v)`` (a whole reduction's adjoint) kept as the scalar
    ``t_bar = v`` where the array of copies is only ever broadcast back: every read of
    ``t_bar`` is an operand of ``+ - * /`` with a float64 array shaped like ``a`` (same
    values, shape and dtype), or with a float scalar whose result is such an operand in
    turn or is assigned to a variable of which the same holds. Returns the ids of the
    statements changed."""
    stores: dict[str, int] = {}
    for node in nodes(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
    parents: dict[int, ast.AST] = {}
    for node in nodes(func):
        for child in children(node):
            parents[id(child)] = node
    reads: dict[str, list[ast.Name]] = {}
    for node in nodes(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.setdefault(node.id, []).append(node)
    changed: set[int] = set()
    scalars: set[str] = set()  # names that hold a scalar now
    arrays: list[ast.expr] = []  # operands relied on to be arrays
    for s in statements(func.body):
        fill = getattr(s.value, "scalar_fill", None) if isinstance(s, ast.Assign) else None
        if fill is None or len(s.targets) != 1 or not isinstance(s.targets[0], ast.Name):
            continue
        value, a, g = fill
        check = _BroadcastBack(stores, parents, reads, analysis)
        if not (g.type is float or g.type is np.float64) or not check.name(s.targets[0].id, a, 0):
            continue
        # an operand relied on to be an array must not read a name that is now a scalar
        now = scalars | check.names
        if any(_reads_any(e, now) for e in [*arrays, *check.arrays]):
            continue
        scalars, arrays = now, [*arrays, *check.arrays]
        s.value = value
        changed.add(id(s))
    return changed


def _reads_any(node: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in nodes(node))


class _BroadcastBack:
    """Whether a scalar standing for a float64 array of one shape is only ever broadcast
    back to it."""

    def __init__(
        self,
        stores: dict[str, int],
        parents: dict[int, ast.AST],
        reads: dict[str, list[ast.Name]],
        analysis: Analysis,
    ) -> None:
        self.stores, self.parents, self.reads = stores, parents, reads
        self.analysis = analysis
        self.names: set[str] = set()  # the variables that become scalars
        self.arrays: list[ast.expr] = []  # the operands relied on to be arrays

    def name(self, name: str, a: Arr, depth: int) -> bool:
        self.names.add(name)
        uses = self.reads.get(name, [])
        if self.stores.get(name) != 1 or not uses or depth > 8:
            return False
        return all(self.use(u, a, depth) for u in uses)

    def use(self, node: ast.expr, a: Arr, depth: int) -> bool:
        op = self.parents.get(id(node))
        if isinstance(op, ast.Assign) and op.value is node:
            targets = op.targets
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return self.name(targets[0].id, a, depth + 1)
            return False
        if not isinstance(op, ast.BinOp) or not isinstance(
            op.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)
        ):
            return False
        facts = self.analysis.operands.get(id(op))
        if facts is None:
            return False
        other = facts[1] if op.left is node else facts[0]
        if isinstance(other, Arr):
            self.arrays.append(op.right if op.left is node else op.left)
            return other.shape == a.shape and other.dtype == np.dtype(np.float64)
        if isinstance(other, Scalar) and (other.type is float or other.type is np.float64):
            return self.use(op, a, depth)  # still a scalar standing for the array
        return False


def _self_copies(func: ast.FunctionDef) -> set[int]:
    """``g = g`` left by a lowering (``g = _ad.unbroadcast(g, x)``)."""
    return {
        id(s)
        for s in statements(func.body)
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Name)
        and s.value.id == s.targets[0].id
    }


def _dead_tape_traffic(func: ast.FunctionDef, tape: str | None) -> set[int]:
    """Pushes of a variable ``v`` and its restores ``v = <tape>.pop()`` when nothing reads
    ``v`` after any restore (a value pushed only so that a helper could read its shape).

    Pushes and restores go together (as many of each), and only when every pop of the
    function restores a variable: the tape stays balanced.
    """
    if tape is None:
        return set()
    pushes: dict[str, list[ast.stmt]] = {}
    pops: dict[str, list[ast.stmt]] = {}
    every = statements(func.body)
    whole_pops = 0
    for s in every:
        if isinstance(s, ast.Expr) and is_tape_call(s.value, tape, "append", 1):
            arg = s.value.args[0]  # type: ignore[attr-defined]
            if isinstance(arg, ast.Name):
                pushes.setdefault(arg.id, []).append(s)
        elif isinstance(s, ast.Assign) and is_tape_call(s.value, tape, "pop", 0):
            whole_pops += 1
            if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                pops.setdefault(s.targets[0].id, []).append(s)
    all_pops = sum(1 for n in nodes(func) if is_tape_call(n, tape, "pop", 0))
    if all_pops != whole_pops:
        return set()
    liveness = Liveness(Info(tape)).run(func.body)
    drop: set[int] = set()
    for name, restores in pops.items():
        saves = pushes.get(name, [])
        if len(saves) != len(restores):
            continue
        if all(id(p) in liveness.after and not liveness.live_after(p, name) for p in restores):
            drop |= {id(s) for s in [*saves, *restores]}
    return drop


def lower_function(
    text: str,
    facts: dict[str, Fact],
    modules: dict[str, Any] | None = None,
    shadowed: frozenset[str] = frozenset(),
    trips: bool = False,
) -> str:
    """A generated function (its text) with helpers lowered for these parameter facts
    (``modules``: global names known to hold modules such as ``math``; ``shadowed``:
    builtins the function's globals redefine; ``trips``: records of loops may go into
    per-loop lists, see :mod:`trip_records`).

    Returns the text unchanged when nothing is lowered or the analysis gives up.
    """
    tree = ast.parse(text)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    every = nodes(func)  # one walk for the tape's name and the analysis's checks
    tape = _tape(func, every)
    analysis = Analysis(func, facts, tape, modules, shadowed, every)
    try:
        analysis.run()
    except Unsupported:
        return text
    notes = attach(func, text.split("\n"))
    lowering = _Lowering(analysis)
    changed: set[int] = set()

    def block(stmts: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for s in stmts:
            for attr in ("body", "orelse"):
                inner = getattr(s, attr, None)
                if isinstance(inner, list) and inner:
                    setattr(s, attr, block(inner))
            new = lowering.add_at_owned(s)
            if new is not None:
                if id(s) in notes:
                    notes[id(new)] = notes.pop(id(s))
                changed.add(id(new))
                out.append(new)
                continue
            before = lowering.hits
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)):
                if s.value is not None:
                    s.value = lowering.expr(s.value)
            if lowering.hits != before:
                changed.add(id(s))
            out.append(s)
        return out

    func.body = block(func.body)
    if not lowering.hits:
        return text
    changed |= _scalar_adjoints(func, analysis)
    STATS["lowered"] += lowering.hits
    drop = _self_copies(func) | _dead_tape_traffic(func, tape)
    if drop:
        func.body = remove(func.body, drop, notes) or [ast.Pass()]
    unparsed: Unparsed = {}
    rendered = render(func.body, notes, "    ", changed, unparsed)
    out = "\n".join([text_of(func), *rendered])  # type: ignore[arg-type]
    out = optimize.optimize_function(
        out,
        tape or "_tape",
        optimize.Facts(),
        plan_trips=trips,
        built=lambda: as_rendered(func, notes, changed, unparsed),
    )
    if trips and optimize.ENABLED:  # not in code differentiated again (``del``)
        out = release_arrays(out, facts, tape, modules=modules, shadowed=shadowed)
    return out


def shape_variant(compiled: Any, func: Any, key: tuple[Any, ...], params: list[str]) -> Any:
    """The gradient of a kind variant (``compiled``, from ``api.compile_adjoint``) lowered
    for the shape class ``key`` of the arguments of ``params``, compiled and bound to
    ``func``; ``None`` when nothing is lowered (the kind variant serves)."""

    text = compiled.source_of("grad")
    facts = compiled.program.facts
    if facts.untripped:  # lowered before its records go into per-loop lists
        text = facts.untripped
    modules = {"math": math} if func.__globals__.get("math") is math else {}
    shadowed = frozenset(n for n in vars(builtins) if n in func.__globals__)
    lowered = lower_function(
        text.rstrip("\n"), param_facts(params, key), modules, shadowed, facts.per_loop
    )
    if lowered == text.rstrip("\n"):
        return None
    name = compiled.names["grad"]
    header = compiled.text.split("\n", 1)[0] + f" (for argument shapes {describe(key)})"
    free = _free(compiled.bindings, func)
    made = program(f"{name}:shapes", header, (lowered,), compiled.program.tape, free, False)
    shaped = Compiled(made, {"grad": name}, compiled.bindings, compiled.params)
    return shaped.bind(func)["grad"]


def describe(key: tuple[Any, ...]) -> str:
    """A shape class for people: ``(a, b) float64, (b,) float64, float``."""
    parts = []
    for entry in key:
        if isinstance(entry, tuple):
            dims = ", ".join(str(d) for d in entry[1]) + ("," if len(entry[1]) == 1 else "")
            parts.append(f"({dims}) {entry[0]}")
        else:
            parts.append(getattr(entry, "__name__", str(entry)))
    return ", ".join(parts)
