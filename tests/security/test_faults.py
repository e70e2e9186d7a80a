"""Faults with real processes: a PostgreSQL backend terminated mid-submit, a Celery worker killed
with SIGKILL mid-export, stale running jobs swept and retried.

Each ends with no lost and no duplicated annotation and every job in a final or retried state.
(The Redis outage is in test_redis_outage.py, on a private redis-server.)
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from annotate.models import Annotation, AssignmentStatus, Export
from annotate.services import exports
from annotate.tasks import run_export
from core import jobs
from core.models import JobStatus
from tests.celery_worker import (
    celery_worker,
    database_url,
    export_held_running,
    kill_worker,
    purge_broker,
    wait_for,
)
from tests.security.payloads import submit_payload
from tests.security.world import build_world

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_backend(admin: psycopg.Connection, *, exclude: set[int]) -> int | None:
    rows = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    ).fetchall()
    pids = [pid for (pid,) in rows if pid not in exclude]
    return pids[0] if pids else None


def test_backend_terminated_mid_submit_leaves_nothing_and_the_retry_completes():
    world = build_world()
    assignment = world.rows["annotate.assignment"]
    solution_id = assignment.solution_id
    client = world.api_client("annotator")
    url = f"/api/v1/assignments/{assignment.pk}/submit/?next=false"
    payload = submit_payload("fault-key-1")

    # Another connection holds the solution row: the submit blocks inside its transaction (it has
    # locked the assignment and is about to count the annotation on the solution).
    blocker = psycopg.connect(database_url())
    blocker.execute("SELECT id FROM annotate_solution WHERE id = %s FOR UPDATE", [solution_id])
    admin = psycopg.connect(database_url(), autocommit=True)
    outcome: dict[str, object] = {}

    def submit_in_thread() -> None:
        try:
            outcome["response"] = client.post(url, payload, format="json")
        except Exception as exc:  # the test client re-raises the server-side error
            outcome["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=submit_in_thread)
    thread.start()
    try:
        exclude = {blocker.info.backend_pid, admin.info.backend_pid}
        wait_for(lambda: _waiting_backend(admin, exclude=exclude) is not None, timeout=30, message="submit waiting")
        victim = _waiting_backend(admin, exclude=exclude)
        in_tx = admin.execute("SELECT xact_start IS NOT NULL FROM pg_stat_activity WHERE pid = %s", [victim]).fetchone()
        assert in_tx == (True,)
        assert admin.execute("SELECT pg_terminate_backend(%s)", [victim]).fetchone() == (True,)
        thread.join(timeout=30)
    finally:
        blocker.rollback()
        blocker.close()
        admin.close()
    assert not thread.is_alive()
    assert "error" in outcome or outcome["response"].status_code >= 500, outcome
    # Nothing of the submit survived: no annotation, the assignment still active, the count unchanged.
    assert not Annotation.objects.filter(assignment_id=assignment.pk).exists()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE
    assert assignment.solution.annotation_count == 0

    # The client retries with the same idempotency key: one annotation, and a repeat returns it.
    first = client.post(url, payload, format="json")
    assert first.status_code == 201, first.content
    again = client.post(url, payload, format="json")
    assert again.status_code == 200 and again.json()["annotation_id"] == first.json()["annotation_id"]
    assert Annotation.objects.filter(assignment_id=assignment.pk).count() == 1
    assignment.solution.refresh_from_db()
    assert assignment.solution.annotation_count == 1


def _export_files(export_id: int) -> list[Path]:
    return sorted(exports.export_dir().glob(f"export-{export_id}-*"))


def test_worker_killed_mid_export_leaves_no_file_marked_done_and_the_sweep_retries():
    world = build_world()
    project = world.project
    lead = world.api_client("lead")
    # The worker claims the job (running), waits inside the export, and is killed there.
    with export_held_running(world) as (export_id, worker):
        kill_worker(worker)

    export = Export.objects.get(pk=export_id)
    assert export.status == JobStatus.RUNNING and export.file_path == ""
    assert not [p for p in _export_files(export_id) if not p.name.endswith(".partial")]
    assert lead.get(f"/api/v1/exports/{export_id}/download/").status_code == 409

    # The sweep puts the stale running job back and sends it; a new worker finishes it.
    swept = jobs.requeue_stale(model=Export, task=run_export, created_after=timedelta(0), running_after=timedelta(0))
    assert swept >= 1
    with celery_worker():
        wait_for(
            lambda: Export.objects.get(pk=export_id).status in (JobStatus.SUCCEEDED, JobStatus.FAILED),
            timeout=90,
            message="export finished",
        )
    export.refresh_from_db()
    assert export.status == JobStatus.SUCCEEDED, export.error
    lines = Path(export.file_path).read_text().splitlines()
    assert len(lines) == export.record_count == Annotation.objects.filter(project=project).count()
    assert all(json.loads(line)["label"]["steps"] for line in lines)
    assert not [p for p in _export_files(export_id) if p.name.endswith(".partial")]
    download = lead.get(f"/api/v1/exports/{export_id}/download/")
    assert download.status_code == 200
    assert b"".join(download.streaming_content).decode().splitlines() == lines


def test_stale_running_and_never_sent_jobs_are_swept():
    world = build_world()
    purge_broker()
    stale = Export.objects.create(project=world.project, requested_by=world.users["lead"], status=JobStatus.RUNNING)
    lost = Export.objects.create(project=world.project, requested_by=world.users["lead"])
    fresh = Export.objects.create(project=world.project, requested_by=world.users["lead"], status=JobStatus.RUNNING)
    Export.objects.filter(pk__in=[stale.pk]).update(started_at="2000-01-01T00:00:00Z")
    Export.objects.filter(pk__in=[lost.pk]).update(created_at="2000-01-01T00:00:00Z")
    Export.objects.filter(pk=fresh.pk).update(started_at="2100-01-01T00:00:00Z")
    with celery_worker():
        jobs.requeue_stale(
            model=Export, task=run_export, created_after=timedelta(minutes=1), running_after=timedelta(hours=2)
        )
        wait_for(
            lambda: (
                set(Export.objects.filter(pk__in=[stale.pk, lost.pk]).values_list("status", flat=True))
                == {JobStatus.SUCCEEDED}
            ),
            timeout=90,
            message="swept jobs done",
        )
    # A job still inside its deadline is left to its worker.
    assert Export.objects.get(pk=fresh.pk).status == JobStatus.RUNNING


def test_an_export_whose_workers_keep_dying_is_failed_after_its_restarts():
    world = build_world()
    purge_broker()
    export = Export.objects.create(project=world.project, requested_by=world.users["lead"], status=JobStatus.RUNNING)
    left = exports.export_dir() / f"export-{export.pk}-{world.project.slug}-prm800k-abc.jsonl.partial"
    left.write_bytes(b'{"half": ')  # what a SIGKILLed run leaves
    long_ago = "2000-01-01T00:00:00Z"
    for restart in range(jobs.MAX_RESTARTS):
        Export.objects.filter(pk=export.pk).update(status=JobStatus.RUNNING, started_at=long_ago)
        exports.sweep_stale_exports()
        export.refresh_from_db()
        assert (export.status, export.restarts) == (JobStatus.CREATED, restart + 1)
    Export.objects.filter(pk=export.pk).update(status=JobStatus.RUNNING, started_at=long_ago)
    assert exports.sweep_stale_exports() == 1
    export.refresh_from_db()
    assert export.status == JobStatus.FAILED and export.finished_at is not None
    assert export.error.startswith("the job stopped: its worker was lost 3 times while running it")
    assert _export_files(export.pk) == []
    response = world.api_client("lead").get(f"/api/v1/exports/{export.pk}/")
    assert response.json()["status"] == "failed" and "worker was lost 3 times" in response.json()["error"]
    # A late message (the restarts sent some) finds a failed job: nothing to claim, nothing written.
    run_export(export.pk)
    export.refresh_from_db()
    assert export.status == JobStatus.FAILED and _export_files(export.pk) == []
    purge_broker()
