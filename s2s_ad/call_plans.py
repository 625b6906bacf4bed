"""How the reverse pass emits each active call site (a ``CallPlan`` per statement).

A call runs through a rule, a user function's own sweeps (``f_fwd``/``f_bwd``), a
pullback made when the code runs (``_ad.vjp_call``), or a ``custom_gradient`` object;
the plan holds the names the generated code binds for it and the residual (``aux``)
the forward sweep records for the backward one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import ir
from .analysis import CallInfo


@dataclass
class CallPlan:
    """How an active call site is emitted."""

    info: CallInfo
    aux: str = ""
    fwd: str = ""
    bwd: str = ""
    labels: list[tuple[Any, ir.Atom]] = field(default_factory=list)


def assigned(s: ir.Stmt, plans: Mapping[int, CallPlan]) -> list[str]:
    """Variables an (unnested) statement assigns, in push order (a call's residual too)."""
    if isinstance(s, ir.Assign):
        plan = plans.get(id(s))
        return [s.target, plan.aux] if plan is not None and plan.aux else [s.target]
    if isinstance(s, ir.Unpack):
        return list(s.targets)
    if isinstance(s, (ir.SetItem, ir.Append)):
        return [s.obj]
    if isinstance(s, ir.ListPop):
        return [s.target, s.obj]
    if isinstance(s, ir.For):
        return [s.target] + ([s.trips] if s.trips else [])
    if isinstance(s, ir.While):
        return [s.trips]
    return []
