"""Which model servers an autolabel job may call (autolabel.endpoint_policy): the worker must not be
a way into the deployment's network. PostgreSQL, the API, and the job run by the service the Celery
task calls, against stand-in servers on loopback."""

from __future__ import annotations

import json
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
    AutolabelJob.objects.update(status=JobStatus.FAILED)  # one job at a time: that one ends
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


def test_an_answer_in_another_shape_fails_the_job_at_once_saying_what_was_off(tmp_path: Path) -> None:
    """JSON that is not a completions answer failed the job with a bare AttributeError or
    TypeError, naming neither the server nor the answer; asking again gets the same, so no retries."""
    from autolabel.models import AutoStepLabel

    _project(tmp_path)
    for body, said in (
        (b"[1, 2, 3]", "expected an object with a list of choices, got list [1, 2, 3]"),
        (b'{"choices": ["a", "b"]}', 'choices[0] is str "a", not an object'),
        (b'{"choices": [{"text": 42}]}', "choices[0].text is int 42, not text"),
    ):
        server = _behaviour(canned=(200, {"Content-Type": "application/json"}, body))
        with stand_in_server(server) as url:
            job = services.create_job(project=_project_slug(), user=None, options={"base_url": url, "model": "x"})
            failed = services.run_job(job_id=job.pk)
        assert failed.status == JobStatus.FAILED
        assert failed.error.startswith(f"{url}/completions: not a completions answer ({said}")
        assert failed.retries == 0 and not AutoStepLabel.objects.filter(inferred=False).exists()


def test_a_server_whose_completions_never_end_in_an_answer_fails_the_job_and_stores_no_rollout(tmp_path: Path) -> None:
    """A chat model on /completions, or a max_tokens too small, answered "I am not sure." to every
    prompt: the job "succeeded" with `-` on every step, and those labels went into exports and
    warm starts. Until one completion carries an answer, none is stored; after 8 without, it fails."""
    from autolabel.models import AutolabelSettings, AutoStepLabel

    _project(tmp_path)
    body = json.dumps({"choices": [{"text": "I am not sure."}, {"text": "Let me think."}]}).encode()
    server = _behaviour(canned=(200, {"Content-Type": "application/json"}, body))
    with stand_in_server(server) as url:
        job = services.create_job(
            project=_project_slug(), user=None, options={"base_url": url, "model": "x", "rollouts": 2, "concurrency": 1}
        )
        failed = services.run_job(job_id=job.pk)
    assert failed.status == JobStatus.FAILED
    assert "none of the first 8 completions ends in a final answer" in failed.error
    assert "'I am not sure.'" in failed.error and "No rollout label was stored" in failed.error
    assert len(server.requests) == 4  # 2 completions each
    assert not AutoStepLabel.objects.filter(inferred=False).exists()
    assert AutolabelSettings.objects.get(project=_project_slug()).completions_used == 0  # refunded


def test_a_name_that_resolves_inward_after_the_check_is_refused_at_the_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: a name that answered a public address when the job was created and when the
    worker started it, then 127.0.0.1, used to be connected to inside the network, since every
    request resolved the name again past the check. The connection now checks the address it
    connects to. The names are answered through the policy's resolver; the server and the worker's
    client are real."""
    from autolabel import endpoint_policy

    real_resolve = endpoint_policy._resolve
    _project(tmp_path)
    inner = _behaviour()
    with stand_in_server(inner) as inner_url:
        port = int(inner_url.rsplit(":", 1)[1].split("/", 1)[0])
        answers = {"rebind.example": ["93.184.216.34"] * 2, "model.example": []}

        def resolve(host, port_, *args, **kwargs):
            if host in answers:  # public while checked, then the loopback the stand-in listens on
                address = answers[host].pop(0) if answers[host] else "127.0.0.1"
                return real_resolve(address, port_, *args, **kwargs)
            return real_resolve(host, port_, *args, **kwargs)

        monkeypatch.setattr(endpoint_policy, "_resolve", resolve)
        with override_settings(AUTOLABEL_ALLOWED_HOSTS=[]):
            job = services.create_job(
                project=_project_slug(),
                user=None,
                options={"base_url": f"http://rebind.example:{port}/v1", "model": "x"},
            )
            failed = services.run_job(job_id=job.pk)
        assert failed.status == JobStatus.FAILED, failed.error
        assert "'rebind.example' is a loopback, private or link-local address (127.0.0.1)" in failed.error
        assert failed.retries == 0 and inner.requests == []  # no request reached the inside server

        # A listed name is connected to at the address the same resolver gave: the request arrives.
        with override_settings(AUTOLABEL_ALLOWED_HOSTS=["model.example"]):
            job = services.create_job(
                project=_project_slug(),
                user=None,
                options={"base_url": f"http://model.example:{port}/v1", "model": "stand-in", "rollouts": 2},
            )
            done = services.run_job(job_id=job.pk)
        assert done.status == JobStatus.SUCCEEDED, done.error
        assert inner.requests and all(request["model"] == "stand-in" for request in inner.requests)
