"""Expressions in three-address form: one operation per statement, atoms as operands.

:meth:`ExpressionLowering.atom` turns an expression into a variable or a constant,
evaluating anything else into a fresh temporary ``_t<n>`` (a pure subexpression met
twice in one statement is computed once); :meth:`ExpressionLowering.expression` lowers
one operation (binary, unary, comparison, call, attribute, subscript, tuple/list/dict
display, conditional expression) whose operands it makes atoms;
:meth:`ExpressionLowering.lower_into` evaluates an expression into a named variable,
through a temporary when the operation reads the variable it assigns. Indices keep
their text with the names they read (:meth:`ExpressionLowering.index`);
``np.r_[...]``/``np.c_[...]`` become calls of ``__getitem__``. Constructs the transformer
does not model stay opaque text, refused should a differentiated value reach them.
"""

from __future__ import annotations

import libcst as cst

from . import ir
from .container_names import is_sequence
from .norm_base import NormalizerBase
from .norm_concat import bound_by_calls, sliced, sliced_container
from .norm_queries import is_pure, yields_in
from .norm_repeat import list_repetition
from .norm_scan import names_read
from .norm_walrus import walrus_in
from .partials import lambda_value, opaque_lambda
from .rules.containers import concat, list_repeat, merge

_BINOPS = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
    cst.BitAnd: "&",
    cst.BitOr: "|",
    cst.BitXor: "^",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
}


_UNOPS = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not"}


_CMPOPS = {
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.Is: "is",
    cst.IsNot: "is not",
    cst.In: "in",
    cst.NotIn: "not in",
}


_CONSTANT_NAMES = {"True", "False", "None", "Ellipsis"}
#: number and string literals (an atom as written)
_NUMBERS = frozenset({cst.Integer, cst.Float})
_LITERALS = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString})


