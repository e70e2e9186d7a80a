"""Dashboard numbers of a project imported already labeled: nothing is queued, and every figure
says so (no "0 solutions open" beside steps still queued, no labels to go, an honest generation
breakdown), through the real import command and the stats API on PostgreSQL."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from annotate.models import Project, Role, Solution
from annotate.selectors.stats import project_stats
from annotate.selectors.stats.snapshot import build_snapshot
from annotate.services.audit import reopen_for_relabeling
from tests.e2e.helpers import make_user, store_label

FIXTURES = Path(__file__).parent / "fixtures"
LABELED = FIXTURES / "edge_cases.jsonl"  # 7 PRM800K records, all labeled, generations 3, 4, -1, None, 9, 5
UNLABELED = FIXTURES / "plain.jsonl"  # 3 solutions without labels

pytestmark = pytest.mark.django_db


def _import(path: Path, slug: str = "imported") -> Project:
    call_command("import_prm800k", str(path), project=slug, no_progress=True, stdout=io.StringIO())
    return Project.objects.get(slug=slug)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_project_imported_labeled_has_nothing_queued():
    project = _import(LABELED)
    records = _records(LABELED)
    p = project_stats(project=project)["progress"]
    n = Solution.objects.filter(project=project, is_gold=False, is_screening=False).count()
    assert n > 0
    assert p["solutions_total"] == p["solutions_labeled"] == p["solutions_complete"] == n
    assert p["solutions_open"] == 0 and p["labels_remaining"] == 0
    assert p["steps_open"] == 0  # not "N steps queued" beside "0 solutions open"
    assert p["steps_total"] == sum(s.n_steps for s in Solution.objects.filter(project=project, is_gold=False))
    assert p["labels"] == p["labels_imported"] > 0
    # Generations are the file's: every one is marked as all imported, and they add up to the headline.
    # (labels of quality-control questions count too, as in every label total; their solutions do not)
    gens = {g["generation"]: g for g in p["by_generation"]}
    assert set(gens) == {r["generation"] for r in records}
    assert all(g["imported_labels"] == g["labels"] for g in gens.values())
    assert sum(g["labeled"] for g in gens.values()) == p["solutions_labeled"]
    assert sum(g["labels"] for g in gens.values()) == p["labels"]
    assert sum(g["steps_labeled"] for g in gens.values()) == p["steps_labeled"]


def test_unlabeled_solutions_added_later_are_what_is_queued():
    _import(LABELED)
    project = _import(UNLABELED)
    p = project_stats(project=project)["progress"]
    new = Solution.objects.filter(project=project, annotation_count=0)
    assert p["solutions_open"] == new.count() == 3
    assert p["steps_open"] == sum(s.n_steps for s in new)
    assert p["labels_remaining"] == 3 and p["eta_hours"] is None  # nobody labeled here yet
    assert p["labels_imported"] == p["labels"]


def test_a_reopened_solution_needs_a_label():
    project = _import(LABELED)
    reopen_for_relabeling(solutions=Solution.objects.filter(project=project)[:1], user=None, reason="check")
    p = project_stats(project=project)["progress"]
    assert p["solutions_open"] == 1 and p["labels_remaining"] == 1  # not "1 open, 0 labels to go"


def test_api_carries_the_new_counts():
    project = _import(LABELED)
    lead = make_user("lena", project, Role.LEAD)
    client = APIClient()
    client.force_authenticate(lead)
    body = client.get(f"/api/v1/projects/{project.slug}/stats/").json()
    assert body["progress"]["steps_open"] == 0
    assert body["progress"]["labels_imported"] == body["progress"]["labels"] > 0
    assert all("imported_labels" in g for g in body["progress"]["by_generation"])


def test_the_headline_pace_is_the_teams_not_the_files():
    """A file's labels keep their own pace in the (imported) row (PRM800K's took minutes per
    solution; this fixture's 7 ms), but the headline medians are the team's: 1 s per 3-step solution."""
    project = _import(LABELED)
    imported = project_stats(project=project)["throughput"]
    assert imported["median_seconds_per_solution"] is None  # nobody here labeled yet
    ann = make_user("ann", project)
    steps = [
        {
            "completions": [{"text": "s", "rating": 1, "flagged": False}],
            "human_completion": None,
            "chosen_completion": 0,
        }
    ] * 3
    for solution in Solution.objects.filter(project=project, is_gold=False)[:2]:
        store_label(solution, ann, steps, labeler_uuid=str(ann.pk))
    build_snapshot(project=project)  # as the worker does (the first call's is at most 5 minutes old)
    stats = project_stats(project=project)
    assert stats["throughput"]["median_seconds_per_solution"] == 1.0
    assert stats["throughput"]["median_seconds_per_step"] == round(1 / 3, 3)
    rows = {row["annotator"]: row for row in stats["quality"]["annotators"]}
    assert rows["(imported)"]["median_seconds_per_solution"] == 0.007  # the file's own pace, in its own row
