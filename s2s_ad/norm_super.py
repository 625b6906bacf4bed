"""``super().method(...)`` inside a differentiated method, with ``self`` passed explicitly.

``class Head(Dense): def __call__(self, x): return np.sum(super().__call__(x), -1)``:
the object ``super()`` returns holds ``self`` where the sweeps do not see it, so a
gradient flowing through the base's method into ``self``'s attributes would be lost. The
call is lowered as the function the lookup finds, called with ``self`` as its first
argument: ``_m = _ad.super_method(__class__, self, '__call__')`` (the plain function of the
next class in ``type(self)``'s method order, found when the code runs, as Python finds
it) then ``_m(self, x)``, a call of a Python function the dispatcher differentiates with
respect to ``self`` as to any argument. ``super(C, obj).method(...)`` is lowered the same
way. A class deriving from a library's (``s2s_ad.tf.keras.layers.Dense``) keeps the
call as it is: the library's dispatch of its own methods applies.
"""

from __future__ import annotations

import builtins

import libcst as cst

from . import ir
from .built_objects import super_method
from .init_facts import of_a_library
from .norm_base import NormalizerBase


class SuperCalls(NormalizerBase):
    """Lowering of ``super().method(...)`` calls (a mixin of ``Normalizer``, before the
    lowering of calls, whose :meth:`call` it extends)."""

    def call(self, node: cst.Call) -> ir.Expr:
        looked_up = self._super_lookup(node.func)
        if looked_up is None:
            return super().call(node)  # type: ignore[misc]
        cls, obj, name = looked_up
        found = self.fresh(f"_{name.strip('_')}")
        self.locals.add(found)
        self.temps.add(found)
        callee = ir.Callee("_ad.super_method", super_method, resolved=True)
        self.assign(found, ir.Call(callee, [cls, obj, ir.Const(repr(name))], []))
        receiver = cst.Arg(cst.Name(obj.name) if isinstance(obj, ir.Var) else cst.Name("None"))
        return super().call(  # type: ignore[misc]
            node.with_changes(func=cst.Name(found), args=[receiver, *node.args])
        )

    def _super_lookup(self, func: cst.BaseExpression) -> tuple[ir.Atom, ir.Atom, str] | None:
        """``(class, object, name)`` for ``super().name`` in a method (``__class__`` and
        its first parameter) or ``super(C, obj).name``, else ``None``."""
        if not (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name)
            and func.value.func.value == "super"
            and "super" not in self.locals
            and self.resolve("super") is builtins.super
            and not any(a.star or a.keyword for a in func.value.args)
        ):
            return None
        args = func.value.args
        if len(args) == 2:
            parts = self.dotted(args[0].value)
            cls = self.resolve_dotted(parts) if parts is not None else None
            if not self._users_class(cls):
                return None
            return self.atom(args[0].value), self.atom(args[1].value), func.attr.value
        if args or "__class__" not in self.p.closure or not self.params or self.env:
            return None
        try:
            cls = self.p.closure["__class__"].cell_contents
        except ValueError:
            return None
        first = self.params[0]
        if first in self.scan.assigned or not self._users_class(cls):
            return None  # ``self`` rebound: which object super() sees is not this name's
        return ir.Var("__class__"), ir.Var(first), func.attr.value

    @staticmethod
    def _users_class(cls: object) -> bool:
        """Whether ``cls`` and its bases are the user's classes (a library's, such as
        ``s2s_ad.tf``'s layers, keep their own ``super()`` dispatch)."""
        return isinstance(cls, type) and not any(of_a_library(b) for b in cls.__mro__[:-1])
