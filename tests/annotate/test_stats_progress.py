"""Dashboard progress: solutions and labels so far, the pace and the ETA (the campaign of
tests/annotate/stats_campaign.py, and projects built here).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from annotate.models import Project, Solution
from annotate.selectors.stats import project_stats
from ml.selectors import model_summary
from tests.annotate.stats_campaign import NOW, new_label, new_solution, new_user

pytestmark = pytest.mark.django_db


def test_progress_and_eta(campaign):
    p = project_stats(project=campaign["project"], now=NOW)["progress"]
    assert {k: p[k] for k in p if k not in ("by_generation", "pace", "eta_at")} == {
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
        "eta_hours": 5.0,  # 3 queue labels in the last 7 days, in 3 active hours: 1 per hour, 5 to go
    }
    assert p["pace"] == {"window_hours": 168, "active_hours": 3, "labels": 3, "labels_per_hour": 1.0}
    assert p["eta_at"] == (NOW + timedelta(hours=5)).isoformat()
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


def test_pace_counts_active_hours_and_is_none_without_labels(campaign):
    later = NOW + timedelta(days=1)  # nothing new: the same 3 labels in 3 active hours within 7 days
    p = project_stats(project=campaign["project"], now=later)["progress"]
    assert p["pace"] == {"window_hours": 168, "active_hours": 3, "labels": 3, "labels_per_hour": 1.0}
    assert p["eta_hours"] == pytest.approx(5.0)
    p = project_stats(project=campaign["project"], now=NOW + timedelta(days=30))["progress"]
    assert p["pace"]["labels"] == 0 and p["eta_hours"] is None and p["eta_at"] is None


def test_eta_after_six_labels_in_four_minutes_uses_the_pace_of_those_minutes():
    """A team that labeled 6 solutions in its first 4 minutes labels ~6 per hour it works, not 6
    per 24 hours: the ETA divides by the hours with labeling activity, not by the wall clock."""
    project = Project.objects.create(slug="fresh", name="Fresh", overlap=1)
    ann = new_user("ann4", project)
    start = NOW.replace(minute=10)
    solutions = [new_solution(project, n_steps=3, count=0) for _ in range(14)]
    for i, solution in enumerate(solutions[:6]):
        new_label(solution, ann, [1, 1, 1], at=start + timedelta(seconds=40 * i), ms=35_000, finish="solution")
        Solution.objects.filter(pk=solution.pk).update(annotation_count=1, is_open=False)
    p = project_stats(project=project, now=start + timedelta(minutes=4))["progress"]
    assert p["labels_remaining"] == 8
    assert p["pace"] == {"window_hours": 168, "active_hours": 1, "labels": 6, "labels_per_hour": 6.0}
    assert p["eta_hours"] == pytest.approx(8 / 6)


def test_empty_project(db):
    stats = project_stats(project=Project.objects.create(slug="empty"), now=NOW)
    assert stats["progress"]["solutions_total"] == 0 and stats["progress"]["eta_hours"] == 0.0
    assert stats["throughput"]["median_seconds_per_step"] is None
    assert stats["quality"]["annotators"] == [] and stats["quality"]["agreement"]["alpha"] is None
    model = model_summary(project=Project.objects.get(slug="empty"))
    assert model["active_run"] is None and model["learning_curve"] == []
