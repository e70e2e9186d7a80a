"""Compare projects: pairs of solutions of one problem (Comparison) and an annotator's preference
between them (Preference). Served through the same Assignment rows, leases and idempotency as
step labels (annotate.services.compare)."""

from django.conf import settings
from django.db import models

from annotate.models.labels import Assignment
from annotate.models.problems import Problem, Solution
from annotate.models.projects import Project


class PairReason(models.TextChoices):
    # Why the pair was made, most informative first (annotate.services.compare.pairs).
    ANSWERS_DIFFER = "answers_differ", "One graded right, one wrong"
    FINAL_DIFFERS = "final_differs", "Different final answers"
    CLOSE_SCORES = "close_scores", "Close model scores"
    OTHER = "other", "Other"


class PreferenceChoice(models.TextChoices):
    A = "A", "A is better"
    B = "B", "B is better"
    TIE = "tie", "Tie"


class Comparison(models.Model):
    """Two solutions of one problem; `solution_a` has the lower id. Queue state as on Solution."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="comparisons")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="comparisons")
    solution_a = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="+")
    solution_b = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=16, choices=PairReason.choices, default=PairReason.OTHER)
    priority = models.FloatField(default=0.0)
    is_open = models.BooleanField(default=True)
    annotation_count = models.PositiveIntegerField(default=0)
    # Gold pairs: the lead's known answer, in terms of solution_a / solution_b (A = solution_a).
    is_gold = models.BooleanField(default=False)
    gold_preference = models.CharField(max_length=3, choices=PreferenceChoice.choices, blank=True)
    # The reward model's P(solution_a preferred) when it ordered the queue (null before any model).
    model_probability = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["solution_a", "solution_b"], name="uniq_comparison_pair"),
            models.CheckConstraint(condition=models.Q(solution_a__lt=models.F("solution_b")), name="comparison_order"),
        ]
        indexes = [
            models.Index(
                fields=["project", "-priority", "id"], name="comparison_queue_idx", condition=models.Q(is_open=True)
            ),
        ]

    def __str__(self) -> str:
        return f"comparison {self.pk}: {self.solution_a_id} vs {self.solution_b_id}"


class Preference(models.Model):
    """One annotator's answer on one comparison.

    `preferred` is in terms of the pair (A = solution_a), `shown` as the annotator saw it (A = the
    left candidate); the two differ exactly when the assignment was swapped (position bias)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="preferences")
    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="preferences")
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="preference"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="preferences"
    )
    labeler_uuid = models.CharField(max_length=64, db_index=True)
    preferred = models.CharField(max_length=3, choices=PreferenceChoice.choices)
    shown = models.CharField(max_length=3, choices=PreferenceChoice.choices)
    swapped = models.BooleanField(default=False)
    strength = models.PositiveSmallIntegerField(default=1)
    note = models.TextField(blank=True)
    # "First wrong step" markers, by side of the pair (index into that solution's steps), or null.
    first_wrong_a = models.IntegerField(null=True, blank=True)
    first_wrong_b = models.IntegerField(null=True, blank=True)
    total_time_ms = models.BigIntegerField(null=True, blank=True)
    is_gold = models.BooleanField(default=False)
    idempotency_key = models.CharField(max_length=100)
    submitted_at = models.DateTimeField()
    # Numbered by the first export after it committed (annotate.services.exports.sequence), so an
    # incremental export (`since`) never skips a preference that was still in flight.
    export_seq = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "idempotency_key"], name="uniq_preference_idempotency"),
        ]
        indexes = [
            models.Index(fields=["project", "id"], name="preference_export_idx"),
            models.Index(fields=["project", "export_seq"], name="preference_export_seq_idx"),
        ]

    def __str__(self) -> str:
        return f"preference {self.pk}: {self.preferred} on comparison {self.comparison_id}"
