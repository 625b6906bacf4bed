"""Arrays a gradient holds released after their last use (``del``), where shapes are known.

A generated function keeps each name bound until it returns: the forward sweep's arrays
(``_t2 = np.sin(x)``, ``y``, ``z``) stay alive through the whole backward sweep although
most are read for the last time early in it, so the peak holds every array the function
ever made. Once the shape analysis of a shape variant (:mod:`shape_analysis`) knows which
names hold arrays, each array bound by a statement at the top of the function is released
right after the last top-level statement that reads it (a loop or ``if`` that reads it
counts as a whole)::

    x_bar = x_bar + 2.0 * (w_bar * (-w / _t11) * x)
    del w, _t11, w_bar
    # L258: z = np.tanh(y) ** 2 + np.log1p(y * y)

NumPy then reuses the released buffers for the arrays made next (no new pages): the
elementwise chain of ``bench/`` peaks at the hand-written gradient's memory.

Only names bound unconditionally before their release (by an assignment at the top of the
function, never inside a branch or loop alone), never a parameter the function does not
rebind (the caller holds it), only where a later statement computes an array (what the
release makes room for: not in the last statements before the ``return``, which releases
everything anyway), and never in code differentiated again (``del`` is outside
the subset the transformer reads). Nothing is computed differently: the same values, the
same order, fewer references.
"""

from __future__ import annotations

import ast
from typing import Any

from .codefacts import names, nodes, written
from .rewrite import attach, render
from .shape_analysis import Analysis, Unsupported
from .shape_facts import Arr, Fact


def _bound(s: ast.stmt) -> set[str]:
    """Names an assignment at the top of the function binds whatever happens."""
    if isinstance(s, ast.Assign):
        out: set[str] = set()
        for t in s.targets:
            for e in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                if isinstance(e, ast.Name):
                    out.add(e.id)
        return out
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
        return {s.target.id}
    if isinstance(s, ast.AnnAssign) and s.value is not None and isinstance(s.target, ast.Name):
        return {s.target.id}
    return set()


_COMPUTE = (ast.BinOp, ast.UnaryOp, ast.Call)


def _copy_of(s: ast.stmt, v: str) -> bool:
    """``name = v``: the array lives on under the other name, nothing to release."""
    return isinstance(s, ast.Assign) and isinstance(s.value, ast.Name) and s.value.id == v


def _array(fact: Fact) -> bool:
    return isinstance(fact, Arr) and len(fact.shape) >= 1


def _facts_after(analysis: Analysis, func: ast.FunctionDef) -> list[dict[str, Fact]] | None:
    """The facts of the names after each top-level statement (the analysis settled)."""
    env: dict[str, Any] | None = {a.arg: analysis.params.get(a.arg) for a in func.args.args}
    out: list[dict[str, Fact]] = []
    for s in func.body:
        if env is None:
            return None
        env = analysis.stmt(s, env)
        out.append(dict(env) if env is not None else {})
    return out


def releases(
    func: ast.FunctionDef, facts: dict[str, Fact], tape: str | None, **known: Any
) -> dict[int, list[str]]:
    """Top-level statement index -> the arrays to release after it (empty when the
    analysis gives up). ``known``: ``modules`` and ``shadowed`` for :class:`Analysis`."""
    body = func.body
    if not body or not isinstance(body[-1], ast.Return):
        return {}
    analysis = Analysis(func, facts, tape, **known)
    try:
        analysis.run()
        after = _facts_after(analysis, func)
    except Unsupported:
        return {}
    if after is None:
        return {}
    reads = [names(s, ast.Load) for s in body]
    first: dict[str, int] = {}  # name -> the first top-level statement binding it
    for k, s in enumerate(body):
        for v in _bound(s):
            first.setdefault(v, k)
    last: dict[str, int] = {}
    for k, found in enumerate(reads):
        for v in found:
            last[v] = k
    # a statement that computes an array (the return's own work aside): what a release
    # before it can make room for
    makes = [
        any(isinstance(n, _COMPUTE) for n in nodes(s))
        and any(_array(after[k].get(v)) for v in written(s))
        for k, s in enumerate(body[:-1])
    ]
    out: dict[int, list[str]] = {}
    for v, k in last.items():
        if v == tape or v not in first or first[v] > k or not any(makes[k + 1 :]):
            continue
        if _array(after[k].get(v)) and not _copy_of(body[k], v):
            out.setdefault(k, []).append(v)
    return out


def release_arrays(text: str, facts: dict[str, Fact], tape: str | None, **known: Any) -> str:
    """``text`` (one generated function) with ``del`` statements releasing its arrays
    after their last use; unchanged when there is nothing to release."""
    tree = ast.parse(text)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    found = releases(func, facts, tape, **known)
    if not found:
        return text
    lines = text.split("\n")
    notes = attach(func, lines)
    changed: set[int] = set()
    body: list[ast.stmt] = []
    for k, s in enumerate(func.body):
        body.append(s)
        if k in found:
            gone = ", ".join(sorted(found[k], key=lambda v: (v.startswith("_"), v)))
            node = ast.parse(f"del {gone}").body[0]
            changed.add(id(node))
            body.append(node)
    func.body = body
    return "\n".join([lines[func.lineno - 1], *render(func.body, notes, "    ", changed)])
