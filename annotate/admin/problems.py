"""Problems, solutions and steps (big tables: raw-id widgets, no full counts)."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from annotate.admin.audited import AuditedDeletesMixin, AuditedEditsMixin
from annotate.admin_scope import (
    DeletedWithParentMixin,
    FixedIdentityMixin,
    ProjectScopedAdmin,
    ReadOnlyAdminMixin,
    problem_elsewhere,
)
from annotate.models import Problem, Solution, Step
from annotate.services import audit


def short(text: str | None, chars: int = 80) -> str:
    return Truncator(text or "").chars(chars)


@admin.register(Problem)
class ProblemAdmin(AuditedDeletesMixin, AuditedEditsMixin, FixedIdentityMixin, ProjectScopedAdmin):
    identity_fields = ("project",)
    audited_fields = ("ground_truth_answer", "text")
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
        return short(obj.text)


class StepInline(ReadOnlyAdminMixin, admin.TabularInline):
    """Steps are immutable (features are cached per step): shown, never edited here."""

    model = Step
    fields = ["index", "step_type", "text"]
    readonly_fields = ["index", "step_type", "text"]
    extra = 0
    can_delete = False
    show_change_link = True


class SolutionForm(forms.ModelForm):
    class Meta:
        help_texts = {
            # Ticking "Is open" on a solution that has its overlap's labels serves it to no one: the
            # queue serves a solution while it has room (overlap + extra labels), which the action gives.
            "is_open": "Still needs labels. For one more label on a labeled solution, tick it in the solutions "
            "list and use the action “Reopen for relabeling”: ticking this alone serves a solution that has "
            "its overlap's labels to no one.",
        }

    def clean(self):
        data = super().clean()
        errors = problem_elsewhere(data.get("project"), data.get("problem"))
        if errors:
            raise ValidationError(errors)
        return data


@admin.register(Solution)
class SolutionAdmin(AuditedDeletesMixin, AuditedEditsMixin, FixedIdentityMixin, ProjectScopedAdmin):
    form = SolutionForm
    identity_fields = ("project", "problem")
    audited_fields = ("is_gold", "is_quality_control", "is_screening", "is_open", "answer_correct", "final_answer")
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
        return short(obj.problem.text, 60)

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
class StepAdmin(DeletedWithParentMixin, ReadOnlyAdminMixin, ProjectScopedAdmin):
    """A solution's steps are what its labels rate, by position: they are never edited, added or
    deleted here (one deleted step of a labeled solution shifted its labels onto the next step's
    text in every export, and left no trace). The solution is the unit a lead deletes; its steps go
    with it, so the delete permission stays (the admin checks it on every row a deletion takes)
    while this admin offers no delete of its own."""

    parent = "its solution"
    list_display = ["id", "solution", "index", "short_text"]
    list_filter = ["solution__project"]
    search_fields = ["text", "=solution__id"]
    raw_id_fields = ["solution"]
    readonly_fields = ["solution", "index", "text"]
    show_full_result_count = False

    @admin.display(description="text")
    def short_text(self, obj: Step) -> str:
        return short(obj.text)
