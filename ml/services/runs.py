"""The active-learning loop inside the app: training runs, activation, rescoring and rollback.

Flow (DESIGN.md, "The active-learning loop"): `request_retrain` creates a TrainingRun row and
enqueues `ml.tasks.train_model` on commit; `run_training` claims the row (created -> running,
only when no other run of the project is running), builds step examples from the project's
annotations, trains with `ml.prm`, writes the checkpoint atomically under MEDIA_ROOT/models/,
scores every open solution with it, and only then activates it, advances the project's
generation and writes the queue priorities. Any exception marks the run failed with its
message (the traceback goes to the worker's log); the previous model stays active.

Single flight per project: at most one run is running and at most one waits (status created).
A request while one waits returns the waiting run (`merged`), with the request's settings if it
asks for any. A request while one runs returns
the running run (`merged`) when it would train on the same thing: no annotation or preference
has arrived since the running run took its snapshot (the watermarks `_claim` stores in its
metrics) and the request asks for no other settings. Otherwise it creates the waiting run, which
the running one enqueues when it finishes. The Project row lock serializes these decisions
(SQLite serializes writers by itself).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from annotate.models import Annotation, Preference, Project, TaskKind
from core import jobs
from core.models import JobStatus
from ml.models import StepScore, TrainingRun
from ml.prm.config import ConfigError
from ml.services.config import STALE_AFTER, artifact_abspath, training_config, validate_run_config
from ml.services.examples import build_examples
from ml.services.population import threshold_pool
from ml.services.prm_lib import lib
from ml.services.scoring import (
    apply_selection,
    drop_other_scores,
    feature_cache,
    remember_prm,
    score_open_solutions,
)
from ml.services_auto import label_total
from ml.tasks import train_model

logger = logging.getLogger("ml.services")


class NothingToTrain(Exception):
    """A run found no rated step to train on: said to the project's members as it is."""


def _lock_project(project_id: int) -> Project:
    # FOR NO KEY UPDATE, not FOR UPDATE: it still serialises the run bookkeeping (it conflicts with
    # itself), but not the FOR KEY SHARE that every submit's deferred foreign-key checks take on the
    # project row at commit; FOR UPDATE deadlocked a submit against a run claim under 50 annotators.
    return Project.objects.select_for_update(no_key=True).get(pk=project_id)


def _enqueue(run_id: int) -> None:
    """Send the task after commit; a broker outage leaves the run waiting for the sweeper."""
    jobs.enqueue_on_commit(train_model, run_id)


@transaction.atomic
def request_retrain(
    *,
    project: Project,
    user=None,
    config: dict[str, Any] | None = None,
    trigger: str = "request",
    enqueue: bool = True,
    skip_if_current: bool = False,
) -> TrainingRun:
    """A training run for the project's labels so far; never two at once.

    Returns the waiting run when there is one (with `run.merged = True`); else the running run
    (also `merged`) when no label has arrived since it took its snapshot and `config` asks for
    nothing else (`_trains_the_same`): a second click of "Retrain now" must not train again on
    the same labels. Else a new run, which waits for a running one: that run enqueues it when it
    finishes. `config` overrides training settings for a new run, and for a waiting one it joins
    (a request without settings keeps the waiting run's). The task is enqueued after commit unless
    `enqueue` is False (`retrain --wait`). With `skip_if_current` (the API, so the dashboard's
    "Retrain now"), a request without settings when nothing is waiting or running and no label has
    arrived since the active run started returns that run (`merged`, succeeded): training again on
    the same labels would add a copy of the last point to the learning curve, advance the round and
    redraw the control, and teach nothing.
    """
    if config:
        validate_run_config(project=project, config=config, user=user)  # before anything is written
    _lock_project(project.pk)
    _fail_stale(project_id=project.pk)
    waiting = TrainingRun.objects.filter(project=project, status=JobStatus.CREATED).order_by("id").first()
    if waiting is not None:
        _take_settings(waiting=waiting, config=config)
        _asked_again(waiting)
        return waiting
    running = TrainingRun.objects.filter(project=project, status=JobStatus.RUNNING).order_by("-id").first()
    if running is not None and _trains_the_same(running=running, config=config):
        _asked_again(running)
        return running
    if skip_if_current and running is None and not config:
        active = TrainingRun.objects.filter(project=project, is_active=True, status=JobStatus.SUCCEEDED).first()
        if active is not None and _no_label_since(active):
            active.merged = True
            return active
    # Who asked is kept on the row for leads, never in the config that ML engineers list.
    run = TrainingRun.objects.create(
        project=project,
        status=JobStatus.CREATED,
        config={**(config or {}), "extra": {"trigger": trigger}},
        requested_by=user if getattr(user, "pk", None) else None,
    )
    run.merged = False
    if enqueue:
        _enqueue(run.pk)
    return run


