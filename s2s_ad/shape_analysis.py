"""Shape analysis of a generated function: the facts (:mod:`shape_facts`) of every value,
for one shape class of its parameters.

:class:`Analysis` interprets the function (``ast``, both sweeps) once per shape class.
Branches and loops join to unknown where facts differ; a loop over ``range(n)`` with
``n`` a symbolic size (or 1) runs at least once, so its exit facts are those of its body.
A value popped from the tape into ``v`` has the facts of the values pushed from ``v``.
Facts of operators, NumPy functions, array methods and runtime helpers come from
:func:`shape_facts.probe`, for the operations listed here; anything else is unknown,
which is always safe.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import runtime
from .codefacts import children, nodes
from .rules import vjps
from .shape_facts import (
    BOTTOM,
    FLOAT,
    NO_CONST,
    SCALAR_TYPES,
    Arr,
    Fact,
    Scalar,
    Tup,
    join,
    probe,
)

# --- what is run on dummies ------------------------------------------------------------------

_BINOPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.MatMult: operator.matmul,
}
_UNARY: dict[type, Callable[..., Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}
_COMPARE: dict[type, Callable[..., Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
#: NumPy functions (besides ufuncs) whose result's type, dtype and shape follow from their
#: arguments' types, dtypes and shapes (and constant options such as ``axis``).
_NUMPY = frozenset(
    """sum mean prod max min amax amin var std zeros_like ones_like empty_like full_like
    transpose dot outer inner expand_dims squeeze where clip broadcast_to zeros ones empty
    full shape size ndim swapaxes moveaxis trace diagonal round around tensordot einsum
    matmul cumsum cumprod sort diag triu tril logaddexp""".split()
)
_LINALG = frozenset("inv det solve norm pinv".split())  # of ``np.linalg``
#: Methods and attributes of arrays, likewise.
_METHODS = frozenset("sum mean prod max min var std transpose copy squeeze swapaxes".split())
_ATTRIBUTES = frozenset("T shape size ndim".split())
#: Runtime helpers (``_ad.<name>``), likewise; those that never test a value may be run
#: on dummies of Python scalars, the others only on arrays and literal constants.
_HELPERS = {
    "unbroadcast": True,
    "sum_vjp": True,
    "mean_vjp": True,
    "seed": True,
    "matmul_vjp_x": False,
    "matmul_vjp_y": False,
    "dot_vjp_a": False,
    "dot_vjp_b": False,
    "max_vjp": True,
    "min_vjp": True,
    "prod_vjp": True,
    "logsumexp_vjp": True,
    "var_vjp": True,
    "std_vjp": False,
    "transpose_vjp": False,
    "tensordot_vjp_a": False,
    "tensordot_vjp_b": False,
    "einsum_vjp": False,
    "norm_vjp": False,
    "inner_vjp_a": False,
    "inner_vjp_b": False,
    "trace_vjp": False,
    "diagonal_vjp": False,
    "det_vjp": False,
    "solve_vjp_a": False,
    "solve_vjp_b": False,
    "cumsum_vjp": False,
    "sort_vjp": False,
    "max_weight": False,
    "min_weight": False,
    "clip_mask": False,
    "safe_log": False,
    "mT": False,
    "dense": False,
    "zeros_like": False,
    "getitem": False,
    "add": False,
    "copy": False,
}
_HELPER_FUNCS: dict[str, Callable[..., Any]] = {
    name: getattr(runtime, name, None) or getattr(vjps, name) for name in _HELPERS
}
_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "float": float,
    "int": int,
    "abs": abs,
    "pow": pow,
    "round": round,
}
_CHOOSE: dict[str, Callable[..., Any]] = {"min": min, "max": max}  # returns one argument


def _const(node: ast.expr) -> Any:
    """The value of a literal (numbers, strings, None, tuples of them), else ``NO_CONST``."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _const(node.operand)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
    if isinstance(node, ast.Slice) and node.lower is node.upper is node.step is None:
        return slice(None)
    if isinstance(node, ast.Tuple):
        items = [_const(e) for e in node.elts]
        if all(i is not NO_CONST for i in items):
            return tuple(items)
    return NO_CONST


