"""Compare projects: pairs (a lead marks gold pairs here) and the preferences given on them."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from annotate.admin.audited import AuditedDeletesMixin, AuditedEditsMixin, LabelsKeptMixin
from annotate.admin_scope import FixedIdentityMixin, ProjectScopedAdmin, ReadOnlyAdminMixin, problem_elsewhere
from annotate.models import Comparison, Preference, TaskKind


class ComparisonForm(forms.ModelForm):
    """A pair is two solutions of its problem, in a compare project; a gold pair has its answer."""

    def clean(self):
        data = super().clean()
        instance = self.instance
        project = data.get("project", instance.project if instance.project_id else None)
        problem = data.get("problem", instance.problem if instance.problem_id else None)
        a = data.get("solution_a", instance.solution_a if instance.solution_a_id else None)
        b = data.get("solution_b", instance.solution_b if instance.solution_b_id else None)
        errors = problem_elsewhere(project, problem)
        if project is not None and project.task_kind != TaskKind.COMPARE:
            errors["project"] = "Pairs belong to compare projects."
        for name, solution in (("solution_a", a), ("solution_b", b)):
            if solution is not None and problem is not None and solution.problem_id != problem.pk:
                errors[name] = "This solution answers another problem than the pair's."
        if a is not None and b is not None and a.pk >= b.pk:
            errors["solution_b"] = "Solution b must be another solution, with the higher id (solution a has the lower)."
        if data.get("is_gold") and not data.get("gold_preference"):
            errors["gold_preference"] = "A gold pair needs its known answer."
        if errors:
            raise ValidationError(errors)
        return data


@admin.register(Comparison)
class ComparisonAdmin(AuditedDeletesMixin, AuditedEditsMixin, FixedIdentityMixin, ProjectScopedAdmin):
    form = ComparisonForm
    identity_fields = ("project", "problem", "solution_a", "solution_b")
    audited_fields = ("is_gold", "gold_preference", "is_open")
    list_display = ["id", "project", "problem", "solution_a", "solution_b", "reason", "is_open", "annotation_count"]
    list_display += ["is_gold", "gold_preference", "model_probability"]
    list_filter = ["reason", "is_open", "is_gold", "project"]
    list_select_related = ["project", "problem", "solution_a", "solution_b"]
    raw_id_fields = ["problem", "solution_a", "solution_b"]
    search_fields = ["=id"]


@admin.register(Preference)
class PreferenceAdmin(LabelsKeptMixin, AuditedDeletesMixin, ReadOnlyAdminMixin, ProjectScopedAdmin):
    """A compare project's labels: read here, as they were submitted. Editing one changed a label
    with no audit revision (annotate.services.audit keeps them for step annotations only), and its
    `export_seq` or `idempotency_key` (incremental exports, retries) by hand. Deleting is for
    superusers, as for annotations: the pair counts the preference no more and may open again."""

    deletable = True
    releases = ("comparison_id", "pairs")
    list_display = ["id", "project", "comparison", "annotator", "preferred", "shown", "swapped", "strength"]
    list_display += ["is_gold", "submitted_at"]
    list_filter = ["preferred", "swapped", "strength", "is_gold", "project"]
    list_select_related = ["project", "comparison", "annotator"]
    raw_id_fields = ["comparison", "assignment", "annotator"]
    search_fields = ["=id", "labeler_uuid"]
