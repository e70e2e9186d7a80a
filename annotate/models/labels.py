"""Claims (assignments, held by leases) and finished labelings (annotations in PRM800K form)."""

from django.conf import settings
from django.db import models

from annotate.models.choices import AnnotationSource, AssignmentStatus, FinishReason
from annotate.models.problems import Solution
from annotate.models.projects import Project


class Assignment(models.Model):
    """One annotator's claim on one solution, held by a lease that heartbeats extend."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    solution = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE)
    lease_expires_at = models.DateTimeField()
    draft = models.JSONField(null=True, blank=True, help_text="Work in progress, saved as the annotator works.")
    generation = models.IntegerField(null=True, blank=True)
    strategy = models.CharField(max_length=32, blank=True)
    verifier_score = models.FloatField(null=True, blank=True)
    # Compare projects: the pair served (its solution_a is `solution`), and whether the candidates
    # were shown as (b, a): drawn per assignment and kept, so position bias can be measured.
    comparison = models.ForeignKey(
        "annotate.Comparison", null=True, blank=True, on_delete=models.CASCADE, related_name="assignments"
    )
    swapped = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["solution", "annotator"],
                name="uniq_assignment_per_annotator",
                condition=models.Q(comparison__isnull=True),
            ),
            models.UniqueConstraint(
                fields=["comparison", "annotator"],
                name="uniq_comparison_assignment",
                condition=models.Q(comparison__isnull=False),
            ),
        ]
        indexes = [models.Index(fields=["project", "annotator", "status"], name="assignment_owner_idx")]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.status})"


class Annotation(models.Model):
    """A finished labeling of one solution: the PRM800K record's `label` plus its metadata."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations")
    solution = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="annotations")
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="annotation"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="annotations"
    )
    labeler_uuid = models.CharField(max_length=64, db_index=True, help_text="Pseudonymous labeler id.")
    source = models.CharField(max_length=8, choices=AnnotationSource.choices, default=AnnotationSource.APP)
    submitted_at = models.DateTimeField(db_index=True)
    # The timestamp exactly as imported, so it exports back byte for byte.
    timestamp_text = models.CharField(max_length=40, blank=True)
    generation = models.IntegerField(null=True, blank=True)
    is_quality_control = models.BooleanField(default=False)
    is_screening = models.BooleanField(default=False)
    is_gold = models.BooleanField(default=False)
    verifier_score = models.FloatField(null=True, blank=True, help_text="PRM score when the solution was served.")
    finish_reason = models.CharField(max_length=16, choices=FinishReason.choices)
    finish_note = models.TextField(blank=True, help_text="The annotator's reason for give_up / bad_problem.")
    total_time_ms = models.BigIntegerField(null=True, blank=True)
    # PRM800K `label.steps` as JSON text (order kept): [{completions, human_completion, chosen_completion}].
    label_steps = models.TextField()
    # How an imported record departs from the canonical PRM800K layout (key order, an unusual
    # question object), so it exports back exactly; null for canonical records and app labels.
    # JSON text, not jsonb: PostgreSQL's jsonb would reorder the keys we keep it for.
    shape = models.TextField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=100, null=True, blank=True)
    # A compare project's first-wrong-step mark that made this label (annotate.services.compare.marks):
    # the label goes with that preference, however it is deleted, leaving a tombstone as any label.
    preference = models.ForeignKey(
        "annotate.Preference",
        null=True,
        blank=True,
        editable=False,
        on_delete=models.CASCADE,
        related_name="mark_labels",
        db_index=False,  # annotation_mark_idx: the few marked rows only
    )
    source_hash = models.CharField(max_length=64, null=True, blank=True, help_text="Dedupe key of imports.")
    # Position in the project's export order, stamped when an export first sees the committed row,
    # so `since` cursors neither skip a late-committing label nor repeat one.
    export_seq = models.BigIntegerField(null=True, blank=True)
    # Counters derived from label_steps (main line = the chosen or first completion of each step).
    n_label_steps = models.PositiveIntegerField(default=0)
    n_positive = models.PositiveIntegerField(default=0)
    n_neutral = models.PositiveIntegerField(default=0)
    n_negative = models.PositiveIntegerField(default=0)
    n_unrated = models.PositiveIntegerField(default=0)
    n_flagged = models.PositiveIntegerField(default=0)
    n_alternatives = models.PositiveIntegerField(default=0)
    first_error_index = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "source_hash"],
                name="uniq_annotation_import",
                condition=models.Q(source_hash__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["annotator", "idempotency_key"],
                name="uniq_annotation_idempotency",
                condition=models.Q(idempotency_key__isnull=False),
            ),
        ]
        indexes = [
            models.Index(fields=["project", "id"], name="annotation_export_idx"),
            models.Index(fields=["project", "export_seq"], name="annotation_export_seq_idx"),
            # The workspace side panel: one annotator's labels today.
            models.Index(fields=["annotator", "project", "submitted_at"], name="annotation_annotator_day_idx"),
            # Dashboard (annotate.selectors.stats): every aggregate reads the counters from this index
            # (index-only scans, never the wide label JSON rows); time windows are ranges on it.
            models.Index(
                fields=["project", "submitted_at"],
                name="annotation_stats_idx",
                include=["annotator", "generation", "finish_reason", "is_gold", "is_quality_control", "is_screening"]
                + ["n_label_steps", "n_positive", "n_neutral", "n_negative", "n_unrated", "n_flagged"]
                + ["n_alternatives", "total_time_ms"],
            ),
            # A preference's deletion finds the labels its marks made (a cascade).
            models.Index(
                fields=["preference"], name="annotation_mark_idx", condition=models.Q(preference__isnull=False)
            ),
            models.Index(
                fields=["project", "-id"],
                name="annotation_gold_answers_idx",
                condition=models.Q(is_quality_control=True) | models.Q(is_screening=True),
            ),
        ]

    def __str__(self) -> str:
        return f"annotation {self.pk} ({self.finish_reason})"
