"""Projects and people: settings, memberships, pseudonyms, screening standing."""

from django.contrib import admin

from annotate.admin_scope import ProjectScopedAdmin, ScopedTabularInline
from annotate.models import AnnotatorStatus, LabelerProfile, Membership, Project


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
