"""Random programs written the way users write them, for ``test_random_users.py``.

A program is a function ``f(x, net, d)`` of a vector ``x`` (4 entries), a list of ``(W, b)``
layers and a dict of arrays. Its body chains snippets drawn from :data:`SNIPPETS`: layers
iterated and indexed, dict reads and ``.items()``, inner functions and lambdas,
comprehensions, ``while`` with ``break``/``continue``, early returns inside loops, slice
assignment and ``+=`` on slices, augmented assignment on an object's attribute,
``np.where``/``np.maximum``/``np.clip`` pieces, reductions with ``axis``/``keepdims``,
broadcasting, integer and boolean indexing, ndarray methods, the math module,
recursion, generator helpers, ``*args``/``**kwargs``, closures returned by a factory,
decorated helpers, ``functools.partial``, scipy.special and scipy.stats, a softmax
cross-entropy; and (second round) namedtuples, dataclasses and classes built in the loss,
``try``/``except`` around a likelihood, ``np.fft`` then ``abs``, ``apply_along_axis``,
concatenated parameter lists, ``np.linalg`` (cholesky, slogdet, solve, inv), argmax and
argsort selections, ``np.where`` with ``nan_to_num``, einsum strings, integer and mask
writes, ``np.add.at``, ``while True`` with ``break``, recursion over the layers, closures
over arrays, decorators with arguments, star-calls, lambdas bound again, a generator kept
in a name. Each snippet reads and updates ``h`` (a
fresh vector of 4 entries) and ``s`` (a scalar); the function returns a scalar.

The module header (:data:`HEADER`) holds the helpers the snippets call. It imports
``numpy as np`` or, for the second oracle, ``autograd.numpy as np``
(:func:`load` with ``oracle="autograd"``, or ``"jax"`` where autograd does not follow the
program); snippets that write into arrays are marked, as
autograd does not follow them.
"""

from __future__ import annotations

import importlib.util
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HEADER = """
import collections
import dataclasses
import functools
import math


def step(u, w=0.5):
    t = np.sin(u) * w
    return t + u


def first_large(u, limit):
    for k in range(u.shape[0]):
        if u[k] > limit:
            return u[k] * 2.0
    return np.sum(u) * 0.1


class Scaler:
    def __init__(self, w):
        self.w = w
        self.calls = 0

    def __call__(self, u):
        self.calls += 1
        return u * self.w


WEIGHTS = np.array([0.5, -1.0, 0.25, 2.0])
SCALER = Scaler(np.array([0.9, 1.1, 0.8, 1.2]))


def power(u, n):
    if n == 0:
        return u
    return u * power(u, n - 1)


def pairs(u):
    for i in range(u.shape[0] - 1):
        yield u[i], u[i + 1]


def combine(*parts, scale=1.0, **extra):
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total * scale + extra.get("shift", 0.0)


def make_act(a):
    return lambda u: np.tanh(a * u)


def doubled(fn):
    @functools.wraps(fn)
    def wrapper(u):
        return 2.0 * fn(u)

    return wrapper


@doubled
def soft(u):
    return np.log1p(np.exp(u))


def mlp(params, u):
    for W, b in params[:-1]:
        u = np.tanh(W @ u + b)
    W, b = params[-1]
    return W @ u + b


Layer = collections.namedtuple("Layer", ["W", "b"])


@dataclasses.dataclass
class Affine:
    scale: np.ndarray
    shift: np.ndarray

    def apply(self, u):
        return u * self.scale + self.shift


class Dense:
    def __init__(self, W, b, act=np.tanh):
        self.W = W
        self.b = b
        self.act = act

    def pre(self, u):
        return self.W @ u + self.b

    def __call__(self, u):
        return self.act(self.pre(u))


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, u):
        for layer in self.layers:
            u = layer(u)
        return u

    def penalty(self):
        return sum(np.sum(layer.W ** 2) for layer in self.layers)


def deep(params, u):
    if not params:
        return u
    W, b = params[0]
    return deep(params[1:], np.tanh(W @ u + b))


def layer_outputs(params, u):
    for W, b in params:
        u = np.tanh(W @ u + b)
        yield u


def make_affine(W, b):
    def apply(u):
        return W @ u + b

    return apply


def scaled(k):
    def deco(fn):
        def wrapper(*args, **kwargs):
            return k * fn(*args, **kwargs)

        return wrapper

    return deco


@scaled(0.5)
def bump(u, c=1.0):
    return np.exp(-c * u * u)


def loglik(u, loc, scale):
    if np.any(scale <= 0.0):
        raise ValueError("scale must be positive")
    return np.sum(scipy.stats.norm.logpdf(u, loc=loc, scale=scale))


def fixed_point(u, tol=1e-10):
    z = u * 0.0
    for _ in range(100):
        new = np.tanh(0.5 * z + u)
        if np.max(np.abs(new - z)) < tol:
            break
        z = new
    return z


def row_energy(r):
    return np.sum(r ** 2) + r[0]
"""


