"""User-supplied derivative rules: ``defgrad``, ``custom_gradient``, ``stop_gradient``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import runtime
from .rules.registry import REGISTRY, nondiff, set_jvps, vjp_rule


def stop_gradient(x: Any) -> Any:
    """Return ``x`` unchanged; no gradient flows through the result."""
    return x


nondiff("stop_gradient", [stop_gradient])


def defgrad(func: Callable[..., Any], rule: Callable[..., Any]) -> Callable[..., Any]:
    """Register a reverse-mode rule for ``func``.

    Args:
        func: Any callable (a NumPy function, a builtin, a user function).
        rule: ``rule(g, *args, **kwargs)`` returning the gradient of each positional
            argument: one value when ``func`` takes one, else a tuple.

    Returns:
        ``func``, so that ``defgrad`` can be used as a decorator helper.

    The rule takes precedence over transforming ``func``'s source.
    """
    REGISTRY.set_custom(func, rule)
    from .api import clear_cache

    clear_cache()
    return func


def defjvp(func: Callable[..., Any], rule: Callable[..., Any]) -> Callable[..., Any]:
    """Register a forward-mode rule for ``func``.

    Args:
        func: Any callable.
        rule: ``rule(tangents, *args, **kwargs)`` returning the tangent of the output;
            ``tangents`` holds one tangent per positional argument (``0.0`` for those
            not differentiated).

    Returns:
        ``func``. The rule takes precedence over transforming ``func``'s source in
        forward mode (reverse mode uses ``defgrad`` or the source).
    """
    REGISTRY.set_custom(func, rule, jvp=True)
    from .api import clear_cache

    clear_cache()
    return func


class CustomGradient:
    """A function decorated with :func:`custom_gradient` (TensorFlow semantics).

    Called normally it returns only the value. Inside a differentiated function the
    decorated function's ``grad_fn(upstream)`` supplies the input gradients.
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun
        functools.update_wrapper(self, fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        value, _ = self.fun(*args, **kwargs)
        return value

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Callable[..., Any]]:
        """Run the function, returning ``(value, grad_fn)``."""
        return self.fun(*args, **kwargs)


def custom_gradient(fun: Callable[..., Any]) -> CustomGradient:
    """Decorator: ``fun`` returns ``(y, grad_fn)``; ``grad_fn(upstream)`` returns input grads.

    With several inputs ``grad_fn`` returns a tuple (or list) with one gradient each.
    """
    return CustomGradient(fun)


def _register_runtime_rules() -> None:
    # a dict's sequence is its keys: they carry no tangent, and the adjoint a float key
    # gets where it is used as a number (``k * d[k]``) does not flow back into the dict
    for name, fn in (("sequence", runtime.sequence), ("sequence_now", runtime.sequence_now)):
        seq = vjp_rule(name, [fn], ("xs",), {"xs": "_ad.sequence_part(g, xs)"}, [])
        set_jvps(seq, xs="_ad.sequence_part(t, xs)")
    part = vjp_rule(
        "sequence_part",
        [runtime.sequence_part],
        ("t", "xs"),
        {"t": "_ad.sequence_part(g, xs)", "xs": "0.0"},
        [],
    )
    set_jvps(part, t="_ad.sequence_part(t, xs)", xs="0.0")
    nondiff("len", [len])
    nondiff("holds_keys", [runtime.holds_keys])
    nondiff("variable_grad", [runtime.variable_grad])
    nondiff(
        "attribute stores",
        [runtime.store_attribute, runtime.stored_gradient, runtime.note_stored],
    )
    checked = vjp_rule(
        "rule_grads",
        [runtime.rule_grads],
        ("grads", "args", "name"),
        {"grads": "_ad.restructure(g, grads)", "args": "0.0"},
        [],
    )
    set_jvps(checked, grads="_ad.rule_grads(t, args, name)", args="0.0")
    set_jvps(
        vjp_rule(
            "restructure",
            [runtime.restructure],
            ("ct", "like"),
            {"ct": "_ad.as_tuple(g, like)", "like": "0.0"},
            [],
        ),
        ct="_ad.restructure(t, like)",
        like="0.0",
    )
    set_jvps(
        vjp_rule(
            "as_tuple",
            [runtime.as_tuple],
            ("ct", "like"),
            {"ct": "_ad.restructure(g, like)", "like": "0.0"},
            [],
        ),
        ct="_ad.as_tuple(t, like)",
        like="0.0",
    )
    nondiff("not_a_view", [runtime.not_a_view])
    nondiff("view_of", [runtime.view_of])
    nondiff("written_argument", [runtime.written_argument])


_register_runtime_rules()
