"""The rule table: derivative knowledge as data, keyed by the live callable.

A :class:`Rule` states, for each differentiable parameter of a callable, the
vector-Jacobian product as a Python expression template. Templates are written in
terms of the callable's parameter names, ``g`` (the cotangent of the output) and
``ans`` (the output); ``np`` is NumPy and ``_ad`` the runtime helpers
(:mod:`s2s_ad.runtime`). The reverse pass substitutes the user's names into them,
so a rule reads like the code it produces::

    np.tanh(x)   partial  "1.0 - ans * ans"   ->   x_bar = y_bar * (1.0 - y * y)

Elementwise rules state only the partial derivative (one rule serves both modes and
is checked against SymPy); the others state a VJP template directly. Every rule
carries sample inputs so the tests can walk the registry against finite differences.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# A string literal (left alone: an einsum subscript or a mode name is no parameter) or an
# identifier that is neither an attribute nor a keyword name.
_TOKEN = re.compile(
    r"""(?<!\w)(?P<str>[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\""""
    r"""|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))"""
    r"|(?<![\w.])(?P<name>[^\W\d]\w*)(?!\w)(?!\s*=[^=])"
)
_SIMPLE = re.compile(r"^(?:[^\W\d][\w.]*|\d+(?:\.\d*)?(?:e[+-]?\d+)?|'[^']*'|\"[^\"]*\")$")


@dataclass
class Rule:
    """How to differentiate one callable.

    Attributes:
        name: Display name, e.g. ``"np.sin"``.
        funcs: The live callables this rule covers (``np.sin``, ``math.sin``).
        params: Parameter names in positional order.
        defaults: Default value source per parameter (missing = required).
        vjps: Parameter name -> VJP template (``g``, ``ans`` and parameter names).
        partials: For elementwise rules, parameter -> partial derivative template.
        samples: Sample calls, each a tuple of positional arguments (plus an optional
            kwargs dict as last element when ``samples_kw`` is set) used by the tests.
        nondiff: The output carries no gradient (integer/bool results, ``round``...).
        sympy: For elementwise rules, the SymPy function name of the primal (tests).
        linear: The rule is linear in its differentiable inputs (informational).
        varargs: Positional arguments beyond ``params`` are allowed and ignored.
        jvps: Parameter name -> JVP template: the output tangent contributed by the
            tangent ``t`` of that parameter (``t`` replaces the parameter; the other
            parameters and ``ans`` are primal values). Forward mode sums the
            contributions of the differentiated parameters. Elementwise rules need none
            (their partials serve); without one, forward mode builds the product from the
            VJP (exact, slower).
        kwonly: Keyword-only parameters after ``*args`` (``np.meshgrid(*xi, indexing=)``),
            with their defaults as source text; templates use them like parameters.
        batched: Parameter name -> batched JVP template: ``jvps`` for a tangent ``t``
            with a leading batch axis (``_batch`` is :mod:`s2s_ad.batching`). Batched
            forward mode runs the ``jvps`` template once per column without one.
        symmetric: Parameters read as symmetric matrices (only one triangle is read, as
            by ``np.linalg.cholesky`` and ``eigh``). Their VJP is the symmetric gradient
            (as in JAX and autograd), valid for symmetric perturbations; tests perturb
            them symmetrically.
    """

    name: str
    funcs: tuple[Any, ...]
    params: tuple[str, ...]
    defaults: dict[str, str] = field(default_factory=dict)
    vjps: dict[str, str] = field(default_factory=dict)
    partials: dict[str, str] = field(default_factory=dict)
    samples: list[tuple[Any, ...]] = field(default_factory=list)
    nondiff: bool = False
    sympy: str | None = None
    linear: bool = False
    varargs: bool = False
    kw_samples: list[dict[str, Any]] = field(default_factory=list)
    jvps: dict[str, str] = field(default_factory=dict)
    symmetric: tuple[str, ...] = ()
    kwonly: dict[str, str] = field(default_factory=dict)
    batched: dict[str, str] = field(default_factory=dict)

    def bind(self, args: Sequence[str], kwargs: dict[str, str]) -> dict[str, str] | None:
        """Map call-site argument sources to parameter names.

        Args:
            args: Source text of positional arguments.
            kwargs: Keyword -> source text.

        Returns:
            Parameter name -> source text (defaults filled in), or ``None`` when the
            call does not fit the parameter list.
        """
        if len(args) > len(self.params) and not self.varargs:
            return None
        bound = dict(zip(self.params, args))
        if self.varargs:
            extra = list(args[len(self.params) :])
            bound["args"] = "(" + "".join(a + ", " for a in extra).rstrip(" ") + ")"
        for key, value in kwargs.items():
            if (key not in self.params and key not in self.kwonly) or key in bound:
                return None
            bound[key] = value
        for name, default in self.kwonly.items():
            bound.setdefault(name, default)
        for name in self.params:
            if name not in bound:
                if name not in self.defaults:
                    return None
                bound[name] = self.defaults[name]
        return bound


def substitute(template: str, names: dict[str, str]) -> str:
    """Replace identifiers of a template by call-site source text.

    Identifiers after a dot (attributes), keyword names (``axis=``) and the contents of
    string literals (``np.einsum('ij->ji', x)`` with a parameter ``i``) are left alone;
    replacements that are not simple names or numbers are parenthesized.
    """

    def repl(match: re.Match[str]) -> str:
        word = match.group("name")
        if word is None or word not in names:
            return match.group(0)
        text = names[word]
        return text if _SIMPLE.match(text) else f"({text})"

    return _TOKEN.sub(repl, template)


class Registry:
    """Rules keyed by the identity of the live callable (plus user ``defgrad`` rules)."""

    def __init__(self) -> None:
        self._by_id: dict[int, Rule] = {}
        self._keep: list[Any] = []
        self.rules: list[Rule] = []
        self.custom: dict[int, Callable[..., Any]] = {}
        self.custom_jvp: dict[int, Callable[..., Any]] = {}
        self.methods: dict[str, Rule] = {}
        self._methods_cache: dict[tuple[int, str], Rule] | None = None
        # rules for a method of every instance of a class (a random generator's draws)
        self.instance_methods: dict[tuple[type, str], Rule] = {}
        self.attrs: dict[str, Rule] = {}
        self._deferred: dict[str, str] = {}
        self.opaque_libraries: set[str] = {"scipy"}
        # libraries whose Python functions are never transformed from their source (NumPy's
        # ``as_strided`` reads ``__array_interface__``): a call without a rule is refused at
        # the user's line
        self.opaque_functions: set[str] = {"numpy"}
        # bumped by every change below (each goes through a method of this class), so that
        # what was resolved against the rules (``dispatch``'s fast path) is checked by one
        # comparison
        self.version = 0

    def _changed(self) -> None:
        self.version += 1
        self._methods_cache = None

    def add(self, rule: Rule, *, method: str | None = None, attr: str | None = None) -> Rule:
        """Register a rule for each of its callables (also as the array method or
        attribute ``method``/``attr``: ``x.sum()``, ``x.T``)."""
        self.rules.append(rule)
        for func in rule.funcs:
            self._by_id[id(func)] = rule
            self._keep.append(func)
        if method is not None:
            self.methods[method] = rule
        if attr is not None:
            self.attrs[attr] = rule
        self._changed()
        return rule

    def alias(self, func: Any, rule: Rule) -> None:
        """Look ``rule`` up for ``func`` too (a wrapper that calls the rule's callable)."""
        self._by_id[id(func)] = rule
        self._keep.append(func)
        self._changed()

    def add_instance_method(self, kind: type, name: str, rule: Rule) -> None:
        """Look ``rule`` up for the method ``name`` of every instance of ``kind``."""
        self.instance_methods[(kind, name)] = rule
        self._changed()

    def set_custom(self, func: Any, rule: Callable[..., Any], *, jvp: bool = False) -> None:
        """Register a user rule (``defgrad``, or ``defjvp`` with ``jvp``) for ``func``."""
        (self.custom_jvp if jvp else self.custom)[id(func)] = rule
        self._keep.append(func)
        self._changed()

    def drop_custom(self, func: Any, *, jvp: bool = False) -> None:
        """Forget the user rule of ``func``, if any (tests)."""
        (self.custom_jvp if jvp else self.custom).pop(id(func), None)
        self._changed()

    def make_opaque(self, library: str) -> None:
        """Never differentiate the source of ``library``'s functions (only its rules)."""
        self.opaque_libraries.add(library)
        self._changed()

    def lookup(self, func: Any) -> Rule | None:
        """The rule for a live callable, or ``None``.

        Bound methods are new objects at every attribute access (``np.logaddexp.reduce``,
        ``scipy.stats.norm.logpdf``), so they are matched by their owner and name
        instead. Rules of optional libraries (:meth:`defer`) load on the first miss
        after their library has been imported.
        """
        rule = self._by_id.get(id(func))
        if rule is None:
            owner = getattr(func, "__self__", None)
            name = getattr(func, "__name__", None)
            if owner is not None and name is not None and not isinstance(owner, type(sys)):
                rule = self._bound_methods().get((id(owner), name))
                if rule is None:
                    rule = self.instance_methods.get((type(owner), name))
            if rule is None and self._deferred and self._load_imported():
                return self.lookup(func)
        return rule

    def _bound_methods(self) -> dict[tuple[int, str], Rule]:
        if self._methods_cache is None:
            table = {}
            for rule in self.rules:
                for func in rule.funcs:
                    owner = getattr(func, "__self__", None)
                    if owner is not None and not isinstance(owner, type(sys)):
                        table[(id(owner), func.__name__)] = rule
            self._methods_cache = table
        return self._methods_cache

    def opaque(self, func: Any) -> bool:
        """Whether ``func`` belongs to a library whose source is never differentiated
        (SciPy, NumPy's Python functions: only those with a rule are; calls to the others
        are refused)."""
        target = getattr(func, "__func__", func)
        module = getattr(target, "__module__", None)
        if not isinstance(module, str):
            module = type(func).__module__
        library = module.partition(".")[0]
        if library in self.opaque_functions and isinstance(target, types.FunctionType):
            return True
        return library in self.opaque_libraries

    def defer(self, library: str, rules_module: str) -> None:
        """Load ``rules_module`` once ``library`` has been imported (never import it here:
        optional libraries such as SciPy are neither dependencies nor import costs)."""
        self._deferred[library] = rules_module

    def _load_imported(self) -> bool:
        """Load the deferred rule modules whose library is imported; whether any was."""
        ready = [lib for lib in self._deferred if lib in sys.modules]
        for lib in ready:
            importlib.import_module(self._deferred.pop(lib))
        return bool(ready)

    def load_optional(self) -> list[str]:
        """Import every deferred library that is installed and load its rules (tests).

        Returns:
            The libraries whose rules were loaded.
        """
        loaded = []
        for lib in list(self._deferred):
            try:
                importlib.import_module(lib)
            except ImportError:
                continue
            importlib.import_module(self._deferred.pop(lib))
            loaded.append(lib)
        return loaded


REGISTRY = Registry()


def elementwise(
    name: str,
    funcs: Sequence[Any],
    params: Sequence[str],
    partials: Sequence[str],
    samples: Sequence[tuple[Any, ...]],
    *,
    sympy: str | None = None,
    defaults: dict[str, str] | None = None,
    diff: Sequence[str] | None = None,
) -> Rule:
    """Register an elementwise rule from its partial derivatives.

    Args:
        name: Display name.
        funcs: Callables covered.
        params: Parameter names.
        partials: One partial template per differentiable parameter (in ``diff`` order).
        samples: Sample positional arguments.
        sympy: SymPy name of the primal, for the symbolic check.
        defaults: Parameter defaults.
        diff: The differentiable parameters (all of ``params`` when omitted).
    """
    diff = list(diff if diff is not None else params)
    unary = len(params) == 1
    vjps = {}
    for param, partial in zip(diff, partials):
        if partial.strip() in ("1", "1.0"):
            body = "g"
        elif partial.strip() in ("-1", "-1.0"):
            body = "-g"
        else:
            body = f"g * ({partial})" if not _SIMPLE.match(partial) else f"g * {partial}"
        vjps[param] = body if unary else f"_ad.unbroadcast({body}, {param})"
    rule = Rule(
        name,
        tuple(funcs),
        tuple(params),
        dict(defaults or {}),
        vjps,
        dict(zip(diff, partials)),
        list(samples),
        sympy=sympy,
    )
    return REGISTRY.add(rule)


def vjp_rule(
    name: str,
    funcs: Sequence[Any],
    params: Sequence[str],
    vjps: dict[str, str],
    samples: Sequence[tuple[Any, ...]],
    *,
    defaults: dict[str, str] | None = None,
    kw_samples: Sequence[dict[str, Any]] | None = None,
    linear: bool = False,
    varargs: bool = False,
    symmetric: Sequence[str] = (),
    kwonly: dict[str, str] | None = None,
) -> Rule:
    """Register a rule given by VJP templates (reductions, linear algebra, shapes)."""
    rule = Rule(
        name,
        tuple(funcs),
        tuple(params),
        dict(defaults or {}),
        dict(vjps),
        samples=list(samples),
        linear=linear,
        varargs=varargs,
        kw_samples=list(kw_samples or []),
        symmetric=tuple(symmetric),
        kwonly=dict(kwonly or {}),
    )
    return REGISTRY.add(rule)


def method(
    name: str,
    params: Sequence[str],
    vjps: dict[str, str],
    samples: Sequence[tuple[Any, ...]],
    *,
    defaults: dict[str, str] | None = None,
    varargs: bool = False,
    nondiff: bool = False,
    kw_samples: Sequence[dict[str, Any]] | None = None,
) -> Rule:
    """Register a rule for the NumPy array method ``name`` (``x.sum()``, ``x.reshape(2, 3)``).

    The first parameter is the receiver (conventionally ``self``); with ``varargs``
    extra positional arguments are available to templates as the tuple ``args``.
    Samples start with the receiver.
    """
    rule = Rule(
        "ndarray." + name,
        (),
        tuple(params),
        dict(defaults or {}),
        dict(vjps),
        samples=list(samples),
        varargs=varargs,
        nondiff=nondiff,
        kw_samples=list(kw_samples or []),
    )
    return REGISTRY.add(rule, method=name)


def attribute(name: str, vjp: str | None, samples: Sequence[tuple[Any, ...]] = ()) -> Rule:
    """Register an array attribute (``x.T``: ``vjp`` over ``self``; ``None`` = no gradient)."""
    rule = Rule(
        "ndarray." + name,
        (),
        ("self",),
        {},
        {"self": vjp} if vjp else {},
        samples=list(samples),
        nondiff=vjp is None,
    )
    return REGISTRY.add(rule, attr=name)


def set_jvps(rule: Rule, **templates: str) -> Rule:
    """Attach forward-mode templates to a rule (``set_jvps(rule, a="np.sum(t, axis)")``)."""
    unknown = set(templates) - set(rule.params) - {"args"}
    if unknown:
        raise ValueError(f"{rule.name} has no parameter {sorted(unknown)}")
    rule.jvps.update(templates)
    return rule


def set_batched(rule: Rule, **templates: str) -> Rule:
    """Attach batched forward-mode templates to a rule (see ``Rule.batched``)."""
    unknown = set(templates) - set(rule.jvps)
    if unknown:
        raise ValueError(f"{rule.name}: no JVP template for {sorted(unknown)}")
    rule.batched.update(templates)
    return rule


def nondiff(name: str, funcs: Sequence[Any]) -> Rule:
    """Register callables whose output carries no gradient."""
    rule = Rule(name, tuple(funcs), (), nondiff=True, varargs=True)
    return REGISTRY.add(rule)
