"""Optional peer AD frameworks: autograd, JAX (eager and jit) and PyTorch.

A peer runs the *same* primal code object as ``s2s_ad`` sees, with the module globals
``np`` and ``math`` swapped for the peer's array namespace (see :func:`rebind`), so no
case is rewritten per framework. A peer that is not importable is reported as
"not installed"; a peer that cannot run a case raises, and the caller reports it.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def rebind(f: Callable[..., Any], np_ns: Any, math_ns: Any) -> Callable[..., Any]:
    """``f`` with its globals ``np`` and ``math`` replaced (same code object).

    Args:
        f: A plain Python function.
        np_ns: What the name ``np`` means inside the copy.
        math_ns: What the name ``math`` means inside the copy.

    Returns:
        A new function object sharing ``f``'s code, defaults and closure.
    """
    glb = dict(f.__globals__)
    glb["np"] = np_ns
    glb["math"] = math_ns
    out = types.FunctionType(f.__code__, glb, f.__name__, f.__defaults__, f.__closure__)
    out.__kwdefaults__ = f.__kwdefaults__
    return out


def split_args(
    args: Sequence[Any], wrt: Sequence[int]
) -> tuple[tuple[Any, ...], Callable[[Sequence[Any]], list[Any]]]:
    """The differentiated arguments, and a function putting new values back in place.

    Args:
        args: All arguments of the primal.
        wrt: Positions of the differentiated ones.

    Returns:
        ``(params, merge)`` where ``merge(new_params)`` is the full argument list.
    """
    params = tuple(args[i] for i in wrt)

    def merge(new: Sequence[Any]) -> list[Any]:
        full = list(args)
        for pos, val in zip(wrt, new):
            full[pos] = val
        return full

    return params, merge


@dataclass
class Prepared:
    """A peer gradient ready to time.

    Attributes:
        call: Zero-argument callable computing the gradient (forward + backward), with any
            asynchronous work finished before it returns. This is what is timed.
        to_numpy: Converts ``call()``'s result to a tuple of NumPy values (for checking).
        setup_seconds: One-time cost paid before ``call`` is fast (JIT compile), or 0.
    """

    call: Callable[[], Any]
    to_numpy: Callable[[Any], tuple[Any, ...]]
    setup_seconds: float = 0.0


class Peer:
    """Base class: one way of computing gradients with another framework."""

    name = "peer"
    module = ""

    def __init__(self) -> None:
        self.error: str | None = None
        self._loaded = False

    def available(self) -> bool:
        """Import the framework once; ``False`` (with :attr:`error` set) if impossible."""
        if not self._loaded:
            self._loaded = True
            if importlib.util.find_spec(self.module) is None:
                self.error = "not installed"
            else:
                try:
                    self.load()
                except Exception as exc:  # noqa: BLE001  (any import failure = unavailable)
                    self.error = f"not installed (import failed: {_first_line(exc)})"
        return self.error is None

    def load(self) -> None:
        """Import the framework (override)."""

    def version(self) -> str:
        """The framework's version string."""
        mod = importlib.import_module(self.module)
        return str(getattr(mod, "__version__", "?"))

    def prepare(self, f: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int]) -> Prepared:
        """Build the gradient of ``f`` w.r.t. ``args[wrt]`` (override)."""
        raise NotImplementedError


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    head = text[0] if text else ""
    return f"{type(exc).__name__}: {head}"[:160]


# --- autograd ---------------------------------------------------------------------------