def _asked_again(run: TrainingRun) -> None:
    """A request joined `run`: it is asked for now, so a rollback made before this request no
    longer keeps it from taking over when it finishes (`_held_back_by`)."""
    run.requested_at = timezone.now()
    TrainingRun.objects.filter(pk=run.pk).update(requested_at=run.requested_at)
    run.merged = True


def _take_settings(*, waiting: TrainingRun, config: dict[str, Any] | None) -> None:
    """Join the waiting run with the request's settings, if it asks for any: they replace the
    waiting run's (it has not started, and trains on every label so far), as the latest word on
    how to train; a request with settings joined it and had them dropped without a word. The
    project row lock, held here and by `_claim`, keeps the run waiting while this writes."""
    if not config or config == {k: v for k, v in waiting.config.items() if k != "extra"}:
        return
    waiting.config = {**config, "extra": waiting.config.get("extra", {})}
    waiting.save(update_fields=["config"])


def _no_label_since(run: TrainingRun) -> bool:
    """No annotation (nor, in a compare project, preference) is newer than the watermarks the run
    trained up to; False when the run has not stored the ones its project's kind needs."""
    metrics = run.metrics or {}
    annotations, preferences = metrics.get("annotation_watermark"), metrics.get("preference_watermark")
    compare = run.project.task_kind == TaskKind.COMPARE
    if annotations is None or (compare and preferences is None):
        return False
    newer = Annotation.objects.filter(project_id=run.project_id, id__gt=annotations).exists()
    if compare:
        newer = newer or Preference.objects.filter(project_id=run.project_id, id__gt=preferences).exists()
    return not newer


def _trains_the_same(*, running: TrainingRun, config: dict[str, Any] | None) -> bool:
    """Would a new run train what `running` trains? Yes when no annotation or preference of the
    project is newer than the watermarks `_claim` stored when the run started (annotations cover
    step labels, imports and a compare project's first-wrong marks) and the request overrides no
    setting, or the same ones as the running run. A run without both watermarks is never joined."""
    metrics = running.metrics or {}
    annotations, preferences = metrics.get("annotation_watermark"), metrics.get("preference_watermark")
    if annotations is None or preferences is None:
        return False
    requested = {k: v for k, v in running.config.items() if k != "extra"}  # the overrides until it ends
    if (config or {}) != requested:
        return False  # other settings: a new run, even on the same labels
    project_id = running.project_id
    return not (
        Annotation.objects.filter(project_id=project_id, id__gt=annotations).exists()
        or Preference.objects.filter(project_id=project_id, id__gt=preferences).exists()
    )


def _fail_stale(*, project_id: int | None = None, older_than: timedelta = STALE_AFTER) -> list[int]:
    """Runs stuck in `running` past the timeout (a killed worker) are failed; returns their ids."""
    qs = TrainingRun.objects.filter(status=JobStatus.RUNNING, started_at__lt=timezone.now() - older_than)
    if project_id is not None:
        qs = qs.filter(project_id=project_id)
    ids = list(qs.values_list("id", flat=True))
    if ids:
        TrainingRun.objects.filter(pk__in=ids, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED,
            finished_at=timezone.now(),
            error=f"No progress for more than {older_than}: the worker died or was killed. Re-requested.",
        )
    return ids


