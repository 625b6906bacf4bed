"""What the reverse and the forward pass share: naming, rendering, refusals, comments.

:class:`SweepBase` takes one normalized function apart (its body without the final
``return``, the output variable, the activity analysis, the scalar variables) and gives
the generated code its names (fresh ones never clash with the user's, module helpers
keep the user's name when it is the same object), renders IR expressions as Python
source, and refuses what neither pass models. :class:`~s2s_ad.reverse.Reverse` and
:class:`~s2s_ad.forward.Forward` are siblings on it.
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Callable, Mapping
from typing import Any

from . import ir, irtrees
from .analysis import Activity, analyze, attribute_store, call_writes, classify, walk
from .call_plans import CallPlan, assigned
from .codegen import Comment, Item, Push
from .errors import TransformError
from .ir import expr_atoms
from .list_copies import own_unpacked_lists
from .object_state import (
    STATE,
    StoredState,
    attribute_held,
    attribute_writes_only,
    container_method,
    state_calls,
)
from .rules.registry import Rule
from .source import user_origin
from .value_kinds import Queried, scalar_vars

#: ``(callee, parameter names) -> pair of generated halves`` for user functions.
Resolver = Callable[[Any, tuple[str, ...]], Any]
#: Parameters that take axes, shapes, flags or names (NumPy refuses a float there, or reads
#: only its truth value): a differentiated value flowing in has no gradient to give.
STRUCTURAL = frozenset(
    "index axis axes axis1 axis2 keepdims dtype shape newshape reps "
    "num decimals order kind mode out where retstep endpoint subscripts source destination "
    # booleans whatever flows into them (np.where's, np.compress's, np.select's)
    "condition condlist".split()
)
#: Integer parameters that also take a float without complaint: ``polygamma(n, x)``, a
#: Poisson's ``k``, ``np.triu(m, k)``, ``np.repeat``'s counts, ``np.take``'s indices, and
#: ``np.linalg.norm``'s ``ord`` (on which a vector norm depends smoothly); ``np.roll``'s
#: ``shift`` (an integer, often a loop counter read back from a tape in code
#: differentiated twice), ``np.pad``'s widths (its transformed VJP pads index arrays).
#: A differentiated value there is refused: its gradient would silently be zero.
COUNTS = frozenset("n k ord repeats indices shift pad_width stat_length".split())
#: A dict's key (``d.get(key, 0.0)``): a key read back from a tape in code differentiated
#: again looks differentiated and is left out there; in the user's code it is refused.
KEYS = frozenset(["key"])
_COMPOUND = (ir.If, ir.For, ir.While)
#: Where the library's own source lives (its helpers are transformed for third derivatives).
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def ident(obj: Any) -> str:
    """A name for generated code derived from an object's ``__name__`` (``<lambda>`` -> lambda)."""
    name = getattr(obj, "__name__", "f")
    return name if name.isidentifier() else "lambda"


#: Methods that change a list, dict, set or array in place.
MUTATING = frozenset(
    {
        *("append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort"),
        *("update", "setdefault", "popitem", "add", "discard", "fill", "put", "resize"),
    }
)


