"""Fourth round of random user programs: parameter trees, optimiser steps, and the
functional, NumPy and SciPy idioms the earlier rounds did not draw.

A program is ``f(x, net, d, p)`` (see :mod:`random_check4` for ``p`` and the checks):
``h`` (a vector of 4) and ``s`` (a scalar) are updated by the snippets drawn and a
scalar is returned. The snippets read parameters as dicts of tuples, lists of dicts and
nested namedtuples (unpacked, indexed, ``_replace``-d, ``_asdict``-ed), walk them with
recursive ``isinstance`` helpers, run optimiser steps inside the loss (momentum, Adam
moments as locals, an SGD step on the layers), fold with ``functools.reduce`` and
``itertools.accumulate``/``chain``/``product``/``starmap``, transpose with ``zip(*...)``,
order with ``sorted(key=...)``, and use ``np.einsum`` paths and ellipses, ``np.where``
chains, ``np.clip`` with array bounds, ``np.maximum`` with scalars, masks on matrices,
repeated fancy indices, ``np.add.at`` in two dimensions, ``x[..., None]``,
``np.take_along_axis``, ``np.linalg`` (solve with a matrix right-hand side, inv, det,
norm orders, matrix_power), ``math`` functions of entries, ``scipy.special`` and
``scipy.stats`` with broadcast array parameters, string-keyed configs, ``try`` around
numerics, local factories and ``nonlocal``, ``*args``/``**kwargs`` forwarding, recursion
with a depth argument, generators consumed by ``sum``, nested conditional comprehensions,
``isinstance`` dispatch, class- and static methods, dataclasses with defaults.
"""

from __future__ import annotations

import random_users as base
from random_users import Snippet
from random_users3 import HELPERS3
from random_users3 import SNIPPETS as SNIPPETS3

#: The helpers the snippets call (before ``f`` in the program's module).
HELPERS4 = """
import collections
import dataclasses
import functools
import itertools
import math
import operator

Inner = collections.namedtuple("Inner", ["a", "b"])
Outer = collections.namedtuple("Outer", ["inner", "t"])
CONFIG = {"gain": 1.5, "act": "tanh"}


def mlp(params, u):
    for W, b in params[:-1]:
        u = np.tanh(W @ u + b)
    W, b = params[-1]
    return W @ u + b


def tmap(fn, t):
    if isinstance(t, dict):
        return {k: tmap(fn, v) for k, v in t.items()}
    if isinstance(t, list):
        return [tmap(fn, v) for v in t]
    if isinstance(t, tuple):
        return tuple(tmap(fn, v) for v in t)
    return fn(t)


def sq_norm(t):
    if isinstance(t, dict):
        return sum(sq_norm(v) for v in t.values())
    if isinstance(t, (list, tuple)):
        return sum(sq_norm(v) for v in t)
    return np.sum(t ** 2)


def apply_any(obj, u):
    if isinstance(obj, dict):
        return u * obj["w"] + obj["g"]
    if isinstance(obj, tuple):
        W, b = obj
        return W @ u + b
    return obj * u


def call_with(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def powered(u, scale=1.0, power=2):
    return scale * u ** power


def blend(u, alpha=1.0, beta=0.0):
    return alpha * u + (1.0 - alpha) * beta


def refine(u, depth):
    if depth == 0:
        return u
    return refine(0.5 * (u + np.sin(u)), depth - 1)


def squares(u):
    for v in u:
        yield v * v


def walk(blocks):
    for blk in blocks:
        yield from blk.values()


def halves(a, b):
    return np.concatenate([b * a, a + b])


class Gate:
    def __init__(self, w, g):
        self.w = w
        self.g = g

    @classmethod
    def from_block(cls, blk):
        return cls(blk["w"], blk["g"])

    @staticmethod
    def act(u):
        return u / (1.0 + np.exp(-u))

    def __call__(self, u):
        return self.act(u * self.w) + self.g


class Ops:
    @staticmethod
    def swish(u):
        return u / (1.0 + np.exp(-u))

    @staticmethod
    def square(u):
        return u * u


class Poly:
    def __init__(self, coefs):
        self.coefs = coefs

    def __call__(self, u):
        out = 0.0
        for c in reversed(self.coefs):
            out = out * u + c
        return out


class Lin:
    def __init__(self, wb):
        self.W, self.b = wb

    @property
    def weight_t(self):
        return self.W.T

    @property
    def bias(self):
        return self.b * 0.5


@dataclasses.dataclass
class Cfg:
    lr: float = 0.1
    steps: int = 2
    decay: float = 0.9
"""