def sweep_stale_runs(
    *, older_than: timedelta = STALE_AFTER, waiting_after: timedelta = timedelta(minutes=2)
) -> list[TrainingRun]:
    """Fail runs stuck in `running` and request a fresh run for each of their projects.

    Also re-sends runs waiting longer than `waiting_after` with nothing running in their project
    (their message was lost: a broker outage), so a project never stalls. Returns those runs.
    """
    requested: list[TrainingRun] = []
    stale_projects = set(
        TrainingRun.objects.filter(status=JobStatus.RUNNING, started_at__lt=timezone.now() - older_than).values_list(
            "project_id", flat=True
        )
    )
    for project_id in sorted(stale_projects):
        with transaction.atomic():
            _lock_project(project_id)
            _fail_stale(project_id=project_id, older_than=older_than)
        requested.append(request_retrain(project=Project.objects.get(pk=project_id), trigger="sweeper"))
    just_requested = [run.pk for run in requested]
    waiting = TrainingRun.objects.filter(status=JobStatus.CREATED, created_at__lt=timezone.now() - waiting_after)
    for run in waiting.exclude(pk__in=just_requested):
        if not TrainingRun.objects.filter(project_id=run.project_id, status=JobStatus.RUNNING).exists():
            jobs.send_task(train_model, run.pk)
            requested.append(run)
    return requested


def sweep_training_runs(*, stale_after: timedelta | None = None) -> int:
    """The training-run sweeper of core.tasks.sweep_jobs: stuck runs failed and requested afresh."""
    return len(sweep_stale_runs(older_than=STALE_AFTER if stale_after is None else stale_after))


def _claim(run_id: int) -> TrainingRun | None:
    """created -> running, unless the row is gone, already taken, or its project has a run going."""
    with transaction.atomic():
        project_id = TrainingRun.objects.filter(pk=run_id).values_list("project_id", flat=True).first()
        if project_id is None:
            return None
        _lock_project(project_id)
        if TrainingRun.objects.filter(project_id=project_id, status=JobStatus.RUNNING).exists():
            return None  # the running one enqueues this one when it finishes
        watermark = Annotation.objects.filter(project_id=project_id).aggregate(m=Max("id"))["m"] or 0
        # Compare projects train on preferences: their watermark too, so auto-retrain counts from here.
        preferences = Preference.objects.filter(project_id=project_id).aggregate(m=Max("id"))["m"] or 0
        claimed = {"annotation_watermark": watermark, "preference_watermark": preferences}
        if not jobs.claim(TrainingRun, run_id, metrics=claimed):
            return None
        # The auto-retrain counter starts over with this run's watermark (ml.services_auto).
        Project.objects.filter(pk=project_id).update(step_labels_since_run=0)
    return TrainingRun.objects.select_related("project").get(pk=run_id)


def _summary_metrics(checkpoint: dict) -> dict[str, Any]:
    heldout = checkpoint["metrics"].get("heldout") or {}
    keys = ("auroc_negative", "accuracy", "ece", "first_error_f1", "acc_erroneous", "acc_correct")
    return {
        **{k: heldout.get(k) for k in keys},
        "n_examples": checkpoint["label_count"],
        "n_train": checkpoint["n_train"],
        "n_heldout": checkpoint["n_heldout"],
        "n_problems": checkpoint["n_problems"],
        "n_problems_holdable": checkpoint.get("n_problems_holdable", checkpoint["n_problems"]),
        "label_counts": checkpoint["label_counts"],
        "best_epoch": checkpoint["best_epoch"],
        "temperature": checkpoint["temperature"],
        "threshold": checkpoint["threshold"],
        "thresholds_by_grade": checkpoint.get("thresholds_by_grade"),
        "threshold_weights": checkpoint["metrics"].get("threshold_weights"),
        "heldout": heldout,
        "train": checkpoint["metrics"].get("train") or {},
    }