#: Expressions :func:`_const` never finds a literal in.
_NEVER_CONST = frozenset(
    {ast.Name, ast.BinOp, ast.Call, ast.Attribute, ast.Subscript, ast.Compare, ast.IfExp}
)


def const_fact(value: Any) -> Fact:
    """Facts of a literal."""
    if isinstance(value, tuple):
        return Tup(tuple(const_fact(v) for v in value))
    if type(value) is int:
        return Scalar(int, value if value in (0, 1) else None)
    if isinstance(value, SCALAR_TYPES) or value is None or isinstance(value, slice):
        return Scalar(type(value))
    return None


# --- the interpreter ------------------------------------------------------------------------


class Unsupported(Exception):
    """A construct the analysis does not model: no facts for the function at all."""


Env = dict[str, Fact]


class Analysis:
    """Facts of a generated function for one shape class of its parameters.

    After :meth:`run`, ``calls`` maps ``id(call node)`` of every call to facts of its
    positional arguments and ``operands`` the id of every binary operation to facts of
    its operands (joined over every time it is reached).

    Args:
        func: The generated function.
        facts: Facts of its parameters.
        tape: The tape's name (``None``: none).
        modules: Global names the function reads that hold these modules (``math``):
            their functions are run on dummies like NumPy's.
        shadowed: Names of builtins (``abs``, ``range``) the function's globals define:
            calls of them are unknown.
        every: ``codefacts.nodes(func)``, when the caller has walked it already.
    """

    def __init__(
        self,
        func: ast.FunctionDef,
        facts: dict[str, Fact],
        tape: str | None,
        modules: dict[str, Any] | None = None,
        shadowed: frozenset[str] = frozenset(),
        every: list[ast.AST] | None = None,
    ) -> None:
        self.func, self.params, self.tape = func, facts, tape
        #: every node of the function (walked once, for the checks and the tape's pushes)
        self.every = nodes(func) if every is None else every
        self.modules = modules or {}  # global names known to be these modules (``math``)
        self.shadowed = shadowed  # builtins the function's globals redefine
        self.calls: dict[int, list[Fact]] = {}
        self.operands: dict[int, tuple[Fact, Fact]] = {}
        self.pushed: dict[str, Fact] = {}
        self.pushable = _pushed_names(self.every, tape)
        self.unset = _unset(func, self.pushable)  # ids of ``v = None`` statements
        self.loops: list[tuple[list[Env], list[Env]]] = []
        #: this pass's pops (name, facts read) and pushes (name, facts pushed)
        self.reads: list[tuple[str, Fact]] = []
        self.pushes: list[tuple[str, Fact]] = []

    def run(self) -> None:
        """Interpret the function until the facts of tape pushes settle.

        Raises:
            Unsupported: For a construct that is not modelled.
        """
        for node in self.every:
            if isinstance(node, (ast.Global, ast.Nonlocal, ast.Try, ast.Lambda, ast.NamedExpr)):
                raise Unsupported(type(node).__name__)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node is not self.func:
                    raise Unsupported("nested definition")
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if node.attr in ("shape", "dtype"):
                    raise Unsupported("shape or dtype changed in place")
            if isinstance(node, ast.Attribute) and node.attr == "resize":
                raise Unsupported("resize")
        for k in range(8):
            before = dict(self.pushed)
            self.calls, self.operands = {}, {}
            self.reads, self.pushes = [], []
            env: Env | None = {p: self.params.get(p) for p in _arg_names(self.func)}
            self.block(self.func.body, env)
            if self.pushed == before or (k < 7 and self._settled()):
                return
        raise Unsupported("tape facts do not settle")

    def _settled(self) -> bool:
        """Whether another pass would change nothing: every pop read the facts the pushes
        ended with, and joining any value pushed into them leaves them as they are (so
        the next pass would read the same facts everywhere and compute the same).
        Spares the pass that only confirms the facts (half the analysis)."""
        pushed = self.pushed
        for name, value in self.pushes:
            final = pushed[name]
            if join(final, value) != final:
                return False
        for name, value in self.reads:
            final = pushed.get(name, BOTTOM)
            if value is not final and value != final:
                return False
        return True

    # statements ---------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt], env: Env | None) -> Env | None:
        """Facts after ``stmts`` (``None``: not reached); ``env`` is updated in place."""
        for s in stmts:
            if env is None:
                return None
            env = self.stmt(s, env)
        return env

    def stmt(self, s: ast.stmt, env: Env) -> Env | None:
        if isinstance(s, ast.Assign):
            value = self.expr(s.value, env) if id(s) not in self.unset else BOTTOM
            if self._is_pop(s.value):
                value = None
                if _one_name(s):
                    name = s.targets[0].id  # type: ignore[attr-defined]
                    value = self.pushed.get(name, BOTTOM)
                    self.reads.append((name, value))
                    if name not in self.pushable:
                        value = None
            for t in s.targets:
                self.assign(t, value, env)
            return env
        if isinstance(s, ast.AugAssign):
            value = self.expr(s.value, env)
            if isinstance(s.target, ast.Name):
                old = env.get(s.target.id)
                new = self.binop(s.op, old, value, NO_CONST, NO_CONST)
                if isinstance(old, Arr):  # in place: the array keeps its shape and dtype
                    new = old if new is not None and new == Arr(old.shape, new.dtype) else None
                env[s.target.id] = new
            else:
                self.expr(s.target, env)
                self.store_into(s.target, env)
            return env
        if isinstance(s, ast.Expr):
            call = s.value
            if self._is_tape_call(call, "append"):
                assert isinstance(call, ast.Call)
                arg = call.args[0]
                value = self.expr(arg, env)
                if isinstance(arg, ast.Name):
                    self.pushed[arg.id] = join(self.pushed.get(arg.id, BOTTOM), value)
                    self.pushes.append((arg.id, value))
                return env
            self.expr(call, env)
            return self.forget_arguments(call, env)
        if isinstance(s, ast.If):
            self.expr(s.test, env)
            return _join_envs(self.block(s.body, dict(env)), self.block(s.orelse, dict(env)))
        if isinstance(s, ast.For):
            return self.loop_for(s, env)
        if isinstance(s, ast.While):
            return self.loop_while(s, env)
        if isinstance(s, (ast.Break, ast.Continue)):
            brk, cont = self.loops[-1]
            (brk if isinstance(s, ast.Break) else cont).append(env)
            return None
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.expr(s.value, env)
            return None
        if isinstance(s, ast.Pass):
            return env
        if isinstance(s, ast.Delete):
            for t in s.targets:
                for n in nodes(t):
                    if isinstance(n, ast.Name):
                        env[n.id] = None
            return env
        raise Unsupported(type(s).__name__)

    def assign(self, target: ast.expr, value: Fact, env: Env) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, Tup) else None
            if items is not None and len(items) != len(target.elts):
                items = None
            for k, t in enumerate(target.elts):
                if isinstance(t, ast.Starred):
                    items = None
                    t = t.value
                self.assign(t, items[k] if items is not None else None, env)
        else:
            self.expr(target, env)
            self.store_into(target, env)

    def store_into(self, target: ast.expr, env: Env) -> None:
        """``x[i] = v`` keeps an array's shape and dtype; anything else is forgotten."""
        base = target
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        if isinstance(base, ast.Name):
            if not (isinstance(target, ast.Subscript) and isinstance(env.get(base.id), Arr)):
                env[base.id] = None

    def forget_arguments(self, call: ast.expr, env: Env) -> Env:
        """A call made for its effect may change what it is given (not arrays' shapes)."""
        if not isinstance(call, ast.Call):
            return env
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(arg, ast.Name) and not isinstance(env.get(arg.id), (Arr, Scalar)):
                env[arg.id] = None
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            owner = call.func.value.id
            if not isinstance(env.get(owner), Arr) and owner not in ("np", "_ad"):
                env[owner] = None
        return env

    def loop_for(self, s: ast.For, entry: Env) -> Env | None:
        trips = self.trips(s.iter, entry)
        element = self.element(s.iter, entry)
        head: Env = entry
        for _ in range(30):
            self.loops.append(([], []))
            inner = dict(head)
            self.assign(s.target, element, inner)
            end = self.block(s.body, inner)
            brk, cont = self.loops.pop()
            ends = _join_all([end, *cont])
            new = _join_envs(entry, ends)
            if new == head:
                break
            assert new is not None
            head = new
        else:
            raise Unsupported("loop facts do not settle")
        done = ends if trips else head
        if s.orelse:
            done = self.block(s.orelse, done) if done is not None else None
        return _join_all([done, *brk])

    def loop_while(self, s: ast.While, entry: Env) -> Env | None:
        head: Env = entry
        for _ in range(30):
            self.expr(s.test, head)
            self.loops.append(([], []))
            end = self.block(s.body, dict(head))
            brk, cont = self.loops.pop()
            new = _join_all([entry, end, *cont])
            if new == head:
                break
            assert new is not None
            head = new
        else:
            raise Unsupported("loop facts do not settle")
        done: Env | None = head
        if s.orelse:
            done = self.block(s.orelse, head)
        return _join_all([done, *brk])

    def _builtin_call(self, node: ast.expr, name: str) -> bool:
        return _is_call(node, name) and name not in self.shadowed

    def trips(self, it: ast.expr, env: Env) -> bool:
        """Whether ``for ... in it`` surely runs at least once: ``range(n)`` (or reversed)
        with ``n`` a symbolic size, 1 or a positive literal."""
        if self._builtin_call(it, "reversed") and len(it.args) == 1:  # type: ignore[attr-defined]
            it = it.args[0]  # type: ignore[attr-defined]
        if self._builtin_call(it, "range") and len(it.args) == 1:  # type: ignore[attr-defined]
            count = _const(it.args[0])  # type: ignore[attr-defined]
            if type(count) is int:
                return count >= 1
            n = self.expr(it.args[0], env)  # type: ignore[attr-defined]
            return isinstance(n, Scalar) and (isinstance(n.size, str) or n.size == 1)
        return False

    def element(self, it: ast.expr, env: Env) -> Fact:
        """Facts of the loop variable."""
        if self._builtin_call(it, "reversed") and len(it.args) == 1:  # type: ignore[attr-defined]
            it = it.args[0]  # type: ignore[attr-defined]
        if self._builtin_call(it, "range"):
            for a in it.args:  # type: ignore[attr-defined]
                self.expr(a, env)
            return Scalar(int)
        self.expr(it, env)
        return None

    # expressions ---------------------------------------------------------------------------

    def expr(self, node: ast.expr, env: Env) -> Fact:
        """Facts of an expression (recording the facts of calls' arguments)."""
        kind = node.__class__
        if kind is ast.Name:  # (names, operators, calls, attributes: never literals)
            return env.get(node.id)  # type: ignore[attr-defined]
        if kind not in _NEVER_CONST:
            const = _const(node)
            if const is not NO_CONST:
                return const_fact(const)
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            old = self.operands.get(id(node))
            self.operands[id(node)] = (
                (left, right) if old is None else (join(old[0], left), join(old[1], right))
            )
            return self.binop(node.op, left, right, _const(node.left), _const(node.right))
        if isinstance(node, ast.UnaryOp):
            fn = _UNARY.get(type(node.op))
            value = self.expr(node.operand, env)
            return probe(fn, [(value, NO_CONST)], {}) if fn else None
        if isinstance(node, ast.Compare):
            left = self.expr(node.left, env)
            rights = [self.expr(c, env) for c in node.comparators]
            fn = _COMPARE.get(type(node.ops[0]))
            if len(node.ops) != 1 or fn is None:
                return None
            return probe(
                fn, [(left, _const(node.left)), (rights[0], _const(node.comparators[0]))], {}
            )
        if isinstance(node, ast.Attribute):
            value = self.expr(node.value, env)
            if isinstance(value, Arr) and node.attr in _ATTRIBUTES:
                return probe(operator.attrgetter(node.attr), [(value, NO_CONST)], {})
            return None
        if isinstance(node, ast.Subscript):
            value = self.expr(node.value, env)
            index = self.expr(node.slice, env)
            if _plain_index(node.slice, index):
                return probe(operator.getitem, [(value, NO_CONST), (index, _const(node.slice))], {})
            return None
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.IfExp):
            self.expr(node.test, env)
            return join(self.expr(node.body, env), self.expr(node.orelse, env))
        if isinstance(node, ast.Tuple):
            return Tup(tuple(self.expr(e, env) for e in node.elts))
        for child in children(node):
            if isinstance(child, ast.expr):
                self.expr(child, env)
        return None

    def binop(self, op: ast.operator, left: Fact, right: Fact, lc: Any, rc: Any) -> Fact:
        fn = _BINOPS.get(type(op))
        return probe(fn, [(left, lc), (right, rc)], {}) if fn else None

    def call(self, node: ast.Call, env: Env) -> Fact:
        args = [(self.expr(a, env), _const(a)) for a in node.args]
        kwargs = {}
        for k in node.keywords:
            value = _const(k.value)
            self.expr(k.value, env)
            if k.arg is None or value is NO_CONST:
                kwargs = None
            elif kwargs is not None:
                kwargs[k.arg] = value
        facts = [f for f, _ in args]
        old = self.calls.get(id(node))
        self.calls[id(node)] = facts if old is None else [join(a, b) for a, b in zip(old, facts)]
        if kwargs is None or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        fn = self._callee(node, env, args)
        if fn is None:
            return None
        if isinstance(fn, _Method):
            return probe(_method(fn.name), [(fn.owner, NO_CONST), *args], kwargs)
        if fn in _CREATE and any(_unsized(f) for f, c in args if c is NO_CONST):
            return None  # a size computed from an int of unknown value
        return probe(fn, args, kwargs)

    def _callee(self, node: ast.Call, env: Env, args: list[tuple[Fact, Any]]) -> Any:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in env or func.id in self.shadowed:
                return None
            if func.id in _CHOOSE:  # the type of the argument it picks: all alike
                types = {f.type if isinstance(f, Scalar) else None for f, _ in args}
                return _CHOOSE[func.id] if len(types) == 1 and None not in types else None
            return _BUILTINS.get(func.id)
        if not isinstance(func, ast.Attribute):
            return None
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id == "np" and "np" not in env:
            target = getattr(np, func.attr, None)
            if isinstance(target, np.ufunc) or func.attr in _NUMPY:
                return target
            return None
        if _is_np_linalg(owner) and "np" not in env and func.attr in _LINALG:
            return getattr(np.linalg, func.attr)
        if isinstance(owner, ast.Name) and owner.id in self.modules and owner.id not in env:
            target = getattr(self.modules[owner.id], func.attr, None)
            return target if callable(target) and not isinstance(target, type) else None
        if isinstance(owner, ast.Name) and owner.id == "_ad" and "_ad" not in env:
            value_free = _HELPERS.get(func.attr)
            if value_free is None:
                return None
            if not value_free and any(
                isinstance(f, Scalar) and c is NO_CONST and f.type in (float, int, bool, FLOAT)
                for f, c in args
            ):
                return None  # may test the value of a Python scalar (``is_zero``)
            return _HELPER_FUNCS[func.attr]
        if func.attr in _METHODS:
            value = self.expr(owner, env)
            if isinstance(value, Arr):
                return _Method(func.attr, value)
        return None

    def _is_pop(self, node: ast.expr) -> bool:
        return self._is_tape_call(node, "pop")

    def _is_tape_call(self, node: ast.expr, method: str) -> bool:
        return (
            self.tape is not None
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == method
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == self.tape
        )


