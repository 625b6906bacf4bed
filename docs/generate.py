"""Write the generated pages: docs/constructs.md (each construct's primal and the adjoint
s2s_ad generates for it), docs/refused.md (what is refused), docs/functions.md (every
library function with a rule, from the rule registry), docs/coverage.md (the sweep of
autograd's and JAX's test lists, ``sweep_coverage.py``) and docs/optimizations.md (the
generated code before and after the optimizer, ``optimizations.py``)."""

import builtins
import inspect
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's s2s_ad, not an installed one

import optimizations  # noqa: E402
import refusals  # noqa: E402
import sweep_coverage  # noqa: E402

import examples  # noqa: E402
import s2s_ad  # noqa: E402
from s2s_ad.api import compile_forward  # noqa: E402
from s2s_ad.rules.registry import Rule  # noqa: E402

INTRO = """# The generated code, construct by construct

Each section shows a function and the gradient `s2s_ad.grad` generates for it (this file is
written by `python docs/generate.py`; a test checks it is current). How to read it:

- `# L<n>: <source>` opens the adjoint of line *n* of the primal.
- `x_bar` is the adjoint of `x` (d output / d x); `_t1, _t2, ...` hold subexpressions.
- The forward sweep runs the primal and records what the backward sweep needs on `_tape`:
  branch conditions, trip counts, and values that are overwritten before the backward sweep
  reads them (and only those). The backward sweep pops them in reverse order.
- `_ad.<helper>` are the few runtime helpers (`s2s_ad/runtime.py`, `s2s_ad/rules/vjps.py`):
  `unbroadcast` sums broadcast dimensions, `add_at` accumulates into the entries a subscript
  read, `seed` checks the output is a scalar and returns 1.
"""


def render() -> str:
    parts = [INTRO]
    for title, fun, wrt in examples.EXAMPLES:
        parts.append(f"\n## {title}\n\n```python\n{inspect.getsource(fun)}```\n")
        parts.append(f"\n```python\n{s2s_ad.source(s2s_ad.grad(fun, wrt))}```\n")
    parts.append(FORWARD)
    for title, fun, wrt in examples.FORWARD_EXAMPLES:
        parts.append(f"\n### {title}\n\n```python\n{inspect.getsource(fun)}```\n")
        parts.append(f"\n```python\n{compile_forward(fun, wrt).source_of('jvp')}```\n")
    parts.append(HIGHER)
    fun = examples.cubic_sine
    parts.append(f"\n```python\n{inspect.getsource(fun)}```\n")
    first = s2s_ad.grad(fun)
    parts.append("\nThe gradient differentiated again, `grad(grad(cubic_sine))`:\n")
    parts.append(f"\n```python\n{s2s_ad.source(s2s_ad.grad(first))}```\n")
    parts.append(SHAPES)
    import numpy as np

    rng = np.random.default_rng(0)
    df = s2s_ad.grad(examples.straight_line)
    df(rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=4))
    parts.append(f"\n```python\n{s2s_ad.source(df)}```\n")
    return "".join(parts)


SHAPES = """
# Shape specialisation: the variant that runs

The code above is the general gradient, written for arguments of any shape: it asks
runtime helpers what a value's shape requires (`_ad.unbroadcast` sums the dimensions
an operation broadcast, `_ad.sum_vjp` broadcasts a reduction's cotangent back,
`_ad.matmul_vjp_y` picks the product for the operands' ranks). The first call with
arrays of a new *shape class* makes a variant for it: the class is the arguments' dtypes
and shapes with every size replaced by a symbol (equal sizes share one, 0 and 1 stay),
so `(128, 784)` and `(784, 256)` are `(a, b)` and `(b, c)` and every batch size falls in
the same class. A shape analysis of the general code (`s2s_ad/shape_analysis.py`) proves
what each helper will do for every call of the class, and `s2s_ad/lower.py` writes it
out in plain NumPy: `_ad.seed(ans)` is `1.0`, an `unbroadcast` between equal shapes
disappears (or is the `g.sum(axis=0)` it does), a reduction's adjoint stays a
scalar where every operation that reads it broadcasts it back (else it is
`np.full(a.shape, g)`), matrix products' adjoints are `g @ y.T` and `x.T @ g`, a value
pushed only so that a helper could read its shape is no longer pushed. `source(df)`
shows the variant that ran last; here `straight_line` (the first example) after a call
with `w` of shape `(3,)`, `x` of shape `(4, 3)` and `y` of shape `(4,)`:
"""


