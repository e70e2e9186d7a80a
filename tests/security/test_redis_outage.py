"""Redis stopped and restarted for real: the web keeps serving claims and submits, export jobs and
training runs are accepted and wait (`created`), /api/v1/health/ reports the outage, and after the
restart the sweeps send the waiting jobs and a worker completes them.

The outage is staged on a private `redis-server` (tests/redis_server.py) on a free port that the
test starts, stops and restarts; the web under test, its cache and the worker all point at it, so
the Redis that other tests share is never touched and the file can run in any order.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import kombu.pools
import pytest
from redis import Redis

from annotate.models import Annotation, AssignmentStatus, Export
from annotate.tasks import run_export
from core import jobs
from core.models import JobStatus
from ml.models import TrainingRun
from tests.celery_worker import celery_worker, purge_broker, wait_for
from tests.redis_server import PrivateRedis, private_redis
from tests.security.payloads import submit_payload
from tests.security.world import build_world

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def use_broker(url: str) -> None:
    """Point the Celery app of this process at `url`, dropping pooled connections to the old one.

    Celery reads the CELERY_BROKER_URL environment variable before its configuration, so the caller
    sets both."""
    from config.celery import app

    app.conf.broker_url = url
    if app._pool is not None:  # as Celery does after a fork: pools reconnect lazily on next use
        app._pool.force_close_all()
        app._pool = None
    if app.amqp._producer_pool is not None:
        app.amqp._producer_pool.force_close_all()
        app.amqp._producer_pool = None
    # kombu keeps the producer pool of each broker URL in a process-wide registry: a closed one left
    # there is handed back when the URL is used again ("Acquire on closed pool" in later tests)
    kombu.pools.reset()


@pytest.fixture
def redis(settings, monkeypatch, tmp_path) -> Iterator[PrivateRedis]:
    """A private Redis as the broker and the cache of the web under test (and of its worker)."""
    from config.celery import app

    previous = app.conf.broker_url
    with private_redis(tmp_path) as server:
        server.shared_url = previous
        settings.CELERY_BROKER_URL = server.url
        monkeypatch.setenv("CELERY_BROKER_URL", server.url)
        monkeypatch.setenv("CACHE_URL", server.url)
        settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": server.url}}
        use_broker(server.url)
        try:
            yield server
        finally:
            monkeypatch.undo()
            use_broker(previous)


def test_redis_outage_degrades_and_recovers(redis):
    world = build_world()
    project = world.project
    project.retrain_every = 1  # the submit's auto-retrain hook fires during the outage too
    project.save(update_fields=["retrain_every"])
    assignment = world.rows["annotate.assignment"]
    annotator, lead = world.api_client("annotator"), world.api_client("lead")
    purge_broker()
    payload = submit_payload("outage-key")
    submit_url = f"/api/v1/assignments/{assignment.pk}/submit/"

    redis.stop()
    assert not redis.ping()
    assert Redis.from_url(redis.shared_url, socket_timeout=2).ping()  # the Redis other tests use stays up
    try:
        assert lead.get("/api/v1/health/").json()["broker"] is False
        started = time.monotonic()
        claim = annotator.get(f"/api/v1/projects/{project.slug}/tasks/next/")
        assert claim.status_code == 200 and claim.json()["id"] == assignment.pk
        submitted = annotator.post(submit_url, payload, format="json")
        assert submitted.status_code == 201, submitted.content
        assert submitted.json()["next"] is not None  # the next task is claimed in the same response
        repeat = annotator.post(submit_url, payload, format="json")
        assert repeat.status_code == 200 and repeat.json()["annotation_id"] == submitted.json()["annotation_id"]
        labeling_seconds = time.monotonic() - started
        assert labeling_seconds < 10, labeling_seconds

        export = lead.post(f"/api/v1/projects/{project.slug}/exports/", {"format": "prm800k"}, format="json")
        assert export.status_code == 202 and export.json()["status"] == JobStatus.CREATED
        run = lead.post(f"/api/v1/projects/{project.slug}/training-runs/", {}, format="json")
        assert run.status_code == 202, run.content
        health = lead.get("/api/v1/health/").json()
        assert health["degraded"] is True and health["database"] is True and health["broker"] is False
        # the new export job, and the project's earlier one that never reached a worker
        assert health["waiting"]["exports"] == 2 and health["waiting"]["training_runs"] >= 1
    finally:
        redis.start()

    assert lead.get("/api/v1/health/").json()["degraded"] is False
    export_id = export.json()["id"]
    assert Export.objects.get(pk=export_id).status == JobStatus.CREATED

    from ml import services as ml_services

    def sweep_and_check() -> bool:
        jobs.requeue_stale(model=Export, task=run_export, created_after=timedelta(0), running_after=timedelta(hours=2))
        ml_services.sweep_stale_runs(waiting_after=timedelta(0))
        runs_final = not TrainingRun.objects.filter(
            project=project, status__in=[JobStatus.CREATED, JobStatus.RUNNING]
        ).exists()
        exports_final = set(Export.objects.filter(project=project).values_list("status", flat=True)) == {
            JobStatus.SUCCEEDED
        }
        return exports_final and runs_final

    with celery_worker():
        wait_for(sweep_and_check, timeout=240, interval=3, message="waiting jobs sent and finished after the restart")

    # No lost and no duplicated annotation; every job final.
    assert Annotation.objects.filter(assignment_id=assignment.pk).count() == 1
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    assert Export.objects.get(pk=export_id).record_count == Annotation.objects.filter(project=project).count()
    statuses = set(TrainingRun.objects.filter(project=project).values_list("status", flat=True))
    assert statuses <= {JobStatus.SUCCEEDED, JobStatus.FAILED}, statuses
