"""Assemble the sweeps into Python source, compile it once, bind it per function object.

The text a user sees (``source(df)``, ``inspect.getsource``, tracebacks) is registered in
``linecache`` under a ``<s2s_ad:...>`` file name. What is compiled is the same text
nested in a factory whose parameters are the free variables of the generated code (the
helpers ``_ad``/``np``, callee adjoints, and the user's closure variables), so that
the generated functions read the user's live globals and closure cells directly.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import linecache
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import fold_early, optimize, runtime
from .codegen import GENERATED_CODES, Builder, render
from .reverse import Sweeps
from .rules import containers as _containers
from .rules import defaults as _defaults
from .rules import fft as _fft
from .rules import orderings as _orderings
from .rules import vjps as _vjps

_serial = itertools.count(1)


def _helpers() -> types.SimpleNamespace:
    names = {k: v for k, v in vars(runtime).items() if not k.startswith("_") and callable(v)}
    for module in (_vjps, _containers, _orderings, _defaults, _fft):
        names.update(
            {k: v for k, v in vars(module).items() if not k.startswith("_") and callable(v)}
        )
    # the marker of an entry a dict does not hold (``old_item``); ``del d[key]`` writes it
    names["DELETED"] = runtime.DELETED
    return types.SimpleNamespace(**names)


AD = _helpers()


class Compiled:
    """Generated code for one (function, wrt) pair, not yet bound to a function object.

    Attributes:
        names: ``{'grad': ..., 'fwd': ..., 'bwd': ...}`` generated function names.
        bindings: Helper free variable name -> object.
        params: The primal's parameters.
        tangent_params: Parameter -> its tangent's keyword (forward mode).
        pure: ``"one"``/``"many"``/``"vjp"`` for a gradient differentiated again.
    """

    def __init__(
        self,
        program: Program,
        names: dict[str, str],
        bindings: dict[str, Any],
        params: list[str],
        tangent_params: dict[str, str] | None = None,
        pure: str = "",
    ) -> None:
        self.program = program
        self.names, self.bindings, self.params = names, bindings, params
        self.tangent_params, self.pure = tangent_params, pure
        self.pinned: dict[str, Any] = {}  # global user callees of pure code (api._pins_hold)

    @property
    def text(self) -> str:
        """The display source (all generated functions)."""
        self.program.complete()
        return self.program.display

    @property
    def codes(self) -> dict[str, types.CodeType]:
        """Generated function name -> code object (all generated functions)."""
        self.program.complete()
        return self.program.codes

    def source_of(self, kind: str) -> str:
        """The display source of one generated function (the gradient's alone does not
        optimize and compile the others)."""
        name = self.names[kind]
        made = _body(self.program.texts)
        if f"def {name}(" not in made:
            self.program.complete()
            made = _body(self.program.texts)
        lines = made.splitlines(keepends=True)
        start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {name}("))
        end = start + 1
        while end < len(lines) and (lines[end].startswith((" ", "\n")) or not lines[end].strip()):
            end += 1
        while end > start and not lines[end - 1].strip():
            end -= 1
        return "".join(lines[start:end])

    def bind(self, func: Any) -> dict[str, types.FunctionType]:
        """Generated functions bound to ``func``'s globals and closure cells, each bound
        (and, for the sweeps as separate functions, optimized and compiled) when first
        looked up: ``grad`` alone never pays for ``fwd`` and ``bwd``."""
        return _Bound(self, func)

    def bind_one(self, kind: str, func: Any) -> types.FunctionType:
        """The generated function ``kind`` bound to ``func``'s globals and closure cells."""
        name = self.names[kind]
        code = self.program.code(name)
        closure = {}
        if func.__closure__:
            closure = dict(zip(func.__code__.co_freevars, func.__closure__))
        cells = []
        for var in code.co_freevars:
            if var in self.bindings:
                cells.append(types.CellType(self.bindings[var]))
            else:
                cells.append(closure[var])
        own_signature = kind in ("fwd", "jvp") or (kind == "grad" and bool(self.pure))
        defaults = func.__defaults__ if own_signature else None
        fn = types.FunctionType(code, func.__globals__, name, defaults, tuple(cells))
        kwdefaults = dict(func.__kwdefaults__ or {}) if own_signature else {}
        if kind == "jvp":
            kwdefaults.update({d: 0.0 for d in (self.tangent_params or {}).values()})
        if kwdefaults:
            fn.__kwdefaults__ = kwdefaults
        fn.__qualname__ = name
        return fn


