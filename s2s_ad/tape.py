"""``GradientTape``: TensorFlow's tape API, answered by code generated from the block.

``__enter__`` finds the ``with`` statement in the caller's source and remembers what the
block reads; the block then runs natively, once. ``gradient()`` builds a function from
the statements of the block that lead to the target (the others, such as prints, are not
run again), differentiates it like any user function, and runs it on the values the block
started from (or, for an intermediate source, the value it was given in the block).
"""

from __future__ import annotations

import builtins
import enum
import itertools
import linecache
import sys
import textwrap
import types
import warnings
from collections import Counter
from typing import Any

import libcst as cst
import numpy as np
from libcst.metadata import MetadataWrapper, PositionProvider

from .analysis import depends
from .custom import stop_gradient
from .errors import TransformError
from .variable import Tensor, Variable, tensor

_serial = itertools.count(1)
# values the block reads that are code, not data: looked up as globals, never parameters
_CODE_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.attrs: set[str] = set()
        self.keywords: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.reads:
            self.reads.append(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.attrs.add(node.attr.value)
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.keywords.add(node.keyword.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        _targets(node.target, self.writes)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        _targets(node.target, self.writes)

    def visit_For(self, node: cst.For) -> None:
        _targets(node.target, self.writes)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            _targets(node.asname.name, self.writes)


def _targets(node: cst.BaseExpression, out: list[str]) -> None:
    if isinstance(node, cst.Name):
        out.append(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            _targets(el.value, out)


_LIBRARIES = {"numpy", "math", "random", "builtins", "s2s_ad"}

_NAMES: dict[int, tuple[cst.CSTNode, _Names]] = {}


def _names(node: cst.CSTNode) -> _Names:
    """Names a statement reads and writes (memoized: blocks are parsed once)."""
    hit = _NAMES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    visitor = _Names()
    node.visit(visitor)
    _NAMES[id(node)] = (node, visitor)
    return visitor


class _Block:
    """The ``with`` block of a tape: its statements and their source."""

    def __init__(self, frame: types.FrameType) -> None:
        code = frame.f_code
        filename = code.co_filename
        lines = linecache.getlines(filename, frame.f_globals)
        if not lines:
            raise TransformError(
                "a GradientTape block whose source cannot be read (interactive exec?)",
                filename,
                frame.f_lineno,
                hint="run the code from a file; the tape differentiates the block's source",
            )
        module = cst.parse_module("".join(lines))
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        found: list[cst.With] = []

        class _Find(cst.CSTVisitor):
            def visit_With(self, node: cst.With) -> None:
                if positions[node].start.line == frame.f_lineno:
                    found.append(node)

        module.visit(_Find())
        if not found:
            raise TransformError(
                "a GradientTape used outside a with statement", filename, frame.f_lineno
            )
        self.node = found[-1]
        self.module = module
        self.filename = filename
        self.line = frame.f_lineno
        self.statements = list(self.node.body.body)
        names = _names(self.node.body)
        self.reads = names.reads
        self.writes = names.writes
        # names assigned by exactly one statement: their value after the block is that one
        self.assigned_once = {n for n, k in Counter(self.writes).items() if k == 1}

    def source(self, statement: cst.CSTNode) -> str:
        return self.module.code_for_node(statement)


_BLOCKS: dict[tuple[str, int, int], _Block] = {}
_FUNCTIONS: dict[tuple[Any, ...], Any] = {}


def _block_at(frame: types.FrameType) -> _Block:
    """The ``with`` block at the frame's line (parsed once per file version)."""
    filename = frame.f_code.co_filename
    lines = linecache.getlines(filename, frame.f_globals)
    key = (filename, frame.f_lineno, id(lines), len(lines))  # linecache keeps the list
    block = _BLOCKS.get(key)
    if block is None:
        block = _BLOCKS[key] = _Block(frame)
    return block


def _block_function(
    block: _Block,
    statements: list[cst.CSTNode],
    params: list[str],
    target: str,
    namespace: dict[str, Any],
    reusable: bool,
) -> Any:
    """The function of a block slice; the same object each time the same slice is asked
    for (so its generated gradient is reused), unless it calls inner tapes."""
    key = (id(block), target, tuple(params), tuple(id(s) for s in statements))
    if reusable and key in _FUNCTIONS:
        return _FUNCTIONS[key]
    fn = _compile(_function_text(block, statements, params, target), namespace, block)
    if reusable:
        _FUNCTIONS[key] = fn
    return fn


class GradientTape:
    """Records nothing: the gradient is computed by code generated from the block.

    Args:
        persistent: Allow several calls of ``gradient``/``jacobian``.
        watch_accessed_variables: Watch every trainable ``Variable`` the block reads.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._watched: list[Any] = []
        self._used = False
        self._block: _Block | None = None
        self._before: dict[str, Any] = {}
        self._objects: dict[str, Any] = {}
        # (target name, source name) -> the function differentiated and its parameters,
        # for an outer tape that differentiates this tape's gradient call
        self._calls: dict[tuple[str, str], tuple[Any, list[str]]] = {}
        self._after: dict[str, Any] = {}
        self._globals: dict[str, Any] = {}
        self._code: dict[str, Any] = {}

    def __enter__(self) -> GradientTape:
        frame = sys._getframe(1)
        self._block = _block_at(frame)
        self._globals = frame.f_globals
        local, glob = frame.f_locals, frame.f_globals
        self._before = {}
        self._objects = {}
        self._code = {}
        for name in self._block.reads:
            value = local[name] if name in local else glob.get(name, _CODE_TYPES)
            if isinstance(value, types.FunctionType) and name in local and local is not glob:
                self._code[name] = value  # a local function: passed to the slice
            if value is not _CODE_TYPES and not isinstance(value, _CODE_TYPES):
                self._objects[name] = value  # for identity: which name a source is
                self._before[name] = value.copy() if isinstance(value, np.ndarray) else value
                if (
                    isinstance(value, Variable)
                    and value.trainable
                    and self.watch_accessed_variables
                ):
                    self._watch_one(value)
        return self

    def __exit__(self, *exc: Any) -> None:
        frame = sys._getframe(1)
        assert self._block is not None
        local, glob = frame.f_locals, frame.f_globals
        self._after = {
            n: local[n] if n in local else glob[n]
            for n in self._block.writes
            if n in local or n in glob
        }
        # a Variable assigned in the block is read afterwards with its new value (its
        # assign itself is not differentiated: TensorFlow cuts the gradient there too)
        for name, obj in self._objects.items():
            if isinstance(obj, Variable):
                self._before[name] = obj.value.copy()

    def _watch_one(self, value: Any) -> None:
        if not self._is_watched(value):
            self._watched.append(value)

    def _is_watched(self, value: Any) -> bool:
        return any(value is w for w in self._watched)

    def watch(self, tensor_or_nested: Any) -> None:
        """Differentiate with respect to these values too (tensors are not watched by default)."""
        for leaf in _leaves(tensor_or_nested):
            self._watch_one(leaf)

    def watched_variables(self) -> tuple[Variable, ...]:
        return tuple(w for w in self._watched if isinstance(w, Variable))

    def reset(self) -> None:
        self._watched = []
        self._used = False

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """d ``target`` / d ``sources``, in the structure of ``sources``.

        A non-scalar target is summed (weighted by ``output_gradients``); sources the
        target does not depend on give ``None`` (or zeros with ``'zero'``).
        """
        self._use()
        zero = UnconnectedGradients(unconnected_gradients) is UnconnectedGradients.ZERO
        leaves = _leaves(sources)
        # Variables the block reaches through objects and called functions (``model(x)``,
        # a function reading a global Variable); a Variable the block also names directly
        # gets both contributions
        reached = self._calls_user_code()
        held = self._held_variables()
        hidden = [
            leaf
            for leaf in leaves
            if isinstance(leaf, Variable)
            and (reached or id(leaf) in held or self._name_of(leaf)[0] is None)
        ]
        through = self._variables_gradient(target, hidden, output_gradients) if hidden else {}
        grads = []
        for leaf in leaves:
            if id(leaf) in through and id(leaf) not in held and self._name_of(leaf)[0] is not None:
                direct = self._gradient_leaf(target, leaf, output_gradients, zero=False)
                extra = through[id(leaf)]
                if extra is not None and (leaf.trainable or self._is_watched(leaf)):
                    direct = tensor(
                        extra if direct is None else direct.numpy() + extra, dtype=leaf.dtype
                    )
                grads.append(direct if direct is not None else self._unconnected(leaf, zero))
            elif id(leaf) in through:
                grad = through[id(leaf)]
                connected = grad is not None and leaf.trainable or self._is_watched(leaf)
                grads.append(
                    tensor(grad, dtype=leaf.dtype)
                    if connected and grad is not None
                    else self._unconnected(leaf, zero)
                )
            else:
                grads.append(self._gradient_leaf(target, leaf, output_gradients, zero))
        return _rebuild(sources, iter(grads))

    def _variables_gradient(
        self, target: Any, variables: list[Variable], output_gradients: Any
    ) -> dict[int, Any]:
        """Gradients of Variables the block reads through objects (``model(x)`` reading
        ``self.kernel``): the block runs in variables mode, where each attribute read
        that is one of them adds its adjoint to a table."""
        from . import runtime
        from .api import compile_adjoint

        assert self._block is not None
        block = self._block
        target_name, where = self._name_of(target)
        if target_name is None or where != "block":
            raise ValueError("the target was not computed in the tape's with block")
        statements, drawn = self._without_draws(_slice(block, target_name, None) or [])
        params = [n for n in block.reads if n in self._objects or n in self._code] + list(drawn)
        namespace = dict(self._globals)
        inlined = _inline_inner_tapes(statements, self._after, namespace)
        reusable = inlined is statements
        fn = _block_function(
            block, inlined, params, target_name, self._globals if reusable else namespace, reusable
        )
        known = {**self._objects, **self._code, **drawn}
        # lists, tuples and dicts holding the Variables (``for w in weights``) are
        # differentiated as parameters; their adjoints are matched back element by element
        ids = {id(v) for v in variables}
        containers = tuple(
            n
            for n in params
            if isinstance(known[n], (list, tuple, dict))
            and any(id(leaf) in ids for leaf in _leaves(known[n]))
        )
        fns = compile_adjoint(fn, containers, variables=True).bind(fn)
        table: dict[int, Any] = {id(v): 0.0 for v in variables}
        saved_table, runtime.VARIABLE_GRADS = runtime.VARIABLE_GRADS, table
        try:
            out, saved = fns["fwd"](*[known[n] for n in params])
            if output_gradients is not None:
                cotangent: Any = np.asarray(output_gradients)
            elif np.shape(out):
                cotangent = np.ones(np.shape(out))
            else:
                cotangent = 1.0
            grads = fns["bwd"](saved, cotangent)
        finally:
            runtime.VARIABLE_GRADS = saved_table
        if containers:
            for name, grad in zip(containers, grads):
                for leaf, part in zip(_leaves(known[name]), _leaves(grad)):
                    if id(leaf) in table and part is not None:
                        table[id(leaf)] = table[id(leaf)] + part
        return {
            key: None if isinstance(value, float) and value == 0.0 else value
            for key, value in table.items()
        }

    def jacobian(
        self,
        target: Any,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """d ``target[i...]`` / d ``source[j...]`` for every entry: ``target.shape +
        source.shape`` per source, in the structure of ``sources``."""
        self._use()
        zero = UnconnectedGradients(unconnected_gradients) is UnconnectedGradients.ZERO
        shape = np.shape(target)
        out = []
        for leaf in _leaves(sources):
            rows = []
            for k in np.ndindex(*shape) if shape else [()]:
                basis = np.zeros(shape)
                basis[k] = 1.0
                rows.append(self._gradient_leaf(target, leaf, basis, False))
            if all(r is None for r in rows):
                out.append(self._unconnected_jacobian(shape, leaf, zero))
                continue
            value = np.asarray(leaf.value if isinstance(leaf, Variable) else leaf)
            stacked = np.stack([np.asarray(r) for r in rows]).reshape(shape + value.shape)
            out.append(tensor(stacked, dtype=value.dtype))
        return _rebuild(sources, iter(out))

    def batch_jacobian(self, target: Any, source: Any, **options: Any) -> Any:
        """The Jacobian of each example: ``target[b]`` against ``source[b]``."""
        full = np.asarray(self.jacobian(target, source, **options))
        batch = np.shape(target)[0]
        t_rank, s_rank = len(np.shape(target)) - 1, len(np.shape(source)) - 1
        rows = [full[(b,) + (slice(None),) * t_rank + (b,)] for b in range(batch)]
        del s_rank
        return tensor(np.stack(rows), dtype=full.dtype)

    def stop_recording(self) -> _StopRecording:
        """A block inside the tape whose values carry no gradient."""
        return _StopRecording()

    def _unconnected_jacobian(self, shape: tuple[int, ...], leaf: Any, zero: bool) -> Any:
        if not zero:
            return None
        value = np.asarray(leaf.value if isinstance(leaf, Variable) else leaf)
        return tensor(np.zeros(shape + value.shape), dtype=value.dtype)

    def _use(self) -> None:
        if self._used and not self.persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians)"
            )
        self._used = True

    def _name_of(self, value: Any) -> tuple[str | None, str]:
        for name, after in self._after.items():
            if after is value:
                return name, "block"
        for name, before in self._objects.items():
            if before is value:
                return name, "input"
        return None, ""

    def _gradient_leaf(self, target: Any, source: Any, output_gradients: Any, zero: bool) -> Any:
        from .api import pullback_wrt

        assert self._block is not None
        block = self._block
        target_name, where = self._name_of(target)
        if target_name is None or where != "block":
            raise ValueError("the target was not computed in the tape's with block")
        source_name, source_where = self._name_of(source)
        if source_name is None and isinstance(source, Variable):
            return self._unconnected(source, zero)
        if source_name is None:
            raise ValueError(f"the tape cannot relate the source {source!r} to its block")
        watched = source_where == "block" or self._is_watched(source)
        value = source.value if isinstance(source, Variable) else source
        if isinstance(source, Variable) and source_name in self._before:
            value = self._before[source_name]  # as the block left it
        if not watched or np.asarray(value).dtype.kind not in "fc":
            if np.asarray(value).dtype.kind in "iub":
                warnings.warn(
                    "The dtype of the source tensor must be floating; got an integer: "
                    "its gradient is None",
                    stacklevel=3,
                )
            return self._unconnected(source, zero)
        statements = _slice(block, target_name, source_name if source_where == "block" else None)
        if statements is None:
            return self._unconnected(source, zero)
        statements, drawn = self._without_draws(statements)
        params = [
            n for n in block.reads if (n in self._before or n in self._code) and n != source_name
        ]
        params = [source_name, *params, *drawn]
        namespace = dict(self._globals)
        inlined = _inline_inner_tapes(statements, self._after, namespace)
        reusable = inlined is statements
        fn = _block_function(
            block, inlined, params, target_name, self._globals if reusable else namespace, reusable
        )
        self._calls[(target_name, source_name)] = (fn, params)
        if not depends(fn, source_name):
            return self._unconnected(source, zero)  # only through stop_gradient, round...
        known = {**self._before, **self._code, **drawn}
        args = [value] + [_arg(known[n]) for n in params[1:]]
        out, pullback = pullback_wrt(fn, args, [0])
        cotangent = (
            np.ones(np.shape(out), dtype=np.result_type(np.asarray(out).dtype, np.float32))
            if output_gradients is None
            else np.asarray(output_gradients)
        )
        if not np.shape(out):
            cotangent = 1.0 if output_gradients is None else float(np.asarray(output_gradients))
        (grad,) = pullback(cotangent)
        return tensor(grad, dtype=np.asarray(value).dtype)

    def _held_variables(self) -> set[int]:
        """Variables held in lists, tuples or dicts the block reads (``for w in weights``):
        their gradients come from differentiating the containers."""
        return {
            id(leaf)
            for value in self._objects.values()
            if isinstance(value, (list, tuple, dict))
            for leaf in _leaves(value)
            if isinstance(leaf, Variable)
        }

    def _calls_user_code(self) -> bool:
        """Whether the block calls code outside the libraries (user functions, methods of
        objects such as layers), which may read Variables the block does not name."""
        assert self._block is not None
        for name in self._block.reads:
            if name in self._objects:
                if not _is_plain(self._objects[name]):
                    return True
            elif name not in self._block.writes:
                value = self._resolve(name)
                if callable(value) and not isinstance(value, type) and not _from_library(value):
                    return True
        return False

    def _resolve(self, name: str) -> Any:
        """The function or module a name the block reads (and does not assign) stands for."""
        return self._code.get(name, self._globals.get(name, getattr(builtins, name, None)))

    def _without_draws(
        self, statements: list[cst.CSTNode]
    ) -> tuple[list[cst.CSTNode], dict[str, Any]]:
        """Take the values of the slice's draws (``r = np.random.normal()``: assignments
        that read no data and call only library functions) from the block's own run:
        running them again would draw other numbers."""
        assert self._block is not None
        once = self._block.assigned_once
        kept: list[cst.CSTNode] = []
        drawn: dict[str, Any] = {}
        for statement in statements:
            writes = _names(statement).writes
            if (
                writes
                and all(n in once and n in self._after for n in writes)
                and self._is_draw(statement)
            ):
                drawn.update({n: self._after[n] for n in writes})
            else:
                kept.append(statement)
        return kept, drawn

    def _is_draw(self, statement: cst.CSTNode) -> bool:
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign)
        ):
            return False
        assert self._block is not None
        names = _names(statement)
        for name in set(names.reads) - set(names.writes) - names.keywords:
            if name in self._objects or name in self._block.writes:
                return False  # reads data
            if not _from_library(self._resolve(name)):
                return False  # a user function may read Variables
        return True

    def _unconnected(self, source: Any, zero: bool) -> Any:
        if not zero:
            return None
        value = source.value if isinstance(source, Variable) else source
        return tensor(np.zeros(np.shape(value)), dtype=np.asarray(value).dtype)


class _StopRecording:
    """``with tape.stop_recording():`` (the tape reads the block's source: the values
    assigned inside are treated as constants when the tape differentiates)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _from_library(value: Any) -> bool:
    """Whether a module or function belongs to NumPy, the standard library's math and
    random, builtins or s2s_ad (code that reads no Variables of the user's)."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
    elif callable(value):
        module = str(getattr(value, "__module__", "") or "")
    else:
        return False
    return module.split(".")[0] in _LIBRARIES


def _is_plain(value: Any, depth: int = 0) -> bool:
    """Data that cannot read Variables when used: numbers, arrays, containers of them."""
    if isinstance(value, (np.ndarray, np.generic, Variable, int, float, complex, str, type(None))):
        return True
    if isinstance(value, (list, tuple)) and depth < 2:
        return all(_is_plain(item, depth + 1) for item in value)
    if isinstance(value, dict) and depth < 2:
        return all(_is_plain(item, depth + 1) for item in value.values())
    return False


def _arg(value: Any) -> Any:
    return value.value if isinstance(value, Variable) else value


def _leaves(structure: Any) -> list[Any]:
    if isinstance(structure, dict):
        return [leaf for key in structure for leaf in _leaves(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _leaves(item)]
    return [structure]


def _rebuild(structure: Any, grads: Any) -> Any:
    if isinstance(structure, dict):
        return {key: _rebuild(structure[key], grads) for key in structure}
    if isinstance(structure, (list, tuple)):
        return type(structure)(_rebuild(item, grads) for item in structure)
    return next(grads)


def _slice(block: _Block, target: str, cut: str | None) -> list[cst.CSTNode] | None:
    """The statements leading to ``target`` (before it is last assigned); ``None`` when the
    target does not depend on the source ``cut`` (an intermediate value)."""
    needed = {target}
    kept: list[cst.CSTNode] = []
    reached = cut is None
    for statement in reversed(block.statements):
        names = _names(statement)
        if not set(names.writes) & needed:
            continue
        if cut is not None and cut in names.writes:
            reached = True
            break  # the source is given: what computed it is not re-run
        kept.append(statement)
        needed |= set(names.reads)
    return kept[::-1] if reached or cut is None else None


def _inline_inner_tapes(
    statements: list[cst.CSTNode], after: dict[str, Any], namespace: dict[str, Any]
) -> list[cst.CSTNode]:
    """Nested tapes: an inner ``with`` block runs inline, and its ``tape.gradient(t, s)``
    becomes a call of the gradient of the function the inner tape differentiated, so
    that the outer tape differentiates it again (a higher derivative)."""
    from .api import grad

    tapes = {name: obj for name, obj in after.items() if isinstance(obj, GradientTape)}
    if not tapes and not any("stop_recording" in _names(st).attrs for st in statements):
        return statements

    class _Rewrite(cst.CSTTransformer):
        def leave_With(
            self, original: cst.With, updated: cst.With
        ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
            names = [
                i.asname.name.value
                for i in updated.items
                if i.asname is not None and isinstance(i.asname.name, cst.Name)
            ]
            if names and all(n in tapes for n in names):
                return cst.FlattenSentinel(list(updated.body.body))
            if all(_is_stop_recording(i.item) for i in updated.items):
                namespace["_stop_recording"] = stop_gradient
                return cst.FlattenSentinel([st.visit(_Constant()) for st in updated.body.body])
            return updated

        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            func = updated.func
            if not (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value in tapes
                and func.attr.value == "gradient"
                and len(updated.args) >= 2
                and all(isinstance(a.value, cst.Name) for a in updated.args[:2])
            ):
                return updated
            tape = tapes[func.value.value]
            key = (updated.args[0].value.value, updated.args[1].value.value)
            if key not in tape._calls:
                raise TransformError(
                    f"the inner tape's gradient of {key[0]} with respect to {key[1]} "
                    "(only one source, named in the block, is supported)"
                )
            fn, params = tape._calls[key]
            alias = f"_inner_gradient_{next(_serial)}"
            namespace[alias] = grad(fn, 0)
            return cst.Call(cst.Name(alias), [cst.Arg(cst.Name(p)) for p in params])

    class _Constant(cst.CSTTransformer):
        def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
            call = cst.Call(cst.Name("_stop_recording"), [cst.Arg(updated.value)])
            return updated.with_changes(value=call)

    out: list[cst.CSTNode] = []
    changed = False
    for statement in statements:
        new = statement.visit(_Rewrite())
        changed = changed or new is not statement
        if isinstance(new, cst.FlattenSentinel):
            out.extend(new.nodes)
        else:
            out.append(new)
    return out if changed else statements


def _is_stop_recording(item: cst.BaseExpression) -> bool:
    return (
        isinstance(item, cst.Call)
        and isinstance(item.func, cst.Attribute)
        and item.func.attr.value == "stop_recording"
    )


def _function_text(
    block: _Block, statements: list[cst.CSTNode], params: list[str], target: str
) -> str:
    body = "".join(textwrap.dedent(block.source(s)).strip("\n") + "\n" for s in statements)
    return (
        f"def _tape_block({', '.join(params)}):\n"
        + textwrap.indent(body or "pass\n", "    ")
        + f"    return {target}\n"
    )


def _compile(text: str, globals_: dict[str, Any], block: _Block) -> Any:
    filename = f"<s2s_ad:tape {block.filename}:{block.line}:{next(_serial)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    code = compile(text, filename, "exec")
    fn_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(fn_code, globals_, "_tape_block")


__all__ = ["GradientTape", "Tensor", "UnconnectedGradients", "Variable"]
