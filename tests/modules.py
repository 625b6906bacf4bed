"""Test helper: write Python text as a fresh module on disk and import it."""

from __future__ import annotations

import importlib
import itertools
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

_serial = itertools.count()


def import_text(
    tmp_path: Path, monkeypatch: Any, text: str, prefix: str
) -> tuple[ModuleType, Path]:
    """Write ``text`` (dedented) as a new module ``<prefix>_<n>`` in ``tmp_path``, import it
    and return ``(module, path)``; ``monkeypatch`` undoes the import path and the module."""
    name = f"{prefix}_{next(_serial)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)
    return module, path
