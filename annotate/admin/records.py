"""Records of what happened: import and export jobs (read-only apart from deletion), the tombstones
of deleted labels and, for superusers, the self-service pages' audit events and invites."""

from django.contrib import admin
from django.http import HttpRequest

from annotate.admin.audited import AuditedDeletesMixin
from annotate.admin_scope import DeletedWithParentMixin, ProjectScopedAdmin, ReadOnlyAdminMixin
from annotate.models import AuditEvent, DeletedLabel, Export, ImportJob, Invite


class JobAdmin(AuditedDeletesMixin, ReadOnlyAdminMixin, ProjectScopedAdmin):
    list_select_related = ["project", "requested_by"]
    deletable = True


@admin.register(ImportJob)
class ImportJobAdmin(JobAdmin):
    list_display = ["id", "project", "filename", "status", "requested_by", "created_at", "finished_at"]
    list_filter = ["status", "project"]
    search_fields = ["=id", "filename", "requested_by__username"]


@admin.register(Export)
class ExportAdmin(JobAdmin):
    list_display = [
        "id",
        "project",
        "format",
        "status",
        "record_count",
        "byte_size",
        "requested_by",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "format", "project"]
    search_fields = ["=id", "file_path", "requested_by__username"]


@admin.register(DeletedLabel)
class DeletedLabelAdmin(DeletedWithParentMixin, ReadOnlyAdminMixin, ProjectScopedAdmin):
    """What `export/deletions/` lists; never deleted alone (a pipeline would then keep the label),
    only with its project."""

    parent = "its project"

    list_display = ["deleted_at", "project", "kind", "labeler_uuid", "timestamp_text"]
    list_filter = ["kind", "project"]
    search_fields = ["=labeler_uuid", "timestamp_text"]
    list_select_related = ["project"]


class SuperuserReadOnlyAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Records of the self-service pages that superusers read and nobody edits here. Leads are staff
    with every annotate permission, so the superuser check is explicit."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return request.user.is_superuser


@admin.register(AuditEvent)
class AuditEventAdmin(SuperuserReadOnlyAdmin):
    """The audit log of the self-service pages (annotate.services.events)."""

    list_display = ["at", "action", "actor", "project"]
    list_filter = ["action", "project"]
    search_fields = ["action", "actor__username", "project__slug"]
    list_select_related = ["actor", "project"]
    readonly_fields = ["at", "action", "actor", "project", "details"]
    date_hierarchy = "at"


@admin.register(Invite)
class InviteAdmin(DeletedWithParentMixin, SuperuserReadOnlyAdmin):
    """Invite links (leads make and revoke them on the members page; only a hash of the link is kept).
    Deleted only with their project."""

    parent = "its project"

    list_display = ["id", "project", "roles", "created_by", "created_at", "expires_at", "used_at", "used_by"]
    list_filter = ["project"]
    search_fields = ["project__slug", "created_by__username", "used_by__username"]
    list_select_related = ["project", "created_by", "used_by"]
    exclude = ["token_hash"]
