"""The admin, scoped per project: a lead sees and edits only rows of the projects they lead.

Leads are staff with every permission of the domain apps (annotate.services.members), and the
admin's querysets are global by default, so without this a lead of one project could read or
correct another project's labels, or add themselves to it. Every domain model's path to its
project is listed here as data; a model that is not listed is visible to superusers only.

Scoped for a lead: list querysets, change pages, foreign-key choices (dropdowns, autocomplete and
raw-id fields alike, so a posted id outside the scope is "not a valid choice"), the project list
filters (which would otherwise list every project's slug), and add forms' initial values from the
query string (a raw-id widget would otherwise print the label of any row, e.g. another project's
problem text). Users offered in a foreign key are the members of the lead's projects.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.db.models import ForeignKey, Model, QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import capfirst

from annotate.cascade import NotCountable, cascade_counts
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
    "annotate.deletedlabel": "project",
    "annotate.comparison": "project",
    "annotate.preference": "project",
    "ml.trainingrun": "project",
    "ml.stepscore": "training_run__project",
}


def lead_projects(*, user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(memberships__user=user, memberships__role=Role.LEAD)


def scope_queryset(queryset: QuerySet, *, user: AbstractBaseUser) -> QuerySet:
    """Rows of `queryset` the user may see in the admin (all for superusers, none when unmapped).
    Users: the members of the projects the user leads."""
    if user.is_superuser:
        return queryset
    if queryset.model is get_user_model():
        return queryset.filter(pk__in=_member_ids(user=user))
    path = PROJECT_PATHS.get(queryset.model._meta.label_lower)
    if path is None:
        return queryset.none()
    projects = lead_projects(user=user).values("pk")
    if path == "pk":
        return queryset.filter(pk__in=projects)
    # A subquery, not a join, so a many-valued path yields each row once.
    return queryset.filter(pk__in=queryset.model._default_manager.filter(**{f"{path}__in": projects}).values("pk"))


def _member_ids(*, user: AbstractBaseUser) -> QuerySet:
    from annotate.models import Membership

    return Membership.objects.filter(project__in=lead_projects(user=user).values("pk")).values("user_id")


def _is_scoped(model: type[Model]) -> bool:
    return model._meta.label_lower in PROJECT_PATHS or model is get_user_model()


class ScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A list filter on a foreign key that offers only the rows the caller may see."""

    def field_choices(self, field, request: HttpRequest, model_admin):
        scoped = scope_queryset(field.related_model._default_manager.all(), user=request.user)
        return field.get_choices(
            include_blank=False,
            ordering=self.field_admin_ordering(field, request, model_admin),
            limit_choices_to={"pk__in": scoped.values("pk")},
        )


def _related_model(model: type[Model], path: str) -> type[Model] | None:
    """The model a list_filter path like "solution__project" ends on, when it is a relation."""
    for name in path.split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(name)
        except FieldDoesNotExist:
            return None
        if not field.is_relation:
            return None
        model = field.related_model
    return model


