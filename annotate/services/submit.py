"""Submitting an assignment: storage in PRM800K form, idempotency and the late-submit rule.

The payload arrives parsed and checked against the solution (labeling_api.serializers_submit, with
the context from annotate.services.submission.submission_context). A repeat with the same
idempotency key returns the first result (a repeat with other content is a 409, kept as the draft:
another tab submitted first); a late submit (lease expired) is accepted while the
solution still has room, otherwise refused and kept as the draft.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction

from annotate import queue_sql
from annotate.models import Annotation, AnnotationSource, Assignment, Project
from annotate.services import quality
from annotate.services.leases import (
    CONFLICT_MESSAGE,
    ConflictingReplay,
    LateRefused,
    LeaseConflict,
    find_replay,
    keep_refused,
    lock_for_submit,
)
from annotate.services.members import labeler_uuid_for
from annotate.services.queue import claim_next, lock_annotator_status
from annotate.services.submission import CleanSubmission, SubmissionContext, build_label_steps
from core.errors import Forbidden, NotFound
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps


@dataclass(frozen=True, slots=True)
class SubmitResult:
    annotation: Annotation
    created: bool


def _replay(*, user: AbstractBaseUser, key: str, assignment: Assignment) -> Annotation | None:
    return find_replay(results=Annotation, user=user, key=key, assignment=assignment)


def replayed(*, assignment: Assignment, user: AbstractBaseUser, key: str) -> SubmitResult | None:
    """The first result of a retried submit (same key), also when the retry no longer validates;
    the key used on another assignment is Invalid."""
    first = _replay(user=user, key=key, assignment=assignment)
    return None if first is None else SubmitResult(first, created=False)


def submit(
    *, assignment: Assignment, user: AbstractBaseUser, submission: CleanSubmission, context: SubmissionContext
) -> SubmitResult:
    """Store the annotator's checked labels for `assignment` as an Annotation (see module doc);
    `context` is the one submission was checked against.

    A repeat with the same idempotency key, sequential or concurrent, returns the first result:
    the assignment row lock serializes duplicates, and the unique (annotator, key) constraint
    backs it. A repeat with other labels (another tab resumed the draft and its key) is a 409 and
    kept under "refused_submit", the first result standing. A late submit (lease expired) is
    accepted while the solution still has room; otherwise 409, and the payload as sent is kept in
    the assignment's draft under "refused_submit".
    """
    if assignment.annotator_id != user.pk:
        raise NotFound()
    project = assignment.project
    label_steps = build_label_steps(
        sub=submission, mode=context.mode, step_texts=context.step_texts, rated=context.rated
    )
    labeler_uuid = context.labeler_uuid or labeler_uuid_for(user=user)
    try:
        return _store(
            assignment=assignment, user=user, sub=submission, label_steps=label_steps, labeler_uuid=labeler_uuid
        )
    except LateRefused:
        keep_refused(assignment=assignment, user=user, payload=submission.sent)
        raise LeaseConflict(
            "Your lease expired and another annotator took this solution, so this submit was not recorded. "
            "Your ratings are kept for you, listed under Not recorded in the workspace "
            f"(for API clients: refused_submits in your progress, GET /api/v1/projects/{project.slug}/me/)."
        ) from None
    except ConflictingReplay:
        keep_refused(assignment=assignment, user=user, payload=submission.sent, reason="conflict")
        raise LeaseConflict(CONFLICT_MESSAGE) from None
    except IntegrityError:
        # The key was used before (another assignment: a ValidationError from _replay), or a
        # duplicate got past the locks: the first result wins.
        first = _replay(user=user, key=submission.idempotency_key, assignment=assignment)
        if first is None:
            raise
        if not _same_content(first, submission, label_steps):
            keep_refused(assignment=assignment, user=user, payload=submission.sent, reason="conflict")
            raise LeaseConflict(CONFLICT_MESSAGE) from None
        return SubmitResult(first, created=False)


def _same_content(first: Annotation, sub: CleanSubmission, label_steps: list[dict[str, Any]]) -> bool:
    """Is a repeat of `first`'s key a retry (same labels and finish) rather than another tab's work?
    The active time is left out: a retry after a reload may carry a later clock."""
    return (
        first.label_steps == dumps_label_steps(label_steps)
        and first.finish_reason == sub.finish_reason
        and (first.finish_note or "") == (sub.reason or "")
    )


@transaction.atomic
def _store(
    *,
    assignment: Assignment,
    user: AbstractBaseUser,
    sub: CleanSubmission,
    label_steps: list[dict[str, Any]],
    labeler_uuid: str,
) -> SubmitResult:
    # Lock order everywhere: annotator status (only screening submits touch it), assignment, solution.
    status = lock_annotator_status(project=assignment.project, user=user) if assignment.solution.is_screening else None
    held = lock_for_submit(assignment=assignment, user=user, idempotency_key=sub.idempotency_key, results=Annotation)
    if held.first is not None:  # a repeat, also one that waited for the lock
        if not _same_content(held.first, sub, label_steps):
            raise ConflictingReplay()
        return SubmitResult(held.first, created=False)
    locked, now = held.assignment, held.now
    project = locked.project
    solution = locked.solution  # read with the assignment lock: flags as of now
    annotation = Annotation(
        project=project,
        solution_id=locked.solution_id,
        assignment=locked,
        annotator=user,
        labeler_uuid=labeler_uuid,
        source=AnnotationSource.APP,
        submitted_at=now,
        generation=locked.generation,
        is_quality_control=solution.is_gold and not solution.is_screening,
        is_screening=solution.is_screening,
        verifier_score=locked.verifier_score,
        finish_reason=sub.finish_reason,
        finish_note=sub.reason,
        total_time_ms=sub.total_time_ms,
        label_steps=dumps_label_steps(label_steps),
        idempotency_key=sub.idempotency_key,
        **label_counters(label_steps),
    )
    # The solution's counter, the annotation and the submitted status (as annotation.save()).
    queue_sql.store_annotation(annotation=annotation, assignment=locked, overlap=project.overlap)
    if status is not None:
        status.screening_submitted += 1
        status.save(update_fields=["screening_submitted", "updated_at"])
        quality.decide_screening(project=project, user=user, status=status)
    return SubmitResult(annotation, created=True)


def claim_after_submit(
    *, project: Project, user: AbstractBaseUser, roles: set[str] | None = None
) -> tuple[Assignment | None, str | None]:
    """The next task for the submit response (one round trip); a message instead when screening
    has just been failed or the caller may no longer label."""
    try:
        return claim_next(project=project, user=user, roles=roles), None
    except Forbidden as refused:  # ScreeningFailed included
        return None, refused.message
