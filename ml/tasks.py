"""Celery tasks of the model loop (routed to the `ml` queue by CELERY_TASK_ROUTES "ml.tasks.*").

Each takes a primary key (or nothing), is idempotent and returns quietly when its row is gone or
already taken: `run_training` claims the run with a conditional update.
"""

from __future__ import annotations

from celery import shared_task

from config.celery import app

# Beat runs the sweeper; added here (beat imports the tasks modules before it reads its schedule).
app.conf.beat_schedule.setdefault(
    "ml-sweep-stale-runs", {"task": "ml.tasks.sweep_stale_runs", "schedule": 300.0, "options": {"queue": "ml"}}
)

# ml.services imports torch: loaded inside the tasks, so web processes that only send tasks stay light.


@shared_task(acks_late=True)
def train_model(run_id: int) -> str | None:
    from ml import services

    run = services.run_training(run_id=run_id)
    return None if run is None else run.status


@shared_task(acks_late=True)
def sweep_stale_runs(older_than_seconds: float | None = None) -> list[int]:
    """Fail runs stuck in running past ML_STALE_RUN_SECONDS (or the given age) and request fresh ones."""
    from datetime import timedelta

    from ml import services

    age = services.STALE_AFTER if older_than_seconds is None else timedelta(seconds=older_than_seconds)
    return [run.pk for run in services.sweep_stale_runs(older_than=age)]