def run_training(*, run_id: int, log: Callable[[str], None] | None = None) -> TrainingRun | None:
    """Train, score, activate (see module doc). Returns the finished run, or None when this call
    did not claim it (gone, taken, or waiting for the project's running run)."""
    run = _claim(run_id)
    if run is None:
        return None
    t0 = time.perf_counter()
    project = run.project
    artifact = f"models/{project.slug}/run-{run.pk}.pt"
    written = False
    if project.task_kind == TaskKind.COMPARE:
        return _run_reward_training(run=run, t0=t0, log=log)
    try:
        watermark = run.metrics["annotation_watermark"]
        label_count = label_total(project=project, up_to_annotation_id=watermark)
        # On the row from the start: a running or failed run listed "0 step labels" (the API, the
        # dashboard's runs table) though it had hundreds to train on.
        TrainingRun.objects.filter(pk=run.pk).update(label_count=label_count)
        config = training_config(overrides={k: v for k, v in run.config.items() if k != "extra"})
        config.extra = {**config.extra, **(run.config.get("extra") or {}), "run_id": run.pk}
        examples = build_examples(project=project, up_to_annotation_id=watermark, auto_labels=config.auto_labels)
        if not any(e.target is not None for e in examples):
            from autolabel.models import AutoStepLabel

            automatic = config.auto_labels == "off" and AutoStepLabel.objects.filter(solution__project=project).exists()
            raise NothingToTrain(
                "Nothing to train on yet: the project has no rated steps. Label some solutions (or import "
                "labeled records) and retrain."
                + (
                    ' It has automatic labels: a run with the setting auto_labels "add" trains on them '
                    "(the training-runs API's config, or manage.py retrain --config)."
                    if automatic
                    else ""
                )
            )
        if log:
            base = f"; fine-tuning from {config.base_checkpoint}" if config.base_checkpoint else ""
            log(f"run {run.pk}: {len(examples)} examples from {label_count} step labels{base}")
        cache = feature_cache(config)
        pool = threshold_pool(
            project=project,
            examples=examples,
            featurizer=cache.featurizer,
            answers=config.answer_input,
            seed=config.seed,
        )
        checkpoint = lib.train_prm(examples, config, cache=cache, log=log, threshold_pool=pool)
        t_train = time.perf_counter() - t0
        lib.save_checkpoint(checkpoint, artifact_abspath(artifact))
        written = True
        prm = lib.build_prm(checkpoint, cache=cache)
        remember_prm(run.pk, prm)
        selection = score_open_solutions(project=project, run=run, prm=prm, log=log)
        metrics = {
            "annotation_watermark": watermark,
            **_summary_metrics(checkpoint),
            "train_seconds": round(t_train, 3),
            "score_seconds": selection.seconds,
            "scored_solutions": len(selection.solution_ids),
            "scored_steps": selection.n_steps,
        }
        generation = _finish_run(
            run=run, t0=t0, config=config.to_dict(), label_count=label_count, metrics=metrics, artifact=artifact
        )
        if generation is None:
            _held_back(run=run, log=log)
        else:
            apply_selection(selection=selection, generation=generation)
            drop_other_scores(project=project, run=run)
            if log:
                reordered = len(selection.solution_ids)
                log(f"run {run.pk}: active as generation {generation}; {reordered} solutions reordered")
    except Exception:
        _fail_run(run=run, artifact=artifact if written else None)
    finally:
        _enqueue_waiting(project_id=project.pk)
    run.refresh_from_db()
    return run


def _run_reward_training(*, run: TrainingRun, t0: float, log: Callable[[str], None] | None) -> TrainingRun:
    """A compare project's run: a Bradley-Terry reward model on its preferences (ml.services.reward),
    activated like a PRM run; the open pairs are then reordered by the model's uncertainty."""
    from ml.services import reward

    project = run.project
    artifact = None
    try:
        metrics, config, artifact, label_count = reward.train_reward_run(run=run, log=log)
        model = reward.load_reward_model(artifact_abspath(artifact))
        scored = reward.score_open_pairs(project=project, model=model)
        generation = _finish_run(
            run=run,
            t0=t0,
            config=config,
            label_count=label_count,
            metrics=metrics,
            artifact=artifact,
            also=lambda: reward.apply_pair_scores(scored),
        )
        if generation is None:
            _held_back(run=run, log=log)
        elif log:
            pairs = f"{len(scored)} open pair{'' if len(scored) == 1 else 's'}"
            log(f"run {run.pk}: reward model active as generation {generation}; {pairs} reordered")
    except Exception:
        _fail_run(run=run, artifact=artifact)
    finally:
        _enqueue_waiting(project_id=project.pk)
    run.refresh_from_db()
    return run