def _s(name: str, text: str, *, writes: bool = False, kink: bool = False) -> Snippet:
    return Snippet(name, tuple(text.strip("\n").split("\n")), writes, kink)


#: Snippets on parameter trees.
TREES: tuple[Snippet, ...] = (
    _s(
        "dict_of_tuples",
        "for key in ('enc', 'dec'):\n    A, c = p[key]\n    h = np.tanh(A @ h + c)",
    ),
    _s(
        "dict_items_tuples",
        "for key, val in p.items():\n    if key in ('enc', 'dec'):\n        W, c = val\n"
        "        h = h + 0.1 * np.sin(W @ h + c)",
    ),
    _s("list_of_dicts", "for blk in p['blocks']:\n    h = h * blk['w'] + np.tanh(blk['g'] * h)"),
    _s(
        "list_of_dicts_enum",
        "for i, blk in enumerate(p['blocks']):\n    h = h + (i + 1) * blk['g'] ** 2 * 0.1 * h",
    ),
    _s("nested_nt", "q = p['nt']\nh = h * q.inner.a + q.t * q.inner.b"),
    _s("nt_replace", "q = p['nt'].inner._replace(b=h)\nh = q.a * q.b + h"),
    _s("nt_unpack", "(a, b), t = p['nt']\nh = h + a * t - b * h"),
    _s("nt_index", "h = h + p['nt'][0][1] * p['nt'][1] + p['nt'][0].a[0]"),
    _s("nt_built", "o = Outer(Inner(h, h ** 2), 0.5)\nh = o.inner.a * o.t + o.inner.b * 0.1"),
    _s("nt_asdict", "dd = p['nt'].inner._asdict()\nh = h + dd['a'] * dd['b']"),
    _s(
        "tree_map_helper",
        "sc = tmap(lambda v: v * 0.5, p['blocks'])\nfor blk in sc:\n    h = h + blk['w'] * h * 0.3",
    ),
    _s("tree_l2", "s = s + 0.01 * sq_norm(p['blocks']) + 0.01 * sq_norm(p['enc'])"),
    _s(
        "fstring_keys",
        "params = {'W1': net[0][0], 'b1': net[0][1], 'W2': net[1][0], 'b2': net[1][1]}\n"
        "for i in (1, 2):\n    h = np.tanh(params[f'W{i}'] @ h + params[f'b{i}'])",
    ),
    _s("dict_update", "cfg = dict(p['blocks'][0])\ncfg.update({'g': h})\nh = cfg['w'] * cfg['g']"),
    _s(
        "dict_merge",
        "merged = {**p['blocks'][0], 'extra': h}\nh = merged['w'] * merged['extra'] + merged['g']",
    ),
    _s(
        "dict_setdefault",
        "acc = {}\nacc.setdefault('a', h * 0.0)\nacc['a'] = acc['a'] + h ** 2\nh = acc['a'] + h",
    ),
    _s(
        "stack_block_ws",
        "ws = [blk['w'] for blk in p['blocks']]\nh = h * np.prod(np.stack(ws), axis=0)",
    ),
    _s(
        "comp_over_blocks",
        "tot = {k: sum(blk[k] for blk in p['blocks']) for k in ('w', 'g')}\n"
        "h = h * tot['w'] + tot['g']",
    ),
    _s(
        "isinstance_dispatch",
        "for obj in [p['enc'], p['blocks'][0], 0.5]:\n    h = np.tanh(apply_any(obj, h))",
    ),
)

