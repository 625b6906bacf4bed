"""Lower a parsed function into the three-address normal form of :mod:`s2s_ad.ir`.

The normal form guarantees:

* every operation's operands are atoms (variable names or constants); nested
  expressions get fresh temporaries ``_t1, _t2, ...``;
* conditional expressions become ``If`` statements, augmented assignments plain ones,
  tuple assignments ``Unpack`` (parallel assignment is preserved);
* callees are resolved to live objects where the name is a global, closure or builtin;
  method calls on local values keep their receiver;
* a local lambda bound to a name is inlined where it is called;
* there is exactly one ``Return``, the last statement: earlier returns assign ``_ret``
  and set a flag that guards the statements after them;
* the constructs we cannot differentiate raise :class:`~s2s_ad.errors.TransformError`
  pointing at the user's line.

The lowering is split by job, one module each (imported only downward, all in the
normalize layer):

* :mod:`norm_queries`, :mod:`norm_scan`: read-only questions and whole-function scans
  of the user's libcst tree (names, locals, copies and views, bindings);
* :mod:`norm_base`: the state of one lowering (names, temporaries, emitted statements,
  the user's line) and the resolution of non-local names;
* mixins on that base, composed here into :class:`Normalizer`: :mod:`norm_stmts`
  (statements, assignments, refusals, in-place write checks), :mod:`norm_loops`
  (``if``/``for``/``while``), :mod:`norm_exprs` (three-address expressions),
  :mod:`norm_calls` (calls, star calls, frozen SciPy distributions), :mod:`norm_init`
  (classes built in the function, their ``__init__`` inlined), :mod:`norm_super`
  (``super().method(...)`` with ``self`` passed), :mod:`norm_comps`
  (comprehensions, ``map``/``filter``/``reduce``/``dict`` as loops), :mod:`norm_inline`
  (local functions, lambdas and factories inlined);
* :mod:`norm_exits`: IR rewrites after lowering (single exit, reversible jumps).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from . import ir
from .errors import TransformError
from .norm_base import NormalizerBase, still_resolves
from .norm_calls import CallLowering
from .norm_complex import complex_values, lift_operands
from .norm_comps import ContainerLowering
from .norm_del import Deletions
from .norm_exits import bound_alias_checks, reversible_jumps, single_exit
from .norm_exprs import ExpressionLowering
from .norm_init import ClassConstruction
from .norm_inline import InnerFunctions
from .norm_loops import ControlFlowLowering
from .norm_repeat import ListRepetition
from .norm_split import split_reused_names, user_names
from .norm_stmts import StatementLowering
from .norm_super import SuperCalls
from .norm_try import TryLowering
from .norm_views import ViewWrites
from .norm_walrus import NamedExpressions
from .source import ParsedFunction, user_origin

__all__ = ["Normalizer", "normalize", "normalize_resolving", "still_resolves"]


class Normalizer(
    ViewWrites,
    StatementLowering,
    TryLowering,
    ControlFlowLowering,
    ExpressionLowering,
    ClassConstruction,
    SuperCalls,
    CallLowering,
    ContainerLowering,
    InnerFunctions,
    NamedExpressions,
    Deletions,
    ListRepetition,
    NormalizerBase,
):
    """Lowers one parsed function. Use :func:`normalize`."""

    def _complex_values(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        """Follow the complex values np.fft makes (:mod:`norm_complex`)."""
        generated = self.generated is not None or self.p.filename.startswith("<s2s_ad")
        complex_values(body, generated, _refusal(self.p))
        return lift_operands(body, self.fresh)

    def run(self) -> ir.Function:
        """Lower the whole function, then finish the normal form (:mod:`norm_exits`)."""
        node = self.p.node
        if isinstance(node, cst.Lambda):
            self.src = self.p.code(node)
            self.line = self.p.position(node)[0]
            ret = self.result(node.body)
            self.emit(ir.Return(self.line, self.src, ret))
            body = self.out
        else:
            if node.asynchronous is not None:
                raise self.error("async function", node)
            if self.items is not None:
                # a generator runs to its end at once: the items it yields, as a list
                self.emit(ir.Assign(self.line, self.src, self.items, ir.Build("list", [])))
            self.block(node.body.body)
            if self.items is not None:
                self.emit(ir.Return(self.line, self.src, ir.Var(self.items)))
            body = single_exit(self.out, self)
            body = reversible_jumps(body, self)
            body = bound_alias_checks(body, set(self.params))
        body = self._complex_values(body)
        defaults = {}
        if isinstance(node, cst.FunctionDef):
            for param in (*node.params.params, *node.params.kwonly_params):
                if param.default is not None:
                    defaults[param.name.value] = self.p.code(param.default)
        return ir.Function(
            self.p.name,
            self.params,
            body,
            self.reserved,
            self.p.filename,
            self.p.first_line,
            defaults,
            self.temps - self.shared,
            self.temps,
            dict(self.imports),
            self.user_names,
        )


def _refusal(parsed: ParsedFunction) -> Any:
    """``error(construct, stmt, hint)`` for :func:`complex_values`: a refusal at the
    user's line a statement of the normal form comes from."""

    path = parsed.filename
    if path.startswith("<s2s_ad"):  # generated code: its comments name the user's lines
        path = user_origin(path, 0).rsplit(":", 1)[0]

    def error(construct: str, stmt: ir.Stmt, hint: str) -> Exception:
        return TransformError(construct, path, stmt.line, hint=hint, line_text=stmt.src)

    return error


def _normalizer(parsed: ParsedFunction) -> Normalizer:
    """The lowering of ``parsed`` with its names reused for unrelated values renamed
    apart first (:mod:`norm_split`)."""
    lowered, origin = split_reused_names(parsed)
    norm = Normalizer(lowered)
    norm.origin.update(origin)
    norm.user_names = user_names(origin)
    return norm


def _lowered(norm: Normalizer) -> ir.Function:
    """``norm.run()``, a refusal naming the user's variables, not their split names."""
    try:
        return norm.run()
    except TransformError as error:
        raise error.with_names(norm.user_names) from None


def normalize(parsed: ParsedFunction) -> ir.Function:
    """Lower a parsed function to the normal form."""
    return _lowered(_normalizer(parsed))


def normalize_resolving(parsed: ParsedFunction) -> tuple[ir.Function, dict[tuple[str, ...], Any]]:
    """The normal form and what the non-local names it read resolved to while lowering
    (the callees it holds, the builtins it recognised): the normal form is valid for a
    function in whose scope they still do (see :func:`still_resolves`)."""
    norm = _normalizer(parsed)
    return _lowered(norm), norm.resolved
