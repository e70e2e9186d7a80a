"""The labeling domain: projects and members, problems and their model-written solutions,
claims (assignments) and finished labelings (annotations), import and export jobs.

A PRM800K record maps onto Problem (question), Solution + Step (pre-generated steps) and
Annotation (label). The label's steps are stored as ordered JSON text so a record imported from
PRM800K exports back with the same values and key order; the per-annotation counters beside it
let statistics aggregate without parsing JSON.
"""

import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.models import JobStatus
from prm800k.splits import math500_flag, text_sha256


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    LEAD = "lead", "Lead"
    ML_ENGINEER = "ml_engineer", "ML engineer"


class LabelingMode(models.TextChoices):
    PHASE2 = "phase2", "Phase 2: stop at the first negative step"
    PHASE1 = "phase1", "Phase 1: alternatives at any step, human step when none is positive"


class Strategy(models.TextChoices):
    VALUE = "value", "Value per label (default: where the first error is, per expected label)"
    UNCERTAINTY = "uncertainty", "Uncertainty"
    CONVINCING_WRONG = "convincing_wrong", "Convincing wrong answer"
    RANDOM = "random", "Random"
    MIX = "mix", "Mix (80% convincing wrong, 20% most convincing)"


class TaskKind(models.TextChoices):
    STEPS = "steps", "Step labels"
    # Two solutions of one problem side by side: which is better (annotate/models_compare.py).
    COMPARE = "compare", "Compare two solutions"


class ContentKind(models.TextChoices):
    # What a solution is (prm800k.kinds): how its steps render and which are rated.
    MATH = "math", "Math (Markdown + LaTeX)"
    CODE = "code", "Code"
    TRACE = "trace", "Agent trace"


class QueueOrigin(models.TextChoices):
    """What put a solution in the queue when no selection strategy did (Solution.strategy holds a
    Strategy value after a model has scored it)."""

    COLD_START = "cold_start", "Cold start (before any model: graded wrong answers first)"
    CONTROL = "control", "Control (random, to measure the strategy against)"


class FinishReason(models.TextChoices):
    SOLUTION = "solution", "Solution"
    FOUND_ERROR = "found_error", "Found error"
    GIVE_UP = "give_up", "Give up"
    BAD_PROBLEM = "bad_problem", "Bad problem"


class Project(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200, blank=True)
    task_kind = models.CharField(max_length=16, choices=TaskKind.choices, default=TaskKind.STEPS)
    guidelines = models.TextField(blank=True, help_text="Markdown shown to annotators.")
    overlap = models.PositiveSmallIntegerField(default=1, help_text="Distinct annotators per solution.")
    qc_rate = models.FloatField(default=0.0, help_text="Share of served tasks that are gold questions.")
    labeling_mode = models.CharField(max_length=16, choices=LabelingMode.choices, default=LabelingMode.PHASE2)
    selection_strategy = models.CharField(max_length=32, choices=Strategy.choices, default=Strategy.VALUE)
    control_share = models.FloatField(
        default=0.1,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.5)],
        help_text="Share of the queue drawn at random as a control, to estimate the labels the strategy saves.",
    )
    retrain_every = models.PositiveIntegerField(default=500, help_text="Retrain after this many new step labels.")
    lease_minutes = models.PositiveIntegerField(default=30)
    show_ground_truth = models.BooleanField(default=True, help_text="Show the ground-truth answer (PRM800K did).")
    screening_required = models.PositiveIntegerField(default=0, help_text="Screening solutions to pass first.")
    screening_threshold = models.FloatField(default=0.75)
    current_generation = models.IntegerField(default=0, help_text="The active-learning round.")
    rate_observations = models.BooleanField(
        default=False, help_text="Agent traces: annotators rate observation steps too (shown unrated otherwise)."
    )
    critique_required = models.BooleanField(default=False, help_text="Every step rated -1 needs a written critique.")
    # Step labels (main line plus alternatives) added since the latest training run started: one
    # UPDATE per submit tells whether a retrain may be due (ml.services_auto); reset when a run starts.
    step_labels_since_run = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user", "role"], name="uniq_membership_role")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} in {self.project}"