class _Bound(dict):  # type: ignore[type-arg]
    """``kind -> function`` for one function object, binding each kind when first looked up."""

    def __init__(self, compiled: Compiled, func: Any) -> None:
        super().__init__()
        self.compiled, self.func = compiled, func

    def __missing__(self, kind: str) -> types.FunctionType:
        fn = self[kind] = self.compiled.bind_one(kind, self.func)
        return fn


@dataclass
class Program:
    """The optimized and compiled text of one set of generated functions.

    The first function (the gradient, both sweeps in one) is optimized and compiled at
    once; the others (the sweeps as separate functions, which only calls from other
    generated code use) when first asked for, with the tape decisions the first one made
    (``facts``). Programs are shared by content (see ``program``): variants whose sweeps
    come out as the same text reuse one.
    """

    header: str
    raw: tuple[str, ...]
    tape: str
    free: tuple[str, ...]
    filename: str
    facts: optimize.Facts
    texts: list[str]
    codes: dict[str, types.CodeType]

    @property
    def display(self) -> str:
        """What ``linecache`` holds for ``filename``: the header, then the functions."""
        return self.header + "\n" + _body(self.texts)

    def complete(self) -> None:
        """Optimize and compile the functions not yet compiled."""
        if len(self.texts) == len(self.raw):
            return
        self.texts += [
            optimize.optimize_function(text, self.tape, self.facts)
            for text in self.raw[len(self.texts) :]
        ]
        codes = _compile(_body(self.texts), self.display, self.filename, self.free)
        for name, code in codes.items():
            self.codes.setdefault(name, code)  # keep the code objects already bound

    def code(self, name: str) -> types.CodeType:
        if name not in self.codes:
            self.complete()
        return self.codes[name]


def _body(texts: list[str]) -> str:
    return "\n\n\n".join(texts) + "\n"


#: Programs by content, the most recent last (see ``program``).
PROGRAMS: dict[tuple[Any, ...], Program] = {}
_MAX_PROGRAMS = 256


def program(
    label: str,
    header: str,
    raw: tuple[str, ...],
    tape: str,
    free: tuple[str, ...],
    clean: bool,
    per_loop: bool = True,
    built: Callable[[], tuple[ast.FunctionDef, dict[int, str]]] | None = None,
) -> Program:
    """The program for generated functions ``raw``, made and compiled once per content:
    a new variant whose functions come out as the same text costs no optimization and no
    compilation. What comes out depends only on the key, so a shared program is never
    stale.

    Args:
        label: Names the file (``<s2s_ad:label:n>``).
        header: The comment line above the functions.
        raw: The functions' text; with ``clean``, the first holds both sweeps and decides
            which tape traffic is dead for the others.
        tape: The tape's name.
        free: The free variables of the functions (the factory's parameters).
        clean: Run the optimizer (``optimize.py``) over the functions.
        per_loop: Records of loops may go into per-loop lists (not in a gradient that is
            differentiated again: see :mod:`trip_records`).
        built: Makes the first function's statements from the sweeps (the optimizer
            then does not parse its text); called only when the program is not known.
    """
    key = (label, header, raw, tape, free, clean and optimize.ENABLED, per_loop)
    hit = PROGRAMS.pop(key, None)
    if hit is None:
        facts = optimize.Facts(per_loop=per_loop)
        first = raw[0]
        if clean:
            first = optimize.optimize_function(first, tape, facts, decide_tape=True, built=built)
        filename = f"<s2s_ad:{label}:{next(_serial)}>"
        hit = Program(header, raw, tape, free, filename, facts, [first], {})
        hit.codes.update(_compile(_body(hit.texts), hit.display, filename, free))
        while len(PROGRAMS) >= _MAX_PROGRAMS:
            del PROGRAMS[next(iter(PROGRAMS))]
    PROGRAMS[key] = hit  # the most recently used last
    return hit