@dataclass(frozen=True)
class Snippet:
    """Lines of a function body (indented by one level) and what they use.

    Attributes:
        name: A short label (reports count outcomes by it).
        lines: The body lines, ``{p}`` standing for the indentation.
        writes: Whether the lines write into an array (not followed by autograd).
        kink: Whether the snippet has a data-dependent branch or a kink
            (finite differences may cross it: the check skips such points).
    """

    name: str
    lines: tuple[str, ...]
    writes: bool = False
    kink: bool = False


def _s(name: str, text: str, *, writes: bool = False, kink: bool = False) -> Snippet:
    return Snippet(name, tuple(text.strip("\n").split("\n")), writes, kink)


SNIPPETS: tuple[Snippet, ...] = (
    _s("layers", "for W, b in net:\n    h = np.tanh(W @ h + b)"),
    _s("layers_indexed", "for k in range(len(net)):\n    h = np.sin(net[k][0] @ h) + net[k][1]"),
    _s("mlp_helper", "h = h + 0.5 * mlp(net, h)"),
    _s("dict_read", "h = h * d['scale'] + d['shift']"),
    _s("dict_items", "for key, val in d.items():\n    s = s + np.sum(val * h) * len(key)"),
    _s("dict_get", "s = s + np.sum(d.get('shift') ** 2)"),
    _s(
        "inner_def",
        "def local(u, k=0.3):\n    v = np.tanh(u * k + h[0])\n    return v * u\nh = local(h) + h",
    ),
    _s("helper_default", "h = step(h) + step(h, w=0.25)"),
    _s("lambda", "act = lambda u: np.sin(u) * u\nh = act(h) + 0.1"),
    _s(
        "lambda_closure",
        "shift = np.mean(h)\nfn = lambda u: (u - shift) ** 2\ns = s + np.sum(fn(h))",
    ),
    _s("list_comp", "parts = [h[i] * h[i + 1] for i in range(3)]\ns = s + sum(parts)"),
    _s("comp_params", "s = s + sum([np.sum(W @ h) * 0.1 for W, b in net])"),
    _s("dict_comp", "pieces = {k: np.sum(v * h) for k, v in d.items()}\ns = s + pieces['scale']"),
    _s("gen_sum", "s = s + sum(np.sum(b * h) for W, b in net)"),
    _s(
        "while_break",
        "k = 0\nwhile k < 5:\n    k += 1\n    if np.sum(h) > 3.0:\n        break\n"
        "    if k % 2 == 0:\n        continue\n    h = h * 0.9 + 0.1 * np.sin(h)",
        kink=True,
    ),
    _s(
        "while_norm",
        "n = 0\nwhile np.sum(h * h) > 1.0 and n < 6:\n    h = 0.8 * h\n    n += 1",
        kink=True,
    ),
    _s(
        "for_break",
        "for k in range(4):\n    if h[k] > 0.5:\n        s = s + h[k] ** 2\n"
        "        break\n    s = s + 0.5 * h[k]",
        kink=True,
    ),
    _s("early_return_helper", "s = s + first_large(h, 0.3)", kink=True),
    _s(
        "early_return",
        "for k in range(3):\n    if np.max(h) > 4.0:\n        return s + np.sum(h)\n"
        "    h = h + 0.2 * np.cos(h)",
        kink=True,
    ),
    _s("slice_assign", "h[1:3] = h[1:3] * 2.0 + np.sin(h[:2])", writes=True),
    _s("slice_iadd", "h[1:] += 0.5 * np.tanh(h[:-1])", writes=True),
    _s("item_imul", "h[0] *= h[1]\nh[2] -= 0.5 * h[3]", writes=True),
    _s("setitem_loop", "for k in range(1, 4):\n    h[k] = h[k] + 0.3 * h[k - 1]", writes=True),
    _s("attr_aug", "h = SCALER(h) + Scaler(np.ones(4) * 0.5)(h)", writes=True),
    _s("where", "h = np.where(h > 0.2, h ** 2, 0.5 * h)", kink=True),
    _s("maximum", "h = np.maximum(h, 0.1 * h) + np.minimum(h, 0.3)", kink=True),
    _s("clip", "h = np.clip(h, -1.0, 1.5) + 0.1 * h", kink=True),
    _s("abs", "s = s + np.sum(np.abs(h - 0.1))", kink=True),
    _s(
        "reduce_axis",
        "M = np.outer(h, h[:3])\nh = h + np.sum(M, axis=1)\n"
        "s = s + np.sum(np.mean(M, axis=0) ** 2)",
    ),
    _s(
        "keepdims",
        "M = net[0][0] * h\nm = np.mean(M, axis=1, keepdims=True)\n"
        "s = s + np.sum((M - m) ** 2) * 0.1",
    ),
    _s("max_axis", "M = net[0][0] * h[:, None]\nh = h + np.max(M, axis=0)", kink=True),
    _s("norm_axis", "M = net[0][0] + h\ns = s + np.sum(np.linalg.norm(M, axis=0))"),
    _s("std", "s = s + np.std(h) + np.var(net[0][0] @ h)"),
    _s(
        "broadcast",
        "M = h[:, None] * net[0][0]\nh = h + np.mean(M, axis=0) + net[0][1][None, :][0]",
    ),
    _s("int_index", "idx = np.array([0, 2, 3])\ns = s + np.sum(h[idx] ** 2)\nh = h[[1, 0, 3, 2]]"),
    _s("bool_index", "mask = h > 0.0\ns = s + np.sum(h[mask] ** 2)", kink=True),
    _s("logsumexp", "z = net[0][0] @ h\ns = s + np.log(np.sum(np.exp(z - np.max(z))))", kink=True),
    _s("prod_cumsum", "s = s + np.prod(np.tanh(h)) + np.sum(np.cumsum(h) * 0.1)"),
    _s("tuple_unpack", "u, v = h[:2], h[2:]\nh = np.concatenate([v * u, u + v])"),
    _s("stack_reshape", "M = np.stack([h, h ** 2])\nh = np.reshape(M.T, (8,))[:4] + h"),
    _s("repeat_index_iadd", "idx = [0, 0, 2]\nh[idx] += np.sin(h[1:4])", writes=True),
    _s("mask_assign", "h[h < -0.2] = 0.0\nh[h > 1.0] *= 0.5", writes=True, kink=True),
    _s("view_imul", "v = h[1:]\nv *= 1.5\nh = h + 0.1", writes=True),
    _s("reshape_rows", "M = h.reshape(2, 2)\nM[0] += M[1] * 0.5\nh = M.ravel()", writes=True),
    _s(
        "view_rows",
        "M = np.outer(h, h[:2]) * 0.5\nfor row in M:\n    row *= 1.2\nh = h + M[:, 0]",
        writes=True,
    ),
    _s("view_read_after", "v = h[:2]\nh[0] = 0.5 * h[1]\ns = s + np.sum(v ** 2)", writes=True),
    _s("view_chain", "a = h[1:]\nb = a[::2]\nb += 0.3 * np.sin(a[:2])", writes=True),
    _s("view_T", "M = np.outer(h, h) * 0.1\nMt = M.T\nMt[0] *= 1.5\nh = h + M[0]", writes=True),
    _s(
        "list_item_iadd",
        "acc = [h * 1.0, h * 2.0]\nacc[0] += acc[1]\nh = acc[0] * 0.3",
        writes=True,
    ),
    _s(
        "enumerate_layers",
        "for k, (W, b) in enumerate(net):\n    h = np.tanh(W @ h) * (k + 1.0) + b",
    ),
    _s("zip_layers", "for (W, b), c in zip(net, [0.5, 2.0]):\n    h = np.sin(W.T @ h * c) + b"),
    _s("einsum", "h = np.einsum('ij,j->i', net[1][0], h) + np.dot(net[0][1], h)"),
    _s("norm", "s = s + np.linalg.norm(h) + np.sqrt(np.sum(h ** 2) + 1.0)"),
    _s("sigmoid", "h = 1.0 / (1.0 + np.exp(-h)) + h ** 3 * 0.1"),
    _s("builtins", "s = s + max(h[0], h[1]) + abs(h[2]) + min(h[3], 0.5)", kink=True),
    _s(
        "while_return",
        "k = 0\nwhile k < 4:\n    if np.sum(h) > 5.0:\n        return s + np.sum(h * h)\n"
        "    h = h * 1.3 + 0.2\n    k += 1",
        kink=True,
    ),
    _s(
        "append_stack",
        "outs = []\nfor W, b in net:\n    h = np.tanh(W @ h + b)\n    outs.append(h)\n"
        "H = np.stack(outs)\ns = s + np.sum(H[0] * H[1])",
    ),
    _s(
        "dict_rewrite",
        "cache = {}\ncache['a'] = h\ncache['a'] = cache['a'] * 2.0 + d['shift']\nh = cache['a']",
    ),
    _s(
        "keepdims_all",
        "h = h - np.mean(h, keepdims=True) + np.max(h, axis=0, keepdims=True)",
        kink=True,
    ),
    _s(
        "tuple_axis",
        "M = np.outer(h, h) * net[1][0]\n"
        "s = s + np.mean(M, axis=(0, 1)) + np.var(M, axis=0, ddof=1)[0]",
    ),
    _s(
        "col_row",
        "M = h[:, None] + h[None, :] * 0.5\nh = np.min(M, axis=1) + np.prod(M, axis=0) * 0.01",
        kink=True,
    ),
    _s(
        "solve_det",
        "A = net[0][0] + 3.0 * np.eye(4)\nh = np.linalg.solve(A, h) + np.linalg.det(A) * 0.01",
    ),
    _s("sort_cum", "h = np.sort(h) + np.cumprod(h * 0.5)", kink=True),
    _s("scalar_loop", "t = 0.0\nfor k in range(4):\n    t = t * 0.5 + h[k] * h[k]\ns = s + t"),
    _s("global_const", "h = h * WEIGHTS + np.sum(WEIGHTS * h)"),
    _s(
        "methods",
        "M = np.outer(h, h)\n"
        "h = M.sum(axis=0) * 0.1 + M.mean(axis=1) + h.clip(-1.0, 1.0)\n"
        "s = s + M.T.max(axis=0).sum() * 0.1 + h.dot(h)",
        kink=True,
    ),
    _s("reshape_methods", "h = h.reshape(-1, 1).ravel() + h.reshape(2, 2).T.reshape(4)"),
    _s(
        "math_scalar",
        "s = s + math.exp(h[0] * 0.5) + math.sqrt(abs(h[1]) + 1.0) + float(h[2]) ** 2",
        kink=True,
    ),
    _s("recursion", "h = power(h * 0.5, 3) + h"),
    _s("generator", "for u, w in pairs(h):\n    s = s + u * w"),
    _s("varargs", "h = combine(h, np.sin(h), h ** 2, scale=0.5, shift=d['shift'])"),
    _s("closure_factory", "act = make_act(0.7)\nh = act(h) + h"),
    _s("decorated", "h = soft(h) - 1.0"),
    _s("partial", "fn = functools.partial(step, w=0.2)\nh = fn(h)"),
    _s(
        "scipy_special",
        "z = net[0][0] @ h\ns = s + scipy.special.logsumexp(z) + np.sum(scipy.special.expit(h))",
    ),
    _s(
        "scipy_stats",
        "s = s + np.sum(scipy.stats.norm.logpdf(h, loc=d['shift'], scale=d['scale'] ** 2 + 0.5))",
    ),
    _s("where_index", "idx = np.where(h > 0.0)[0]\ns = s + np.sum(h[idx] ** 3)", kink=True),
    _s(
        "while_converge",
        "err = 1.0\nn = 0\nwhile err > 1e-3 and n < 20:\n"
        "    new = 0.5 * (h + 1.0 / (1.0 + h * h))\n    err = np.max(np.abs(new - h))\n"
        "    h = new\n    n += 1",
        kink=True,
    ),
    _s(
        "diff_concat",
        "M = np.stack([h, h * 2.0], axis=1)\n"
        "h = np.concatenate([np.diff(h), M[:1, 0]]) + np.cumsum(M, axis=0)[:, 1] * 0.1",
    ),
    _s(
        "namedtuple_layers",
        "layers = [Layer(W, b) for W, b in net]\nfor L in layers:\n    h = np.tanh(L.W @ h + L.b)",
    ),
    _s("namedtuple_kw", "L = Layer(b=d['shift'], W=net[1][0])\nh = np.sin(L.W @ h) + L.b * h"),
    _s(
        "dataclass_built",
        "aff = Affine(d['scale'], shift=d['shift'])\nh = aff.apply(h) + aff.scale",
    ),
    _s(
        "class_in_loss",
        "model = Stack([Dense(W, b) for W, b in net])\nh = model(h)\ns = s + 0.1 * model.penalty()",
    ),
    _s(
        "class_method_call",
        "layer = Dense(net[0][0], net[0][1], act=np.sin)\nh = layer.pre(h) * 0.5 + layer(h)",
    ),
    _s(
        "try_except",
        "try:\n    ll = loglik(h, d['shift'], d['scale'] ** 2 + 0.5)\nexcept ValueError:\n"
        "    ll = 0.0\ns = s + ll * 0.1",
    ),
    _s(
        "try_else",
        "try:\n    r = np.sum(np.sqrt(h * h + 1.0))\nexcept FloatingPointError:\n    r = 0.0\n"
        "else:\n    r = r * 2.0\nfinally:\n    h = h + 0.0\ns = s + r",
    ),
    _s("fft_abs", "F = np.fft.fft(h)\ns = s + np.sum(np.abs(F) ** 2) * 0.05 + np.real(F[1])"),
    _s(
        "rfft_abs",
        "spec = np.abs(np.fft.rfft(h * d['scale']))\ns = s + np.sum(spec) * 0.1",
        kink=True,
    ),
    _s(
        "apply_along",
        "M = np.outer(h, h[:3])\nh = h + 0.1 * np.apply_along_axis(row_energy, 1, M)",
    ),
    _s(
        "apply_along_lambda",
        "M = net[0][0] * h\nh = np.apply_along_axis(lambda c: np.tanh(c) @ c, 0, M) + h",
    ),
    _s(
        "list_concat_params",
        "allp = net[:1] + net[1:]\nfor W, b in allp:\n    h = np.tanh(W @ h + b)",
    ),
    _s(
        "list_concat_extra",
        "extra = [(net[0][0].T, d['shift'])]\nlayers = list(net) + extra\n"
        "for W, b in layers:\n    h = np.sin(W @ h) + b",
    ),
    _s("star_concat", "feats = [h, h ** 2]\nallf = [*feats, np.tanh(h)]\nh = sum(allf) * 0.3"),
    _s(
        "scipy_logsumexp_axis",
        "M = np.outer(h, d['scale'])\ns = s + np.sum(scipy.special.logsumexp(M, axis=0))"
        " + np.sum(scipy.special.expit(M[0]))",
    ),
    _s(
        "norm_logpdf_params",
        "loc = net[0][1]\nscale = np.exp(0.3 * d['scale'])\n"
        "s = s + np.sum(scipy.stats.norm.logpdf(h, loc, scale))",
    ),
    _s(
        "scipy_softmax",
        "p = scipy.special.softmax(net[1][0] @ h)\n"
        "s = s - np.sum(p * scipy.special.log_softmax(h))",
    ),
    _s(
        "chol_slogdet",
        "A = net[0][0] @ net[0][0].T + np.eye(4) + np.outer(h, h) * 0.1\n"
        "L = np.linalg.cholesky(A)\nsign, logdet = np.linalg.slogdet(A)\n"
        "h = np.linalg.solve(L, h) + 0.1 * logdet",
    ),
    _s(
        "gaussian_nll",
        "A = net[1][0] @ net[1][0].T + 0.5 * np.eye(4)\nr = h - d['shift']\n"
        "s = s + 0.5 * r @ np.linalg.solve(A, r) + 0.5 * np.linalg.slogdet(A)[1]",
    ),
    _s(
        "inv_trace",
        "A = np.eye(4) + 0.2 * np.outer(h, d['scale'])\ns = s + np.trace(np.linalg.inv(A))",
    ),
    _s("argmax_pick", "k = np.argmax(h)\ns = s + h[k] ** 2 + h[np.argmin(h)]", kink=True),
    _s("argsort_pick", "order = np.argsort(h)\nh = h[order] * WEIGHTS + h", kink=True),
    _s("sort_top", "top = np.sort(h)[-2:]\ns = s + np.sum(top ** 2)", kink=True),
    _s(
        "where_nan_to_num",
        "safe = np.where(h > 0.0, h, 1.0)\nlogs = np.where(h > 0.0, np.log(safe), 0.0)\n"
        "h = h + np.nan_to_num(np.log(h)) * 0.1 + logs",
        kink=True,
    ),
    _s(
        "cumsum_axis",
        "M = np.outer(h, d['scale'])\n"
        "h = np.cumsum(M, axis=1)[:, -1] * 0.2 + np.cumsum(h)[::-1] * 0.1",
    ),
    _s(
        "einsum_strings",
        "W = net[0][0]\nG = np.einsum('ij,ik->jk', W, W * h[:, None])\n"
        "s = s + np.einsum('ii->', G) * 0.1 + np.einsum('i,i->', h, h)\n"
        "h = np.einsum('ij->j', G) + h",
    ),
    _s(
        "keepdims_normalize",
        "M = net[1][0] * h + 1.5\nM = M / np.linalg.norm(M, axis=1, keepdims=True)\n"
        "h = h + np.sum(M - M.mean(axis=0, keepdims=True), axis=0)",
    ),
    _s("int_write", "idx = np.array([3, 1])\nh[idx] = h[:2] * 2.0 + h[idx]", writes=True),
    _s(
        "mask_write_expr",
        "mask = h > 0.0\nh[mask] = np.sqrt(h[mask] + 1.0)",
        writes=True,
        kink=True,
    ),
    _s("int_iadd_repeat", "h[np.array([1, 1, 3, 1])] += h[:4] ** 2", writes=True),
    _s(
        "add_at",
        "out = np.zeros(4)\nnp.add.at(out, [0, 1, 1, 3], h * d['scale'])\nh = h + out",
        writes=True,
    ),
    _s("fixed_point", "h = fixed_point(h * 0.5) + h"),
    _s(
        "while_true_break",
        "z = h * 0.0\nk = 0\nwhile True:\n    new = np.cos(z) * 0.5 + h * 0.1\n"
        "    k += 1\n    if np.max(np.abs(new - z)) < 1e-12 or k > 200:\n        break\n"
        "    z = new\n"
        "h = h + z",
    ),
    _s("recursion_list", "h = deep(net, h) + h"),
    _s("generator_layers", "for out in layer_outputs(net, h):\n    s = s + np.sum(out ** 2)"),
    _s("closure_arrays", "fn = make_affine(*net[0])\nh = np.tanh(fn(h))"),
    _s("partial_params", "fn = functools.partial(mlp, net)\nh = fn(h) + h"),
    _s("decorator_args", "h = bump(h) + bump(h, c=d['scale'][0] ** 2)"),
    _s(
        "star_call",
        "parts = [h, np.sin(h)]\nkw = {'scale': 0.5}\n"
        "h = combine(*parts, **kw) + combine(*net[0], shift=h)[0]",
    ),
    _s("gen_kept", "gen = (np.sum(W @ h) for W, b in net)\ns = s + sum(gen) * 0.1"),
    _s(
        "lambda_rebound",
        "c = np.mean(h)\nact = lambda u: u * c\nh = act(h)\nc = np.sum(h * h) * 0.1\n"
        "act = lambda u: np.tanh(u - c)\nh = act(h) + h",
    ),
    _s(
        "lambda_loop_rebound",
        "for k in range(2):\n    act = lambda u: u * (k + 1.0)\n    h = act(h) * 0.5\n"
        "    act = lambda u: np.sin(u)\n    h = act(h) + h",
    ),
    _s(
        "lambda_list",
        "acts = [np.tanh, lambda u: u * 0.5, lambda u: np.sin(u) + 0.1]\n"
        "for a in acts:\n    h = a(h)",
    ),
    _s(
        "dict_copy",
        "cache = {'h': h, 'x': x}\nsaved = cache.copy()\nh = saved['h'] * saved['x'] + h",
    ),
    _s("map_lambda", "h = np.array(list(map(lambda v: v * np.cos(v), h))) + h"),
    _s(
        "softmax_xent",
        "z = net[1][0] @ h\np = np.exp(z - np.max(z))\np = p / np.sum(p)\n"
        "s = s - np.log(p[1] + 1e-9)",
    ),
)
_counter = itertools.count()


