"""Admin for automatic labels: leads see jobs and labels of their projects (read-only labels)."""

from django.contrib import admin
from django.http import HttpRequest

from annotate.admin_scope import PROJECT_PATHS, ProjectScopedAdmin
from autolabel.models import AutolabelJob, AutolabelSettings, AutoStepLabel

PROJECT_PATHS.update(
    {
        "autolabel.autolabeljob": "project",
        "autolabel.autosteplabel": "solution__project",
        "autolabel.autolabelsettings": "project",
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


@admin.register(AutolabelSettings)
class AutolabelSettingsAdmin(ProjectScopedAdmin):
    list_display = ["project", "completions_used", "completions_budget", "disagreement_first"]
    readonly_fields = ["completions_used"]
    autocomplete_fields = ["project"]