#: Snippets with optimiser steps inside the loss.
OPTIM: tuple[Snippet, ...] = (
    _s(
        "momentum",
        "v = np.zeros(4)\nfor _ in range(3):\n    g = np.cos(h) * d['scale']\n    v = 0.9 * v + g\n"
        "    h = h - 0.1 * v",
    ),
    _s(
        "adam_moments",
        "m = np.zeros_like(h)\nv = np.zeros_like(h)\nfor t in range(1, 4):\n"
        "    g = h - d['shift']\n    m = 0.9 * m + 0.1 * g\n    v = 0.999 * v + 0.001 * g ** 2\n"
        "    mh = m / (1 - 0.9 ** t)\n    vh = v / (1 - 0.999 ** t)\n"
        "    h = h - 0.05 * mh / (np.sqrt(vh) + 0.1)",
    ),
    _s(
        "sgd_layers",
        "net2 = [(W - 0.1 * np.outer(h, h), b - 0.1 * h) for W, b in net]\nh = mlp(net2, h)",
    ),
    _s(
        "dict_step",
        "upd = {k: v - 0.1 * np.sin(v) for k, v in d.items()}\nh = h * upd['scale'] + upd['shift']",
    ),
    _s(
        "grad_clip",
        "g = np.cos(h) * h\nn = np.linalg.norm(g)\nif n > 1.0:\n    g = g / n\nh = h - 0.5 * g",
        kink=True,
    ),
    _s(
        "dataclass_cfg",
        "cfg = Cfg(steps=3)\nfor _ in range(cfg.steps):\n"
        "    h = h - cfg.lr * np.sin(h) * cfg.decay",
    ),
    _s(
        "block_sgd",
        "blocks = [{k: v - 0.1 * h for k, v in blk.items()} for blk in p['blocks']]\n"
        "for blk in blocks:\n    h = np.tanh(h * blk['w'] + blk['g'])",
    ),
)

#: Snippets with functools and itertools.
FUNCTIONAL: tuple[Snippet, ...] = (
    _s("reduce_matmul", "M = functools.reduce(np.matmul, [W for W, _ in net])\nh = np.tanh(M @ h)"),
    _s("reduce_operator", "s = s + functools.reduce(operator.add, [h[0], h[1] ** 2, h[2] * h[3]])"),
    _s(
        "reduce_init",
        "h = functools.reduce(lambda acc, blk: acc * blk['w'] + blk['g'], p['blocks'], h)",
    ),
    _s(
        "accumulate",
        "cums = list(itertools.accumulate(h))\ns = s + sum(c ** 2 for c in cums) * 0.1",
    ),
    _s(
        "accumulate_fn",
        "prods = list(itertools.accumulate([h, np.sin(h), np.cos(h)], lambda a, c: a * c))\n"
        "h = prods[-1] + prods[1]",
    ),
    _s(
        "zip_star_rows",
        "M = np.outer(h, h[:3])\ncols = list(zip(*M))\ns = s + sum(c[0] * c[1] for c in cols)",
    ),
    _s(
        "zip_star_blocks",
        "ws, gs = zip(*[(blk['w'], blk['g']) for blk in p['blocks']])\n"
        "h = h * sum(ws) * 0.5 + sum(gs)",
    ),
    _s(
        "enum_reversed_blocks",
        "for i, blk in enumerate(reversed(p['blocks'])):\n    h = np.sin(h * blk['w']) * (i + 1.0)",
    ),
    _s(
        "sorted_key_layers",
        "layers = sorted(net, key=lambda wb: float(np.sum(wb[1])))\nfor W, b in layers:\n"
        "    h = np.sin(W @ h) + b",
    ),
    _s(
        "sorted_key_abs",
        "vals = sorted([h[0], h[1] * 2.0, h[2] - 1.0], key=abs)\n"
        "s = s + vals[0] * 0.5 + vals[-1] ** 2",
        kink=True,
    ),
    _s(
        "product_loop",
        "for i, j in itertools.product(range(2), range(2)):\n"
        "    s = s + net[i][0][j, j] * h[i + j]",
    ),
    _s(
        "chain_loop",
        "for v in itertools.chain(p['blocks'][0].values(), [h]):\n    s = s + np.sum(v * h) * 0.1",
    ),
    _s("starmap", "s = s + sum(itertools.starmap(lambda a, b: a * b, zip(h, h[::-1])))"),
    _s("map_two", "h = np.array(list(map(lambda a, b: a * np.sin(b), h, x))) + h"),
    _s("filter_pos", "s = s + sum(filter(lambda v: v > 0.0, h))", kink=True),
    _s(
        "any_all",
        "if all(v > -3.0 for v in h) and any(v > 0.0 for v in h):\n    h = h * 1.1",
        kink=True,
    ),
    _s(
        "nested_comp",
        "pairs = [h[i] * h[j] for i in range(4) for j in range(i) if (i + j) % 2 == 1]\n"
        "s = s + sum(pairs)",
    ),
    _s(
        "comp_ifelse_params",
        "ws = [W if k == 0 else W.T for k, (W, b) in enumerate(net)]\nfor W in ws:\n"
        "    h = np.tanh(W @ h)",
    ),
    _s(
        "sorted_dict_rev",
        "for k, v in sorted(d.items(), key=lambda kv: kv[0], reverse=True):\n    h = h * 0.9 + v",
    ),
    _s("zip_keys_values", "for k, v in zip(d.keys(), d.values()):\n    h = h + v * len(k) * 0.1"),
)

