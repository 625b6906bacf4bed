"""The harness of the fifth round of random user programs (``random_users5.py``).

The scalar program is checked by :func:`random_check4.check` (``grad``,
``value_and_grad``, ``jvp``, autograd, second order on a share). A variant returning a
vector (:data:`random_users5.VECTOR_RETURN`) is checked here as well: the pullback of
``vjp`` with a random cotangent against finite differences of the cotangent's dot with
the output along a random direction of every entry, and the Jacobian in ``x`` of reverse
and forward mode against finite differences along ``x``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import random_check4 as base
from random_users import Refused, Snippet, _located
from random_users5 import VECTOR_RETURN, program


def _close(got: Any, want: Any, tol: float = 1e-4) -> bool:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return bool(np.all(np.abs(got - want) <= tol * (1.0 + np.abs(want))))


def check(
    snippets: list[Snippet],
    ret: str,
    seed: int,
    directory: Path,
    *,
    no_oracle: set[str],
    second: bool = False,
    vector: bool = True,
) -> str:
    """Check the scalar program of ``snippets`` returning ``ret`` and (with ``vector``)
    its vector-valued variant.

    Returns and raises as :func:`random_check4.check`.
    """
    source = program(snippets, ret)
    outcome = base.check(source, snippets, seed, directory, no_oracle=no_oracle, second=second)
    if outcome != "checked" or not vector:
        return outcome
    return _check_vector(program(snippets, VECTOR_RETURN), seed, directory)


def _check_vector(source: str, seed: int, directory: Path) -> str:
    """``vjp`` and the Jacobians in ``x`` of the vector-valued program."""
    import s2s_ad

    f = base.load(source, directory)
    rng = np.random.default_rng(seed + 1)
    args, along = base.inputs(rng), base.inputs(rng)
    cot = rng.normal(size=4)
    copy = base.copy_args
    eps = 1e-6
    with np.errstate(all="ignore"):
        value = np.asarray(f(*copy(args)), dtype=float)
        if value.shape != (4,) or not np.all(np.isfinite(value)) or np.max(np.abs(value)) > 1e5:
            return "skipped"
        ahead = np.asarray(f(*copy(base.moved(args, along, eps))))
        behind = np.asarray(f(*copy(base.moved(args, along, -eps))))
        if np.max(np.abs((ahead - value) - (value - behind))) / eps > 1e-3:
            return "skipped"
        want = (ahead - behind) / (2 * eps)
        x, net, d, p = copy(args)
        dx = along[0]
        jx_want = (
            np.asarray(f(x + eps * dx, net, d, p)) - np.asarray(f(x - eps * dx, net, d, p))
        ) / (2 * eps)
        try:
            out, pullback = s2s_ad.vjp(f, *copy(args))
            grads = pullback(cot)
            jac_rev = s2s_ad.jacobian(f)(*copy(args))
            jac_fwd = s2s_ad.jacobian(f, mode="fwd")(*copy(args))
        except Exception as exc:  # noqa: BLE001 (sorted by _located)
            _located(exc)
    assert _close(out, value, 1e-9), (source, "vjp value", out, value)
    assert base.skeleton(grads) == base.skeleton(args), (source, "vjp structure")
    got = float(np.dot(base.flat(grads), base.flat(along)))
    assert _close(got, float(cot @ want)), (source, "vjp", got, float(cot @ want))
    assert _close(jac_rev @ dx, jx_want), (source, "jacobian rev", jac_rev @ dx, jx_want)
    assert _close(jac_fwd @ dx, jx_want), (source, "jacobian fwd", jac_fwd @ dx, jx_want)
    return "checked"


__all__ = ["Refused", "check"]
