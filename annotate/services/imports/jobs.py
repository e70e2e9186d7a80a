"""An import through the API as a worker job (the core.jobs pattern): the upload is stored, a row
is written, and a Celery worker validates and imports the file (reading, writing), so a big file
never holds a web request.

Progress goes to the cache, not the row: the write pass runs inside one transaction, so an UPDATE
of the row would stay invisible until the import commits. The final status, counters and the
line-numbered errors are on the row.
"""

from __future__ import annotations

import logging
import time
import uuid
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from annotate.models import ImportJob, Project
from annotate.services.imports.reading import ImportValidationError, is_gzip
from annotate.services.imports.writing import import_file
from annotate.tasks import run_import
from core import jobs
from core.models import JobStatus

logger = logging.getLogger(__name__)

# A running import older than this is taken for one whose worker died: it runs again (its
# transaction rolled back, so nothing was half-written).
IMPORT_RUNNING_DEADLINE = timedelta(hours=6)
PROGRESS_EVERY_SECONDS = 0.5


def import_dir() -> Path:
    path = Path(settings.MEDIA_ROOT) / "imports"
    path.mkdir(parents=True, exist_ok=True)
    return path


def start_import(*, project: Project, user: AbstractBaseUser, upload: UploadedFile) -> ImportJob:
    """Store the upload and queue its import; returns the job (status `created`)."""
    path = import_dir() / f"{uuid.uuid4().hex}.upload"
    size = 0
    with open(path, "wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
            size += len(chunk)
    with transaction.atomic():
        job = ImportJob.objects.create(
            project=project,
            requested_by=user,
            filename=(upload.name or "")[:300],
            file_path=str(path),
            file_size=size,
        )
        jobs.enqueue_on_commit(run_import, job.pk)
    return job


def _progress_key(job_id: int) -> str:
    return f"import-progress:{job_id}"


def progress(job: ImportJob) -> float | None:
    """Share of the work done (0..1) while running; None when unknown (gzip, or not started)."""
    if job.status == JobStatus.SUCCEEDED:
        return 1.0
    if job.status != JobStatus.RUNNING:
        return None
    try:
        return cache.get(_progress_key(job.pk))
    except Exception:  # a cache outage must not break the job's page
        return None


class _Progress:
    """Counts the bytes both passes read (validate, then write) and publishes the share now and then."""

    def __init__(self, job: ImportJob) -> None:
        self.key = _progress_key(job.pk)
        gzipped = is_gzip(job.file_path)
        self.total = 0 if gzipped else 2 * max(job.file_size, 1)  # gzip: uncompressed size unknown
        self.done = 0
        self.last = 0.0

    def __call__(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.total and now - self.last >= PROGRESS_EVERY_SECONDS:
            self.last = now
            try:
                cache.set(self.key, min(0.99, self.done / self.total), timeout=3600)
            except Exception:
                pass


def run_import_job(*, import_id: int) -> None:
    """The worker's side: claim the job, import its file, record the outcome, delete the file."""
    if not jobs.claim(ImportJob, import_id):
        return  # gone, or another delivery of the same message took it
    job = ImportJob.objects.select_related("project").get(pk=import_id)
    tick = _Progress(job)
    fields: dict = {}
    try:
        result = import_file(project=job.project, path=job.file_path, validate_progress=tick, write_progress=tick)
    except ImportValidationError as exc:
        fields = {
            "status": JobStatus.FAILED,
            "errors": [error.as_dict() for error in exc.errors],
            "counters": {"bad_lines": exc.bad_lines},
        }
    except Exception as exc:
        logger.exception("import %s failed", import_id)
        message = f"the import stopped: {type(exc).__name__}: {exc}"[:500]
        fields = {"status": JobStatus.FAILED, "errors": [{"line": 0, "field": "(file)", "message": message}]}
    else:
        fields = {"status": JobStatus.SUCCEEDED, "counters": result.as_dict()}
    ImportJob.objects.filter(pk=import_id).update(finished_at=timezone.now(), **fields)
    _delete_upload(job)
    try:
        cache.delete(tick.key)
    except Exception:
        pass


def sweep_stale_imports(*, stale_after: timedelta | None = None) -> int:
    """Re-send imports that never reached a worker; rerun ones whose worker died (core.jobs)."""
    return jobs.requeue_stale(
        model=ImportJob,
        task=run_import,
        created_after=timedelta(minutes=1),
        running_after=IMPORT_RUNNING_DEADLINE if stale_after is None else stale_after,
        max_restarts=jobs.MAX_RESTARTS,
        failed_fields=lambda message: {"errors": [{"line": 0, "field": "(file)", "message": message}]},
        on_give_up=_delete_upload,
    )


def _delete_upload(job: ImportJob) -> None:
    """A finished or abandoned job's upload is not kept."""
    Path(job.file_path).unlink(missing_ok=True)
