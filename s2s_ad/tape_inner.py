"""An inner ``GradientTape`` inside a function that an outer tape differentiates.

A gradient penalty is often written as a helper (a method of a ``keras.Model`` or a
plain function) that opens its own tape::

    def gradient_penalty(critic, x):
        with tf.GradientTape() as t:
            t.watch(x)
            score = critic(x)
        g = t.gradient(score, x)
        return tf.reduce_mean((tf.norm(g, axis=1) - 1.0) ** 2)

and is called inside an outer tape's block. The block runs natively (the inner tape is a
real tape there); when the outer tape differentiates the helper, the transformer reads
a rewritten copy of it (:func:`rewritten`, from :func:`~s2s_ad.targets.primal`):

* the ``with`` statement becomes a call that computes the values the block assigns and
  the rest of the helper reads (``score = _s2s_values_1(critic, x)``);
* ``t.gradient(score, x)`` becomes a call of the gradient of the block's statements that
  lead to ``score``, as a function of the names the block reads
  (``elementwise_grad``: TensorFlow sums a target that is not a scalar), and
  ``t.gradient(score, critic.trainable_variables)`` a call of a
  :class:`~s2s_ad.tape_nested.VariablesGradient` for Variables reached through objects.

The outer tape differentiates those calls again (reverse over reverse). They run
through this module, so the draws made inside them (a dropout layer of the critic) are
*computed again* (see :mod:`.replay`): each gets back the value its layer drew in the
inner block. The rewritten source keeps the helper's lines, so errors and the comments
of the generated code name the user's lines.
"""

from __future__ import annotations

import itertools
import textwrap
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import libcst as cst
import numpy as np

from .errors import TransformError
from .tape_block import _inputs, names

_serial = itertools.count(1)

# original code object -> how to build the rewritten function (None: nothing to rewrite)
_PLANS: dict[types.CodeType, _Rewrite | None] = {}
# the rewritten function of each function object
_MADE: weakref.WeakKeyDictionary[Any, types.FunctionType] = weakref.WeakKeyDictionary()
#: rewritten code object -> (its source lines, first line): what ``parse_function`` reads
SOURCES: dict[types.CodeType, tuple[list[str], int]] = {}


def rewritten(func: types.FunctionType, nested: bool = False) -> types.FunctionType:
    """``func`` with its inner tapes' blocks and gradient calls made into calls the
    transformer can differentiate (``func`` itself when it opens no tape); ``nested``:
    ``func`` is an inner tape's block, whose own tapes' gradients are plain gradient
    functions (differentiated twice more, as pure code)."""
    made = _MADE.get(func)
    if made is not None:
        return made
    code = func.__code__
    if code not in _PLANS:
        _PLANS[code] = _plan(func)
    plan = _PLANS[code]
    if plan is None:
        return func
    made = plan.build(func, nested)
    _MADE[func] = made
    return made