#: Snippets on NumPy.
NUMPY: tuple[Snippet, ...] = (
    _s("einsum_path", "h = np.einsum('ij,jk,k->i', net[0][0], net[1][0], h, optimize=True) + h"),
    _s(
        "einsum_ellipsis",
        "B = np.stack([W for W, _ in net])\nh = np.einsum('...ij,j->...i', B, h).sum(axis=0) * 0.5",
    ),
    _s("einsum_implicit", "s = s + np.einsum('i,j,ij', h, x, net[0][0])"),
    _s(
        "where_chain", "h = np.where(h > 0.5, h, np.where(h < -0.5, -h ** 2, np.sin(h)))", kink=True
    ),
    _s("where_sign", "h = np.where(h > 0.0, 1.0, -1.0) * h ** 2", kink=True),
    _s("clip_arrays", "h = np.clip(h, d['shift'] - 1.0, None) + np.clip(h, None, 0.5)", kink=True),
    _s("maximum_scalar_first", "h = np.maximum(0.0, h) + 0.1 * np.minimum(1.0, h ** 2)", kink=True),
    _s("relu_mask_mul", "h = h * (h > 0) + 0.01 * h * (h <= 0)", kink=True),
    _s(
        "mask_mean_size", "pos = h[h > 0.0]\ns = s + (np.mean(pos) if pos.size else 0.0)", kink=True
    ),
    _s("mask_2d", "M = np.outer(h, x)\ns = s + np.sum(M[M > 0.0] ** 2) * 0.1", kink=True),
    _s("fancy_repeat_read", "g = h[[0, 0, 2, 2]]\nh = h * np.sum(g ** 2) * 0.1 + g"),
    _s(
        "add_at_2d",
        "out = np.zeros((2, 4))\nnp.add.at(out, ([0, 1, 0], [1, 1, 1]), h[:3])\n"
        "h = h + out.sum(axis=0)",
        writes=True,
    ),
    _s("ellipsis_none", "M = h[..., None] * x[None, ...]\nh = h + M.sum(axis=-1) * 0.1"),
    _s("pairwise_rbf", "D = h[:, None] - h[None, :]\ns = s + np.sum(np.exp(-D ** 2))"),
    _s(
        "take_along",
        "M = np.outer(h, x)\nidx = np.argsort(M, axis=1)\n"
        "h = h + np.take_along_axis(M, idx, axis=1)[:, -1]",
        kink=True,
    ),
    _s("np_take", "h = h + np.take(h, [3, 2, 1, 0]) * 0.5"),
    _s(
        "solve_matrix_rhs",
        "A = net[0][0] @ net[0][0].T + np.eye(4)\nX = np.linalg.solve(A, np.outer(h, x))\n"
        "h = X @ h * 0.1 + h",
    ),
    _s(
        "inv_quadform",
        "A = np.eye(4) * 2.0 + 0.1 * (net[1][0] + net[1][0].T)\ns = s + h @ np.linalg.inv(A) @ h",
    ),
    _s(
        "det_logabs",
        "A = np.eye(4) + 0.2 * np.outer(h, x)\ns = s + np.log(np.abs(np.linalg.det(A)))",
        kink=True,
    ),
    _s(
        "norm_orders",
        "s = s + np.linalg.norm(net[0][0], 'fro') + np.linalg.norm(h, 1) * 0.1"
        " + np.linalg.norm(h, np.inf) * 0.1",
        kink=True,
    ),
    _s("matrix_power", "h = np.linalg.matrix_power(0.5 * net[0][0], 3) @ h + h"),
    _s("triu", "M = np.triu(np.outer(h, h))\nh = h + M @ x * 0.1 + np.tril(net[0][0], -1) @ h"),
    _s("diag", "h = h + np.diag(net[0][0]) * h + np.diag(h) @ x"),
    _s("pad", "h = np.pad(h, 1)[1:5] + np.pad(h, (2, 0), mode='constant')[:4] * 0.5"),
    _s("repeat_tile", "h = np.repeat(h[:2], 2) * 0.5 + np.tile(h[2:], 2)"),
    _s("split", "a, b = np.split(h, 2)\nh = np.concatenate([b * a, a + b])"),
    _s("flip_rot90", "h = np.flip(h) * 0.5 + np.rot90(np.outer(h, x))[0]"),
    _s("inner_vdot", "s = s + np.inner(h, x) + np.vdot(h, h) * 0.1"),
    _s("linspace_weights", "w = np.linspace(0.0, 1.0, 4)\nh = h * w + np.arange(4) * 0.1"),
    _s("logaddexp", "s = s + np.sum(np.logaddexp(h, x))"),
    _s("hypot_arctan2", "h = np.hypot(h, 0.5) + np.arctan2(h, x ** 2 + 1.0)"),
    _s("softplus_where", "h = np.where(h > 0, h + np.log1p(np.exp(-h)), np.log1p(np.exp(h)))"),
    _s("array_methods", "h = h - h.mean() + h.std() * 0.1 + h.cumsum() * 0.1 + h.prod() * 0.01"),
    _s("astype_copy", "h = h.astype(float).copy() * 2.0\nh[0] = h[1]", writes=True),
    _s(
        "iter_stacked_rows",
        "P = np.stack([h, x], axis=-1)\nfor row in P:\n    s = s + row[0] * row[1]",
    ),
    _s("iter_param_rows", "for row in net[0][0]:\n    s = s + np.dot(row, h) ** 2 * 0.1"),
    _s("asarray_list", "h = np.asarray([h[3], h[2], h[1], h[0]]) * 0.5 + h"),
)

