"""The math workspace's bundle stays within its size budget; the code highlighter stays out of it.

Sizes, not times: the budget is what an annotator downloads on first load (gzip level 9, like a
server's static compression). The code/trace views are a chunk loaded only when such a task arrives.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

DIST = Path(__file__).resolve().parents[1] / "frontend" / "dist" / "steplabel"
# KaTeX and its fonts' CSS are most of it (issue 18: 133.5 KiB after kinds; 135.0 KiB after session 24's
# walkthrough notes: phase 1 explained, the Backspace note, ratings lost to an expired claim)
WORKSPACE_GZIP_BUDGET = 140 * 1024

pytestmark = pytest.mark.skipif(not (DIST / "workspace.js").exists(), reason="frontend not built (make setup)")


def test_math_workspace_bundle_is_within_budget():
    size = len(gzip.compress((DIST / "workspace.js").read_bytes(), 9))
    budget = WORKSPACE_GZIP_BUDGET // 1024
    assert size <= WORKSPACE_GZIP_BUDGET, f"workspace.js is {size / 1024:.1f} KiB gzip, over the {budget} KiB budget"


def test_code_highlighter_is_not_in_the_math_bundle():
    workspace = (DIST / "workspace.js").read_text(encoding="utf-8")
    assert "registerLanguage" not in workspace and "hljs-" not in workspace
    chunks = [p.read_text(encoding="utf-8") for p in (DIST / "chunks").glob("*.js")]
    assert any("registerLanguage" in chunk for chunk in chunks), "the highlighter chunk is missing"
