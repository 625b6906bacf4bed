"""The transformer's stages as text, for ``python -m s2s_ad FILE.py:FUNC --stage S``.

Each stage is what one step of the pipeline hands to the next:

* ``normal``: the normal form (:mod:`s2s_ad.ir`): three-address statements, one
  subexpression per temporary, every statement under the user's line it comes from;
* ``activity``: the normal form with each assignment marked by what activity analysis
  decided about its target (``active``: varied by a parameter differentiated and useful to
  the output; ``varied``/``useful``: only one of the two; unmarked: neither);
* ``sweeps``: the generated function as the reverse (or forward) pass builds it, the
  optimizer off;
* ``optimized``: the generated function as it is compiled (the default output).
"""

from __future__ import annotations

from typing import Any

from . import ir, optimize
from .analysis import Activity, analyze
from .api import clear_cache, compile_adjoint, compile_forward, normalized

STAGES = ("normal", "activity", "sweeps", "optimized")


class _Printer:
    """Prints normal-form statements, a ``# Lnn:`` comment above each new user line."""

    def __init__(self, activity: Activity | None) -> None:
        self.activity = activity
        self.lines: list[str] = []
        self.last_line = -1

    def mark(self, names: list[str]) -> str:
        """The activity comment of an assignment to ``names``."""
        if self.activity is None:
            return ""
        kinds = []
        for name in names:
            varied, useful = name in self.activity.varied, name in self.activity.useful
            kind = "active" if varied and useful else "varied" if varied else ""
            kind = kind or ("useful" if useful else "")
            if kind:
                kinds.append(kind if len(names) == 1 else f"{name} {kind}")
        return f"  # {', '.join(kinds)}" if kinds else ""

    def emit(self, depth: int, stmt: ir.Stmt, text: str) -> None:
        pad = "    " * depth
        if stmt.line != self.last_line and stmt.src:
            self.lines.append(f"{pad}# L{stmt.line}: {stmt.src.strip()}")
            self.last_line = stmt.line
        self.lines.append(pad + text)

    def block(self, stmts: list[ir.Stmt], depth: int) -> None:
        if not stmts:
            self.lines.append("    " * depth + "pass")
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s: ir.Stmt, depth: int) -> None:
        if isinstance(s, ir.Assign):
            self.emit(depth, s, f"{s.target} = {ir.expr_source(s.value)}{self.mark([s.target])}")
        elif isinstance(s, ir.Unpack):
            self.emit(depth, s, f"{', '.join(s.targets)} = {s.value}{self.mark(s.targets)}")
        elif isinstance(s, ir.SetItem):
            self.emit(depth, s, f"{s.obj}[{s.index.code}] = {s.value}{self.mark([s.obj])}")
        elif isinstance(s, ir.Append):
            self.emit(depth, s, f"{s.obj}.append({s.value}){self.mark([s.obj])}")
        elif isinstance(s, ir.ListPop):
            self.emit(depth, s, f"{s.target} = {s.obj}.pop(){self.mark([s.target])}")
        elif isinstance(s, ir.ExprStmt):
            self.emit(depth, s, ir.expr_source(s.value))
        elif isinstance(s, ir.If):
            self.emit(depth, s, f"if {s.test}:")
            self.block(s.body, depth + 1)
            if s.orelse:
                self.lines.append("    " * depth + "else:")
                self.block(s.orelse, depth + 1)
        elif isinstance(s, ir.For):
            over = str(s.iterable)
            if s.range_args:
                over = f"range({', '.join(map(str, s.range_args))})"
            self.emit(depth, s, f"for {s.target} in {over}:")
            self.block(s.body, depth + 1)
            self.orelse(s.orelse, depth)
        elif isinstance(s, ir.While):
            self.emit(depth, s, "while True:")
            self.block(s.test_body, depth + 1)
            self.lines.append("    " * (depth + 1) + f"if not {s.test}:")
            self.lines.append("    " * (depth + 2) + "break")
            self.block(s.body, depth + 1)
            self.orelse(s.orelse, depth)
        elif isinstance(s, ir.Break):
            self.emit(depth, s, "break")
        elif isinstance(s, ir.Continue):
            self.emit(depth, s, "continue")
        elif isinstance(s, ir.Return):
            self.emit(depth, s, f"return {s.value}")
        else:
            self.emit(depth, s, "pass")

    def orelse(self, stmts: list[ir.Stmt], depth: int) -> None:
        if stmts:
            self.lines.append("    " * depth + "else:")
            self.block(stmts, depth + 1)


def normal_form(fn: ir.Function, activity: Activity | None = None) -> str:
    """The normal form of a function as Python source (``activity`` marks assignments)."""
    printer = _Printer(activity)
    params = [f"{p}={fn.param_defaults[p]}" if p in fn.param_defaults else p for p in fn.params]
    name = fn.name if fn.name.isidentifier() else "_lambda"
    printer.lines.append(f"def {name}({', '.join(params)}):")
    printer.block(fn.body, 1)
    return "\n".join(printer.lines) + "\n"


def stage(func: Any, stage_name: str, wrt: tuple[str, ...], mode: str = "reverse") -> str:
    """The text of one stage of differentiating ``func`` with respect to ``wrt``.

    Raises:
        ValueError: For an unknown stage.
        TransformError: When the function is refused.
    """
    if stage_name not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage_name!r}")
    func = getattr(func, "__func__", func)  # a bound method: its function (``self`` first)
    if stage_name in ("normal", "activity"):
        fn = normalized(func)
        if stage_name == "normal":
            return normal_form(fn)
        returned = fn.body[-1]
        output = str(returned.value) if isinstance(returned, ir.Return) else ""
        return normal_form(fn, analyze(fn, list(wrt), output))
    enabled = optimize.ENABLED
    optimize.ENABLED = stage_name == "optimized"
    clear_cache()  # a program cached with the other setting must not answer
    try:
        if mode == "forward":
            return compile_forward(func, wrt).source_of("jvp")
        return compile_adjoint(func, wrt).source_of("grad")
    finally:
        optimize.ENABLED = enabled
        clear_cache()
