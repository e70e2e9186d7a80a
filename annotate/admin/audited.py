"""Audit rows for admin edits and deletions that move labels' weight or take data away.

Edits: gold, quality-control and screening marks, open or closed, a problem's answer and text
(`AuditedEditsMixin`). Deletions: a `<model>.deleted` row per deleted row, with what went with it
(`AuditedDeletesMixin`). Labels themselves (annotations, preferences) are deleted by superusers
only (`LabelsKeptMixin`), so a lead's delete of a problem, solution, pair or project that carries
labels is refused by the admin's own check of the rows it would take along. Annotations keep
revisions of their own (annotate.services.audit); these rows are AuditEvents, read by superusers.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from django.contrib.admin.utils import NestedObjects
from django.core.serializers.json import DjangoJSONEncoder
from django.db import router, transaction
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from annotate.cascade import NotCountable, cascade_counts
from annotate.models import Project
from annotate.services import audit, events

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


def _deleted(obj: Model) -> dict[str, Any]:
    """What a deletion takes: the row's own fields (labels included, so a deleted label can be put
    back by hand from the audit row) and how many rows of each kind go with it (cascades)."""
    try:  # counted in SQL: a project's deletion loaded every step and score just to count them
        counts = cascade_counts(type(obj)._base_manager.filter(pk=obj.pk))
    except NotCountable:
        collector = NestedObjects(using=router.db_for_write(type(obj)))
        collector.collect([obj])
        counts = {model: len(rows) for model, rows in collector.model_objs.items()}
    along = {model._meta.label: n for model, n in counts.items() if model is not type(obj) and n}
    fields = {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}
    return {"id": obj.pk, "row": json.loads(json.dumps(fields, cls=DjangoJSONEncoder)), "with": along}


class AuditedDeletesMixin:
    """A `<model>.deleted` event for every row deleted in the admin, one by one or as a list action.
    `releases` names, for a label model, the field of the row that counts it and the keyword of
    `audit.release_label_counts` that gives that row back its room in the queue."""

    releases: tuple[str, str] | None = None

    def _record_deletions(self, request: HttpRequest, objs: list[Model]) -> list[tuple[Project | None, dict]]:
        return [(None if isinstance(o, Project) else getattr(o, "project", None), _deleted(o)) for o in objs]

    def _write(self, request: HttpRequest, model: type[Model], rows: list[tuple[Project | None, dict]]) -> None:
        for project, details in rows:
            if isinstance(project, Project) and not Project.objects.filter(pk=project.pk).exists():
                project = None  # deleted with the row (a project's own deletion)
            events.record(actor=request.user, project=project, action=f"{model._meta.model_name}.deleted", **details)

    def _release(self, objs: list[Model]) -> None:
        if self.releases is not None:
            field, keyword = self.releases
            audit.release_label_counts(**{keyword: Counter(getattr(o, field) for o in objs)})

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        with transaction.atomic():
            rows = self._record_deletions(request, [obj])
            super().delete_model(request, obj)  # type: ignore[misc]
            self._write(request, type(obj), rows)
            self._release([obj])

    def save_formset(self, request: HttpRequest, form: ModelForm, formset, change: bool) -> None:
        # Rows deleted from an inline on this page (a project's memberships) are deletions too.
        doomed = [f.instance for f in formset.deleted_forms if f.instance.pk is not None]
        with transaction.atomic():
            rows = self._record_deletions(request, doomed)
            super().save_formset(request, form, formset, change)  # type: ignore[misc]
            if doomed:
                self._write(request, formset.model, rows)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        with transaction.atomic():
            objs = list(queryset)
            rows = self._record_deletions(request, objs)
            super().delete_queryset(request, queryset)  # type: ignore[misc]
            self._write(request, queryset.model, rows)
            self._release(objs)


class LabelsKeptMixin:
    """Labels are deleted by superusers only: a lead corrects a label (a revision) or reopens its
    solution for another, and no delete of a row that carries labels gets past the admin's check."""

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)  # type: ignore[misc]
