"""``*args`` and ``**kwargs`` of local functions, bound where a call is inlined.

A local function's ``*parts`` is bound to a tuple of the call's extra positional atoms
(or to the sequence ``seq`` of a call ``h(a, *seq)`` that fills the named parameters
first), its ``**weights`` to a dict of the call's extra keywords. The entries of such a
tuple or dict are known where it is made: a call ``fn(*args, **kw)`` inside the body
passes the atoms they were made of, as positionals and keywords, so a function
forwarding its arguments (a decorator's wrapper) is inlined too, unless the body rebinds
them or writes the dict (then a starred call is refused as before).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from . import ir

if TYPE_CHECKING:
    from .norm_inline import InnerFunctions

#: methods of a dict that change its keys
_WRITES = frozenset({"pop", "popitem", "update", "setdefault", "clear", "__setitem__"})


def is_variadic(params: cst.Parameters) -> bool:
    """Whether a signature has a ``*args`` or a ``**kwargs`` parameter."""
    return isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None


def bind_variadic(
    norm: InnerFunctions, fdef: cst.FunctionDef | cst.Lambda, call: cst.Call, what: str
) -> list[tuple[str, ir.Atom]]:
    """A call's arguments bound to the parameters of ``fdef``, which has ``*args`` or
    ``**kwargs``: named parameters as :meth:`_bind_params` binds them, the star parameter
    to a tuple of the extra positional atoms, the double-star one to a dict of the extra
    keywords (their entries recorded in ``norm.packs``)."""
    params = fdef.params
    star = params.star_arg if isinstance(params.star_arg, cst.Param) else None
    kwstar = params.star_kwarg
    positional = [p.name.value for p in [*params.posonly_params, *params.params]]
    keyword_ok = {p.name.value for p in [*params.params, *params.kwonly_params]}
    plist = [*params.posonly_params, *params.params, *params.kwonly_params]
    given: dict[str, cst.BaseExpression] = {}
    extras: list[cst.BaseExpression] = []
    spread: cst.BaseExpression | None = None
    extra_kw: dict[str, cst.BaseExpression] = {}
    count = 0
    for arg in expand_kwargs(norm, call).args:
        if arg.star == "*":
            if star is None or spread is not None or extras or count < len(positional):
                raise norm.error(f"call of {what} with starred arguments", call)
            spread = arg.value
        elif arg.star:
            raise norm.error(f"call of {what} with starred arguments", call)
        elif arg.keyword is None:
            if spread is not None:
                raise norm.error(f"call of {what} with starred arguments", call)
            if count < len(positional):
                given[positional[count]] = arg.value
            elif star is not None:
                extras.append(arg.value)
            else:
                raise norm.error(f"call of {what} with arguments that do not fit", call)
            count += 1
        else:
            key = arg.keyword.value
            if key in given or key in extra_kw:
                raise norm.error(f"call of {what} with arguments that do not fit", call)
            if key in keyword_ok:
                given[key] = arg.value
            elif kwstar is not None:
                extra_kw[key] = arg.value
            else:
                raise norm.error(f"call of {what} with arguments that do not fit", call)
    bound: list[tuple[str, ir.Atom]] = []
    for param in plist:
        value = given.get(param.name.value, param.default)
        if value is None:
            raise norm.error(f"call missing argument {param.name.value!r}", call)
        bound.append((param.name.value, norm.atom(value)))
    if star is not None:
        if spread is not None:
            atom = norm.atom(spread)
        else:
            atoms = [norm.atom(e) for e in extras]
            atom = _build(norm, "tuple", atoms, [])
            if not _rebinds(fdef, star.name.value, entries=False):
                norm.packs[atom.name] = [(None, a) for a in atoms]
        bound.append((star.name.value, atom))
    if kwstar is not None:
        atoms = [norm.atom(v) for v in extra_kw.values()]
        atom = _build(norm, "dict", atoms, [repr(k) for k in extra_kw])
        if not _rebinds(fdef, kwstar.name.value, entries=True):
            norm.packs[atom.name] = list(zip(extra_kw, atoms))
        bound.append((kwstar.name.value, atom))
    return bound


def _build(norm: InnerFunctions, kind: str, elts: list[ir.Atom], keys: list[str]) -> ir.Var:
    """A fresh variable holding a tuple or dict of ``elts``."""
    name = norm.fresh(f"_{kind}")
    norm.locals.add(name)
    norm.assign(name, ir.Build(kind, elts, keys))
    return ir.Var(name)


def _rebinds(fdef: cst.FunctionDef | cst.Lambda, name: str, entries: bool) -> bool:
    """Whether the body of ``fdef`` rebinds its parameter ``name``, or (with ``entries``,
    for a dict) may change its keys: writes or deletes an entry, calls a method that does,
    passes it unstarred to a call."""

    class Scan(cst.CSTVisitor):
        found = False

        def _is(self, node: cst.BaseExpression) -> bool:
            return isinstance(node, cst.Name) and node.value == name

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._target(node.target)

        def visit_Del(self, node: cst.Del) -> None:
            self._target(node.target)

        def visit_For(self, node: cst.For) -> None:
            self._target(node.target)

        def _target(self, target: cst.BaseExpression) -> None:
            base = target.value if entries and isinstance(target, cst.Subscript) else target
            if self._is(base) or any(
                isinstance(n, cst.Name) and n.value == name for n in _names(target)
            ):
                self.found = True

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if entries and self._is(node.value) and node.attr.value in _WRITES:
                self.found = True

        def visit_Arg(self, node: cst.Arg) -> None:
            if entries and self._is(node.value) and not node.star:
                self.found = True

    scan = Scan()
    (fdef.body if isinstance(fdef, cst.FunctionDef) else fdef.body).visit(scan)
    return scan.found


def _names(node: cst.CSTNode) -> list[cst.Name]:
    """The names in a target (``a, (b, c)``)."""
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for el in node.elements for n in _names(el.value)]
    if isinstance(node, cst.StarredElement):
        return _names(node.value)
    return []


def expand_kwargs(norm: InnerFunctions, call: cst.Call) -> cst.Call:
    """``call`` with each ``*args`` and ``**kw`` whose entries are known (a local
    function's ``*args``/``**kwargs``, see :func:`bind_variadic`) written out as the
    atoms they were made of (``fn(*args, **kw)`` as ``fn(_t1, x, gain=_t2)``)."""
    args: list[cst.Arg] = []
    changed = False
    for arg in call.args:
        pack = _known_pack(norm, arg.value) if arg.star else None
        if pack is None or any((key is None) != (arg.star == "*") for key, _ in pack):
            args.append(arg)
            continue
        changed = True
        for key, atom in pack:
            value = cst.parse_expression(str(atom))
            if key is None:
                new = cst.Arg(value=value)
            else:
                new = cst.Arg(value=value, keyword=cst.Name(key), equal=cst.AssignEqual())
            norm.origin[new] = norm.origin.get(arg, arg)
            norm.origin[value] = norm.origin.get(arg.value, arg.value)
            args.append(new)
    if not changed:
        return call
    new_call = call.with_changes(args=args)
    norm.origin[new_call] = norm.origin.get(call, call)
    return new_call


def _known_pack(
    norm: InnerFunctions, value: cst.BaseExpression
) -> list[tuple[str | None, ir.Atom]] | None:
    """The entries of the tuple or dict ``value`` names when known (``None`` keys for a
    tuple's)."""
    if not isinstance(value, cst.Name):
        return None
    name = value.value
    atom = norm.env.get(name)
    if isinstance(atom, ir.Var):
        name = atom.name
    return norm.packs.get(name)