class InnerCall:
    """A function of an inner block's statements called by a rewritten helper: runs it
    (and, in an outer tape's gradient, its pullback) through this module, where the
    draws it makes are the inner block's, computed again."""

    _s2s_reads_only = True  # see analysis.call_writes

    def __init__(
        self, fn: Any, label: str, nested: bool = False, where: tuple[str, int] = ("", 0)
    ) -> None:
        self.fn = fn
        self.label = label
        self.nested = nested  # the block opens a tape itself: a third derivative here
        self.where = where  # the helper's file and first line
        self.__name__ = self.__qualname__ = "inner_tape_block"

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def _s2s_pullback(
        self, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
        from .dispatch import call_with_pullback

        value, pullback = call_with_pullback(self.fn, labels, args, kwargs)

        def inner_pullback(cotangent: Any) -> tuple[Any, ...]:
            if not self.nested:
                return tuple(pullback(cotangent))
            try:
                return tuple(pullback(cotangent))
            except TransformError:
                raise
            except (ValueError, TypeError, IndexError, AttributeError) as error:
                # the block ran natively before: what fails now is a third derivative
                raise TransformError(
                    f"a third derivative {self.label} (an outer tape over a helper whose "
                    "inner tape's block opens another tape) through code whose third "
                    f"derivative is not modelled ({type(error).__name__}: {error})",
                    *self.where,
                    hint="third derivatives run through tf.Module layers written with tf "
                    "ops; Keras layers are differentiated twice at most",
                ) from error

        return value, inner_pullback


class InnerVariablesGradient:
    """``t.gradient(target, sources)`` of a helper's inner tape, for Variables reached
    through objects (``model.trainable_variables``): called with the sources first,
    then the inner block's inputs."""

    _s2s_reads_only = True  # see analysis.call_writes

    def __init__(self, fn: Any, label: str) -> None:
        self.fn = fn  # returns the sum of the target
        self.label = label
        self.__name__ = self.__qualname__ = "inner_gradient"

    def _gradient(self, sources: Any) -> tuple[Any, list[Any], list[int]]:
        """The inner gradient for the Variables among ``sources`` (the others, unwatched
        constants, get ``None`` as in TensorFlow): the ``VariablesGradient`` (``None``
        when there is no Variable), the sources as a list and the Variables' places."""
        from .tape_nested import VariablesGradient
        from .variable import Variable

        found = list(sources) if isinstance(sources, (list, tuple)) else [sources]
        if any(isinstance(v, (list, tuple, dict)) for v in found):
            raise TransformError(
                f"the inner tape's gradient {self.label}: nested sources, in a function "
                "the outer tape differentiates (give one Variable, or a flat list of them)"
            )
        at = [k for k, v in enumerate(found) if isinstance(v, Variable)]
        if not at:
            return None, found, at
        variables = [found[k] for k in at]
        seed = np.float64(1.0)  # the function returns the sum of the target
        gradient = VariablesGradient(self.fn, (), variables, [None] * len(at), seed, self.label)
        return gradient, found, at

    @staticmethod
    def _placed(sources: Any, found: list[Any], at: list[int], values: Any) -> Any:
        out: list[Any] = [None] * len(found)
        for k, value in zip(at, values or ()):
            out[k] = value
        if isinstance(sources, (list, tuple)):
            return type(sources)(out)
        return out[0]

    def __call__(self, sources: Any, *args: Any) -> Any:
        gradient, found, at = self._gradient(sources)
        values = gradient(*args) if gradient is not None else None
        return self._placed(sources, found, at, values)

    def _s2s_pullback(
        self, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
        gradient, found, at = self._gradient(args[0])
        if gradient is None:
            value = self._placed(args[0], found, at, None)
            return value, lambda cotangent: tuple(0.0 for _ in labels)
        kept = tuple(label - 1 for label in labels if isinstance(label, int) and label > 0)
        values, pullback = gradient._s2s_pullback(kept, args[1:], kwargs)
        many = isinstance(args[0], (list, tuple))

        def by_label(cotangent: Any) -> tuple[Any, ...]:
            parts = list(cotangent) if many else [cotangent]
            got = dict(zip(kept, pullback([parts[k] for k in at])))
            return tuple(
                got.get(label - 1, 0.0) if isinstance(label, int) else 0.0 for label in labels
            )

        return self._placed(args[0], found, at, values), by_label


class InnerJacobian:
    """``t.jacobian(y, x)`` (``batch_jacobian``) of a helper's inner tape: the rows are
    vector-Jacobian products of ``y`` with one-hot cotangents, each a gradient the outer
    tape differentiates again (one pullback per row)."""

    _s2s_reads_only = True  # see analysis.call_writes

    def __init__(self, vjp: Any, value: Any, label: str, batch: bool, at: int) -> None:
        self.vjp = vjp  # (cotangent, *inputs) -> the gradient of sum(y * cotangent)
        self.value = value  # (*inputs) -> y
        self.label = label
        self.batch = batch
        self.at = at  # the source's place among the inputs
        self.__name__ = self.__qualname__ = "inner_jacobian"

    def _cotangents(self, args: tuple[Any, ...]) -> tuple[tuple[int, ...], list[Any]]:
        """The shape of ``y`` and the one-hot cotangents of its rows (for a batch
        Jacobian, one per entry of an example, the same for every example)."""
        shape = np.shape(self.value(*args))
        if self.batch and not shape:
            raise TransformError(f"batch_jacobian() of a scalar target {self.label}")
        inner = shape[1:] if self.batch else shape
        count = int(np.prod(inner, dtype=int))
        rows = []
        for k in range(count):
            one = np.zeros(count)
            one[k] = 1.0
            rows.append(np.broadcast_to(one.reshape(inner), shape))
        return shape, rows

    def _assembled(self, shape: tuple[int, ...], parts: list[Any], source: Any) -> Any:
        """The Jacobian from its rows: ``y.shape + x.shape`` (batch: ``(b,) + y.shape[1:]
        + x.shape[1:]``), in the source's dtype as TensorFlow gives."""
        dtype = getattr(np.asarray(source), "dtype", np.float64)
        dtype = dtype if np.issubdtype(dtype, np.floating) else np.float64
        xs = np.shape(source)
        if not parts:
            inner = shape[1:] if self.batch else shape
            full = (shape[:1] + inner + xs[1:]) if self.batch else (inner + xs)
            return np.zeros(full, dtype)
        stacked = np.stack([np.asarray(p, dtype=float) for p in parts])
        if self.batch:  # (rows, b, x...) -> (b, y[1:]..., x[1:]...)
            moved = np.moveaxis(stacked, 1, 0)
            return moved.reshape(shape[:1] + shape[1:] + xs[1:]).astype(dtype)
        return stacked.reshape(shape + xs).astype(dtype)

    def __call__(self, *args: Any) -> Any:
        shape, rows = self._cotangents(args)
        rows_made = [self.vjp(row, *args) for row in rows]
        return self._assembled(shape, rows_made, args[self.at])

    def _s2s_pullback(
        self, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
        from .dispatch import call_with_pullback

        shape, rows = self._cotangents(args)
        shifted = tuple(label + 1 if isinstance(label, int) else label for label in labels)
        values, pullbacks = [], []
        for row in rows:
            value, pullback = call_with_pullback(self.vjp, shifted, (row, *args), kwargs)
            values.append(value)
            pullbacks.append(pullback)
        source = args[self.at]
        xs = np.shape(source)

        def jacobian_pullback(cotangent: Any) -> tuple[Any, ...]:
            c = np.asarray(cotangent, dtype=float)
            if self.batch:  # (b, y[1:]..., x[1:]...) -> (rows, b, x[1:]...)
                c = np.moveaxis(c.reshape((shape[0], len(rows)) + xs[1:]), 1, 0)
            else:
                c = c.reshape((len(rows),) + xs)
            total: list[Any] = [0.0] * len(labels)
            for k, pullback in enumerate(pullbacks):
                for i, part in enumerate(pullback(c[k])):
                    total[i] = total[i] + part
            return tuple(total)

        return self._assembled(shape, values, source), jacobian_pullback


# --- the rewrite -------------------------------------------------------------------------


@dataclass
class _Rewrite:
    """The rewritten helper, compiled once per code object."""

    code: types.CodeType  # the rewritten function's code
    # (alias, block function code, kind, source name): see _Rewriter.blocks
    blocks: list[tuple[str, types.CodeType, str, str]]
    label: str
    # alias of a jacobian's function -> the code of the function giving its target
    values: dict[str, types.CodeType]

    def build(self, func: types.FunctionType, nested: bool = False) -> types.FunctionType:
        from .api import grad
        from .transforms import elementwise_grad

        closure = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
        closure["_s2s_sum"] = types.CellType(np.sum)
        where = (func.__code__.co_filename, func.__code__.co_firstlineno)
        objects: dict[str, Any] = {}
        for alias, code, kind, source in self.blocks:
            cells = tuple(closure[v] for v in code.co_freevars)
            fn = types.FunctionType(code, func.__globals__, code.co_name, None, cells)
            made = rewritten(fn, True)  # the tapes its statements open (second order)
            opens = made is not fn
            fn = made
            if nested and kind in ("values", "grad"):  # inside an inner block: pure code
                objects[alias] = fn if kind == "values" else elementwise_grad(fn, source)
            elif kind == "values":
                objects[alias] = InnerCall(fn, self.label, opens, where)
            elif kind == "variables":
                objects[alias] = InnerVariablesGradient(fn, self.label)
            elif kind in ("jacobian", "batch_jacobian"):
                code_v = self.values[alias]
                cells_v = tuple(closure[v] for v in code_v.co_freevars)
                value = types.FunctionType(code_v, func.__globals__, code_v.co_name, None, cells_v)
                at = code_v.co_varnames.index(source)
                batch = kind == "batch_jacobian"
                objects[alias] = InnerJacobian(grad(fn, source), value, self.label, batch, at)
            else:  # TensorFlow sums a target that is not a scalar: grad of the sum
                objects[alias] = InnerCall(elementwise_grad(fn, source), self.label, opens, where)
        cells = tuple(
            types.CellType(objects[v]) if v in objects else closure[v]
            for v in self.code.co_freevars
        )
        made = types.FunctionType(
            self.code, func.__globals__, func.__name__, func.__defaults__, cells
        )
        made.__kwdefaults__ = func.__kwdefaults__
        made.__qualname__ = func.__qualname__
        made.__module__ = func.__module__
        return made


def _plan(func: types.FunctionType) -> _Rewrite | None:
    from .source import parse_function

    parsed = parse_function(func)
    node = parsed.node
    if not isinstance(node, cst.FunctionDef):
        return None
    finder = _FindTapes()
    node.body.visit(finder)
    if not finder.withs:
        return None
    locals_ = set(names(node).writes) | {p.name.value for p in _all_params(node.params)}
    rewrite = _Rewriter(parsed, finder.tapes, locals_)
    body = node.body.visit(rewrite)
    new = node.with_changes(body=body, decorators=[])
    # decorators become blank lines: the def and the body keep their lines
    blank = sum(parsed.module.code_for_node(d).count("\n") for d in node.decorators)
    new = new.with_changes(leading_lines=[cst.EmptyLine()] * blank)
    left = _Uses(finder.tapes)
    new.body.visit(left)
    if left.node is not None:
        raise parsed.error(
            "a use of an inner GradientTape other than watch() in its block and "
            "gradient() after it, in a function that an outer tape differentiates",
            left.node,
        )
    text = cst.Module([]).code_for_node(new)
    return _compile(func, parsed, text, rewrite.blocks)


def _compile(
    func: types.FunctionType,
    parsed: Any,
    text: str,
    blocks: list[tuple[str, str, str, str, str]],
) -> _Rewrite:
    """Compile the rewritten function and its blocks' functions inside a factory whose
    parameters are their free variables, the def on the line of the user's."""
    code = func.__code__
    free = list(dict.fromkeys([*code.co_freevars, "_s2s_sum", *(block[0] for block in blocks)]))
    first = code.co_firstlineno  # the first decorator's line, or the def's
    lines = textwrap.dedent(text).splitlines(keepends=True)
    head = f"def _s2s_factory({', '.join(free)}):\n"
    own = textwrap.indent("".join(lines), "    ")
    extra = "".join(textwrap.indent(src, "    ") for _, _, src, _, _ in blocks)
    padding = "\n" * max(first - 2, 0)
    full = padding + head + own + extra
    filename = code.co_filename
    compiled = compile(full, filename, "exec", dont_inherit=True)
    factory = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = {c.co_name: c for c in factory.co_consts if isinstance(c, types.CodeType)}
    main = inner[parsed.node.name.value]
    start = first if first >= 2 else 2
    SOURCES[main] = (own.splitlines(keepends=True), start)
    made = [(alias, inner[fname], kind, source) for alias, fname, _, kind, source in blocks]
    values = {
        alias: inner[f"{fname}_values"]
        for alias, fname, _, _, _ in blocks
        if f"{fname}_values" in inner
    }
    for _, fname, src, _, _ in blocks:
        fn_code = inner[fname]
        SOURCES[fn_code] = (src.splitlines(keepends=True), fn_code.co_firstlineno)
    return _Rewrite(main, made, f"in {func.__qualname__}", values)


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            out.append(extra)
    return out


def _tape_item(node: cst.With) -> str | None:
    """The name ``as`` binds when the ``with`` opens one ``...GradientTape(...)``."""
    if len(node.items) != 1:
        return None
    item = node.items[0]
    call = item.item
    if not isinstance(call, cst.Call):
        return None
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
    if name != "GradientTape":
        return None
    if item.asname is None or not isinstance(item.asname.name, cst.Name):
        return None
    return item.asname.name.value


class _FindTapes(cst.CSTVisitor):
    """The ``with ...GradientTape() as t:`` statements of a function (not of the
    functions and classes it defines)."""

    def __init__(self) -> None:
        self.withs: list[cst.With] = []
        self.tapes: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_With(self, node: cst.With) -> bool:
        name = _tape_item(node)
        if name is not None:
            self.withs.append(node)
            self.tapes.add(name)
        return True


class _Uses(cst.CSTVisitor):
    """The first use of a tape's name left after the rewrite."""

    def __init__(self, tapes: set[str]) -> None:
        self.tapes = tapes
        self.node: cst.CSTNode | None = None

    def visit_Name(self, node: cst.Name) -> None:
        if self.node is None and node.value in self.tapes:
            self.node = node


def _tape_call(node: cst.CSTNode, tapes: set[str]) -> tuple[str, str] | None:
    """``(tape, method)`` for a call ``t.method(...)`` of a tape."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    owner = node.func.value
    if isinstance(owner, cst.Name) and owner.value in tapes:
        return owner.value, node.func.attr.value
    return None


def _is_watch(statement: cst.CSTNode, tape: str) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    found = _tape_call(small.value, {tape}) if isinstance(small, cst.Expr) else None
    return found is not None and found[1] == "watch"


@dataclass
class _Block:
    """An inner tape's block: its statements (without ``watch`` calls), the names it
    reads from before it that are the helper's locals, the names it assigns."""

    tape: str
    statements: list[cst.BaseStatement]
    params: list[str]
    assigned: set[str]


class _Rewriter(cst.CSTTransformer):
    def __init__(self, parsed: Any, tapes: set[str], locals_: set[str]) -> None:
        self.parsed = parsed
        self.tapes = tapes
        self.locals = locals_
        self.open: dict[str, _Block] = {}  # tape name -> its latest block
        # (alias, function name, source, kind, source name) of each function made from
        # a block: kind "values", "variables" or "grad" (with respect to the source name)
        self.blocks: list[tuple[str, str, str, str, str]] = []
        self.withs: list[cst.With] = []
        self.top: cst.IndentedBlock | None = None  # the function's body
        self.everywhere: set[str] = set()  # every name the function reads

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        if self.top is None:
            self.top = node
            self.everywhere = set(names(node).reads)
        return True

    def error(self, construct: str, node: cst.CSTNode, hint: str = "") -> TransformError:
        return self.parsed.error(construct, node, hint)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_With(self, node: cst.With) -> bool:
        tape = _tape_item(node)
        if tape is None:
            return True
        statements = [s for s in node.body.body if not _is_watch(s, tape)]
        for statement in statements:
            # a tape opened in the block (second order in a helper) stays in the block's
            # function, rewritten in turn when it is built (_Rewrite.build)
            uses = _Uses({tape})
            statement.visit(uses)
            if uses.node is not None:
                raise self.error(
                    "a use of the tape inside its own block (other than watch), in a "
                    "function that an outer tape differentiates",
                    uses.node,
                    "take the inner gradient after its with block",
                )
        found = names(cst.IndentedBlock(body=statements))
        params = [n for n in _block_inputs(statements) if n in self.locals]
        self.open[tape] = _Block(tape, statements, params, set(found.writes))
        self.withs.append(node)
        return False

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.With:
        if self.withs and self.withs[-1] is original:
            self.withs.pop()  # replaced in leave_IndentedBlock, once the uses are known
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        found = _tape_call(updated, self.tapes)
        if found is None:
            return updated
        tape, method = found
        if method not in ("gradient", "jacobian", "batch_jacobian"):
            raise self.error(
                f"{tape}.{method}() of an inner GradientTape in a function that an outer "
                "tape differentiates (gradient(), jacobian() and batch_jacobian() are "
                "supported)",
                original,
            )
        block = self.open.get(tape)
        if block is None:
            raise self.error(f"{tape}.gradient() before the tape's with block", original)
        args = updated.args
        if len(args) != 2 or any(a.keyword is not None or a.star for a in args):
            raise self.error(
                f"{tape}.gradient() with other arguments than a target and sources, in a "
                "function that an outer tape differentiates",
                original,
            )
        target = args[0].value
        if not isinstance(target, cst.Name) or target.value not in block.assigned:
            raise self.error(
                f"{tape}.gradient() of a value not named in the tape's block",
                original,
                "assign the target to a name inside the with block",
            )
        sources = args[1].value
        if method != "gradient":
            if not self._named(sources):
                raise self.error(
                    f"{tape}.{method}() with respect to something other than a name the "
                    "helper holds (a watched input), in a function that an outer tape "
                    "differentiates",
                    original,
                    "pass the source to the helper as a parameter, or take gradient()",
                )
            return self._jacobian(block, target.value, sources.value, method)  # type: ignore[attr-defined]
        if isinstance(sources, cst.Name) and sources.value in self.locals:
            return self._by_name(block, target.value, sources.value)
        if (
            isinstance(sources, (cst.List, cst.Tuple))
            and sources.elements
            and all(isinstance(e, cst.Element) for e in sources.elements)
            and any(self._named(e.value) for e in sources.elements)
        ):  # one gradient per source: by name, or of a Variable reached through objects
            kind = cst.List if isinstance(sources, cst.List) else cst.Tuple
            return kind(
                [
                    cst.Element(
                        self._by_name(block, target.value, e.value.value)  # type: ignore[attr-defined]
                        if self._named(e.value)
                        else self._by_objects(block, target.value, e.value)
                    )
                    for e in sources.elements
                ]
            )
        return self._by_objects(block, target.value, sources)

    def _named(self, node: cst.BaseExpression) -> bool:
        """A source the helper holds by name (a watched input, a Variable passed in)."""
        return isinstance(node, cst.Name) and node.value in self.locals

    def _by_objects(
        self, block: _Block, target: str, sources: cst.BaseExpression
    ) -> cst.BaseExpression:
        """The gradient with respect to Variables reached through objects
        (``model.trainable_variables``), evaluated where the helper asks for it."""
        alias = self._function(block, target, "variables")
        call_args = [cst.Arg(sources), *(cst.Arg(cst.Name(p)) for p in block.params)]
        return cst.Call(cst.Name(alias), call_args)

    def _by_name(self, block: _Block, target: str, source: str) -> cst.BaseExpression:
        """The gradient with respect to a name the block reads (``None`` when its target
        does not depend on it, as TensorFlow gives)."""
        statements = _slice(block.statements, {target})
        reads = {n for s in statements for n in names(s).reads}
        if source not in block.params or source not in reads:
            return cst.Name("None")
        alias = self._function(block, target, "grad", source)
        return cst.Call(cst.Name(alias), [cst.Arg(cst.Name(p)) for p in block.params])

    def _jacobian(self, block: _Block, target: str, source: str, method: str) -> cst.BaseExpression:
        """``jacobian``/``batch_jacobian`` with respect to a name the block reads: an
        :class:`InnerJacobian` of the target's value and its vector-Jacobian product."""
        statements = _slice(block.statements, {target})
        reads = {n for s in statements for n in names(s).reads}
        if source not in block.params or source not in reads:
            return cst.Name("None")
        alias = self._function(block, target, method, source)
        return cst.Call(cst.Name(alias), [cst.Arg(cst.Name(p)) for p in block.params])

    def _function(self, block: _Block, target: str, kind: str, source: str = "") -> str:
        """A function of the block's inputs computing ``target`` (or, for ``values``,
        the tuple of the names in ``target``): its alias in the rewritten helper."""
        wanted = target.split(",")
        statements = _slice(block.statements, set(wanted))
        k = next(_serial)
        fname = f"_s2s_inner_block_{k}"
        alias = f"_s2s_inner_{kind}_{k}"
        body = "".join(
            textwrap.dedent(cst.Module([]).code_for_node(s.with_changes(leading_lines=[])))
            for s in statements
        )
        params = list(block.params)
        if kind == "variables":  # the gradient of the sum, as TensorFlow gives
            returned = f"_s2s_sum({target})"
        elif kind in ("jacobian", "batch_jacobian"):  # one row: a cotangent's VJP
            returned = f"_s2s_sum({target} * _s2s_cotangent)"
            params.insert(0, "_s2s_cotangent")
        elif len(wanted) == 1:
            returned = wanted[0]
        else:
            returned = "(" + ", ".join(wanted) + ",)"
        src = f"def {fname}({', '.join(params)}):\n" + textwrap.indent(
            body + f"return {returned}\n", "    "
        )
        if kind in ("jacobian", "batch_jacobian"):  # and the target's value, for its shape
            src += f"def {fname}_values({', '.join(block.params)}):\n" + textwrap.indent(
                body + f"return {target}\n", "    "
            )
        self.blocks.append((alias, fname, src, kind, source))
        return alias

    def leave_IndentedBlock(
        self, original: cst.IndentedBlock, updated: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        """Replace each tape's ``with`` statement of this block by the call that gives
        the values it assigns that the helper reads after it."""
        body = list(updated.body)
        for k, statement in enumerate(body):
            if not isinstance(statement, cst.With) or _tape_item(statement) is None:
                continue
            tape = _tape_item(statement)
            assert tape is not None
            block = self.open[tape]
            if original is self.top:
                later = body[k + 1 :]
                after = set(names(cst.IndentedBlock(body=later)).reads) if later else set()
            else:  # a block inside a loop or branch: any name the function reads
                after = self.everywhere
            assigned = names(cst.IndentedBlock(body=block.statements)).writes
            live = [n for n in dict.fromkeys(assigned) if n in after]
            span = cst.Module([]).code_for_node(statement.with_changes(leading_lines=[]))
            blank = [cst.EmptyLine()] * (span.count("\n") - 1)
            if live:
                alias = self._function(block, ",".join(live), "values")
                call = cst.Call(cst.Name(alias), [cst.Arg(cst.Name(p)) for p in block.params])
                if len(live) == 1:
                    target: cst.BaseAssignTargetExpression = cst.Name(live[0])
                else:
                    target = cst.Tuple([cst.Element(cst.Name(n)) for n in live])
                small: cst.BaseSmallStatement = cst.Assign([cst.AssignTarget(target)], call)
            else:
                small = cst.Pass()
            body[k] = cst.SimpleStatementLine(
                [small], leading_lines=[*statement.leading_lines, *blank]
            )
        return updated.with_changes(body=body)


def _block_inputs(statements: list[cst.BaseStatement]) -> list[str]:
    """The names a block's statements read before assigning them (``_inputs``), where a
    tape's ``with`` statement in the block assigns its tape and what its own block
    assigns, and reads what its block reads first."""
    assigned: set[str] = set()
    out: dict[str, None] = {}
    for statement in statements:
        tape = _tape_item(statement) if isinstance(statement, cst.With) else None
        if tape is None:
            reads = _inputs([statement])
            writes = set(names(statement).writes) if _simple(statement) else set()
        else:
            assert isinstance(statement, cst.With)
            body = list(statement.body.body)
            reads = [*names(statement.items[0]).reads, *_block_inputs(body)]
            reads = [n for n in reads if n != tape]
            writes = {tape} | {n for s in body if _simple(s) for n in names(s).writes}
        out.update((n, None) for n in reads if n not in assigned)
        assigned |= writes
    return list(out)


def _simple(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine)


def _slice(statements: list[cst.BaseStatement], needed: set[str]) -> list[cst.BaseStatement]:
    """The statements that lead to the names in ``needed``."""
    kept: list[cst.BaseStatement] = []
    needed = set(needed)
    for statement in reversed(statements):
        found = names(statement)
        if not set(found.writes) & needed:
            continue
        kept.append(statement)
        needed |= set(found.reads)
    return kept[::-1]
