"""A real Celery worker process for tests whose flow needs one.

It runs against the test database (the one pytest-django created, so tests using it must be
`django_db(transaction=True)` for their rows to be visible) and the test Redis broker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def purge_broker() -> None:
    from config.celery import app

    app.control.purge()


@contextmanager
def celery_worker(
    *, queues: str = "default,ml,autolabel", extra_env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen]:
    """Start `celery worker` for the duration of the block; SIGTERM (then SIGKILL) at exit."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        **(extra_env or {}),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            queues,
            "--concurrency",
            "1",
            "--pool",
            "prefork",
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
            "-l",
            "WARNING",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


def wait_for(predicate, *, timeout: float = 60.0, interval: float = 0.2, message: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


@contextmanager
def export_held_running(world) -> Iterator[tuple[int, subprocess.Popen]]:
    """A PRM800K export of `world`'s project (tests.security.world) that a real worker has claimed
    and holds `running`: the project's export-sequence lock, taken here from another connection,
    keeps the worker waiting inside the export. Yields (export id, the worker); at exit the worker
    is stopped if the block has not killed it, and the lock is released."""
    import psycopg

    from annotate.models import Annotation, Export
    from annotate.services.exports.sequence import _LOCK_KEYS
    from core.models import JobStatus

    purge_broker()
    response = world.api_client("lead").post(
        f"/api/v1/projects/{world.project.slug}/exports/", {"format": "prm800k"}, format="json"
    )
    assert response.status_code == 202, response.content
    export_id = response.json()["id"]
    locker = psycopg.connect(database_url(), autocommit=True)
    locker.execute("SELECT pg_advisory_lock(%s, %s)", [_LOCK_KEYS[Annotation], world.project.pk])
    try:
        with celery_worker() as worker:
            wait_for(
                lambda: Export.objects.get(pk=export_id).status == JobStatus.RUNNING, timeout=90, message="running"
            )
            yield export_id, worker
    finally:
        locker.close()


def kill_worker(worker: subprocess.Popen) -> None:
    """SIGKILL the worker's process group (a lost host, the OOM killer): nothing of it runs on."""
    time.sleep(0.5)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)
