"""The statistics over HTTP (`GET /api/v1/projects/{slug}/stats/` and the annotators CSV): who may
see them, the numbers, the OpenAPI schema (the campaign of tests/annotate/stats_campaign.py).
"""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotate.models import Solution
from annotate.selectors.stats import quality as stats_quality
from tests.annotate.stats_campaign import api_client, new_label, new_user

pytestmark = pytest.mark.django_db


def test_api_gives_leads_the_numbers(campaign):
    response = api_client(campaign["lead"]).get("/api/v1/projects/algebra/stats/")
    assert response.status_code == 200
    body = response.json()
    assert body["project"]["slug"] == "algebra"
    assert body["progress"]["solutions_total"] == 4 and body["progress"]["labels"] == 5
    assert body["labels"]["ratings"] == {"positive": 9, "neutral": 1, "negative": 4, "unrated": 0}
    assert [r["annotator"] for r in body["quality"]["annotators"]] == ["ann", "bob", "cy"]
    assert len(body["model"]["learning_curve"]) == 2
    assert response["Cache-Control"] == "no-store"


def test_api_csv_of_annotators(campaign, monkeypatch):
    monkeypatch.setattr(stats_quality, "MIN_GOLD_FOR_FLAG", 1)  # one gold answer each here
    response = api_client(campaign["lead"]).get("/api/v1/projects/algebra/stats/annotators.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="algebra-annotators-' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["annotator"] for r in rows] == ["ann", "bob", "cy"]
    assert rows[1]["gold_accuracy"] == "0.5" and rows[1]["below_threshold"] == "True"
    assert rows[0]["labels"] == "3" and rows[0]["median_seconds_per_solution"] == "40.0"
    assert rows[0]["preferences"] == ""  # a step project: the column is for compare projects


def test_api_csv_writes_a_formula_like_name_as_text(campaign):
    # user names may start with @ + - (Django's validator); one set in the admin may start with =
    get_user_model().objects.filter(username="cy").update(username='=HYPERLINK("http://x.test","y")')
    get_user_model().objects.filter(username="bob").update(username="@SUM(A1)")
    response = api_client(campaign["lead"]).get("/api/v1/projects/algebra/stats/annotators.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    names = sorted(r["annotator"] for r in rows)
    assert names == ['\'=HYPERLINK("http://x.test","y")', "'@SUM(A1)", "ann"]
    assert all(not r["annotator"].startswith(("=", "@")) for r in rows)
    assert rows[0]["labels"] == "3"  # numbers stay numbers


@pytest.mark.parametrize("path", ["stats/", "stats/annotators.csv"])
@pytest.mark.parametrize("who", ["ann", "mel"])
def test_api_refuses_annotators_and_ml_engineers(campaign, who, path):
    response = api_client(campaign[who]).get(f"/api/v1/projects/algebra/{path}")
    assert response.status_code == 403
    assert "lead" in response.content.decode()


@pytest.mark.parametrize("path", ["stats/", "stats/annotators.csv"])
def test_api_needs_authentication(campaign, path):
    assert api_client().get(f"/api/v1/projects/algebra/{path}").status_code == 401


def test_api_hides_projects_from_outsiders_and_admits_superusers(campaign):
    outsider = new_user("olga", role=None)
    outsider.is_staff = True  # staff alone grants nothing in the API
    outsider.save()
    assert api_client(outsider).get("/api/v1/projects/algebra/stats/").status_code == 404
    root = get_user_model().objects.create_superuser("root", password="pw-steplabel-test")
    assert api_client(root).get("/api/v1/projects/algebra/stats/").status_code == 200


def test_api_stats_in_the_openapi_schema(campaign):
    response = api_client(campaign["lead"]).get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    operation = schema["paths"]["/api/v1/projects/{slug}/stats/"]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/ProjectStats")
    assert "/api/v1/projects/{slug}/stats/annotators.csv" in schema["paths"]


def test_api_numbers_use_the_current_time(campaign):
    """Through HTTP the clock is real: a label submitted a minute ago is in the latest hourly buckets."""
    solution = Solution.objects.get(project=campaign["project"], strategy="uncertainty")
    new_label(solution, campaign["bob"], [1, 1], at=timezone.now() - timedelta(minutes=1), ms=8_000)
    body = api_client(campaign["lead"]).get("/api/v1/projects/algebra/stats/").json()
    assert sum(body["throughput"]["hourly"]["labels"][-2:]) >= 1
    assert body["progress"]["pace"]["window_hours"] == 168 and body["progress"]["pace"]["active_hours"] > 0
