"""Tombstones of deleted labels, so an incremental export consumer can drop what it pulled earlier.

A label that an export may have delivered (it has an export position) leaves a `DeletedLabel` when
it is deleted, however the row goes: on its own in the admin, or with its solution, pair or
problem. The tombstone takes the next position in the label's export sequence under the same lock
as exports, so a pull of deletions `since` a cursor never skips one committed late. A project's own
deletion leaves none: its exports go with it.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Model, QuerySet
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from annotate.models import Annotation, DeletedLabel, Preference, Project
from annotate.services.exports.sequence import lock_export_sequence
from prm800k.schema import format_timestamp


def record_deletion(*, label: Annotation | Preference) -> DeletedLabel | None:
    """Leave a tombstone for `label`, about to be deleted in the current transaction; None when no
    export can have delivered it (it was never numbered)."""
    model = type(label)
    with transaction.atomic():
        top = lock_export_sequence(project=Project(pk=label.project_id), model=model)  # its id is enough
        # Read under the lock: an export may have numbered the row since it was loaded.
        position = model.objects.filter(pk=label.pk).values_list("export_seq", flat=True).first()
        if position is None:
            return None
        timestamp = getattr(label, "timestamp_text", "") or format_timestamp(label.submitted_at)
        return DeletedLabel.objects.create(
            project_id=label.project_id,
            kind=DeletedLabel.Kind.PREFERENCE if model is Preference else DeletedLabel.Kind.ANNOTATION,
            export_seq=top + 1,
            label_export_seq=position,
            labeler_uuid=label.labeler_uuid,
            timestamp_text=timestamp,
        )


def deletions_since(*, project: Project, since: int = 0, preferences: bool = False) -> QuerySet[DeletedLabel]:
    """The project's tombstones after export position `since`, in the order they were made."""
    kind = DeletedLabel.Kind.PREFERENCE if preferences else DeletedLabel.Kind.ANNOTATION
    return DeletedLabel.objects.filter(project=project, kind=kind, export_seq__gt=since).order_by("export_seq")


def _project_going(origin: Any) -> bool:
    if isinstance(origin, Project):
        return True
    return isinstance(origin, QuerySet) and origin.model is Project


@receiver(pre_delete, sender=Annotation, dispatch_uid="annotate.deleted_annotation_tombstone")
@receiver(pre_delete, sender=Preference, dispatch_uid="annotate.deleted_preference_tombstone")
def _label_deleted(sender: type[Model], instance: Annotation | Preference, origin: Any = None, **kwargs: Any) -> None:
    # A signal, not a call in the admin: cascades (a solution's or a problem's deletion) and any
    # future path that deletes labels leave tombstones too.
    if not _project_going(origin):
        record_deletion(label=instance)
