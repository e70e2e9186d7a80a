"""Audit rows for the admin's edits to what decides a label's weight: gold, quality-control and
screening marks, open or closed, a problem's answer and text. Annotations keep revisions of their
own (annotate.services.audit); these rows are AuditEvents, read by superusers in the admin."""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from django.forms import ModelForm
from django.http import HttpRequest

from annotate.services import events

LONGEST = 500  # a problem's text is kept whole up to this, then cut: the row says what changed, not a copy


def _kept(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    text = str(value)
    return text if len(text) <= LONGEST else text[:LONGEST] + "…"


class AuditedEditsMixin:
    """On save, one `<model>.changed` event with the old and new value of each `audited_fields`
    field the form changed (none when it changed none of them). A lead marking a solution gold,
    unmarking a gold pair or changing a problem's answer moved every gold score and agreement
    figure with no trace of who or when."""

    audited_fields: tuple[str, ...] = ()

    def save_model(self, request: HttpRequest, obj: Model, form: ModelForm, change: bool) -> None:
        changes = {}
        if change:
            changes = {
                name: [_kept(form.initial.get(name)), _kept(getattr(obj, name))]
                for name in self.audited_fields
                if name in form.changed_data
            }
        super().save_model(request, obj, form, change)  # type: ignore[misc]
        if changes:
            events.record(
                actor=request.user,
                project=getattr(obj, "project", None),
                action=f"{obj._meta.model_name}.changed",
                id=obj.pk,
                changes=changes,
            )
