"""`manage.py sweep_jobs --lost`, with real Celery workers: after a crash the operator sends a
running job again at once instead of waiting for its deadline (hours for an import), and the
command refuses while a worker still holds a task, since that job would then run twice."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotate.models import Export
from core.models import JobStatus
from tests.celery_worker import celery_worker, export_held_running, kill_worker, purge_broker, wait_for
from tests.security.world import build_world

pytestmark = pytest.mark.django_db(transaction=True)


def _status(export_id: int) -> str:
    return Export.objects.get(pk=export_id).status


def test_a_job_whose_worker_died_runs_again_at_once_and_a_busy_worker_blocks_the_command():
    world = build_world()
    with export_held_running(world) as (export_id, worker):
        with pytest.raises(CommandError) as refused:
            call_command("sweep_jobs", "--lost", "--timeout", "5")
        assert "workers are running tasks" in str(refused.value)
        assert f"annotate.tasks.run_export({export_id})" in str(refused.value)
        assert _status(export_id) == JobStatus.RUNNING  # nothing was reset under the live worker
        kill_worker(worker)

    # No worker answers now: the job is taken as lost and sent again, long before its 2 h deadline.
    out = io.StringIO()
    call_command("sweep_jobs", "--lost", "--timeout", "1", stdout=out)
    assert "annotate.services.exports.jobs.sweep_stale_exports: 1 job(s) sent again or failed" in out.getvalue()
    export = Export.objects.get(pk=export_id)
    assert export.status == JobStatus.CREATED and export.restarts == 1
    with celery_worker():
        wait_for(lambda: _status(export_id) in (JobStatus.SUCCEEDED, JobStatus.FAILED), timeout=90, message="done")
    export.refresh_from_db()
    assert export.status == JobStatus.SUCCEEDED, export.error
    assert export.record_count > 0


def test_without_lost_the_sweep_keeps_the_deadlines():
    world = build_world()
    lead = world.api_client("lead")
    purge_broker()
    export_id = lead.post(
        f"/api/v1/projects/{world.project.slug}/exports/", {"format": "prm800k"}, format="json"
    ).json()["id"]
    Export.objects.filter(pk=export_id).update(status=JobStatus.RUNNING, started_at=timezone.now())  # just claimed
    out = io.StringIO()
    call_command("sweep_jobs", stdout=out)
    assert _status(export_id) == JobStatus.RUNNING
    assert "sweep_stale_exports: 0 job(s)" in out.getvalue()
