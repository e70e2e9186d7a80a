"""The admin, scoped per project: a lead sees and edits only rows of the projects they lead.

Leads are staff with every permission of the domain apps (annotate.services.members), and the
admin's querysets are global by default, so without this a lead of one project could read or
correct another project's labels, or add themselves to it. Every domain model's path to its
project is listed here as data; a model that is not listed is visible to superusers only.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from annotate.models import Project, Role

# model label -> lookup from the model to its Project ("pk" for Project itself)
PROJECT_PATHS: dict[str, str] = {
    "annotate.project": "pk",
    "annotate.membership": "project",
    # a pseudonym maps to a person: visible only for members of the lead's projects
    "annotate.labelerprofile": "user__memberships__project",
    "annotate.annotatorstatus": "project",
    "annotate.problem": "project",
    "annotate.solution": "project",
    "annotate.step": "solution__project",
    "annotate.assignment": "project",
    "annotate.annotation": "project",
    "annotate.annotationrevision": "annotation__project",
    "annotate.importjob": "project",
    "annotate.export": "project",
    "ml.trainingrun": "project",
    "ml.stepscore": "training_run__project",
}


def lead_projects(*, user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(memberships__user=user, memberships__role=Role.LEAD)


def scope_queryset(queryset: QuerySet, *, user: AbstractBaseUser) -> QuerySet:
    """Rows of `queryset` the user may see in the admin (all for superusers, none when unmapped)."""
    if user.is_superuser:
        return queryset
    path = PROJECT_PATHS.get(queryset.model._meta.label_lower)
    if path is None:
        return queryset.none()
    projects = lead_projects(user=user).values("pk")
    if path == "pk":
        return queryset.filter(pk__in=projects)
    # A subquery, not a join, so a many-valued path yields each row once.
    return queryset.filter(pk__in=queryset.model._default_manager.filter(**{f"{path}__in": projects}).values("pk"))


class ProjectScopedAdmin(admin.ModelAdmin):
    """ModelAdmin whose lists, change pages and foreign-key choices stop at the lead's projects."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return scope_queryset(super().get_queryset(request), user=request.user)

    def formfield_for_foreignkey(self, db_field, request: HttpRequest, **kwargs):
        related: type[Model] = db_field.related_model
        if related._meta.label_lower in PROJECT_PATHS and "queryset" not in kwargs:
            kwargs["queryset"] = scope_queryset(related._default_manager.all(), user=request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
