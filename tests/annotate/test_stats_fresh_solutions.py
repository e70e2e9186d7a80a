"""Right after a label, the dashboard's solution counts agree with it: a project of up to
FRESH_SOLUTIONS_MAX solutions takes them afresh on every call instead of from the cached snapshot
(which showed "0 / 3 labeled" beside "1 label" for up to 5 minutes). Real claim and submit
through the API, PostgreSQL and the Redis cache."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command

from annotate.models import Project, Role
from annotate.selectors.stats import project_stats
from annotate.selectors.stats import snapshot as stats_snapshot
from tests.api_clients import member_client

pytestmark = pytest.mark.django_db
UNLABELED = Path(__file__).parent / "fixtures" / "plain.jsonl"  # 3 solutions without labels


def _label_one(project: Project) -> None:
    client = member_client(project, "ann", Role.ANNOTATOR)
    task = client.get(f"/api/v1/projects/{project.slug}/tasks/next/").json()
    steps = [{"index": s["index"], "rating": 1, "flagged": False} for s in task["steps"]]
    body = {"idempotency_key": "k1", "finish_reason": "solution", "total_time_ms": 9000, "steps": steps}
    response = client.post(f"/api/v1/assignments/{task['assignment_id']}/submit/", body, format="json")
    assert response.status_code in (200, 201), response.content


def test_solution_counts_follow_a_new_label_without_waiting_for_the_snapshot():
    call_command("import_prm800k", str(UNLABELED), project="fresh", no_progress=True, stdout=io.StringIO())
    project = Project.objects.get(slug="fresh")
    cache.delete(stats_snapshot._snapshot_key(project))
    before = project_stats(project=project)  # builds and caches the snapshot
    assert before["progress"]["solutions_labeled"] == 0 and before["progress"]["labels"] == 0
    _label_one(project)
    after = project_stats(project=project)  # served from the same snapshot plus the new label
    assert after["snapshot_at"] == before["snapshot_at"]
    p = after["progress"]
    assert p["labels"] == 1 and p["solutions_labeled"] == 1 and p["solutions_open"] == 2
    assert p["labels_remaining"] == 2 and p["steps_open"] < before["progress"]["steps_open"]
    assert after["solutions_at"] == after["generated_at"]


def test_large_projects_keep_the_snapshots_solution_counts(monkeypatch):
    call_command("import_prm800k", str(UNLABELED), project="big", no_progress=True, stdout=io.StringIO())
    project = Project.objects.get(slug="big")
    cache.delete(stats_snapshot._snapshot_key(project))
    monkeypatch.setattr(stats_snapshot, "FRESH_SOLUTIONS_MAX", 2)  # 3 solutions: "large" here
    before = project_stats(project=project)
    _label_one(project)
    after = project_stats(project=project)
    assert after["progress"]["labels"] == 1  # labels are live
    assert after["progress"]["solutions_labeled"] == 0  # solution counts wait for the snapshot
    assert after["solutions_at"] == after["snapshot_at"] == before["snapshot_at"]
