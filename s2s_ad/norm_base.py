"""The state of one lowering and the services every part of it uses.

:class:`NormalizerBase` holds what the lowering of one function knows and builds: the
parsed function and the scan of its names (:mod:`norm_scan`), the reserved names and
fresh temporaries (:meth:`~NormalizerBase.fresh`), the statements emitted so far, the
local functions, partials and lambdas met, the user's line the statements being emitted
come from, and how the non-local names it read resolved (:meth:`~NormalizerBase.resolve`,
:func:`still_resolves`). The parts of the lowering (statements, control flow,
expressions, calls, containers, inner functions) are mixins on this base, composed into
:class:`s2s_ad.normalize.Normalizer`; they call each other's methods through ``self``.
"""

from __future__ import annotations

import builtins
import types
from typing import Any

import libcst as cst

from . import ir
from .codegen import GENERATED_CODES
from .norm_queries import endless_loop
from .norm_scan import NameScan, Prescan
from .partials import Bound
from .source import ParsedFunction, user_lines
from .view_facts import Fact

#: what a non-local name that names nothing resolves to
MISSING = object()


class NormalizerBase:
    """The state of lowering one function (see the module's docstring)."""

    def __init__(self, parsed: ParsedFunction) -> None:
        self.p = parsed
        self.origin: dict[cst.CSTNode, cst.CSTNode] = {}  # renamed node -> the user's node
        self.user_names: dict[str, str] = {}  # a name split apart -> the user's (norm_split)
        #: functions of the module whose bodies are inlined here (class methods)
        self.foreign: list[ParsedFunction] = []
        #: for generated code: its line -> the user's line and source its comments name
        self.generated = user_lines(parsed.filename) or None
        #: (dotted) non-local name -> the object it resolved to while lowering
        self.resolved: dict[tuple[str, ...], Any] = {}
        #: names the function's own import statements bind -> what they bind
        self.imports: dict[str, Any] = {}
        prescan = Prescan(parsed.node)  # the scans below, from one walk of the tree
        scan = prescan.names
        self.reserved = set(scan.all)
        # bound once, and to nothing else (``fn = step`` then ``fn = lambda u: ...``: the
        # first ``fn(x)`` calls step, a variable then)
        self.lambdas = {
            k: v[0]
            for k, v in scan.lambdas.items()
            if len(v) == 1 and scan.bindings[k] == isinstance(v[0], cst.Lambda)
        }
        # local functions also used as values (grad(inner), map(inner, xs)) stay defined
        self.lambda_values = {k for k in self.lambdas if k in scan.value_reads}
        #: names bound to a lambda several times, each time at the top of the body: each
        #: call inlines the lambda bound last (``lambdas`` follows the statements)
        self.rebound_lambdas = _rebound_lambdas(parsed.node, scan)
        self.views = scan.views
        self.entries = scan.entries
        self.copies = scan.copies
        self.holders = scan.holders
        self.viewed = scan.viewed
        self.view_facts: dict[str, Fact] = {}  # name -> the view it is (norm_views)
        self.view_handled: frozenset[str] = frozenset()  # views a write derives again
        self.view_stmt: cst.BaseSmallStatement | None = None  # the user's, being lowered
        self.view_ever: dict[str, set[str]] = {}  # root -> every name bound to a view of it
        self.scan = scan
        self.params = self._params()
        self.locals = scan.assigned | set(self.params)
        #: names holding a list or tuple wherever read (``a + b`` of them concatenates),
        #: parameters that may hold a list or tuple (``a + b`` of two: ``_ad.concat``)
        self.containers, self.maybe_containers = prescan.containers, prescan.maybe_containers
        self._counter = 0
        self.temps: set[str] = set()
        self.shared: set[str] = set()
        self.comp_names: set[str] = set()
        self.memo: dict[str, ir.Atom] = {}
        self.index_parts: list[ir.Atom | tuple[ir.Atom, ...]] = []
        self.env: dict[str, ir.Atom] = {}
        self.line = parsed.first_line
        self.src = ""
        self.out: list[ir.Stmt] = []
        self.nested: dict[str, cst.FunctionDef] = {}  # local defs, inlined where called
        #: defs at the top of a local function's body: defined again at each call inlined
        self.inner_top: set[cst.CSTNode] = set()
        self.partials: dict[str, Bound] = {}  # names of partials, called as their function
        #: a local function's default evaluated where it is defined -> the function's name
        self.default_of: dict[str, str] = {}
        self.renames: dict[str, dict[str, str]] = {}  # local def -> its locals' new names
        self.inlining: list[str] = []
        #: a local function's ``*args`` tuple / ``**kwargs`` dict -> its (key, atom) entries
        self.packs: dict[str, list[tuple[str | None, ir.Atom]]] = {}
        # a generator function: the list its yields fill (see run)
        generator = prescan.generator
        self.items: str | None = self.fresh("_items") if generator else None
        if self.items is not None:
            self.locals.add(self.items)
            assert isinstance(parsed.node, cst.FunctionDef)
            self._check_ends(parsed.node)

    def _check_ends(self, fdef: cst.FunctionDef) -> None:
        """Refuse a generator that never stops (it runs to its end where it is called)."""
        loop = endless_loop(fdef)
        if loop is not None:
            raise self.error(
                "a generator that never stops ('while True' without break or return)",
                loop,
                "give the loop an end (while i < n), or iterate a range",
            )

    def fresh(self, base: str = "_t") -> str:
        """A new temporary name that no user name collides with."""
        while True:
            self._counter += 1
            name = f"{base}{self._counter}"
            if name not in self.reserved:
                self.reserved.add(name)
                return name

    def reserve(self, name: str) -> str:
        """``name`` itself when no name of the source or the normal form has it, else a
        numbered variant."""
        if name in self.reserved:
            return self.fresh(name)
        self.reserved.add(name)
        return name

    def error(self, construct: str, node: cst.CSTNode, hint: str = "") -> Exception:
        """A ``TransformError`` refusing ``construct`` at the user's node ``node`` came from
        (in a function of the module inlined here, at that function's line)."""
        node = self.origin.get(node, node)
        for parsed in self.foreign:
            if parsed.positions.get(node) is not None:
                return parsed.error(construct, node, hint)
        return self.p.error(construct, node, hint)

    def emit(self, stmt: ir.Stmt) -> None:
        """Append a statement to the block being lowered."""
        self.out.append(stmt)

    def assign(self, target: str, value: ir.Expr) -> None:
        """Emit ``target = value`` at the current user line."""
        self.emit(ir.Assign(self.line, self.src, target, value))

    def _params(self) -> list[str]:
        """Parameter names in the order of the signature (``*args`` and ``**kwargs`` keep
        their place: a tuple and a dict inside the function)."""
        params = self.p.node.params
        star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
        starstar = [params.star_kwarg] if params.star_kwarg is not None else []
        ordered = (*params.posonly_params, *params.params, *star, *params.kwonly_params, *starstar)
        return [param.name.value for param in ordered]

    def kept_test(self, test: ir.Atom, branches: list[ir.Stmt]) -> ir.Atom:
        """The test of an ``if`` as a name its branches do not rebind (``if v: v = ...``
        tests a copy): the backward sweep reads the test again to take the same branch."""
        if isinstance(test, ir.Var) and test.name in ir.bound_names(branches):
            kept = self.fresh()
            self.emit(ir.Assign(self.line, self.src, kept, ir.Copy(test)))
            return ir.Var(kept)
        return test

    def resolve(self, name: str) -> Any:
        """The live object a non-local name refers to, or ``MISSING`` (recorded in
        ``resolved``: the normal form holds what the names resolved to)."""
        if name in self.imports:  # bound by the function's own import: always the same
            return self.imports[name]
        obj = lookup_name((name,), self.p.closure, self.p.globals)
        self.resolved.setdefault((name,), obj)
        return obj

    def _stable_root(self, name: str) -> bool:
        """Whether a name resolves to the same object for every function sharing this code.

        Globals do (one module); a closure cell may hold a different object in each
        closure made from the same code, so a callee reached through one is looked up
        when the code runs, unless the cell holds a module (or the code is generated,
        whose cells are fixed by the transform).
        """
        if name not in self.p.closure:
            return True
        if self.p.func.__code__ in _generated_codes():
            return True
        return isinstance(self.resolve(name), types.ModuleType)

    def dotted(self, node: cst.BaseExpression) -> list[str] | None:
        """``a.b.c`` -> ``['a', 'b', 'c']`` when rooted at a non-local name."""
        parts: list[str] = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name) or node.value in self.locals or node.value in self.env:
            return None
        parts.append(node.value)
        return parts[::-1]

    def resolve_dotted(self, parts: list[str]) -> Any:
        """The live object ``a.b.c`` refers to (``MISSING`` if none), recorded as
        :meth:`resolve` does."""
        obj = self.resolve(parts[0])
        if parts[0] in self.imports:
            for part in parts[1:]:
                obj = getattr(obj, part, MISSING) if obj is not MISSING else obj
            return obj
        obj = lookup_name(tuple(parts), self.p.closure, self.p.globals)
        self.resolved.setdefault(tuple(parts), obj)
        return obj


