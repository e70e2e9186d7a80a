"""Dashboard statistics on a hand-built project where every figure is known, and who may see them.

The project (overlap 2, screening threshold 0.8), at NOW = 2026-01-10 12:30 UTC:

| solution | gen | strategy         | steps | answer  | labels (annotator: main-line ratings)        | open |
|----------|-----|------------------|-------|---------|----------------------------------------------|------|
| S1       | 0   | random           | 4     | wrong   | ann [1,1,-1] (-30 min), bob [1,0,-1] (-2 h)  | no   |
| S2       | 0   | random           | 3     | right   | ann [1,1,1] (-3 days)                        | yes  |
| S3       | 1   | uncertainty      | 5     | wrong   | -                                            | yes  |
| S4       | 1   | convincing_wrong | 2     | unknown | -                                            | yes  |
| G1 gold  | -   | -                | 3     | -       | gold [1,1,-1]; QC: bob [1,-1] (-1 h), ann [1,1,-1] (-5 h) | - |
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import (
    Annotation,
    AnnotationSource,
    AnnotatorStatus,
    Membership,
    Problem,
    Project,
    Role,
    ScreeningStatus,
    Solution,
    Step,
)
from annotate.selectors.stats import project_stats
from ml.models import TrainingRun
from ml.selectors import model_summary
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 1, 10, 12, 30, tzinfo=UTC)
_seq = itertools.count()


def _hash(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _user(name: str, project: Project | None = None, role: str | None = Role.ANNOTATOR):
    user = get_user_model().objects.create_user(name, password="pw-steplabel-test")
    if project is not None and role:
        Membership.objects.create(project=project, user=user, role=role)
    return user


def _solution(project, *, n_steps, generation=None, strategy="", answer_correct=None, count=0, is_open=True, **kw):
    tag = next(_seq)
    problem = Problem.objects.create(
        project=project, text=f"Problem {tag}", content_hash=_hash("p", tag), text_hash=_hash("t", tag)
    )
    solution = Solution.objects.create(
        project=project,
        problem=problem,
        content_hash=_hash("s", tag),
        n_steps=n_steps,
        generation=generation,
        strategy=strategy,
        answer_correct=answer_correct,
        annotation_count=count,
        is_open=is_open,
        **kw,
    )
    Step.objects.bulk_create([Step(solution=solution, index=i, text=f"step {i}") for i in range(n_steps)])
    return solution


def _label(solution, user, ratings, *, at, ms, finish="found_error", flagged=(), **kw):
    steps = [
        {
            "completions": [{"text": f"step {i}", "rating": r, "flagged": i in flagged}],
            "human_completion": None,
            "chosen_completion": None if r == -1 else 0,
        }
        for i, r in enumerate(ratings)
    ]
    return Annotation.objects.create(
        project=solution.project,
        solution=solution,
        annotator=user,
        labeler_uuid=str(user.pk) if user else "gold",
        source=AnnotationSource.APP if user else AnnotationSource.IMPORT,
        submitted_at=at,
        generation=solution.generation,
        finish_reason=finish,
        total_time_ms=ms,
        label_steps=dumps_label_steps(steps),
        **label_counters(steps),
        **kw,
    )


@pytest.fixture
def campaign():
    project = Project.objects.create(slug="algebra", name="Algebra", overlap=2, screening_threshold=0.8)
    lead = _user("lena", project, Role.LEAD)
    ann = _user("ann", project)
    bob = _user("bob", project)
    cy = _user("cy", project)
    mel = _user("mel", project, Role.ML_ENGINEER)
    s1 = _solution(project, n_steps=4, generation=0, strategy="random", answer_correct=False, count=2, is_open=False)
    s2 = _solution(project, n_steps=3, generation=0, strategy="random", answer_correct=True, count=1)
    _solution(project, n_steps=5, generation=1, strategy="uncertainty", answer_correct=False)
    _solution(project, n_steps=2, generation=1, strategy="convincing_wrong")
    g1 = _solution(project, n_steps=3, count=3, is_gold=True, is_quality_control=True, is_open=False)
    _label(s1, ann, [1, 1, -1], at=NOW - timedelta(minutes=30), ms=40_000, flagged={1})
    _label(s1, bob, [1, 0, -1], at=NOW - timedelta(hours=2), ms=60_000)
    _label(s2, ann, [1, 1, 1], at=NOW - timedelta(days=3), ms=30_000, finish="solution")
    _label(g1, None, [1, 1, -1], at=NOW - timedelta(days=20), ms=None, is_gold=True, is_quality_control=True)
    _label(g1, bob, [1, -1], at=NOW - timedelta(hours=1), ms=20_000, is_quality_control=True)
    _label(g1, ann, [1, 1, -1], at=NOW - timedelta(hours=5), ms=50_000, is_quality_control=True)
    AnnotatorStatus.objects.create(
        project=project, user=ann, screening_status=ScreeningStatus.PASSED, screening_agreement=0.9
    )
    AnnotatorStatus.objects.create(
        project=project, user=cy, screening_status=ScreeningStatus.FAILED, screening_agreement=0.4
    )

    def run(label_count, status, heldout=None, **kw):
        metrics = {"train": {"accuracy": 0.99}, "heldout": heldout} if heldout else {}
        return TrainingRun.objects.create(
            project=project, label_count=label_count, status=status, metrics=metrics, **kw
        )

    runs = [
        run(100, "succeeded", {"auroc_negative": 0.6, "accuracy": 0.5, "first_error_f1": 0.3, "ece": 0.2}),
        run(
            300,
            "succeeded",
            {"auroc_negative": 0.7, "accuracy": 0.6, "first_error_f1": 0.4, "ece": 0.1},
            is_active=True,
        ),
        run(350, "failed", error="Traceback (most recent call last):\n  ...\nValueError: boom"),
        run(400, "running"),
    ]
    return {"project": project, "lead": lead, "ann": ann, "bob": bob, "cy": cy, "mel": mel, "runs": runs}


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
    ann = _user("ann4", project)
    start = NOW.replace(minute=10)
    solutions = [_solution(project, n_steps=3, count=0) for _ in range(14)]
    for i, solution in enumerate(solutions[:6]):
        _label(solution, ann, [1, 1, 1], at=start + timedelta(seconds=40 * i), ms=35_000, finish="solution")
        Solution.objects.filter(pk=solution.pk).update(annotation_count=1, is_open=False)
    p = project_stats(project=project, now=start + timedelta(minutes=4))["progress"]
    assert p["labels_remaining"] == 8
    assert p["pace"] == {"window_hours": 168, "active_hours": 1, "labels": 6, "labels_per_hour": 6.0}
    assert p["eta_hours"] == pytest.approx(8 / 6)


def test_throughput_series_and_medians(campaign):
    t = project_stats(project=campaign["project"], now=NOW)["throughput"]
    hourly = t["hourly"]
    assert len(hourly["buckets"]) == 48
    assert hourly["buckets"][0] == "2026-01-08T13:00:00+00:00"
    assert hourly["buckets"][-1] == "2026-01-10T12:00:00+00:00"
    expected = [0] * 48
    expected[47] = expected[46] = expected[45] = expected[42] = 1  # 12:00 ann, 11:30 bob, 10:30 bob, 07:30 ann
    assert hourly["labels"] == expected
    assert hourly["steps"][47] == 3 and hourly["steps"][46] == 2 and sum(hourly["steps"]) == 11
    assert [(a["annotator"], sum(a["labels"])) for a in hourly["by_annotator"]] == [("ann", 2), ("bob", 2)]
    assert hourly["by_annotator"][0]["labels"][42] == 1 and hourly["by_annotator"][1]["labels"][46] == 1
    daily = t["daily"]
    assert daily["buckets"][0] == "2025-12-12T00:00:00+00:00" and daily["buckets"][-1] == "2026-01-10T00:00:00+00:00"
    assert daily["labels"][-1] == 4 and daily["labels"][-4] == 1 and sum(daily["labels"]) == 5
    assert t["labels_last_24h"] == 4
    # per solution: 40, 60, 30, 20, 50 s; per step: 13.3, 20, 10, 10, 16.7 s
    assert t["median_seconds_per_solution"] == 40.0
    assert t["median_seconds_per_step"] == pytest.approx(13.333, abs=1e-3)


def test_label_distribution(campaign):
    labels = project_stats(project=campaign["project"], now=NOW)["labels"]
    assert labels == {
        "ratings": {"positive": 9, "neutral": 1, "negative": 4, "unrated": 0},
        "steps": 14,
        "flagged": 1,
        "flag_rate": 1 / 14,
        "alternatives": 0,
        "finish_reasons": {"solution": 1, "found_error": 4, "give_up": 0, "bad_problem": 0},
        "wrong_answer": {"labeled_solutions": 2, "wrong": 1, "correct": 1, "ungraded": 0, "share": 0.5},
    }


def test_quality_table_and_agreement(campaign):
    quality = project_stats(project=campaign["project"], now=NOW)["quality"]
    assert quality["threshold"] == 0.8
    rows = {r["annotator"]: r for r in quality["annotators"]}
    assert [r["annotator"] for r in quality["annotators"]] == ["ann", "bob", "cy"]
    ann, bob, cy = rows["ann"], rows["bob"], rows["cy"]
    assert (ann["labels"], ann["steps"], ann["positive_rate"], ann["negative_rate"]) == (3, 9, 7 / 9, 2 / 9)
    assert ann["flag_rate"] == 1 / 9
    assert ann["median_seconds_per_solution"] == 40.0
    assert ann["median_seconds_per_step"] == pytest.approx(13.333, abs=1e-3)
    assert (ann["gold_accuracy"], ann["gold_first_error_rate"], ann["gold_solutions"]) == (1.0, 1.0, 1)
    assert (ann["screening_status"], ann["screening_agreement"], ann["below_threshold"]) == ("passed", 0.9, False)
    assert ann["last_label_at"] == (NOW - timedelta(minutes=30)).isoformat()
    # bob answered the gold question [1,1,-1] with [1,-1]: 1 of 2 steps, first error at 1 not 2
    assert (bob["labels"], bob["steps"], bob["neutral_rate"]) == (2, 5, 1 / 5)
    assert (bob["gold_accuracy"], bob["gold_first_error_rate"], bob["below_threshold"]) == (0.5, 0.0, True)
    assert bob["median_seconds_per_solution"] == 40.0 and bob["median_seconds_per_step"] == 15.0
    assert bob["screening_status"] is None
    # cy failed screening and has no labels yet
    assert (cy["labels"], cy["gold_accuracy"], cy["screening_status"], cy["below_threshold"]) == (
        0,
        None,
        "failed",
        True,
    )
    # S1: [1,1,-1] vs [1,0,-1] (same first error); G1: [1,-1] vs [1,1,-1] (first errors differ)
    assert quality["agreement"] == {
        "overlap": 2,
        "solutions_compared": 2,
        "sample_limit": 500,
        "sampled": False,
        "alpha": pytest.approx(11 / 28),  # hand-computed, coincidence matrix n = (3, 1, 6)
        "pairs": 2,
        "first_error_agreement": 0.5,
    }


def test_model_learning_curve_and_queue(campaign):
    stats = project_stats(project=campaign["project"], now=NOW)
    model = model_summary(project=campaign["project"])  # merged into the API's answer by the view
    r1, r2, r3, r4 = (r.pk for r in campaign["runs"])
    assert [r["id"] for r in model["runs"]] == [r1, r2, r3, r4]
    assert model["active_run"]["id"] == r2 and model["active_run"]["is_active"] is True
    assert model["latest_run"]["id"] == r4 and model["latest_run"]["status"] == "running"
    assert model["in_progress"] is True
    assert model["runs"][2]["error"] == "ValueError: boom"
    assert model["curve_metrics"] == ["auroc_negative", "accuracy", "first_error_f1", "ece"]
    assert model["learning_curve"] == [
        {"run": r1, "label_count": 100, "auroc_negative": 0.6, "accuracy": 0.5, "first_error_f1": 0.3, "ece": 0.2},
        {"run": r2, "label_count": 300, "auroc_negative": 0.7, "accuracy": 0.6, "first_error_f1": 0.4, "ece": 0.1},
    ]
    savings = stats["queue"].pop("savings")
    assert stats["queue"] == {
        "selection_strategy": "answer_stratified",  # the default
        "open_by_strategy": [
            {"strategy": "convincing_wrong", "open": 1},
            {"strategy": "random", "open": 1},
            {"strategy": "uncertainty", "open": 1},
        ],
    }
    # no control labelings in this campaign: the savings estimate says so instead of guessing
    assert savings["status"] == "not_enough_data" and savings["n_control"] == 0 and savings["labels_saved"] is None


def test_learning_curve_shows_heldout_size_intervals_and_when_it_is_too_small(campaign):
    project = campaign["project"]
    tiny = {"accuracy": 1.0, "first_error_f1": 1.0, "n_steps": 6, "n_solutions": 2}
    tiny |= {"accuracy_ci": [0.61, 1.0], "first_error_f1_ci": [0.0, 1.0]}
    big = {"accuracy": 0.8, "first_error_f1": 0.6, "n_steps": 900, "n_solutions": 120}
    big |= {"accuracy_ci": [0.77, 0.83], "first_error_f1_ci": [0.52, 0.68]}
    runs = [
        TrainingRun.objects.create(project=project, label_count=n, status="succeeded", metrics={"heldout": m})
        for n, m in ((19, tiny), (5000, big))
    ]
    curve = model_summary(project=project)["learning_curve"]
    points = {p["run"]: p for p in curve}
    assert points[runs[0].pk] == {"run": runs[0].pk, "label_count": 19, **tiny, "too_small": True}
    assert points[runs[1].pk] == {"run": runs[1].pk, "label_count": 5000, **big, "too_small": False}
    # Runs trained before the size was stored show no verdict rather than a wrong one.
    assert "too_small" not in points[campaign["runs"][0].pk]


def test_query_count_does_not_grow_with_labels_or_annotators(campaign):
    project = campaign["project"]
    with CaptureQueriesContext(connection) as before:
        project_stats(project=project, now=NOW)
    solution = Solution.objects.filter(project=project, strategy="uncertainty").get()
    for i in range(5):
        user = _user(f"extra{i}", project)
        _label(solution, user, [1, 0, -1, 1], at=NOW - timedelta(hours=i), ms=10_000)
    with CaptureQueriesContext(connection) as after:
        project_stats(project=project, now=NOW)
    assert len(after.captured_queries) == len(before.captured_queries) <= 16


def test_empty_project(db):
    stats = project_stats(project=Project.objects.create(slug="empty"), now=NOW)
    assert stats["progress"]["solutions_total"] == 0 and stats["progress"]["eta_hours"] == 0.0
    assert stats["throughput"]["median_seconds_per_step"] is None
    assert stats["quality"]["annotators"] == [] and stats["quality"]["agreement"]["alpha"] is None
    model = model_summary(project=Project.objects.get(slug="empty"))
    assert model["active_run"] is None and model["learning_curve"] == []


# --- HTTP API ------------------------------------------------------------------------------------


def _api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_api_gives_leads_the_numbers(campaign):
    response = _api(campaign["lead"]).get("/api/v1/projects/algebra/stats/")
    assert response.status_code == 200
    body = response.json()
    assert body["project"]["slug"] == "algebra"
    assert body["progress"]["solutions_total"] == 4 and body["progress"]["labels"] == 5
    assert body["labels"]["ratings"] == {"positive": 9, "neutral": 1, "negative": 4, "unrated": 0}
    assert [r["annotator"] for r in body["quality"]["annotators"]] == ["ann", "bob", "cy"]
    assert len(body["model"]["learning_curve"]) == 2
    assert response["Cache-Control"] == "no-store"


def test_api_csv_of_annotators(campaign):
    response = _api(campaign["lead"]).get("/api/v1/projects/algebra/stats/annotators.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="algebra-annotators-' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["annotator"] for r in rows] == ["ann", "bob", "cy"]
    assert rows[1]["gold_accuracy"] == "0.5" and rows[1]["below_threshold"] == "True"
    assert rows[0]["labels"] == "3" and rows[0]["median_seconds_per_solution"] == "40.0"


@pytest.mark.parametrize("path", ["stats/", "stats/annotators.csv"])
@pytest.mark.parametrize("who", ["ann", "mel"])
def test_api_refuses_annotators_and_ml_engineers(campaign, who, path):
    response = _api(campaign[who]).get(f"/api/v1/projects/algebra/{path}")
    assert response.status_code == 403
    assert "lead" in response.content.decode()


@pytest.mark.parametrize("path", ["stats/", "stats/annotators.csv"])
def test_api_needs_authentication(campaign, path):
    assert _api().get(f"/api/v1/projects/algebra/{path}").status_code == 401


def test_api_hides_projects_from_outsiders_and_admits_superusers(campaign):
    outsider = _user("olga", role=None)
    outsider.is_staff = True  # staff alone grants nothing in the API
    outsider.save()
    assert _api(outsider).get("/api/v1/projects/algebra/stats/").status_code == 404
    root = get_user_model().objects.create_superuser("root", password="pw-steplabel-test")
    assert _api(root).get("/api/v1/projects/algebra/stats/").status_code == 200


def test_api_stats_in_the_openapi_schema(campaign):
    response = _api(campaign["lead"]).get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    operation = schema["paths"]["/api/v1/projects/{slug}/stats/"]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/ProjectStats")
    assert "/api/v1/projects/{slug}/stats/annotators.csv" in schema["paths"]


# --- the page ------------------------------------------------------------------------------------


def test_page_for_leads_carries_config_and_no_inline_script(client, campaign):
    client.force_login(campaign["lead"])
    response = client.get("/dashboard/algebra/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'src="/static/steplabel/dashboard.js"' in html
    assert 'href="/static/steplabel/dashboard.css"' in html
    scripts = [chunk.split(">", 1)[0] for chunk in html.split("<script")[1:]]
    assert scripts and all('type="application/json"' in s or 'type="module"' in s for s in scripts), scripts
    assert '<script id="dashboard-config" type="application/json">' in html
    assert "/api/v1/projects/algebra/stats/" in html and "/api/v1/projects/algebra/stats/annotators.csv" in html
    for section in ("progress", "throughput", "labels", "quality", "model", "queue", "actions"):
        assert f'<section id="{section}"' in html


@pytest.mark.parametrize("who", ["ann", "mel"])
def test_page_refuses_annotators_and_ml_engineers(client, campaign, who):
    client.force_login(campaign[who])
    assert client.get("/dashboard/algebra/").status_code == 403


def test_page_needs_login_and_admits_superusers(client, campaign):
    response = client.get("/dashboard/algebra/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-steplabel-test"))
    assert client.get("/dashboard/algebra/").status_code == 200
    assert client.get("/dashboard/nope/").status_code == 404


def test_home_links_leads_to_the_dashboard(client, campaign):
    client.force_login(campaign["lead"])
    assert 'href="/dashboard/algebra/"' in client.get("/").content.decode()
    client.force_login(campaign["ann"])
    assert 'href="/dashboard/algebra/"' not in client.get("/").content.decode()


def test_api_numbers_use_the_current_time(campaign):
    """Through HTTP the clock is real: a label submitted a minute ago is in the latest hourly buckets."""
    solution = Solution.objects.get(project=campaign["project"], strategy="uncertainty")
    _label(solution, campaign["bob"], [1, 1], at=timezone.now() - timedelta(minutes=1), ms=8_000)
    body = _api(campaign["lead"]).get("/api/v1/projects/algebra/stats/").json()
    assert sum(body["throughput"]["hourly"]["labels"][-2:]) >= 1
    assert body["progress"]["pace"]["window_hours"] == 168 and body["progress"]["pace"]["active_hours"] >= 1


def test_snapshot_plus_new_labels_matches_a_fresh_computation(campaign):
    """The API path caches label aggregates up to an id watermark and adds labels submitted since."""
    project = campaign["project"]
    before = project_stats(project=project)  # builds the snapshot
    solution = Solution.objects.get(project=project, strategy="uncertainty")
    now = timezone.now()
    _label(solution, campaign["bob"], [1, 0, 1, -1], at=now - timedelta(minutes=5), ms=12_000, flagged={0})
    _label(solution, campaign["cy"], [1, 1], at=now - timedelta(days=2), ms=9_000, finish="give_up")
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
