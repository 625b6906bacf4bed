"""Third round of random user programs: the control flow and Python idioms users mix.

The programs have the shape of :mod:`random_users` (``f(x, net, d)`` updating ``h`` and
``s``) and are checked by its :func:`random_users.check` (finite differences, forward and
reverse mode, autograd or JAX as a second oracle, second order on a share). The snippets
here add what the first two rounds did not draw: nested loops with ``break``/``continue``
inside ``if``, ``while`` with an early ``return`` inside a ``for``, ``for``/``else``,
loops over ``zip``/``enumerate`` of parameter lists and over ``dict.items()``,
accumulators in lists then ``np.stack``/``np.concatenate``, a parameter name rebound in
an unrolled inner optimisation (``x = x - lr * g``), helpers returning tuples unpacked in
loops, ``*args`` and keyword-only helpers, comprehensions with conditions, a fixed
``np.random.default_rng(0)`` inside the function, ``len`` mixed with floats, ``math`` on
scalar entries, ``float``/``int`` casts, ``min``/``max``/``sum``/``abs`` over lists,
string-keyed config dicts, helpers returning different shapes in branches, classes with
properties built in the loss, starred unpacking, the walrus operator, closures that append
into a list, ``reversed`` and ``assert``.
"""

from __future__ import annotations

import random_users as base
from random_users import Snippet, check, inputs, load  # noqa: F401 (re-exported)

#: Helpers the snippets call (put before ``f`` in the program's module).
HELPERS3 = """

def affine_parts(W, b, u):
    z = W @ u + b
    return np.tanh(z), np.sum(z ** 2)


def moments(u):
    m = np.mean(u)
    return m, np.mean((u - m) ** 2)


def total(*terms):
    out = 0.0
    for t in terms:
        out = out + np.sum(t)
    return out


def scaled_power(u, *, scale=1.0, power=2):
    return scale * u ** power


def weighted(*arrs, weights=None, bias=0.0):
    if weights is None:
        weights = [1.0] * len(arrs)
    acc = arrs[0] * 0.0
    for a, w in zip(arrs, weights):
        acc = acc + w * a
    return acc + bias


def head_or_sum(u):
    if u[0] > 0.0:
        return u[:2] * 2.0
    return np.array([np.sum(u)])


def norm_or_vec(u):
    if np.sum(u) > 0.0:
        return np.sum(u ** 2)
    return u * 0.5


class Model:
    def __init__(self, params, temp=1.0):
        self.params = params
        self.temp = temp

    @property
    def depth(self):
        return len(self.params)

    @property
    def first(self):
        return self.params[0][0]

    def forward(self, u):
        for W, b in self.params:
            u = np.tanh(W @ u / self.temp + b)
        return u


class Running:
    def __init__(self):
        self.values = []

    def add(self, v):
        self.values.append(v)
        return self

    @property
    def mean(self):
        return sum(self.values) / len(self.values)

def bump_(u):
    u[0] += u[1] * 2.0


def put(dd, key, v):
    dd[key] = v


class Acc:
    def __init__(self, v):
        self.v = v

    def step(self, u):
        self.v = self.v * 0.5 + u
        return self.v


def apply_all(u, *fns):
    for fn in fns:
        u = fn(u)
    return u


def forward_kw(u, **kw):
    return scaled_power(u, **kw)


def need_w(u, *, w):
    return u * w


class Base:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, u):
        return self.transform(u) * self.scale


class Shifted(Base):
    def __init__(self, scale, shift):
        super().__init__(scale)
        self.shift = shift

    def transform(self, u):
        return np.sin(u) + self.shift

    @classmethod
    def from_dict(cls, dd):
        return cls(dd['scale'], dd['shift'])

    @staticmethod
    def squash(u):
        return np.tanh(u)


class Params:
    def __init__(self, layers):
        self.layers = layers

    def __getitem__(self, k):
        return self.layers[k]

    def __len__(self):
        return len(self.layers)
"""


def _s(name: str, text: str, *, writes: bool = False, kink: bool = False) -> Snippet:
    return Snippet(name, tuple(text.strip("\n").split("\n")), writes, kink)


