"""Celery tasks of the labeling domain. Each takes a primary key and is safe to run twice.

Tasks import their services inside the body (services import their tasks at module top).
"""

from celery import shared_task


@shared_task(acks_late=True)
def run_export(export_id: int) -> None:
    from annotate.services import exports

    exports.run_export_job(export_id=export_id)


@shared_task(acks_late=True)
def run_import(import_id: int) -> None:
    from annotate.services.imports import jobs

    jobs.run_import_job(import_id=import_id)


@shared_task
def refresh_stats_snapshot(project_id: int) -> None:
    """Rebuild a project's dashboard snapshot off the request path (annotate.selectors.stats.snapshot)."""
    from annotate.models import Project
    from annotate.selectors.stats import snapshot

    project = Project.objects.filter(pk=project_id).first()
    if project is not None:
        snapshot.build_snapshot(project=project)


@shared_task(acks_late=True)
def reorder_queue_before_any_model(project_id: int) -> int:
    """After a strategy or control-share change: queue the open solutions again under the new
    settings where no model has ordered them (annotate.services.reorder)."""
    from annotate.services.reorder import reorder_before_any_model

    return reorder_before_any_model(project_id=project_id)
