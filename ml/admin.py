"""Admin for the model registry: browse training runs and scores, activate or roll back a model."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from annotate.admin_scope import ProjectScopedAdmin, ReadOnlyAdminMixin
from ml import services
from ml.models import StepScore, TrainingRun


@admin.register(TrainingRun)
class TrainingRunAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    """Runs come from "Retrain now", the API, auto-retrain and `manage.py retrain`, which check their
    settings (PRMConfig's bounds; no server paths such as `base_checkpoint` or `hf_model_path` over
    HTTP). Here they are read: an editable `config` let a lead point the worker at any file on the
    server, another project's model included, and a hand-made `created` run was trained unchecked.
    Deleting a run and activating one (the action below) stay."""

    deletable = True
    list_display = [
        "id",
        "project",
        "status",
        "is_active",
        "label_count",
        "metrics_summary",
        "created_at",
        "finished_at",
        "activated_at",
    ]
    list_filter = ["project", "status", "is_active"]
    search_fields = ["=id", "project__slug", "artifact_path"]
    autocomplete_fields = ["project"]
    list_select_related = ["project"]
    readonly_fields = [
        "project",
        "status",
        "config",
        "requested_by",
        "requested_at",
        "is_active",
        "activated_at",
        "activated_by",
        "label_count",
        "metrics",
        "artifact_path",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    ]
    actions = ["activate_this_model"]

    def get_deleted_objects(self, objs, request: HttpRequest):  # type: ignore[no-untyped-def]
        # The active run serves the queue and the scoring API: deleted, the project was left with no
        # model and no word of it. Activate another first (the action below), then delete this one.
        # Refused here, on this page and the list's delete, not in has_delete_permission: a project's
        # or a solution's deletion takes its runs along and checks that permission on each.
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        if any(run.is_active for run in objs):
            perms_needed = {*perms_needed, "the active model (activate another run first)"}
        return deleted, counts, perms_needed, protected

    @admin.display(description="metrics")
    def metrics_summary(self, obj: TrainingRun) -> str:
        numbers = {k: v for k, v in (obj.metrics or {}).items() if isinstance(v, int | float)}
        return ", ".join(f"{k}={v:.3g}" for k, v in list(numbers.items())[:4])

    @admin.action(description="Activate this model (deactivates the others of its project; rolls back to an older one)")
    def activate_this_model(self, request: HttpRequest, queryset: QuerySet[TrainingRun]) -> None:
        runs = list(queryset.select_related("project")[:2])
        if len(runs) != 1:
            self.message_user(request, "Select exactly one training run to activate.", messages.ERROR)
            return
        run = runs[0]
        # The same path as the API's activate: a new generation, then the queue rescored with it.
        try:
            services.rollback(project=run.project, run=run, by=request.user)
        except services.RunNotActivatable as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        run.project.refresh_from_db(fields=["current_generation"])
        self.message_user(
            request,
            f"Run {run.pk} is now the active model of {run.project} (generation {run.project.current_generation}).",
            messages.SUCCESS,
        )


@admin.register(StepScore)
class StepScoreAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    list_display = ["id", "step", "training_run", "p_positive", "p_neutral", "p_negative", "uncertainty"]
    list_filter = ["training_run__project", "training_run"]
    search_fields = ["=step__id", "=step__solution__id"]
    raw_id_fields = ["step", "training_run"]
    list_select_related = ["step", "training_run"]
    show_full_result_count = False
    deletable = True
