"""Local functions, lambdas and function factories, inlined where they are called.

* a lambda bound to a name, or a local ``def`` whose body is one ``return``, is inlined
  as an expression with its parameters bound to the call's atoms (:meth:`inline_lambda`);
  when its name is also used as a value (``grad(inner)``, ``map(inner, xs)``) it is
  defined as an opaque lambda too (:meth:`define_local_function`);
* any other local ``def`` is recorded (:meth:`nested_def`) and its body inlined at each
  call, its locals renamed apart once, its final ``return`` an assignment
  (:meth:`inline_def`), the names it declares ``nonlocal`` left as the caller's own; a
  generator runs to its end there, yielding into a list; earlier returns assign the
  call's result and guard what follows them (:meth:`_inline_returning`);
* ``step = make_step(a)`` where ``make_step``, a function of the same module or one
  defined in the function, returns a function it defines: the factory's body is inlined
  and ``step`` becomes that local function (:meth:`factory_call`); ``make_step(a)(x)``
  with a module factory calls such a function at once (:meth:`factory_result_call`).

What cannot be inlined faithfully (recursion, a generator's early return, nested
definitions in branches) is refused with the user's line.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Sequence
from typing import Any, TypeVar

import libcst as cst

from . import ir
from .norm_base import NormalizerBase
from .norm_exits import single_exit
from .norm_queries import (
    all_params,
    declared_nonlocal,
    early_return,
    inner_defs,
    own_nodes,
    single_return,
)
from .norm_scan import NameScan, binding_count, names_read
from .norm_variadic import bind_variadic, expand_kwargs, is_variadic
from .source import parse_function

_Def = TypeVar("_Def", cst.FunctionDef, cst.Lambda)


class InnerFunctions(NormalizerBase):
    """Inlining of local functions and lambdas (a mixin of ``Normalizer``)."""

    def define_local_function(self, name: str, node: cst.Lambda | cst.FunctionDef) -> None:
        """Define a local function that is inlined at its calls but also used as a value
        (``grad(inner)``, ``map(inner, xs)``): as a lambda in the generated code, opaque,
        so that it is refused if it reads a differentiated value."""
        if name not in self.lambda_values:
            return
        if isinstance(node, cst.FunctionDef):
            self.src = self.p.code(node)
            body = single_return(node)
            assert body is not None

            def bare(param: cst.Param) -> cst.Param:
                return param.with_changes(annotation=None)

            params = node.params
            star = params.star_arg
            params = params.with_changes(
                params=[bare(q) for q in params.params],
                posonly_params=[bare(q) for q in params.posonly_params],
                kwonly_params=[bare(q) for q in params.kwonly_params],
                star_arg=bare(star) if isinstance(star, cst.Param) else star,
                star_kwarg=bare(params.star_kwarg) if params.star_kwarg else None,
            )
            node = cst.Lambda(params=params, body=body)
        code = cst.Module([]).code_for_node(node)
        code = " ".join(part.strip() for part in code.splitlines())
        own = {q.name.value for q in all_params(node.params)}
        reads = tuple(r for r in names_read(node.body) if r not in own)
        self.locals.add(name)
        self.assign(name, ir.Opaque(code, reads, f"local function {name!r} used as a value"))

    def frozen_defaults(self, name: str, node: _Def) -> _Def:
        """``node`` with each default that reads a local variable evaluated here, where
        the function is defined (as Python does), into a fresh name the default then
        reads: ``def g(u, c=h[0])`` then ``h = h * 2.0`` leaves ``g``'s ``c`` the old
        ``h[0]``. Defaults of constants, globals and local functions stay as written."""
        params = node.params
        callables = self.lambdas.keys() | self.nested.keys() | self.partials.keys()
        changed: dict[int, cst.Param] = {}
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.default is None or not any(
                n in self.locals and n not in callables for n in names_read(param.default)
            ):
                continue
            value = self.fresh(f"_{name}_{param.name.value}_")
            self.locals.add(value)
            self.src = self.p.code(self.origin.get(param, param))
            self.lower_into(value, param.default)
            self._default_aliases(value, param.default)
            self.default_of[value] = name
            changed[id(param)] = param.with_changes(default=cst.Name(value))
        if not changed:
            return node

        def kept(group: Sequence[cst.Param]) -> list[cst.Param]:
            return [changed.get(id(p), p) for p in group]

        params = params.with_changes(
            posonly_params=kept(params.posonly_params),
            params=kept(params.params),
            kwonly_params=kept(params.kwonly_params),
        )
        frozen = node.with_changes(params=params)
        self.origin[frozen] = self.origin.get(node, node)
        return frozen

    def _default_aliases(self, name: str, default: cst.BaseExpression) -> None:
        """Take over the alias facts of ``name = default`` (``base=h`` names ``h``'s
        array: a later ``h += 1.0`` changes the default too, and is refused as for
        ``base = h``)."""
        stmt = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], default)])
        scan = NameScan()
        stmt.visit(scan)
        self.views |= scan.views
        self.entries |= scan.entries
        self.copies += scan.copies
        self.holders += scan.holders
        self.viewed += scan.viewed

    def nested_def(self, node: cst.FunctionDef) -> None:
        """Record a function defined inside the function: its body is inlined where called."""
        name = node.name.value
        problem = ""
        if node.decorators:
            problem = "a decorated local function"
        elif node.asynchronous is not None:
            problem = "an async local function"
        elif name in self.locals:
            problem = f"local function {name} also assigned"
        elif (
            name in self.nested
            and not (self._top_level(node) and self._top_level(self.nested[name]))
            and not self._inner_top(node)
        ):
            problem = f"local function {name} defined twice, not both at the top of the body"
        elif early_return(node) and own_nodes(node, cst.Yield):
            problem = "a local generator that returns before its last statement"
        if problem:
            raise self.error(problem, node, "define the function at module level")
        inner = self._misplaced_inner_def(node)
        if inner is not None:
            problem = (
                "a class defined inside a local function"
                if isinstance(inner, cst.ClassDef)
                else "a function defined inside a branch, loop or 'with' of a local function"
            )
            raise self.error(problem, inner, "define the function at module level")
        if name in self.nested:  # defined again: the calls after this inline this body
            self.renames.pop(name, None)
        self.nested[name] = self.frozen_defaults(name, node)

    def _misplaced_inner_def(self, node: cst.FunctionDef) -> cst.CSTNode | None:
        """The first definition inside the local function ``node`` that is not a ``def``
        among the statements of its own body (those are bound each time a call's inlined
        body runs, and recorded for :meth:`_inner_top`), or ``None``."""
        top = {id(st) for st in node.body.body if isinstance(st, cst.FunctionDef)}
        found = inner_defs(node)
        for inner in found:
            if id(inner) not in top:
                return inner
        self.inner_top.update(self.origin.get(n, n) for n in found)
        return None

    def _inner_top(self, node: cst.FunctionDef) -> bool:
        """Whether ``node`` is a ``def`` at the top of a local function's body: inlined
        again at each call of that function, where it is defined again, as Python does."""
        return self.origin.get(node, node) in self.inner_top

    def _top_level(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is a statement of the function's own body (not in a branch,
        loop or ``try``): a definition there is bound in order, like an assignment."""
        body = getattr(self.p.node, "body", None)
        return isinstance(body, cst.IndentedBlock) and any(s is node for s in body.body)

    @functools.cached_property
    def _rebound_factories(self) -> set[str]:
        """Names bound several times, each time by a statement of its own at the top level
        of the function's body calling a function factory (``fn = make_affine(*net[0])``
        twice): each binding inlines its factory, the calls after it call what it made."""
        body = getattr(self.p.node, "body", None)
        if not isinstance(self.p.node, cst.FunctionDef) or not isinstance(body, cst.IndentedBlock):
            return set()
        made: dict[str, int] = {}
        for line in body.body:
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Name)
                    and factory_of(self.resolve(small.value.func.value), self.p.globals)
                ):
                    name = small.targets[0].target.value
                    made[name] = made.get(name, 0) + 1
        scan = binding_count(self.p.node)
        return {n for n, k in made.items() if k > 1 and scan.count[n] == k}

    def factory_call(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> bool:
        """``step = make_step(a)``, where ``make_step`` (a function of this module, or a
        local one) ends by
        returning a function it defines: its body is inlined here (its locals renamed
        apart for this call) and ``step`` becomes that local function, inlined where it is
        called. ``step`` must be bound only here and only called."""
        if (
            len(targets) != 1
            or not isinstance(targets[0], cst.Name)
            or not isinstance(value, cst.Call)
            or not isinstance(value.func, cst.Name)
            or self.env
        ):
            return False
        local = self.nested.get(value.func.value) or self.lambdas.get(value.func.value)
        if isinstance(local, cst.Lambda):
            return False  # a lambda returning a lambda: left to inline_lambda
        if not self._bound_here_only(targets[0].value, local):
            return False
        if local is not None:  # a factory defined in the function (a closure over alpha)
            factory = factory_def(local)
        else:
            factory = factory_of(self.resolve(value.func.value), self.p.globals)
        if factory is None:
            return False
        target = targets[0].value
        fdef, inner = factory
        name = fdef.name.value
        if name in self.inlining:
            raise self.error(f"recursive call of {name}", value)
        bound = self._bind_params(fdef, value, name)
        scan = NameScan()
        fdef.body.visit(scan)
        local = sorted((scan.assigned | {p for p, _ in bound}) - {inner})
        rename = {n: self.fresh(f"{name}_{n}_") for n in local}
        rename[inner] = self.reserve(f"{target}_def")
        self.locals.update(v for k, v in rename.items() if k != inner)
        self._bind_inlined(scan, rename, bound)
        renamer = Rename(rename, self.origin)
        body = [stmt.visit(renamer) for stmt in list(fdef.body.body)[:-1]]
        line, src, memo = self.line, self.src, self.memo
        self.inlining.append(name)
        try:
            self.block(body)
        finally:
            self.inlining.pop()
            self.line, self.src, self.memo = line, src, memo
        self.nested[target] = self.nested[rename[inner]]
        return True

    def factory_result_call(self, node: cst.Call) -> ir.Expr | None:
        """``make_loss(t)(h)``: the factory call bound to a fresh local function (as
        :meth:`factory_call` binds ``loss = make_loss(t)``), which is then called; ``None``
        when ``node`` is not such a call."""
        made = node.func
        if (
            self.env
            or not isinstance(made, cst.Call)
            or not isinstance(made.func, cst.Name)
            or made.func.value in self.locals | self.nested.keys() | self.lambdas.keys()
            or factory_of(self.resolve(made.func.value), self.p.globals) is None
        ):
            return None
        name = self.reserve(f"_{made.func.value}_made")
        self._frozen_names.add(name)
        if not self.factory_call([cst.Name(name)], made):
            return None
        call = node.with_changes(func=cst.Name(name))
        self.origin[call] = self.origin.get(node, node)
        return self.inline_def(self.nested[name], call)

    def _bound_here_only(self, target: str, local: cst.FunctionDef | None) -> bool:
        """Whether ``target`` of ``target = factory(...)`` is bound only there (or by one
        such statement per factory call at the top of the body), the bindings inside a
        local factory ``local`` (its own ``def target``) not counted."""
        if target in self._frozen_names | self._rebound_factories:
            return True
        if local is None:
            return False
        scan = binding_count(self.p.node)
        inside = binding_count(self.origin.get(local, local)).count[target]
        return target in scan.calls and scan.count[target] - inside == 1

    def _bind_params(
        self,
        fdef: cst.FunctionDef | cst.Lambda,
        call: cst.Call,
        what: str,
    ) -> list[tuple[str, ir.Atom]]:
        """A call's arguments bound to a function's parameters (defaults filled in; a
        ``*args``/``**kwargs`` parameter to a tuple/dict, :func:`bind_variadic`); ``what``
        names the function in refusals."""
        params = fdef.params
        if is_variadic(params):
            return bind_variadic(self, fdef, call, what)
        call = expand_kwargs(self, call)
        plist = [*params.posonly_params, *params.params, *params.kwonly_params]
        names = [p.name.value for p in plist]
        given: dict[str, cst.BaseExpression | ir.Atom] = {}
        args = self._spread(fdef, call, what, given)
        for pos, arg in enumerate(args):
            key = arg.keyword.value if arg.keyword is not None else None
            if key is None and pos < len(names):
                key = names[pos]
            if key is None or key not in names or key in given:
                raise self.error(f"call of {what} with arguments that do not fit", call)
            given[key] = arg.value
        bound: list[tuple[str, ir.Atom]] = []
        for param in plist:
            value = given.get(param.name.value, param.default)
            if value is None:
                raise self.error(f"call missing argument {param.name.value!r}", call)
            atom = value if isinstance(value, ir.Atom) else self.atom(value)
            bound.append((param.name.value, atom))
        return bound

    def _spread(
        self,
        fdef: cst.FunctionDef | cst.Lambda,
        call: cst.Call,
        what: str,
        given: dict[str, cst.BaseExpression | ir.Atom],
    ) -> list[cst.Arg]:
        """The arguments of ``call`` before a last positional ``*seq``; ``seq`` itself is
        unpacked into the positional parameters after them (into ``given``) when that
        fills exactly the ones without a default not passed by keyword (``f(*net[0])``;
        a sequence of another length raises, as Python does). Any other starred argument
        is refused."""
        stars = [k for k, a in enumerate(call.args) if a.star]
        if not stars:
            return list(call.args)
        k = stars[0]
        arg = call.args[k]
        later = call.args[k + 1 :]
        params = fdef.params
        positional = [p.name.value for p in [*params.posonly_params, *params.params]][k:]
        keywords = {a.keyword.value for a in later if a.keyword is not None}
        fills = [n for n in positional if n not in keywords]
        plain = [p for p in [*params.posonly_params, *params.params] if p.name.value in fills]
        if (
            len(stars) > 1
            or arg.star != "*"
            or any(a.keyword is None for a in later)
            or any(p.default is not None for p in plain)
            or fills != positional[: len(fills)]
        ):
            raise self.error(f"call of {what} with starred arguments", call)
        seq = self.atom(arg.value)
        parts = [self.fresh(f"_{n}_") for n in fills]
        self.locals.update(parts)
        self.emit(ir.Unpack(self.line, self.src, parts, seq))
        given.update({n: ir.Var(v) for n, v in zip(fills, parts)})
        return [*call.args[:k], *later]

    def _bind_inlined(
        self, scan: NameScan, rename: dict[str, str], bound: list[tuple[str, ir.Atom]]
    ) -> None:
        """Take over an inlined body's alias facts under its renamed names, and bind its
        parameters to the caller's atoms (a parameter bound to a variable copies the
        caller's object)."""
        self.views |= {rename[v] for v in scan.views if v in rename}
        self.entries |= {rename[v] for v in scan.entries if v in rename}
        self.copies += [(rename.get(a, a), rename.get(b, b)) for a, b in scan.copies]
        self.holders += [(rename.get(a, a), rename.get(b, b)) for a, b in scan.holders]
        self.viewed += [(rename.get(a, a), rename.get(b, b)) for a, b in scan.viewed]
        for param, atom in bound:
            self.assign(rename[param], ir.Copy(atom))
            if isinstance(atom, ir.Var) and atom.name in self.packs:  # *args or **kwargs
                self.packs[rename[param]] = self.packs[atom.name]
            if isinstance(atom, ir.Var):
                self.copies.append((rename[param], atom.name))

    def inline_def(self, fdef: cst.FunctionDef, call: cst.Call) -> ir.Expr:
        """Inline a call of a local function: its locals renamed apart, its final ``return``
        an assignment. Names it reads from the enclosing function are read where it is
        called, as the closure would."""
        name = fdef.name.value
        if name in self.inlining:
            raise self.error(f"recursive call of the local function {name}", call)
        bound = self._bind_params(fdef, call, "a local function")
        # called from an inlined one-return function: its parameters are not this body's
        env, self.env = self.env, {}
        try:
            return self._inline_body(fdef, bound)
        finally:
            self.env = env

    def _inline_body(self, fdef: cst.FunctionDef, bound: list[tuple[str, ir.Atom]]) -> ir.Expr:
        """The body of a local function inlined at a call, its parameters ``bound``."""
        name = fdef.name.value
        names = [param for param, _ in bound]
        scan = NameScan()
        fdef.body.visit(scan)
        # the functions it defines are its own too (a caller's ``act`` is another one)
        defs = {st.name.value for st in fdef.body.body if isinstance(st, cst.FunctionDef)}
        rename = self.renames.get(name)
        if rename is None:  # one set of names for every call: each call ends before the next
            # a ``nonlocal`` name is the enclosing function's own: written where inlined
            local = sorted((scan.assigned | set(names) | defs) - declared_nonlocal(fdef))
            rename = self.renames[name] = {n: self.reserve(f"{name}_{n}") for n in local}
        self.locals.update(v for k, v in rename.items() if k not in defs)
        self._bind_inlined(scan, rename, bound)
        body = list(fdef.body.body)
        if early_return(fdef):
            return self._inline_returning(fdef, body, Rename(rename, self.origin))
        last = body.pop() if body else None
        result_node: cst.BaseExpression | None = None
        if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return):
            result_node = last.body[-1].value
            if len(last.body) > 1:
                body.append(last.with_changes(body=last.body[:-1]))
        elif last is not None:
            body.append(last)
        renamer = Rename(rename, self.origin)
        renamed = [stmt.visit(renamer) for stmt in body]
        line, src, memo, items = self.line, self.src, self.memo, self.items
        # the body's names are bound again at each call: no expression of an earlier call's
        # (``k * u`` of ``act(h) + act(x)`` in one statement) is reused
        self.memo = {}
        # a generator runs to its end where it is called: the items it yields, as a list
        self.items = self.fresh(f"_{name}_items") if own_nodes(fdef, cst.Yield) else None
        if self.items is not None:
            self._check_ends(fdef)
            self.locals.add(self.items)
            self.assign(self.items, ir.Build("list", []))
        self.inlining.append(name)
        try:
            self.block(renamed)
            result = self.reserve(f"_{name}")
            self.locals.add(result)
            self._locate(last) if last is not None else None
            if self.items is not None:
                self.assign(result, ir.Copy(ir.Var(self.items)))
            elif result_node is None:
                self.assign(result, ir.Copy(ir.Const("None")))
            else:
                self.lower_into(result, result_node.visit(renamer))
        finally:
            self.inlining.pop()
            self.line, self.src, self.memo, self.items = line, src, memo, items
        return ir.Copy(ir.Var(result))

    def _inline_returning(
        self, fdef: cst.FunctionDef, body: list[cst.BaseStatement], renamer: Rename
    ) -> ir.Expr:
        """Inline a local function that returns before its last statement: its body is
        lowered apart, then each ``return`` assigns the call's result and the statements
        after it run under a flag (:func:`single_exit` with ``into``), as for the
        function's own returns."""
        name = fdef.name.value
        renamed = [stmt.visit(renamer) for stmt in body]
        line, src, memo, out = self.line, self.src, self.memo, self.out
        result = self.reserve(f"_{name}")
        self.locals.add(result)
        self.out, self.memo = [], {}
        self.inlining.append(name)
        try:
            self.block(renamed)
            lowered = self.out
            self.line, self.src = line, src
            lowered = single_exit(lowered, self, into=result)
        finally:
            self.inlining.pop()
            self.out = out
            self.line, self.src, self.memo = line, src, memo
        self.out.extend(lowered)
        return ir.Copy(ir.Var(result))

    def inline_lambda(self, lam: cst.Lambda | cst.FunctionDef, call: cst.Call) -> ir.Expr:
        """Inline a call of a local lambda or one-return nested function."""
        bound = dict(self._bind_params(lam, call, "a local function"))
        body = lam.body if isinstance(lam, cst.Lambda) else single_return(lam)
        assert body is not None
        saved = self.env
        self.env = {**saved, **bound}
        try:
            return self.expression(body)
        finally:
            self.env = saved