#: Snippets on math and SciPy.
SCIPY: tuple[Snippet, ...] = (
    _s(
        "math_mix",
        "a = math.sqrt(h[0] ** 2 + 1.0)\nb = math.atan2(h[1], 2.0) + math.hypot(h[2], h[3])\n"
        "s = s + a * b + math.log1p(h[0] ** 2) + math.erf(h[1])",
    ),
    _s("math_pow_fsum", "s = s + math.pow(h[0] ** 2 + 1.0, 1.5) + math.fsum([h[1], h[2]])"),
    _s("math_consts", "s = s + math.pi * h[0] + math.e ** (h[1] * 0.5) + math.cosh(h[2] * 0.5)"),
    _s(
        "gammaln",
        "s = s + np.sum(scipy.special.gammaln(h ** 2 + 1.0)) + scipy.special.gammaln(2.5)",
    ),
    _s(
        "norm_logpdf_broadcast",
        "s = s + np.sum(scipy.stats.norm.logpdf(h[:, None], loc=x[None, :], "
        "scale=np.exp(d['scale'])[None, :]))",
    ),
    _s(
        "expit_logit",
        "h = scipy.special.expit(h) * 2.0 + 0.1 * scipy.special.logit(scipy.special.expit(x))",
    ),
    _s(
        "logsumexp_keepdims",
        "M = np.outer(h, x)\nh = h + scipy.special.logsumexp(M, axis=1, keepdims=True)[:, 0] * 0.1",
    ),
    _s("logsumexp_b", "s = s + scipy.special.logsumexp(h, b=d['scale'] ** 2)"),
    _s("t_logpdf", "s = s + np.sum(scipy.stats.t.logpdf(h, 4.0, loc=x, scale=2.0))"),
    _s("xlogy_entropy", "q = scipy.special.softmax(h)\ns = s + np.sum(scipy.special.xlogy(q, q))"),
)

