"""`manage.py autolabel --project SLUG --base-url URL --model NAME [--wait]`: Monte Carlo step labels."""

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Project
from autolabel import services
from autolabel.models import AutolabelJob, AutolabelSettings, AutolabelStatus, SearchMode


def progress_counts(job: AutolabelJob) -> str:
    return (
        f"{job.solutions_done}/{job.solutions_total} solutions, {job.steps_labeled} steps labeled, "
        f"{job.completions_used} completions in {job.requests_done} requests"
        + (f", {job.retries} retries" if job.retries else "")
    )


def progress_line(job: AutolabelJob) -> str:
    return f"job {job.pk} {job.status}: {progress_counts(job)}"


POLL_S = 0.5


def worker_note_due(waited: float) -> bool:
    """Whether to say, after `waited` seconds, that no worker has taken the job: once every 30 s
    (`int(waited) % 30` held for two polls, 60.0 and 60.5, and the line came twice)."""
    return waited >= 30 and waited % 30 < POLL_S


class Command(BaseCommand):
    help = (
        "Label the steps of a project's open solutions (with a ground-truth answer) by Monte Carlo rollouts "
        "from an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp, TGI)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", type=str.lower, required=True, help="Project slug.")
        parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8001/v1 (POST {url}/completions).")
        parser.add_argument("--model", required=True, help="The model name the server serves.")
        parser.add_argument("--rollouts", type=int, default=8, help="Completions per step prefix (N).")
        parser.add_argument("--max-tokens", type=int, default=1024)
        parser.add_argument("--temperature", type=float, default=0.7)
        parser.add_argument("--concurrency", type=int, default=16, help="Requests in flight at most.")
        parser.add_argument(
            "--search",
            choices=SearchMode.values,
            default=SearchMode.BINARY,
            help="binary: find the first zero-estimate step by binary search (OmegaPRM); full: every step.",
        )
        parser.add_argument("--budget", type=int, help="Set the project's completion budget (total, all jobs).")
        parser.add_argument("--wait", action="store_true", help="Block until the job ends; exit non-zero if it failed.")
        parser.add_argument("--here", action="store_true", help="Run the job in this process instead of a worker.")

    def handle(self, *args, project: str, budget: int | None, wait: bool, here: bool, **options) -> None:
        project_obj = Project.objects.filter(slug=project).first()
        if project_obj is None:
            raise CommandError(f"No project with slug {project!r}.")
        fields = ("base_url", "model", "rollouts", "max_tokens", "temperature", "concurrency", "search")
        job_options = {k: options[k] for k in fields}
        try:
            if budget is not None:
                if budget < 0:
                    raise CommandError("--budget must be 0 or more completions")
                # the options first: a refused command changes nothing (it set the budget, then failed)
                services.validate_options(job_options)
                AutolabelSettings.objects.update_or_create(project=project_obj, defaults={"completions_budget": budget})
            job = services.create_job(project=project_obj, user=None, options=job_options)
        except services.AutolabelOptionError as exc:
            raise CommandError(
                "; ".join(f"--{name.replace('_', '-')}: {message}" for name, message in exc.errors.items())
            ) from None
        except services.JobInProgress as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Autolabel job {job.pk} for {project}: {options['model']} at {options['base_url']}.")
        if here:
            services.run_job(job_id=job.pk)
        elif not wait:
            self.stdout.write(f"Queued; follow it with GET /api/v1/autolabel-jobs/{job.pk}/ or the dashboard.")
            return
        last = ""
        waited = 0.0
        while True:
            job.refresh_from_db()
            line = progress_line(job)
            if line != last:
                self.stdout.write(f"  {line}")
                last = line
            if job.status in (AutolabelStatus.SUCCEEDED, AutolabelStatus.FAILED, AutolabelStatus.CANCELLED):
                break
            if job.status == AutolabelStatus.CREATED and worker_note_due(waited):
                self.stdout.write("  still waiting for a worker (start one, or use --here)")
            time.sleep(POLL_S)
            waited += POLL_S
        if job.status == AutolabelStatus.FAILED:
            raise CommandError(f"Autolabel job {job.pk} failed: {job.error}")
        if job.status == AutolabelStatus.CANCELLED and job.started_at is None:
            raise CommandError(f"Autolabel job {job.pk} was stopped before a worker took it; nothing was labeled.")
        if job.status == AutolabelStatus.CANCELLED:
            raise CommandError(
                f"Autolabel job {job.pk} was stopped: {progress_counts(job)}; the labels it stored stay."
            )
        self.stdout.write(self.style.SUCCESS(f"Autolabel job {job.pk} succeeded: {progress_counts(job)}."))