class LabelerProfile(models.Model):
    """The pseudonym a user's labels carry in exports: never a username or e-mail."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="labeler")
    labeler_uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)

    def __str__(self) -> str:
        return str(self.labeler_uuid)


class Problem(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="problems")
    text = models.TextField(help_text="Markdown + LaTeX.")
    ground_truth_answer = models.TextField(null=True, blank=True)
    ground_truth_solution = models.TextField(null=True, blank=True)
    subject = models.CharField(max_length=100, blank=True)
    level = models.CharField(max_length=20, blank=True)
    source_id = models.CharField(max_length=200, blank=True)
    # sha256 of (text, answer, solution): identity for dedupe on import.
    content_hash = models.CharField(max_length=64)
    # sha256 of the text alone: groups a problem across phases for splits by problem.
    text_hash = models.CharField(max_length=64, db_index=True)
    # A MATH-500 problem: always in the test split, as in PRM800K.
    is_math500 = models.BooleanField(default=False)
    # Beyond math (prm800k.kinds): code solutions in `language` checked against `tests`, or agent traces.
    kind = models.CharField(max_length=8, choices=ContentKind.choices, default=ContentKind.MATH)
    language = models.CharField(max_length=32, blank=True, help_text="Code: the solutions' language.")
    tests = models.TextField(null=True, blank=True, help_text="Code: the specification's examples, shown as is.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "content_hash"], name="uniq_problem_content")]

    def __str__(self) -> str:
        return self.text[:80]

    def save(self, *args, **kwargs) -> None:
        if not self.text_hash:
            self.text_hash = text_sha256(self.text)
        self.is_math500 = math500_flag(self.text_hash)
        super().save(*args, **kwargs)


class Solution(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="solutions")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="solutions")
    final_answer = models.TextField(null=True, blank=True)
    # Graded against the problem's ground truth on import: True, False, or None when ungradable.
    answer_correct = models.BooleanField(null=True)
    # False for phase-1 records, whose steps are the labeler's own trajectory, not pre-generated.
    is_pregenerated = models.BooleanField(default=True)
    is_quality_control = models.BooleanField(default=False)
    is_screening = models.BooleanField(default=False)
    is_gold = models.BooleanField(default=False, help_text="Has trusted labels; served at the QC rate.")
    content_hash = models.CharField(max_length=64)
    n_steps = models.PositiveIntegerField(default=0)
    # Queue state: the claim query serves the highest priority first among open solutions.
    priority = models.FloatField(default=0.0)
    is_open = models.BooleanField(default=True, help_text="Still needs labels.")
    annotation_count = models.PositiveIntegerField(default=0)
    # Labels wanted beyond the project's overlap: a lead reopened it for relabeling at capacity.
    extra_labels = models.PositiveIntegerField(default=0)
    # Provenance: the round, strategy, model and score that put it in the queue.
    generation = models.IntegerField(null=True, blank=True)
    strategy = models.CharField(max_length=32, blank=True)
    # The training run (ml.TrainingRun id) whose scores set the priority; a plain id, so the labeling
    # domain does not depend on the model registry, and a deleted run leaves its number behind.
    model_run_id = models.BigIntegerField(null=True, blank=True)
    verifier_score = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "content_hash"], name="uniq_solution_content")]
        indexes = [
            models.Index(
                fields=["project", "-priority", "id"],
                name="solution_queue_idx",
                condition=models.Q(is_open=True),
            ),
            # Gold and screening pools are small; these keep their claim paths off the big table.
            models.Index(
                fields=["project", "-priority", "id"], name="solution_gold_idx", condition=models.Q(is_gold=True)
            ),
            models.Index(
                fields=["project", "-priority", "id"],
                name="solution_screening_idx",
                condition=models.Q(is_screening=True),
            ),
            # Dashboard (annotate.selectors.stats): progress by generation/strategy as an index-only scan,
            # and the most recent overlapping solutions for agreement.
            models.Index(
                fields=["project"],
                name="solution_stats_idx",
                include=["generation", "strategy", "is_gold", "is_screening", "is_open", "annotation_count"]
                + ["answer_correct", "n_steps"],
            ),
            models.Index(
                fields=["project", "-id"], name="solution_overlap_idx", condition=models.Q(annotation_count__gte=2)
            ),
        ]

    def __str__(self) -> str:
        return f"solution {self.pk} of problem {self.problem_id}"


class Step(models.Model):
    """One model-written step. Immutable once created, so features can be cached per step."""

    # No separate index: uniq_step_index (solution, index) serves lookups by solution.
    solution = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="steps", db_index=False)
    index = models.PositiveIntegerField()
    text = models.TextField()
    # A trace step's type (thought, tool_call, observation, answer); empty for math and code.
    step_type = models.CharField(max_length=16, blank=True, default="")

    class Meta:
        ordering = ["solution_id", "index"]
        constraints = [models.UniqueConstraint(fields=["solution", "index"], name="uniq_step_index")]

    def __str__(self) -> str:
        return f"step {self.index} of solution {self.solution_id}"


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"


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


class AnnotationSource(models.TextChoices):
    IMPORT = "import", "Imported"
    APP = "app", "Labeled in the app"


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
            models.Index(
                fields=["project", "-id"],
                name="annotation_gold_answers_idx",
                condition=models.Q(is_quality_control=True) | models.Q(is_screening=True),
            ),
        ]

    def __str__(self) -> str:
        return f"annotation {self.pk} ({self.finish_reason})"


class ImportJob(models.Model):
    """An uploaded file waiting for, or imported by, a worker (annotate.services.imports.jobs)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="imports")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    filename = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.CREATED)
    # The stored upload, deleted when the job ends; its size in bytes (progress is read from the cache).
    file_path = models.CharField(max_length=500, blank=True)
    file_size = models.BigIntegerField(default=0)
    counters = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"import {self.pk} ({self.status})"