#: Snippets with control flow, functions and classes.
LANGUAGE: tuple[Snippet, ...] = (
    _s(
        "string_config",
        "cfg = {'act': 'relu', 'depth': 2, 'norm': True}\n"
        "acts = {'relu': lambda u: np.maximum(u, 0.0), 'tanh': np.tanh}\n"
        "for _ in range(cfg['depth']):\n    h = acts[cfg['act']](h) + 0.1 * h\n"
        "    if cfg['norm']:\n        h = h / (1.0 + np.linalg.norm(h))",
        kink=True,
    ),
    _s(
        "string_switch",
        "for mode in ['scale', 'shift', 'scale']:\n    if mode == 'scale':\n"
        "        h = h * d['scale']\n"
        "    elif mode == 'shift':\n        h = h + d['shift']",
    ),
    _s(
        "return_in_blocks",
        "for i, blk in enumerate(p['blocks']):\n    h = np.tanh(h * blk['w'])\n"
        "    if np.max(h) > 0.9:\n        return s + np.sum(h ** 2) * (i + 1)",
        kink=True,
    ),
    _s(
        "try_cholesky",
        "try:\n    L = np.linalg.cholesky(np.outer(h, h))\n    s = s + np.sum(L)\n"
        "except np.linalg.LinAlgError:\n    s = s + np.sum(h ** 2)",
    ),
    _s(
        "try_zero_div",
        "den = float(np.sum(h * 0.0))\ntry:\n    r = 1.0 / den * h[1]\nexcept ZeroDivisionError:\n"
        "    r = h[1] * 2.0\ns = s + r",
    ),
    _s(
        "try_keyerror",
        "try:\n    v = d['missing']\nexcept KeyError:\n    v = d['shift']\nh = h + v",
    ),
    _s(
        "inner_layer_fn",
        "def layer(u, k):\n    W, b = net[k]\n    return np.tanh(W @ u + b)\n"
        "h = layer(layer(h, 0), 1)",
    ),
    _s(
        "lambda_param_tree",
        "score = lambda u: np.sum(u * p['blocks'][1]['w'])\ns = s + score(h) + score(h ** 2)",
    ),
    _s("call_with", "h = call_with(np.multiply, h, x) + call_with(powered, h, scale=0.3)"),
    _s("kwargs_dict", "opts = {'alpha': 0.5, 'beta': h ** 2}\nh = blend(h, **opts) + blend(h)"),
    _s("recursion_depth", "h = refine(h, 3) + refine(h, depth=1)"),
    _s("generator_sum", "s = s + sum(squares(h)) * 0.5"),
    _s("yield_from", "s = s + sum(np.sum(v * h) for v in walk(p['blocks'])) * 0.1"),
    _s("gen_zip_sum", "s = s + sum(a * b for a, b in zip(h, x))"),
    _s("classmethod_ctor", "layer = Gate.from_block(p['blocks'][0])\nh = layer(h) + Gate.act(h)"),
    _s("staticmethods", "h = Ops.swish(h) + Ops.square(h) * 0.1"),
    _s("poly_horner", "poly = Poly([h[0], h[1], 0.5])\nh = poly(x) + h"),
    _s("property_params", "m = Lin(net[0])\nh = m.weight_t @ h + m.bias"),
    _s(
        "tuple_swap_loop",
        "a, b = h[:2] * 1.0, h[2:] * 1.0\nfor _ in range(3):\n    a, b = b, a + 0.5 * b\n"
        "h = np.concatenate([a, b])",
    ),
    _s("chained_compare", "if -1.0 < h[0] < 1.0:\n    s = s + h[0] ** 3", kink=True),
    _s("pow_builtin", "s = s + pow(h[0] ** 2 + 1.0, 0.5) + pow(2.0, h[1])"),
    _s(
        "local_factory",
        "def make_scaler(c):\n    def g(u):\n        return u * c\n    return g\n"
        "sc = make_scaler(d['scale'])\nh = sc(h) + make_scaler(0.5)(h)",
    ),
    _s(
        "nonlocal_total",
        "total = 0.0\ndef add(v):\n    nonlocal total\n    total = total + v\nfor k in range(4):\n"
        "    add(h[k] ** 2)\ns = s + total",
    ),
    _s("global_config", "h = h * CONFIG['gain'] + (np.tanh(h) if CONFIG['act'] == 'tanh' else h)"),
    _s("star_split_helper", "h = halves(*np.split(h, 2))"),
)

