"""Imports over HTTP: the upload becomes a job a worker runs; refusals, visibility, the sweep, 413."""

import gzip
import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from annotate.models import Annotation, ImportJob, Solution
from tests.labeling_api.exports.helpers import FIXTURES

# --- import over HTTP -------------------------------------------------------------------------------


def _imported(client, name: str, content: bytes | None = None) -> dict:
    """Upload a file, run the import job as the worker would (here, inline), return the job as polled."""
    from annotate.services.imports import jobs as import_jobs

    content = (FIXTURES / name).read_bytes() if content is None else content
    started = client.post("/api/v1/projects/exp/imports/", {"file": io.BytesIO(content)}, format="multipart")
    assert started.status_code == 202 and started.data["status"] == "created", started.data
    # absolute, like an export's download_url
    assert started.data["url"] == f"http://testserver/api/v1/projects/exp/imports/{started.data['id']}/"
    path = Path(ImportJob.objects.get(pk=started.data["id"]).file_path)
    assert path.exists()
    import_jobs.run_import_job(import_id=started.data["id"])
    polled = client.get(started.data["url"])
    assert polled.status_code == 200
    assert not path.exists()  # the stored upload is deleted when the job ends
    return polled.data


@pytest.mark.django_db
def test_import_api_refuses_bad_file_and_changes_nothing(clients, project):
    before = Annotation.objects.count(), Solution.objects.count()
    job = _imported(clients["lead"], "malformed.jsonl")
    assert job["status"] == "failed" and job["counters"] == {"bad_lines": 5}
    assert [e["line"] for e in job["errors"]] == [2, 3, 5, 6, 7]
    assert job["errors"][1]["field"] == "question.problem"
    assert (Annotation.objects.count(), Solution.objects.count()) == before
    ok = _imported(clients["lead"], "plain.jsonl")
    assert ok["status"] == "succeeded" and ok["counters"]["solutions_created"] == 3 and ok["progress"] == 1.0
    again = _imported(clients["lead"], "plain.jsonl", gzip.compress((FIXTURES / "plain.jsonl").read_bytes()))
    assert again["status"] == "succeeded" and again["counters"]["solutions_created"] == 0  # gzip, same records
    assert again["counters"]["duplicates"] == 3


@pytest.mark.django_db
def test_import_job_is_seen_only_by_those_who_may_import(clients, project):
    upload = {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())}
    job = clients["lead"].post("/api/v1/projects/exp/imports/", upload, format="multipart").data
    assert clients["lead"].get(job["url"]).status_code == 200
    # and listed, newest first, to those who may import, as each job reads when polled
    upload = {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())}
    later = clients["lead"].post("/api/v1/projects/exp/imports/", upload, format="multipart").data
    listed = clients["lead"].get("/api/v1/projects/exp/imports/")
    assert listed.status_code == 200 and [j["id"] for j in listed.data] == [later["id"], job["id"]]
    assert listed.data[1] == clients["lead"].get(job["url"]).data
    for who, refused in (("annotator", 403), ("ml", 403), ("outsider", 404), ("none", 401)):
        assert clients[who].get("/api/v1/projects/exp/imports/").status_code == refused, who
    assert clients["annotator"].get(job["url"]).status_code == 403
    assert clients["ml"].get(job["url"]).status_code == 403
    assert clients["outsider"].get(job["url"]).status_code == 404
    assert clients["none"].get(job["url"]).status_code == 401


@pytest.mark.django_db
def test_lost_or_orphaned_import_job_runs_again_after_the_sweep(clients, project):
    from annotate.services.imports import jobs as import_jobs

    before = Solution.objects.filter(project=project).count()
    upload = {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())}
    job = clients["lead"].post("/api/v1/projects/exp/imports/", upload, format="multipart").data
    ImportJob.objects.filter(pk=job["id"]).update(created_at=timezone.now() - timedelta(minutes=5))
    assert import_jobs.sweep_stale_imports() == 1  # still `created`: its message is sent again
    stale = timezone.now() - timedelta(hours=7)
    ImportJob.objects.filter(pk=job["id"]).update(status="running", started_at=stale)
    import_jobs.sweep_stale_imports()
    assert ImportJob.objects.get(pk=job["id"]).status == "created"  # the dead worker's import runs again
    import_jobs.run_import_job(import_id=job["id"])
    import_jobs.run_import_job(import_id=job["id"])  # a duplicate message finds nothing to claim
    assert ImportJob.objects.get(pk=job["id"]).status == "succeeded"
    assert Solution.objects.filter(project=project).count() == before + 3


@pytest.mark.django_db
def test_an_import_that_keeps_losing_its_worker_is_failed_not_retried_for_ever(clients, project):
    from annotate.services.imports import jobs as import_jobs
    from core import jobs

    before = Solution.objects.filter(project=project).count()
    upload = {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())}
    job = clients["lead"].post("/api/v1/projects/exp/imports/", upload, format="multipart").data
    path = Path(ImportJob.objects.get(pk=job["id"]).file_path)
    for restart in range(jobs.MAX_RESTARTS + 1):
        # a worker claims it and dies (out of memory, say); the sweep finds it past its deadline
        assert jobs.claim(ImportJob, job["id"], started_at=timezone.now() - timedelta(hours=7))
        import_jobs.sweep_stale_imports()
        row = ImportJob.objects.get(pk=job["id"])
        if restart < jobs.MAX_RESTARTS:
            assert (row.status, row.restarts) == ("created", restart + 1)
            assert path.exists()
    polled = clients["lead"].get(job["url"]).data
    assert polled["status"] == "failed" and polled["finished_at"]
    assert polled["errors"] == [
        {
            "line": 0,
            "field": "(file)",
            "message": "the job stopped: its worker was lost 3 times while running it (killed, or out of memory?), "
            "so it is not tried again; a smaller file or a worker with more memory may do",
        }
    ]
    assert not path.exists()  # the upload is not kept for a job that will not run again
    import_jobs.sweep_stale_imports()
    import_jobs.run_import_job(import_id=job["id"])  # a late message finds nothing to claim
    assert ImportJob.objects.get(pk=job["id"]).status == "failed"
    assert Solution.objects.filter(project=project).count() == before


@pytest.mark.django_db
def test_import_api_too_large_is_413(clients):
    with override_settings(IMPORT_MAX_BYTES=100):
        response = clients["lead"].post(
            "/api/v1/projects/exp/imports/",
            {"file": io.BytesIO((FIXTURES / "plain.jsonl").read_bytes())},
            format="multipart",
        )
    assert response.status_code == 413 and "limit" in response.json()["detail"]