def _finish_run(
    *,
    run: TrainingRun,
    t0: float,
    config: dict[str, Any],
    label_count: int,
    metrics: dict[str, Any],
    artifact: str,
    also: Callable[[], None] | None = None,
) -> int | None:
    """Activate a trained run and mark it succeeded, in one transaction with the project row locked
    (`also` writes what must change with the activation). Returns the new generation, or None when
    a lead activated another run by hand after this one was asked for: the run succeeds but the
    lead's choice stays the active model (`held_back_by` in its metrics; a lead may activate it)."""
    with transaction.atomic():
        locked = _lock_project(run.project_id)
        # The sweeper may have failed this run meanwhile: then it must not activate.
        if not TrainingRun.objects.filter(pk=run.pk, status=JobStatus.RUNNING).exists():
            raise RuntimeError("the run was marked failed while it trained (stale timeout); not activated")
        chosen = _held_back_by(run)
        generation = None
        if chosen is None:
            generation = _activate(run=run, project=locked)
            if also is not None:
                also()
        else:
            metrics = {**metrics, "held_back_by": chosen}
        TrainingRun.objects.filter(pk=run.pk).update(
            status=JobStatus.SUCCEEDED,
            config=config,
            label_count=label_count,
            metrics={**metrics, "duration_seconds": round(time.perf_counter() - t0, 3)},
            artifact_path=artifact,
            finished_at=timezone.now(),
            error="",
        )
    return generation


def _held_back_by(run: TrainingRun) -> int | None:
    """The run a lead activated by hand (a rollback) after `run` was last asked for, if any: the
    lead chose that model knowing what was in flight, and a run that finishes later must not undo
    the choice. A request after the rollback (a retrain, automatic or not) takes over as usual."""
    requested_at = TrainingRun.objects.filter(pk=run.pk).values_list("requested_at", flat=True).first()
    chosen = (
        TrainingRun.objects.filter(
            project_id=run.project_id, is_active=True, activated_by__isnull=False, activated_at__gt=requested_at
        )
        .values_list("pk", flat=True)
        .first()
    )
    return chosen


def _held_back(*, run: TrainingRun, log: Callable[[str], None] | None) -> None:
    """A run that finished after a lead's rollback: its step scores go (only the active model's are
    kept) and the queue keeps the chosen model's order."""
    StepScore.objects.filter(training_run=run).delete()
    if log:
        log(f"run {run.pk}: succeeded, not activated: a lead chose another model while it waited or trained")


def _fail_run(*, run: TrainingRun, artifact: str | None) -> None:
    """Called from an except block: the run failed with its exception; a checkpoint it wrote goes,
    unless the run was activated meanwhile."""
    exc = sys.exc_info()[1]
    config_error = isinstance(exc, ConfigError)  # the deployment's settings, not a bug: the message says it all
    expected = config_error or isinstance(exc, NothingToTrain)
    logger.error("training run %s failed: %s", run.pk, exc, exc_info=not expected)
    # The traceback stays in the worker's log: the run's error is shown to the project's members.
    if config_error:
        error = f"Training config: {exc}"
    elif expected:
        error = str(exc)
    else:
        error = f"{type(exc).__name__}: {exc} (details in the worker's log)"
    TrainingRun.objects.filter(pk=run.pk, status=JobStatus.RUNNING).update(
        status=JobStatus.FAILED, error=error, finished_at=timezone.now()
    )
    if artifact and not TrainingRun.objects.filter(pk=run.pk, is_active=True).exists():
        artifact_abspath(artifact).unlink(missing_ok=True)


def _enqueue_waiting(*, project_id: int) -> None:
    waiting = TrainingRun.objects.filter(project_id=project_id, status=JobStatus.CREATED).order_by("id").first()
    if waiting is not None:
        jobs.send_task(train_model, waiting.pk)


def _activate(*, run: TrainingRun, project: Project, by=None) -> int:
    """Make `run` the project's one active model and advance its generation (in the caller's
    transaction, with the project row locked); `by`: the lead who chose it by hand (a rollback).
    Returns the new generation."""
    TrainingRun.objects.filter(project=project, is_active=True).exclude(pk=run.pk).update(is_active=False)
    TrainingRun.objects.filter(pk=run.pk).update(is_active=True, activated_at=timezone.now(), activated_by=by)
    project.current_generation = F("current_generation") + 1
    project.save(update_fields=["current_generation"])
    project.refresh_from_db(fields=["current_generation"])
    return project.current_generation
