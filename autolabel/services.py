"""Autolabel jobs: Monte Carlo step labels for a project's open solutions, resumable and budgeted.

The job pattern of the project (core.jobs): a status row first, the Celery message
after commit, the task claims the row with a conditional update (created -> running). Every
rollout result is stored the moment it arrives (AutoStepLabel, unique per solution, step and
source), so a worker killed mid-job loses only the requests in flight: the sweep puts a job whose
heartbeat went stale back to `created`, and the next run resumes each solution's search from the
stored estimates. Completions are reserved from the project's budget before each request.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import Project
from autolabel.endpoint_policy import EndpointRefused, check_base_url
from autolabel.models import AutolabelJob, AutolabelSettings, AutolabelStatus, SearchMode
from autolabel.rollouts import EndpointError
from autolabel.runner import BudgetExhausted, JobLost, Runner, candidates
from autolabel.tasks import run_autolabel
from core import jobs
from core.errors import Conflict
from core.models import JobStatus

logger = logging.getLogger(__name__)


class AutolabelOptionError(ValueError):
    """Bad job options: `errors` names each one (field -> message); `field` and `message` are the first's."""

    def __init__(self, field_name: str, message: str, *, more: dict[str, str] | None = None) -> None:
        self.errors = {field_name: message, **(more or {})}
        super().__init__("; ".join(f"{name}: {text}" for name, text in self.errors.items()))
        self.field = field_name
        self.message = message


LIMITS = {"rollouts": (1, 64), "max_tokens": (1, 32768), "concurrency": (1, 256)}


