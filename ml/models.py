"""Model registry rows: training runs (one active per project) and per-step scores."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from core.models import JobStatus


class TrainingRun(models.Model):
    project = models.ForeignKey("annotate.Project", on_delete=models.CASCADE, related_name="training_runs")
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.CREATED)
    config = models.JSONField(default=dict, blank=True)
    # Who asked for the run: for leads in the admin only. Never in `config`, which ML engineers read.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    label_count = models.PositiveIntegerField(default=0, help_text="Step labels the run trained on.")
    metrics = models.JSONField(default=dict, blank=True)
    artifact_path = models.CharField(max_length=500, blank=True)
    # When the run was last asked for: created, or joined by a later request. A lead's hand
    # activation (a rollback) after it keeps the run from taking over when it finishes.
    requested_at = models.DateTimeField(default=timezone.now)
    is_active = models.BooleanField(default=False)
    activated_at = models.DateTimeField(null=True, blank=True)
    # The lead who made this run active by hand (a rollback); null when it activated on finishing.
    # For the admin only, like requested_by.
    activated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project"], condition=models.Q(is_active=True), name="one_active_model_per_project"
            ),
        ]

    def __str__(self) -> str:
        return f"training run {self.pk} of {self.project.slug} ({self.status})"


class StepScore(models.Model):
    """The active model's view of one step: P(+1), P(0), P(-1) and its uncertainty."""

    step = models.ForeignKey("annotate.Step", on_delete=models.CASCADE, related_name="scores")
    training_run = models.ForeignKey(TrainingRun, on_delete=models.CASCADE, related_name="step_scores")
    p_positive = models.FloatField()
    p_neutral = models.FloatField()
    p_negative = models.FloatField()
    uncertainty = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["training_run", "step"], name="uniq_step_score")]

    def __str__(self) -> str:
        return f"score of step {self.step_id} by run {self.training_run_id}"
