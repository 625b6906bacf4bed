"""The side-by-side view: a primal function and its generated derivative in one HTML page.

The generated code names the primal line each block comes from in a comment
(``# L12: y = np.sin(x)``). This module reads those comments, so every generated line
is linked to a primal line; the page highlights the pair under the mouse (a click pins
it, and ``page.html#L12`` opens with line 12 pinned). Tape pushes and pops are marked.
The page is standalone: inline CSS and JavaScript, no network.
"""

from __future__ import annotations

import functools
import html as _html
import inspect
import itertools
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["fragment", "function_page", "html", "link_lines", "page"]

_ORIGIN = re.compile(r"^\s*# L(\d+):")
_SWEEP = re.compile(r"^\s*# (forward|backward) sweep")
_PUSH = re.compile(r"\b_tape\w*\.append\(")
_POP = re.compile(r"\b_tape\w*\.pop\(")
_TOKEN = re.compile(
    r"(?P<comment>#.*$)|(?P<string>'[^']*'|\"[^\"]*\")|(?P<number>\b\d+\.?\d*(?:e-?\d+)?\b)"
    r"|(?P<name>[^\W\d]\w*)"
)
_KEYWORDS = frozenset(keyword.kwlist)
_uid = itertools.count(1)

PRIMAL_BG = "#fdf6e3"
DERIVATIVE_BG = "#eaf2fb"
HIGHLIGHT_BG = "#ffd54f"


@dataclass(frozen=True)
class GeneratedLine:
    """One line of generated code and the primal line it belongs to.

    Attributes:
        text: The line as generated.
        origin: The primal line number (as in ``# Lnn:``), or ``None`` for bookkeeping.
        tape: ``"push"``, ``"pop"`` or ``""``.
    """

    text: str
    origin: int | None
    tape: str


def link_lines(generated: str, primal_lines: dict[int, str]) -> list[GeneratedLine]:
    """Assign each generated line to the primal line its block comes from.

    A ``# Lnn:`` comment opens a block that runs to the next such comment, a
    ``# forward sweep``/``# backward sweep`` marker, or a line indented less than the
    comment. A line outside any block whose text
    equals a primal statement (the first statement is emitted without a comment) is
    linked to that statement.

    Args:
        generated: The generated source.
        primal_lines: Primal line number -> text.

    Returns:
        One entry per generated line.
    """
    by_text: dict[str, int] = {}
    for number, text in primal_lines.items():
        stripped = text.strip()
        if stripped and not stripped.startswith(("#", "def ", "@")):
            by_text.setdefault(stripped, number)
    out: list[GeneratedLine] = []
    current: int | None = None
    depth = 0
    for line in generated.splitlines():
        indent = len(line) - len(line.lstrip())
        origin = _ORIGIN.match(line)
        if origin:
            current, depth = int(origin.group(1)), indent
        elif _SWEEP.match(line) or line.startswith("def ") or (line.strip() and indent < depth):
            current = None
        number = current if current is not None else by_text.get(line.strip())
        if number is not None and number not in primal_lines:
            number = None
        tape = "push" if _PUSH.search(line) else "pop" if _POP.search(line) else ""
        out.append(GeneratedLine(line, number, tape))
    return out


def _highlight(line: str) -> str:
    """HTML for one line of Python with comments, strings, numbers and keywords coloured."""
    parts: list[str] = []
    pos = 0
    for match in _TOKEN.finditer(line):
        parts.append(_html.escape(line[pos : match.start()]))
        kind = match.lastgroup
        text = _html.escape(match.group())
        if kind == "name":
            parts.append(f'<span class="kw">{text}</span>' if match.group() in _KEYWORDS else text)
        else:
            parts.append(f'<span class="{kind[:3]}">{text}</span>')  # type: ignore[index]
        pos = match.end()
    parts.append(_html.escape(line[pos:]))
    return "".join(parts)


_CSS = """
.s2s{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#222}
.s2s h1{font:600 16px system-ui,sans-serif;margin:8px 4px}
.s2s .panes{display:grid;grid-template-columns:1fr 1fr;gap:8px;align-items:start}
.s2s .pane{border-radius:6px;padding:6px 0;overflow:auto;max-height:85vh}
.s2s .pane h2{font:600 13px system-ui,sans-serif;margin:0 10px 6px;color:#555}
.s2s .primal{background:PRIMAL_BG}
.s2s .derivative{background:DERIVATIVE_BG}
.s2s .ln{white-space:pre;padding:0 10px 0 0;cursor:pointer;border-left:4px solid transparent;
min-height:1.45em}
.s2s .no{display:inline-block;width:3.5em;text-align:right;color:#999;margin-right:1em;
user-select:none}
.s2s .ln.hl,.s2s .ln.pin{background:HIGHLIGHT_BG}
.s2s .ln.push{border-left-color:#d32f2f}
.s2s .ln.pop{border-left-color:#1976d2}
.s2s .ln.push::after{content:"  \\2191 tape push";color:#d32f2f;font-size:11px}
.s2s .ln.pop::after{content:"  \\2193 tape pop";color:#1976d2;font-size:11px}
.s2s .com{color:#6a737d;font-style:italic}.s2s .kw{color:#a626a4;font-weight:600}
.s2s .str{color:#50a14f}.s2s .num{color:#986801}
.s2s .legend{font:12px system-ui,sans-serif;color:#555;margin:6px 4px}
""".replace("PRIMAL_BG", PRIMAL_BG).replace("DERIVATIVE_BG", DERIVATIVE_BG)
_CSS = _CSS.replace("HIGHLIGHT_BG", HIGHLIGHT_BG)