def program(snippets: list[Snippet], ret: str) -> str:
    """The source of ``f(x, net, d)`` made of ``snippets``, returning ``ret``."""
    body = ["def f(x, net, d):", "    h = x * 1.0", "    s = 0.0"]
    for snippet in snippets:
        body += ["    " + line for line in snippet.lines]
    body.append(f"    return {ret}")
    return "\n".join(body) + "\n"


#: The import lines of a program: on NumPy, or on an oracle's NumPy and SciPy.
IMPORTS = {
    "": "import numpy as np\nimport scipy.special\nimport scipy.stats\n",
    "autograd": "import autograd.numpy as np\nimport scipy.special\nimport scipy.stats\n",
    "jax": "import jax\n\njax.config.update('jax_enable_x64', True)\nimport jax.numpy as np\n"
    "import jax.scipy.special\nimport jax.scipy.stats\n\nscipy = jax.scipy\n",
}


def load(source: str, directory: Path, *, oracle: str = "") -> Any:
    """``f`` of ``source`` written to a module file in ``directory`` (whose source can
    then be read); with ``oracle`` (``"autograd"`` or ``"jax"``), on that library's
    NumPy."""
    stem = f"user_prog_{next(_counter)}{'_' + oracle if oracle else ''}"
    path = directory / f"{stem}.py"
    imports = IMPORTS[oracle]
    path.write_text(imports + HEADER + "\n\n" + source)
    spec = importlib.util.spec_from_file_location(stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def inputs(
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]], dict]:
    """Arguments of a program: ``x``, two layers of 4 x 4, a dict of two vectors."""
    x = rng.normal(size=4)
    net = [(0.5 * rng.normal(size=(4, 4)), 0.5 * rng.normal(size=4)) for _ in range(2)]
    d = {"scale": 1.0 + 0.3 * rng.normal(size=4), "shift": 0.3 * rng.normal(size=4)}
    return x, net, d


