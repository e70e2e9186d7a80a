"""How the dashboard statistics are computed: a fixed number of queries, and the cached snapshot
plus the labels since it matching a fresh computation (the campaign of tests/annotate/stats_campaign.py).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import Solution
from annotate.selectors.stats import project_stats
from tests.annotate.stats_campaign import NOW, new_label, new_user

pytestmark = pytest.mark.django_db


def test_query_count_does_not_grow_with_labels_or_annotators(campaign):
    project = campaign["project"]
    with CaptureQueriesContext(connection) as before:
        project_stats(project=project, now=NOW)
    solution = Solution.objects.filter(project=project, strategy="uncertainty").get()
    for i in range(5):
        user = new_user(f"extra{i}", project)
        new_label(solution, user, [1, 0, -1, 1], at=NOW - timedelta(hours=i), ms=10_000)
    with CaptureQueriesContext(connection) as after:
        project_stats(project=project, now=NOW)
    assert len(after.captured_queries) == len(before.captured_queries) <= 16


def test_snapshot_plus_new_labels_matches_a_fresh_computation(campaign):
    """The API path caches label aggregates up to an id watermark and adds labels submitted since."""
    project = campaign["project"]
    before = project_stats(project=project)  # builds the snapshot
    solution = Solution.objects.get(project=project, strategy="uncertainty")
    now = timezone.now()
    new_label(solution, campaign["bob"], [1, 0, 1, -1], at=now - timedelta(minutes=5), ms=12_000, flagged={0})
    new_label(solution, campaign["cy"], [1, 1], at=now - timedelta(days=2), ms=9_000, finish="give_up")
    cached = project_stats(project=project)  # snapshot + the two new labels
    fresh = project_stats(project=project, now=timezone.now())
    assert cached["labels"] == fresh["labels"]
    assert cached["labels"]["steps"] == before["labels"]["steps"] + 6
    assert cached["labels"]["finish_reasons"]["give_up"] == 1
    assert cached["progress"]["labels"] == fresh["progress"]["labels"] == before["progress"]["labels"] + 2
    assert cached["progress"]["by_generation"] == fresh["progress"]["by_generation"]
    assert cached["progress"]["pace"] == fresh["progress"]["pace"]
    assert cached["throughput"]["hourly"]["labels"] == fresh["throughput"]["hourly"]["labels"]
    assert cached["throughput"]["daily"]["labels"] == fresh["throughput"]["daily"]["labels"]
    assert cached["throughput"]["daily"]["by_annotator"] == fresh["throughput"]["daily"]["by_annotator"]
    strip = lambda rows: [{k: v for k, v in r.items() if not k.startswith("median")} for r in rows]  # noqa: E731
    assert strip(cached["quality"]["annotators"]) == strip(fresh["quality"]["annotators"])
    assert {r["annotator"]: r["labels"] for r in cached["quality"]["annotators"]}["cy"] == 1
