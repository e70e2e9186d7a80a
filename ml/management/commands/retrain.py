"""Retrain a project's PRM: queue a run for the ml worker, or with --wait train here and now."""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from annotate.models import Project
from core.models import JobStatus
from ml import services
from ml.models import TrainingRun


class Command(BaseCommand):
    help = (
        "Retrain a project's PRM on its labels so far (single flight: joins a waiting run, or the running "
        "one when no label has arrived since it started)."
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
            run = services.request_retrain(project=project_obj, config=overrides, trigger="command", enqueue=not wait)
        except (ValueError, json.JSONDecodeError) as exc:
            raise CommandError(str(exc)) from None
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
            m = done.metrics
            summary = ", ".join(
                f"{k}={m[k]:.3f}"
                for k in ("auroc_negative", "accuracy", "ece", "first_error_f1")
                if m.get(k) is not None
            )
            self.stdout.write(
                f"Run {done.pk} succeeded on {done.label_count} step labels and is active "
                f"(generation {done.project.current_generation}). Held-out: {summary or 'none (too few problems)'}."
            )
        elif done.status == JobStatus.FAILED:
            raise CommandError(f"Run {done.pk} failed:\n{done.error}")
        else:
            raise CommandError(f"Run {done.pk} is still {done.status} after {timeout:.0f}s.")