class ExpressionLowering(NormalizerBase):
    """Lowering of expressions to atoms and one-operation right-hand sides (a mixin of
    ``Normalizer``)."""

    def _list_pop(self, node: cst.BaseExpression) -> str | None:
        """The list ``xs`` of ``xs.pop()`` on a local name, else ``None``."""
        if (
            type(node) is cst.Call
            and not node.args
            and type(node.func) is cst.Attribute
            and node.func.attr.value == "pop"
            and type(node.func.value) is cst.Name
            and node.func.value.value in self.locals
            and node.func.value.value not in self.env
        ):
            return node.func.value.value
        return None

    def lower_into(self, target: str, node: cst.BaseExpression) -> None:
        """Evaluate ``node`` into variable ``target``."""
        if type(node) is cst.IfExp:
            self.if_expression(target, node)
            return
        popped = self._list_pop(node)
        if popped is not None and popped != target:
            if not self.generated:
                assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                self.alias_check(popped, node=node.func.value)
            self.emit(ir.ListPop(self.line, self.src, popped, target))
            return
        expr = self.expression(node)
        if isinstance(expr, ir.Copy) and expr.value == ir.Var(target):
            return
        self.lower_op(target, expr)

    def lower_op(self, target: str, expr: ir.Expr) -> None:
        """Assign an operation to ``target``, through a temporary when it reads ``target``.

        ``v = v + w`` and ``v = v - w`` stay as they are (their adjoints read no operand).
        """
        reads = ir.expr_atoms(expr)
        linear = (isinstance(expr, ir.BinOp) and expr.op in "+-") or (
            isinstance(expr, ir.UnaryOp) and expr.op in "-+"
        )
        if ir.Var(target) in reads and not linear and not isinstance(expr, ir.Copy):
            tmp = self.fresh()
            self.temps.add(tmp)
            self.assign(tmp, expr)
            expr = ir.Copy(ir.Var(tmp))
        self.assign(target, expr)

    def result(self, node: cst.BaseExpression | None) -> ir.Atom:
        """A returned expression, evaluated into a variable named ``ans`` when it is not an atom."""
        if node is None:
            return ir.Const("None")
        if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)) or (
            isinstance(node, cst.Attribute) and self.dotted(node) is not None
        ):
            return self.atom(node)
        name = "ans"
        k = 1
        while name in self.reserved:
            k += 1
            name = f"ans{k}"
        self.reserved.add(name)
        self.lower_into(name, node)
        return ir.Var(name)

    def if_expression(self, target: str, node: cst.IfExp) -> None:
        test = self.atom(node.test)
        saved, self.out = self.out, []
        memo = dict(self.memo)
        self.lower_into(target, node.body)
        body, self.out = self.out, []
        self.memo = dict(memo)
        self.lower_into(target, node.orelse)
        orelse, self.out = self.out, saved
        self.memo = memo
        self.emit(ir.If(self.line, self.src, test, body, orelse))

    def boolean_operation(self, target: str, node: cst.BooleanOperation) -> None:
        """``a or b`` (``a and b``) as Python runs it: ``a`` is the value unless its truth
        (its falsity) makes ``b`` run; a branch then picks which value is differentiated."""
        self.lower_into(target, node.left)
        saved, self.out = self.out, []
        memo = dict(self.memo)
        self.lower_into(target, node.right)
        other, self.out = self.out, saved
        self.memo = memo
        test = self.kept_test(ir.Var(target), other)
        if isinstance(node.operator, cst.Or):
            self.emit(ir.If(self.line, self.src, test, [], other))
        else:
            self.emit(ir.If(self.line, self.src, test, other, []))

    def atom(self, node: cst.BaseExpression) -> ir.Atom:
        """Lower an expression to an atom, emitting temporaries as needed."""
        kind = type(node)  # libcst's node classes: ``is``, not ``isinstance`` (see is_sequence)
        if kind is cst.Name:
            name = node.value
            if name in self.env:
                return self.env[name]
            if name in self.nested:
                raise self.error(
                    f"local function {name} used as a value",
                    node,
                    "call it directly, or define it at module level",
                )
            if name in _CONSTANT_NAMES:
                return ir.Const(name)
            return ir.Var(name)
        if kind in _LITERALS:
            return ir.Const(node.value)
        if (
            kind is cst.UnaryOperation
            and type(node.expression) in _NUMBERS
            and type(node.operator) is cst.Minus
        ):
            return ir.Const("-" + node.expression.value)
        if kind is cst.Attribute and self.dotted(node) is not None:
            return ir.Const(self.p.code(node))
        if kind is cst.Ellipsis:
            return ir.Const("...")
        key = self.p.code(node) if not self.env and is_pure(node) else None
        if key is not None and key in self.memo:
            # the same pure subexpression twice in one statement: compute it once
            atom = self.memo[key]
            self.shared.add(str(atom))
            return atom
        tmp = self.fresh()
        self.temps.add(tmp)
        self.lower_into(tmp, node)
        if key is not None:
            self.memo[key] = ir.Var(tmp)
        return ir.Var(tmp)

    def holds_sequence(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` is known to be a list or tuple (a name of the function's own
        scope that holds one wherever it is read, a ``list(...)`` call, a comprehension)."""
        if self.inlining or self.env:
            return False  # a local def's names are not the function's (see container_names)
        kind = type(node)
        if kind is cst.Name and node.value not in self.locals:
            return False
        if kind is cst.Call and (self.locals & {"list", "tuple", "sorted"}):
            return False  # a builtin shadowed
        return is_sequence(node, self.containers)

    def operand(self, node: cst.BaseExpression) -> ir.Atom:
        """:meth:`atom` for an operand of an arithmetic operation."""
        self._arith_operand = True
        try:
            return self.atom(node)
        finally:
            self._arith_operand = False

    def may_hold_sequence(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` may hold a list or tuple: a parameter never rebound nor
        annotated as something else, an attribute of an object (``self.layers``), a
        local bound only by calls of the user's functions or a slice of one of those
        (``net[:1]``; see ``norm_concat``)."""
        if self.inlining or self.env:
            return False
        if isinstance(node, cst.Name):
            return node.value in self.maybe_containers or bound_by_calls(self, node.value)
        if sliced(node) is not None:  # ``net[:1]``: a part of a list is a list
            return sliced_container(self, node)
        if isinstance(node, cst.Attribute) and self.dotted(node) is None:
            root: cst.BaseExpression = node
            while isinstance(root, cst.Attribute):
                root = root.value
            return isinstance(root, cst.Name) and root.value in self.locals
        return self.holds_sequence(node)

    def starred_display(self, node: cst.Tuple | cst.List) -> ir.Expr:
        """``[*a, x, *b]``: the concatenation of ``list(a)``, ``[x]`` and ``list(b)``."""
        kind = "tuple" if isinstance(node, cst.Tuple) else "list"
        if kind in self.locals:
            return self.opaque(node, "starred element")  # ``list`` shadowed
        pieces: list[ir.Atom] = []
        run: list[cst.BaseElement] = []
        callee = ir.Callee("_ad.concat", concat, resolved=True)

        def flush() -> None:
            if run:
                shown = cst.Tuple(run) if kind == "tuple" else cst.List(run)
                pieces.append(self.atom(shown))
                run.clear()

        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                flush()
                call = cst.Call(cst.Name(kind), [cst.Arg(el.value)])
                pieces.append(self.atom(call))
            else:
                run.append(el.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        flush()
        return self._joined(pieces, callee)

    def _joined(self, pieces: list[ir.Atom], callee: ir.Callee) -> ir.Expr:
        """``pieces`` combined left to right by ``callee`` (two at a time, each partial
        result in a fresh temporary); one piece is copied."""
        if len(pieces) == 1:
            return ir.Copy(pieces[0])
        joined = pieces[0]
        for piece in pieces[1:-1]:
            tmp = self.fresh()
            self.temps.add(tmp)
            self.assign(tmp, ir.Call(callee, [joined, piece], []))
            joined = ir.Var(tmp)
        return ir.Call(callee, [joined, pieces[-1]], [])

    def merged_dict(self, node: cst.Dict) -> ir.Expr:
        """``{**a, "k": x, **b}``: ``dict(a)``, ``{"k": x}`` and ``dict(b)`` merged left to
        right, a later entry replacing an earlier one of the same key."""
        if "dict" in self.locals:
            return self.opaque(node, "dict with ** entries")  # ``dict`` shadowed
        pieces: list[ir.Atom] = []
        run: list[cst.BaseDictElement] = []
        callee = ir.Callee("_ad.merge", merge, resolved=True)

        def flush() -> None:
            if run:
                pieces.append(self.atom(cst.Dict(run)))
                run.clear()

        for el in node.elements:
            if isinstance(el, cst.StarredDictElement):
                flush()
                pieces.append(self.atom(cst.Call(cst.Name("dict"), [cst.Arg(el.value)])))
            else:
                run.append(el.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        flush()
        return self._joined(pieces, callee)

    #: set while an operand of an arithmetic operation is lowered (``(a + b) * 2``: that
    #: ``a + b`` adds), read and cleared by the next :meth:`expression`
    _arith_operand = False

    def expression(self, node: cst.BaseExpression) -> ir.Expr:
        """Lower one operation whose operands become atoms."""
        operand, self._arith_operand = self._arith_operand, False
        kind = type(node)  # libcst's node classes: ``is``, not ``isinstance`` (see is_sequence)
        if kind is cst.BinaryOperation:
            op = _BINOPS[type(node.operator)]
            sequences = (cst.Tuple, cst.List)
            if op == "+" and isinstance(node.left, sequences) and isinstance(node.right, sequences):
                # ``(x,) + (2 * x,)``: one literal with the elements of both
                joined = node.left.with_changes(
                    elements=[*node.left.elements, *node.right.elements]
                )
                return self.expression(joined)
            if op == "*" and (repeated := list_repetition(node)) is not None:
                seq, n = repeated  # ``[x] * 3``: n references to the entries
                callee = ir.Callee("_ad.list_repeat", list_repeat, resolved=True)
                return ir.Call(callee, [self.atom(seq), self.atom(n)], [])
            if op == "+" and (
                isinstance(node.left, sequences)
                or isinstance(node.right, sequences)
                or self.holds_sequence(node.left)
                or self.holds_sequence(node.right)
            ):
                # ``args + (x,)``: a concatenation, whatever ``args`` holds

                callee = ir.Callee("_ad.concat", concat, resolved=True)
                return ir.Call(callee, [self.atom(node.left), self.atom(node.right)], [])
            if (
                op == "+"
                and not operand
                and self.may_hold_sequence(node.left)
                and self.may_hold_sequence(node.right)
            ):
                # ``enc + dec``, ``self.layers + self.extra``: lists or arrays, told apart
                # when the code runs (``_ad.concat`` adds arrays)
                callee = ir.Callee("_ad.concat", concat, resolved=True)
                return ir.Call(callee, [self.atom(node.left), self.atom(node.right)], [])
            return ir.BinOp(op, self.operand(node.left), self.operand(node.right))
        if kind is cst.UnaryOperation:
            return ir.UnaryOp(_UNOPS[type(node.operator)], self.operand(node.expression))
        if kind is cst.Comparison:
            left = self.atom(node.left)
            ops, rights = [], []
            for target in node.comparisons:
                ops.append(_CMPOPS[type(target.operator)])
                rights.append(self.atom(target.comparator))
            return ir.Compare(left, ops, rights)
        if kind is cst.Call:
            return self.call(node)
        if kind is cst.Attribute:
            if self.dotted(node) is not None:
                return ir.Copy(ir.Const(self.p.code(node)))
            return ir.Attr(self.atom(node.value), node.attr.value)
        if kind is cst.Subscript:
            trick = self.index_trick(node)
            if isinstance(trick, cst.Call):
                return self.call(trick)
            if trick is not None:
                return self.opaque(node, trick)
            obj = self.atom(node.value)
            return ir.Subscript(obj, self.index(node))
        if isinstance(node, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return self.starred_display(node)
            kind = "tuple" if isinstance(node, cst.Tuple) else "list"
            return ir.Build(kind, [self.atom(e.value) for e in node.elements])
        if isinstance(node, cst.Dict):
            if any(isinstance(el, cst.StarredDictElement) for el in node.elements):
                return self.merged_dict(node)
            keys, values = [], []
            for el in node.elements:
                key = _literal_key(el.key) if isinstance(el, cst.DictElement) else None
                if key is None:
                    return self.opaque(node, "dict with computed keys")
                keys.append(key)
                values.append(self.atom(el.value))
            return ir.Build("dict", values, keys)
        if isinstance(node, cst.IfExp):
            tmp = self.fresh()
            self.if_expression(tmp, node)
            return ir.Copy(ir.Var(tmp))
        if isinstance(node, (cst.Yield, cst.Await)):
            what = "'yield' (generator)" if isinstance(node, cst.Yield) else "'await'"
            raise self.error(what, node)
        if isinstance(node, cst.NamedExpr):
            return ir.Copy(self.named_expression(node))
        if isinstance(node, cst.Lambda):
            return lambda_value(self, node) or opaque_lambda(self, node)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.DictComp)):
            scoped = self._scoped(node)
            if scoped is not None:
                return ir.Copy(self.comprehension(scoped))
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return self.opaque(node, "comprehension")
        if isinstance(node, cst.BooleanOperation):
            if _truth_test(node) and walrus_in(node) is None:  # a bool, no gradient
                test = self.opaque(node, "'and'/'or' expression")
                test.truth = True
                return test
            tmp = self.fresh()
            self.boolean_operation(tmp, node)
            return ir.Copy(ir.Var(tmp))
        if isinstance(node, (cst.FormattedString, cst.ConcatenatedString, cst.Set)):
            return self.opaque(node, type(node).__name__)
        return ir.Copy(self.atom(node))

    def opaque(self, node: cst.BaseExpression, what: str) -> ir.Opaque:
        for found in yields_in(node):
            raise self.error("'yield' (generator)", found)
        if (walrus := walrus_in(node)) is not None:
            raise self.error(f"assignment expression (:=) inside a {what}", walrus)
        if self.env:
            raise self.error(f"{what} inside an inlined lambda", node)
        code = self.p.code(node)
        if isinstance(node, cst.GeneratorExp) and not node.lpar:
            code = f"({code})"  # the sole argument of a call keeps no parentheses of its own
        return ir.Opaque(code, names_read(node), what)

    def index_trick(self, node: cst.Subscript) -> cst.Call | str | None:
        """``np.r_[a, b]`` / ``np.c_[a, b]`` as the call ``np.r_.__getitem__((a, b))``, which
        has a rule; with slices or string directives, the construct to refuse should one of
        its parts be differentiated (``None``: not an index trick)."""
        parts = self.dotted(node.value)
        if parts is None:
            return None
        obj = self.resolve_dotted(parts)
        if type(obj).__name__ not in ("RClass", "CClass"):
            return None
        elts = []
        name = ".".join(parts)
        for el in node.slice:
            if not isinstance(el.slice, cst.Index) or el.slice.star is not None:
                return f"{name}[...] with a slice (use np.concatenate and np.arange)"
            if isinstance(el.slice.value, (cst.SimpleString, cst.ConcatenatedString)):
                return f"{name}[...] with a string directive (use np.concatenate)"
            elts.append(cst.Element(el.slice.value))
        key = cst.Tuple(elts) if len(elts) != 1 else cst.Tuple([elts[0]])
        method = cst.Attribute(node.value, cst.Name("__getitem__"))
        return cst.Call(method, [cst.Arg(key)])

    def index(self, node: cst.Subscript) -> ir.Index:
        parts = []
        reads: list[str] = []

        def part(expr: cst.BaseExpression | None) -> str:
            if expr is None:
                return ""
            atom = self.atom(expr)
            if isinstance(atom, ir.Var) and atom.name not in reads:
                reads.append(atom.name)
            return str(atom)

        self.index_parts = []
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                if sl.star is not None:
                    raise self.error("starred index", sl)
                parts.append(part(sl.value))
                self.index_parts.append(self.memo_atom(parts[-1]))
            else:
                bounds = [part(sl.lower), part(sl.upper)]
                text = bounds[0] + ":" + bounds[1]
                if sl.step is not None:
                    bounds.append(part(sl.step))
                    text += ":" + bounds[2]
                parts.append(text)
                self.index_parts.append(tuple(self.memo_atom(b) for b in bounds))
        code = ", ".join(parts)
        if (
            len(parts) == 1
            and len(node.slice) == 1
            and node.slice[0].comma != cst.MaybeSentinel.DEFAULT
        ):
            code += ","
        return ir.Index(code, tuple(reads))

    @staticmethod
    def memo_atom(text: str) -> ir.Atom:
        """An index part's atom back from its text (a name or a constant; ``""``: None)."""
        if not text:
            return ir.Const("None")
        return (
            ir.Var(text) if text.isidentifier() and text not in _CONSTANT_NAMES else ir.Const(text)
        )

    def region(self) -> ir.Atom:
        """The last index lowered (see :meth:`index`) as a tuple of its parts (slices made
        with ``slice``), for :func:`runtime.not_a_view` to find what the write covers."""
        items: list[ir.Atom] = []
        for part in self.index_parts:
            if isinstance(part, tuple):
                bounds = list(part) + [ir.Const("None")] * (3 - len(part))
                items.append(self._builtin_call("slice", bounds))
            else:
                items.append(part)
        tmp = self.fresh("_at")
        self.assign(tmp, ir.Build("tuple", items))
        return ir.Var(tmp)


def _literal_key(key: cst.BaseExpression) -> str | None:
    """The source of a dict literal's constant key (a string or a number, ``-0.5`` too),
    or ``None`` for a computed one."""
    if isinstance(key, (cst.SimpleString, cst.Integer, cst.Float)):
        return key.value
    if (
        isinstance(key, cst.UnaryOperation)
        and isinstance(key.operator, cst.Minus)
        and isinstance(key.expression, (cst.Integer, cst.Float))
        and not key.lpar
    ):
        return "-" + key.expression.value
    return None


def _truth_test(node: cst.BaseExpression) -> bool:
    """Whether an ``and``/``or`` chain only combines comparisons, ``not``, ``isinstance``
    checks and constants: its value is a bool (or a constant), never a number that
    carries a gradient."""
    if isinstance(node, cst.BooleanOperation):
        return _truth_test(node.left) and _truth_test(node.right)
    if isinstance(node, (cst.Comparison, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("isinstance", "callable", "hasattr", "bool", "len")
    )
