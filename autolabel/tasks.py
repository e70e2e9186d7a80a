"""Celery tasks of automatic labeling (the `autolabel` queue: hours of HTTP and grading, no torch;
kept off `default`, whose workers run imports, exports and the sweep).

Stale jobs are restarted by the project's one sweep (core.tasks.sweep_jobs -> autolabel.services.sweep).
"""

from celery import shared_task


@shared_task(acks_late=True)
def run_autolabel(job_id: int) -> str | None:
    from autolabel import services

    job = services.run_job(job_id=job_id)
    return None if job is None else job.status