SNIPPETS: tuple[Snippet, ...] = TREES + OPTIM + FUNCTIONAL + NUMPY + SCIPY + LANGUAGE

#: Snippets autograd does not follow (math on a box, a namedtuple method, SciPy functions
#: it has no rule for, ``np.take_along_axis``...): finite differences alone check them.
NO_ORACLE4 = {
    "nt_replace",
    "nt_asdict",
    "math_mix",
    "math_pow_fsum",
    "math_consts",
    "xlogy_entropy",
    "logsumexp_b",
    "try_zero_div",
    "sorted_key_layers",
    "zip_star_rows",
    "pow_builtin",
    "tree_map_helper",
    "tree_l2",
    "pad",
    "asarray_list",
    "norm_logpdf_broadcast",
    "t_logpdf",
    "isinstance_dispatch",
}
RETURNS = ("s + np.sum(h ** 2)", "s + np.sum(np.tanh(h))", "0.5 * s + np.sum(h * x)")


def program(snippets: list[Snippet], ret: str, *, earlier: bool = False) -> str:
    """The source of the helpers and ``f(x, net, d, p)`` made of ``snippets`` (with
    ``earlier``, also the helpers of the first three rounds, whose snippets may be mixed
    in)."""
    body = ["def f(x, net, d, p):", "    h = x * 1.0", "    s = 0.0"]
    for snippet in snippets:
        body += ["    " + line for line in snippet.lines]
    body.append(f"    return {ret}")
    helpers = HELPERS4
    if earlier:
        helpers = base.HEADER + "\n\n" + HELPERS3 + "\n\n" + HELPERS4
    return helpers + "\n\n" + "\n".join(body) + "\n"


#: Every snippet of the earlier rounds (mixed in with ``earlier=True``), and those the
#: second oracle does not follow.
EARLIER: tuple[Snippet, ...] = base.SNIPPETS + SNIPPETS3
NO_ORACLE_ALL = NO_ORACLE4 | base.NO_ORACLE