HIGHER = """
# Higher order: the pipeline run on its own output

`grad(grad(f))` transforms the generated gradient of `f` like any other function. What
it transforms is the *pure* form of that gradient: the same two sweeps, returning the
gradient only and updating no adjoint in place (the fast in-place forms are for first
order). Reading the result:

- the forward sweep is the whole first-order gradient (`x_bar` and friends are now
  ordinary variables), recording on `_tape` what its backward sweep needs;
- `x_bar_bar` is the adjoint of `x_bar`: the derivative of the output (here
  `d f / d x`) with respect to it, seeded with 1;
- the backward sweep walks the first gradient's lines in reverse, each block headed by
  the `# L<n>:` comment of the *gradient's* line it reverses; `_ad.unbroadcast` and the
  other helpers have rules of their own (`s2s_ad/rules/generated_rules.py`), so the
  second derivative flows through them like through `np.sin`;
- `_ad2` is the helper namespace of the outer transform: `_ad` is taken, as a name of
  the code it differentiates.

`hessian(f)` and `hvp(f)` run forward mode over the same gradient instead.
"""


FORWARD = """
# Forward mode

`s2s_ad.jvp(f, primals, tangents)` runs a *tangent program*: the primal, each line
followed by the line of its tangent (`x_dot` is the derivative of `x` along the
tangents given). Control flow is the primal's own; nothing is recorded. The same
partial derivatives serve both modes. `jacobian(f, mode='fwd')` and `hessian` run a batched
form of it once, every tangent of an identity matrix along a leading axis (in chunks when
that would not fit in memory). (`python -m s2s_ad FILE.py:FUNC --mode forward` prints the
tangent program; `s2s_ad.source(jacobian(f, mode='fwd'))` the batched one.)
"""


REFUSED_INTRO = """# What is refused, and why

s2s_ad refuses code it does not model instead of returning a wrong number: `grad(f)` (or
the first call, for callees found at run time) raises `s2s_ad.TransformError`, naming the
construct, the file, the line and column, and showing the line. This page is written by
`python docs/generate.py` from `docs/refusals.py`; each message below is the first line
of the one raised today (a test checks the page is current).

| construct | why | the message |
| --- | --- | --- |
"""

REFUSED_OUTRO = """
Errors raised when a gradient function is *called*, not when it is made:

- an integer argument named in `wrt`: `TypeError` (as JAX; never a silent zero gradient);
- an output that is not a scalar under `grad`: `ValueError` naming its shape (use `vjp` or
  `jacobian`).

For a library function without a rule, or one whose source is not Python, register a rule
with `s2s_ad.defgrad(func, rule)` (reverse mode) and `s2s_ad.defjvp(func, rule)` (forward
mode). The examples of each refused construct are in `docs/refusals.py`.
"""


def _message(fun: object, args: tuple[object, ...]) -> str:
    """The first line of the TransformError raised for ``fun``, with a stable file name."""
    try:
        s2s_ad.grad(fun)(*args)
    except s2s_ad.TransformError as exc:
        first = str(exc).splitlines()[0]
        return re.sub(r"[^\s(]*refusals\.py", "refusals.py", first)
    raise AssertionError(f"{fun.__name__} was not refused")


def render_refused() -> str:
    rows = []
    for construct, why, fun in refusals.REFUSED:
        message = _message(fun, refusals.CALLS[fun.__name__]).replace("|", "\\|")
        rows.append(f"| {construct} | {why} | `{message}` |\n")
    return REFUSED_INTRO + "".join(rows) + REFUSED_OUTRO


FUNCTIONS_INTRO = """# Supported library functions

Every library function s2s_ad differentiates, with the arguments it differentiates in. This
page is written by `python docs/generate.py` from the rule registry
(`s2s_ad/rules/`), so it lists exactly what the rules cover (a test checks it is current).
Each rule is checked against finite differences in both modes by the tests, and the
elementwise ones against SymPy.

How to read the tables:

- **differentiable**: the arguments the gradient flows into. Other arguments (axes, shapes,
  flags, integer counts) are constants; a differentiated value passed to one of them is
  refused with `TransformError`, never given a zero gradient.
- **forward mode**: *partials* (elementwise: one partial derivative serves both modes),
  *JVP rule* (a tangent rule of its own), or *from the VJP* (exact, built from the reverse
  rule: one reverse product per tangent).
- **SymPy**: the partial derivatives are compared with SymPy's by the tests.
- **notes**: what the gradient means where the function is not smooth or its result not
  unique (`s2s_ad/rules/notes.py`).

Functions without a rule are not differentiated through: a Python function is transformed
from its source, anything else is refused (`s2s_ad.defgrad` and `s2s_ad.defjvp` register a
rule of your own). `grad` also takes any function below directly: `grad(np.tanh)`,
`grad(scipy.stats.norm.logpdf, wrt="scale")`, `grad(scipy.special.gammaln)`.
"""

