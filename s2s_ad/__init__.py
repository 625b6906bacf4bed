"""s2s_ad: source-to-source automatic differentiation for Python and NumPy.

``grad(f)`` reads the source of ``f`` and generates a readable Python function that
computes its gradient; ``source(df)`` shows that code.
"""

from . import rules  # noqa: F401  (registers the derivative rules)
from .api import grad, source, value_and_grad, vjp
from .custom import custom_gradient, defgrad, defjvp, stop_gradient
from .errors import TransformError
from .html import html
from .testing import check_grads
from .transforms import elementwise_grad, hessian, hvp, jacobian, jvp
from .variable import Variable

# The tape (and with it libcst, which it parses blocks with) is imported at first use:
# ``import s2s_ad`` stays light.
_LAZY = {"GradientTape": "tape", "UnconnectedGradients": "tape"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 's2s_ad' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "GradientTape",
    "TransformError",
    "UnconnectedGradients",
    "Variable",
    "check_grads",
    "custom_gradient",
    "defgrad",
    "defjvp",
    "elementwise_grad",
    "hessian",
    "html",
    "hvp",
    "jacobian",
    "jvp",
    "grad",
    "source",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]
__version__ = "0.1.0"