def copy_args(x: Any, net: Any, d: Any) -> tuple[Any, Any, Any]:
    """Fresh copies (a program may write into its arguments)."""
    return (
        np.array(x, dtype=float),
        [tuple(np.array(p, dtype=float) for p in layer) for layer in net],
        {k: np.array(v, dtype=float) for k, v in d.items()},
    )


def flat(x: Any, net: Any, d: Any) -> np.ndarray:
    """All entries of the arguments as one vector."""
    parts = [np.ravel(x)] + [np.ravel(p) for layer in net for p in layer]
    return np.concatenate(parts + [np.ravel(v) for v in d.values()])


def moved(args: tuple[Any, Any, Any], along: tuple[Any, Any, Any], t: float) -> tuple:
    """``args + t * along``, structure kept."""
    (x, net, d), (vx, vnet, vd) = args, along
    return (
        x + t * vx,
        [tuple(p + t * q for p, q in zip(layer, dl)) for layer, dl in zip(net, vnet)],
        {k: d[k] + t * vd[k] for k in d},
    )


#: Snippets autograd does not follow (scipy, math on a box, ndarray.dot, partial,
#: ``np.apply_along_axis``, einsum's ``'ii->'``): JAX is the second oracle there.
NO_ORACLE = {
    "methods",
    "scipy_special",
    "scipy_stats",
    "math_scalar",
    "partial",
    "decorated",
    "try_except",
    "scipy_logsumexp_axis",
    "norm_logpdf_params",
    "scipy_softmax",
    "einsum_strings",
    "apply_along",
    "apply_along_lambda",
    "partial_params",
    "decorator_args",
}
#: Snippets JAX does not follow either (``math`` and ``float`` on a tracer, a list index).
NO_JAX = {"math_scalar", "int_index"}
RETURNS = ("s + np.sum(h ** 2)", "s + np.sum(np.tanh(h))", "0.5 * s + np.sum(h * x)")


