"""The active-learning loop inside the app: training runs, activation, rescoring and rollback.

Flow (DESIGN.md, "The active-learning loop"): `request_retrain` creates a TrainingRun row and
enqueues `ml.tasks.train_model` on commit; `run_training` claims the row (created -> running,
only when no other run of the project is running), builds step examples from the project's
annotations, trains with `ml.prm`, writes the checkpoint atomically under MEDIA_ROOT/models/,
scores every open solution with it, and only then activates it, advances the project's
generation and writes the queue priorities. Any exception marks the run failed with its
traceback; the previous model stays active.

Single flight per project: at most one run is running and at most one waits (status created).
A request while one waits returns the waiting run (`merged`); a request while one runs creates
the waiting run, which the running one enqueues when it finishes. The Project row lock
serializes these decisions (SQLite serializes writers by itself).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Max
from django.utils import timezone

from annotate.models import Annotation, Project, Solution, Step, Strategy
from core import jobs
from core.bulk_insert import insert_rows
from core.models import JobStatus
from ml.models import StepScore, TrainingRun
from ml.prm.config import PRMConfig
from ml.prm.examples import StepExample, examples_from_record
from ml.services_auto import label_total
from ml.tasks import train_model

if TYPE_CHECKING:
    from ml.prm.featurizers import FeatureCache
    from ml.prm.model import PRM


class _LazyPRMLibrary:
    """ml.prm's torch-backed functions, imported on first use: processes that never train or
    score (web workers serving claims, the import command, the admin) do not load torch."""

    def __getattr__(self, name: str) -> Any:
        from ml.prm import featurizers, model, selection, train

        for module in (featurizers, model, selection, train):
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(name)


_lib = _LazyPRMLibrary()

logger = logging.getLogger(__name__)

SCORE_BATCH_SOLUTIONS = 2000  # solutions scored per batch (their steps featurized together)
UPDATE_BATCH = 5000  # solution rows per priority-update transaction (short row locks for claims)
FEATURE_CACHE_MAX_ROWS = 300_000  # per process; past this the cache starts over (memory bound)
STALE_AFTER = timedelta(seconds=int(getattr(settings, "ML_STALE_RUN_SECONDS", 3600)))
# Config keys a caller may override per run (API, command); the rest come from PRMConfig defaults.
CONFIG_KEYS = frozenset(f.name for f in fields(PRMConfig)) - {"extra", "device"}


class NoActiveModel(Exception):
    """The project has no active PRM yet."""


class RunNotActivatable(Exception):
    """Only a succeeded run of the same project, whose artifact exists, can be activated."""


# ---------------------------------------------------------------------------------------------
# Config and examples
# ---------------------------------------------------------------------------------------------


def validate_config(overrides: dict[str, Any]) -> dict[str, Any]:
    """Check per-run training overrides against PRMConfig's fields and their types; ValueError names the key."""
    defaults = {f.name: f.default for f in fields(PRMConfig)}
    for key, value in overrides.items():
        if key == "extra":
            if not isinstance(value, dict):
                raise ValueError("extra: must be an object")
            continue
        if key not in CONFIG_KEYS:
            raise ValueError(f"unknown training config keys: {key}")
        default = defaults[key]
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        elif isinstance(default, float) or default is None:
            ok = (value is None and default is None) or (
                isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
            )
        elif isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, tuple):
            ok = isinstance(value, list | tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        else:
            ok = True
        if not ok:
            raise ValueError(f"{key}: expected a value like {default!r}, got {value!r}")
    return overrides


def training_config(*, overrides: dict[str, Any] | None = None) -> PRMConfig:
    """PRMConfig defaults, then the deployment's defaults (settings.ML_TRAINING_CONFIG, else the
    ML_TRAINING_CONFIG environment variable as JSON), then the run's own overrides."""
    defaults = getattr(settings, "ML_TRAINING_CONFIG", None)
    if defaults is None:
        defaults = json.loads(os.environ.get("ML_TRAINING_CONFIG") or "{}")
    return PRMConfig.from_dict(validate_config({**defaults, **(overrides or {})}))


def build_examples(*, project: Project, up_to_annotation_id: int | None = None) -> list[StepExample]:
    """Every rated completion of every annotation is an example (as PRM800K trains its PRM).

    The stored `label_steps` carry the completions' texts, so a record needs only the problem
    text; problem ids group examples for the train / held-out split.
    """
    qs = Annotation.objects.filter(project=project)
    if up_to_annotation_id is not None:
        qs = qs.filter(id__lte=up_to_annotation_id)
    rows = qs.order_by("id").values_list("id", "solution__problem_id", "solution__problem__text", "label_steps")
    out: list[StepExample] = []
    texts: dict[int, str] = {}  # one string per problem, shared by its examples
    for annotation_id, problem_id, problem_text, label_steps in rows.iterator(chunk_size=2000):
        problem_text = texts.setdefault(problem_id, problem_text)
        record = {"question": {"problem": problem_text}, "label": {"steps": json.loads(label_steps)}}
        out += examples_from_record(record, solution_id=f"a{annotation_id}", problem_id=f"p{problem_id}")
    return out


# ---------------------------------------------------------------------------------------------
# Requesting a run (single flight)
# ---------------------------------------------------------------------------------------------


def _lock_project(project_id: int) -> Project:
    return Project.objects.select_for_update().get(pk=project_id)


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
) -> TrainingRun:
    """A training run for the project's labels so far; never two at once.

    Returns the waiting run when there is one (with `run.merged = True`), else a new one. A new
    run created while another runs waits for it: the running one enqueues it when it finishes.
    `config` overrides training settings for a new run (a merged request keeps the waiting
    run's). The task is enqueued after commit unless `enqueue` is False (`retrain --wait`).
    """
    if config:
        training_config(overrides=config)  # validate before anything is written
    _lock_project(project.pk)
    _fail_stale(project_id=project.pk)
    waiting = TrainingRun.objects.filter(project=project, status=JobStatus.CREATED).order_by("id").first()
    if waiting is not None:
        waiting.merged = True
        return waiting
    extra = {"trigger": trigger, "requested_by": getattr(user, "username", None)}
    run = TrainingRun.objects.create(
        project=project, status=JobStatus.CREATED, config={**(config or {}), "extra": extra}
    )
    run.merged = False
    if enqueue:
        _enqueue(run.pk)
    return run


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


