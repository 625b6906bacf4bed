"""The ``with`` block of a ``GradientTape``: its statements, the names they read and
write, the slice of it that leads to a target, and the function built from that slice.
"""

from __future__ import annotations

import bisect
import itertools
import linecache
import re
import textwrap
import types
from collections import Counter
from collections.abc import Callable
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .errors import TransformError
from .transforms import elementwise_grad
from .variable import Variable
from .view_facts import sharing, written_in_place

_serial = itertools.count(1)
_LIBRARIES = {"numpy", "math", "random", "builtins", "s2s_ad"}


class Names(cst.CSTVisitor):
    """The names a statement reads and writes, the attributes and keywords it uses."""

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


_NAMES: dict[int, tuple[cst.CSTNode, Names]] = {}


def names(node: cst.CSTNode) -> Names:
    """Names a statement reads and writes (memoized: blocks are parsed once)."""
    hit = _NAMES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    visitor = Names()
    node.visit(visitor)
    _NAMES[id(node)] = (node, visitor)
    return visitor


class Block:
    """The ``with`` block of a tape: its statements, their lines and their source."""

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
        line = frame.f_lineno  # (the visitor keeps no reference to the frame: see test_tape_freed)

        class _Find(cst.CSTVisitor):
            def visit_With(self, node: cst.With) -> None:
                if positions[node].start.line == line:
                    found.append(node)

        module.visit(_Find())
        if not found:
            raise TransformError(
                "a GradientTape used outside a with statement", filename, frame.f_lineno
            )
        self.node = found[-1]
        # the names the ``with`` statement binds (``as tape``)
        self.tape_names = frozenset(
            item.asname.name.value
            for item in self.node.items
            if item.asname is not None and isinstance(item.asname.name, cst.Name)
        )
        self.module = module
        self.filename = filename
        self.line = frame.f_lineno
        self.statements = list(self.node.body.body)
        self.index = {id(s): k for k, s in enumerate(self.statements)}
        self.starts = [positions[s].start.line for s in self.statements]
        self.simple = [isinstance(s, cst.SimpleStatementLine) for s in self.statements]
        found_names = names(self.node.body)
        self.reads = found_names.reads
        self.writes = found_names.writes
        self.written = tuple(dict.fromkeys(self.writes))  # each name once
        self.written_set = frozenset(self.writes)
        # (``True``, ``False``, ``None`` are read as names by the visitor: never variables)
        self.inputs = [n for n in _inputs(self.statements) if n not in _CONSTANTS]
        # names assigned by exactly one statement: their value after the block is that one
        self.assigned_once = {n for n, k in Counter(self.writes).items() if k == 1}
        # names changed in place but not bound in the block (a list made before it and
        # appended to inside): the tape copies such lists and dicts on entry
        self.changed = frozenset(mutated(self.node.body) - self.written_set)
        # whether the statements only assign names or call methods (``metric.update_state
        # (...)``, ``print(...)``): nothing written in place, unless through the objects
        # whose methods are called (``receivers``; an array among them writes in place)
        self.receivers: tuple[str, ...] = ()
        self.plain = all(assigns_names(s) or _method_call(s, self) for s in self.statements)
        # whether the tapes of a ``with`` opening several share what they read on entry:
        # each item is ``GradientTape(...)`` (or ``tf.GradientTape(...)``) of literals, so
        # no code of the user's runs between their entries, and the block reads none of
        # the names they bind
        self.shares_entry = (
            len(self.node.items) > 1
            and all(_new_tape(item.item) for item in self.node.items)
            and not self.tape_names.intersection(self.inputs)
        )

    def source(self, statement: cst.CSTNode) -> str:
        return self.module.code_for_node(statement)

    def statement_at(self, line: int) -> int:
        """The index of the top-level statement of the block holding ``line``."""
        return max(bisect.bisect_right(self.starts, line) - 1, 0)


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)
_CONSTANTS = frozenset(("True", "False", "None"))


