"""The audit trail of submitted annotations: nothing is changed in place without a trace.

Every change to a submitted annotation (a lead's correction in the admin, a gold mark, a reopen
for relabeling) goes through `revise_annotation` (or `record_event` when the annotation itself
stays as it is), which first writes an AnnotationRevision holding the state before the change,
who changed it, when and why. On PostgreSQL a trigger (migration 0006_audit_trail) refuses an
UPDATE of the label columns that did not write such a revision in the same transaction.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import date, datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Max, QuerySet, Value
from django.db.models.functions import Greatest

from annotate.models import Annotation, AnnotationRevision, LabelerProfile, Solution
from annotate.services.exports.sequence import lock_export_sequence
from annotate.services.members import labeler_uuid_for
from annotate.tasks import refresh_stats_snapshot
from core import jobs
from prm800k.labels import label_counters
from prm800k.schema import format_timestamp

# Fields a revision keeps (besides label_steps): everything a person could change; counters are
# derived from label_steps and recomputed, export_seq and hashes are bookkeeping.
AUDITED_FIELDS = (
    "finish_reason",
    "finish_note",
    "total_time_ms",
    "is_gold",
    "is_quality_control",
    "is_screening",
    "generation",
    "verifier_score",
    "labeler_uuid",
    "annotator_id",
    "submitted_at",
    "project_id",
    "solution_id",
    "assignment_id",
    "source",
)
CHANGEABLE = frozenset(("label_steps", *AUDITED_FIELDS))
REVISION_EXPORT_SEQ = "export_seq"  # the key of a revision's `fields` that holds the label's export position
MAX_REASON = 2000


class AuditError(ValueError):
    pass


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def _snapshot(annotation: Annotation) -> dict[str, Any]:
    return {name: _jsonable(getattr(annotation, name)) for name in AUDITED_FIELDS}


def _clean_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise AuditError("A change to a submitted annotation needs a reason.")
    return reason[:MAX_REASON]


def _write_revision(*, locked: Annotation, user: AbstractBaseUser | None, reason: str) -> AnnotationRevision:
    if user is not None and user.is_authenticated:
        labeler_uuid_for(user=user)  # the changer's pseudonym, for exports with history
    last = AnnotationRevision.objects.filter(annotation=locked).aggregate(v=Max("version"))["v"] or 0
    return AnnotationRevision.objects.create(
        annotation=locked,
        version=last + 1,
        label_steps=locked.label_steps,
        # and, as bookkeeping, its export position before the change: a pull `since` a cursor at or
        # past it delivered this version, so the corrected one is a correction to that pull
        # (exports.corrections_in, the stream's X-Export-Corrected)
        fields={**_snapshot(locked), REVISION_EXPORT_SEQ: locked.export_seq},
        changed_by=user if user is not None and user.is_authenticated else None,
        reason=reason,
    )


@transaction.atomic
def revise_annotation(
    *, annotation: Annotation, user: AbstractBaseUser | None, reason: str, refresh_stats: bool = True, **changes: Any
) -> AnnotationRevision | None:
    """Change a submitted annotation, keeping its previous state as a revision (refresh_stats:
    rebuild the dashboard's snapshot after it; a caller revising many asks once per project).

    `changes` are field values (label_steps as JSON text, or a list that is serialized); counters
    are recomputed when label_steps changes. Returns the revision, or None when nothing changed.
    """
    reason = _clean_reason(reason)
    unknown = set(changes) - CHANGEABLE
    if unknown:
        raise AuditError(f"Not a changeable annotation field: {', '.join(sorted(unknown))}")
    if isinstance(changes.get("label_steps"), list):
        changes["label_steps"] = json.dumps(changes["label_steps"], ensure_ascii=False)
    locked = Annotation.objects.select_for_update().get(pk=annotation.pk)
    changed = {name: value for name, value in changes.items() if getattr(locked, name) != value}
    if not changed:
        return None
    revision = _write_revision(locked=locked, user=user, reason=reason)
    for name, value in changed.items():
        setattr(locked, name, value)
    # a new, higher export position (under the numbering lock, as an import numbers its labels),
    # so the next incremental pull (`since`) carries the correction
    locked.export_seq = lock_export_sequence(project=locked.project) + 1
    update_fields = [*changed, "export_seq"]
    if "label_steps" in changed:
        counters = label_counters(json.loads(locked.label_steps))
        for name, value in counters.items():
            setattr(locked, name, value)
        update_fields += list(counters)
    locked.save(update_fields=update_fields)
    for name in update_fields:  # the caller's object shows the new state
        setattr(annotation, name, getattr(locked, name))
    if refresh_stats:
        _refresh_stats(locked.project_id)
    return revision


def _refresh_stats(project_id: int) -> None:
    """The dashboard's snapshot counted labels as they were (a gold key among them, a changed
    rating): rebuild it once this commits, not when it next goes stale (5 minutes)."""
    jobs.enqueue_on_commit(refresh_stats_snapshot, project_id)


@transaction.atomic
def record_event(*, annotation: Annotation, user: AbstractBaseUser | None, reason: str) -> AnnotationRevision:
    """A trace without a change to the annotation itself (e.g. its solution reopened for relabeling)."""
    locked = Annotation.objects.select_for_update().get(pk=annotation.pk)
    return _write_revision(locked=locked, user=user, reason=_clean_reason(reason))


@transaction.atomic
def mark_gold(*, annotations: QuerySet[Annotation], user: AbstractBaseUser | None, reason: str) -> int:
    """Mark annotations (and their solutions) as gold, each with a revision; returns how many changed."""
    count = 0
    solution_ids = set()
    project_ids = set()
    for annotation in annotations.order_by("pk"):
        solution_ids.add(annotation.solution_id)
        project_ids.add(annotation.project_id)
        changed = revise_annotation(annotation=annotation, user=user, reason=reason, is_gold=True, refresh_stats=False)
        count += changed is not None
    Solution.objects.filter(pk__in=solution_ids).update(is_gold=True)
    for project_id in project_ids:  # one rebuild per project, not per label
        _refresh_stats(project_id)
    return count


@transaction.atomic
def reopen_for_relabeling(*, solutions: QuerySet[Solution], user: AbstractBaseUser | None, reason: str) -> int:
    """Open solutions for one more label each, from an annotator who has not labeled them; each
    existing annotation of them records why. A solution at the project's overlap gets room for
    one label beyond it (`extra_labels`), so the queue really serves it again."""
    ids = list(solutions.values_list("pk", flat=True))
    for annotation in Annotation.objects.filter(solution_id__in=ids).order_by("pk"):
        record_event(annotation=annotation, user=user, reason=reason)
    chosen = Solution.objects.filter(pk__in=ids)
    for project_id, overlap in chosen.values_list("project_id", "project__overlap").distinct():
        beyond = F("annotation_count") + Value(1 - overlap)  # > 0 when the solution is at capacity
        chosen.filter(project_id=project_id).update(
            is_open=True, extra_labels=Greatest(F("extra_labels"), beyond, Value(0))
        )
        _refresh_stats(project_id)
    return len(ids)


def history_by_annotation(annotation_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Export form of the revisions, oldest first: pseudonymous `changed_by` (a labeler UUID, never
    a username), UTC timestamp, reason, and the previous label and fields."""
    revisions = AnnotationRevision.objects.filter(annotation_id__in=annotation_ids).order_by("annotation_id", "version")
    rows = list(
        revisions.values("annotation_id", "version", "label_steps", "fields", "changed_by", "changed_at", "reason")
    )
    users = {row["changed_by"] for row in rows if row["changed_by"] is not None}
    pseudonyms = dict(LabelerProfile.objects.filter(user_id__in=users).values_list("user_id", "labeler_uuid"))
    out: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["annotation_id"], []).append(
            {
                "version": row["version"],
                "changed_at": format_timestamp(row["changed_at"]),
                "changed_by": str(pseudonyms[row["changed_by"]]) if row["changed_by"] in pseudonyms else None,
                "reason": row["reason"],
                "previous": {
                    "steps": json.loads(row["label_steps"]),
                    "finish_reason": row["fields"].get("finish_reason"),
                    "total_time": row["fields"].get("total_time_ms"),
                    "is_gold": row["fields"].get("is_gold"),
                },
            }
        )
    return out