class Autograd(Peer):
    """HIPS autograd: ``autograd.grad`` over a tuple of the differentiated arguments."""

    name = "autograd"
    module = "autograd"

    def load(self) -> None:
        """Import autograd and build its ``math`` stand-in."""
        import autograd
        import autograd.numpy as anp
        import autograd.scipy.special as asp

        self._grad = autograd.grad
        self._np = anp
        self._math = types.SimpleNamespace(
            sqrt=anp.sqrt,
            log=anp.log,
            exp=anp.exp,
            sin=anp.sin,
            cos=anp.cos,
            tanh=anp.tanh,
            erf=asp.erf,
            pi=math.pi,
        )

    def version(self) -> str:
        """autograd has no ``__version__``: ask the installed distribution."""
        from importlib.metadata import version

        return version("autograd")

    def prepare(self, f: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int]) -> Prepared:
        """``autograd.grad`` of ``f`` with the differentiated arguments packed in a tuple."""
        g_f = rebind(f, self._np, self._math)
        params, merge = split_args(args, wrt)

        def packed(ps: tuple[Any, ...]) -> Any:
            return g_f(*merge(ps))

        df = self._grad(packed)
        return Prepared(lambda: df(params), lambda out: tuple(out))


# --- JAX --------------------------------------------------------------------------------


class _JaxBase(Peer):
    module = "jax"

    def load(self) -> None:
        """Import JAX in float64 mode and build its ``math`` stand-in."""
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        import jax.numpy as jnp
        import jax.scipy.special as jsp

        self._jax = jax
        self._np = jnp
        self._math = types.SimpleNamespace(
            sqrt=jnp.sqrt,
            log=jnp.log,
            exp=jnp.exp,
            sin=jnp.sin,
            cos=jnp.cos,
            tanh=jnp.tanh,
            erf=jsp.erf,
            pi=math.pi,
        )

    def _inputs(self, args: Sequence[Any], wrt: Sequence[int]) -> tuple[list[Any], tuple[int, ...]]:
        """Float arguments as float64 device arrays; other arguments left as they are.

        Returns:
            The converted arguments and the positions of non-array (static) arguments.
        """
        jnp = self._np
        out: list[Any] = []
        static = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray) or isinstance(a, float) or i in wrt:
                out.append(jnp.asarray(a, dtype=jnp.float64))
            else:
                out.append(a)
                static.append(i)
        return out, tuple(static)

    @staticmethod
    def _to_numpy(out: Any) -> tuple[Any, ...]:
        return tuple(np.asarray(o) for o in out)


class JaxEager(_JaxBase):
    """``jax.grad`` called op by op, without ``jit`` (traces every call)."""

    name = "jax.grad (eager)"

    def prepare(self, f: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int]) -> Prepared:
        """``jax.grad(f, argnums=wrt)`` called on device arrays."""
        jax = self._jax
        j_args, _ = self._inputs(args, wrt)
        df = jax.grad(rebind(f, self._np, self._math), argnums=tuple(wrt))
        return Prepared(lambda: jax.block_until_ready(df(*j_args)), self._to_numpy)


class JaxJit(_JaxBase):
    """``jax.jit(jax.grad(f))``; non-array arguments (ints) are static."""

    name = "jax.jit(jax.grad)"

    def prepare(self, f: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int]) -> Prepared:
        """Compile once (the first call, timed as ``setup_seconds``), then time calls."""
        import time

        jax = self._jax
        j_args, static = self._inputs(args, wrt)
        df = jax.jit(
            jax.grad(rebind(f, self._np, self._math), argnums=tuple(wrt)),
            static_argnums=static,
        )
        start = time.perf_counter()
        jax.block_until_ready(df(*j_args))
        compile_s = time.perf_counter() - start
        return Prepared(lambda: jax.block_until_ready(df(*j_args)), self._to_numpy, compile_s)


# --- PyTorch ----------------------------------------------------------------------------


