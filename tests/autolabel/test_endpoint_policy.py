"""Which model servers an autolabel job may call (autolabel.endpoint_policy): the worker must not be
a way into the deployment's network. PostgreSQL, the API, and the job run by the service the Celery
task calls, against stand-in servers on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from annotate.models import Role
from autolabel import services
from autolabel.models import AutolabelJob
from core.models import JobStatus
from tests.api_clients import member_client
from tests.autolabel.stand_in_server import stand_in_server
from tests.autolabel.test_autolabel_flow import _behaviour, _project

pytestmark = pytest.mark.django_db(transaction=True)

INSIDE = [
    "http://127.0.0.1:9/v1",  # loopback
    "http://localhost:9/v1",
    "http://[::1]:9/v1",
    "http://169.254.169.254/latest/meta-data",  # a cloud metadata service (link-local)
    "http://10.1.2.3:8000/v1",  # private
    "http://192.168.0.7/v1",
]


def _create(client, base_url: str):
    body = {"base_url": base_url, "model": "stand-in", "rollouts": 2}
    return client.post("/api/v1/projects/auto/autolabel-jobs/", body, format="json")


@override_settings(AUTOLABEL_ALLOWED_HOSTS=[])
def test_addresses_inside_the_network_are_refused_unless_listed(tmp_path: Path) -> None:
    project = _project(tmp_path)
    lead = member_client(project, "auto-lead", Role.LEAD)
    for url in INSIDE:
        response = _create(lead, url)
        assert response.status_code == 400, (url, response.content)
        message = response.json()["base_url"][0]
        assert "AUTOLABEL_ALLOWED_HOSTS" in message, message
    unresolvable = _create(lead, "http://no-such-host.invalid/v1")
    assert unresolvable.status_code == 400 and "does not resolve" in unresolvable.json()["base_url"][0]
    assert AutolabelJob.objects.count() == 0  # nothing was queued
    # the deployment lists its model server (exactly, or by pattern) and then it may be called
    with override_settings(AUTOLABEL_ALLOWED_HOSTS=["10.1.2.3"]):
        assert _create(lead, "http://10.1.2.3:8000/v1").status_code == 202
    with override_settings(AUTOLABEL_ALLOWED_HOSTS=["*.internal"]):
        assert _create(lead, "http://vllm.internal/v1").status_code == 202
        assert _create(lead, "http://127.0.0.1:9/v1").status_code == 400


def test_the_worker_checks_again_and_follows_no_redirect_nor_echoes_a_body(tmp_path: Path) -> None:
    _project(tmp_path)
    inner = _behaviour()
    with stand_in_server(inner) as inner_url:
        job = services.create_job(project=_project_slug(), user=None, options={"base_url": inner_url, "model": "x"})
        with override_settings(AUTOLABEL_ALLOWED_HOSTS=[]):  # the setting changed after the job was queued
            failed = services.run_job(job_id=job.pk)
        assert failed.status == JobStatus.FAILED and "AUTOLABEL_ALLOWED_HOSTS" in failed.error
        assert inner.requests == []  # refused before any request

        # a listed server that redirects elsewhere is not followed
        bouncer = _behaviour(canned=(307, {"Location": f"{inner_url}/completions"}, b""))
        with stand_in_server(bouncer) as bouncer_url:
            job = services.create_job(
                project=_project_slug(), user=None, options={"base_url": bouncer_url, "model": "stand-in"}
            )
            failed = services.run_job(job_id=job.pk)
        assert failed.status == JobStatus.FAILED and "HTTP 307" in failed.error, failed.error
        assert bouncer.requests and inner.requests == []  # each request stopped at the bounce

    # an error page is not copied into the job's error (the project's members read it); an
    # OpenAI-style error message is, cut short
    for body, shown in ((b"<html>SECRET-INTERNAL-PAGE</html>", ""), (b'{"error": {"message": "bad model"}}', "bad")):
        page = _behaviour(canned=(400, {"Content-Type": "text/html"}, body))
        with stand_in_server(page) as page_url:
            job = services.create_job(
                project=_project_slug(), user=None, options={"base_url": page_url, "model": "stand-in"}
            )
            failed = services.run_job(job_id=job.pk)
        assert failed.status == JobStatus.FAILED and "HTTP 400" in failed.error
        assert "SECRET-INTERNAL-PAGE" not in failed.error
        assert shown in failed.error


def _project_slug():
    from annotate.models import Project

    return Project.objects.get(slug="auto")