SNIPPETS: tuple[Snippet, ...] = (
    _s(
        "nested_break_continue",
        """
for i in range(3):
    for j in range(4):
        if h[j] > 0.8:
            break
        if j % 2 == 1:
            continue
        h = h + 0.1 * np.sin(h[j]) * h
    if i == 1:
        continue
    s = s + np.sum(h) * 0.1
""",
        kink=True,
    ),
    _s(
        "while_return_in_for",
        """
for W, b in net:
    k = 0
    while k < 3:
        h = np.tanh(W @ h + b) * 0.9 + 0.1 * h
        if np.sum(h ** 2) > 3.5:
            return s + np.sum(h)
        k += 1
""",
        kink=True,
    ),
    _s(
        "for_else",
        """
for k in range(4):
    if h[k] > 1.5:
        s = s + h[k]
        break
else:
    h = h * 0.5 + np.cos(h)
""",
        kink=True,
    ),
    _s(
        "enumerate_zip_params",
        """
for k, ((W, b), c) in enumerate(zip(net, [0.3, 0.7])):
    h = h + c * np.tanh(W @ h) + k * b
""",
    ),
    _s(
        "enumerate_weights",
        """
Ws = [W for W, b in net]
for i, W in enumerate(Ws):
    h = h + (i + 1) * 0.1 * (W @ h)
""",
    ),
    _s(
        "dict_items_branch",
        """
for key, val in d.items():
    if key == 'scale':
        h = h * val
    else:
        h = h + val
""",
    ),
    _s(
        "dict_fill_values",
        """
feats = {}
for name, fn in [('sin', np.sin), ('cos', np.cos)]:
    feats[name] = fn(h)
h = sum(feats.values()) * 0.5 + feats['sin'] * h
""",
    ),
    _s(
        "append_stack_rows",
        """
rows = []
for k in range(3):
    rows.append(h * (k + 1.0) + h[k])
M = np.stack(rows)
h = np.sum(M, axis=0) * 0.3
s = s + np.sum(np.concatenate(rows[:2])) * 0.1
""",
    ),
    _s(
        "concat_accum",
        """
parts = []
for W, b in net:
    parts.append(np.tanh(W @ h)[:2])
    parts += [b[:1] * h[0]]
h = np.concatenate(parts)[:4] + h
""",
    ),
    _s(
        "inner_opt_h",
        """
lr = 0.1
for _ in range(3):
    g = 2.0 * (h - d['shift']) * d['scale']
    h = h - lr * g
""",
    ),
    _s(
        "inner_opt_x",
        """
for _ in range(2):
    g = np.cos(x) * h
    x = x - 0.1 * g
h = h + x
""",
    ),
    _s(
        "rebind_net",
        """
net = [(W * 0.9, b + 0.1) for W, b in net]
for W, b in net:
    h = np.sin(W @ h) + b
""",
    ),
    _s(
        "tuple_return_loop",
        """
for W, b in net:
    h, pen = affine_parts(W, b, h)
    s = s + 0.01 * pen
""",
    ),
    _s(
        "moments_hist",
        """
hist = []
for k in range(2):
    m, v = moments(h)
    h = (h - m) / np.sqrt(v + 1.0)
    hist.append(v)
s = s + sum(hist)
""",
    ),
    _s("star_args_total", "s = s + total(h, h ** 2, net[0][1]) * 0.1"),
    _s(
        "kwonly",
        "h = scaled_power(h, scale=0.5) + scaled_power(h, power=3) * 0.1 + scaled_power(h)",
    ),
    _s(
        "kwonly_varargs",
        "h = weighted(h, np.sin(h), weights=[0.5, 2.0]) + weighted(h, bias=d['shift'])",
    ),
    _s("comp_cond_sum", "s = s + sum([v ** 2 for v in h if v > 0.0])", kink=True),
    _s(
        "comp_cond_array",
        "h = np.array([v * 2.0 if v > 0.1 else v * 0.5 for v in h]) + h",
        kink=True,
    ),
    _s(
        "rng_noise",
        """
rng = np.random.default_rng(0)
noise = rng.normal(size=4)
h = h + 0.1 * noise * h
s = s + np.sum(rng.uniform(size=4) * h)
""",
    ),
    _s(
        "len_mix",
        """
n = len(h)
m = np.sum(h) / n
h = h - m + n * 0.1
s = s + m * (n - 1) / n + h.shape[0] * 0.01
""",
    ),
    _s(
        "math_entries",
        "s = s + math.exp(h[0] * 0.3) + math.log(1.0 + h[1] ** 2) + math.tanh(h[2])"
        " + math.sin(h[3]) * math.cos(h[0])",
    ),
    _s("casts", "a = float(h[0])\nk = int(abs(h[1]) * 2)\ns = s + a * 2.0 + h[2] * k", kink=True),
    _s(
        "builtins_lists",
        "s = s + max([h[0], h[1], 0.2]) + min(h[2], h[3]) + sum([h, h ** 2])[0]"
        " + abs(h[1] - h[2]) + max(np.sum(h), 0.5)",
        kink=True,
    ),
    _s("builtin_sum_array", "s = s + sum(h) * 0.5 + sum(h * h)"),
    _s(
        "config_dict",
        """
cfg = {'lr': 0.1, 'steps': 2, 'act': 'tanh'}
for _ in range(cfg['steps']):
    if cfg['act'] == 'tanh':
        h = np.tanh(h) + cfg['lr'] * h
    else:
        h = np.sin(h)
""",
    ),
    _s("shapes_in_branches", "s = s + np.sum(head_or_sum(h))\nh = h + norm_or_vec(h)", kink=True),
    _s(
        "class_props",
        """
m = Model(net, temp=2.0)
h = m.forward(h) + m.depth * 0.1
s = s + np.sum(m.first) * 0.01
""",
    ),
    _s(
        "class_list_attr",
        """
run = Running()
for k in range(3):
    run.add(h[k] ** 2)
s = s + run.mean
""",
    ),
    _s("star_unpack", "a0, *rest = h\ns = s + a0 * sum(rest)"),
    _s("walrus", "if (t := np.sum(h * h)) > 0.5:\n    s = s + t * 0.1", kink=True),
    _s("cond_expr", "h = h * 2.0 if np.mean(h) > 0.0 else -h", kink=True),
    _s(
        "reversed_layers",
        "for W, b in reversed(net):\n    h = np.tanh(W.T @ h - b)",
    ),
    _s(
        "range_backwards",
        "for i in range(len(net) - 1, -1, -1):\n    h = np.sin(net[i][0] @ h) + net[i][1]",
    ),
    _s("zip_slices", "for a, c in zip(h[:-1], h[1:]):\n    s = s + a * c"),
    _s(
        "closure_append",
        """
acc = []
def add(v):
    acc.append(v * 2.0)
for k in range(4):
    add(h[k] ** 2)
s = s + sum(acc)
""",
    ),
    _s(
        "lambda_defaults",
        "fs = [lambda u, c=c: u * c for c in (0.5, 1.5)]\nh = sum(fn(h) for fn in fs) * 0.5",
    ),
    _s("assert_shape", "assert h.shape == (4,), h.shape\nh = h + 0.1 * np.sum(h)"),
    _s("matrix_literal", "M = np.array([[h[0], h[1]], [h[2], h[3]]])\nh = (M @ M).ravel() * 0.5"),
    _s(
        "list_writes",
        """
vals = [h[0], h[1], h[2], h[3]]
for k in range(1, 4):
    vals[k] = vals[k] + 0.5 * vals[k - 1]
h = np.array(vals)
""",
    ),
    _s(
        "late_binding",
        "fs = [lambda u: u * k for k in range(1, 3)]\nh = fs[0](h) * 0.5 + fs[1](h) * 0.25",
    ),
    _s(
        "default_captured",
        "def g(u, c=h[0]):\n    return u * c\nh = h * 2.0\nh = g(h) + h",
    ),
    _s(
        "chained_alias", "a = b = h * 1.0\na += 0.5 * np.sin(h)\ns = s + np.sum(b * h)", writes=True
    ),
    _s("param_alias_iadd", "y = x\ny += 0.1 * h\nh = h + y", writes=True),
    _s(
        "iterate_while_writing",
        "for i, v in enumerate(h):\n    if v > 0.0:\n        h[i] = v * 2.0 + h[i - 1]",
        writes=True,
        kink=True,
    ),
    _s("swap_entries", "h[0], h[1] = h[1], h[0] * 2.0\nh = h * h[0]", writes=True),
    _s("swap_views", "h[:2], h[2:] = h[2:], h[:2] * 1.0\nh = np.sin(h) + h", writes=True),
    _s("full_slice_write", "h[:] = np.tanh(h) + h\nh[::-1] += 0.1 * h", writes=True),
    _s(
        "repeat_list_iadd",
        "hs = [h * 1.0] * 2\nhs[0] += 1.0\ns = s + np.sum(hs[1] * h)",
        writes=True,
    ),
    _s(
        "bool_value_ops",
        "s = s + (h[0] > 0.0 and h[0] ** 2 or 0.1)\nc = d.get('missing') or 0.5\nh = h * c",
        kink=True,
    ),
    _s(
        "max_key",
        "i = max(range(4), key=lambda j: h[j])\ns = s + h[i] ** 2 + max(h) + sorted(h)[0]",
        kink=True,
    ),
    _s(
        "zip_star_params",
        "Ws, bs = zip(*net)\nfor W, b in zip(Ws, bs):\n    h = np.tanh(W @ h) + b\n"
        "s = s + np.sum(bs[0])",
    ),
    _s("getattr_act", "cfg = {'act': 'tanh'}\nact = getattr(np, cfg['act'])\nh = act(h) + h"),
    _s(
        "np_sum_list",
        "s = s + np.sum([np.sum(W ** 2) for W, _ in net]) * 0.1 + np.mean(np.array([h[0], h[3]]))",
    ),
    _s(
        "dict_keys_loop",
        "for k in d:\n    h = h + d[k] * len(k)\ns = s + sum(np.sum(v) for v in d.values())",
    ),
    _s(
        "list_methods",
        "acc = [h]\nacc.extend([h * 2.0, h ** 2])\nacc.insert(0, np.sin(h))\nlast = acc.pop()\n"
        "acc.reverse()\nh = acc[0] + 0.1 * last + acc[-1]",
    ),
    _s("tuple_concat", "t = (h,) + (h * 2.0,)\nh = t[0] * t[1] * 0.5 + sum(t)"),
    _s(
        "item_cast",
        "a = h[0].item()\nb = np.float64(h[1])\ns = s + a * b + h[2].astype(np.float64)",
    ),
    _s("where_unpack", "(idx,) = np.where(h > 0.0)\ns = s + np.sum(h[idx])", kink=True),
    _s(
        "try_continue",
        "for k in range(4):\n    try:\n        if h[k] < -0.5:\n"
        "            raise ValueError('neg')\n        s = s + h[k] ** 2\n"
        "    except ValueError:\n        continue",
        kink=True,
    ),
    _s(
        "half_len",
        "k = len(h) // 2\nh = np.concatenate([h[:k] * 2.0, h[k:]])\n"
        "s = s + np.sum(h[: int(len(h) / 2)])",
    ),
    _s("normalize_idiv", "h /= np.linalg.norm(h) + 1.0\nh *= 2.0", writes=True),
    _s(
        "isinstance_branch",
        "if isinstance(h, np.ndarray) and h.ndim == 1:\n    h = h * 1.5\nelse:\n    h = h * 0.5",
    ),
    _s("gen_cond_sum", "s = s + sum(h[i] * h[i] for i in range(len(h)) if i != 2)"),
    _s(
        "rng_perm",
        "rng = np.random.default_rng(0)\nperm = rng.permutation(4)\nh = h[perm] * 0.5 + h",
    ),
    _s("helper_mutates", "h = h * 1.0\nbump_(h)\nh = np.sin(h)", writes=True),
    _s("helper_puts", "cache = {}\nput(cache, 'k', h * 2.0)\nh = cache['k'] + h"),
    _s(
        "acc_object",
        "acc = Acc(h * 0.0)\nfor k in range(3):\n    acc.step(h * (k + 1.0))\nh = acc.v + h",
    ),
    _s("apply_all", "h = apply_all(h, np.tanh, np.sin) + apply_all(h)"),
    _s("forward_kw", "h = forward_kw(h, scale=0.5, power=3) + forward_kw(h)"),
    _s("kwonly_required", "h = need_w(h, w=d['scale']) + need_w(w=0.5, u=h)"),
    _s(
        "inherit_classmethod",
        "layer = Shifted.from_dict(d)\nh = layer(h) + Shifted.squash(h)\n"
        "h = h + Base.__call__(layer, h)",
    ),
    _s(
        "getitem_class",
        "P = Params(net)\nfor k in range(len(P)):\n    W, b = P[k]\n    h = np.tanh(W @ h + b)",
    ),
    _s(
        "stack_variants",
        "M = np.vstack([h, h ** 2])\nN = np.column_stack([h, np.sin(h)])\n"
        "h = np.hstack([M[0, :2], N[2:, 1]]) + h",
    ),
    _s(
        "reduce_lambda", "h = functools.reduce(lambda a, c: a * 0.5 + c, [h, np.sin(h), np.cos(h)])"
    ),
    _s("sum_start", "s = s + np.sum(sum([h, h ** 2], np.zeros(4)) * 0.3)"),
    _s("sorted_items", "for k, v in sorted(d.items()):\n    h = h * 0.9 + v * len(k)"),
    _s(
        "print_in_loop",
        "for k in range(2):\n    h = np.tanh(h) + 0.1\n    print(f'step {k}: {np.sum(h):.3f}')",
    ),
    _s("param_write", "x = x.copy()\nx[1] = x[1] * 2.0 + h[0]\nh = h + x", writes=True),
    _s("param_write_inplace", "x[1] = x[1] * 2.0 + h[0]\nh = h + x", writes=True),
    _s(
        "enumerate_reversed",
        "for k, (W, b) in enumerate(reversed(net)):\n    h = np.tanh(W @ h) * (k + 1.0) + b",
    ),
    _s(
        "gen_late_binding",
        "gens = [(h * k for _ in range(1)) for k in range(1, 3)]\nh = sum(next(g) for g in gens)",
    ),
    _s(
        "dict_of_lists",
        "log = {'a': [], 'b': []}\nfor k in range(3):\n    log['a'].append(h[k])\n"
        "    log['b'].append(h[k] ** 2)\ns = s + sum(log['a']) * sum(log['b'])",
    ),
    _s(
        "while_else",
        "k = 0\nwhile k < 3:\n    h = h * 0.9\n    k += 1\nelse:\n    h = h + 0.1 * np.sin(h)",
    ),
    _s(
        "else_continue",
        "for r in range(3):\n    for W, b in net:\n        h = np.tanh(W @ h + b) + 0.5 * h\n"
        "        if np.max(np.abs(h)) > 1.2:\n            break\n    else:\n        continue\n"
        "    h = h * 0.5",
        kink=True,
    ),
    _s(
        "roll_rows",
        "rows = []\nfor k in range(3):\n    rows.append(np.roll(h, k) * d['scale'])\n"
        "h = np.sum(np.stack(rows, axis=1), axis=1) * 0.3",
    ),
    _s(
        "local_default_loop",
        "for c in (0.5, 1.5):\n    def g(u, c=c):\n        return u * c\n    h = g(h) + 0.1",
    ),
)

#: Snippets the second oracles do not follow.
NO_ORACLE3 = {
    "rng_perm",
    "inherit_classmethod",
    "reduce_lambda",
    "print_in_loop",
    "getitem_class",
    "isinstance_branch",
    "math_entries",
    "casts",
    "rng_noise",
    "assert_shape",
    "getattr_act",
    "item_cast",
    "max_key",
    "bool_value_ops",
    "late_binding",
    "default_captured",
}
NO_JAX3 = {
    "np_sum_list",
    "rng_perm",
    "print_in_loop",
    "isinstance_branch",
    "math_entries",
    "casts",
    "item_cast",
    "getattr_act",
    "max_key",
    "bool_value_ops",
    "comp_cond_sum",
    "comp_cond_array",
    "walrus",
    "cond_expr",
}
NO_JAX3 |= {"rng_noise", "nested_break_continue", "for_else", "shapes_in_branches", "zip_slices"}
base.NO_ORACLE.update(NO_ORACLE3)
base.NO_JAX.update(NO_JAX3)


def program(snippets: list[Snippet], ret: str) -> str:
    """The source of the helpers and ``f(x, net, d)`` made of ``snippets``."""
    return HELPERS3 + "\n\n" + base.program(snippets, ret)
