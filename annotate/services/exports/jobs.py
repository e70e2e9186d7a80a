"""Export jobs: a file written by a worker (core.jobs pattern), swept when stale."""

from __future__ import annotations

import gzip
import io
import os
import uuid
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotate.models import Export, Project
from annotate.services.exports.options import ExportOptions
from annotate.services.exports.stream import iter_lines, plan_export
from annotate.tasks import run_export
from core import jobs
from core.models import JobStatus

EXPORT_RUNNING_DEADLINE = timedelta(hours=2)


def sweep_stale_exports(*, stale_after: timedelta | None = None) -> int:
    """Re-send exports that never reached a worker; retry ones whose worker died (core.jobs)."""
    return jobs.requeue_stale(
        model=Export,
        task=run_export,
        created_after=timedelta(minutes=1),
        running_after=EXPORT_RUNNING_DEADLINE if stale_after is None else stale_after,
        max_restarts=jobs.MAX_RESTARTS,
        on_give_up=_remove_partials,
    )


def _remove_partials(export: Export) -> None:
    """The half files of a job whose workers were lost (each run writes its own)."""
    for path in export_dir().glob(f"export-{export.pk}-*.partial"):
        path.unlink(missing_ok=True)


def export_dir() -> Path:
    path = Path(settings.MEDIA_ROOT) / "exports"
    path.mkdir(parents=True, exist_ok=True)
    return path


@transaction.atomic
def create_export_job(*, project: Project, user, options: ExportOptions, gzip_output: bool) -> Export:
    export = Export.objects.create(
        project=project,
        requested_by=user,
        format=options.format,
        filters={**options.as_dict(), "gzip": gzip_output},
    )
    jobs.enqueue_on_commit(run_export, export.pk)  # a broker outage leaves it `created` for the sweep
    return export


def run_export_job(*, export_id: int) -> None:
    """Write the export's file beside its final name, then rename: never a half file marked done."""
    # Only a `created` row is claimed: a redelivered message for a running job returns quietly,
    # and the sweep puts a job whose worker died back to `created` after its deadline.
    if not jobs.claim(Export, export_id, error=""):
        return  # gone, or already finished: tasks are idempotent
    export = Export.objects.select_related("project").get(pk=export_id)
    filters = dict(export.filters)
    gzip_output = bool(filters.pop("gzip", False))
    options = ExportOptions.from_dict(filters)
    suffix = ".jsonl.gz" if gzip_output else ".jsonl"
    # A random part keeps names unguessable and unique even if ids repeat (a recreated database).
    final = export_dir() / f"export-{export.pk}-{export.project.slug}-{options.format}-{uuid.uuid4().hex[:12]}{suffix}"
    partial = final.with_name(final.name + ".partial")
    try:
        plan = plan_export(project=export.project, options=options)
        count = 0
        with open(partial, "wb") as raw:
            # The gzip header names the final file (gzip.open(partial) stored ".partial", which gunzip -N restores).
            binary = gzip.GzipFile(filename=final.name, mode="wb", fileobj=raw) if gzip_output else raw
            with io.TextIOWrapper(binary, encoding="utf-8") as handle:
                for line in iter_lines(plan=plan):
                    handle.write(line)
                    count += 1
                    if count % 10_000 == 0:
                        Export.objects.filter(pk=export.pk).update(record_count=count)
        os.replace(partial, final)
        Export.objects.filter(pk=export.pk).update(
            status=JobStatus.SUCCEEDED,
            file_path=str(final),
            record_count=count,
            byte_size=final.stat().st_size,
            finished_at=timezone.now(),
            filters={**export.filters, "cursor": plan.cursor},
        )
    except Exception as exc:
        partial.unlink(missing_ok=True)
        Export.objects.filter(pk=export.pk).update(
            status=JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        raise