def _bindings(made: dict[str, Any], ad: str) -> dict[str, Any]:
    """The generated code's own free variables: helpers, callee adjoints, rules."""
    bindings = dict(made)
    bindings.setdefault(ad, AD)
    bindings.setdefault("np", np)
    return bindings


def _free(bindings: dict[str, Any], func: Any) -> tuple[str, ...]:
    """The generated code's free variables: its bindings, then ``func``'s closure names."""
    free = list(bindings)
    if func.__closure__:
        free += [v for v in func.__code__.co_freevars if v not in bindings]
    return tuple(free)


def _compile(
    body: str, display: str, filename: str, free: tuple[str, ...]
) -> dict[str, types.CodeType]:
    """Compile generated functions inside a factory whose parameters are their free
    variables, register the display text in linecache, and return the code objects."""
    factory = f"def _s2s_factory({', '.join(free)}):\n" + textwrap.indent(body, "    ")
    factory += "    return None\n"
    code = compile(factory, filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    codes = {c.co_name: c for c in factory_code.co_consts if isinstance(c, types.CodeType)}
    GENERATED_CODES.update(codes.values())
    linecache.cache[filename] = (len(display), None, display.splitlines(keepends=True), filename)
    return codes


def _signature(func: Any) -> str:
    """The parameter list of ``func`` without defaults or annotations (``*args`` and
    ``**kwargs`` kept)."""
    code = func.__code__
    n, k = code.co_argcount, code.co_kwonlyargcount
    names = list(code.co_varnames[: n + k + 2])
    parts = names[:n]
    rest = n + k
    if code.co_flags & inspect.CO_VARARGS:
        parts.append(f"*{names[rest]}")
        rest += 1
    elif k:
        parts.append("*")
    parts += names[n : n + k]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        parts.append(f"**{names[rest]}")
    return ", ".join(parts)


def emit(
    sw: Sweeps,
    func: Any,
    name: str,
    params: list[str],
    ad: str,
    tape: str,
    returned: str,
    origin: str,
    pure: str = "",
) -> Compiled:
    """Build the display text and compile it.

    Args:
        sw: The reverse pass result.
        func: The primal function (for its signature and closure names).
        name: The primal's name (generated names derive from it).
        params: The primal's parameters.
        ad: The name the helpers go by in the code (``_ad``).
        tape: The tape's name.
        returned: The primal's return value source (the value returned to callers).
        origin: ``file:line`` of the primal, for the header comment.
        pure: ``"one"``/``"many"`` for the gradient that is differentiated again: it
            returns the gradient(s) only (no value) and updates no adjoint in place.
    """
    base = name if name.isidentifier() else "lambda"
    grad_name, fwd_name, bwd_name = f"{base}_grad", f"{base}_fwd", f"{base}_bwd"
    head: list[str] = [f"    {p} = {ad}.copy({p})" for p in sw.copies]
    head += [f"    {v} = None" for v in sw.none_init]
    if sw.uses_tape:
        head.append(f"    {tape} = []")
    sites = optimize.ENABLED
    if optimize.ENABLED and fold_early.ENABLED and not sw.folded:
        # what the optimizer would fold of the forward sweep, folded before it is written
        kept = {sw.output, *sw.saved, *sw.none_init, *sw.none_saved, *sw.grads}
        sw.fwd = fold_early.fold_forward(sw.fwd, sw.bwd, kept, tape, sw.pushed)
        sw.folded = True
    fwd = render(sw.fwd, sw.pushed, 1, tape, sites=sites)
    bwd = render(sw.bwd, sw.pushed, 1, tape, sites=sites)
    grads = ", ".join(sw.grads) + ("," if len(sw.grads) == 1 else "")
    saved = ([tape] if sw.uses_tape else []) + sw.saved
    saved_tuple = ", ".join(saved) + ("," if len(saved) == 1 else "")

    # the pure gradient is differentiated again like a user function: same signature
    # (a pullback, ``pure="vjp"``, takes the output's cotangent first)
    grad_params = _signature(func) if pure else ", ".join(params)
    if pure == "vjp":
        grad_params = ", ".join(p for p in (sw.seed_name, grad_params) if p)
    grad_fn = [f"def {grad_name}({grad_params}):", *head]
    if fwd:
        grad_fn += ["    # forward sweep", *fwd]
    value = returned
    middle: list[str] = []
    if returned in sw.restored:
        # the backward sweep restores earlier values of this variable: keep the result
        value = "_value"
        middle.append(f"    {value} = {returned}")
    middle.append("    # backward sweep")
    if pure != "vjp":
        middle.append(f"    {sw.seed_name} = {ad}.seed({sw.output})")
    end = (
        f"    return {value}, ({grads})"
        if not pure
        else f"    return {sw.grads[0] if pure == 'one' else '(' + grads + ')'}"
    )
    grad_fn += [*middle, *bwd, end]
    fwd_fn = [
        f"def {fwd_name}({_signature(func)}):",
        *head,
        *(f"    {v} = None" for v in sw.none_saved),
        *fwd,
        f"    return {returned}, ({saved_tuple})",
    ]
    bwd_fn = [f"def {bwd_name}(_saved, {sw.seed_name}):"]
    if saved:
        bwd_fn.append(f"    {saved_tuple} = _saved")
    bwd_fn += [*bwd, f"    return ({grads})"]
    raw = ("\n".join(grad_fn), "\n".join(fwd_fn), "\n".join(bwd_fn))
    header = f"# generated by s2s_ad from {origin}"
    bindings = _bindings(sw.bindings, ad)

    def built() -> tuple[ast.FunctionDef, dict[int, str]]:
        """``grad_fn`` as statements, built from the sweeps' items (for the optimizer)."""
        b = Builder(grad_fn[0])
        b.lines(head)
        if fwd:
            b.lines(["    # forward sweep"])
            b.items(sw.fwd, sw.pushed, tape, sites)
        b.lines(middle)
        b.items(sw.bwd, sw.pushed, tape, sites)
        b.lines([end])
        return b.done()

    made = program(base, header, raw, tape, _free(bindings, func), True, not pure, built)
    names = {"grad": grad_name, "fwd": fwd_name, "bwd": bwd_name}
    return Compiled(made, names, bindings, params, pure=pure)


def emit_forward(
    tan: Any, func: Any, name: str, params: list[str], ad: str, origin: str
) -> Compiled:
    """Build and compile the tangent program ``<name>_jvp(<params>, *, <p>_dot=0.0)``."""
    base = name if name.isidentifier() else "lambda"
    jvp_name = f"{base}_jvp"
    parts = _signature(func).split(", ") if _signature(func) else []
    starstar = [parts.pop()] if parts and parts[-1].startswith("**") else []
    dots = [f"{d}=0.0" for d in tan.tangent_params.values()]
    if dots and not any(p.startswith("*") for p in parts):
        parts.append("*")
    signature = ", ".join([*parts, *dots, *starstar])
    body = render(tan.body, set(), 1, "_tape")
    lines = [f"def {jvp_name}({signature}):", *body, f"    return {tan.output}, {tan.output_dot}"]
    header = f"# generated by s2s_ad (forward mode) from {origin}"
    bindings = _bindings(tan.bindings, ad)
    # no per-loop record lists: a tangent program of a gradient pairs each tape push with
    # the push of its tangent, which such a list would separate
    free = _free(bindings, func)
    made = program(f"{base}_jvp", header, ("\n".join(lines),), "_tape", free, True, False)
    return Compiled(made, {"jvp": jvp_name}, bindings, params, dict(tan.tangent_params))
