"""An inner tape's gradient with respect to Variables reached through objects, as a call
an outer tape differentiates (the Hessian of a loss with respect to ``layer.kernel``).

The inner tape differentiates such Variables in *variables mode*: each attribute read
that is one of them hands its adjoint to a table (``runtime.VARIABLE_GRADS``). To
differentiate that gradient again, the outer tape calls a :class:`VariablesGradient`,
which runs the inner gradient as *pure* code generated in variables mode: there, what
each read adds to the table is also threaded through a token the code returns
(``_ad.variable_grad_acc``, ``_ad.vjp_apply_vars``), so that the derivative of the
pure code, generated in variables mode in turn, reaches every such read. The outer
backward sweep seeds the token and names, in ``runtime.VARIABLE_COTANGENTS``, the
cotangent of each inner gradient; the adjoint of each read's contribution is that
cotangent, and the attribute reads of the pure code hand their own adjoints to the
outer tape's table. Reverse over reverse, exact, to second order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import runtime
from .errors import TransformError
from .variable import Variable


class VariablesGradient:
    """``inner_tape.gradient(target, variables)`` as a function of the inner block's
    inputs (``fn``'s parameters), differentiable by an outer tape.

    Args:
        fn: The function the inner tape differentiated (its block's statements).
        wrt: ``fn``'s parameters the inner tape differentiated by name.
        sources: The Variables asked for (one, or a list or tuple of them).
        named: For each source, its position in ``wrt`` when the inner block also uses
            it by name (its gradient adds up), else ``None``.
        seed: The cotangent of ``fn``'s result (ones in the target's shape).
        label: How error messages name the inner call.
    """

    def __init__(
        self,
        fn: Any,
        wrt: tuple[str, ...],
        sources: Any,
        named: list[int | None],
        seed: Any,
        label: str,
    ) -> None:
        self.fn = fn
        self.wrt = wrt
        self.many = isinstance(sources, (list, tuple))
        self.kind = type(sources) if self.many else None
        self.sources: list[Variable] = list(sources) if self.many else [sources]
        self.named = named  # the position in wrt of a source also used by name, or None
        self.seed = seed
        self.label = label
        self.__name__ = self.__qualname__ = "inner_gradient"

    def _pure(self) -> Any:
        from .api import compile_adjoint

        return compile_adjoint(self.fn, self.wrt, pure="vjp", variables=True).bind(self.fn)["grad"]

    def __call__(self, *args: Any) -> Any:
        """The inner gradient itself (outside a differentiated run)."""
        value, _ = self._forward(args, ())
        return value

    def _forward(
        self, args: tuple[Any, ...], labels: tuple[int, ...]
    ) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
        from .dispatch import call_with_pullback

        pure = self._pure()
        table: dict[int, Any] = {id(v): 0.0 for v in self.sources}
        positions = tuple(k + 1 for k in labels)  # after the seed
        saved = runtime.VARIABLE_GRADS
        hooks = runtime.CALL_HOOKS[:]
        runtime.VARIABLE_GRADS = table
        runtime.CALL_HOOKS.clear()  # the block's own layer calls are first order only
        try:
            out, pullback = call_with_pullback(pure, positions, (self.seed, *args), {})
        except (ValueError, TypeError, IndexError) as error:
            raise self._refused(error) from error
        finally:
            runtime.VARIABLE_GRADS = saved
            runtime.CALL_HOOKS[:] = hooks
        grads = out[:-1]
        values = []
        for source, k in zip(self.sources, self.named):
            part = table[id(source)]
            if k is not None:
                part = runtime.add(part, grads[k])
            if type(part) is float and part == 0.0:
                part = np.zeros_like(source.value)
            values.append(np.asarray(part, dtype=source.value.dtype))
        value = self.kind(values) if self.many else values[0]

        def inner_pullback(cot: Any) -> tuple[Any, ...]:
            parts = list(cot) if self.many else [cot]
            cotangents: dict[int, Any] = {}
            named = [0.0] * len(grads)
            for source, k, u in zip(self.sources, self.named, parts):
                if u is None or runtime.is_zero(u):
                    continue
                u = np.asarray(u)
                cotangents[id(source)] = u
                if k is not None:
                    named[k] = runtime.add(named[k], u)
            if not cotangents:
                return tuple(0.0 for _ in labels)
            outer = runtime.VARIABLE_COTANGENTS
            runtime.VARIABLE_COTANGENTS = cotangents
            try:
                # the token's cotangent: any non-zero number (its adjoints are read
                # from VARIABLE_COTANGENTS)
                return tuple(pullback((*named, np.float64(1.0))))
            except (ValueError, TypeError, IndexError) as error:
                raise self._refused(error) from error
            finally:
                runtime.VARIABLE_COTANGENTS = outer

        return value, inner_pullback

    def _refused(self, error: Exception) -> TransformError:
        """What the derivative of the inner gradient's code could not run, named: the
        inner call and the error (seen for layers whose call assigns a name again
        inside branches, such as ``BatchNormalization``)."""
        return TransformError(
            f"the inner tape's gradient {self.label} again: the derivative of the code "
            f"of a layer it calls fails ({type(error).__name__}: {error})",
            hint="second derivatives through this layer's code are not supported yet; "
            "s2s_ad.hessian of a function of the weights gives the Hessian",
        )

    def _s2s_pullback(
        self, labels: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
        """Value and pullback of this call (``dispatch.call_with_pullback``)."""
        if kwargs or any(not isinstance(label, int) for label in labels):
            raise TransformError(f"the inner tape's gradient {self.label} called with keywords")
        kept = tuple(label for label in labels if _differentiable(args[label]))
        value, pullback = self._forward(args, kept)

        def by_label(cot: Any) -> tuple[Any, ...]:
            got = dict(zip(kept, pullback(cot)))
            return tuple(got.get(label, 0.0) for label in labels)

        return value, by_label


def _differentiable(value: Any) -> bool:
    """An argument whose gradient the pure code can return: a float array or number
    (objects reach their Variables through variables mode)."""
    if isinstance(value, Variable):
        return value.dtype.kind in "fc"
    if isinstance(value, (np.ndarray, np.generic, float, complex)):
        return np.asarray(value).dtype.kind in "fc"
    return False