class SweepBase:
    """One function's parts, names and rendering, for one set of ``wrt`` parameters."""

    #: Whether a later sweep reads values again (``self.w`` in the backward sweep), so
    #: that a state write between (``self.w = ...``, ``self.calls += 1``) is refused.
    reads_again = True
    #: Whether a user line whose statement becomes several (its tangent's code after it)
    #: has its ``# L<n>:`` comment: a refusal raised there then names its own line.
    comment_pairs = False

    def __init__(
        self,
        fn: ir.Function,
        wrt: list[str],
        resolver: Resolver,
        has_aux: bool = False,
        scalars: frozenset[str] = frozenset(),
        user_globals: dict[str, Any] | None = None,
        vectors: frozenset[str] = frozenset(),
        pure: bool = False,
        variables: bool | str = False,
    ) -> None:
        self.fn = fn
        # variables mode (tapes): Variables read through attributes get their adjoints
        self.variables = variables
        # pure: no in-place updates of adjoints (code that will be differentiated again)
        self.pure = pure
        self.user_globals = user_globals or {}
        #: Global names of user functions a gradient differentiated again calls, and the
        #: functions they named when it was made (its cached code is made again when one
        #: is rebound: a loop at module level, a notebook cell run again).
        self.pinned: dict[str, Any] = {}
        self.wrt = wrt
        self.resolver = resolver
        self.reserved = set(fn.names) | set(fn.params)
        self.bindings: dict[str, Any] = dict(fn.imports)  # what the body imports itself
        self._fwd_enclosing: tuple[int, str] | None = None
        body = own_unpacked_lists(list(fn.body))
        seeds: set[str] = set()
        if variables == STATE:  # calls made for their effect on objects: differentiated
            body, seeds = state_calls(body, self.mint, fn.filename)
        self.state_seeds = frozenset(seeds)
        ret = body.pop()
        assert isinstance(ret, ir.Return)
        self.ret_stmt = ret
        out_atom = ret.value
        if has_aux:
            value = self.mint("value")
            aux = self.mint("aux")
            if not isinstance(out_atom, ir.Var):
                raise TransformError("has_aux output that is not a pair", fn.filename, ret.line)
            body.append(ir.Unpack(ret.line, ret.src, [value, aux], out_atom))
            self.output = value
        elif isinstance(out_atom, ir.Var):
            self.output = out_atom.name
        else:
            self.output = self.mint("ans")
            body.append(ir.Assign(ret.line, ret.src, self.output, ir.Copy(out_atom)))
        self.returned = out_atom
        self.body = body
        self.np = "np"
        self.ad = self.mint("_ad")
        # what activity analysis reads, taken now: it runs when first needed (a variant
        # that shares the code of one made before never needs it)
        self._analysed = (
            ir.Function(fn.name, fn.params, body + [ret], fn.names, fn.filename, fn.first_line),
            list(wrt),
            self.output,
            variables,
            frozenset(seeds),
        )
        # asked only ``name in``: the answers say which variants write the same code
        self.scalar = Queried(scalar_vars(self.body, set(fn.params), scalars, vectors))
        self.vector_params = vectors
        self.setup()

    @functools.cached_property
    def activity(self) -> Activity:
        """Which variables are active (see :func:`analysis.analyze`), made on first use."""
        return analyze(*self._analysed)

    # --- hooks ---------------------------------------------------------------------------

    def setup(self) -> None:
        """What a pass adds to the parts above, before any code is generated."""

    def call_plans(self) -> Mapping[int, CallPlan]:
        """The call plans made so far (statement id -> plan); the forward pass makes none."""
        return {}

    def arrange_pushes(self, items: list[Item]) -> list[Item]:
        """The code of one user line that records values, in the order it runs."""
        return items

    # --- names -----------------------------------------------------------------------

    def mint(self, base: str) -> str:
        name, k = base, 1
        while name in self.reserved:
            k += 1
            name = f"{base}{k}"
        self.reserved.add(name)
        return name

    def helper(self, base: str, obj: Any) -> str:
        """A name for a module the generated code needs: the user's own when it is the same."""
        if self.user_globals.get(base) is obj and base not in self._primal_names():
            return base
        return self.bind(base, obj)

    def bind(self, base: str, obj: Any) -> str:
        for name, value in self.bindings.items():
            if value is obj and name.startswith(base):
                return name
        name = self.mint(base)
        self.bindings[name] = obj
        return name

    def active(self, atom: ir.Atom | None) -> bool:
        return isinstance(atom, ir.Var) and self.activity.active(atom.name)

    def error(self, construct: str, stmt: ir.Stmt, hint: str = "") -> TransformError:
        path, text = self.fn.filename, None
        if path.startswith("<s2s_ad:") and stmt.src:
            # generated code differentiated again: its statements carry the user's line
            # and source (its ``# L<n>:`` comments), the file is the one its header names
            path, text = user_origin(path, 0).rsplit(":", 1)[0], stmt.src
        error = TransformError(construct, path, stmt.line, None, hint, text)
        return error.with_names(self.fn.user_names)

    @property
    def again(self) -> bool:
        """Whether the code is generated code differentiated again (the library's own
        helpers transformed for a higher derivative count as well)."""
        return self.fn.filename.startswith(("<s2s_ad", _PACKAGE))

    def field_index_args(self, obj: str, name: str) -> str:
        """The arguments of ``_ad.field_index`` for ``obj.name`` read from a differentiated
        value (in code differentiated again, told so)."""
        again = ", True" if self.again else ""
        return f"({obj}, {name!r}{again})"

    def no_gradient(self, rule: Rule, param: str, s: ir.Stmt) -> bool:
        """Whether a differentiated argument of ``rule`` that has no derivative template is
        left out (an axis, a shape, a flag); refuses a count or order that may be a float.

        In variables mode every attribute read may be a ``Variable`` (an integer
        ``self.k`` is one too), and in generated code (differentiated again) a count read
        back from a tape looks differentiated: counts are left out there (the user's code
        was checked when it was transformed).
        """
        if param in STRUCTURAL or (param in COUNTS and (self.variables or self.again)):
            return True
        if param in KEYS and rule.name == "ndarray.get" and self.again:
            return True  # a dict's key (d.get(k, 0.0)): a loop counter read back from a tape
        if param in COUNTS:
            raise self.error(
                f"argument '{param}' of {rule.name} with a differentiated value (an integer "
                "parameter: its gradient would be zero)",
                s,
                "pass an integer, or wrap the value in s2s_ad.stop_gradient",
            )
        return False

    def _varied(self, atom: ir.Atom) -> bool:
        return isinstance(atom, ir.Var) and atom.name in self.activity.varied

    # --- rendering ---------------------------------------------------------------------

    def atom(self, atom: ir.Atom) -> str:
        return str(atom)

    def helper_atom(self, atom: ir.Atom) -> str:
        """:meth:`atom`, a helper's constant (``_ad.DELETED``) under this program's name
        for the helpers."""
        text = self.atom(atom)
        if isinstance(atom, ir.Const) and text.startswith("_ad.") and self.ad != "_ad":
            return self.ad + text[3:]
        return text

    def render_expr(self, expr: ir.Expr) -> str:
        """The source of a right-hand side; a runtime helper called by the user's code
        (``_ad.x``) under this program's name for the helpers."""
        if isinstance(expr, ir.Call):
            code = expr.callee.code
            if code.startswith("_ad.") and self.ad != "_ad":
                code = self.ad + code[3:]
            if (
                code.endswith(".__getitem__")
                and len(expr.args) == 1
                and not expr.kwargs
                and not self.pure  # code parsed again reads np.r_[t] as np.r_[(t,)]
            ):
                return f"{code[: -len('.__getitem__')]}[{self.atom(expr.args[0])}]"  # np.r_[...]
            return f"{code}({self.call_args(expr)})"
        return ir.expr_source(expr, self.atom)

    def assign_tree(self, target: str, expr: ir.Expr) -> Callable[[], list[ast.stmt] | None] | None:
        """What builds ``target = render_expr(expr)`` as a tree without parsing it (see
        :mod:`irtrees`), or ``None``."""
        if type(self).render_expr is not SweepBase.render_expr:
            return None  # a sweep writing expressions its own way
        callee = None
        if isinstance(expr, ir.Call):
            callee = expr.callee.code
            if callee.startswith("_ad.") and self.ad != "_ad":
                callee = self.ad + callee[3:]
            if callee.endswith(".__getitem__"):
                return None  # written ``np.r_[...]``
        return irtrees.assign(target, expr, self.atom, callee)

    def call_args(self, call: ir.Call) -> str:
        return ir.call_args_source(call, self.atom)

    def commented(self, stmts: list[ir.Stmt], one: Callable[[ir.Stmt], list[Item]]) -> list[Item]:
        """Code of a block running forward, a ``# L<n>:`` comment above each user line
        that became several statements (and above each branch or loop)."""
        out: list[Item] = []
        counts: dict[tuple[int, str], int] = {}
        for s in stmts:
            counts[(s.line, s.src)] = counts.get((s.line, s.src), 0) + 1
        last = outer = self._fwd_enclosing
        start = 0
        pushes = False  # the current line's code holds a push: arranged when it ends
        for s in stmts:
            key = (s.line, s.src)
            several = counts[key] > 1 or isinstance(s, _COMPOUND)
            if key != last:
                if pushes:
                    out[start:] = self.arrange_pushes(out[start:])
                start, pushes = len(out), False
            self._fwd_enclosing = key
            items = one(s)
            # code that is differentiated again marks every line: its comments then name
            # them; so does a tangent program each line followed by its tangent's code
            several = several or (self.comment_pairs and len(items) > 1)
            if key != last and s.src and (several or self.pure):
                out.append(Comment(f"# L{s.line}: {s.src}"))
            last = key
            out.extend(items)
            pushes = pushes or any(isinstance(i, Push) for i in items)
        if pushes:
            out[start:] = self.arrange_pushes(out[start:])
        self._fwd_enclosing = outer
        return out

    def bind_rule_call(
        self, rule: Rule, kind: str, call: ir.Call, s: ir.Stmt
    ) -> tuple[dict[str, str], list[tuple[str, ir.Atom]], list[ir.Atom]]:
        """A call's arguments matched to a rule's parameters.

        Returns:
            Parameter -> source text (defaults filled in), (parameter, atom) pairs for
            the arguments given, and the positional arguments beyond the parameters.
        """
        args = list(call.args)
        if kind == "method":
            assert call.callee.receiver is not None
            args = [call.callee.receiver, *args]
        kwargs = {k: self.atom(v) for k, v in call.kwargs}
        bound = rule.bind([self.atom(a) for a in args], kwargs)
        if bound is None:
            raise self.error(f"call to {call.callee.code} with unsupported arguments", s)
        pairs: list[tuple[str, ir.Atom]] = list(zip(rule.params, args)) + list(call.kwargs)
        return bound, pairs, args[len(rule.params) :]

    # --- statements neither pass differentiates -------------------------------------------

    def _state_write(self, s: ir.ExprStmt) -> bool:
        """``obj.a = v`` in variables mode, where every attribute read may be varied: checked
        when it runs (``runtime.set_attribute`` refuses float values)."""
        call = s.value
        return (
            self.variables
            and isinstance(call, ir.Call)
            and (call.callee.obj is setattr or call.callee.method == "add_loss")
        )

    def _state_call(self, s: ir.ExprStmt) -> bool:
        """``obj.method(...)`` with its result dropped, in variables mode (``v.assign_add``,
        a metric's ``update_state``): checked when it runs."""
        call = s.value
        return (
            self.variables
            and isinstance(call, ir.Call)
            and call.callee.receiver is not None
            and call.callee.method is not None
        )

    def _check_discarded_call(self, s: ir.ExprStmt) -> None:
        """A call whose result is dropped (logging, plotting, saving) runs in the forward
        sweep; refused only when it may change a value the gradient depends on."""
        call = s.value
        if not isinstance(call, ir.Call):
            return
        if self._state_write(s) or self._state_call(s):
            return  # variables mode: checked when it runs
        receiver = call.callee.receiver
        # a user object's method may store what it is given (layer.set_weights(W)): object
        # state, modelled in variables mode (see object_state); a container's is not
        stateful = classify(call).kind == "dynamic" and (
            not container_method(call)
            or isinstance(receiver, ir.Var)
            and receiver.name in self._attribute_held  # rec.history.append(v)
        )
        if receiver is not None and self.active(receiver):
            error = self.error(f"in-place method call {call.callee.code}()", s)
            raise StoredState.from_error(error) if stateful else error
        varied = self.activity.varied
        if classify(call).kind == "dynamic" and not call.callee.resolved:
            if not any(isinstance(a, ir.Var) and a.name in varied for a in expr_atoms(call)):
                return
            error = self.error(
                f"call to {call.callee.code} whose result is not used",
                s,
                "assign its result: a function known only when the code runs may "
                "change its arguments in place",
            )
            raise StoredState.from_error(error) if stateful else error
        self._refuse_written_arguments(call, s)

    @functools.cached_property
    def _attribute_held(self) -> dict[str, str]:
        return attribute_held(self.fn.body)

    def _check_assigned_call(self, s: ir.Assign) -> None:
        """Refuse ``v = xs.remove(u)``, ``v = d.setdefault(k, u)``: a method that changes
        a differentiated container in place, its result used (``xs.pop()`` is modelled)."""
        call = s.value
        if not (isinstance(call, ir.Call) and call.callee.method in MUTATING):
            return
        receiver = call.callee.receiver
        if receiver is not None and isinstance(receiver, ir.Var) and self.active(receiver):
            raise self.error(f"in-place method call {call.callee.code}()", s)

    def _refuse_written_arguments(self, call: ir.Call, s: ir.Stmt) -> None:
        """Refuse a call that may write in place into an argument the gradient depends on:
        the caller's value would change behind the generated code's back.

        A wrapper made for a partial or a bound method (``<s2s_ad made:...>``) returns
        the call's result at once: nothing reads the argument after it, and the called
        function, transformed in turn, refuses at its own lines what it cannot follow."""
        if self.fn.filename.startswith("<s2s_ad made:"):
            return
        for atom in call_writes(call):
            if (
                isinstance(atom, ir.Var)
                and atom.name in self.activity.varied | self.activity.useful
            ):
                store = attribute_store(call)
                stored = call.args[2] if store is not None else None
                if isinstance(stored, ir.Var) and stored.name in self.activity.varied:
                    raise StoredState.from_error(self.error(store[0], s, store[1]))
                if store is not None and not self.reads_again:
                    continue  # forward mode reads each value once, in the user's order
                if store is not None and self._state_only(atom.name, store[2]):
                    continue  # a counter the gradient never reads, on an object it reads
                if store is not None:  # a counter or a flag, on an object the gradient reads
                    raise StoredState.from_error(
                        self.error(
                            f"a write to the attribute .{store[2]} of {atom.name!r}, which the "
                            "gradient reads again (the backward sweep would see the new state)",
                            s,
                            "keep counters and other state outside the differentiated function, "
                            "or return the new value",
                        )
                    )
                error = self.error(
                    f"call to {call.callee.code}, which may write into its argument "
                    f"{atom.name!r} in place",
                    s,
                    "copy the argument first inside the called function (u = u.copy())",
                )
                if attribute_writes_only(call, atom):  # it stores attributes on it
                    if self.variables == STATE:
                        continue  # object state: the callee's stores are modelled
                    raise StoredState.from_error(error)
                raise error

    def _state_only(self, obj: str, attr: str) -> bool:
        """Whether writes to ``obj.attr`` (``self.calls += 1``) leave the gradient alone:
        ``obj`` is only read for other attributes, or for ``attr`` into values the
        gradient does not use, and only written through ``setattr``; no method or call
        sees ``obj`` (its code could read the attribute again in the backward sweep)."""
        for s in walk(self.body):
            value = getattr(s, "value", None)
            if isinstance(s, ir.Assign) and isinstance(value, ir.Attr):
                if (
                    value.obj == ir.Var(obj)
                    and value.name == attr
                    and (s.target in self.activity.useful)
                ):
                    return False
                continue
            if isinstance(value, ir.Call) and attribute_store(value) is not None:
                if value.args[0] == ir.Var(obj) and not isinstance(value.args[1], ir.Const):
                    return False  # setattr(obj, name, v) with a computed name
                reads = [value.args[2]]
            elif value is None or isinstance(value, (ir.Var, ir.Const)):
                reads = [] if value is None else [value]
            else:
                reads = list(expr_atoms(value))
            if isinstance(s, (ir.SetItem, ir.Append, ir.ListPop)):
                reads.append(ir.Var(s.obj))
            elif isinstance(s, ir.If):
                reads.append(s.test)
            elif isinstance(s, ir.For):
                reads += [*(s.range_args or []), s.iterable]
            elif isinstance(s, ir.While):
                reads.append(s.test)
            if ir.Var(obj) in reads:
                return False
        return True

    # --- what the body assigns --------------------------------------------------------------

    def assigned(self, s: ir.Stmt) -> list[str]:
        """Variables an (unnested) statement assigns, in push order."""
        return assigned(s, self.call_plans())

    def _primal_names(self) -> set[str]:
        names = set(self.fn.params)
        for s in walk(self.body):
            names.update(self.assigned(s))
            if isinstance(s, ir.For):
                names.add(s.target)
        for plan in self.call_plans().values():
            if plan.aux:
                names.add(plan.aux)
        return names