FUNCTIONS_OUTRO = """
## Not supported

- `np.linalg.eig`, `np.linalg.eigvals` (general, non-symmetric matrices: complex results)
  and `scipy.linalg.expm`, `scipy.linalg.eig`...: refused when differentiated. For
  symmetric matrices use `eigh`/`eigvalsh`.
- The shape parameters of the distribution functions (`cdf`, `sf`, `logcdf`, `logsf`) of
  `t`, `gamma` and `beta`, and the `a`, `b` parameters of `gammainc`, `gammaincc`,
  `betainc`: refused (their derivatives are not modelled exactly).
- Complex inputs: refused with a `TypeError` naming the argument.
"""

_SECTIONS = (
    ("NumPy", "Functions of `numpy` (as `np`), also reached through `math` where noted."),
    ("np.linalg", "Functions of `numpy.linalg`."),
    ("Array methods and attributes", "`x.sum()`, `x.T`... on NumPy arrays."),
    ("Dict methods", "The adjoint of a dict is a dict with the same keys."),
    ("Operators", "Python's operators on floats and arrays (`x @ y` is `np.matmul`)."),
    ("Python builtins and math", "Builtins and functions of the `math` module."),
    (
        "Python standard library",
        "`statistics` of a list of numbers, and `copy.copy`, "
        "`copy.deepcopy` (their adjoint is the cotangent itself).",
    ),
    (
        "scipy.special",
        "Loaded when the program has imported `scipy.special` (SciPy is optional).",
    ),
    (
        "scipy.stats",
        "Loaded when the program has imported `scipy.stats`. Methods of the distribution "
        "objects, also called on frozen distributions (`norm(mu, s).logpdf(x)`, or "
        "`d = norm(mu, s)` and then `d.logpdf(x)`); other uses of a frozen distribution "
        "whose parameters are differentiated (`d.rvs()`, `d.mean()`) are refused.",
    ),
    ("scipy.linalg", "Loaded when the program has imported `scipy.linalg`."),
)
_DICT_METHODS = ("values", "items", "keys", "get")


def _internal(rule: Rule) -> bool:
    """The runtime's own helpers (``_ad.*``, tapes, ``Variable``), not the user's."""
    name = rule.name
    funcs = rule.funcs
    if any(str(getattr(f, "__module__", "") or "").startswith("s2s_ad") for f in funcs):
        return True
    return name.startswith("_ad") or " checks" in name or name.startswith("Variable")


def _section(rule: Rule) -> str | None:
    """The page section of a rule with a gradient, or ``None``."""
    name = rule.name
    funcs = rule.funcs
    for prefix in ("scipy.special", "scipy.stats", "scipy.linalg", "np.linalg"):
        if name.startswith(prefix + "."):
            return prefix
    if name.startswith("ndarray."):
        return "Dict methods" if name[8:] in _DICT_METHODS else "Array methods and attributes"
    if name.startswith("np."):
        return "NumPy"
    builtin = ("abs", "pow", "float", "sum", "max", "min", "list", "dict")
    if name.startswith("math.") or name in builtin:
        return "Python builtins and math"
    if name.startswith(("statistics.", "copy.")):
        return "Python standard library"
    if funcs and getattr(funcs[0], "__module__", "") in ("_operator", "operator"):
        return "Operators"
    return None


