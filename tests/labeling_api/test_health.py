"""`GET /api/v1/health/` for a load balancer or an outside monitor: answered without a login
(`database`, `broker`, `degraded`; never `no-store` dropped), with the per-user `waiting` counts only
for a signed-in caller. Anonymous callers share one probe per web process for a few seconds, staged
here on a private Redis that the test stops (tests/redis_server.py), never the shared one."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from annotate.models import Export, Project, Role
from core.models import JobStatus
from labeling_api import views_health
from tests.api_clients import member_client
from tests.security.test_redis_outage import redis  # noqa: F401  (the private Redis fixture)

URL = "/api/v1/health/"


@pytest.mark.django_db
def test_an_anonymous_caller_gets_the_status_without_the_waiting_counts():
    """Was: 401 without a login, so a load balancer or an uptime monitor could not use it."""
    response = APIClient().get(URL)
    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert set(body) == {"database", "broker", "degraded"}  # waiting is per user: absent
    assert body == {"database": True, "broker": True, "degraded": False}


@pytest.mark.django_db
def test_a_signed_in_caller_gets_the_waiting_counts_of_their_own_projects():
    mine, other = Project.objects.create(slug="mine"), Project.objects.create(slug="theirs")
    lead = member_client(mine, "lead", Role.LEAD)
    annotator = member_client(mine, "ann", Role.ANNOTATOR)
    Export.objects.create(project=mine, status=JobStatus.CREATED)
    Export.objects.create(project=other, status=JobStatus.CREATED)
    Export.objects.create(project=mine, status=JobStatus.SUCCEEDED)
    response = lead.get(URL)
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    assert response.json() == {
        "database": True,
        "broker": True,
        "degraded": False,
        "waiting": {"exports": 1, "training_runs": 0},
    }
    # an annotator leads and engineers nothing: the key is there, the counts are 0
    assert annotator.get(URL).json()["waiting"] == {"exports": 0, "training_runs": 0}
    # a browser session counts as signed in too
    session = APIClient()
    session.force_login(lead.user)
    assert session.get(URL).json()["waiting"] == {"exports": 1, "training_runs": 0}


@pytest.mark.django_db
def test_a_wrong_token_is_still_refused():
    """Anonymous is allowed; a caller who sends a token that is not one is told so, not served as anonymous."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get(URL).status_code == 401


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_anonymous_callers_share_one_probe_for_a_few_seconds(redis):  # noqa: F811
    """Each probe opens a broker connection (1 s timeout): anonymous calls reuse the last one for
    PROBE_REUSE_SECONDS; a signed-in caller always probes afresh."""
    lead = member_client(Project.objects.create(slug="probe"), "lead", Role.LEAD)
    anonymous = APIClient()
    time.sleep(views_health.PROBE_REUSE_SECONDS)  # no probe of an earlier test is reused below
    assert anonymous.get(URL).json()["broker"] is True
    redis.stop()
    try:
        assert lead.get(URL).json()["broker"] is False  # fresh
        assert anonymous.get(URL).json() == {"database": True, "broker": True, "degraded": False}  # shared
        time.sleep(views_health.PROBE_REUSE_SECONDS)
        assert anonymous.get(URL).json() == {"database": True, "broker": False, "degraded": True}
    finally:
        redis.start()
    assert lead.get(URL).json()["degraded"] is False
    time.sleep(views_health.PROBE_REUSE_SECONDS)  # the next test's anonymous calls see the Redis that is back
    assert anonymous.get(URL).json()["degraded"] is False
