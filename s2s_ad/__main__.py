"""Command line: ``python -m s2s_ad FILE.py:FUNC [--wrt N] [--mode M] [--html OUT] [--stage S]``.

Prints the generated derivative source, or with ``--html OUT`` writes the side-by-side
view of the primal and its derivative to the file ``OUT``. ``--stage`` prints one stage of
the transformer instead (:mod:`s2s_ad.stages`).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import NoReturn

from .errors import TransformError
from .html import function_page
from .stages import STAGES, stage
from .targets import signature


def _load(spec: str) -> object:
    if ":" not in spec:
        raise ValueError(f"expected FILE.py:FUNC, got {spec!r}")
    path, _, name = spec.rpartition(":")
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"no such file: {path}")
    # Registered under its name while it runs (dataclasses and pickling look the module
    # up there); a name an imported module already holds gets a private one instead.
    module_name = file.stem if file.stem not in sys.modules else f"_s2s_ad_cli_{file.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, file)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(file.parent.resolve()))
    sys.modules[module_name] = module
    module_spec.loader.exec_module(module)
    func = module
    for part in name.split("."):
        if not hasattr(func, part):
            raise ValueError(f"{path} has no function {name!r}")
        func = getattr(func, part)
    return func


class _Parser(argparse.ArgumentParser):
    """Reports a bad command line in one line (exit status 2), as other bad input."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = _Parser(
        prog="python -m s2s_ad", description="Print the generated derivative source of a function."
    )
    parser.add_argument("target", help="FILE.py:FUNC")
    parser.add_argument("--wrt", default=None, help="comma-separated parameter names or positions")
    parser.add_argument("--mode", choices=("reverse", "forward"), default="reverse")
    parser.add_argument("--html", default=None, metavar="OUT", help="write the HTML view to OUT")
    parser.add_argument(
        "--stage",
        choices=STAGES,
        default="optimized",
        help="print one stage: the normal form, its activity, the sweeps before the "
        "optimizer, or the optimized code (the default)",
    )
    args = parser.parse_args(argv)
    try:
        func = _load(args.target)

        params = list(signature(func).parameters)  # the differentiated function's own
        if args.wrt:
            wrt = []
            for item in args.wrt.split(","):
                item = item.strip()
                name = item
                if item.lstrip("-").isdigit():
                    if not -len(params) <= int(item) < len(params):
                        raise ValueError(f"--wrt {item} is out of range: {len(params)} parameters")
                    name = params[int(item)]
                if name not in params:
                    raise ValueError(f"{args.target} has no parameter {name!r}")
                wrt.append(name)
        else:
            wrt = params[:1]
        generated = stage(func, args.stage, tuple(wrt), args.mode)
        if args.html is None:
            print(generated, end="")
        else:
            Path(args.html).write_text(function_page(func, generated), encoding="utf-8")
        return 0
    except (TransformError, ValueError, TypeError, SyntaxError, ImportError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"error: {first}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
