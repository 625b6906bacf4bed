"""docs/functions.md lists every library function with a rule, as the registry has them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parent.parent / "docs"
sys.path.insert(0, str(DOCS))

import generate  # noqa: E402

from s2s_ad.rules import REGISTRY  # noqa: E402
from s2s_ad.rules.notes import NOTES  # noqa: E402

pytest.importorskip("scipy")


def test_functions_page_is_current():
    assert (DOCS / "functions.md").read_text() == generate.render_functions(), (
        "run: python docs/generate.py"
    )


def test_every_note_names_a_rule():
    REGISTRY.load_optional()
    names = {rule.name for rule in REGISTRY.rules}
    assert not [key for key in NOTES if key not in names]


def test_every_user_facing_rule_is_listed():
    page = (DOCS / "functions.md").read_text()
    REGISTRY.load_optional()
    for rule in REGISTRY.rules:
        if generate._internal(rule):
            continue
        if rule.vjps and not rule.nondiff:
            assert f"| `{generate._signature(rule)}` |" in page, rule.name


def test_page_names_the_differentiable_arguments():
    page = (DOCS / "functions.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `scipy.stats.t.cdf("))
    assert "| `x`, `df`, `loc`, `scale` |" in row and "second derivative in them is refused" in row
    row = next(line for line in page.splitlines() if line.startswith("| `np.linalg.eigh("))
    assert "`a` (symmetric)" in row and "infinite where two coincide" in row