_JS = """
(function(){
  var root=document.getElementById("ROOT");
  function pair(n){return root.querySelectorAll('[data-line="'+n+'"],[data-src="'+n+'"]');}
  function mark(n,cls,on){pair(n).forEach(function(e){e.classList.toggle(cls,on);});}
  var pinned=null;
  function pin(n){
    if(pinned!==null){mark(pinned,"pin",false);}
    pinned=(pinned===n)?null:n;
    if(pinned!==null){
      mark(n,"pin",true);
      var d=root.querySelector('[data-src="'+n+'"]');
      var p=root.querySelector('[data-line="'+n+'"]');
      if(d){d.scrollIntoView({block:"nearest"});} if(p){p.scrollIntoView({block:"nearest"});}
    }
  }
  root.querySelectorAll("[data-line]").forEach(function(e){
    var n=e.getAttribute("data-line");
    var k=root.querySelectorAll('[data-src="'+n+'"]').length;
    e.setAttribute("data-partners",String(k));
    if(k){e.classList.add("linked");}
  });
  root.querySelectorAll("[data-line],[data-src]").forEach(function(e){
    var n=e.getAttribute("data-line")||e.getAttribute("data-src");
    e.addEventListener("mouseenter",function(){mark(n,"hl",true);});
    e.addEventListener("mouseleave",function(){mark(n,"hl",false);});
    e.addEventListener("click",function(){pin(n);});
  });
  var m=/^#L(\\d+)$/.exec(window.location.hash||"");
  if(m){pin(m[1]);}
  root.setAttribute("data-ready","1");
})();
"""


def fragment(primal_source: str, first_line: int, generated: str, title: str) -> str:
    """The view as an HTML fragment (style, both panes, script), for pages and notebooks.

    Args:
        primal_source: The primal function's source text.
        first_line: The file line number of the first line of ``primal_source``.
        generated: The generated derivative source.
        title: A heading.

    Returns:
        HTML text; element ids are unique per call, so several views can share a page.
    """
    root = f"s2s-view-{next(_uid)}"
    primal_lines = {first_line + i: t for i, t in enumerate(primal_source.splitlines())}
    left = [
        f'<div class="ln" data-line="{n}" id="{root}-L{n}"><span class="no">{n}</span>'
        f"{_highlight(text)}</div>"
        for n, text in primal_lines.items()
    ]
    right = []
    for i, line in enumerate(link_lines(generated, primal_lines), 1):
        classes = "ln" + (f" {line.tape}" if line.tape else "")
        src = f' data-src="{line.origin}"' if line.origin is not None else ""
        right.append(
            f'<div class="{classes}"{src}><span class="no">{i}</span>{_highlight(line.text)}</div>'
        )
    return (
        f"<style>{_CSS}</style>\n"
        f'<div class="s2s" id="{root}">\n<h1>{_html.escape(title)}</h1>\n'
        '<div class="panes">\n'
        '<div class="pane primal"><h2>primal</h2>\n' + "\n".join(left) + "\n</div>\n"
        '<div class="pane derivative"><h2>generated derivative</h2>\n'
        + "\n".join(right)
        + "\n</div>\n</div>\n"
        '<div class="legend">Hover a line to see its partner; click to pin. '
        "Red edge: tape push; blue edge: tape pop.</div>\n</div>\n"
        f"<script>{_JS.replace('ROOT', root)}</script>\n"
    )


def page(primal_source: str, first_line: int, generated: str, title: str) -> str:
    """The view as a standalone HTML document (see :func:`fragment` for the arguments)."""
    body = fragment(primal_source, first_line, generated, title)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_html.escape(title)}</title>\n"
        "<style>body{margin:8px;background:#fff}</style>\n</head>\n<body>\n"
        f"{body}</body>\n</html>\n"
    )


def _primal_source(fun: Callable[..., Any]) -> tuple[str, int]:
    """The source and first line number of the Python function behind ``fun``."""
    target: Any = fun
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.ismethod(target):
        target = target.__func__
    if not inspect.isfunction(inspect.unwrap(target)) and callable(target):
        target = type(target).__call__  # a callable object
    target = inspect.unwrap(target)
    lines, start = inspect.getsourcelines(target)
    return "".join(lines), max(start, 1)


def function_page(fun: Callable[..., Any], generated: str) -> str:
    """The standalone page for a primal function and generated source (the command line).

    Args:
        fun: The primal Python function.
        generated: Source generated from it.

    Returns:
        The HTML document.
    """
    primal_source, first = _primal_source(fun)
    name = getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
    return page(primal_source, first, generated, f"{name}: primal and generated derivative")


def _parts(df: Any) -> tuple[str, int, str, str]:
    fun = getattr(df, "_s2s_primal", None)
    generated = getattr(df, "_s2s_source", None)  # GradientFunction: s2s_ad.source(df)
    if fun is None or generated is None:
        raise TypeError("html() expects a function returned by s2s_ad.grad or value_and_grad")
    primal_source, first = _primal_source(fun)
    name = getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
    title = f"{name}: primal and generated derivative"
    return primal_source, first, generated(), title


def html(df: Callable[..., Any]) -> str:
    """A standalone HTML page showing a gradient function's primal and generated code.

    Each block of generated code is linked to the primal line it comes from: hovering
    either side highlights the pair, a click pins it, and tape pushes and pops are marked.

    Args:
        df: A function returned by ``s2s_ad.grad`` or ``s2s_ad.value_and_grad``.

    Returns:
        The HTML document as a string (no external resources).

    Raises:
        TypeError: If ``df`` is not a gradient function made by s2s_ad.
    """
    return page(*_parts(df))


def repr_html(df: Callable[..., Any]) -> str:
    """The view as a fragment, for ``_repr_html_`` (notebooks)."""
    return fragment(*_parts(df))
