"""Celery tasks of the labeling domain. Each takes a primary key and is safe to run twice."""

from celery import shared_task

from annotate.services import exports


@shared_task(acks_late=True)
def run_export(export_id: int) -> None:
    exports.run_export_job(export_id=export_id)