def _qualified(func: object) -> str | None:
    """``np.sin``, ``np.add.reduce``, ``math.sin``, ``abs`` for a callable (``None`` when it
    has no such public name)."""
    import math

    import numpy as np

    name = getattr(func, "__name__", None)
    if name is None:
        return None
    owner = getattr(func, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"np.{owner.__name__}.{name}"
    if vars(np).get(name) is func:
        return f"np.{name}"
    if vars(np.linalg).get(name) is func:
        return f"np.linalg.{name}"
    if vars(math).get(name) is func:
        return f"math.{name}"
    if vars(builtins).get(name) is func:
        return name
    return None


def _receiver(rule: Rule) -> str:
    return "d" if rule.name[8:] in _DICT_METHODS else "x"


def _signature(rule: Rule) -> str:
    name = rule.name
    params = []
    for p in rule.params:
        default = rule.defaults.get(p)
        params.append(p if default is None else f"{p}={default}")
    if rule.varargs:
        params.append("*args")
    params += [f"{k}={v}" for k, v in rule.kwonly.items()]
    if name in ("np.r_", "np.c_"):
        return f"{name}[a, b, ...]"
    if name.startswith("unary "):
        return f"{name[6:]}x"
    if not name[0].isalpha():  # a binary operator
        return f"x {name} y"
    if name.startswith("ndarray."):
        receiver = _receiver(rule)
        if rule in _ATTRS:
            return f"{receiver}.{name[8:]}"
        return f"{receiver}.{name[8:]}({', '.join(params[1:])})"
    return f"{name}({', '.join(params)})"


def _forward(rule: Rule) -> str:
    if rule.partials:
        return "partials"
    diff = list(rule.vjps)
    if diff and all(p in rule.jvps for p in diff):
        return "JVP rule"
    return "from the VJP" if diff else ""


def _differentiable(rule: Rule) -> str:
    names = []
    for p in rule.vjps:
        if p == "args":
            label = "the other arguments"
        elif p == "self":
            label = f"`{_receiver(rule)}`"
        else:
            label = f"`{p}`"
        if p in rule.symmetric:
            label += " (symmetric)"
        names.append(label)
    return ", ".join(names) or "none"


def _notes(rule: Rule) -> str:
    from s2s_ad.rules.notes import NOTES

    name = rule.name
    also = []
    for func in rule.funcs:
        q = _qualified(func)
        if q and q != name and q not in also:
            also.append(q)
    parts = [NOTES.get(name, "")]
    if also:
        parts.append("also " + ", ".join(f"`{q}`" for q in also))
    return "; ".join(p for p in parts if p).replace("|", "\\|")


_ATTRS: list[Rule] = []
_RANDOM: set[str] = set()


def render_functions() -> str:
    from s2s_ad.rules import REGISTRY

    REGISTRY.load_optional()  # SciPy's rules, which load when SciPy is imported
    _ATTRS[:] = list(REGISTRY.attrs.values())
    for rule in REGISTRY.rules:
        if rule.name == "np.random":
            _RANDOM.update(f"np.random.{f.__name__}" for f in rule.funcs)
    by_section: dict[str, list[Rule]] = {title: [] for title, _ in _SECTIONS}
    without: list[str] = []
    for rule in REGISTRY.rules:
        if _internal(rule):
            continue
        if rule.nondiff or not rule.vjps:
            without.append(_nondiff_entry(rule))
            continue
        section = _section(rule)
        if section is not None:
            by_section[section].append(rule)
    parts = [FUNCTIONS_INTRO]
    for title, blurb in _SECTIONS:
        rules = sorted(by_section[title], key=lambda r: r.name)
        parts.append(f"\n## {title}\n\n{blurb}\n\n")
        parts.append("| function | differentiable | forward mode | SymPy | notes |\n")
        parts.append("| --- | --- | --- | --- | --- |\n")
        for rule in rules:
            sig = _signature(rule).replace("|", "\\|")
            sympy = "yes" if rule.sympy else ""
            diff, fwd = _differentiable(rule), _forward(rule)
            parts.append(f"| `{sig}` | {diff} | {fwd} | {sympy} | {_notes(rule)} |\n")
    parts.append(WITHOUT_INTRO)
    parts += [f"- {entry}\n" for entry in sorted(set(without), key=str.lower)]
    parts.append(FUNCTIONS_OUTRO)
    return "".join(parts)


WITHOUT_INTRO = """
## Without gradient

Their results carry no gradient (integers, booleans, shapes, random draws): differentiated
values may be passed to them, and what they return is a constant.

"""


def _nondiff_entry(rule: Rule) -> str:
    name = rule.name
    if name.startswith("ndarray."):
        return f"`{_signature(rule)}`"
    if name.startswith("np.random"):
        listed = ", ".join(f"`{n}`" for n in sorted(_RANDOM))
        return (
            f"np.random: {listed} (draws whose distribution has a float parameter, such as "
            "`np.random.normal(loc, scale)`, are refused when the parameter is differentiated)"
        )
    if not name[0].isalpha():  # an operator
        name = f"`x {name} y`"
    names = []
    for func in rule.funcs:
        q = _qualified(func)
        if q and q not in names:
            names.append(q)
    if not names:
        return name
    if names == [name]:
        return f"`{name}`"
    return f"{name}: " + ", ".join(f"`{n}`" for n in names)


if __name__ == "__main__":
    (HERE / "constructs.md").write_text(render())
    (HERE / "refused.md").write_text(render_refused())
    (HERE / "functions.md").write_text(render_functions())
    (HERE / "coverage.md").write_text(sweep_coverage.render())
    (HERE / "optimizations.md").write_text(optimizations.render())
