"""The audit trail: revisions of submitted annotations and events of the self-service pages."""

from django.conf import settings
from django.db import models

from annotate.models.labels import Annotation
from annotate.models.projects import Project


class AnnotationRevision(models.Model):
    """The state of a submitted annotation before one change: who changed it, when and why.

    Written by annotate.services.audit.revise_annotation, the only path that changes a submitted
    annotation; on PostgreSQL a trigger (migration 0006_audit_trail) refuses an UPDATE of the
    audited columns unless the same transaction wrote the revision that keeps the old values.
    """

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField(help_text="1 is the state as submitted or imported.")
    label_steps = models.TextField(help_text="label_steps before the change.")
    fields = models.JSONField(default=dict, help_text="The other audited fields before the change.")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    reason = models.TextField()

    class Meta:
        ordering = ["annotation_id", "version"]
        constraints = [models.UniqueConstraint(fields=["annotation", "version"], name="uniq_annotation_revision")]

    def __str__(self) -> str:
        return f"revision {self.version} of annotation {self.annotation_id}"


class AuditEvent(models.Model):
    """Who did what, when, outside the annotations' own revisions: project settings, members,
    invites, tokens, passwords. Written by annotate.services.events.record, never changed."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # SET_NULL: a project's trail outlives it (its deletion is itself an event, by the slug).
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="events")
    action = models.CharField(max_length=64)
    details = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["project", "-at"], name="auditevent_project_idx")]

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_id} at {self.at:%Y-%m-%d %H:%M}"