@dataclass(frozen=True)
class _Method:
    """``obj.name(...)`` for an array ``obj``."""

    name: str
    owner: Arr


_CALLERS: dict[str, Callable[..., Any]] = {}


def _method(name: str) -> Callable[..., Any]:
    """A function calling the method ``name`` of its first argument (one per name, so
    that probes of it are cached)."""
    caller = _CALLERS.get(name)
    if caller is None:

        def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(obj, name)(*args, **kwargs)

        caller = _CALLERS[name] = call
    return caller


_CREATE = frozenset([np.zeros, np.ones, np.empty, np.full, np.broadcast_to])


def _unsized(fact: Fact) -> bool:
    """Whether a fact holds an int whose value is unknown (not a size)."""
    if isinstance(fact, Tup):
        return any(_unsized(f) for f in fact.items)
    return isinstance(fact, Scalar) and fact.type is int and fact.size is None


def _is_np_linalg(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "linalg"
        and isinstance(node.value, ast.Name)
        and node.value.id == "np"
    )


def _arg_names(func: ast.FunctionDef) -> list[str]:
    a = func.args
    names = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return names


def _one_name(s: ast.Assign) -> bool:
    return len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)


def _is_call(node: ast.expr, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == name
        and not node.keywords
    )


def _plain_index(node: ast.expr, fact: Fact) -> bool:
    """An index whose result shape does not depend on values: ints, ``:``, ``None``."""
    if isinstance(node, ast.Tuple):
        return all(
            _plain_index(e, None) or _int_like(e, f) for e, f in zip(node.elts, _items(fact))
        )
    if isinstance(node, ast.Slice):
        return node.lower is None and node.upper is None and node.step is None
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    return _int_like(node, fact)


