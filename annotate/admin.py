"""Admin for the labeling domain: leads browse and correct data here.

Big tables (Solution, Step, Assignment, Annotation) use raw-id or autocomplete widgets for their
foreign keys, so no page renders a dropdown of every row; hashes and derived counters are
read-only because imports, submits and exports rely on them.
"""

import json

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from annotate.admin_scope import ProjectScopedAdmin, ReadOnlyAdminMixin, ScopedTabularInline
from annotate.models import (
    Annotation,
    AnnotationRevision,
    AnnotatorStatus,
    Assignment,
    AuditEvent,
    Comparison,
    Export,
    ImportJob,
    Invite,
    LabelerProfile,
    Membership,
    Preference,
    Problem,
    Project,
    Solution,
    Step,
)
from annotate.review import first_critique, review_table
from annotate.services import audit


def _short(text: str | None, chars: int = 80) -> str:
    return Truncator(text or "").chars(chars)


# ---------------------------------------------------------------------------------------------
# Projects and people
# ---------------------------------------------------------------------------------------------


class MembershipInline(ScopedTabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]
    readonly_fields = ["created_at"]


@admin.register(Project)
class ProjectAdmin(ProjectScopedAdmin):
    list_display = [
        "slug",
        "name",
        "labeling_mode",
        "selection_strategy",
        "overlap",
        "qc_rate",
        "retrain_every",
        "current_generation",
        "created_at",
    ]
    list_filter = ["labeling_mode", "selection_strategy"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(ProjectScopedAdmin):
    list_display = ["user", "project", "role", "created_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "user__email", "project__slug"]
    autocomplete_fields = ["project", "user"]
    list_select_related = ["user", "project"]
    readonly_fields = ["created_at"]


@admin.register(LabelerProfile)
class LabelerProfileAdmin(ProjectScopedAdmin):
    list_display = ["user", "labeler_uuid"]
    search_fields = ["user__username", "labeler_uuid"]
    autocomplete_fields = ["user"]
    list_select_related = ["user"]
    readonly_fields = ["labeler_uuid"]


@admin.register(AnnotatorStatus)
class AnnotatorStatusAdmin(ProjectScopedAdmin):
    """Screening outcome per annotator and project; a lead may pass or fail someone by hand."""

    list_display = [
        "user",
        "project",
        "screening_status",
        "screening_submitted",
        "screening_agreement",
        "tasks_served",
        "gold_served",
        "updated_at",
    ]
    list_filter = ["screening_status", "project"]
    search_fields = ["user__username", "project__slug"]
    autocomplete_fields = ["project", "user"]
    list_select_related = ["project", "user"]
    readonly_fields = ["screening_submitted", "tasks_served", "gold_served", "updated_at"]


# ---------------------------------------------------------------------------------------------
# Problems, solutions, steps
# ---------------------------------------------------------------------------------------------


@admin.register(Problem)
class ProblemAdmin(ProjectScopedAdmin):
    list_display = [
        "id",
        "short_text",
        "project",
        "kind",
        "ground_truth_answer",
        "subject",
        "level",
        "source_id",
        "created_at",
    ]
    list_filter = ["project", "kind", "subject", "level"]
    search_fields = ["text", "source_id", "ground_truth_answer", "=content_hash"]
    autocomplete_fields = ["project"]
    list_select_related = ["project"]
    readonly_fields = ["content_hash", "text_hash", "created_at"]
    show_full_result_count = False

    @admin.display(description="problem")
    def short_text(self, obj: Problem) -> str:
        return _short(obj.text)


class StepInline(ReadOnlyAdminMixin, admin.TabularInline):
    """Steps are immutable (features are cached per step): shown, never edited here."""

    model = Step
    fields = ["index", "step_type", "text"]
    readonly_fields = ["index", "step_type", "text"]
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Solution)
class SolutionAdmin(ProjectScopedAdmin):
    list_display = [
        "id",
        "short_problem",
        "project",
        "n_steps",
        "final_answer",
        "answer_correct",
        "is_open",
        "is_gold",
        "is_quality_control",
        "is_screening",
        "priority",
        "annotation_count",
        "generation",
        "strategy",
    ]
    list_filter = [
        "project",
        "answer_correct",
        "is_open",
        "is_gold",
        "is_quality_control",
        "is_screening",
        "is_pregenerated",
        "strategy",
    ]
    search_fields = ["=id", "problem__text", "final_answer", "=content_hash"]
    raw_id_fields = ["problem"]
    autocomplete_fields = ["project"]
    list_select_related = ["project", "problem"]
    readonly_fields = ["content_hash", "n_steps", "annotation_count", "created_at"]
    inlines = [StepInline]
    actions = ["reopen_for_relabeling"]
    show_full_result_count = False

    @admin.display(description="problem")
    def short_problem(self, obj: Solution) -> str:
        return _short(obj.problem.text, 60)

    @admin.action(description="Reopen for relabeling")
    def reopen_for_relabeling(self, request: HttpRequest, queryset: QuerySet[Solution]) -> None:
        count = audit.reopen_for_relabeling(solutions=queryset, user=request.user, reason="Reopened for relabeling")
        self.message_user(
            request,
            f"Reopened {count} solution(s) for relabeling: each is served for one more label, to an annotator "
            "who has not labeled it yet.",
            messages.SUCCESS,
        )


@admin.register(Step)
class StepAdmin(ProjectScopedAdmin):
    list_display = ["id", "solution", "index", "short_text"]
    list_filter = ["solution__project"]
    search_fields = ["text", "=solution__id"]
    raw_id_fields = ["solution"]
    readonly_fields = ["solution", "index", "text"]
    show_full_result_count = False

    @admin.display(description="text")
    def short_text(self, obj: Step) -> str:
        return _short(obj.text)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


# ---------------------------------------------------------------------------------------------
# Claims and labels
# ---------------------------------------------------------------------------------------------


@admin.register(Assignment)
class AssignmentAdmin(ProjectScopedAdmin):
    list_display = [
        "id",
        "project",
        "solution",
        "annotator",
        "status",
        "lease_expires_at",
        "generation",
        "strategy",
        "created_at",
    ]
    list_filter = ["status", "project", "strategy"]
    search_fields = ["=id", "annotator__username", "=solution__id"]
    raw_id_fields = ["solution"]
    autocomplete_fields = ["project", "annotator"]
    list_select_related = ["project", "annotator"]
    readonly_fields = ["created_at", "updated_at"]
    show_full_result_count = False


class AnnotationForm(forms.ModelForm):
    change_reason = forms.CharField(
        required=False,
        max_length=audit.MAX_REASON,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why you change this annotation: kept with the previous version in its audit trail.",
    )

    class Meta:
        model = Annotation
        fields = ["label_steps"]  # the admin adds the other fields itself

    def clean_label_steps(self) -> str:
        # Counters are recomputed from this text on save, so it must be PRM800K label.steps.
        text = self.cleaned_data["label_steps"]
        try:
            steps = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}") from exc
        if not isinstance(steps, list) or not all(
            isinstance(s, dict) and isinstance(s.get("completions"), list) for s in steps
        ):
            raise forms.ValidationError("Must be a JSON list of steps, each with a 'completions' list.")
        return text


