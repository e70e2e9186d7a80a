"""Fixtures of the annotate tests."""

from __future__ import annotations

import pytest

from tests.annotate.stats_campaign import build_campaign


@pytest.fixture
def campaign():
    """The dashboard statistics' hand-built project (tests/annotate/stats_campaign.py)."""
    return build_campaign()