def _items(fact: Fact) -> tuple[Fact, ...]:
    return fact.items if isinstance(fact, Tup) else (None,) * 64


def _int_like(node: ast.expr, fact: Fact) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    return isinstance(fact, Scalar) and (fact.type is int or issubclass(fact.type, np.integer))


def _pushed_names(every: list[ast.AST], tape: str | None) -> set[str]:
    out: set[str] = set()
    for node in every:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == tape
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            out.add(node.args[0].id)
    return out


def _unset(func: ast.FunctionDef, pushed: set[str]) -> set[int]:
    """``v = None`` statements at the top of the function for pushed variables: they are
    pushed before their first assignment (a temporary of a loop body). Their ``None`` is
    never read but by the push: the primal reads the variable nowhere before assigning
    it, and the backward sweep restores the ``None`` pushed by the first trip only in its
    last trip, after every statement that reads the variable. So the analysis binds them
    to no value (``BOTTOM``) rather than to ``None``."""
    out = set()
    for s in func.body:
        if (
            isinstance(s, ast.Assign)
            and _one_name(s)
            and isinstance(s.value, ast.Constant)
            and s.value.value is None
            and s.targets[0].id in pushed  # type: ignore[attr-defined]
        ):
            out.add(id(s))
    return out


def _join_envs(a: Env | None, b: Env | None) -> Env | None:
    if a is None:
        return b
    if b is None:
        return a
    out: Env = {}
    for k in a.keys() & b.keys():
        x, y = a[k], b[k]
        out[k] = x if x is y else join(x, y)  # most facts come through a loop unchanged
    return out


def _join_all(envs: list[Env | None]) -> Env | None:
    out: Env | None = None
    for e in envs:
        out = _join_envs(out, e)
    return out