def release_label_counts(*, solutions: Counter[int] | None = None, pairs: Counter[int] | None = None) -> None:
    """After labels are deleted (a superuser in the admin): each solution (pair) counts the labels it
    lost no more, and one of the queue opens again when it has room by the rule a submit closes it
    by; gold and screening ones stay as they are. Without this a solution whose label was deleted
    stayed closed at its old count and was never served for the label it was missing."""
    from annotate.models import Comparison

    for counts, model in ((solutions or Counter(), Solution), (pairs or Counter(), Comparison)):
        project_ids = set()
        by_loss: dict[int, list[int]] = {}
        for row_id, n in counts.items():
            by_loss.setdefault(n, []).append(row_id)
        for n, ids in by_loss.items():  # one UPDATE per number of labels lost, not per row
            model.objects.filter(pk__in=ids).update(annotation_count=Greatest(F("annotation_count") - n, Value(0)))
        for row in model.objects.filter(pk__in=list(counts)).select_related("project"):
            project_ids.add(row.project_id)
            room = row.annotation_count < row.project.overlap + getattr(row, "extra_labels", 0)
            queued = not row.is_gold and not getattr(row, "is_screening", False)
            if queued and room and not row.is_open:
                model.objects.filter(pk=row.pk).update(is_open=True)
        for project_id in project_ids:
            _refresh_stats(project_id)
