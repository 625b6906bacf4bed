"""Complex values made by ``np.fft`` (or a complex literal): where they may go.

A complex value's adjoint is ``dL/dRe(z) - 1j * dL/dIm(z)`` (autograd's convention, see
:mod:`s2s_ad.rules.fft`): the rules of linear and holomorphic operations (sums, shapes,
``+ - * / **``, ``exp``, ``log``, products) are right for it as they stand; those of
the functions that are not holomorphic would miss a conjugate. So, after lowering, the
values that may be complex are followed through the function (by name, whatever the
path) and

* ``np.abs``/``abs``, ``np.real``, ``np.imag``/``.imag``, ``np.conj``/``.conj()`` of
  them become :func:`~s2s_ad.rules.fft.cabs`, ``creal``, ``cimag``, ``cconj`` (their own
  rules); ``.real`` and the inverse real transforms (``irfft``...) make real values
  again;
* a real operand meeting one (``H * np.fft.fft(x)``) is passed through
  :func:`~s2s_ad.rules.fft.lift`, whose adjoint is the real part of what reaches it;
* anything else that receives one (another function, a call of user code, a branch's
  test, the result) is refused with the user's line.

Second derivatives through these values (generated code that holds them) are refused.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ir
from .rules import fft as fft_rules

_FFT = np.fft
#: complex results from any input
_MAKERS = {
    _FFT.fft,
    _FFT.ifft,
    _FFT.fftn,
    _FFT.ifftn,
    _FFT.fft2,
    _FFT.ifft2,
    _FFT.rfft,
    _FFT.rfftn,
    _FFT.rfft2,
}
#: real results of complex values, by rules right for them
_REAL = {_FFT.irfft, _FFT.irfftn, _FFT.irfft2, np.shape, np.ndim, np.size, len}
#: linear or holomorphic functions: complex in, complex out, rules right as they stand
_KEEP = {
    np.sum,
    np.mean,
    np.cumsum,
    np.prod,
    np.reshape,
    np.ravel,
    np.transpose,
    np.moveaxis,
    np.swapaxes,
    np.squeeze,
    np.expand_dims,
    np.concatenate,
    np.stack,
    np.hstack,
    np.vstack,
    np.flip,
    np.roll,
    np.take,
    np.pad,
    np.where,
    np.trace,
    np.diag,
    np.diagonal,
    np.outer,
    np.dot,
    np.matmul,
    np.tensordot,
    np.einsum,
    np.exp,
    np.log,
    np.sin,
    np.cos,
    np.sinh,
    np.cosh,
    np.tanh,
    np.square,
    np.multiply,
    np.add,
    np.subtract,
    np.divide,
    np.negative,
    np.asarray,
    np.array,
    np.copy,
    _FFT.fftshift,
    _FFT.ifftshift,
}
_REWRITE = {
    np.abs: ("cabs", fft_rules.cabs),
    builtins.abs: ("cabs", fft_rules.cabs),
    np.imag: ("cimag", fft_rules.cimag),
    np.real: ("creal", fft_rules.creal),
    np.conj: ("cconj", fft_rules.cconj),
    np.conjugate: ("cconj", fft_rules.cconj),
}
_KEEP_METHODS = {"sum", "mean", "reshape", "ravel", "flatten", "transpose", "copy", "squeeze"}
_ATTR_REAL = {"real", "shape", "ndim", "size", "dtype"}
_HELPERS = {fft_rules.cabs, fft_rules.cimag, fft_rules.creal, fft_rules.cconj, fft_rules.lift}
_OPS = {"+", "-", "*", "/", "**", "@"}
#: a complex literal (``1j``, ``-2.5e-3J``)
_IMAGINARY = re.compile(r"[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?[jJ]")


def _held(obj: Any, table: set[Any] | dict[Any, Any]) -> bool:
    try:
        return obj in table
    except TypeError:  # an unhashable callee
        return False


def _makes_complex(s: ir.Stmt) -> bool:
    """Whether a statement makes a complex value from none (a transform, a literal)."""
    if isinstance(s, ir.Assign):
        value = s.value
        if isinstance(value, ir.Call) and _held(value.callee.obj, _MAKERS):
            return True
        return any(
            isinstance(a, ir.Const) and _IMAGINARY.fullmatch(a.code.strip()) is not None
            for a in ir.expr_atoms(value)
        )
    return False


def complex_values(
    fn_body: list[ir.Stmt], generated: bool, error: Callable[[str, ir.Stmt, str], Exception]
) -> None:
    """Follow the complex values of a lowered body; rewrite or refuse what receives one
    (module docstring). ``error(construct, stmt, hint)`` makes the refusal."""
    stmts = list(ir.walk(fn_body))
    if not any(_makes_complex(s) for s in stmts):
        return
    if generated:
        raise error(
            "second derivatives through complex values (np.fft)",
            next(s for s in stmts if _makes_complex(s)),
            "take first derivatives (grad, jvp) of functions using np.fft",
        )
    tainted: set[str] = set()

    def hot(atom: Any) -> bool:
        return isinstance(atom, ir.Var) and atom.name in tainted

    changed = True
    while changed:
        changed = False
        for s in stmts:
            for name in _flows(s, hot):
                if name not in tainted:
                    tainted.add(name)
                    changed = True
    for s in stmts:
        _check(s, hot, error)


def _flows(s: ir.Stmt, hot: Callable[[Any], bool]) -> list[str]:
    """The names a statement makes complex (given which names are)."""
    if isinstance(s, ir.Assign):
        value = s.value
        if isinstance(value, ir.Call) and _held(value.callee.obj, _MAKERS):
            return [s.target]
        reads = [a for a in ir.expr_atoms(value) if hot(a)]
        if isinstance(value, ir.Attr) and (value.name in _ATTR_REAL or value.name == "imag"):
            return []
        if isinstance(value, ir.Compare):
            return []
        if isinstance(value, ir.Call):
            obj = value.callee.obj
            if _held(obj, _REAL) or (_held(obj, _REWRITE) and _REWRITE[obj][0] != "cconj"):
                return []
            if obj in (fft_rules.cabs, fft_rules.cimag, fft_rules.creal):
                return []
        if reads or _makes_complex(s):
            return [s.target]
        return []
    if isinstance(s, ir.Unpack):
        return list(s.targets) if hot(s.value) else []
    if isinstance(s, (ir.SetItem, ir.Append)):
        return [s.obj] if hot(s.value) else []
    if isinstance(s, ir.For):
        return [s.target] if hot(s.iterable) else []
    return []


def _check(
    s: ir.Stmt,
    hot: Callable[[Any], bool],
    error: Callable[[str, ir.Stmt, str], Exception],
) -> None:
    """Rewrite a statement that receives a complex value, or refuse it."""
    hint = "keep complex values to sums, shapes, + - * / **, exp/log, np.abs/real/imag/conj"
    if isinstance(s, ir.Return) and hot(s.value):
        raise error("a complex result (np.fft)", s, "return np.real(...) or np.abs(...)")
    if isinstance(s, ir.If) and hot(s.test):
        raise error("a branch on a complex value (np.fft)", s, hint)
    if isinstance(s, ir.While) and hot(s.test):
        raise error("a loop test on a complex value (np.fft)", s, hint)
    if not isinstance(s, ir.Assign):
        return
    value = s.value
    reads = [a for a in ir.expr_atoms(value) if hot(a)]
    if not reads and not _makes_complex(s):
        return
    if isinstance(value, (ir.Copy, ir.Subscript, ir.Build, ir.Compare)):
        return
    if isinstance(value, ir.UnaryOp):
        if value.op in ("-", "+"):
            return
        raise error(f"the operator {value.op} on a complex value (np.fft)", s, hint)
    if isinstance(value, ir.BinOp):
        if value.op not in _OPS:
            raise error(f"the operator {value.op} on a complex value (np.fft)", s, hint)
        value.left, value.right = _lifted(value.left, hot), _lifted(value.right, hot)
        return
    if isinstance(value, ir.Attr):
        if value.name in _ATTR_REAL or value.name == "T":
            return
        if value.name == "imag":
            s.value = _call("cimag", fft_rules.cimag, [value.obj])
            return
        raise error(f"the attribute .{value.name} of a complex value (np.fft)", s, hint)
    if isinstance(value, ir.Call):
        callee = value.callee
        obj = callee.obj
        if _held(obj, _REWRITE):
            name, helper = _REWRITE[obj]
            s.value = _call(name, helper, value.args)
            return
        if callee.method in ("conj", "conjugate") and hot(callee.receiver) and not value.args:
            s.value = _call("cconj", fft_rules.cconj, [callee.receiver])
            return
        if callee.method in _KEEP_METHODS and hot(callee.receiver):
            return
        if _held(obj, _MAKERS) or _held(obj, _REAL) or _held(obj, _KEEP) or _held(obj, _HELPERS):
            value.args = [_lifted(a, hot) for a in value.args]
            return
        raise error(f"call to {callee.code} with a complex value (np.fft)", s, hint)
    raise error("an operation on a complex value (np.fft)", s, hint)


def _lifted(atom: Any, hot: Callable[[Any], bool]) -> Any:
    """``atom`` as an operand beside a complex value: a real variable is lifted (its
    adjoint comes back real); a constant or a complex value stays."""
    if not isinstance(atom, ir.Var) or hot(atom):
        return atom
    return _LiftedVar(atom.name)


class _LiftedVar(ir.Var):
    """A marker: :func:`lift_operands` assigns ``_ad.lift(name)`` before the statement."""


def _call(name: str, func: Any, args: list[ir.Atom]) -> ir.Call:
    return ir.Call(ir.Callee(f"_ad.{name}", func, resolved=True), list(args), [])


def lift_operands(body: list[ir.Stmt], fresh: Callable[[], str]) -> list[ir.Stmt]:
    """Insert ``_tN = _ad.lift(x)`` before each statement that reads a lifted operand
    ``x`` (marked by :func:`complex_values`), and read ``_tN`` there instead."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.If):
            s.body = lift_operands(s.body, fresh)
            s.orelse = lift_operands(s.orelse, fresh)
        elif isinstance(s, ir.For):
            s.body = lift_operands(s.body, fresh)
        elif isinstance(s, ir.While):
            s.test_body = lift_operands(s.test_body, fresh)
            s.body = lift_operands(s.body, fresh)
        if isinstance(s, ir.Assign):
            value = s.value

            def swap(atom: Any, s: ir.Stmt = s) -> Any:
                if not isinstance(atom, _LiftedVar):
                    return atom
                tmp = fresh()
                lift = _call("lift", fft_rules.lift, [ir.Var(atom.name)])
                out.append(ir.Assign(s.line, s.src, tmp, lift))
                return ir.Var(tmp)

            if isinstance(value, ir.BinOp):
                value.left, value.right = swap(value.left), swap(value.right)
            elif isinstance(value, ir.Call):
                value.args = [swap(a) for a in value.args]
        out.append(s)
    return out
