"""A compare project's dashboard progress counts pairs and preferences, not solutions (its solutions
are never served alone). Hand-built, at NOW = 2026-01-10 12:30 UTC, overlap 2:

| pair | answers (preferences, 1 min of labeling each) | open |
|------|-----------------------------------------------|------|
| P1   | ann (-30 min), bob (-2 h)                     | no   |
| P2   | ann (-3 days)                                 | yes  |
| P3   | -                                             | yes  |
| G1   | gold pair: bob (-1 h)                         | -    |

Queue pace: 3 preferences in 3 minutes of labeling, 60 per hour; P2 needs 1 more, P3 2: 3 to go, 3 minutes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from annotate.models import Comparison, Preference, Role
from annotate.selectors.stats import project_stats
from tests.api_clients import member_client
from tests.factories import SolutionFactory, make_project, member

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 1, 10, 12, 30, tzinfo=UTC)


def _pair(project, *, count=0, is_open=True, is_gold=False) -> Comparison:
    a = SolutionFactory(project=project)
    b = SolutionFactory(project=project, problem=a.problem)
    return Comparison.objects.create(
        project=project,
        problem=a.problem,
        solution_a=a,
        solution_b=b,
        annotation_count=count,
        is_open=is_open,
        is_gold=is_gold,
        gold_preference="A" if is_gold else "",
    )


def _prefer(pair: Comparison, user, *, at: datetime) -> Preference:
    return Preference.objects.create(
        project=pair.project,
        comparison=pair,
        annotator=user,
        labeler_uuid=str(user.pk),
        preferred="A",
        shown="A",
        is_gold=pair.is_gold,
        idempotency_key=f"k{pair.pk}-{user.pk}",
        submitted_at=at,
        total_time_ms=60_000,
    )


@pytest.fixture
def duel():
    project = make_project("duel", task_kind="compare", overlap=2)
    ann, bob = member(project, name="ann"), member(project, name="bob")
    p1, p2 = _pair(project, count=2, is_open=False), _pair(project, count=1)
    _pair(project)
    g1 = _pair(project, count=1, is_open=False, is_gold=True)
    _prefer(p1, ann, at=NOW - timedelta(minutes=30))
    _prefer(p1, bob, at=NOW - timedelta(hours=2))
    _prefer(p2, ann, at=NOW - timedelta(days=3))
    _prefer(g1, bob, at=NOW - timedelta(hours=1))
    return project


def test_compare_progress_counts_pairs_and_preferences(duel):
    progress = project_stats(project=duel, now=NOW)["progress"]
    assert progress["pairs"] == {
        "pairs_total": 3,  # the gold pair is not part of the queue
        "pairs_answered": 2,
        "pairs_open": 2,
        "pairs_complete": 1,
        "preferences": 4,  # the answer on the gold pair included
        "preferences_remaining": 3,  # overlap 2: P2 needs 1, P3 needs 2
        "pace": {"window_hours": 168, "active_hours": 0.05, "labels": 3, "labels_per_hour": 60.0, "min_labels": 3},
        "eta_hours": 0.05,
        "eta_at": (NOW + timedelta(minutes=3)).isoformat(),
    }
    # The solution figures are still there, for what they are (8 solutions, none labeled step by step).
    assert progress["solutions_total"] == 8 and progress["labels"] == 0


def test_compare_progress_with_nothing_answered_has_no_eta(duel):
    later = project_stats(project=duel, now=NOW + timedelta(days=30))["progress"]["pairs"]
    assert later["pace"]["labels"] == 0 and later["eta_hours"] is None and later["eta_at"] is None
    assert later["preferences_remaining"] == 3


def test_a_steps_project_has_no_pair_progress():
    assert "pairs" not in project_stats(project=make_project("steps"), now=NOW)["progress"]


def test_api_gives_the_pair_progress(duel):
    lead = member_client(duel, "lena", Role.LEAD)
    body = lead.get("/api/v1/projects/duel/stats/").json()
    pairs = body["progress"]["pairs"]
    assert (pairs["pairs_total"], pairs["pairs_answered"], pairs["pairs_open"]) == (3, 2, 2)
    assert (pairs["preferences"], pairs["preferences_remaining"]) == (4, 3)
