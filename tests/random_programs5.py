"""Grammar-generated random programs, fifth round: control flow and mutation stress.

A program is ``f(x, M, s, n)`` of a vector ``x`` (4 entries), a matrix ``M`` (3 x 4), a
float ``s`` and an int ``n`` (2 or 3, not differentiated). Its body is drawn from a small
typed grammar (floats, vectors, a matrix, loop counters) so that every program runs:

* control flow: ``if``/``elif``/``else`` with chained comparisons, ``for`` inside ``while``
  inside ``if``, ``break``/``continue`` at several depths, early ``return`` inside nested
  loops; ``for`` over ``range(a, b, c)`` with negative steps, ``reversed(range(...))``,
  ``enumerate(zip(y, z))``, the rows of a matrix, a list appended to before the loop;
* mutation: ``y[i] = ...``, ``y[i] += ...``, ``y[a:b] = ...``, ``W[:, j] *= ...``,
  ``z[mask] = ...`` on locals copied from the parameters (``y = x.copy()``,
  ``z = np.zeros_like(x)``), augmented assignment on arrays and floats, aliases
  (``v = y`` then an in-place write or a rebinding), swaps, tuple unpacking from helpers
  returning tuples, lists of arrays indexed by loop counters, dict accumulation;
* calls to module helpers (one recursive, one with an early return inside its loop),
  conditional expressions, ``min``/``max``/``abs``, ``i * 0.5``, ``u ** i`` with ``i`` from
  a loop, ``np.where``/``np.maximum``/``np.clip``, reductions with ``axis``/``keepdims``.

Values stay bounded: assignments go through ``tanh``/``sin``/``clip`` and loop updates are
scaled down. :func:`generate` returns a :class:`Program` (its source and whether it
writes into arrays, which autograd does not follow); :func:`check` compares ``grad``,
``value_and_grad``, ``jvp``, ``vjp`` and ``check_grads(order=2, modes=("rev", "fwd"))``
with central finite differences and the gradient with autograd where it applies.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HELPERS = """

def poly(u, k):
    out = 0.0 * u
    for p in range(k):
        out = out + u ** p / (p + 1)
    return out


def pair(u, v):
    return np.sin(u) + 0.5 * v, u * np.cos(v)


def settle(u, depth):
    if depth <= 0:
        return np.tanh(u)
    return 0.5 * u + 0.5 * settle(np.sin(u), depth - 1)


def first_big(v, limit):
    for idx in range(v.shape[0]):
        if v[idx] > limit:
            return v[idx] * 2.0
    return np.sum(v) * 0.1


def squash(u):
    if np.sum(u) > 0.0:
        return np.tanh(u)
    return 0.5 * np.sin(u)
