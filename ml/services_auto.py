"""Retrain after every N new step labels (Project.retrain_every; 0 turns it off).

A submitted annotation triggers a cheap check after its transaction commits: one UPDATE adds its
step labels (main-line steps plus alternatives) to Project.step_labels_since_run and returns the
sum (imports add theirs too; a run resets it when it starts). Only when the sum reaches N is the
exact count read: the step labels in annotations newer than the watermark of the project's latest
started run, summed over the (project, id) index. Reaching N requests a retrain; single flight
merges it into the waiting run if there is one.
"""

from __future__ import annotations

import logging

from django.db import connection, transaction
from django.db.models import F, Sum
from django.db.models.signals import post_delete, post_save

from annotate.models import Annotation, AnnotationSource, Preference, Project, TaskKind
from core.models import JobStatus
from core.signals import queue_order_changed, steps_imported
from ml.models import TrainingRun

logger = logging.getLogger(__name__)


def label_total(*, project: Project, after_annotation_id: int = 0, up_to_annotation_id: int | None = None) -> int:
    """Step labels (main-line steps plus alternatives) in the annotations with ids in a range."""
    qs = Annotation.objects.filter(project=project, id__gt=after_annotation_id)
    if up_to_annotation_id is not None:
        qs = qs.filter(id__lte=up_to_annotation_id)
    return int(qs.aggregate(n=Sum(F("n_label_steps") + F("n_alternatives")))["n"] or 0)


def labels_since_last_run(*, project: Project) -> int:
    last = (
        TrainingRun.objects.filter(project=project, started_at__isnull=False)
        .order_by("-id")
        .values_list("metrics", flat=True)
        .first()
    )
    if project.task_kind == TaskKind.COMPARE:  # a preference counts as one label
        since = int((last or {}).get("preference_watermark") or 0)
        return Preference.objects.filter(project=project, id__gt=since).count()
    watermark = int((last or {}).get("annotation_watermark") or 0)
    return label_total(project=project, after_annotation_id=watermark)


def count_step_labels(*, project_id: int, added: int) -> tuple[int, int]:
    """Add `added` to the project's step labels since the latest run; (new sum, retrain_every)."""
    table = connection.ops.quote_name(Project._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET step_labels_since_run = step_labels_since_run + %s WHERE id = %s "
            "RETURNING step_labels_since_run, retrain_every",
            [added, project_id],
        )
        row = cursor.fetchone()
    return (row[0], row[1]) if row else (0, 0)


def maybe_retrain(*, project_id: int, added: int = 0) -> TrainingRun | None:
    """Request a retrain when the project has N new step labels and no run is waiting."""
    since_run, every = count_step_labels(project_id=project_id, added=added)
    if not every or since_run < every:
        return None  # the one query of a submit that is not due
    from ml.services import request_retrain  # imports torch: only once a retrain is due

    project = Project.objects.filter(pk=project_id).first()
    if project is None or not project.retrain_every:
        return None
    if TrainingRun.objects.filter(project=project, status=JobStatus.CREATED).exists():
        return None  # the waiting run will train on these labels too
    if labels_since_last_run(project=project) < project.retrain_every:
        return None
    return request_retrain(project=project, trigger="auto")


def _on_annotation_saved(sender, instance: Annotation, created: bool, **kwargs) -> None:
    if not created or instance.source != AnnotationSource.APP:
        return
    if (instance.idempotency_key or "").startswith("compare:"):
        return  # a compare project's first-wrong mark (annotate.services.compare.marks): its preference counts
    project_id = instance.project_id
    added = instance.n_label_steps + instance.n_alternatives

    def check() -> None:
        try:
            maybe_retrain(project_id=project_id, added=added)
        except Exception:  # never let the check break a submit that already committed
            logger.exception("auto-retrain check failed for project %s", project_id)

    transaction.on_commit(check)


def _on_preference_saved(sender, instance: Preference, created: bool, **kwargs) -> None:
    if not created:
        return
    project_id = instance.project_id

    def check() -> None:
        try:
            maybe_retrain(project_id=project_id, added=1)
        except Exception:  # never let the check break a submit that already committed
            logger.exception("auto-retrain check failed for project %s", project_id)

    transaction.on_commit(check)


def _on_steps_imported(sender, project_id: int, **kwargs) -> None:
    """Featurize an import's steps on the ml queue once it commits (ml.services.step_features); in a
    compare project, have the active reward model score the import's new pairs with the rest."""
    from core import jobs
    from ml.tasks import featurize_steps, reorder_queue

    kind = Project.objects.filter(pk=project_id).values_list("task_kind", flat=True).first()
    if kind is None:
        return
    if kind != TaskKind.COMPARE:
        jobs.enqueue_on_commit(featurize_steps, project_id)  # a lost message costs only speed
    elif TrainingRun.objects.filter(project_id=project_id, is_active=True).exists():
        # new pairs kept their import priority (up to 3) above every pair the model scored (its
        # uncertainty, at most 1): served first, unscored, until the next run
        jobs.enqueue_on_commit(reorder_queue, project_id)


def _on_queue_order_changed(sender, project_id: int, **kwargs) -> None:
    """A lead changed the strategy or the control share: reorder with the active model, on the ml
    queue (a rescoring reads every open step). Without one, the next import or retrain orders it."""
    from core import jobs
    from ml.tasks import reorder_queue

    active = TrainingRun.objects.filter(project_id=project_id, is_active=True).exclude(
        project__task_kind=TaskKind.COMPARE  # a compare project's pairs are not ordered by a PRM
    )
    if active.exists():
        jobs.enqueue_on_commit(reorder_queue, project_id)


def _on_project_deleted(sender, instance: Project, **kwargs) -> None:
    from ml.services.step_features import drop_project_stores, project_dir_name

    name = project_dir_name(instance)
    transaction.on_commit(lambda: drop_project_stores(name))  # a rolled-back delete keeps them


def connect() -> None:
    post_delete.connect(_on_project_deleted, sender=Project, dispatch_uid="ml.drop_project_features")
    steps_imported.connect(_on_steps_imported, dispatch_uid="ml.featurize_imported_steps")
    queue_order_changed.connect(_on_queue_order_changed, dispatch_uid="ml.reorder_on_settings")
    post_save.connect(_on_annotation_saved, sender=Annotation, dispatch_uid="ml.auto_retrain")
    # Compare projects: every preference counts toward retrain_every (ml.services.reward trains on them).
    post_save.connect(_on_preference_saved, sender=Preference, dispatch_uid="ml.auto_retrain_preferences")
