"""Projects and the people in them: memberships, pseudonyms, screening standing, invite links."""

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotate.models.choices import LabelingMode, Role, ScreeningStatus, Strategy, TaskKind

# Above half the queue a "control" is most of the labeling: the strategy would barely be used.
MAX_CONTROL_SHARE = 0.5


def validate_lowercase_slug(value: str) -> None:
    """Slugs are lowercase, as the create page makes them: `/projects/Math/` and `/projects/math/`
    would otherwise be two projects a person cannot tell apart in a link."""
    if value != value.lower():
        raise ValidationError(f"Use lowercase: “{value.lower()}”.", code="lowercase")


class Project(models.Model):
    slug = models.SlugField(unique=True, validators=[validate_lowercase_slug])
    name = models.CharField(max_length=200, blank=True)
    task_kind = models.CharField(max_length=16, choices=TaskKind.choices, default=TaskKind.STEPS)
    guidelines = models.TextField(blank=True, help_text="Markdown shown to annotators.")
    overlap = models.PositiveSmallIntegerField(default=1, help_text="Distinct annotators per solution.")
    qc_rate = models.FloatField(default=0.0, help_text="Share of served tasks that are gold questions.")
    labeling_mode = models.CharField(max_length=16, choices=LabelingMode.choices, default=LabelingMode.PHASE2)
    selection_strategy = models.CharField(max_length=32, choices=Strategy.choices, default=Strategy.ANSWER_STRATIFIED)
    control_share = models.FloatField(
        default=0.1,
        validators=[MinValueValidator(0.0), MaxValueValidator(MAX_CONTROL_SHARE)],
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
    # Compare projects: every import pairs each problem's solutions up to this many pairs (the
    # command's --pairs-per-problem sets it; the Data page and the API import by it).
    pairs_per_problem = models.PositiveSmallIntegerField(
        default=3, help_text="Compare projects: at most this many pairs per problem, made on import."
    )
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