class _TorchNumpy:
    """The NumPy functions the cases use, on ``torch.Tensor`` (NumPy keyword names)."""

    def __init__(self, torch: Any) -> None:
        self._t = torch
        self.tanh = torch.tanh
        self.exp = torch.exp
        self.log = torch.log
        self.sin = torch.sin
        self.cos = torch.cos
        self.sqrt = torch.sqrt
        self.log1p = torch.log1p
        self.abs = torch.abs
        self.zeros_like = torch.zeros_like
        self.stack = torch.stack
        self.linalg = types.SimpleNamespace(norm=torch.linalg.norm)

    def maximum(self, x: Any, y: Any) -> Any:
        """``np.maximum`` with a tensor or a Python number on either side."""
        t = self._t
        if not isinstance(x, t.Tensor):
            x = t.as_tensor(x, dtype=y.dtype)
        if not isinstance(y, t.Tensor):
            y = t.as_tensor(y, dtype=x.dtype)
        return t.maximum(x, y)

    def _dims(self, axis: Any) -> dict[str, Any]:
        return {} if axis is None else {"dim": axis}

    def sum(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """``np.sum`` on a tensor."""
        if axis is None:
            return self._t.sum(x)
        return self._t.sum(x, dim=axis, keepdim=keepdims)

    def max(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """``np.max`` on a tensor (``torch.amax``: gradient split among ties)."""
        if axis is None:
            return self._t.amax(x)
        return self._t.amax(x, dim=axis, keepdim=keepdims)

    def mean(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """``np.mean`` on a tensor."""
        if axis is None:
            return self._t.mean(x)
        return self._t.mean(x, dim=axis, keepdim=keepdims)


class _TorchMath:
    """``math`` functions that stay in the graph when given a tensor."""

    pi = math.pi

    def __init__(self, torch: Any) -> None:
        self._t = torch

    def _unary(self, name: str, x: Any) -> Any:
        if isinstance(x, self._t.Tensor):
            return getattr(self._t, name)(x)
        return getattr(math, name)(x)

    def sqrt(self, x: Any) -> Any:
        """``math.sqrt``."""
        return self._unary("sqrt", x)

    def log(self, x: Any) -> Any:
        """``math.log``."""
        return self._unary("log", x)

    def exp(self, x: Any) -> Any:
        """``math.exp``."""
        return self._unary("exp", x)

    def sin(self, x: Any) -> Any:
        """``math.sin``."""
        return self._unary("sin", x)

    def cos(self, x: Any) -> Any:
        """``math.cos``."""
        return self._unary("cos", x)

    def erf(self, x: Any) -> Any:
        """``math.erf``."""
        return self._unary("erf", x)


class Torch(Peer):
    """``torch.autograd.grad`` on CPU float64 tensors (forward + backward per call)."""

    name = "torch.autograd"
    module = "torch"

    def load(self) -> None:
        """Import torch and build its ``np`` / ``math`` stand-ins."""
        import torch

        threads = int(os.environ.get("OMP_NUM_THREADS", "0"))
        if threads > 0:
            torch.set_num_threads(threads)
            try:
                torch.set_num_interop_threads(threads)
            except RuntimeError:  # already set by an earlier import in this process
                pass
        self._torch = torch
        self._np = _TorchNumpy(torch)
        self._math = _TorchMath(torch)

    def prepare(self, f: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int]) -> Prepared:
        """Leaf tensors for the differentiated arguments, plain tensors for other arrays."""
        torch = self._torch
        t_f = rebind(f, self._np, self._math)
        t_args: list[Any] = []
        for i, a in enumerate(args):
            if i in wrt:
                t_args.append(torch.tensor(a, dtype=torch.float64, requires_grad=True))
            elif isinstance(a, np.ndarray):
                t_args.append(torch.as_tensor(a, dtype=torch.float64))
            else:
                t_args.append(a)
        leaves = [t_args[i] for i in wrt]

        def call() -> Any:
            return torch.autograd.grad(t_f(*t_args), leaves)

        def to_numpy(out: Any) -> tuple[Any, ...]:
            return tuple(o.detach().numpy() for o in out)

        return Prepared(call, to_numpy)


def all_peers() -> list[Peer]:
    """Every peer, in table order (availability is checked lazily)."""
    return [Autograd(), JaxEager(), JaxJit(), Torch()]
