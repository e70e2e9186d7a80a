"""Reads of the model registry for other areas: the dashboard's model section (merged into the
project statistics by labeling_api.views_stats, so the labeling domain never imports ml)."""

from __future__ import annotations

from datetime import datetime

from annotate.models import Project, TaskKind
from core.errors import NotFound
from core.models import JobStatus
from ml.models import TrainingRun
from ml.services_auto import labels_since_last_run

TRAINING_RUNS_SHOWN = 200
# Held-out metrics plotted on the learning curve, when a run reports them.
# pairwise_accuracy: compare projects' reward model (share of held-out pairs ranked as annotators did).
CURVE_METRICS = ("auroc_negative", "accuracy", "first_error_f1", "ece", "pairwise_accuracy")
CURVE_INTERVALS = ("accuracy_ci", "first_error_f1_ci", "pairwise_accuracy_ci")
HELDOUT_MIN_PAIRS = 30
# Below this a held-out score is noise: at 50 steps a 95% interval of accuracy is still ~±0.11 wide.
HELDOUT_MIN_STEPS = 50
HELDOUT_MIN_SOLUTIONS = 10
# Training holds problems out only from this many labeled problems on (ml.prm.train.split_by_problem:
# 4; ml.prm.reward.split_pairs: 2), and then round(heldout_fraction * problems) of them.
SPLIT_MIN_PROBLEMS = {TaskKind.STEPS: 4, TaskKind.COMPARE: 2}
DEFAULT_HELDOUT_FRACTION = {TaskKind.STEPS: 0.15, TaskKind.COMPARE: 0.2}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def run_note(metrics: dict | None) -> str:
    """Why a succeeded run is not the active model, when it finished after a lead's rollback."""
    chosen = (metrics or {}).get("held_back_by")
    if not chosen:
        return ""
    return (
        f"Not activated: a lead made run #{chosen} the active model while this run waited or trained. "
        "Activate this run to use it."
    )


def _heldout(metrics: dict) -> dict:
    """The held-out metrics of a run (ml.prm.train writes {"train": {...}, "heldout": {...}}), with
    the held-out size, the 95% intervals training computed, and whether the set is too small."""
    source = metrics.get("heldout") if isinstance(metrics.get("heldout"), dict) else metrics
    out = {k: source[k] for k in CURVE_METRICS if isinstance(source.get(k), int | float)}
    for size in ("n_steps", "n_solutions", "n_pairs"):
        if isinstance(source.get(size), int):
            out[size] = source[size]
    # the grade-only reader (ml.prm.floor) the PRM's first-error F1 is read against
    if isinstance(source.get("grade_only_f1"), int | float):
        out["grade_only_f1"] = source["grade_only_f1"]
    for ci in CURVE_INTERVALS:
        value = source.get(ci)
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
            out[ci] = value
    if out and "n_pairs" in out:
        out["too_small"] = out["n_pairs"] < HELDOUT_MIN_PAIRS
    elif out and "n_steps" in out:
        out["too_small"] = out["n_steps"] < HELDOUT_MIN_STEPS or out.get("n_solutions", 0) < HELDOUT_MIN_SOLUTIONS
    return out


def model_summary(*, project: Project) -> dict:
    """Runs (newest TRAINING_RUNS_SHOWN, oldest first), the active and latest run, the learning curve."""
    runs = list(
        TrainingRun.objects.filter(project=project)
        .order_by("-id")
        .values(
            "id",
            "status",
            "label_count",
            "metrics",
            "is_active",
            "activated_at",
            "created_at",
            "started_at",
            "finished_at",
            "error",
            "config",
        )[:TRAINING_RUNS_SHOWN]
    )
    runs.reverse()
    shown = []
    for run in runs:
        shown.append(
            {
                "id": run["id"],
                "status": run["status"],
                "label_count": run["label_count"],
                "heldout": _heldout(run["metrics"] or {}),
                "is_active": run["is_active"],
                "activated_at": _iso(run["activated_at"]),
                "created_at": _iso(run["created_at"]),
                "started_at": _iso(run["started_at"]),
                "finished_at": _iso(run["finished_at"]),
                "error": (run["error"] or "").strip().splitlines()[-1][:300] if run["error"] else "",
                "note": run_note(run["metrics"]),
            }
        )
    curve = sorted(
        (r for r in shown if r["status"] == JobStatus.SUCCEEDED and _has_metric(r["heldout"])),
        key=lambda r: r["label_count"],
    )
    latest = shown[-1] if shown else None
    return {
        "active_run": next((r for r in shown if r["is_active"]), None),
        "latest_run": latest,
        "in_progress": any(r["status"] in (JobStatus.CREATED, JobStatus.RUNNING) for r in shown),
        "runs": shown,
        "curve_metrics": [m for m in CURVE_METRICS if any(m in r["heldout"] for r in curve)],
        "learning_curve": [{"run": r["id"], "label_count": r["label_count"], **r["heldout"]} for r in curve],
        "curve_empty": None if curve else _why_no_curve(project=project, runs=runs, shown=shown),
    }


