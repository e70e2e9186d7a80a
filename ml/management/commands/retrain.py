"""Retrain a project's PRM: queue a run for the ml worker, or with --wait train here and now."""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project, TaskKind
from core.models import JobStatus
from ml import services
from ml.models import TrainingRun


def _prm_summary(metrics: dict) -> str:
    summary = ", ".join(
        f"{k}={metrics[k]:.3f}"
        for k in ("auroc_negative", "accuracy", "ece", "first_error_f1")
        if metrics.get(k) is not None
    )
    return summary or "none (too few problems)"


def _reward_summary(run: TrainingRun) -> tuple[str, str]:
    """A compare project's run: a reward model trained on preferences, measured by held-out
    pairwise accuracy (none of a PRM's metric names, which it read as "too few problems")."""
    trained_on = f"{run.label_count} preference{'' if run.label_count == 1 else 's'}"
    heldout = (run.metrics or {}).get("heldout") or {}
    accuracy, n = heldout.get("pairwise_accuracy"), heldout.get("n_pairs") or 0
    if accuracy is None or not n:
        return trained_on, "none (no held-out pairs)"
    ci = heldout.get("pairwise_accuracy_ci")
    interval = f" (95% interval {ci[0]:.2f}-{ci[1]:.2f})" if ci else ""
    return trained_on, f"pairwise accuracy {accuracy:.3f}{interval} on {n} pair{'' if n == 1 else 's'}"


class Command(BaseCommand):
    help = (
        "Retrain a project's PRM on its labels so far, or a compare project's reward model on its preferences "
        "(single flight: joins a waiting run, or the running one when no label has arrived since it started)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", type=str.lower, required=True, help="Project slug.")
        parser.add_argument("--wait", action="store_true", help="Train in this process and print progress.")
        parser.add_argument("--config", default="", help="Training overrides as JSON, e.g. '{\"max_epochs\": 5}'.")
        parser.add_argument("--timeout", type=float, default=3600.0, help="With --wait: seconds to wait for a run.")

    def handle(self, *args, project: str, wait: bool, config: str, timeout: float, **options) -> None:
        project_obj = Project.objects.filter(slug=project).first()
        if project_obj is None:
            raise CommandError(f"No project with slug {project!r}.")
        try:
            overrides = json.loads(config) if config else None
        except json.JSONDecodeError as exc:  # was "Expecting value: line 1 column 1 (char 0)", naming no option
            raise CommandError(f"--config: not JSON ({exc}); give an object, e.g. '{{\"max_epochs\": 5}}'") from None
        if overrides is not None and not isinstance(overrides, dict):  # was a TypeError traceback
            raise CommandError(f"--config: must be a JSON object, e.g. '{{\"max_epochs\": 5}}', got {config!r}")
        try:
            run = services.request_retrain(project=project_obj, config=overrides, trigger="command", enqueue=not wait)
        except ValueError as exc:  # a ConfigError names its key; ML_TRAINING_CONFIG's own are checked here too
            field = getattr(exc, "field", None)
            where = "--config: " if field in (overrides or {}) else "ML_TRAINING_CONFIG: " if field else ""
            raise CommandError(f"{where}{exc}") from None
        # A merged request joined the waiting run, or the running one when no label came since it started.
        joined = (
            f" (joined the {'waiting' if run.status == JobStatus.CREATED else 'running'} run)" if run.merged else ""
        )
        if not wait:
            self.stdout.write(f"Training run {run.pk} queued for {project}{joined}; the ml worker will train it.")
            return
        self.stdout.write(f"Training run {run.pk} for {project}{joined}: training here.")
        done = services.run_training(run_id=run.pk, log=lambda line: self.stdout.write(f"  {line}"))
        if done is None:
            # Another process holds a run of this project; ours starts when it ends.
            self.stdout.write(f"Another run of {project} is in progress; waiting for run {run.pk}.")
            deadline = time.monotonic() + timeout
            while True:
                done = TrainingRun.objects.get(pk=run.pk)
                if done.status in (JobStatus.SUCCEEDED, JobStatus.FAILED) or time.monotonic() > deadline:
                    break
                time.sleep(2)
        if done.status == JobStatus.SUCCEEDED:
            if done.project.task_kind == TaskKind.COMPARE:
                trained_on, summary = _reward_summary(done)
            else:
                trained_on, summary = f"{done.label_count} step labels", _prm_summary(done.metrics)
            # A lead's rollback while it trained holds the run back (ml.services.runs._held_back_by).
            chosen = done.metrics.get("held_back_by")
            state = (
                f"is active (generation {done.project.current_generation})"
                if done.is_active
                else f"is not active: a lead chose run {chosen} meanwhile (activate it to use it)"
            )
            self.stdout.write(f"Run {done.pk} succeeded on {trained_on} and {state}. Held-out: {summary}.")
        elif done.status == JobStatus.FAILED:
            raise CommandError(f"Run {done.pk} failed:\n{done.error}")
        else:
            raise CommandError(f"Run {done.pk} is still {done.status} after {timeout:.0f}s.")
