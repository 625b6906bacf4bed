"""The harness of the fourth round of random user programs (``random_users4.py``).

A program is ``f(x, net, d, p)``: the vector, layers and dict of the earlier rounds and a
parameter tree ``p`` the way users nest their parameters, a dict holding tuples
(``p['enc'] = (A, c)``), a list of dicts (``p['blocks'] = [{'w': ..., 'g': ...}, ...]``)
and a nested namedtuple (``p['nt'] = Outer(inner=Inner(a, b), t)`` with a float ``t``).
:func:`check` compares reverse mode (``grad`` and ``value_and_grad``) and forward mode
(``jvp``) with central finite differences along a random direction of every entry, the
gradient with autograd where it follows the program, and on a share second derivatives
in ``x`` (``hvp``, ``hessian``, ``grad`` of ``grad``, the forward Jacobian of ``grad``).
"""

from __future__ import annotations

import collections
import functools
import importlib.util
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from random_users import Refused, Snippet, _located

Inner = collections.namedtuple("Inner", ["a", "b"])
Outer = collections.namedtuple("Outer", ["inner", "t"])

#: The import lines of a program: on NumPy, or on autograd's NumPy and SciPy.
IMPORTS = {
    "": "import numpy as np\nimport scipy.special\nimport scipy.stats\n",
    "autograd": "import types\n\nimport autograd.numpy as np\nimport autograd.scipy.special\n"
    "import autograd.scipy.stats\n\n"
    "scipy = types.SimpleNamespace(special=autograd.scipy.special, stats=autograd.scipy.stats)\n",
}
_counter = itertools.count()


def load(source: str, directory: Path, *, oracle: str = "") -> Any:
    """``f`` of ``source`` written to a module file in ``directory``; with ``oracle``
    (``"autograd"``), on autograd's NumPy and SciPy."""
    stem = f"user_prog4_{next(_counter)}{'_' + oracle if oracle else ''}"
    path = directory / f"{stem}.py"
    path.write_text(IMPORTS[oracle] + source)
    spec = importlib.util.spec_from_file_location(stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def inputs(rng: np.random.Generator) -> tuple[Any, Any, Any, Any]:
    """``x``, two layers of 4 x 4, a dict of two vectors and the parameter tree ``p``."""
    x = rng.normal(size=4)
    net = [(0.5 * rng.normal(size=(4, 4)), 0.5 * rng.normal(size=4)) for _ in range(2)]
    d = {"scale": 1.0 + 0.3 * rng.normal(size=4), "shift": 0.3 * rng.normal(size=4)}
    p = {
        "enc": (0.5 * rng.normal(size=(4, 4)), 0.3 * rng.normal(size=4)),
        "dec": (0.5 * rng.normal(size=(4, 4)), 0.3 * rng.normal(size=4)),
        "blocks": [
            {"w": 1.0 + 0.3 * rng.normal(size=4), "g": 0.3 * rng.normal(size=4)} for _ in range(2)
        ],
        "nt": Outer(
            Inner(0.5 * rng.normal(size=4), 0.5 * rng.normal(size=4)), 0.5 + 0.1 * rng.normal()
        ),
    }
    return x, net, d, p


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """``fn`` applied to the leaves of ``tree`` (and the matching leaves of ``rest``)."""
    if isinstance(tree, dict):
        return {k: tree_map(fn, tree[k], *(r[k] for r in rest)) for k in tree}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(tree_map(fn, *parts) for parts in zip(tree, *rest)))
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_map(fn, *parts) for parts in zip(tree, *rest))
    return fn(tree, *rest)


def leaves(tree: Any) -> list[np.ndarray]:
    """The leaves of ``tree`` as flat float arrays, in order."""
    out: list[np.ndarray] = []
    tree_map(lambda v: out.append(np.ravel(np.asarray(v, dtype=float))), tree)
    return out


def skeleton(tree: Any) -> Any:
    """The containers of ``tree`` (their types and keys), leaves as ``'leaf'``."""
    if isinstance(tree, dict):
        return ("dict", tuple((k, skeleton(v)) for k, v in tree.items()))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, tuple(skeleton(v) for v in tree))
    return "leaf"


def flat(tree: Any) -> np.ndarray:
    """All entries of ``tree`` as one vector."""
    return np.concatenate(leaves(tree))


def copy_args(args: Any) -> Any:
    """Fresh float copies (a program may write into its arguments); floats stay floats."""
    return tree_map(lambda v: float(v) if isinstance(v, float) else np.array(v, dtype=float), args)


def moved(args: Any, along: Any, t: float) -> Any:
    """``args + t * along``, structure kept."""
    return tree_map(lambda a, b: a + t * b, args, along)