def _has_metric(heldout: dict) -> bool:
    return any(k in heldout for k in CURVE_METRICS)


def _problems_for_a_split(fraction: float, minimum: int) -> int | None:
    """The fewest labeled problems from which training holds one out at this fraction (None: never)."""
    if fraction <= 0:
        return None
    return next((n for n in range(minimum, 100_000) if round(fraction * n) >= 1), None)


def _why_no_curve(*, project: Project, runs: list[dict], shown: list[dict]) -> dict:
    """Why the learning curve is empty and what to do, as a reason code and a sentence for the lead."""
    compare = project.task_kind == TaskKind.COMPARE
    labels = "preferences" if compare else "step labels"
    if project.retrain_every:
        # A compare project's runs count preferences only (the exact count, as the trigger reads it):
        # the cheap counter also holds the step labels imported with its solutions.
        since = labels_since_last_run(project=project) if compare else project.step_labels_since_run
        # imported labels count too, but only a submit checks the threshold
        due = "; the next submitted label starts one" if since >= project.retrain_every else ""
        when = (
            f"Runs start by themselves after every {project.retrain_every} new {labels} "
            f"({since} since the last run{due})"
        )
    else:
        when = "Automatic retraining is off (retrain every 0 in the project's settings)"
    if not shown:
        return {"reason": "no_runs", "message": f"No training run yet. {when}; or press Retrain now."}
    succeeded = [(r, raw) for r, raw in zip(shown, runs, strict=True) if r["status"] == JobStatus.SUCCEEDED]
    if not succeeded:
        latest = shown[-1]
        if latest["status"] in (JobStatus.CREATED, JobStatus.RUNNING):
            return {
                "reason": "training",
                "message": f"Run #{latest['id']} is training: its held-out metrics appear here when it finishes.",
            }
        # the error itself is under "latest run" and in the runs table: not a third time here
        return {
            "reason": "failed",
            "message": f"No run has succeeded yet: run #{latest['id']} failed. Its error is in the runs "
            "table below; fix the cause, then retrain.",
        }
    run, raw = succeeded[-1]
    config = raw["config"] or {}
    metrics = raw["metrics"] or {}
    kind = TaskKind.COMPARE if compare else TaskKind.STEPS
    fraction = config.get("heldout_fraction", DEFAULT_HELDOUT_FRACTION[kind])
    if not isinstance(fraction, int | float) or fraction <= 0:
        return {
            "reason": "heldout_off",
            "message": (
                f"Run #{run['id']} held nothing out: its training setting heldout_fraction is {fraction} "
                "(ML_TRAINING_CONFIG, or the config of the run's request). Set it above 0 (the default is "
                f"{DEFAULT_HELDOUT_FRACTION[kind]}) and retrain."
            ),
        }
    problems = metrics.get("n_problems")
    need = _problems_for_a_split(fraction, SPLIT_MIN_PROBLEMS[kind])
    holdable = metrics.get("n_problems_holdable")
    if isinstance(holdable, int) and isinstance(problems, int) and holdable < problems:
        # a warm start: automatic labels train but are never held out, so "38 problems: too few"
        # (of 4 needed) read as nonsense
        return {
            "reason": "too_few_problems",
            "message": (
                f"Run #{run['id']} trained on {problems} problems, {problems - holdable} of them with automatic "
                f"labels only, which are never held out. Held-out metrics need people's {labels} on at least "
                f"{need} problems (this run had them on {holdable}). Label solutions of more problems, then "
                'retrain (with auto_labels "add" to keep the automatic labels in training).'
            ),
        }
    had = f"labels of {problems} problem{'' if problems == 1 else 's'}" if isinstance(problems, int) else "its labels"
    return {
        "reason": "too_few_problems",
        "message": (
            f"Run #{run['id']} trained on {had}: too few to hold any out for testing. Held-out metrics need "
            f"{labels} on at least {need} problems (heldout_fraction {fraction} of the problems is held out, "
            "whole problems at a time). Label solutions of more problems, then retrain."
        ),
    }


def runs_of(*, project: Project, limit: int = TRAINING_RUNS_SHOWN):
    """The project's training runs, newest first."""
    return TrainingRun.objects.filter(project=project).select_related("project").order_by("-id")[:limit]


def run_of(*, project: Project, run_id: int) -> TrainingRun:
    """One training run of the project; NotFound for another project's or a missing one."""
    run = TrainingRun.objects.select_related("project").filter(pk=run_id, project=project).first()
    if run is None:
        raise NotFound("No such training run in this project.")
    return run


def waiting_runs(*, project_ids) -> int:
    """Training runs not yet started in these projects."""
    return TrainingRun.objects.filter(project__in=project_ids, status=JobStatus.CREATED).count()
