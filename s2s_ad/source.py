"""Live function -> parsed libcst tree, with the file, line offsets, globals and closure.

``parse_function`` is the only entry point. It reads the source of the function object
it is given (never of what ``__wrapped__`` points to: a decorator's wrapper is what runs,
so it is what is differentiated), from ``inspect`` for a ``def`` and from the whole file
for a lambda, which is then located among the lambdas of its line by the code object's
instruction positions. It dedents the text, parses it with libcst and resolves positions
once.

The text read is checked against the code that runs: it is compiled (in a context with
the function's free variables and enclosing class) and compared with ``func.__code__``,
so a file edited after its module was imported is refused rather than differentiated in
place of the code that actually runs.
"""

from __future__ import annotations
import __future__

import dis
import functools
import inspect
import linecache
import re
import textwrap
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import StaleSourceError, TransformError

if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import CodeRange

# libcst is imported where a source is parsed: importing this module (as ``import
# s2s_ad`` does) stays cheap.


@dataclass
class ParsedFunction:
    """A user function ready for normalization.

    Attributes:
        func: The live function object.
        node: Its ``FunctionDef`` or ``Lambda`` node.
        module: The parsed module the node belongs to (for ``code_for_node``).
        positions: Position metadata for the original nodes of ``module``.
        filename: File of the source.
        line_offset: Added to a module line number to get the file line number.
        col_offset: Added to a module column to get the file column (dedent).
        name: Function name (``"<lambda>"`` for lambdas).
        globals: The function's module globals.
        closure: Free variable name -> cell.
    """

    func: Any
    node: cst.FunctionDef | cst.Lambda
    module: cst.Module
    positions: Any
    filename: str
    line_offset: int
    col_offset: int
    name: str
    globals: dict[str, Any]
    closure: dict[str, Any] = field(default_factory=dict)

    def position(self, node: cst.CSTNode) -> tuple[int, int | None]:
        """File line and column of an original node (``(line, None)`` when unknown)."""
        rng: CodeRange | None = self.positions.get(node)
        if rng is None:
            return self.first_line, None
        return rng.start.line + self.line_offset, rng.start.column + self.col_offset

    @property
    def first_line(self) -> int:
        rng = self.positions.get(self.node)
        return (rng.start.line if rng else 1) + self.line_offset

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node, on one line (without the comment lines above it)."""
        text = self.positions.line_text(node)
        if text is not None:  # an original statement line: its text as written
            return text
        text = _dotted(node)
        if text is not None:  # ``np.linalg.norm``: the names and dots
            return text
        if hasattr(node, "leading_lines"):
            node = node.with_changes(leading_lines=())
        text = self.module.code_for_node(node)
        return " ".join(part.strip() for part in text.splitlines()) if "\n" in text else text

    def returns_value(self) -> bool:
        """Whether the function can return a value (see :func:`returns_value`)."""
        found = self.positions.returns_value(self.node)
        return returns_value(self.node) if found is None else found

    def error(
        self, construct: str, node: cst.CSTNode | None = None, hint: str = ""
    ) -> TransformError:
        """A ``TransformError`` pointing at ``node`` (or the function's first line)."""
        if node is None:
            return TransformError(construct, self.filename, self.first_line, None, hint)
        line, col = self.position(node)
        return TransformError(construct, self.filename, line, col, hint)


def _dotted(node: cst.CSTNode) -> str | None:
    """The text of a name or a dotted name (``np.linalg.norm``) written without spaces,
    parentheses or line breaks (as libcst writes it), else ``None``."""
    import libcst as cst

    parts = []
    while type(node) is cst.Attribute:
        dot = node.dot
        if (
            node.lpar
            or node.rpar
            or not (_tight(dot.whitespace_before) and _tight(dot.whitespace_after))
        ):
            return None
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name or node.lpar or node.rpar:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _tight(space: Any) -> bool:
    import libcst as cst

    return type(space) is cst.SimpleWhitespace and space.value == ""


def _no_source(func: Any, why: str) -> TransformError:
    name = getattr(func, "__qualname__", None) or repr(func)
    return TransformError(
        f"{name}: {why}",
        getattr(getattr(func, "__code__", None), "co_filename", "<unknown>"),
        getattr(getattr(func, "__code__", None), "co_firstlineno", 0),
        hint=f"register a gradient rule with s2s_ad.defgrad({name}, rule)",
    )


@functools.lru_cache(maxsize=64)
def _parse_file(filename: str, text: str) -> tuple[cst.Module, Any]:
    import libcst as cst

    from .positions import Positions

    module = cst.parse_module(text)
    return module, Positions(module, text)


_COMMENT = re.compile(r"\s*# L(\d+): (.*)")
_ORIGIN = re.compile(r"# generated by s2s_ad (?:\([^)]*\) )?from (.+?:\d+)")


@functools.lru_cache(maxsize=256)
def user_lines(filename: str) -> dict[int, tuple[int, str]]:
    """For code s2s_ad generated (``<s2s_ad:...>`` files): generated line -> the user's
    line and source that its ``# L<n>: <source>`` comment names (the nearest comment above
    it in the same sweep). Code under no such comment (the seed, a sweep's own
    bookkeeping) is not in the map. Empty for any other file."""
    if not filename.startswith("<s2s_ad:"):
        return {}
    out: dict[int, tuple[int, str]] = {}
    current: tuple[int, str] | None = None
    for number, line in enumerate(linecache.getlines(filename), start=1):
        text = line.strip()
        found = _COMMENT.match(line)
        if found:
            current = (int(found.group(1)), found.group(2).rstrip())
        elif text.startswith(("def ", "# forward sweep", "# backward sweep")):
            current = None
        elif text and not text.startswith("#") and current is not None:
            out[number] = current
    return out


def user_origin(filename: str, first_line: int) -> str:
    """``file:line`` of the user's function: for generated code, the one its header names."""
    origin = f"{filename}:{first_line}"
    for _ in range(8):  # generated from generated code (grad of grad, jvp of grad): its user's
        lines = linecache.getlines(filename) if filename.startswith("<s2s_ad:") else []
        found = _ORIGIN.match(lines[0]) if lines else None
        if found is None:
            break
        origin = found.group(1)
        filename = origin.rsplit(":", 1)[0]
    return origin


def parse_function(func: Any) -> ParsedFunction:
    """Parse a live Python function or lambda.

    Args:
        func: A Python function. Decorators are not unwrapped: the source read is the one
            of ``func`` itself (for a ``functools.wraps`` wrapper, the wrapper's).

    Returns:
        The parsed function.

    Raises:
        TransformError: When the function has no readable source, or when the source
            file no longer holds the code that runs (edited after import).
    """
    import libcst as cst

    code = getattr(func, "__code__", None)
    if not isinstance(func, types.FunctionType) or code is None:
        raise _no_source(func, "has no Python source (builtin or C function)")
    closure = {}
    if func.__closure__:
        closure = dict(zip(code.co_freevars, func.__closure__))
    if code.co_name == "<lambda>":
        return _parse_lambda(func, code, closure)
    own = _registered(code)
    found = own or _block(func)
    for attempt in ("quick", "inspect"):
        if found is None:
            try:
                # from the code object: inspect.getsourcelines(func) would follow __wrapped__
                found = inspect.getsourcelines(code)
            except (OSError, TypeError) as exc:
                raise _no_source(func, f"source is not available ({exc})") from None
        lines, start = found
        raw = "".join(lines)
        text = textwrap.dedent(raw)
        col_offset = len(lines[0]) - len(lines[0].lstrip()) if text != raw else 0
        try:
            module, positions = _parse_file(code.co_filename + ":" + str(start), text)
            break
        except cst.ParserSyntaxError as exc:
            if attempt == "inspect":
                raise _no_source(func, f"source could not be parsed ({exc.message})") from None
            found = None  # lines past the last instruction cut short (a string): inspect
    node = next((s for s in module.body if isinstance(s, cst.FunctionDef)), None)
    if node is None:
        raise _no_source(func, "source is not a function definition")
    if own is None:
        _check_current(func, text)
    return ParsedFunction(
        func,
        node,
        module,
        positions,
        code.co_filename,
        start - 1,
        col_offset,
        code.co_name,
        func.__globals__,
        closure,
    )


_HEAD = re.compile(r"\s*(@|def\s|async\s+def\s)")


def _block(func: types.FunctionType) -> tuple[list[str], int] | None:
    """The lines of ``func``'s ``def`` (decorators included) and the number of the first,
    as ``inspect.getsourcelines`` gives them, found without tokenizing the file: its
    lines up to the last one the code's instructions span, then those after it that are
    blank, comments or indented under the ``def``, less the blank lines and the comments
    less indented than the body at the end. ``None`` unless the file holds the code that
    runs (:func:`_in_file`) and its line starts the function as expected: ask ``inspect``."""
    code = func.__code__
    filename = code.co_filename
    linecache.checkcache(filename)
    if not _in_file(func):
        return None  # the instructions' lines are not those of the file
    lines = linecache.getlines(filename, func.__globals__)
    start = code.co_firstlineno
    if not 1 <= start <= len(lines) or not _HEAD.match(lines[start - 1]):
        return None
    last = _last_line(code)
    if last < start or last > len(lines):
        return None
    first = lines[start - 1]
    indent = len(first) - len(first.lstrip())
    end = last
    while end < len(lines):
        text = lines[end]
        stripped = text.strip()
        if stripped and not stripped.startswith("#") and len(text) - len(text.lstrip()) <= indent:
            break
        end += 1
    # comments at the end belong to the block when indented as much as its body (the
    # line of its first instruction past the first line; none for a one-line ``def``)
    first_body = min(
        (line for _, _, line in code.co_lines() if line is not None and line > start),
        default=None,
    )
    body = len(lines[first_body - 1]) - len(lines[first_body - 1].lstrip()) if first_body else 0
    while end > last:
        text = lines[end - 1]
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            break  # code without instructions (a docstring, ``pass``)
        if stripped and first_body and len(text) - len(text.lstrip()) >= max(body, indent + 1):
            break
        end -= 1
    return lines[start - 1 : end], start


def _last_line(code: types.CodeType) -> int:
    """The last line the instructions of ``code`` (nested code included) span."""
    last = 0
    for _, end, _, _ in code.co_positions():
        if end is not None and end > last:
            last = end
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            last = max(last, _last_line(const))
    return last


def _registered(code: types.CodeType) -> tuple[list[str], int] | None:
    """The source s2s_ad compiled a function from (a helper whose inner tapes were
    rewritten, see ``tape_inner``), or ``None``."""
    import sys

    inner = sys.modules.get("s2s_ad.tape_inner")
    return None if inner is None else inner.SOURCES.get(code)


# --- is the text read the code that runs? ------------------------------------------------

_FUTURE_FLAGS = functools.reduce(
    lambda acc, name: acc | getattr(__future__, name).compiler_flag, __future__.all_feature_names, 0
)
_CHECKED: dict[tuple[types.CodeType, str], bool] = {}


def _check_current(func: types.FunctionType, text: str) -> None:
    """Refuse ``func`` when ``text`` (its source as read now) does not compile to the code
    that runs: the file was edited (or replaced) after the function was defined.

    The text is compiled in a context that reproduces the function's scope (its free
    variables as locals of an enclosing function, its class for private-name mangling)
    and the code objects are compared: bytecode, constants, names and variables. The
    result is cached by code object and text.

    Raises:
        TransformError: When they differ.
    """
    code = func.__code__
    if code.co_filename.startswith("<s2s_ad"):
        return  # generated code: compiled from the very text registered for it
    key = (code, text)
    same = _CHECKED.get(key)
    if same is None:
        same = _CHECKED[key] = _in_file(func) or _compiles_to(text, code, func.__qualname__)
    if not same:
        raise StaleSourceError(
            f"{func.__qualname__}: its source file changed since the function was defined "
            "(the text read now does not compile to the code that runs)",
            code.co_filename,
            code.co_firstlineno,
            hint="reload the module (importlib.reload) or restart the interpreter",
        )


def _in_file(func: types.FunctionType) -> bool:
    """Whether the file ``func`` was read from, compiled whole, holds the very code that
    runs at its line (the same bytecode: a quick check, the usual case). Compiled alone,
    the text gives other instructions for calls of a module the file imports (``np.sin``):
    :func:`_compiles_to` compares instruction by instruction, more slowly."""
    code = func.__code__
    if _assertions_rewritten(code):
        return False  # pytest's module: compiled from another tree
    compiled = _file_code(code.co_filename, "".join(linecache.getlines(code.co_filename)))
    if compiled is None:
        return False
    line, bytecode = code.co_firstlineno, code.co_code
    return any(
        c.co_firstlineno == line and c.co_code == bytecode and _same_code(c, code)
        for c in _code_objects(compiled, code.co_name)
    )


@functools.lru_cache(maxsize=8)
def _file_code(filename: str, text: str) -> types.CodeType | None:
    """A source file's text compiled (``None`` when it does not compile)."""
    try:
        return compile(text, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None


def _compiles_to(text: str, code: types.CodeType, qualname: str) -> bool:
    parts = qualname.split(".")
    klass = parts[-2] if len(parts) >= 2 and parts[-2] != "<locals>" else None
    src = text
    if klass is not None:
        src = f"class {klass}:\n" + textwrap.indent(src, "    ")
    free = [v for v in code.co_freevars if not (v == "__class__" and klass is not None)]
    if free:
        define = " = ".join([*free, "None"])
        src = "def _s2s_scope():\n    " + define + "\n" + textwrap.indent(src, "    ")
    flags = code.co_flags & _FUTURE_FLAGS
    try:
        if _assertions_rewritten(code):
            compiled = _compile_rewritten(src, code.co_filename, flags)
        else:
            compiled = compile(src, code.co_filename, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, ImportError):
        return False
    return any(_same_code(c, code) for c in _code_objects(compiled, code.co_name))


def _assertions_rewritten(code: types.CodeType) -> bool:
    """Whether pytest rewrote the ``assert`` statements of the module ``code`` comes from
    (its test modules and conftest files): the running code then names pytest's helpers."""
    if "@pytest_ar" in code.co_names or any(v.startswith("@py_assert") for v in code.co_varnames):
        return True
    return any(_assertions_rewritten(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _compile_rewritten(src: str, filename: str, flags: int) -> types.CodeType:
    """Compile ``src`` as pytest compiles a test module: asserts rewritten."""
    import ast

    from _pytest.assertion.rewrite import rewrite_asserts

    tree = ast.parse(src, filename)
    rewrite_asserts(tree, src.encode(), filename)
    return compile(tree, filename, "exec", flags=flags, dont_inherit=True)


def _code_objects(code: types.CodeType, name: str) -> list[types.CodeType]:
    """The code objects named ``name`` nested (at any depth) in ``code``."""
    out = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                out.append(const)
            out.extend(_code_objects(const, name))
    return out


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two code objects do the same thing (positions aside)."""
    if (
        a.co_names != b.co_names
        or a.co_varnames != b.co_varnames
        or sorted(a.co_freevars) != sorted(b.co_freevars)
        or sorted(a.co_cellvars) != sorted(b.co_cellvars)
        or (a.co_argcount, a.co_posonlyargcount, a.co_kwonlyargcount)
        != (b.co_argcount, b.co_posonlyargcount, b.co_kwonlyargcount)
        or len(a.co_consts) != len(b.co_consts)
    ):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or repr(x) != repr(y):
            return False
    return a.co_code == b.co_code or _instructions(a) == _instructions(b)


# Instructions whose choice depends on source positions, not on meaning: the compiler
# picks a method call's form from line numbers, and an AST rewritten by an import hook
# (pytest's assertion rewriting) carries other positions than the text.
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_LAYOUT = {"NOP", "CACHE", "EXTENDED_ARG", "PUSH_NULL", "PRECALL", "RESUME"}


def _instructions(code: types.CodeType) -> list[tuple[str, str]]:
    """The instructions of ``code`` with layout-dependent details removed."""
    out = []
    for ins in dis.get_instructions(code):
        name = ins.opname
        if name in _LAYOUT:
            continue
        name = name.replace("LOAD_METHOD", "LOAD_ATTR")
        if ins.opcode in _JUMPS:  # targets are offsets, which the layout shifts
            name = name.replace("_FORWARD", "").replace("_BACKWARD", "")
            out.append((name.replace("_NO_INTERRUPT", ""), ""))
            continue
        out.append((name, repr(ins.argval) if not isinstance(ins.argval, types.CodeType) else ""))
    return out


def _parse_lambda(func: Any, code: types.CodeType, closure: dict[str, Any]) -> ParsedFunction:
    import libcst as cst

    filename = code.co_filename
    text = "".join(linecache.getlines(filename, func.__globals__))
    if not text:
        raise _no_source(func, "source is not available")
    try:
        module, positions = _parse_file(filename, text)
    except cst.ParserSyntaxError as exc:
        raise _no_source(func, f"source could not be parsed ({exc.message})") from None
    finder = _visitors()[0]()
    module.visit(finder)
    line = code.co_firstlineno
    candidates = [
        n for n in finder.found if positions[n].start.line <= line <= positions[n].end.line
    ]
    spans = [
        (ln, col)
        for ln, _, col, end in getattr(code, "co_positions", lambda: [])()
        if ln is not None and col is not None and (col, end) != (0, 0)  # not RESUME's
    ]
    if spans:
        # The body's instructions all lie inside the lambda's body; its first one gives
        # the start. Columns are UTF-8 offsets; sources here are nearly always ASCII.
        start = min(spans)

        def contains(n: cst.Lambda) -> bool:
            rng = positions[n.body]
            return (rng.start.line, rng.start.column) <= start <= (rng.end.line, rng.end.column)

        inner = [n for n in candidates if contains(n)]
        inner.sort(key=lambda n: (positions[n].start.line, positions[n].start.column))
        candidates = inner[-1:] if inner else candidates
    if len(candidates) != 1:
        raise _no_source(func, "several lambdas share its line and none could be singled out")
    _check_current(func, "(\n" + module.code_for_node(candidates[0]) + "\n)")
    return ParsedFunction(
        func,
        candidates[0],
        module,
        positions,
        filename,
        0,
        0,
        "<lambda>",
        func.__globals__,
        closure,
    )


@functools.cache
def _visitors() -> tuple[type, type]:
    """The libcst visitors of this module (classes made at first use, with libcst)."""
    import libcst as cst

    class LambdaFinder(cst.CSTVisitor):
        """The lambdas of a module, in source order."""

        def __init__(self) -> None:
            self.found: list[cst.Lambda] = []

        def visit_Lambda(self, node: cst.Lambda) -> None:
            self.found.append(node)

    class ReturnsValue(cst.CSTVisitor):
        """Whether some ``return`` of the function (not of a nested one) gives a value."""

        def __init__(self) -> None:
            self.found = False
            self.depth = 0

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.depth += 1
            return self.depth == 1

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.depth -= 1

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            value = node.value
            if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
                self.found = True

    return LambdaFinder, ReturnsValue


def returns_value(node: cst.FunctionDef | cst.Lambda) -> bool:
    """Whether the function ``node`` can return a value: a lambda returns its expression,
    a ``def`` when some ``return`` of its own (not of a nested function) gives one."""
    import libcst as cst

    if not isinstance(node, cst.FunctionDef):
        return True
    visitor = _visitors()[1]()
    node.visit(visitor)
    return visitor.found