class Refused(Exception):
    """The program was refused with a located ``TransformError`` (its text)."""


def _located(exc: Exception) -> None:
    """Re-raise ``exc`` unless it is a refusal that names a file and line."""
    import s2s_ad

    if isinstance(exc, s2s_ad.TransformError) and exc.lineno > 0:
        raise Refused(str(exc)) from exc
    raise exc


def _close(got: Any, want: Any, tol: float = 1e-4) -> bool:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return bool(np.all(np.abs(got - want) <= tol * (1.0 + np.abs(want))))


def check(
    source: str, snippets: list[Snippet], seed: int, directory: Path, second: bool = False
) -> str:
    """Compare the derivatives of the program with finite differences and autograd.

    Returns ``"checked"``, ``"skipped"`` (not finite, or a kink within the step) or
    raises: ``AssertionError`` for a wrong derivative, :class:`Refused` for a located
    refusal, anything else for an internal error.
    """
    import s2s_ad

    f = load(source, directory)
    rng = np.random.default_rng(seed)
    args = inputs(rng)
    along = inputs(rng)

    def call(a: tuple) -> float:
        return float(f(*copy_args(*a)))

    eps = 1e-6
    with np.errstate(all="ignore"):
        value = call(args)
        if not np.isfinite(value) or abs(value) > 1e5:
            return "skipped"
        ahead, behind = call(moved(args, along, eps)), call(moved(args, along, -eps))
        want = (ahead - behind) / (2 * eps)
        if abs((ahead - value) - (value - behind)) / eps > 1e-3 * (1 + abs(want)):
            return "skipped"  # a kink or branch within the step
        try:
            grads = s2s_ad.grad(f, (0, 1, 2))(*copy_args(*args))
            out, tangent = s2s_ad.jvp(f, copy_args(*args), copy_args(*along))
        except Exception as exc:  # noqa: BLE001 (sorted by _located)
            _located(exc)
        gx, gnet, gd = grads
        assert [type(layer) for layer in gnet] == [tuple, tuple], (source, "structure")
        assert sorted(gd) == sorted(args[2]), (source, "structure")
        got = float(np.dot(flat(gx, gnet, gd), flat(*along)))
        assert _close(got, want), (source, "rev", got, want)
        assert _close(out, value, 1e-9), (source, "jvp value", out, value)
        assert _close(tangent, want), (source, "fwd", tangent, want)
        if not any(s.writes for s in snippets):
            name, other = _oracle(source, snippets, args, directory)
            assert other is None or _close(flat(gx, gnet, gd), flat(*other), 1e-7), (
                source,
                name,
            )
        if second:
            _second_order(f, source, args, along, rng)
    return "checked"