class Rename(cst.CSTTransformer):
    """Rename a local function's locals apart (attribute names and keywords untouched),
    remembering each renamed node's original for positions and the ``# L`` comments."""

    def __init__(self, names: dict[str, str], origin: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.names, self.origin = names, origin

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.names.get(original_node.value)
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:
        result = super().on_leave(original_node, updated_node)
        if isinstance(result, cst.CSTNode) and result is not original_node:
            self.origin[result] = self.origin.get(original_node, original_node)
        return result


def factory_of(obj: Any, globals_: dict[str, Any]) -> tuple[cst.FunctionDef, str] | None:
    """A function of the same module whose body ends by returning a function it defines
    (and returns nowhere else): its definition and the returned function's name."""
    if (
        not isinstance(obj, types.FunctionType)
        or obj.__globals__ is not globals_
        or obj.__closure__
        or obj.__code__.co_flags & (0x04 | 0x08 | 0x20)  # *args, **kwargs, generator
    ):
        return None
    code = obj.__code__
    if not any(isinstance(c, types.CodeType) for c in code.co_consts):
        return None  # defines no function

    try:
        node = parse_function(obj).node
    except Exception:
        return None
    if not isinstance(node, cst.FunctionDef):
        return None
    return factory_def(node)


def factory_def(node: cst.FunctionDef) -> tuple[cst.FunctionDef, str] | None:
    """For a definition whose body ends by returning a function it defines (and returns
    nowhere else): the definition (a returned lambda made a ``def``) and the returned
    function's name; ``None`` for any other."""
    if node.decorators or node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
        return None
    if node.params.star_kwarg is not None or own_nodes(node, cst.Yield):
        return None
    node = _lambda_as_def(node)
    body = list(node.body.body)
    returned = _final_return(body, cst.Name)
    if returned is None:
        return None
    inner = returned.value
    defs = [st for st in body if isinstance(st, cst.FunctionDef) and st.name.value == inner]
    if len(defs) != 1 or len(own_nodes(node, cst.Return)) != 1:
        return None
    return node, inner


_RETURNED_LAMBDA = "returned_lambda"
_Node = TypeVar("_Node", bound=cst.CSTNode)


def _final_return(body: list[cst.BaseStatement], kind: type[_Node]) -> _Node | None:
    """The value of ``body``'s last statement when it is a lone ``return`` of a ``kind``
    node (``return f``, ``return lambda x: ...``), else ``None``."""
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1):
        return None
    ret = last.body[0]
    if isinstance(ret, cst.Return) and isinstance(ret.value, kind):
        return ret.value
    return None


def _lambda_as_def(node: cst.FunctionDef) -> cst.FunctionDef:
    """A factory ending ``return lambda x: ...`` read as one ending ``def f(x): return ...``
    then ``return f`` (the lambda's parameters and body are the user's nodes)."""
    body = list(node.body.body)
    lam = _final_return(body, cst.Lambda)
    if lam is None:
        return node
    scan = NameScan()
    node.body.visit(scan)
    if _RETURNED_LAMBDA in scan.assigned or _RETURNED_LAMBDA in names_read(node.body):
        return node
    inner = cst.FunctionDef(
        name=cst.Name(_RETURNED_LAMBDA),
        params=lam.params,
        body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(lam.body)])]),
    )
    ret = cst.SimpleStatementLine([cst.Return(cst.Name(_RETURNED_LAMBDA))])
    return node.with_changes(body=node.body.with_changes(body=[*body[:-1], inner, ret]))
