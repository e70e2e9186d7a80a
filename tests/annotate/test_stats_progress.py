"""Dashboard progress: solutions and labels so far, the pace and the ETA (the campaign of
tests/annotate/stats_campaign.py, and projects built here).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from annotate.models import Annotation, Project, Solution
from annotate.selectors.stats import common, project_stats
from ml.selectors import model_summary
from tests.annotate.stats_campaign import NOW, new_label, new_solution, new_user

pytestmark = pytest.mark.django_db
CAMPAIGN_PACE = pytest.approx(
    {"window_hours": 168, "active_hours": 130 / 3600, "labels": 3, "labels_per_hour": 3 / (130 / 3600), "min_labels": 3}
)


def test_progress_and_eta(campaign):
    p = project_stats(project=campaign["project"], now=NOW)["progress"]
    assert {k: p[k] for k in p if k not in ("by_generation", "pace", "eta_hours", "eta_at")} == {
        "solutions_total": 4,  # gold G1 is not part of the queue
        "solutions_labeled": 2,
        "solutions_open": 3,
        "solutions_complete": 1,
        "labels_remaining": 5,  # overlap 2: S2 needs 1, S3 and S4 need 2 each
        "steps_total": 14,
        "steps_open": 10,  # S2, S3, S4
        "steps_labeled": 14,  # 3 + 3 + 3 on S1/S2, 2 + 3 on G1 (gold reference not counted)
        "labels": 5,
        "labels_imported": 0,
    }
    # 3 queue labels in the last 7 days, timed 40 + 60 + 30 s: 130 s of labeling, 5 labels to go
    assert p["pace"] == CAMPAIGN_PACE
    assert p["eta_hours"] == pytest.approx(5 * 130 / 3 / 3600)
    assert p["eta_at"] == (NOW + timedelta(hours=p["eta_hours"])).isoformat()
    assert p["by_generation"] == [
        {
            "generation": None,
            "solutions": 0,
            "labeled": 0,
            "open": 0,
            "labels": 2,
            "imported_labels": 0,
            "steps_labeled": 5,
        },
        {
            "generation": 0,
            "solutions": 2,
            "labeled": 2,
            "open": 1,
            "labels": 3,
            "imported_labels": 0,
            "steps_labeled": 9,
        },
        {
            "generation": 1,
            "solutions": 2,
            "labeled": 0,
            "open": 2,
            "labels": 0,
            "imported_labels": 0,
            "steps_labeled": 0,
        },
    ]


def test_pace_is_none_without_recent_labels(campaign):
    later = NOW + timedelta(days=1)  # nothing new: the same 3 labels and 130 s within 7 days
    p = project_stats(project=campaign["project"], now=later)["progress"]
    assert p["pace"] == CAMPAIGN_PACE
    assert p["eta_hours"] == pytest.approx(5 * 130 / 3 / 3600)
    p = project_stats(project=campaign["project"], now=NOW + timedelta(days=30))["progress"]
    assert p["pace"]["labels"] == 0 and p["eta_hours"] is None and p["eta_at"] is None


def test_eta_after_six_labels_in_four_minutes_uses_the_time_spent_labeling():
    """A team that labeled 6 solutions in its first 4 minutes, 35 s each, labels at the pace of
    those 3.5 minutes: neither 6 per 24 hours (the wall clock) nor 6 per hour (the clock hour
    they fall in, which made the ETA of 8 more labels 1.3 h instead of about 5 min)."""
    project = Project.objects.create(slug="fresh", name="Fresh", overlap=1)
    ann = new_user("ann4", project)
    start = NOW.replace(minute=10)
    solutions = [new_solution(project, n_steps=3, count=0) for _ in range(14)]
    for i, solution in enumerate(solutions[:6]):
        new_label(solution, ann, [1, 1, 1], at=start + timedelta(seconds=40 * i), ms=35_000, finish="solution")
        Solution.objects.filter(pk=solution.pk).update(annotation_count=1, is_open=False)
    p = project_stats(project=project, now=start + timedelta(minutes=4))["progress"]
    assert p["labels_remaining"] == 8
    assert p["pace"] == pytest.approx(
        {
            "window_hours": 168,
            "active_hours": 210 / 3600,
            "labels": 6,
            "labels_per_hour": 6 / (210 / 3600),
            "min_labels": 3,
        }
    )
    assert p["eta_hours"] == pytest.approx(8 * 35 / 3600)


@pytest.mark.parametrize("postgres", [True, False], ids=["sql", "python"])
def test_labeling_time_merges_overlapping_spans_and_skips_breaks(db, monkeypatch, postgres):
    """Two annotators labeling at once count once, a break counts not at all, an untimed label is
    left out; the SQL (PostgreSQL) and Python (other databases) merges agree."""
    monkeypatch.setattr(common, "_is_postgres", lambda: postgres and connection.vendor == "postgresql")
    project = Project.objects.create(slug="pair", name="Pair", overlap=2)
    ann, bob = new_user("ann5", project), new_user("bob5", project)
    solution = new_solution(project, n_steps=1)
    new_label(solution, ann, [1], at=NOW, ms=60_000)  # 12:29:00-12:30:00
    new_label(solution, bob, [1], at=NOW + timedelta(seconds=30), ms=60_000)  # 12:29:30-12:30:30
    new_label(solution, bob, [1], at=NOW - timedelta(seconds=40), ms=10_000)  # inside ann's span
    new_label(solution, ann, [1], at=NOW + timedelta(hours=2), ms=20_000)  # after a break
    new_label(solution, ann, [1], at=NOW + timedelta(hours=3), ms=None)  # no time recorded
    n, seconds = common.labeling_time(Annotation.objects.filter(project=project))
    assert (n, seconds) == (4, pytest.approx(90 + 20))


def test_too_few_labels_give_no_eta():
    """Two labels of a few seconds would set the ETA of the whole queue: below min_labels the pace
    is shown, the ETA is not."""
    project = Project.objects.create(slug="thin", name="Thin", overlap=1)
    ann = new_user("ann6", project)
    for _ in range(3):
        new_solution(project, n_steps=2, count=0)
    for i, solution in enumerate(Solution.objects.filter(project=project)[:2]):
        new_label(solution, ann, [1, 1], at=NOW - timedelta(minutes=i), ms=3_000, finish="solution")
    p = project_stats(project=project, now=NOW)["progress"]
    assert p["pace"]["labels"] == 2 and p["pace"]["min_labels"] == 3
    assert p["eta_hours"] is None and p["eta_at"] is None


def test_empty_project(db):
    stats = project_stats(project=Project.objects.create(slug="empty"), now=NOW)
    assert stats["progress"]["solutions_total"] == 0 and stats["progress"]["eta_hours"] == 0.0
    assert stats["throughput"]["median_seconds_per_step"] is None
    assert stats["quality"]["annotators"] == [] and stats["quality"]["agreement"]["alpha"] is None
    model = model_summary(project=Project.objects.get(slug="empty"))
    assert model["active_run"] is None and model["learning_curve"] == []