def _oracle(source: str, snippets: list[Snippet], args: tuple, directory: Path) -> tuple:
    """The gradient by autograd, or by JAX where autograd does not follow the program
    (``None`` where neither does)."""
    names = {s.name for s in snippets}
    if not names & NO_ORACLE:
        import autograd

        g = load(source, directory, oracle="autograd")
        try:
            return "autograd", autograd.grad(g, (0, 1, 2))(*copy_args(*args))
        except NotImplementedError:  # autograd has no rule (np.cumprod)
            return "autograd", None
    if names & NO_JAX or importlib.util.find_spec("jax") is None:
        return "jax", None
    import jax

    g = load(source, directory, oracle="jax")
    x, net, d = copy_args(*args)
    return "jax", jax.grad(g, (0, 1, 2))(x, net, d)


def _second_order(f: Any, source: str, args: tuple, along: tuple, rng: Any) -> None:
    """Hessian-vector products in ``x`` (forward over reverse, reverse over reverse, the
    full Hessian and the forward Jacobian of the gradient) against finite differences of
    the gradient; the forward Jacobian of ``f`` against its gradient."""
    import functools

    import s2s_ad

    x, net, d = copy_args(*args)
    v = rng.normal(size=4)
    g = functools.partial(f, net=net, d=d)
    eps = 1e-5
    try:
        grad = s2s_ad.grad(g)
        want = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
        hv = s2s_ad.hvp(g)(x.copy(), v)
        hess = s2s_ad.hessian(g)(x.copy())
        gg = s2s_ad.grad(lambda u: np.dot(grad(u), v))(x.copy())
        jac = s2s_ad.jacobian(g, mode="fwd")(x.copy())
        fwd_hess = s2s_ad.jacobian(grad, mode="fwd")(x.copy())
    except Exception as exc:  # noqa: BLE001 (sorted by _located)
        _located(exc)
    assert _close(jac, grad(x.copy()), 1e-7), (source, "jacobian fwd", jac)
    assert _close(fwd_hess @ v, want, 1e-3), (source, "jacobian fwd of grad", fwd_hess @ v, want)
    assert _close(hv, want, 1e-3), (source, "hvp", hv, want)
    assert _close(hess @ v, want, 1e-3), (source, "hessian", hess @ v, want)
    assert _close(gg, want, 1e-3), (source, "grad of grad", gg, want)