"""

IMPORTS = {"": "import numpy as np\n", "autograd": "import autograd.numpy as np\n"}
_counter = itertools.count()
STATS: dict[str, int] = {}  # how many gradients autograd confirmed, for exploration runs


@dataclass
class Program:
    """A generated program: its source and what the oracles can follow."""

    source: str
    writes: bool = False  # in-place writes into arrays (autograd rebinds instead)
    kinds: set[str] = field(default_factory=set)  # statement kinds used


@dataclass
class _Loop:
    """A loop being generated: its counter (if any) and the largest value it takes."""

    counter: str | None
    top: int


class _Gen:
    """The grammar; one instance per program."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.loops: list[_Loop] = []
        self.floats_read: list[str] = []  # loop variables holding floats
        self.vecs_read: list[str] = []  # loop variables holding vectors
        self.names = itertools.count()
        self.prog = Program("")
        self.stmts = 0

    # ---- expressions -------------------------------------------------------------------
    def pick(self, seq: list[Any] | tuple[Any, ...]) -> Any:
        return self.rng.choice(seq)

    def counter(self, top: int) -> str | None:
        """A loop counter whose values stay below ``top`` (an index), if any."""
        ok = [lp.counter for lp in self.loops if lp.counter and lp.top < top]
        return self.pick(ok) if ok else None

    def index(self, size: int) -> str:
        c = self.counter(size)
        if c and self.rng.random() < 0.7:
            return c
        return str(self.rng.randrange(size))

    def fleaf(self) -> str:
        r = self.rng.random()
        if r < 0.25:
            return self.pick(["t", "acc", "s", "s", 'D["a"]', 'D["b"]'])
        if r < 0.35 and self.floats_read:
            return self.pick(self.floats_read)
        if r < 0.45:
            return self.pick(["0.5", "-0.75", "1.25", "0.3"])
        if r < 0.55:
            c = self.counter(99)
            if c:
                return f"{c} * 0.5"
            return "n * 0.25"
        if r < 0.7:
            red = self.pick(["np.sum", "np.mean", "np.max", "np.min"])
            return f"{red}({self.vleaf()}) * 0.5"
        if r < 0.85:
            return f"{self.pick(['y', 'z', 'x'])}[{self.index(4)}]"
        return f"W[{self.index(3)}, {self.index(4)}]"

    def fexpr(self, depth: int = 0) -> str:
        if depth >= 2 or self.rng.random() < 0.35:
            return self.fleaf()
        k = self.rng.randrange(12)
        a = self.fexpr(depth + 1)
        if k == 0:
            return f"np.sin({a})"
        if k == 1:
            return f"np.tanh({a})"
        if k == 2:
            return f"abs({a})"
        if k == 3:
            return f"{self.pick(['min', 'max'])}({a}, {self.fexpr(depth + 1)})"
        if k == 4:
            b = self.fexpr(depth + 1)
            return f"({a} if {self.fcond()} else {b})"
        if k == 5:
            c = self.counter(4)
            if c:
                return f"np.tanh({a}) ** {c}"
            return f"({a}) ** 2"
        if k == 6:
            return f"{a} / (1.5 + {a} * {a})"
        if k == 7:
            return f"settle({a}, {self.pick(['1', '2', 'n'])})"
        if k == 8:
            return f"first_big({self.vexpr(depth + 1)}, {self.pick(['0.2', '-0.1', '0.5'])})"
        op = self.pick(["+", "-", "*"])
        return f"({a} {op} {self.fexpr(depth + 1)})"

    def vleaf(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return self.pick(["y", "z", "x", "y"])
        if r < 0.6 and self.vecs_read:
            return self.pick(self.vecs_read)
        if r < 0.7:
            return f"W[{self.index(3)}]"
        if r < 0.8:
            c = self.counter(99)
            if c and self.pick([0, 1]):
                return f"items[{c} % len(items)]"  # a list of arrays indexed by a counter
            return f"items[{self.pick(['-1', '0'])}]"
        if r < 0.9:
            red = self.pick(["np.sum", "np.mean", "np.max"])
            return f"{red}({self.pick(['W', 'M'])}, axis=0)"
        return f"{self.pick(['y', 'z'])}[::-1]"

    def vexpr(self, depth: int = 0) -> str:
        if depth >= 2 or self.rng.random() < 0.3:
            return self.vleaf()
        k = self.rng.randrange(11)
        a = self.vexpr(depth + 1)
        if k == 0:
            return f"np.sin({a})"
        if k == 1:
            return f"np.tanh({a})"
        if k == 2:
            return f"np.where({a} > {self.pick(['0.0', '0.2'])}, {a}, {self.vexpr(depth + 1)})"
        if k == 3:
            return f"np.maximum({a}, {self.vexpr(depth + 1)})"
        if k == 4:
            return f"np.clip({a}, -0.8, 0.9)"
        if k == 5:
            return f"({a} * {self.fexpr(depth + 1)})"
        if k == 6:
            return f"squash({a})"
        if k == 7:
            return f"poly({a}, {self.pick(['2', '3', 'n'])})"
        if k == 8:
            return f"np.sum(W * {a}, axis=0, keepdims=True)[0]"
        if k == 9 and self.pick([0, 1]):
            return f"(W.T @ np.tanh(W @ {a}))"
        op = self.pick(["+", "-", "*"])
        return f"({a} {op} {self.vexpr(depth + 1)})"

    def fcond(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            return f"{self.pick(['-0.5', '0.0'])} < {self.fexpr(1)} < {self.pick(['0.6', '1.0'])}"
        if r < 0.5:
            c = self.counter(99)
            if c:
                return f"{c} % 2 == {self.pick(['0', '1'])}"
            return f"n > {self.pick(['2', '1'])}"
        if r < 0.7:
            return f"np.sum({self.vexpr(1)}) > {self.pick(['0.1', '-0.2'])}"
        return f"{self.fexpr(1)} {self.pick(['>', '<', '>='])} {self.pick(['0.0', '0.3'])}"

    # ---- statements --------------------------------------------------------------------
    def stmt(self, depth: int) -> list[str]:
        self.stmts += 1
        kinds = ["fassign", "faug", "vassign", "vaug", "setitem", "matwrite", "swap", "unpack"]
        kinds += ["alias", "append", "dict", "helper"]
        if depth < 3 and self.stmts < 18:
            kinds += ["if", "for", "for", "while"]
        if self.loops:
            kinds += ["exit", "exit"]
        kinds += ["return"] if self.loops or depth else []
        kind = self.pick(kinds)
        self.prog.kinds.add(kind)
        return getattr(self, f"s_{kind}")(depth)

    def block(self, depth: int, lo: int = 1, hi: int = 3) -> list[str]:
        out: list[str] = []
        for _ in range(self.rng.randint(lo, hi)):
            out += self.stmt(depth)
        return out

    def pad(self, depth: int) -> str:
        return "    " * (depth + 1)

    def s_fassign(self, d: int) -> list[str]:
        wrap = self.pick(["np.tanh", "np.sin", ""])
        return [f"{self.pad(d)}{self.pick(['t', 'acc'])} = {wrap}({self.fexpr()})"]

    def s_faug(self, d: int) -> list[str]:
        op = self.pick(["+=", "-=", "*="])
        rhs = f"np.cos({self.fexpr()})" if op == "*=" else f"0.3 * np.tanh({self.fexpr()})"
        target = self.pick(["t", "acc", 'D["a"]'])
        return [f"{self.pad(d)}{target} {op} {rhs}"]

    def s_vassign(self, d: int) -> list[str]:
        wrap = self.pick(["np.tanh", "np.sin", "squash"])
        return [f"{self.pad(d)}{self.pick(['y', 'z'])} = {wrap}({self.vexpr()})"]

    def s_vaug(self, d: int) -> list[str]:
        op = self.pick(["+=", "-=", "*="])
        rhs = f"np.cos({self.vexpr()})" if op == "*=" else f"0.3 * np.tanh({self.vexpr()})"
        if self.pick([0, 1]):
            rhs = f"np.cos({self.fexpr()})" if op == "*=" else f"0.2 * {self.fexpr()}"
        return [f"{self.pad(d)}{self.pick(['y', 'z'])} {op} {rhs}"]

    def s_setitem(self, d: int) -> list[str]:
        self.prog.writes = True
        p, v = self.pad(d), self.pick(["y", "z"])
        k = self.rng.randrange(5)
        if k == 0:
            return [f"{p}{v}[{self.index(4)}] = np.tanh({self.fexpr()})"]
        if k == 1:
            return [f"{p}{v}[{self.index(4)}] += 0.3 * np.sin({self.fexpr()})"]
        if k == 2:
            a = self.rng.randrange(3)
            b = self.rng.randrange(a + 1, 5)
            return [f"{p}{v}[{a}:{b}] = np.tanh(({self.vexpr()})[{a}:{b}])"]
        if k == 3:
            return [
                f"{p}mask = {v} > {self.pick(['0.0', '0.25'])}",
                f"{p}{v}[mask] = {self.pick(['0.5', 'np.sin(x[mask])', f'{v}[mask] * 0.5'])}",
            ]
        if self.pick([0, 1]):
            return [f"{p}{v}[::-1] = np.tanh({self.vexpr()} + {v})"]  # a write through a view
        return [f"{p}{v}[{self.index(4)}] *= np.cos({self.fexpr()})"]

    def s_matwrite(self, d: int) -> list[str]:
        p = self.pad(d)
        k = self.rng.randrange(9)
        if k == 0:
            self.prog.writes = True
            return [f"{p}W[:, {self.index(4)}] *= np.cos({self.fexpr()})"]
        if k == 6:
            self.prog.writes = True
            return [f"{p}W[:, {self.index(4)}] = np.tanh(np.sum(W, axis=1) * {self.fexpr()})"]
        if k == 7:
            self.prog.writes = True
            return [f"{p}W[1:3, ::2] += 0.2 * np.tanh(W[0:2, 1::2] * {self.fexpr()})"]
        if k == 8:
            return [f"{p}W = np.tanh(W + 0.2 * np.outer(np.mean(W, axis=1), {self.vexpr()}))"]
        if k == 1:
            self.prog.writes = True
            return [f"{p}W[{self.index(3)}] = np.tanh({self.vexpr()})"]
        if k == 2:
            self.prog.writes = True
            return [f"{p}W[{self.index(3)}, {self.index(4)}] += 0.3 * np.sin({self.fexpr()})"]
        if k == 3:
            return [f"{p}W = np.clip(W, -0.9, 0.9)"]
        if k == 4:
            return [f"{p}W = np.where(W > 0.0, W, 0.1 * W)"]
        return [f"{p}W = np.tanh(W - np.mean(W, axis=1, keepdims=True) * {self.fexpr()})"]

    def s_swap(self, d: int) -> list[str]:
        return [f"{self.pad(d)}{self.pick(['t, acc = acc, t', 'y, z = z, y'])}"]

    def s_unpack(self, d: int) -> list[str]:
        pair = self.pick(["y, z = pair(y, z)", "t, acc = pair(t, acc)", "y, z = pair(z, y)"])
        return [f"{self.pad(d)}{pair}"]

    def s_alias(self, d: int) -> list[str]:
        p = self.pad(d)
        k = self.pick([0, 0, 0, 1, 2, 3])  # writes through an alias are refused: fewer
        if k == 0:  # a rebinding: y keeps its value
            return [f"{p}v = y", f"{p}v = v * 0.5 + {self.fexpr()}", f"{p}acc += np.sum(v) * 0.1"]
        self.prog.writes = True
        if k == 1:  # an in-place write through the alias reaches y
            return [f"{p}v = y", f"{p}v[{self.index(4)}] = np.tanh({self.fexpr()})"]
        if k == 2:
            return [f"{p}v = z", f"{p}v += 0.2 * np.sin({self.vexpr()})"]
        # a write into the parameter through an alias
        return [f"{p}v = x", f"{p}v[{self.index(4)}] = 0.5 * np.tanh({self.fexpr()})"]

    def s_append(self, d: int) -> list[str]:
        if any(v.startswith("it") for v in self.vecs_read):  # never grow the list iterated
            return self.s_vassign(d)
        return [f"{self.pad(d)}items.append(np.tanh({self.vexpr()}))"]

    def s_dict(self, d: int) -> list[str]:
        c = self.counter(99)
        if c and self.pick([0, 1, 2]) == 0:  # keyed by a loop counter, read back with .get
            return [f"{self.pad(d)}E[{c}] = E.get({c}, 0.0) + 0.2 * np.tanh({self.fexpr()})"]
        key = self.pick(['"a"', '"b"'])
        if self.pick([0, 1]):
            return [f"{self.pad(d)}D[{key}] += 0.2 * np.tanh({self.fexpr()})"]
        return [f"{self.pad(d)}D[{key}] = D[{key}] * 0.5 + {self.fexpr()}"]

    def s_helper(self, d: int) -> list[str]:
        p = self.pad(d)
        return [
            self.pick(
                [
                    f"{p}acc += 0.2 * first_big({self.vexpr()}, 0.3)",
                    f"{p}t = settle(t + {self.fexpr()}, {self.pick(['1', '2', 'n'])})",
                    f"{p}y = np.tanh(poly(y, {self.pick(['2', '3', 'n'])}))",
                    f"{p}z = squash(z + {self.vexpr()})",
                ]
            )
        ]

    def s_if(self, d: int) -> list[str]:
        p = self.pad(d)
        lines = [f"{p}if {self.fcond()}:"] + self.block(d + 1)
        if self.pick([0, 1]):
            lines += [f"{p}elif {self.fcond()}:"] + self.block(d + 1, 1, 2)
        if self.pick([0, 1]):
            lines += [f"{p}else:"] + self.block(d + 1, 1, 2)
        return lines

    def s_for(self, d: int) -> list[str]:
        c = f"i{d}"
        k = self.rng.randrange(9)
        float_vars: list[str] = []
        vec_vars: list[str] = []
        if k == 0:
            head, loop = f"for {c} in range(n):", _Loop(c, 2)
        elif k == 1:
            head, loop = f"for {c} in range(2, -1, -1):", _Loop(c, 2)
        elif k == 2:
            head, loop = f"for {c} in range(n - 1, -1, -2):", _Loop(c, 2)
        elif k == 3:
            head, loop = f"for {c} in reversed(range(1, n)):", _Loop(c, 2)
        elif k == 4:
            head, loop = f"for {c}, (a{d}, b{d}) in enumerate(zip(y, z)):", _Loop(c, 3)
            float_vars = [f"a{d}", f"b{d}"]
        elif k == 5:
            head, loop = f"for row{d} in W:", _Loop(None, 0)
            vec_vars = [f"row{d}"]
        elif k == 6:
            head, loop = f"for {c}, row{d} in enumerate(M):", _Loop(c, 2)
            vec_vars = [f"row{d}"]
        elif k == 7:
            pre = self.s_append(d)
            self.prog.kinds.add("for_items")
            return pre + self._loop_body(d, f"for it{d} in items:", _Loop(None, 0), [], [f"it{d}"])
        else:
            head, loop = f"for {c} in range(0, n + 1, 2):", _Loop(c, 3)
        return self._loop_body(d, head, loop, float_vars, vec_vars)

    def _loop_body(
        self, d: int, head: str, loop: _Loop, float_vars: list[str], vec_vars: list[str]
    ) -> list[str]:
        self.loops.append(loop)
        self.floats_read += float_vars
        self.vecs_read += vec_vars
        lines = [f"{self.pad(d)}{head}"] + self.block(d + 1)
        self.loops.pop()
        for name in float_vars:
            self.floats_read.remove(name)
        for name in vec_vars:
            self.vecs_read.remove(name)
        return lines

    def s_while(self, d: int) -> list[str]:
        p, c = self.pad(d), f"k{d}"
        cond = self.pick([f"{c} < n", f"{c} < n and acc < 1.5", f"{c} < 3 and t > -2.0"])
        lines = [f"{p}{c} = 0", f"{p}while {cond}:", f"{p}    {c} += 1"]
        self.loops.append(_Loop(c, 3))
        lines += self.block(d + 1)
        self.loops.pop()
        return lines

    def s_exit(self, d: int) -> list[str]:
        p = self.pad(d)
        return [f"{p}if {self.fcond()}:", f"{p}    {self.pick(['break', 'continue'])}"]

    def s_return(self, d: int) -> list[str]:
        p = self.pad(d)
        return [f"{p}if {self.fcond()}:", f"{p}    return {self.pick(RETURNS)}"]


RETURNS = (
    'acc + t + np.sum(y * z) + D["a"] + np.sum(np.tanh(W)) + np.sum(items[-1]) + np.sum(x)',
    "0.5 * acc + np.sum(y ** 2) + t * np.sum(W)",
)
PRELUDE = [
    "    y = x.copy()",
    "    z = np.zeros_like(x) + 0.1 * s",
    "    W = M.copy()",
    "    t = s * 0.5",
    "    acc = 0.0",
    "    items = [x * 0.5]",
    '    D = {"a": s * 1.0, "b": 0.0}',
    "    E = {}",
]


def generate(seed: int) -> Program:
    """The program of ``seed``."""
    gen = _Gen(random.Random(seed))
    body = gen.block(0, 2, 5)
    ret = RETURNS[0] + ' + D["b"] + np.sum(z) + sum(E.values())'
    gen.prog.source = "\n".join(["def f(x, M, s, n):", *PRELUDE, *body, f"    return {ret}", ""])
    return gen.prog


def load(program: Program, directory: Path, *, oracle: str = "") -> Any:
    """``f`` of ``program`` written to a module in ``directory`` (on autograd's NumPy
    with ``oracle="autograd"``)."""
    stem = f"prog5_{next(_counter)}{'_' + oracle if oracle else ''}"
    path = directory / f"{stem}.py"
    source = program.source
    if oracle:  # autograd's boxes have no ``.copy()``; the program writes into no array
        source = source.replace("x.copy()", "x * 1.0").replace("M.copy()", "M * 1.0")
    path.write_text(IMPORTS[oracle] + HELPERS + "\n\n" + source)
    spec = importlib.util.spec_from_file_location(stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


class Refused(Exception):
    """The program was refused with a located ``TransformError`` (its text)."""


def inputs(seed: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``(x, M, s, n)`` and a direction for ``(x, M, s)``."""
    rng = np.random.default_rng(seed)
    args = (
        rng.normal(size=4) * 0.8,
        rng.normal(size=(3, 4)) * 0.8,
        float(rng.normal()),
        2 + seed % 2,
    )
    along = (rng.normal(size=4), rng.normal(size=(3, 4)), float(rng.normal()))
    return args, along


def _copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _close(got: Any, want: Any, tol: float = 1e-4) -> bool:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return bool(np.all(np.abs(got - want) <= tol * (1.0 + np.abs(want))))


def _flat(parts: Any) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts])


def check(program: Program, seed: int, directory: Path, *, second: bool = True) -> str:
    """Compare the derivatives of ``program`` with finite differences and autograd.

    Returns ``"checked"`` or ``"skipped"`` (not finite, or a kink within the step), or
    raises: ``AssertionError`` for a wrong derivative, :class:`Refused` for a located
    refusal, anything else for an internal error.
    """
    import s2s_ad

    f = load(program, directory)
    args, along = inputs(seed)
    n = args[3]

    def call(x: Any, M: Any, s: float) -> float:
        return float(f(x.copy(), M.copy(), s, n))

    def moved(eps: float) -> float:
        return call(*(a + eps * v for a, v in zip(args[:3], along)))

    eps = 1e-6
    with np.errstate(all="ignore"):
        value = call(*args[:3])
        if not np.isfinite(value) or abs(value) > 1e5:
            return "skipped"
        ahead, behind = moved(eps), moved(-eps)
        want = (ahead - behind) / (2 * eps)
        if abs((ahead - value) - (value - behind)) / eps > 1e-3 * (1 + abs(want)):
            return "skipped"
        try:
            grads = s2s_ad.grad(f, (0, 1, 2))(*_copies(args))
            both, grads2 = s2s_ad.value_and_grad(f, ("x", "M", "s"))(*_copies(args))
            floats_only = functools.partial(f, n=n)  # n is an int: no tangent
            out, tangent = s2s_ad.jvp(floats_only, _copies(args)[:3], along)
            out2, pullback = s2s_ad.vjp(floats_only, *_copies(args)[:3])
            cot = pullback(1.0)
        except Exception as exc:  # noqa: BLE001 (sorted below)
            _located(exc)
        got = float(np.dot(_flat(grads), _flat(along)))
        assert _close(got, want), (program.source, "rev", got, want)
        assert _close(both, value, 1e-9), (program.source, "value_and_grad value", both, value)
        assert _close(_flat(grads2), _flat(grads), 1e-9), (program.source, "value_and_grad")
        assert _close(out, value, 1e-9), (program.source, "jvp value", out, value)
        assert _close(tangent, want), (program.source, "fwd", tangent, want)
        assert _close(out2, value, 1e-9), (program.source, "vjp value", out2, value)
        assert _close(_flat(cot), _flat(grads), 1e-9), (program.source, "vjp")
        if not program.writes:
            other = _autograd(program, args, directory)
            if other is not None:
                STATS["autograd"] = STATS.get("autograd", 0) + 1
                assert _close(_flat(grads), _flat(other), 1e-7), (program.source, "autograd")
        if second:
            _second(f, program, args)
    return "checked"


def _located(exc: Exception) -> None:
    """Re-raise ``exc`` as :class:`Refused` if it is a located refusal, else as is."""
    import s2s_ad

    if isinstance(exc, s2s_ad.TransformError) and exc.lineno > 0:
        raise Refused(str(exc)) from exc
    raise exc


def _autograd(program: Program, args: tuple[Any, ...], directory: Path) -> Any:
    """The gradient by autograd, ``None`` where autograd does not run the program."""
    import autograd

    g = load(program, directory, oracle="autograd")
    try:
        return autograd.grad(g, (0, 1, 2))(*_copies(args))
    except Exception:  # noqa: BLE001 (autograd has no rule or no boxed method)
        return None


def _second(f: Any, program: Program, args: tuple[Any, ...]) -> None:
    """``check_grads`` to order 2 in both modes, on copies (the program may write into
    its arguments)."""
    import s2s_ad

    def fresh(x: Any, M: Any, s: float, n: int) -> Any:
        return f(x.copy(), M.copy(), s, n)

    try:
        s2s_ad.check_grads(fresh, _copies(args), order=2, modes=("rev", "fwd"), rtol=1e-4)
    except AssertionError as exc:
        raise AssertionError((program.source, "check_grads order 2", str(exc))) from exc
    except Exception as exc:  # noqa: BLE001 (sorted by _located)
        _located(exc)


__all__ = ["Program", "Refused", "check", "generate", "inputs", "load"]
