"""Lists unpacked from a container and then changed in place get a copy of their own.

``xs, y = pair; a = xs.pop()`` changes the list ``pair`` holds. When nothing reads
``pair`` again in the function, the sweeps may as well pop a copy: the forward sweep
computes the same values, and the container keeps its entries, so its adjoint is built
in its shape at entry (``_ad.pack(pair, ...)``) and a caller that holds it (a tuple of
records handed from one generated sweep to the next) finds it as it gave it.

That is what generated code differentiated again needs: ``f_bwd`` pops the tape its
``_saved`` tuple holds (``_tape, x = _saved; v = _tape.pop()``). Differentiated, its
forward sweep would empty the list that the caller's other sweeps still read (the
adjoint of ``f_fwd``'s output is shaped like it); third-order derivatives through a
callee whose sweeps keep a tape need the list as the caller made it.
"""

from __future__ import annotations

import dataclasses

from . import ir
from .runtime import copy
from .stmt_facts import reads


def own_unpacked_lists(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """``body`` with ``v = _ad.copy(v)`` after each top-level ``..., v, ... = c`` where
    ``v``'s list is appended to or popped from and no other statement reads ``c``.

    Only unpackings outside loops (in branches too): one that runs again would take
    the container's list anew, with what earlier trips did to it.
    """
    changed = {s.obj for s in ir.walk(body) if isinstance(s, (ir.Append, ir.ListPop))}
    if not changed:
        return body
    readers: dict[str, int] = {}
    for s in ir.walk(body):
        for name in reads(s):
            readers[name] = readers.get(name, 0) + 1

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            if isinstance(s, ir.If):  # a new node: the normal form is shared
                s = dataclasses.replace(s, body=block(s.body), orelse=block(s.orelse))
            out.append(s)
            if not isinstance(s, ir.Unpack) or not isinstance(s.value, ir.Var):
                continue
            if readers.get(s.value.name, 0) != 1 or s.value.name in s.targets:
                continue
            for name in s.targets:
                if name in changed and s.targets.count(name) == 1:
                    callee = ir.Callee("_ad.copy", copy, resolved=True)
                    value = ir.Call(callee, [ir.Var(name)], [])
                    out.append(ir.Assign(s.line, s.src, name, value))
        return out

    return block(body)
