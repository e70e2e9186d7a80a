"""Celery tasks of the labeling domain. Each takes a primary key and is safe to run twice."""

from datetime import timedelta

from celery import shared_task

from annotate.models import Export
from annotate.services import exports, jobs

EXPORT_RUNNING_DEADLINE = timedelta(hours=2)


@shared_task(acks_late=True)
def run_export(export_id: int) -> None:
    exports.run_export_job(export_id=export_id)


@shared_task
def refresh_stats_snapshot(project_id: int) -> None:
    """Rebuild a project's dashboard snapshot off the request path (see services.stats)."""
    from annotate.models import Project
    from annotate.services import stats

    project = Project.objects.filter(pk=project_id).first()
    if project is not None:
        stats.build_snapshot(project=project)


@shared_task
def sweep_jobs() -> int:
    """Run by beat: re-send export jobs that never reached a worker, retry ones whose worker died."""
    return jobs.requeue_stale(
        model=Export,
        task=run_export,
        created_after=timedelta(minutes=1),
        running_after=EXPORT_RUNNING_DEADLINE,
    )
