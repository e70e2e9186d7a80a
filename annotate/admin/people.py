"""Projects and people: settings, memberships, pseudonyms, screening standing."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from annotate.admin.audited import AuditedDeletesMixin, AuditedEditsMixin
from annotate.admin_scope import ProjectScopedAdmin, ReadOnlyAdminMixin, ScopedTabularInline
from annotate.models import AnnotatorStatus, LabelerProfile, Membership, Project, Role
from annotate.services.members import add_member
from annotate.services.projects import can_create_projects

# The members page's rule (annotate.services.team.remove_member), kept in the admin too.
NEEDS_A_LEAD = "A project needs a lead: add another lead before removing the last one."


def _is_last_lead(membership: Membership | None) -> bool:
    if membership is None or membership.pk is None:
        return False
    saved = Membership.objects.filter(pk=membership.pk).values_list("project_id", "role").first()
    if saved is None or saved[1] != Role.LEAD:
        return False
    return not Membership.objects.filter(project_id=saved[0], role=Role.LEAD).exclude(pk=membership.pk).exists()


class MembershipForm(forms.ModelForm):
    def clean(self):
        data = super().clean()
        # project_id, not project: a membership being added has none yet
        moved = data.get("role") != Role.LEAD or getattr(data.get("project"), "pk", None) != self.instance.project_id
        if self.instance.pk and moved and _is_last_lead(self.instance):
            raise ValidationError(NEEDS_A_LEAD)
        return data


class MembershipFormSet(forms.BaseInlineFormSet):
    def clean(self):
        super().clean()
        kept = [f for f in self.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        had_lead = self.instance.pk and Membership.objects.filter(project=self.instance, role=Role.LEAD).exists()
        if had_lead and not any(f.cleaned_data.get("role") == Role.LEAD for f in kept):
            raise ValidationError(NEEDS_A_LEAD)


class MembershipInline(ScopedTabularInline):
    model = Membership
    formset = MembershipFormSet
    extra = 1
    readonly_fields = ["created_at"]

    def get_autocomplete_fields(self, request):
        # The user search asks the users' admin, which is for superusers only: a lead gets a plain
        # list of the people in their projects instead (admin_scope), and adds new people on the
        # project's Members page.
        return ["user"] if request.user.is_superuser else []

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "user" and not request.user.is_superuser:
            field.help_text = "People in your projects. Add someone new on the project's Members page."
        return field


@admin.register(Project)
class ProjectAdmin(AuditedDeletesMixin, ProjectScopedAdmin):
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

    def has_add_permission(self, request) -> bool:
        # The admin's Add follows the product's rule (superusers and the Project creators group),
        # as the New project page does: a lead's admin rights cover the projects they lead.
        return can_create_projects(user=request.user) and super().has_add_permission(request)

    def save_model(self, request, obj: Project, form, change) -> None:
        # Browsers send a textarea's lines with CRLF; guidelines are stored with LF, as the settings
        # page stores them, or its next save reports (and audits) a guidelines change nobody made.
        obj.guidelines = obj.guidelines.replace("\r\n", "\n")
        super().save_model(request, obj, form, change)

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        # The last-lead guard keeps a project from being left without a lead; deleting the project
        # takes its memberships with it, and the guard made every project with a lead undeletable.
        membership = str(Membership._meta.verbose_name)
        if membership in perms_needed and self.admin_site.get_model_admin(Membership).has_delete_permission(request):
            perms_needed = perms_needed - {membership}
        return deleted, counts, perms_needed, protected

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        # A lead sees only the projects they lead: one they add here would vanish from their own
        # admin and home page at once (a superuser sees every project and needs no membership).
        if not change and not request.user.is_superuser:
            add_member(project=form.instance, user=request.user, role=Role.LEAD)


@admin.register(Membership)
class MembershipAdmin(AuditedDeletesMixin, AuditedEditsMixin, ProjectScopedAdmin):
    form = MembershipForm
    audited_fields = ("role",)
    list_display = ["user", "project", "role", "created_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "user__email", "project__slug"]
    autocomplete_fields = ["project", "user"]
    list_select_related = ["user", "project"]
    readonly_fields = ["created_at"]

    def has_delete_permission(self, request, obj: Membership | None = None) -> bool:
        # No delete button on the last lead (and a bulk delete that holds it is refused).
        return not _is_last_lead(obj) and super().has_delete_permission(request, obj)


@admin.register(LabelerProfile)
class LabelerProfileAdmin(AuditedDeletesMixin, ReadOnlyAdminMixin, ProjectScopedAdmin):
    """Who a pseudonym is. Read-only: a profile is made with its user and serves every project
    they label in, so re-pointing one to another person, or deleting one (their next label gets a
    fresh UUID), changed the identities behind other projects' exports. Superusers may delete."""

    deletable = True
    list_display = ["user", "labeler_uuid"]
    search_fields = ["user__username", "labeler_uuid"]
    list_select_related = ["user"]
    readonly_fields = ["user", "labeler_uuid"]

    def has_delete_permission(self, request: HttpRequest, obj: LabelerProfile | None = None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)


@admin.register(AnnotatorStatus)
class AnnotatorStatusAdmin(AuditedDeletesMixin, AuditedEditsMixin, ProjectScopedAdmin):
    """Screening outcome per annotator and project; a lead may pass or fail someone by hand (audited:
    a pass decides whose labels count)."""

    audited_fields = ("screening_status", "screening_agreement")

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
