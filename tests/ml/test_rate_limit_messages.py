"""A 429 of the model loop names its limit and setting: DRF's "Request was throttled. Expected
available in 2798 seconds." reached a lead who had pressed Retrain now a few times while runs were
joined (found walking the active-learning loop)."""

import uuid

import pytest
from django.conf import settings
from django.test import override_settings

from annotate.models import Project, Role
from tests.api_clients import member_client


def _settings(**rates) -> dict:
    return {
        # counters under a prefix of this test's own (no FLUSHDB: the broker shares the db)
        "CACHES": {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"t-{uuid.uuid4().hex}"}},
        "REST_FRAMEWORK": {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates},
        },
    }


@pytest.mark.django_db
def test_a_throttled_retrain_or_score_says_which_limit_and_how_to_raise_it():
    project = Project.objects.create(slug="limits")
    lead = member_client(project, "lead-limits", Role.LEAD)
    with override_settings(**_settings(retrain="2/hour", score="1/minute")):
        url = "/api/v1/projects/limits/training-runs/"
        for _ in range(2):
            assert lead.post(url, {"config": "bad"}, format="json").status_code == 400
        refused = lead.post(url, {}, format="json")
        assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
        detail = refused.json()["detail"]
        assert detail.startswith(
            "Request was throttled: at most 2 training-run requests (Retrain now included, and a request "
            "that joined a run) per user per hour (THROTTLE_RETRAIN)."
        )
        assert "Expected available in" in detail
        body = {"project": "limits", "problem": "x", "solutions": [["y"]]}
        assert lead.post("/api/v1/prm/score/", body, format="json").status_code == 409  # no model yet
        refused = lead.post("/api/v1/prm/score/", body, format="json")
        assert refused.status_code == 429
        assert refused.json()["detail"].startswith(
            "Request was throttled: at most 1 scoring requests per user per minute (THROTTLE_SCORE)."
        )
        assert lead.get(url).status_code == 200  # listing runs is not limited


@pytest.mark.django_db
def test_a_throttled_export_says_its_limit_on_the_stream_and_the_job_endpoint():
    """The export limit answered DRF's bare message too; the job list throttles POST only (a scope
    per method), which the message reads the same way."""
    project = Project.objects.create(slug="exp-limits")
    ml = member_client(project, "ml-limits", Role.ML_ENGINEER)
    with override_settings(**_settings(export="1/hour")):
        assert ml.get("/api/v1/projects/exp-limits/export/?format=prm800k").status_code == 200
        for refused in (
            ml.get("/api/v1/projects/exp-limits/export/?format=prm800k"),
            ml.post("/api/v1/projects/exp-limits/exports/", {"format": "prm800k"}, format="json"),
        ):
            assert refused.status_code == 429
            assert refused.json()["detail"].startswith(
                "Request was throttled: at most 1 export requests (streamed exports and export jobs together, "
                "refused ones too) per user per hour (THROTTLE_EXPORT)."
            )
        assert ml.get("/api/v1/projects/exp-limits/exports/").status_code == 200  # the job list is not limited