def still_resolves(resolved: dict[tuple[str, ...], Any], func: types.FunctionType) -> bool:
    """Whether every (dotted) name in ``resolved`` names the same object in ``func``'s
    scope (its closure cells, its globals, the builtins) as when it was recorded."""
    closure = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    scope = func.__globals__
    return all(lookup_name(parts, closure, scope) is obj for parts, obj in resolved.items())


def lookup_name(parts: tuple[str, ...], closure: dict[str, Any], scope: dict[str, Any]) -> Any:
    """The object a dotted non-local name refers to, or ``MISSING``."""
    cell = closure.get(parts[0])
    if cell is not None:
        try:
            obj = cell.cell_contents
        except ValueError:
            return MISSING
    elif parts[0] in scope:
        obj = scope[parts[0]]
    else:
        obj = getattr(builtins, parts[0], MISSING)
    for part in parts[1:]:
        if obj is MISSING:
            break
        obj = getattr(obj, part, MISSING)
    return obj


def _generated_codes() -> set[Any]:
    """The code objects of the functions the transformer generated."""
    return GENERATED_CODES


def _rebound_lambdas(node: cst.CSTNode, scan: NameScan) -> set[str]:
    """Names bound only to lambdas, more than once, each binding a statement of its own at
    the top level of the function's body (``fn = lambda u: ...`` again after the names it
    reads changed), and never read but to be called."""
    body = getattr(node, "body", None)
    if not isinstance(node, cst.FunctionDef) or not isinstance(body, cst.IndentedBlock):
        return set()
    top = {
        id(small.value)
        for line in body.body
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
        if isinstance(small, cst.Assign)
    }
    return {
        name
        for name, found in scan.lambdas.items()
        if len(found) > 1
        and scan.bindings[name] == len(found)
        and all(isinstance(n, cst.Lambda) and id(n) in top for n in found)
        and name not in scan.value_reads
    }
