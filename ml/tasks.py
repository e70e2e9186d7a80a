"""Celery tasks of the model loop (routed to the `ml` queue by CELERY_TASK_ROUTES "ml.tasks.*").

Each takes a primary key, is idempotent and returns quietly when its row is gone or already
taken: `run_training` claims the run with a conditional update. Stale runs are swept by the one
job sweep on the default queue (core.tasks.sweep_jobs -> ml.services.sweep_training_runs), so a
hung run on this queue never blocks its own watchdog.
"""

from __future__ import annotations

from celery import shared_task

# ml.services imports torch lazily and numpy: loaded inside the task, so processes that only send
# tasks stay light.


@shared_task(acks_late=True)
def rescore_queue(run_id: int, previous_id: int | None = None) -> int | None:
    """After a rollback: reorder the queue with the activated run (see ml.services.runs.rollback)."""
    from ml import services

    return services.rescore_after_activation(run_id=run_id, previous_id=previous_id)


@shared_task(acks_late=True)
def reorder_queue(project_id: int) -> int | None:
    """After a lead changes the queue's order (strategy, control share), or an import adds pairs to
    a compare project: reorder the open queue with the project's active model (None when it has none)."""
    from ml import services

    return services.reorder_with_active_model(project_id=project_id)


@shared_task(acks_late=True)
def train_model(run_id: int) -> str | None:
    from ml import services

    run = services.run_training(run_id=run_id)
    return None if run is None else run.status


@shared_task(acks_late=True)
def featurize_steps(project_id: int) -> int:
    """After an import: store the new steps' features, then let the active model (if any) score the
    new solutions with the rest. Without that they kept their cold-start priority, above every
    model-scored solution, and the chosen strategy served nothing until the next retrain."""
    from ml import services
    from ml.services.step_features import featurize_project_steps

    stored = featurize_project_steps(project_id=project_id)
    services.reorder_with_active_model(project_id=project_id)
    return stored