def _new_tape(item: cst.BaseExpression) -> bool:
    """Whether a ``with`` item is ``GradientTape(...)`` or ``x.GradientTape(...)`` with
    literal arguments (``persistent=True``)."""
    if not isinstance(item, cst.Call):
        return False
    func = item.func
    name = func.attr if isinstance(func, cst.Attribute) else func
    if not isinstance(name, cst.Name) or name.value != "GradientTape":
        return False
    for arg in item.args:
        value = arg.value
        if arg.star or not (
            isinstance(value, _LITERALS)
            or isinstance(value, cst.Name)
            and value.value in _CONSTANTS
        ):
            return False
    return True


def _inputs(statements: list[cst.CSTNode]) -> list[str]:
    """The names the statements may read before assigning them, in order: the values the
    block starts from (a name every path assigns first, such as ``h = ...; loss = f(h)``,
    needs no value from before the block)."""
    assigned: set[str] = set()
    out: dict[str, None] = {}
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                reads, writes = _simple_names(small)
                out.update((n, None) for n in reads if n not in assigned)
                assigned.update(writes)
        else:  # reads anywhere inside count; its assignments may not happen
            out.update((n, None) for n in names(statement).reads if n not in assigned)
    return list(out)


def _simple_names(small: cst.BaseSmallStatement) -> tuple[list[str], list[str]]:
    """What a simple statement reads (before it writes) and the plain names it assigns."""
    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
        targets = (
            [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        )
        plain: list[str] = []
        reads = list(names(small.value).reads)
        for target in targets:
            if _plain_targets(target, plain):
                continue
            reads.extend(_reads_of(target))
        return reads, plain
    return list(names(small).reads), []


def _plain_targets(node: cst.BaseExpression, out: list[str]) -> bool:
    """Collect the names of a target made only of names (``a``, ``a, b``); ``False`` for
    other targets (``a[i]``, ``obj.x``), which read what they index."""
    if isinstance(node, cst.Name):
        out.append(node.value)
        return True
    if isinstance(node, (cst.Tuple, cst.List)) and all(
        isinstance(el, cst.Element) and not isinstance(el, cst.StarredElement)
        for el in node.elements
    ):
        found: list[str] = []
        if all(_plain_targets(el.value, found) for el in node.elements):
            out.extend(found)
            return True
    return False


def _reads_of(node: cst.CSTNode) -> list[str]:
    visitor = Names()
    node.visit(visitor)
    return visitor.reads


_BLOCKS: dict[tuple[str, int, int, int], Block] = {}


# (id of a code object, line) -> (that code object, its block there): a code object's
# source does not change, so a block running again is found without asking linecache
_BY_CODE: dict[tuple[int, int], tuple[types.CodeType, Block]] = {}


def block_at(frame: types.FrameType) -> Block:
    """The ``with`` block at the frame's line (parsed once per file version; found at once
    for a code object that ran it before)."""
    code = frame.f_code
    hit = _BY_CODE.get((id(code), frame.f_lineno))
    if hit is not None and hit[0] is code:  # (the code is kept alive: its id is its own)
        return hit[1]
    filename = code.co_filename
    entry = linecache.cache.get(filename)
    if entry is not None and len(entry) == 4:
        lines = entry[2]
    else:
        lines = linecache.getlines(filename, frame.f_globals)
    key = (filename, frame.f_lineno, id(lines), len(lines))  # linecache keeps the list
    block = _BLOCKS.get(key)
    if block is None:
        block = _BLOCKS[key] = Block(frame)
    if len(_BY_CODE) > 4096:  # (code made at run time: do not keep it all)
        _BY_CODE.clear()
    _BY_CODE[(id(code), frame.f_lineno)] = (code, block)
    return block


def attribute_store(statement: cst.CSTNode) -> list[str] | None:
    """``a.b.c = v`` alone on its line (``=`` or an augmented assignment): the chain
    ``['a', 'b', 'c']`` of its target, else ``None``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target: cst.BaseExpression = small.targets[0].target
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and small.value is not None:
        target = small.target
    else:
        return None
    chain: list[str] = []
    while isinstance(target, cst.Attribute):
        chain.append(target.attr.value)
        target = target.value
    if not chain or not isinstance(target, cst.Name):
        return None
    return [target.value, *reversed(chain)]


_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add"}
)


class _Mutated(cst.CSTVisitor):
    """The names a statement changes in place: ``outs.append(...)`` (a list's or a
    dict's mutating methods) and ``outs[k] = ...``."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.attr.value in _MUTATORS
        ):
            self.names.add(func.value.value)

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.names.add(target.value.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)


def mutated(statement: cst.CSTNode) -> set[str]:
    """The names ``statement`` changes in place (see :class:`_Mutated`)."""
    visitor = _Mutated()
    statement.visit(visitor)
    return visitor.names


def slice_block(
    block: Block,
    targets: list[str],
    cuts: set[str],
    start: int,
    end: int | None = None,
    stores: frozenset[int] = frozenset(),
    refill: frozenset[str] = frozenset(),
) -> tuple[list[cst.CSTNode], set[str]]:
    """The statements from ``start`` on (up to ``end``, excluded: a gradient called in
    the block differentiates what ran before it) that lead to ``targets``, and the
    sources among ``cuts`` (values computed in the block) they reach.

    A cut source is given, so the statement that last assigned it is not re-run; a cut
    whose last assignment does not lead to the targets is unconnected. The attribute
    stores at the indices ``stores`` (``layer.W = 2.0 * V``) lead to what reads their
    object later. The lists and dicts among ``refill`` were made before the block and are
    filled again from their copy on entry by the statements that change them.
    """
    needed = set(targets)
    kept: list[cst.CSTNode] = []
    reached: set[str] = set()
    settled: set[str] = set()
    first = start
    chosen = block.statements[start:end]
    # the names the block itself binds: a list made there and filled by a later loop
    # (outs = []; for ...: outs.append(...)) is filled again when re-run
    made = {n for statement in chosen for n in names(statement).writes} | refill
    shared = sharing(block.statements)  # v = h[1:]: a write into v changes h
    for k, statement in reversed(list(enumerate(chosen, first))):
        found = names(statement)
        writes = set(found.writes)
        seen = {a for n in written_in_place(statement) for a in shared.get(n, {n})}
        if (
            (k in stores and (attribute_store(statement) or [""])[0] in needed)
            or (not writes & needed and mutated(statement) & needed & made)
            or (not writes & needed and seen & needed)
        ):
            kept.append(statement)  # the object a kept statement reads holds the value
            needed |= set(found.reads) | seen
            continue
        for cut in sorted(writes & cuts - settled):
            settled.add(cut)  # the last assignment of the source
            if cut in needed:
                reached.add(cut)
                needed.discard(cut)
                if (writes - {cut}) & needed:
                    raise TransformError(
                        f"a gradient with respect to {cut}, assigned together with other "
                        "values the target needs",
                        block.filename,
                        block.starts[block.index[id(statement)]],
                    )
                writes = set()  # not re-run: the source is given
        if not writes & needed:
            continue
        if writes & reached:
            raise TransformError(
                f"a gradient with respect to {sorted(writes & reached)[0]}, whose earlier "
                "value the target also reads",
                block.filename,
                block.starts[block.index[id(statement)]],
                hint="give the earlier value its own name",
            )
        kept.append(statement)
        needed |= set(found.reads)
    return kept[::-1], reached


def inline_inner_tapes(
    statements: list[cst.CSTNode],
    tapes: dict[str, Any],
    namespace: dict[str, Any],
    stop_gradient: Any,
    lookup: Callable[[str], Any] | None = None,
) -> list[cst.CSTNode]:
    """Nested tapes: an inner ``with`` block runs inline, and its ``tape.gradient(t, s)``
    becomes a call of the gradient of the function the inner tape differentiated, so
    that the outer tape differentiates it again (a higher derivative). For sources
    reached through objects (``layer.kernel``), ``lookup`` gives the values of the
    names the source expression reads."""

    if not tapes and not any("stop_recording" in names(st).attrs for st in statements):
        return statements
    # inputs an inner block assigns again (x = layer(x)): its gradient takes the values
    # they had when the block began
    captured: dict[str, dict[str, str]] = {}

    class _Rewrite(cst.CSTTransformer):
        def leave_With(
            self, original: cst.With, updated: cst.With
        ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
            found = [
                i.asname.name.value
                for i in updated.items
                if i.asname is not None and isinstance(i.asname.name, cst.Name)
            ]
            if found and all(n in tapes for n in found):
                body = [st for st in updated.body.body if not _calls_a_tape(st, tapes)]
                saves: list[cst.BaseStatement] = []
                for tape_name in found:
                    block = tapes[tape_name]._block
                    if block is None:
                        continue
                    for n in block.inputs:
                        if n in block.written_set:
                            alias = f"_inner_input_{tape_name}_{n}"
                            captured.setdefault(tape_name, {})[n] = alias
                            saves.append(cst.parse_statement(f"{alias} = {n}"))
                body = saves + body
                return cst.FlattenSentinel(body or [cst.SimpleStatementLine([cst.Pass()])])
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
            ):
                return updated
            variables = _variables_call(updated, tapes, lookup, namespace, captured)
            if variables is not None:
                return variables
            listed = updated.args[1].value if len(updated.args) == 2 else None
            if (
                isinstance(updated.args[0].value, cst.Name)
                and isinstance(listed, (cst.List, cst.Tuple))
                and listed.elements
                and all(isinstance(e.value, cst.Name) for e in listed.elements)
            ):
                # gradient(target, [x, y]): the list of the gradients for each name
                one = [
                    self.leave_Call(
                        original,
                        updated.with_changes(
                            args=[updated.args[0], cst.Arg(e.value)],
                        ),
                    )
                    for e in listed.elements
                ]
                kind = cst.List if isinstance(listed, cst.List) else cst.Tuple
                return kind([cst.Element(c) for c in one])
            if len(updated.args) < 2 or not all(
                isinstance(a.value, cst.Name) for a in updated.args[:2]
            ):
                source = cst.Module([]).code_for_node(updated)
                raise TransformError(
                    f"the inner tape's gradient {source}: an outer tape differentiates an "
                    "inner tape's gradient of a target named in the inner block, with "
                    "respect to one source that the block uses by name or to Variables "
                    "(one, or a flat list) that it reaches through objects (layer.kernel)"
                )
            tape = tapes[func.value.value]
            key = (updated.args[0].value.value, updated.args[1].value.value)
            if key not in tape._calls:
                raise TransformError(
                    f"the inner tape's gradient of {key[0]} with respect to {key[1]} "
                    "(only one source, named in the block, is supported)"
                )
            fn, params = tape._calls[key]
            alias = f"_inner_gradient_{next(_serial)}"
            # TensorFlow sums a target that is not a scalar: the gradient of the sum
            namespace[alias] = elementwise_grad(fn, key[1])
            renamed = captured.get(func.value.value, {})
            return cst.Call(cst.Name(alias), [cst.Arg(cst.Name(renamed.get(p, p))) for p in params])

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


def _variables_call(
    call: cst.Call,
    tapes: dict[str, Any],
    lookup: Callable[[str], Any] | None,
    namespace: dict[str, Any],
    captured: dict[str, dict[str, str]],
) -> cst.Call | None:
    """``inner.gradient(target, sources)`` where the inner tape differentiated the
    sources in variables mode (Variables reached through objects): a call of a
    :class:`~s2s_ad.tape_nested.VariablesGradient` on the inner function's parameters;
    ``None`` when the inner tape did not."""
    func = call.func
    assert isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
    tape = tapes[func.value.value]
    if lookup is None or not tape._variable_calls or len(call.args) < 2:
        return None
    target, source = call.args[0].value, call.args[1].value
    text = cst.Module([]).code_for_node(call)
    if not isinstance(target, cst.Name):
        return None
    try:
        reads = {n: lookup(n) for n in names(source).reads}
        sources = eval(  # noqa: S307 - the block's own expression, evaluated again
            cst.Module([]).code_for_node(source), {"__builtins__": {}}, reads
        )
    except Exception:  # noqa: BLE001 - not an expression of the block's values
        return None
    found = leaves(sources)
    entry = tape._variable_calls.get((target.value, tuple(id(v) for v in found)))
    if entry is None:
        return None
    nested = isinstance(sources, (list, tuple)) and any(
        isinstance(v, (list, tuple, dict)) for v in sources
    )
    if len(call.args) > 2 or nested or not all(isinstance(v, Variable) for v in found):
        raise TransformError(
            f"the inner tape's gradient {text}: an outer tape differentiates an inner "
            "gradient with respect to Variables reached through objects for one Variable "
            "or a flat list of them, without output_gradients"
        )
    alias = f"_inner_gradient_{next(_serial)}"
    namespace[alias] = entry.function(sources, lambda n: tape._after[n], text)
    renamed = captured.get(func.value.value, {})
    args = [cst.Arg(cst.Name(renamed.get(p, p))) for p in entry.plan.params]
    return cst.Call(cst.Name(alias), args)


def _calls_a_tape(statement: cst.CSTNode, tapes: dict[str, Any]) -> bool:
    """``inner.watch(x)`` and the like: statements about the inner tape, not values."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    expr = statement.body[0]
    return (
        isinstance(expr, cst.Expr)
        and isinstance(expr.value, cst.Call)
        and isinstance(expr.value.func, cst.Attribute)
        and isinstance(expr.value.func.value, cst.Name)
        and expr.value.func.value.value in tapes
    )


def _is_stop_recording(item: cst.BaseExpression) -> bool:
    return (
        isinstance(item, cst.Call)
        and isinstance(item.func, cst.Attribute)
        and item.func.attr.value == "stop_recording"
    )


def build_function(
    block: Block,
    statements: list[cst.CSTNode],
    params: list[str],
    targets: list[str],
    globals_: dict[str, Any],
) -> Any:
    """``def _tape_block(params): <statements>; return target(s)``, compiled under a name
    that ``linecache`` knows (tracebacks and the transformer read its source)."""
    body = "".join(textwrap.dedent(block.source(s)).strip("\n") + "\n" for s in statements)
    if block.tape_names:  # tape.watch(z) in a loop of the block: what it watches is given
        own = "|".join(re.escape(n) for n in sorted(block.tape_names))
        body = re.sub(rf"(?m)^([ \t]*)(?:{own})\.watch\(.*\)[ \t]*$", r"\1pass", body)
    returned = targets[0] if len(targets) == 1 else "(" + ", ".join(targets) + ",)"
    text = (
        f"def _tape_block({', '.join(params)}):\n"
        + textwrap.indent(body or "pass\n", "    ")
        + f"    return {returned}\n"
    )
    filename = f"<s2s_ad:tape {block.filename}:{block.line}:{next(_serial)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    code = compile(text, filename, "exec")
    fn_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(fn_code, globals_, "_tape_block")


def assigns_names(statement: cst.CSTNode) -> bool:
    """Whether a statement only assigns names (``y = f(x)``, ``a, b = g(x)``): no
    attribute or item written, no call made for its effect."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if not isinstance(small, cst.Assign):
            return False
        for target in small.targets:
            node = target.target
            if isinstance(node, (cst.Tuple, cst.List)):
                if not all(isinstance(e.value, cst.Name) for e in node.elements):
                    return False
            elif not isinstance(node, cst.Name):
                return False
    return True


def _method_call(statement: cst.CSTNode, block: Block) -> bool:
    """Whether a statement is one call of ``print`` or of a method of a named object (the
    object's name is added to ``block.receivers``)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return False
    func = small.value.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        block.receivers = (*block.receivers, func.value.value)
        return True
    return False


def from_library(value: Any) -> bool:
    """Whether a module or function belongs to NumPy, the standard library's math and
    random, builtins or s2s_ad (code that reads no Variables of the user's)."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
    elif callable(value):
        module = str(getattr(value, "__module__", "") or "")
    else:
        return False
    return module.split(".")[0] in _LIBRARIES


def leaves(structure: Any) -> list[Any]:
    """The leaves of a nest of lists, tuples and dicts, in order."""
    if isinstance(structure, dict):
        return [leaf for key in structure for leaf in leaves(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in leaves(item)]
    return [structure]


def rebuild(structure: Any, values: Any) -> Any:
    """``structure`` with its leaves replaced, in order, by the items of ``values``."""
    if isinstance(structure, dict):
        return {key: rebuild(structure[key], values) for key in structure}
    if isinstance(structure, (list, tuple)):
        return type(structure)(rebuild(item, values) for item in structure)
    return next(values)