class Export(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="exports")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.CREATED)
    format = models.CharField(max_length=16, default="prm800k")
    filters = models.JSONField(default=dict, blank=True)
    file_path = models.CharField(max_length=500, blank=True)
    record_count = models.PositiveIntegerField(default=0)
    byte_size = models.BigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"export {self.pk} ({self.status})"


class ScreeningStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"


class AnnotatorStatus(models.Model):
    """One annotator's standing in one project: screening outcome and served-task counters.

    Its row is also the per-annotator lock that serializes that annotator's claims and submits,
    so a double-clicked reload never claims two solutions at once.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotator_statuses")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator_statuses")
    screening_status = models.CharField(max_length=16, choices=ScreeningStatus.choices, default=ScreeningStatus.PENDING)
    screening_submitted = models.PositiveIntegerField(default=0)
    screening_agreement = models.FloatField(null=True, blank=True, help_text="Step accuracy against gold.")
    screening_decided_at = models.DateTimeField(null=True, blank=True)
    tasks_served = models.PositiveIntegerField(default=0, help_text="New claims (reloads not counted).")
    gold_served = models.PositiveIntegerField(default=0, help_text="Of which gold (quality-control) questions.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "annotator statuses"
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="uniq_annotator_status")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project}: screening {self.screening_status}"


class AnnotationRevision(models.Model):
    """The state of a submitted annotation before one change: who changed it, when and why.

    Written by annotate.services.audit.revise_annotation, the only path that changes a submitted
    annotation; on PostgreSQL a trigger (migration 0006_audit_trail) refuses an UPDATE of the
    audited columns unless the same transaction wrote the revision that keeps the old values.
    """

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField(help_text="1 is the state as submitted or imported.")
    label_steps = models.TextField(help_text="label_steps before the change.")
    fields = models.JSONField(default=dict, help_text="The other audited fields before the change.")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    reason = models.TextField()

    class Meta:
        ordering = ["annotation_id", "version"]
        constraints = [models.UniqueConstraint(fields=["annotation", "version"], name="uniq_annotation_revision")]

    def __str__(self) -> str:
        return f"revision {self.version} of annotation {self.annotation_id}"


class AuditEvent(models.Model):
    """Who did what, when, outside the annotations' own revisions: project settings, members,
    invites, tokens, passwords. Written by annotate.services.events.record, never changed."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="events")
    action = models.CharField(max_length=64)
    details = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["project", "-at"], name="auditevent_project_idx")]

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_id} at {self.at:%Y-%m-%d %H:%M}"


class Invite(models.Model):
    """A one-time link that lets someone without an account join a project with given roles.

    Only a hash of the link's secret is stored; the lead sees the link once, when it is made."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invites")
    roles = models.JSONField(default=list)
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"invite {self.pk} to {self.project_id}"


from annotate.models_compare import Comparison, Preference  # noqa: E402, F401  (they refer to the models above)
