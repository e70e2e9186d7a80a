"""Claims and labels: assignments, annotations (corrected with an audit trail) and their revisions."""

import json

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from annotate.admin.audited import AuditedDeletesMixin, LabelsKeptMixin
from annotate.admin.problems import short
from annotate.admin_scope import DeletedWithParentMixin, FixedIdentityMixin, ProjectScopedAdmin, ReadOnlyAdminMixin
from annotate.models import Annotation, AnnotationRevision, Assignment, AssignmentStatus
from annotate.review import first_critique, review_table
from annotate.services import audit, label_edits


@admin.register(Assignment)
class AssignmentAdmin(AuditedDeletesMixin, FixedIdentityMixin, ProjectScopedAdmin):
    # Whose claim on what: fixed once made (re-pointed, a submitted claim's label would stand under
    # another annotator or solution). Its status stays editable: ending a stuck claim is the admin's.
    # A submitted claim carries its label and is what keeps the annotator from being served that
    # solution again: deleted, the claim query saw none and served it to them a second time (two
    # labels of one person on one solution, once it had room). Superusers only, as labels.
    identity_fields = ("project", "solution", "comparison", "annotator")
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

    def has_delete_permission(self, request: HttpRequest, obj: Assignment | None = None) -> bool:
        if obj is not None and obj.status == AssignmentStatus.SUBMITTED and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)


class AnnotationForm(forms.ModelForm):
    change_reason = forms.CharField(
        required=False,
        max_length=audit.MAX_REASON,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why you change this annotation: kept with the previous version in its audit trail.",
    )

    class Meta:
        model = Annotation
        # what a correction changes: the ratings, and where and why the pass ended (the admin adds
        # the read-only fields itself)
        fields = ["label_steps", "finish_reason", "finish_note"]

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

    def clean(self) -> dict:
        # self.instance is still the stored annotation here (the form's values reach it after clean)
        cleaned = super().clean()
        if "label_steps" in cleaned and self.instance.pk:
            errors = label_edits.edit_errors(
                annotation=self.instance,
                steps=json.loads(cleaned["label_steps"]),
                finish_reason=cleaned.get("finish_reason", self.instance.finish_reason),
                reason=cleaned.get("finish_note", self.instance.finish_note),
            )
            for message in errors:
                self.add_error(label_edits.field_of(message), message)
        return cleaned

    def _post_clean(self) -> None:
        # A refused correction must not reach the instance either: the page's heading and
        # breadcrumb show it (Django would copy the refused finish reason onto it here).
        if not self._errors:
            super()._post_clean()


@admin.register(Annotation)
class AnnotationAdmin(LabelsKeptMixin, AuditedDeletesMixin, ProjectScopedAdmin):
    form = AnnotationForm
    releases = ("solution_id", "solutions")
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
        "preference",  # the compare preference whose first-wrong mark made it (it goes with it)
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
        return short(first_critique(obj.label_steps), 120)

    @admin.display(description="review: steps, ratings and critiques")
    def review(self, obj: Annotation):
        return review_table(obj) if obj.pk else "—"

    @admin.action(description="Mark as gold (annotation and its solution)")
    def mark_as_gold(self, request: HttpRequest, queryset: QuerySet[Annotation]) -> None:
        count = audit.mark_gold(annotations=queryset, user=request.user, reason="Marked as gold in the admin")
        self.message_user(request, f"Marked {count} annotation(s) and their solutions as gold.", messages.SUCCESS)


@admin.register(AnnotationRevision)
class AnnotationRevisionAdmin(DeletedWithParentMixin, ReadOnlyAdminMixin, ProjectScopedAdmin):
    """The audit trail (annotate.services.audit): read-only, never deleted by hand; it goes with its
    annotation (a superuser's deletion, itself recorded with the label as it was)."""

    parent = "its annotation"

    list_display = ["annotation", "version", "changed_by", "changed_at", "reason"]
    list_filter = ["annotation__project"]
    search_fields = ["=annotation__id", "changed_by__username", "reason"]
    list_select_related = ["changed_by"]
    raw_id_fields = ["annotation"]
