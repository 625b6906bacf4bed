"""``import`` statements inside a differentiated function.

An import binds a name to a module (or to an object of one) whenever it runs, the same
object every time: the normalizer resolves it while lowering, as it resolves the
module's globals, and the generated code receives what it binds as a free variable (the
statement itself does not run again in the generated code: importing is idempotent).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import libcst as cst

from .norm_base import NormalizerBase


def _dotted(node: cst.BaseExpression) -> str:
    """``a.b.c`` as text."""
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    assert isinstance(node, cst.Name)
    return node.value


def _load(norm: NormalizerBase, module: str, node: cst.CSTNode) -> Any:
    try:
        return importlib.import_module(module)
    except Exception as exc:  # the user's own import fails: say so at their line
        raise norm.error(f"import of {module} ({type(exc).__name__}: {exc})", node) from None


def local_import(norm: NormalizerBase, node: cst.Import | cst.ImportFrom) -> dict[str, Any]:
    """The names an ``import`` statement binds and what it binds them to.

    Raises:
        TransformError: For ``from m import *``, a relative import outside a package, an
            import that fails, or a name that the function also assigns.
    """
    bound: dict[str, Any] = {}
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = _dotted(alias.name)
            module = _load(norm, full, node)
            if alias.asname is not None:
                assert isinstance(alias.asname.name, cst.Name)
                bound[alias.asname.name.value] = module
            else:  # ``import a.b`` binds ``a``
                top = full.partition(".")[0]
                bound[top] = _load(norm, top, node)
    else:
        if isinstance(node.names, cst.ImportStar):
            raise norm.error("'from ... import *' inside a function", node)
        base = _dotted(node.module) if node.module is not None else ""
        if node.relative:
            package = norm.p.globals.get("__package__")
            if not package:
                raise norm.error("relative import outside a package", node)
            base = importlib.util.resolve_name("." * len(node.relative) + base, package)
        module = _load(norm, base, node)
        for alias in node.names:
            name = alias.name.value
            assert isinstance(name, str)
            value = getattr(module, name, None)
            if value is None:
                value = _load(norm, f"{base}.{name}", node)
            target = alias.asname.name if alias.asname is not None else alias.name
            assert isinstance(target, cst.Name)
            bound[target.value] = value
    clash = sorted(set(bound) & norm.locals)
    if clash:
        raise norm.error(f"imported name {clash[0]!r} also assigned in the function", node)
    return bound
