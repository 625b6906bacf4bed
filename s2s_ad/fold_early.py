"""The forward sweep's three-address temporaries folded as they are emitted.

The normal form splits each of the user's lines into one operation per statement
(``_t5 = np.abs(h0)``, ``_t4 = np.log1p(_t5)``, ``h1 = _t4 * 0.986 + ...``); the forward
sweep copies them, and the optimizer (:func:`fold.fold_temporaries`) folds the
temporaries the backward sweep does not read back into their readers. For a 300-line
function that is about 500 of the 1,950 statements the optimizer is handed: it builds,
surveys, sweeps for liveness and renders each only to remove it.

:func:`fold_forward` does those folds when the reverse pass is done, on the sweep's
items, so the optimizer never sees the temporaries. It folds exactly what the optimizer
would fold, in the same order and with the same estimate of each line's width (the
generated code stays byte for byte the same), and leaves the rest to it: a temporary is
folded here only when

* it is bound by a line built as a tree (:mod:`irtrees`), read once in the forward sweep
  and never in the backward sweep (nor returned), and its value is neither a copy of a
  name nor has effects nor reads the tape;
* its value is not a NumPy ufunc the backward sweep calls too (:mod:`reuse` may make the
  backward sweep read the value held, and the optimizer then keeps the name);
* its reader comes later in the same user line's code with nothing in between that
  writes what it reads, writes in place, may have effects or touches the tape (the
  optimizer's rules, :func:`fold._wall`), and reads it once, not under a lambda, a
  comprehension or a conditional operand;
* every other temporary its reader reads is folded here too or kept by the optimizer
  (one the optimizer might fold into the same reader would change the order of the
  width checks, and with it which folds fit in a line).

A folded line's text is its tree unparsed (what the optimizer writes for a statement it
rewrote); the width the optimizer's estimate would give it travels beside it
(``Line.width``).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable

from .codefacts import DEFERRED, SURVEYED, Survey, survey
from .codegen import Item, Line, Pop, Push, Suite
from .fold import WIDTH, WINDOW, _effects_after, _reads_of, _replace
from .reuse import _ufunc_call

#: Fold as the sweep is emitted (tests compare the code generated with and without).
ENABLED = True
#: A temporary named in generated text (not an attribute, not part of a longer name).
_TEMP_IN_TEXT = re.compile(r"(?<![\w.])_t\d+(?![\w])")
#: A NumPy function called in generated text.
_NP_CALL = re.compile(r"(?<![\w.])np\.(\w+)\(")

Make = Callable[[], "list[ast.stmt] | None"]


def _written(it: Item, pushed: set[int]) -> bool:
    """Whether emission writes ``it`` (not a push or pop of a site dropped)."""
    if isinstance(it, Push):
        return it.site in pushed and bool(it.code)
    return not isinstance(it, Pop) or it.site in pushed


def _texts(items: list[Item], pushed: set[int]) -> list[str]:
    """The text of every item written (a compound statement's header), nested ones
    included."""
    out: list[str] = []
    for it in items:
        if not _written(it, pushed):
            continue
        if isinstance(it, Line):
            out.append(it.text)
        elif isinstance(it, Suite):
            out.append(it.header)
            out += _texts(it.body, pushed)
            if it.orelse:
                out += _texts(it.orelse, pushed)
        elif isinstance(it, Push):
            out.append(it.code)
        elif isinstance(it, Pop):
            out.append(it.text or it.target)
    return out


def fold_forward(
    fwd: list[Item], bwd: list[Item], kept: set[str], tape: str, pushed: set[int]
) -> list[Item]:
    """``fwd`` with the temporaries the optimizer would fold folded (see the module's
    docstring). ``bwd`` is the backward sweep; ``kept`` names read elsewhere in the
    generated function (its output, its saved values); ``pushed`` the tape sites kept
    (the pushes and pops of others are not written)."""
    temps: list[str] = []  # counted at once (``Counter.update`` asks isinstance per call)
    for text in _texts(fwd, pushed):
        if "_t" in text:
            temps += _TEMP_IN_TEXT.findall(text)
    counts = Counter(temps)
    bwd_texts = _texts(bwd, pushed)
    read_back = set(kept)
    called: set[str] = set()
    for text in bwd_texts:
        if "_t" in text:
            read_back.update(_TEMP_IN_TEXT.findall(text))
        if "np." in text:
            called.update(_NP_CALL.findall(text))
    folder = _Early(counts, read_back, called, tape, pushed)
    return folder.block(fwd)


class _Once:
    """A line's ``make`` whose first call returns the trees already built."""

    def __init__(self, make: Make, first: list[ast.stmt]) -> None:
        self.make, self.first = make, first

    def __call__(self) -> list[ast.stmt] | None:
        first, self.first = self.first, None
        return first if first is not None else self.make()


class _Folded:
    """A reader's ``make`` with the values of the temporaries folded into it."""

    def __init__(self, make: Make, folds: list[tuple[str, Make]]) -> None:
        self.make, self.folds = make, folds

    def __call__(self) -> list[ast.stmt] | None:
        made = self.make()
        assert made is not None
        (u,) = made
        for t, value in self.folds:
            v = value()
            assert v is not None
            _put(u, t, v[0].value)  # type: ignore[attr-defined]
        return made


def _put(u: ast.stmt, t: str, value: ast.expr) -> None:
    """Replace the read of ``t`` in ``u``'s value by ``value``."""
    head = u.value  # type: ignore[attr-defined]
    if isinstance(head, ast.Name):
        u.value = value  # type: ignore[attr-defined]
    else:
        _replace(head, t, value)


class _Early:
    """The folds of one forward sweep, block by block."""

    def __init__(
        self,
        counts: Counter[str],
        read_back: set[str],
        called: set[str],
        tape: str,
        pushed: set[int],
    ) -> None:
        self.counts, self.read_back, self.called = counts, read_back, called
        self.tape, self.pushed = tape, pushed

    def block(self, items: list[Item]) -> list[Item]:
        """``items`` (the pushes and pops not written left out) with the folds made."""
        items = [it for it in items if _written(it, self.pushed)]
        for it in items:
            if isinstance(it, Suite):
                it.body = self.block(it.body)
                if it.orelse:
                    it.orelse = self.block(it.orelse)
        trees: dict[int, ast.stmt] = {}
        facts: dict[int, Survey] = {}
        makes: dict[int, Make] = {}
        for k, it in enumerate(items):
            if isinstance(it, Line) and it.make is not None and "_t" in it.text:
                made = it.make()
                if made is not None and len(made) == 1:
                    trees[k] = made[0]
                    facts[k] = survey(made[0])
                    once = _Once(it.make, made)
                    makes[k] = once
                    it.make = once
        if not trees:
            return items
        # each candidate's reader, and the names it reads once folded (a superset)
        reader: dict[int, int] = {}
        inputs: dict[int, list[int]] = {}
        reads: dict[int, set[str]] = {}
        for i in trees:  # in order
            s = trees[i]
            below = inputs.get(i)
            reads[i] = facts[i].loads.union(*(reads[k] for k in below)) if below else facts[i].loads
            t = self._temporary(s, facts[i])
            if t is None:
                continue
            j = self._reader(items, trees, facts, i, t, reads[i])
            if j is not None:
                reader[i] = j
                inputs.setdefault(j, []).append(i)
        # clean readers: every temporary they read is folded here or kept by the optimizer
        clean: set[int] = set()
        read_back = self.read_back
        for j in trees:
            below = inputs.get(j, ())
            mine = {_target(trees[i]) for i in below if i in clean}
            if all(n in mine or n in read_back or not _temporary_name(n) for n in facts[j].loads):
                clean.add(j)
        # the folds, in the optimizer's order, with its width estimates
        width: dict[int, int] = {}
        folds: dict[int, list[tuple[str, Make]]] = {}
        dropped: set[int] = set()
        for i, j in reader.items():  # in order
            if i not in clean or j not in clean:
                continue
            s, u = trees[i], trees[j]
            t = _target(s)
            w = self._width(items, j, width) + self._width(items, i, width) - 2 * len(t) - 3
            if w > WIDTH:
                continue
            _put(u, t, s.value)  # type: ignore[attr-defined]
            width[j] = w
            folds.setdefault(j, []).append((t, makes[i]))
            dropped.add(i)
        for k, found in facts.items():
            if k not in folds and k not in dropped:  # as built: the optimizer's first walk
                setattr(trees[k], SURVEYED, found)
        if not dropped:
            return items
        out: list[Item] = []
        for k, it in enumerate(items):
            if k in dropped:
                continue
            if k in folds:
                assert isinstance(it, Line)
                first = [trees[k]]
                it = Line(ast.unparse(trees[k]), _Once(_Folded(makes[k], folds[k]), first))
                it.width = width[k]
            out.append(it)
        return out

    def _width(self, items: list[Item], k: int, width: dict[int, int]) -> int:
        """The optimizer's estimate of line ``k``'s width (``fold._Folder.text_width``)."""
        found = width.get(k)
        if found is None:
            it = items[k]
            assert isinstance(it, Line)
            found = width[k] = len(it.text.strip())
        return found

    def _temporary(self, s: ast.stmt, found: Survey) -> str | None:
        """``t`` for ``t = e`` that may be folded here (see the module's docstring)."""
        if not (
            isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        ):
            return None
        t = s.targets[0].id
        if not _temporary_name(t) or self.counts[t] != 2 or t in self.read_back:
            return None
        value = s.value
        if isinstance(value, ast.Name) or not found.effect_free or self.tape in found.loads:
            return None
        if isinstance(value, ast.Call):
            call = _ufunc_call(value)
            if call is not None and call.func.attr in self.called:  # type: ignore[attr-defined]
                return None  # the backward sweep may read the value held instead
        return t

    def _reader(
        self,
        items: list[Item],
        trees: dict[int, ast.stmt],
        facts: dict[int, Survey],
        i: int,
        t: str,
        reads: set[str],
    ) -> int | None:
        """The index of the line that reads ``t`` (bound at ``i``), when the optimizer
        would fold ``t`` into it; else ``None``."""
        for j in range(i + 1, min(len(items), i + 1 + WINDOW)):
            u = trees.get(j)
            if u is None:
                return None  # a comment, a push, a compound statement, a line as text
            found = facts[j]
            simple = isinstance(u, (ast.Assign, ast.Expr))
            if not simple:
                return None
            if t in found.loads:
                head = u.value  # type: ignore[attr-defined]
                if self.tape in found.loads:
                    return None
                if not found.effect_free and not _effects_after(head):
                    return None
                if isinstance(head, DEFERRED) or _reads_of(head, t) != 1:
                    return None
                return j
            # a wall (``fold._wall``) or a write of what the value reads
            if not found.effect_free or self.tape in found.loads:
                return None
            if isinstance(u, ast.Assign):
                for target in u.targets:
                    if not isinstance(target, ast.Name) or target.id in reads:
                        return None
        return None


def _temporary_name(name: str) -> bool:
    """Whether ``name`` is one of the sweep's temporaries (``_t5``)."""
    return name.startswith("_t") and name[2:].isdigit()


def _target(s: ast.stmt) -> str:
    return s.targets[0].id  # type: ignore[attr-defined,union-attr]
