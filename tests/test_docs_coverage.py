"""docs/coverage.md states the sweep's cases and refusals as tests/sweep has them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parent.parent / "docs"
sys.path.insert(0, str(DOCS))

import sweep_coverage  # noqa: E402
from sweep.status import REFUSED  # noqa: E402

pytest.importorskip("scipy")


def test_coverage_page_is_current():
    assert (DOCS / "coverage.md").read_text() == sweep_coverage.render(), (
        "run: python docs/generate.py"
    )


def test_every_refusal_names_a_case():
    from sweep import extra_funcs, jax_funcs, keyword_funcs, stats_funcs

    tables = (extra_funcs.T, jax_funcs.T, stats_funcs.T, keyword_funcs.T)
    names = {c.name for t in tables for c in t.cases}
    assert sorted(set(REFUSED) - names) == []
