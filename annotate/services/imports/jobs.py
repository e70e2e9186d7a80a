"""An import through the API: the uploaded file imported and recorded as an ImportJob."""

from __future__ import annotations

import tempfile

from django.utils import timezone

from annotate.models import ImportJob, Project
from annotate.services.imports.reading import ImportValidationError
from annotate.services.imports.writing import import_file
from core.models import JobStatus


def import_upload(*, project: Project, user, upload) -> ImportJob:
    """Import an uploaded file (a Django UploadedFile) and record it as an ImportJob: succeeded
    with its counters, or failed with the first line errors (nothing written)."""
    job = ImportJob.objects.create(
        project=project, requested_by=user, filename=upload.name[:300], status=JobStatus.RUNNING
    )
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
        handle.flush()
        try:
            result = import_file(project=project, path=handle.name)
        except ImportValidationError as exc:
            job.status = JobStatus.FAILED
            job.errors = [error.as_dict() for error in exc.errors]
            job.counters = {"bad_lines": exc.bad_lines}
            job.finished_at = timezone.now()
            job.save()
            return job
    job.status = JobStatus.SUCCEEDED
    job.counters = result.as_dict()
    job.finished_at = timezone.now()
    job.save()
    return job
