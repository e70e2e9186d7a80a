"""Tombstones: a label that an export may have delivered, then deleted (a superuser in the admin, or
with the solution, pair or problem that carried it). Incremental consumers read them through
`export/deletions/` to drop the records they appended earlier."""

from django.db import models

from annotate.models.projects import Project


class DeletedLabel(models.Model):
    class Kind(models.TextChoices):
        ANNOTATION = "annotation"
        PREFERENCE = "preference"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="deleted_labels")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # A position in the same export sequence as the labels of its kind (exports.sequence), taken when
    # the deletion is made, so an export cursor says which deletions a consumer has not yet seen.
    export_seq = models.BigIntegerField()
    # The deleted label's own position: a consumer whose cursor is below it never received it.
    label_export_seq = models.BigIntegerField()
    # The exported record's key: PRM800K's `labeler` and `timestamp`, exactly as exported.
    labeler_uuid = models.CharField(max_length=64)
    timestamp_text = models.CharField(max_length=40)
    deleted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "kind", "export_seq"]
        constraints = [
            models.UniqueConstraint(fields=["project", "kind", "export_seq"], name="uniq_deleted_label_position")
        ]

    def __str__(self) -> str:
        return f"deleted {self.kind} of {self.labeler_uuid} at {self.timestamp_text}"
