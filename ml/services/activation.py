"""Rollback: activate an earlier run at once, then rescore the queue with it as a job whose failure
re-activates the previous model (ml.tasks.rescore_queue)."""

from __future__ import annotations

import logging

from django.db import transaction

from annotate.models import Project
from core.models import JobStatus
from ml.models import TrainingRun
from ml.services.config import RunNotActivatable, artifact_abspath
from ml.services.runs import _activate, _lock_project
from ml.services.scoring import rescore_project
from ml.tasks import rescore_queue

logger = logging.getLogger("ml.services")


def rollback(*, project: Project, run: TrainingRun, by=None) -> TrainingRun:
    """Activate an earlier succeeded run (a new generation) and enqueue the queue's rescoring with it
    as a job (`ml.tasks.rescore_queue` -> `rescore_after_activation`): the caller gets its answer at
    once, and a failed rescoring re-activates the model that was active before. `by`, the lead who
    chose it, is kept on the run; a run asked for before this finishes without taking over
    (ml.services.runs._held_back_by)."""
    if run.project_id != project.pk or run.status != JobStatus.SUCCEEDED or not run.artifact_path:
        raise RunNotActivatable(f"Run {run.pk} is {run.status}; only a succeeded run of {project.slug} can be active.")
    if not artifact_abspath(run.artifact_path).exists():
        raise RunNotActivatable(f"Run {run.pk}'s model file is missing.")
    with transaction.atomic():
        locked = _lock_project(project.pk)
        if TrainingRun.objects.filter(pk=run.pk, is_active=True).exists():
            # Already the active model: a repeat (a retried request, a second click) changes nothing.
            # A new generation here would split one model's labels across rounds for `generation=`.
            run.refresh_from_db()
            return run
        previous = TrainingRun.objects.filter(project=project, is_active=True).exclude(pk=run.pk).first()
        _activate(run=run, project=locked, by=by if getattr(by, "pk", None) else None)
        args = [run.pk, previous.pk if previous else None]
        transaction.on_commit(lambda: _send_rescore(args))
    run.refresh_from_db()
    project.refresh_from_db()
    return run


def _send_rescore(args: list[int | None]) -> None:
    try:
        rescore_queue.apply_async(args=args, retry=False)
    except Exception as exc:  # broker down: the model is active; the queue keeps its order until a rescore
        logger.warning("Could not enqueue the rescoring for run %s: %s", args[0], exc)


def rescore_after_activation(*, run_id: int, previous_id: int | None = None) -> int | None:
    """The rollback job: rescore the open queue with the run activated by `rollback`. If scoring
    fails, the previously active run is activated again (a new generation) so the model in charge
    and the queue's order agree; the error is re-raised for the worker's log. Returns the rows
    reordered, or None when another activation came first."""
    run = TrainingRun.objects.select_related("project").filter(pk=run_id, is_active=True).first()
    if run is None:
        return None
    try:
        return rescore_project(project=run.project, run=run)
    except Exception:
        logger.exception("rescoring with run %s failed; re-activating run %s", run_id, previous_id)
        with transaction.atomic():
            locked = _lock_project(run.project_id)
            still_active = TrainingRun.objects.filter(pk=run_id, is_active=True).exists()
            previous = TrainingRun.objects.filter(pk=previous_id, status=JobStatus.SUCCEEDED).first()
            if still_active and previous is not None:
                _activate(run=previous, project=locked)
            elif still_active:
                TrainingRun.objects.filter(pk=run_id).update(is_active=False)
        raise


def reorder_with_active_model(*, project_id: int) -> int | None:
    """Reorder the open queue by the project's current strategy and control share with its active
    model (a settings change); the rows reordered, or None without an active model. A failure
    leaves the model active: the queue keeps its previous order until the next run."""
    run = TrainingRun.objects.select_related("project").filter(project_id=project_id, is_active=True).first()
    if run is None:
        return None
    return rescore_project(project=run.project, run=run)
