"""Realistic user programs (``tests/programs_real``) differentiated by s2s_ad and checked
against two oracles: central finite differences and autograd running the same source.

Known failures of s2s_ad are marked ``xfail(strict=True)`` in the program's ``xfail``
table, so a fix turns them into errors and the entry gets removed.
"""

from __future__ import annotations

from typing import Any

import autograd
import numpy as np
import pytest
from fd import flatten, numerical_grad, unflatten
from programs_real import Program, collect

import s2s_ad
from s2s_ad.transforms import _jvp_wrt

PROGRAMS = collect()


def _params() -> list[Any]:
    out = []
    for prog in PROGRAMS:
        for check in prog.checks:
            reason = prog.xfail.get(check)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(prog, check, id=f"{prog.label}-{check}", marks=marks))
    return out


def _wrt(prog: Program) -> tuple[int, ...]:
    return (prog.wrt,) if isinstance(prog.wrt, int) else tuple(prog.wrt)


def _as_tuple(prog: Program, g: Any) -> tuple[Any, ...]:
    return (g,) if isinstance(prog.wrt, int) else tuple(g)


def _close(prog: Program, got: Any, want: Any, what: str, scale: float = 1.0) -> None:
    np.testing.assert_allclose(
        flatten(got),
        flatten(want),
        rtol=prog.rtol * scale,
        atol=prog.atol * scale,
        err_msg=f"{prog.label}: {what}",
    )


def _direction(template: Any, seed: int = 7) -> Any:
    """A fixed random tangent with the structure of ``template``."""
    rng = np.random.RandomState(seed)
    return unflatten(template, rng.standard_normal(flatten(template).size))


def _plain(x: Any) -> Any:
    """``x`` with namedtuples turned into tuples (fd.unflatten rebuilds by ``type(x)(items)``)."""
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return tuple(_plain(v) for v in x)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _rebuild(template: Any, x: Any) -> Any:
    """Inverse of :func:`_plain` given the original structure."""
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*(_rebuild(t, v) for t, v in zip(template, x)))
    if isinstance(template, (list, tuple)):
        return type(template)(_rebuild(t, v) for t, v in zip(template, x))
    if isinstance(template, dict):
        return {k: _rebuild(template[k], x[k]) for k in template}
    return x


def _fd(prog: Program) -> tuple[Any, ...]:
    """Finite-difference gradients of the wrt arguments, as a tuple."""
    fun = prog.fun()

    def on_plain(*plain: Any) -> Any:
        return fun(*(_rebuild(t, a) for t, a in zip(prog.args, plain)))

    return _as_tuple(prog, numerical_grad(on_plain, [_plain(a) for a in prog.args], prog.wrt))


def _autograd_grads(prog: Program) -> tuple[Any, ...]:
    twin = prog.twin()
    return tuple(autograd.grad(twin, pos)(*prog.args) for pos in _wrt(prog))


@pytest.mark.parametrize(("prog", "check"), _params())
def test_program(prog: Program, check: str) -> None:
    fun = prog.fun()
    args = prog.args
    if check == "grad":
        got = _as_tuple(prog, s2s_ad.grad(fun, prog.wrt)(*args))
        fd = _fd(prog)
        _close(prog, got, fd, "grad vs finite differences", scale=10.0)
        if prog.autograd:
            _close(prog, got, _autograd_grads(prog), "grad vs autograd")
    elif check == "vg":
        value, got = s2s_ad.value_and_grad(fun, prog.wrt)(*args)
        _close(prog, value, fun(*args), "value_and_grad value vs plain call")
        want = s2s_ad.grad(fun, prog.wrt)(*args)
        _close(prog, _as_tuple(prog, got), _as_tuple(prog, want), "value_and_grad vs grad")
    elif check == "fwd":
        # The generated tangent program with tangents for the wrt arguments only (the
        # public jvp takes a tangent for every argument, and these programs take data too).
        pos = _wrt(prog)
        vs = [_direction(args[p], seed=11 + p) for p in pos]
        out, dout = _jvp_wrt(fun, args, pos, vs)
        _close(prog, out, fun(*args), "tangent program value vs plain call")
        fd = _fd(prog)
        want = sum(float(flatten(g) @ flatten(v)) for g, v in zip(fd, vs))
        _close(prog, dout, want, "jvp vs finite differences", scale=10.0)
    elif check == "hvp":
        pos = _wrt(prog)[0]
        v = _direction(args[pos])
        got = s2s_ad.hvp(fun, pos)(*args, v)
        _close(
            prog,
            got,
            _hvp_reference(prog, pos, v),
            "hvp vs differences of the gradient",
            scale=100.0,
        )
    elif check == "gradgrad":
        pos = _wrt(prog)[0]
        got = s2s_ad.grad(s2s_ad.grad(fun, pos), pos)(*args)
        if prog.autograd:
            g1 = autograd.grad(prog.twin(), pos)
            want = autograd.grad(g1, pos)(*args)
        else:
            g1 = s2s_ad.grad(fun, pos)
            want = numerical_grad(g1, args, pos)
        _close(prog, got, want, "grad(grad) vs reference", scale=100.0)
    else:  # pragma: no cover - a typo in a program's checks
        raise AssertionError(f"unknown check {check}")


def _hvp_reference(prog: Program, pos: int, v: Any) -> Any:
    """Central differences of the gradient (autograd's when the twin runs) along ``v``."""
    gfun = autograd.grad(prog.twin(), pos) if prog.autograd else s2s_ad.grad(prog.fun(), pos)
    x0, d = flatten(prog.args[pos]), flatten(v)
    h = 1e-5 * max(1.0, float(np.max(np.abs(x0))))

    def at(x: np.ndarray) -> np.ndarray:
        args = list(prog.args)
        args[pos] = unflatten(prog.args[pos], x)
        return flatten(gfun(*args))

    return unflatten(prog.args[pos], (at(x0 + h * d) - at(x0 - h * d)) / (2 * h))


def test_corpus_size() -> None:
    """The corpus keeps its breadth: at least 30 programs across the themes."""
    assert len(PROGRAMS) >= 30