@admin.register(Annotation)
class AnnotationAdmin(ProjectScopedAdmin):
    form = AnnotationForm
    list_display = [
        "id",
        "project",
        "solution",
        "annotator",
        "labeler_uuid",
        "source",
        "finish_reason",
        "n_label_steps",
        "n_positive",
        "n_neutral",
        "n_negative",
        "first_error_index",
        "reason",
        "critique",
        "is_gold",
        "is_quality_control",
        "submitted_at",
    ]
    list_filter = ["project", "source", "finish_reason", "is_gold", "is_quality_control", "is_screening", "generation"]
    search_fields = ["=id", "labeler_uuid", "annotator__username", "=solution__id", "idempotency_key", "finish_note"]
    raw_id_fields = ["solution", "assignment"]
    autocomplete_fields = ["project", "annotator"]
    list_select_related = ["project", "annotator"]
    readonly_fields = [
        "review",
        "source_hash",
        "idempotency_key",
        "shape",
        "timestamp_text",
        "n_label_steps",
        "n_positive",
        "n_neutral",
        "n_negative",
        "n_unrated",
        "n_flagged",
        "n_alternatives",
        "first_error_index",
        "created_at",
    ]
    actions = ["mark_as_gold"]
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Annotations come from submits and imports (with their assignment, time and pseudonym);
        # a hand-made one had no submit time and failed with a 500. Leads correct existing ones.
        return False

    def save_model(self, request: HttpRequest, obj: Annotation, form: forms.ModelForm, change: bool) -> None:
        # Only changes (no add): the previous version is kept, with who, when and why (audit).
        names = [Annotation._meta.get_field(f).attname for f in form.changed_data if f != "change_reason"]
        reason = form.cleaned_data.get("change_reason") or "Edited in the admin"
        audit.revise_annotation(annotation=obj, user=request.user, reason=reason, **{n: getattr(obj, n) for n in names})

    @admin.display(description="reason", ordering="finish_note")
    def reason(self, obj: Annotation) -> str:
        """The annotator's reason for giving up or reporting a bad problem, shortened for the list."""
        note = obj.finish_note.strip()
        return note if len(note) <= 120 else note[:119] + "…"

    @admin.display(description="critique")
    def critique(self, obj: Annotation) -> str:
        """The first critique the annotator wrote (usually of the first wrong step), shortened."""
        return _short(first_critique(obj.label_steps), 120)

    @admin.display(description="review: steps, ratings and critiques")
    def review(self, obj: Annotation):
        return review_table(obj) if obj.pk else "—"

    @admin.action(description="Mark as gold (annotation and its solution)")
    def mark_as_gold(self, request: HttpRequest, queryset: QuerySet[Annotation]) -> None:
        count = audit.mark_gold(annotations=queryset, user=request.user, reason="Marked as gold in the admin")
        self.message_user(request, f"Marked {count} annotation(s) and their solutions as gold.", messages.SUCCESS)


