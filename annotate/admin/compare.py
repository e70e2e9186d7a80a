"""Compare projects: pairs (a lead marks gold pairs here) and the preferences given on them."""

from django.contrib import admin
from django.http import HttpRequest

from annotate.admin_scope import ProjectScopedAdmin
from annotate.models import Comparison, Preference


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