# ---------------------------------------------------------------------------------------------
# Running a run
# ---------------------------------------------------------------------------------------------


def artifact_abspath(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


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
        if not jobs.claim(TrainingRun, run_id, metrics={"annotation_watermark": watermark}):
            return None
    return TrainingRun.objects.select_related("project").get(pk=run_id)


_cache_lock = threading.Lock()
_feature_caches: dict[str, FeatureCache] = {}


def feature_cache(config: PRMConfig) -> FeatureCache:
    """One cache per featurizer per process: steps never change, so their features are reused
    across runs; it starts over past FEATURE_CACHE_MAX_ROWS to bound memory."""
    featurizer = _lib.make_featurizer(config)
    key = json.dumps(featurizer.spec(), sort_keys=True)
    with _cache_lock:
        cache = _feature_caches.get(key)
        if cache is None or len(cache) > FEATURE_CACHE_MAX_ROWS:
            cache = _feature_caches[key] = _lib.FeatureCache(featurizer)
        return cache


def _summary_metrics(checkpoint: dict) -> dict[str, Any]:
    heldout = checkpoint["metrics"].get("heldout") or {}
    keys = ("auroc_negative", "accuracy", "ece", "first_error_f1", "acc_erroneous", "acc_correct")
    return {
        **{k: heldout.get(k) for k in keys},
        "n_examples": checkpoint["label_count"],
        "n_train": checkpoint["n_train"],
        "n_heldout": checkpoint["n_heldout"],
        "n_problems": checkpoint["n_problems"],
        "label_counts": checkpoint["label_counts"],
        "best_epoch": checkpoint["best_epoch"],
        "temperature": checkpoint["temperature"],
        "threshold": checkpoint["threshold"],
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
    try:
        config = training_config(overrides={k: v for k, v in run.config.items() if k != "extra"})
        config.extra = {**config.extra, **(run.config.get("extra") or {}), "run_id": run.pk}
        watermark = run.metrics["annotation_watermark"]
        label_count = label_total(project=project, up_to_annotation_id=watermark)
        examples = build_examples(project=project, up_to_annotation_id=watermark)
        if log:
            log(f"run {run.pk}: {len(examples)} examples from {label_count} step labels")
        cache = feature_cache(config)
        checkpoint = _lib.train_prm(examples, config, cache=cache, log=log)
        t_train = time.perf_counter() - t0
        _lib.save_checkpoint(checkpoint, artifact_abspath(artifact))
        written = True
        prm = _lib.build_prm(checkpoint, cache=cache)
        _remember_prm(run.pk, prm)
        selection = score_open_solutions(project=project, run=run, prm=prm, log=log)
        metrics = {
            "annotation_watermark": watermark,
            **_summary_metrics(checkpoint),
            "train_seconds": round(t_train, 3),
            "score_seconds": selection.seconds,
            "scored_solutions": len(selection.solution_ids),
            "scored_steps": selection.n_steps,
        }
        with transaction.atomic():
            locked = _lock_project(project.pk)
            # The sweeper may have failed this run meanwhile: then it must not activate.
            if not TrainingRun.objects.filter(pk=run.pk, status=JobStatus.RUNNING).exists():
                raise RuntimeError("the run was marked failed while it trained (stale timeout); not activated")
            generation = _activate(run=run, project=locked)
            TrainingRun.objects.filter(pk=run.pk).update(
                status=JobStatus.SUCCEEDED,
                config=config.to_dict(),
                label_count=label_count,
                metrics={**metrics, "duration_seconds": round(time.perf_counter() - t0, 3)},
                artifact_path=artifact,
                finished_at=timezone.now(),
                error="",
            )
        apply_selection(selection=selection, generation=generation)
        _drop_other_scores(project=project, run=run)
        if log:
            log(f"run {run.pk}: active as generation {generation}; {len(selection.solution_ids)} solutions reordered")
    except Exception:
        logger.exception("training run %s failed", run.pk)
        TrainingRun.objects.filter(pk=run.pk, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, error=traceback.format_exc(), finished_at=timezone.now()
        )
        if written and not TrainingRun.objects.filter(pk=run.pk, is_active=True).exists():
            artifact_abspath(artifact).unlink(missing_ok=True)
    finally:
        _enqueue_waiting(project_id=project.pk)
    run.refresh_from_db()
    return run


def _enqueue_waiting(*, project_id: int) -> None:
    waiting = TrainingRun.objects.filter(project_id=project_id, status=JobStatus.CREATED).order_by("id").first()
    if waiting is not None:
        jobs.send_task(train_model, waiting.pk)


def _activate(*, run: TrainingRun, project: Project) -> int:
    """Make `run` the project's one active model and advance its generation (in the caller's
    transaction, with the project row locked). Returns the new generation."""
    TrainingRun.objects.filter(project=project, is_active=True).exclude(pk=run.pk).update(is_active=False)
    TrainingRun.objects.filter(pk=run.pk).update(is_active=True, activated_at=timezone.now())
    project.current_generation = F("current_generation") + 1
    project.save(update_fields=["current_generation"])
    project.refresh_from_db(fields=["current_generation"])
    return project.current_generation


# ---------------------------------------------------------------------------------------------
# Scoring and the queue
# ---------------------------------------------------------------------------------------------


@dataclass
class Selection:
    """Per open solution: new priority and verifier score, from one run with one strategy."""

    run_id: int
    strategy: str
    solution_ids: np.ndarray
    priority: np.ndarray
    score: np.ndarray
    n_steps: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


def _open_solution_ids(project: Project) -> list[int]:
    return list(
        Solution.objects.filter(project=project, is_open=True, is_gold=False, is_screening=False)
        .order_by("id")
        .values_list("id", flat=True)
    )


def _score_batches(*, ids: list[int], prm: PRM) -> Iterator[tuple[list[int], list[int], list[int], Any]]:
    """(solution ids, step counts, step ids, StepScores) per batch of solutions."""
    for start in range(0, len(ids), SCORE_BATCH_SOLUTIONS):
        chunk = ids[start : start + SCORE_BATCH_SOLUTIONS]
        problems = dict(Solution.objects.filter(pk__in=chunk).values_list("id", "problem__text"))
        rows = Step.objects.filter(solution_id__in=chunk).order_by("solution_id", "index")
        items, step_ids, lengths = [], [], {sid: 0 for sid in chunk}
        previous: list[str] = []
        current = None
        for step_id, solution_id, text in rows.values_list("id", "solution_id", "text").iterator(chunk_size=5000):
            if solution_id != current:
                current, previous = solution_id, []
            prev = tuple(previous)
            items.append((problems[solution_id], prev, text))
            step_ids.append(step_id)
            lengths[solution_id] += 1
            previous.append(text)
        # Features straight from the featurizer, not the cache: a million open steps would not fit.
        scores = prm.score_rows(_lib.featurize(prm.featurizer, items)) if items else None
        yield chunk, [lengths[sid] for sid in chunk], step_ids, scores


def score_open_solutions(
    *, project: Project, run: TrainingRun, prm: PRM, log: Callable[[str], None] | None = None
) -> Selection:
    """Score every open regular solution's steps with `prm`; store StepScore rows for `run`;
    return the new priorities by the project's selection strategy (nothing in the queue changes
    yet: see `apply_selection`)."""
    t0 = time.perf_counter()
    config = prm.config or PRMConfig()
    ids = _open_solution_ids(project)
    StepScore.objects.filter(training_run=run).delete()  # a rescore of the same run starts over
    all_ids, prod_l, unc_l = [], [], []
    n_steps = 0
    for chunk, lengths, step_ids, sc in _score_batches(ids=ids, prm=prm):
        if sc is None:
            prod, unc = np.ones(len(chunk)), np.zeros(len(chunk))
        else:
            prod, _ = _lib.solution_scores(sc.p_negative, lengths)
            step_unc = sc.uncertainty(config.uncertainty)
            unc = _lib.roll_up(step_unc, lengths, "max")
            if getattr(settings, "ML_STORE_STEP_SCORES", True):
                insert_rows(
                    StepScore,
                    [
                        {
                            "step_id": sid,
                            "training_run_id": run.pk,
                            "p_negative": float(p[0]),
                            "p_neutral": float(p[1]),
                            "p_positive": float(p[2]),
                            "uncertainty": float(u),
                        }
                        for sid, p, u in zip(step_ids, sc.probs, step_unc, strict=True)
                    ],
                )
        all_ids += chunk
        prod_l.append(prod)
        unc_l.append(unc)
        n_steps += len(step_ids)
        if log:
            log(f"scored {len(all_ids)}/{len(ids)} solutions ({n_steps} steps)")
    score = np.concatenate(prod_l) if prod_l else np.zeros(0)
    unc = np.concatenate(unc_l) if unc_l else np.zeros(0)
    correct = dict(Solution.objects.filter(pk__in=ids).values_list("id", "answer_correct")) if ids else {}
    strategy = project.selection_strategy or Strategy.MIX
    pri = _lib.priorities(
        strategy,
        scores=score,
        answer_correct=[correct.get(i) for i in all_ids],
        solution_uncertainty=unc,
        rng=np.random.default_rng(run.pk),
        n=len(all_ids),
    )
    return Selection(
        run_id=run.pk,
        strategy=strategy,
        solution_ids=np.asarray(all_ids, dtype=np.int64),
        priority=np.asarray(pri, dtype=np.float64),
        score=score,
        n_steps=n_steps,
        seconds=round(time.perf_counter() - t0, 3),
    )


def apply_selection(*, selection: Selection, generation: int) -> int:
    """Write priorities and provenance to the solutions in short transactions; returns rows."""
    table = connection.ops.quote_name(Solution._meta.db_table)
    n = 0
    for start in range(0, len(selection.solution_ids), UPDATE_BATCH):
        ids = selection.solution_ids[start : start + UPDATE_BATCH].tolist()
        pri = selection.priority[start : start + UPDATE_BATCH].tolist()
        score = selection.score[start : start + UPDATE_BATCH].tolist()
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(
                        f"UPDATE {table} AS s SET priority = v.priority, verifier_score = v.score, "
                        "generation = %s, strategy = %s, model_run_id = %s "
                        "FROM unnest(%s::bigint[], %s::float8[], %s::float8[]) AS v(id, priority, score) "
                        "WHERE s.id = v.id",
                        [generation, selection.strategy, selection.run_id, ids, pri, score],
                    )
                    n += cursor.rowcount
            else:
                objs = [
                    Solution(
                        pk=i,
                        priority=p,
                        verifier_score=s,
                        generation=generation,
                        strategy=selection.strategy,
                        model_run_id=selection.run_id,
                    )
                    for i, p, s in zip(ids, pri, score, strict=True)
                ]
                fields_ = ["priority", "verifier_score", "generation", "strategy", "model_run_id"]
                n += Solution.objects.bulk_update(objs, fields_, batch_size=500)
    return n


def _drop_other_scores(*, project: Project, run: TrainingRun) -> None:
    """Keep only the active model's step scores (a rollback rescores with the older model)."""
    StepScore.objects.filter(training_run__project=project).exclude(training_run=run).delete()


def rescore_project(*, project: Project, run: TrainingRun, log: Callable[[str], None] | None = None) -> int:
    """Score the open solutions with `run`'s model and reorder the queue; returns rows updated."""
    prm = load_prm(run=run)
    selection = score_open_solutions(project=project, run=run, prm=prm, log=log)
    project.refresh_from_db(fields=["current_generation"])
    n = apply_selection(selection=selection, generation=project.current_generation)
    _drop_other_scores(project=project, run=run)
    return n


def rollback(*, project: Project, run: TrainingRun) -> TrainingRun:
    """Activate an earlier succeeded run (a new generation), then reorder the queue with it."""
    if run.project_id != project.pk or run.status != JobStatus.SUCCEEDED or not run.artifact_path:
        raise RunNotActivatable(f"Run {run.pk} is {run.status}; only a succeeded run of {project.slug} can be active.")
    if not artifact_abspath(run.artifact_path).exists():
        raise RunNotActivatable(f"Run {run.pk}'s model file is missing.")
    with transaction.atomic():
        locked = _lock_project(project.pk)
        _activate(run=run, project=locked)
    rescore_project(project=project, run=run)
    run.refresh_from_db()
    project.refresh_from_db()
    return run


# ---------------------------------------------------------------------------------------------
# Loading models and the scoring API
# ---------------------------------------------------------------------------------------------

_PRM_CACHE_SIZE = 4
_score_lock = threading.Lock()
_prms: OrderedDict[int, PRM] = OrderedDict()


def _remember_prm(run_id: int, prm: PRM) -> None:
    with _cache_lock:
        _prms[run_id] = prm
        _prms.move_to_end(run_id)
        while len(_prms) > _PRM_CACHE_SIZE:
            _prms.popitem(last=False)


def load_prm(*, run: TrainingRun) -> PRM:
    """The run's PRM, loaded once per process (runs are immutable once succeeded)."""
    with _cache_lock:
        prm = _prms.get(run.pk)
    if prm is None:
        checkpoint = _lib.read_checkpoint(artifact_abspath(run.artifact_path))
        prm = _lib.build_prm(checkpoint)
        _remember_prm(run.pk, prm)
    return prm


def active_run(*, project: Project) -> TrainingRun | None:
    return TrainingRun.objects.filter(project=project, is_active=True).first()


def score_steps(*, project: Project, problem: str, solutions: list[list[str]]) -> dict[str, Any]:
    """Per-step P(+1), P(0), P(-1) and uncertainty, and both solution scores (product of
    P(not -1), minimum), for candidate solutions of one problem under the active model."""
    run = active_run(project=project)
    if run is None:
        raise NoActiveModel(f"Project {project.slug} has no active model yet: train one first.")
    prm = load_prm(run=run)
    items = [(problem, tuple(steps[:i]), step) for steps in solutions for i, step in enumerate(steps)]
    lengths = [len(steps) for steps in solutions]
    with _score_lock:  # one scoring at a time per process: torch already uses every core
        sc = prm.score_rows(_lib.featurize(prm.featurizer, items))
    prod, mins = _lib.solution_scores(sc.p_negative, lengths)
    unc = sc.uncertainty("entropy")
    scored, o = [], 0
    for j, n in enumerate(lengths):
        steps = [
            {"p_positive": float(p[2]), "p_neutral": float(p[1]), "p_negative": float(p[0]), "uncertainty": float(u)}
            for p, u in zip(sc.probs[o : o + n], unc[o : o + n], strict=True)
        ]
        scored.append({"steps": steps, "score_product": float(prod[j]), "score_min": float(mins[j])})
        o += n
    return {"model": {"training_run": run.pk, "generation": project.current_generation}, "solutions": scored}