def validate_options(options: dict[str, Any]) -> dict[str, Any]:
    """Check a job's options (from the command or the API); raise AutolabelOptionError naming every
    bad one at once (the first alone sent a lead with three wrong fields through three refusals)."""
    clean: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name in ("base_url", "model"):
        value = options.get(name)
        if not isinstance(value, str) or not value.strip():
            errors[name] = "required"
        else:
            clean[name] = value.strip()
    if "base_url" in clean and not clean["base_url"].startswith(("http://", "https://")):
        errors["base_url"] = f"must start with http:// or https://, got {clean['base_url']!r}"
    elif "base_url" in clean:
        try:
            check_base_url(clean["base_url"])
        except EndpointRefused as exc:
            errors["base_url"] = str(exc)
    for name, (low, high) in LIMITS.items():
        value = options.get(name, AutolabelJob._meta.get_field(name).default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            errors[name] = f"must be an integer in [{low}, {high}], got {value!r}"
        clean[name] = value
    temperature = options.get("temperature", 0.7)
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
        errors["temperature"] = f"must be a number in [0, 2], got {temperature!r}"
    else:
        clean["temperature"] = float(temperature)
    mode = options.get("search", SearchMode.BINARY)
    if mode not in SearchMode.values:
        errors["search"] = f"must be one of {', '.join(SearchMode.values)}, got {mode!r}"
    clean["search"] = mode
    if errors:
        (first, message), *rest = errors.items()
        raise AutolabelOptionError(first, message, more=dict(rest))
    return clean


class JobInProgress(Conflict):
    """A project labels with one job at a time: a second one started beside it found its solutions
    taken and "succeeded" with 0 of 0, hiding the first's result on the dashboard."""


class JobEnded(Conflict):
    """A stop asked of a job that had already succeeded or failed."""


@transaction.atomic
def cancel_job(*, job: AutolabelJob) -> AutolabelJob:
    """Stop a waiting or running job (a lead changed their mind, or it spends too much): the row
    becomes `cancelled` at once, and the run that holds it stops at its next heartbeat (within
    HEARTBEAT_S, once the requests in flight return). Every label stored so far stays, and a new
    job resumes from them. Stopping a stopped job returns it as it is (a second click);
    one that succeeded or failed raises JobEnded."""
    Project.objects.select_for_update().filter(pk=job.project_id).first()  # as create_job: one decision at a time
    job.refresh_from_db()
    if job.status == AutolabelStatus.CANCELLED:
        return job
    if job.status not in (AutolabelStatus.CREATED, AutolabelStatus.RUNNING):
        raise JobEnded(f"autolabel job {job.pk} already {job.status}: there is nothing to stop")
    AutolabelJob.objects.filter(pk=job.pk).update(status=AutolabelStatus.CANCELLED, finished_at=timezone.now())
    job.refresh_from_db()
    return job


@transaction.atomic
def create_job(*, project: Project, user, options: dict[str, Any]) -> AutolabelJob:
    """A new job (status created), enqueued after commit. Raises AutolabelOptionError, also when
    no solution can be rolled out (a job that would succeed having done nothing says nothing), and
    JobInProgress while another job of the project waits or runs."""
    clean = validate_options(options)
    Project.objects.select_for_update().filter(pk=project.pk).first()  # one decision at a time per project
    going = AutolabelJob.objects.filter(project=project, status__in=(JobStatus.CREATED, JobStatus.RUNNING)).first()
    if going is not None:
        raise JobInProgress(
            f"autolabel job {going.pk} is {going.status} on this project ({going.solutions_done}/"
            f"{going.solutions_total} solutions): one job at a time, start the next once it ends"
        )
    if not candidates(project=project).exists():
        raise AutolabelOptionError(
            "solutions",
            "nothing to label: rollouts need open solutions whose problem has a ground-truth answer and whose "
            "steps are not all rollout-labeled yet, and this project has none",
        )
    budget, _ = AutolabelSettings.objects.get_or_create(project=project)
    if budget.completions_used >= budget.completions_budget:  # the job would fail at its first request
        raise AutolabelOptionError(
            "budget",
            f"the project's completion budget is spent ({budget.completions_used}/{budget.completions_budget} "
            "used): raise it in the admin (Autolabel settings) or with autolabel --budget N",
        )
    job = AutolabelJob.objects.create(project=project, requested_by=user, **clean)
    jobs.enqueue_on_commit(run_autolabel, job.pk)
    return job


def run_job(*, job_id: int) -> AutolabelJob | None:
    """Claim a created job and run it to the end; return it, or None when it was not ours to run."""
    now = timezone.now()
    token = uuid.uuid4().hex
    # a restarted job resumes from its stored results, so it keeps its first start
    claimed = jobs.claim(
        AutolabelJob, job_id, started_at=Coalesce(F("started_at"), now), heartbeat_at=now, error="", claim=token
    )
    if not claimed:
        return None
    job = AutolabelJob.objects.select_related("project").get(pk=job_id)
    try:
        Runner(job, token).run()
    except JobLost:
        if AutolabelJob.objects.filter(pk=job_id, status=AutolabelStatus.CANCELLED).exists():
            logger.info("autolabel job %s was stopped by a lead; what it stored stays", job_id)
        else:
            logger.warning("autolabel job %s was taken over by another run; this one stops", job_id)
        return None
    except (EndpointError, BudgetExhausted) as exc:
        _finish(job, token, JobStatus.FAILED, error=str(exc))
    except Exception as exc:
        _finish(job, token, JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    else:
        _finish(job, token, JobStatus.SUCCEEDED)
    job.refresh_from_db()
    return job


def _finish(job: AutolabelJob, token: str, status: str, *, error: str = "") -> None:
    AutolabelJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING, claim=token).update(
        status=status, error=error[:5000], finished_at=timezone.now()
    )


def sweep(*, stale_after: timedelta | None = None) -> int:
    """Re-send jobs that never reached a worker; restart running ones whose heartbeat went stale.

    Listed in settings.JOB_SWEEPERS (core.jobs.sweep_all). A restarted job resumes from its stored results.
    """
    stale = stale_after if stale_after is not None else timedelta(seconds=settings.AUTOLABEL_STALE_SECONDS)
    return jobs.requeue_stale(
        model=AutolabelJob,
        task=run_autolabel,
        created_after=min(stale, timedelta(minutes=1)),
        running_after=stale,
        started_field="heartbeat_at",
    )