@admin.register(AnnotationRevision)
class AnnotationRevisionAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    """The audit trail (annotate.services.audit): read-only, never deleted by hand."""

    list_display = ["annotation", "version", "changed_by", "changed_at", "reason"]
    list_filter = ["annotation__project"]
    search_fields = ["=annotation__id", "changed_by__username", "reason"]
    list_select_related = ["changed_by"]
    raw_id_fields = ["annotation"]


# ---------------------------------------------------------------------------------------------
# Jobs: records of what happened, read-only apart from deletion
# ---------------------------------------------------------------------------------------------


class JobAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    list_select_related = ["project", "requested_by"]
    deletable = True


@admin.register(ImportJob)
class ImportJobAdmin(JobAdmin):
    list_display = ["id", "project", "filename", "status", "requested_by", "created_at", "finished_at"]
    list_filter = ["status", "project"]
    search_fields = ["=id", "filename", "requested_by__username"]


@admin.register(Export)
class ExportAdmin(JobAdmin):
    list_display = [
        "id",
        "project",
        "format",
        "status",
        "record_count",
        "byte_size",
        "requested_by",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "format", "project"]
    search_fields = ["=id", "file_path", "requested_by__username"]


class SuperuserReadOnlyAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Records of the self-service pages that superusers read and nobody edits here. Leads are staff
    with every annotate permission, so the superuser check is explicit."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return request.user.is_superuser


@admin.register(AuditEvent)
class AuditEventAdmin(SuperuserReadOnlyAdmin):
    """The audit log of the self-service pages (annotate.services.events)."""

    list_display = ["at", "action", "actor", "project"]
    list_filter = ["action", "project"]
    search_fields = ["action", "actor__username", "project__slug"]
    list_select_related = ["actor", "project"]
    readonly_fields = ["at", "action", "actor", "project", "details"]
    date_hierarchy = "at"


@admin.register(Invite)
class InviteAdmin(SuperuserReadOnlyAdmin):
    """Invite links (leads make and revoke them on the members page; only a hash of the link is kept)."""

    list_display = ["id", "project", "roles", "created_by", "created_at", "expires_at", "used_at", "used_by"]
    list_filter = ["project"]
    search_fields = ["project__slug", "created_by__username", "used_by__username"]
    list_select_related = ["project", "created_by", "used_by"]
    exclude = ["token_hash"]


# ---------------------------------------------------------------------------------------------
# Compare projects: pairs (a lead marks gold pairs here) and the preferences given on them
# ---------------------------------------------------------------------------------------------


@admin.register(Comparison)
class ComparisonAdmin(ProjectScopedAdmin):
    list_display = ["id", "project", "problem", "solution_a", "solution_b", "reason", "is_open", "annotation_count"]
    list_display += ["is_gold", "gold_preference", "model_probability"]
    list_filter = ["reason", "is_open", "is_gold", "project"]
    list_select_related = ["project", "problem", "solution_a", "solution_b"]
    raw_id_fields = ["problem", "solution_a", "solution_b"]
    search_fields = ["=id"]


@admin.register(Preference)
class PreferenceAdmin(ProjectScopedAdmin):
    list_display = ["id", "project", "comparison", "annotator", "preferred", "shown", "swapped", "strength"]
    list_display += ["is_gold", "submitted_at"]
    list_filter = ["preferred", "swapped", "strength", "is_gold", "project"]
    list_select_related = ["project", "comparison", "annotator"]
    raw_id_fields = ["comparison", "assignment", "annotator"]
    search_fields = ["=id", "labeler_uuid"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # preferences come from submits
