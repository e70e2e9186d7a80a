"""Automatic step labels, kept apart from human annotations.

Human labels live in annotate.Annotation; nothing here is ever read by the queue, the dashboard's
annotator statistics, agreement or the PRM800K export, so automatic labels cannot be counted as
human ones by accident. They come from two sources: Math-Shepherd lines imported with their `+`/`-`
tags, and Monte Carlo rollouts against a completions server (AutolabelJob).
"""

from django.conf import settings
from django.db import models

from annotate.models import Solution
from core.models import JobStatus


class AutoSource(models.TextChoices):
    MATH_SHEPHERD = "math_shepherd", "Math-Shepherd tags (imported)"
    ROLLOUT = "rollout", "Monte Carlo rollouts (autolabel job)"


class AutolabelStatus(models.TextChoices):
    """The job pattern's statuses (core.models.JobStatus, same values) and `cancelled`: a lead
    stopped the job. Only an autolabel job can be stopped: it runs for hours against a model
    server, where an import, export or training run ends within minutes."""

    CREATED = JobStatus.CREATED.value, JobStatus.CREATED.label
    RUNNING = JobStatus.RUNNING.value, JobStatus.RUNNING.label
    FAILED = JobStatus.FAILED.value, JobStatus.FAILED.label
    SUCCEEDED = JobStatus.SUCCEEDED.value, JobStatus.SUCCEEDED.label
    CANCELLED = "cancelled", "Stopped"


class SearchMode(models.TextChoices):
    BINARY = "binary", "Binary search for the first zero-estimate step (OmegaPRM)"
    FULL = "full", "Every step (Math-Shepherd)"


class AutoStepLabel(models.Model):
    """One step's automatic label. Unique per (solution, step, source): a step is never labeled twice."""

    solution = models.ForeignKey("annotate.Solution", on_delete=models.CASCADE, related_name="auto_labels")
    index = models.PositiveIntegerField(help_text="The step's index in the solution (0-based).")
    source = models.CharField(max_length=16, choices=AutoSource.choices)
    label = models.SmallIntegerField(help_text="+1 or -1 (hard label: +1 when any completion reached the answer).")
    estimate = models.FloatField(null=True, blank=True, help_text="Share of completions reaching the answer.")
    n_completions = models.PositiveIntegerField(default=0)
    n_correct = models.PositiveIntegerField(default=0)
    # True when the label was inferred (binary search, or a graded final answer), not measured here.
    inferred = models.BooleanField(default=False)
    job = models.ForeignKey("AutolabelJob", null=True, blank=True, on_delete=models.SET_NULL, related_name="labels")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["solution_id", "source", "index"]
        constraints = [
            models.UniqueConstraint(fields=["solution", "index", "source"], name="uniq_auto_step_label"),
            models.CheckConstraint(condition=models.Q(label__in=[1, -1]), name="auto_label_sign"),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.label:+d} on step {self.index} of solution {self.solution_id}"


class MathShepherdRecord(models.Model):
    """An imported Math-Shepherd line: its task, and what a canonical rebuild would miss (`shape`)."""

    solution = models.OneToOneField("annotate.Solution", on_delete=models.CASCADE, related_name="math_shepherd")
    task = models.CharField(max_length=100, blank=True)
    # JSON text (key order matters): null for lines our writer reproduces byte for byte.
    shape = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Math-Shepherd line of solution {self.solution_id}"


def default_budget() -> int:
    return settings.AUTOLABEL_DEFAULT_BUDGET


class AutolabelSettings(models.Model):
    """A project's automatic-labeling settings: the completion budget that jobs reserve from before
    each request, and whether the queue serves first where automatic labels and the PRM disagree."""

    project = models.OneToOneField("annotate.Project", on_delete=models.CASCADE, related_name="autolabel_settings")
    completions_budget = models.PositiveBigIntegerField(default=default_budget)
    completions_used = models.PositiveBigIntegerField(default=0)
    disagreement_first = models.BooleanField(
        default=False,
        help_text="Queue: after each retrain, serve first the solutions whose automatic labels the PRM disagrees "
        "with most (then the project's selection strategy orders the rest).",
    )

    class Meta:
        verbose_name_plural = "autolabel settings"

    def __str__(self) -> str:
        return f"{self.completions_used}/{self.completions_budget} completions for {self.project_id}"


class AutolabelJob(models.Model):
    """A Monte Carlo labeling run over a project's open solutions (the project's job pattern)."""

    project = models.ForeignKey("annotate.Project", on_delete=models.CASCADE, related_name="autolabel_jobs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=16, choices=AutolabelStatus.choices, default=AutolabelStatus.CREATED)
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    rollouts = models.PositiveSmallIntegerField(default=8)
    max_tokens = models.PositiveIntegerField(default=1024)
    temperature = models.FloatField(default=0.7)
    concurrency = models.PositiveSmallIntegerField(default=16)
    search = models.CharField(max_length=8, choices=SearchMode.choices, default=SearchMode.BINARY)
    solutions_total = models.PositiveIntegerField(default=0)
    solutions_done = models.PositiveIntegerField(default=0)
    steps_labeled = models.PositiveIntegerField(default=0)
    requests_done = models.PositiveIntegerField(default=0)
    completions_used = models.PositiveIntegerField(default=0)
    retries = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last progress; the sweep restarts stale jobs."
    )
    # The run that holds the job: a run whose job was swept and claimed again stops at its next write.
    claim = models.CharField(max_length=32, blank=True, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "-id"], name="autolabel_job_project_idx")]

    def __str__(self) -> str:
        return f"autolabel job {self.pk} ({self.status})"


class AutoLabeledSolution(Solution):
    """A solution seen from its labels: the admin's side-by-side view of human and automatic labels."""

    class Meta:
        proxy = True
        verbose_name = "solution labels (human and automatic)"
        verbose_name_plural = "solution labels (human and automatic)"
