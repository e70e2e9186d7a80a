"""Admin for automatic labels: leads see jobs and labels of their projects (read-only labels)."""

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from annotate.admin.audited import AuditedEditsMixin
from annotate.admin_scope import PROJECT_PATHS, ProjectScopedAdmin, ReadOnlyAdminMixin
from autolabel import selectors
from autolabel.models import AutoLabeledSolution, AutolabelJob, AutolabelSettings, AutoStepLabel

PROJECT_PATHS.update(
    {
        "autolabel.autolabeljob": "project",
        "autolabel.autosteplabel": "solution__project",
        "autolabel.autolabelsettings": "project",
        "autolabel.autolabeledsolution": "project",
    }
)


@admin.register(AutolabelJob)
class AutolabelJobAdmin(ProjectScopedAdmin):
    list_display = [
        "id",
        "project",
        "status",
        "model",
        "solutions_done",
        "solutions_total",
        "completions_used",
        "created_at",
    ]
    list_filter = ["status", "project"]
    list_select_related = ["project"]
    readonly_fields = [f.name for f in AutolabelJob._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # jobs start from the API or `manage.py autolabel`, which validate their options


@admin.register(AutoStepLabel)
class AutoStepLabelAdmin(ProjectScopedAdmin):
    list_display = ["solution", "index", "source", "label", "estimate", "n_completions", "inferred", "job"]
    list_filter = ["source", "label", "inferred"]
    raw_id_fields = ["solution", "job"]
    readonly_fields = [f.name for f in AutoStepLabel._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # automatic labels come from imports and jobs only


class BudgetCapForm(forms.ModelForm):
    """A lead may not raise a project's budget past the operator's AUTOLABEL_MAX_BUDGET (superusers may)."""

    cap_applies = True

    def clean_completions_budget(self) -> int:
        budget = self.cleaned_data["completions_budget"]
        cap = settings.AUTOLABEL_MAX_BUDGET
        if self.cap_applies and cap is not None and budget > cap:
            raise forms.ValidationError(
                f"At most {cap:,} completions (AUTOLABEL_MAX_BUDGET, set by the operator); ask a superuser for more."
            )
        return budget


@admin.register(AutolabelSettings)
class AutolabelSettingsAdmin(AuditedEditsMixin, ProjectScopedAdmin):
    list_display = ["project", "completions_used", "completions_budget", "disagreement_first"]
    readonly_fields = ["completions_used"]
    autocomplete_fields = ["project"]
    form = BudgetCapForm
    # A budget raise spends money on the model server: who raised it, when, from what, is kept.
    audited_fields = ("completions_budget", "disagreement_first")

    def get_form(self, request: HttpRequest, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.cap_applies = not request.user.is_superuser
        return form


RATING = {1: "+1", 0: "0", -1: "-1", None: "·"}


def _auto_cell(label: dict | None) -> str:
    if not label:
        return "·"
    text = "+" if label["label"] > 0 else "-"
    if label["estimate"] is not None and label["n_completions"]:
        text += f" ({label['estimate']:.2f} of {label['n_completions']})"
    elif label["estimate"] is not None:  # no rollout: the solution's own graded answer gave it
        text += " (from the graded answer)"
    return text + (" inferred" if label["inferred"] else "")


def _step_cell(step: dict) -> str:
    """A step's text, a trace's with its type first ("observation: ...", "tool call: ...")."""
    text = Truncator(step["text"]).chars(160)
    return f"{step['type'].replace('_', ' ')}: {text}" if step.get("type") else text


@admin.register(AutoLabeledSolution)
class AutoLabeledSolutionAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    """Leads compare, step by step, what people and the automatic labelers said about a solution.
    Read-only: labels change through labeling, imports and jobs; solutions are deleted on the
    Solution page, where the consequences are explained."""

    list_display = ["id", "project", "problem_short", "n_steps", "answer_correct", "annotation_count"]
    list_filter = ["project", "answer_correct"]
    list_select_related = ["project", "problem"]
    search_fields = ["=id", "problem__text"]
    fields = ["project", "problem_text", "final_answer", "answer_correct", "labels"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).filter(auto_labels__isnull=False).distinct()

    @admin.display(description="problem")
    def problem_short(self, obj: AutoLabeledSolution) -> str:
        return Truncator(obj.problem.text).chars(80)

    @admin.display(description="problem text")
    def problem_text(self, obj: AutoLabeledSolution) -> str:
        return obj.problem.text

    @admin.display(description="labels: people (one column per label) and automatic sources")
    def labels(self, obj: AutoLabeledSolution) -> str:
        view = selectors.solution_labels(solution=obj)
        people = [f"person {i + 1}" for i in range(len(view["human"]))]
        head = format_html_join(
            "", "<th>{}</th>", ((name,) for name in ["#", "step", *people, "Math-Shepherd", "rollouts"])
        )
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td></tr>",
            (
                (
                    step["index"] + 1,
                    _step_cell(step),
                    format_html_join("", "<td>{}</td>", ((RATING.get(r, "·"),) for r in step["human"])),
                    _auto_cell(step["auto"].get("math_shepherd")),
                    _auto_cell(step["auto"].get("rollout")),
                )
                for step in view["steps"]
            ),
        )
        return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, rows)