class ScopedTabularInline(admin.TabularInline):
    """An inline whose foreign-key choices stop at the lead's projects (and their members)."""

    def formfield_for_foreignkey(self, db_field, request: HttpRequest, **kwargs):
        related: type[Model] = db_field.related_model
        if _is_scoped(related) and "queryset" not in kwargs:
            kwargs["queryset"] = scope_queryset(related._default_manager.all(), user=request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


# A deletion that takes more rows than this is confirmed with counts, not a list of every row.
LISTED_DELETIONS = 500


class ProjectScopedAdmin(admin.ModelAdmin):
    """ModelAdmin whose lists, change pages, filters, initial values and foreign-key choices stop
    at the lead's projects."""

    def get_deleted_objects(self, objs, request: HttpRequest):  # type: ignore[no-untyped-def]
        """A superuser's big deletion (a project, a problem set) is confirmed by counts: Django's
        page listed every row it takes, loaded one by one (20,000 steps: 6 s, a 4.6 MB page; a
        project of PRM800K's size never answered). Others, and small deletions, get Django's page,
        which asks each row's admin whether it may be deleted (a lead's rules are per row)."""
        objs = list(objs)
        if not objs or not request.user.is_superuser:
            return super().get_deleted_objects(objs, request)
        model = type(objs[0])
        try:
            counts = cascade_counts(model._base_manager.filter(pk__in=[o.pk for o in objs]))
        except NotCountable:
            return super().get_deleted_objects(objs, request)
        if sum(counts.values()) <= LISTED_DELETIONS:
            return super().get_deleted_objects(objs, request)
        perms_needed = set()
        for related in counts:  # a superuser's rules are per model (read-only tables), never per row
            if self.admin_site.is_registered(related):
                if not self.admin_site.get_model_admin(related).has_delete_permission(request):
                    perms_needed.add(related._meta.verbose_name)
        listed = [
            format_html(
                '{}: <a href="{}">{}</a>',
                capfirst(model._meta.verbose_name),
                reverse(f"{self.admin_site.name}:{model._meta.app_label}_{model._meta.model_name}_change", args=[o.pk]),
                o,
            )
            for o in objs
        ]
        listed.append(f"and the {sum(counts.values()) - len(objs):,} rows counted in the summary above")
        model_count = {m._meta.verbose_name_plural: n for m, n in counts.items()}
        return listed, model_count, perms_needed, []

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return scope_queryset(super().get_queryset(request), user=request.user)

    def formfield_for_foreignkey(self, db_field, request: HttpRequest, **kwargs):
        related: type[Model] = db_field.related_model
        if _is_scoped(related) and "queryset" not in kwargs:
            kwargs["queryset"] = scope_queryset(related._default_manager.all(), user=request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_autocomplete_fields(self, request: HttpRequest):
        # The user search asks the users' admin, which is for superusers only (it answers a lead
        # 403, so the widget found nobody): a lead gets a plain list of the people in their projects.
        fields = super().get_autocomplete_fields(request)
        if request.user.is_superuser:
            return fields
        user_model = get_user_model()
        return [name for name in fields if self.model._meta.get_field(name).related_model is not user_model]

    def get_list_filter(self, request: HttpRequest):
        filters = []
        for item in super().get_list_filter(request):
            related = _related_model(self.model, item) if isinstance(item, str) else None
            filters.append((item, ScopedRelatedFilter) if related is not None and _is_scoped(related) else item)
        return filters

    def get_changeform_initial_data(self, request: HttpRequest) -> dict:
        """Initial values from the query string, without foreign keys to rows outside the scope."""
        initial = super().get_changeform_initial_data(request)
        for name in list(initial):
            try:
                field = self.model._meta.get_field(name)
            except FieldDoesNotExist:
                continue
            if not isinstance(field, ForeignKey) or not _is_scoped(field.related_model):
                continue
            visible = scope_queryset(field.related_model._default_manager.all(), user=request.user)
            value = initial[name]
            if not visible.filter(pk=value if str(value).isdigit() else None).exists():
                del initial[name]
        return initial


class FixedIdentityMixin:
    """Fields that say what a row *is* (its project, its problem, a pair's two solutions) are set
    when it is added and read-only after: moving a labeled solution to another project or problem,
    or re-pointing a pair that has answers, would make its exports pair labels with other texts."""

    identity_fields: tuple[str, ...] = ()

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fields += [name for name in self.identity_fields if name not in fields]
        return fields


def problem_elsewhere(project: Project | None, problem) -> dict[str, str]:
    """The add form's error when a row's problem is not one of its project's ({} when it is, or
    when either is not chosen yet): a solution or pair must answer a problem of its own project."""
    if project is not None and problem is not None and problem.project_id != project.pk:
        return {"problem": "This problem belongs to another project."}
    return {}


class DeletedWithParentMixin:
    """Rows that go only with the row they belong to: a solution's steps, an annotation's revisions,
    a project's invites and deletion tombstones. That row's deletion takes them (the admin asks this
    admin's delete permission for every row a deletion takes, so it stays), but they have no delete
    page or action of their own. Read-only admins refused the permission outright, and with it every
    deletion that reached such a row: a superuser could delete no corrected label and no project
    that had ever sent an invite."""

    deletable = True
    parent = "the row it belongs to"

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)  # type: ignore[misc]
        actions.pop("delete_selected", None)
        return actions

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: dict | None = None) -> HttpResponse:
        raise PermissionDenied(f"A {self.model._meta.verbose_name} is deleted with {self.parent}, never alone.")  # type: ignore[attr-defined]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict | None = None
    ) -> HttpResponse:
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "show_delete": False})  # type: ignore[misc]


class ReadOnlyAdminMixin:
    """For rows the app writes (steps, audit trails, job records, scores): shown, never added or
    edited here. `deletable = True` leaves deletion to the usual permission (job records)."""

    deletable = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.deletable and super().has_delete_permission(request, obj)