def _plain(tree: Any) -> Any:
    """``tree`` with namedtuples as plain tuples (autograd does not take namedtuples)."""
    if isinstance(tree, dict):
        return {k: _plain(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return (
            type(tree)(_plain(v) for v in tree)
            if not hasattr(tree, "_fields")
            else tuple(_plain(v) for v in tree)
        )
    return tree


def _close(got: Any, want: Any, tol: float = 1e-4) -> bool:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return bool(np.all(np.abs(got - want) <= tol * (1.0 + np.abs(want))))


def check(
    source: str,
    snippets: list[Snippet],
    seed: int,
    directory: Path,
    *,
    no_oracle: set[str],
    second: bool = False,
) -> str:
    """Compare the derivatives of the program with finite differences and autograd.

    Returns ``"checked"``, ``"skipped"`` (not finite, or a kink within the step) or
    ``"invalid"`` (the program itself fails: mixed snippets may rebind a name), or
    raises: ``AssertionError`` for a wrong derivative, :class:`random_users.Refused` for a
    located refusal, anything else for an internal error.
    """
    import s2s_ad

    f = load(source, directory)
    rng = np.random.default_rng(seed)
    args, along = inputs(rng), inputs(rng)

    def call(a: Any) -> float:
        return float(f(*copy_args(a)))

    eps = 1e-6
    with np.errstate(all="ignore"):
        try:
            value = call(args)
        except Exception:  # noqa: BLE001 (snippets of earlier rounds may rebind p or d)
            return "invalid"
        if not np.isfinite(value) or abs(value) > 1e5:
            return "skipped"
        ahead, behind = call(moved(args, along, eps)), call(moved(args, along, -eps))
        want = (ahead - behind) / (2 * eps)
        if abs((ahead - value) - (value - behind)) / eps > 1e-3 * (1 + abs(want)):
            return "skipped"  # a kink or branch within the step
        try:
            grads = s2s_ad.grad(f, (0, 1, 2, 3))(*copy_args(args))
            both, (gx, gp) = s2s_ad.value_and_grad(f, ("x", "p"))(*copy_args(args))
            out, tangent = s2s_ad.jvp(f, copy_args(args), copy_args(along))
        except Exception as exc:  # noqa: BLE001 (sorted by _located)
            _located(exc)
        assert skeleton(grads) == skeleton(args), (source, "structure", skeleton(grads))
        got = float(np.dot(flat(grads), flat(along)))
        assert _close(got, want), (source, "rev", got, want)
        assert _close(both, value, 1e-9), (source, "value_and_grad value", both, value)
        assert _close(flat((gx, gp)), flat((grads[0], grads[3])), 1e-9), (source, "vg")
        assert _close(out, value, 1e-9), (source, "jvp value", out, value)
        assert _close(tangent, want), (source, "fwd", tangent, want)
        if not any(s.writes for s in snippets) and not {s.name for s in snippets} & no_oracle:
            other = _autograd(source, args, directory)
            assert other is None or _close(flat(grads), flat(other), 1e-7), (source, "autograd")
        if second:
            _second_order(f, source, args, rng)
    return "checked"


def _autograd(source: str, args: Any, directory: Path) -> Any:
    """The gradient by autograd (``None`` where it has no rule)."""
    import autograd

    g = load(source, directory, oracle="autograd")

    def plain_f(x: Any, net: Any, d: Any, p: Any) -> Any:
        (a, b), t = p["nt"]
        return g(x, net, d, {**p, "nt": Outer(Inner(a, b), t)})

    try:
        return autograd.grad(plain_f, (0, 1, 2, 3))(*_plain(copy_args(args)))
    except NotImplementedError:
        return None


def _second_order(f: Any, source: str, args: Any, rng: Any) -> None:
    """Second derivatives in ``x`` against finite differences of the gradient."""
    import s2s_ad

    x, net, d, p = copy_args(args)
    v = rng.normal(size=4)
    g = functools.partial(f, net=net, d=d, p=p)
    eps = 1e-5
    try:
        grad = s2s_ad.grad(g)
        want = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
        hv = s2s_ad.hvp(g)(x.copy(), v)
        hess = s2s_ad.hessian(g)(x.copy())
        gg = s2s_ad.grad(lambda u: np.dot(grad(u), v))(x.copy())
        fwd_hess = s2s_ad.jacobian(grad, mode="fwd")(x.copy())
    except Exception as exc:  # noqa: BLE001 (sorted by _located)
        _located(exc)
    assert _close(fwd_hess @ v, want, 1e-3), (source, "jacobian fwd of grad", fwd_hess @ v, want)
    assert _close(hv, want, 1e-3), (source, "hvp", hv, want)
    assert _close(hess @ v, want, 1e-3), (source, "hessian", hess @ v, want)
    assert _close(gg, want, 1e-3), (source, "grad of grad", gg, want)


__all__ = ["Refused", "check", "inputs", "load"]
