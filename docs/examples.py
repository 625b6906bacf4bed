"""Functions shown in docs/constructs.md, one per construct (regenerate with docs/generate.py)."""

import numpy as np


def straight_line(w, x, y):
    z = x @ w
    p = np.tanh(z)
    return np.mean((p - y) ** 2)


def branch(x):
    if x > 0:
        y = x * x
    elif x > -1:
        y = -x
    else:
        y = 1.0
    return y * 3.0


def conditional_expression(x, y):
    return x * y if x > y else x + y


def for_range(x, n):
    s = 0.0
    for _ in range(n):
        s = s * np.cos(x) + x**2
    return s


def for_break(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        s = s * np.cos(x[i]) + x[i] ** 2
    return s


def for_continue(xs):
    total = 0.0
    for v in xs:
        if v < 0:
            continue
        total = total + np.sqrt(v)
    return total


def while_loop(a):
    b = a * 2
    while np.linalg.norm(b) < 1000:
        b = b * 2
    if np.sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c


def early_return(x, limit):
    for _ in range(10):
        x = x * 1.5
        if x > limit:
            return x - limit
    return x


def index_assignment(x, a):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y**2)


def slice_update(x):
    y = x.copy()
    y[1:3] += y[0] * 2.0
    y[0] *= 3.0
    return np.sum(y * y)


def list_building(x):
    parts = []
    for k in range(3):
        parts.append(np.sin(x * k))
    a, b, c = parts
    return a + b * c


def dict_parameter(params, x):
    return np.sum(np.tanh(x @ params["w"] + params["b"]))


def helper(u, scale=2.0):
    return u * scale + 1.0


def user_call(x):
    return helper(x, scale=1.5) * helper(x)


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def rnn(W, xs):
    def cell(h, x):
        return np.tanh(h @ W + x)

    h = np.zeros(W.shape[0])
    for x in xs:
        h = cell(h, x)
    return np.sum(h)


def refine(x, b):
    def g(u):
        return np.tanh(u)

    h = g(x)
    for _ in range(2):
        g = 2.0 * (h - b)  # the name reused, for the gradient of a step
        h = h - 0.1 * g
    return np.sum(h**2)


def combine(a, *rest, scale=1.0):
    total = a
    for r in rest:
        total = total * r
    return total * scale


def star_call(x, y):
    parts = (x, y)
    return combine(*parts, scale=2.0)


def layers(flat):
    yield flat[:2], flat[2]
    yield flat[3:5], flat[5]


def generator_loop(flat, x):
    for w, b in layers(flat):
        x = np.tanh(w * x + b)
    return np.sum(x)


def make_step(a):
    def step(x):
        return 0.5 * (x + a / x)

    return step


def fixed_point(a):
    step = make_step(a)
    x = 1.0
    while abs(step(x) - x) > 1e-10:
        x = step(x)
    return x


def model_loss(model, x, y):
    # model: an object whose attributes layers and extra hold lists of layer objects (W, b)
    for layer in model.layers + model.extra:
        x = np.tanh(x @ layer.W + layer.b)
    return np.mean((x - y) ** 2)


class Cell:
    def __init__(self, W, b):
        self.W, self.b = W, b
        self.scale = 1.0 / np.sqrt(W.shape[0])

    def __call__(self, h):
        return np.tanh(self.scale * (h @ self.W) + self.b)


def cell_loss(W, b, h):
    # Cell.__init__: self.W, self.b = W, b; self.scale = 1.0 / np.sqrt(W.shape[0])
    cell = Cell(W, b)
    for _ in range(3):
        h = cell(h)
    return np.sum(h**2)


EXAMPLES = [
    ("Straight-line NumPy code", straight_line, 0),
    ("if / elif / else", branch, 0),
    ("Conditional expressions", conditional_expression, (0, 1)),
    ("for over range", for_range, 0),
    ("break", for_break, 0),
    ("continue, and for over a sequence", for_continue, 0),
    ("while with a data-dependent condition", while_loop, 0),
    ("return inside a loop", early_return, 0),
    ("Index assignment in a loop", index_assignment, 0),
    ("Slice updates", slice_update, 0),
    ("Lists built with append, then unpacked", list_building, 0),
    ("A dict of parameters", dict_parameter, 0),
    ("Calls to other functions", user_call, 0),
    ("Recursion", power, 0),
    ("A function defined inside the function (inlined where it is called)", rnn, 0),
    ("One name reused for unrelated values (the later one renamed apart)", refine, 0),
    ("*args parameters and star-calls (dispatched when they run)", star_call, (0, 1)),
    ("A generator helper iterated by a for loop", generator_loop, 0),
    ("A step function returned by a helper (a closure), in a fixed-point loop", fixed_point, 0),
    (
        "A model object passed in, two list attributes joined (the gradient: a model object)",
        model_loss,
        0,
    ),
    ("An object built in the function: its __init__ inlined on the object's fields", cell_loss, 0),
]


FORWARD_EXAMPLES = [
    ("Straight-line NumPy code", straight_line, ("w",)),
    ("Branches and loops: tangents flow with the values", for_break, ("x",)),
    ("Index assignment", index_assignment, ("x", "a")),
]


def cubic_sine(x):
    return x**3 * np.sin(x)
