"""Functions docs/refused.md shows being refused (regenerate with docs/generate.py).

Each entry: (construct, why it is refused, the function). The page shows the first line
of the message ``s2s_ad.grad`` raises for it, as it is raised today.
"""

import numpy as np

COUNTER = 0.0


def uses_try(x):
    steps = []
    try:
        steps.append(np.log(x))
    except ValueError:
        steps.append(x)
    return steps[0]


def uses_with(x):
    with open("log.txt") as f:
        f.write(str(x))
    return x * 2.0


def writes_global(x):
    global COUNTER
    COUNTER = x
    return x * 2.0


def generator(x):
    yield x * 2.0


def deletes(x):
    y = [x * 2.0, x]
    del y[0]
    return y[0]


def walrus(x):
    if (y := x * 2.0) > 1.0 and (y := x * 3.0) > 1.0:
        return y
    return x


def redefines_in_branch(x):
    def act(u):
        return u * 2.0

    if x > 0.0:

        def act(u):
            return u * 3.0

    return act(x)


def no_rule(x):
    return np.sum(np.fft.hfft(x))


def writes_out(x):
    y = np.empty_like(x)
    np.multiply(x, 2.0, out=y)
    return np.sum(y)


def view_alias(x):
    v = x[1:]  # a view of the caller's array (a local array's views are followed)
    v[0] = x[0] * 3.0
    return np.sum(x)


def reshaped_alias(x):
    y = x * 1.0
    flat = np.ravel(y)  # NumPy's function form (y.ravel() and y.reshape(-1) are followed)
    y[0] = 3.0
    return np.sum(flat)


def match_statement(x, kind):
    match kind:
        case "double":
            return 2.0 * x
        case _:
            return x


def defines_class(x):
    class Box:
        value = 1.0

    return x * Box.value


class Normed:
    """A model object whose property computes from its arrays."""

    def __init__(self, w):
        self.w = w

    @property
    def unit(self):
        return self.w / np.linalg.norm(self.w)


def reads_a_property(model):
    return np.sum(model.unit**2 * model.w)


LAYERS = []


class Registered:
    """A layer whose ``__init__`` hands ``self`` to other code (a registry)."""

    def __init__(self, w):
        self.w = w
        LAYERS.append(self)


def builds_a_registered_layer(w):
    return np.sum(Registered(w).w ** 2)


REFUSED = [
    (
        "`try` bodies that change state (`append`, stores into subscripts, random draws)",
        "the body runs twice: once to find which path it takes, then differentiated",
        uses_try,
    ),
    ("`with` blocks", "context managers run code the transformer cannot see", uses_with),
    (
        "`global` writes, `nonlocal` in the differentiated function itself",
        "outer state written from inside is not undone (a local function's `nonlocal` "
        "of its caller's names is supported: it is inlined where called)",
        writes_global,
    ),
    (
        "a generator differentiated itself",
        "its value is a generator, not a number (a generator called by a `for` is differentiated)",
        generator,
    ),
    (
        "`del` of a list entry or an attribute (`del y[0]`)",
        "a list's entries shift; `del name` of a local and `del d[key]` of a local dict "
        "are supported",
        deletes,
    ),
    (
        "a name bound twice by `:=` in one statement",
        "each `:=` is evaluated where Python evaluates it, the name read as its value",
        walrus,
    ),
    ("`match` statements", "not desugared yet", match_statement),
    (
        "a local function defined again inside a branch or loop",
        "the calls are inlined: which definition a call runs must be known from the code",
        redefines_in_branch,
    ),
    (
        "class definitions inside the function",
        "no rules for a class made at run time",
        defines_class,
    ),
    ("a library call without a rule or source", "no derivative is known: register one", no_rule),
    ("`out=` arguments", "a differentiated value written in place by a library", writes_out),
    (
        "writes through a view of a parameter",
        "the write changes the caller's array",
        view_alias,
    ),
    (
        "writes into an array a function's view also sees (`flat = np.ravel(y); y[0] = 3.0`)",
        "the view changes too; the sweeps keep them apart",
        reshaped_alias,
    ),
    (
        "a class built from differentiated values whose `__init__` passes `self` to other "
        "code, writes globals, or whose class has `__slots__`, `__getitem__` or `__new__`",
        "its `__init__` is inlined on the new object's fields: what else it does with the "
        "object is not followed",
        builds_a_registered_layer,
    ),
    (
        "a property of a differentiated object (`model.unit`)",
        "its value is computed when read, not a field the gradient could hold",
        reads_a_property,
    ),
]

CALLS = {
    "uses_try": (0.5,),
    "uses_with": (0.5,),
    "writes_global": (0.5,),
    "generator": (0.5,),
    "deletes": (0.5,),
    "walrus": (0.5,),
    "match_statement": (0.5, "double"),
    "redefines_in_branch": (0.5,),
    "defines_class": (0.5,),
    "no_rule": (np.ones(3),),
    "writes_out": (np.ones(3),),
    "view_alias": (np.ones(3),),
    "reshaped_alias": (np.ones(3),),
    "reads_a_property": (Normed(np.ones(3)),),
    "builds_a_registered_layer": (np.ones(3),),
}
