"""Working on a claimed assignment: its row lock, lease renewal, heartbeats, skips, drafts, and the
prelude that step submits (annotate.services.submit) and pair submits
(annotate.services.compare.submit) share.

Lock order everywhere: annotator status, assignment, solution (or pair). An expired lease is
renewed only while its place is still free (annotate.services.queue.place_free).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models, transaction
from django.utils import timezone

from annotate import queue_sql
from annotate.models import Assignment, AssignmentStatus
from annotate.services.queue import place_free, relaxed_commit
from core.errors import Conflict, Invalid, NotFound

MAX_DRAFT_CHARS = 512 * 1024


class LeaseConflict(Conflict):
    default_message = "This assignment is no longer yours."


class AssignmentFinished(LeaseConflict):
    """The assignment was submitted or skipped already (another tab, or a page the browser kept):
    a client moves on to its next task. The 409 says so by `code`, not only in words."""

    code = "assignment_finished"


class LateRefused(Exception):
    """A late submit whose place another annotator took; the caller keeps the payload (keep_refused)
    after its transaction rolled back and answers 409."""


class ConflictingReplay(Exception):
    """A submit with the key of a stored one but other content: another tab or device of the same
    annotator resumed the draft (same key) and submitted first. The first result stands; the caller
    keeps this payload (keep_refused, reason "conflict") and answers 409, so neither is lost."""


CONFLICT_MESSAGE = (
    "This solution was already submitted from another tab or device with other ratings; that submit is the one "
    "recorded. The ratings sent from here were not recorded; they are kept for you, listed under Not recorded in the "
    "workspace (for API clients: refused_submits in your progress, GET /api/v1/projects/<slug>/me/)."
)


def lock_assignment(*, assignment: Assignment, user: AbstractBaseUser) -> Assignment:
    """Lock the assignment row (404 for anyone but its owner). Lock order: status, assignment, solution."""
    if assignment.annotator_id != user.pk:
        raise NotFound()
    locked = queue_sql.lock_assignment(assignment_id=assignment.pk)
    if locked is None:  # deleted meanwhile (its project was)
        raise Assignment.DoesNotExist("Assignment matching query does not exist.")
    return locked


def _refuse_unless_active(assignment: Assignment) -> None:
    if assignment.status == AssignmentStatus.SUBMITTED:
        raise AssignmentFinished("This assignment was already submitted.")
    if assignment.status == AssignmentStatus.SKIPPED:
        raise AssignmentFinished("This assignment was skipped.")


def renew_if_free(*, assignment: Assignment, user: AbstractBaseUser, now) -> bool:
    """Extend a lease (the caller holds the assignment locked); an expired one only if its place is
    still free. Returns False, marking the assignment expired, when someone else took it."""
    project = assignment.project
    if assignment.status == AssignmentStatus.ACTIVE and assignment.lease_expires_at > now:
        free = True
    else:
        free = place_free(assignment=assignment, project=project, user=user, now=now)
    if free:
        assignment.status = AssignmentStatus.ACTIVE
        assignment.lease_expires_at = now + timedelta(minutes=project.lease_minutes)
        assignment.save(update_fields=["status", "lease_expires_at", "updated_at"])
    elif assignment.status != AssignmentStatus.EXPIRED:
        assignment.status = AssignmentStatus.EXPIRED
        assignment.save(update_fields=["status", "updated_at"])
    return free


@dataclass(frozen=True, slots=True)
class SubmitLock:
    assignment: Assignment  # locked, its lease running
    now: datetime
    first: Any = None  # the stored result of a duplicate that waited for the lock


def lock_for_submit(
    *, assignment: Assignment, user: AbstractBaseUser, idempotency_key: str, results: type[models.Model]
) -> SubmitLock:
    """The submit prelude, inside the caller's transaction: lock the assignment; a submitted one
    answers its stored result (`results`: Annotation or Preference) to the same key and 409 to
    another; a skipped one is a 409; a late one renews its lease if the place is free, else
    LateRefused."""
    locked = lock_assignment(assignment=assignment, user=user)
    now = timezone.now()
    if locked.status == AssignmentStatus.SUBMITTED:
        first = results.objects.filter(assignment=locked).first()
        if first is not None and first.idempotency_key == idempotency_key:
            return SubmitLock(locked, now, first)
        raise AssignmentFinished("This assignment was already submitted (with another idempotency key).")
    if locked.status == AssignmentStatus.SKIPPED:
        raise AssignmentFinished("This assignment was skipped; claim a new task.")
    late = locked.status != AssignmentStatus.ACTIVE or locked.lease_expires_at <= now
    if late and not renew_if_free(assignment=locked, user=user, now=now):
        raise LateRefused()
    return SubmitLock(locked, now)


def find_replay(
    *, results: type[models.Model], user: AbstractBaseUser, key: Any, assignment: Assignment
) -> models.Model | None:
    """The caller's earlier result with this idempotency key (a retried submit); the key on another
    assignment is a 400."""
    if not isinstance(key, str):
        return None
    first = results.objects.filter(annotator=user, idempotency_key=key).first()
    if first is not None and first.assignment_id != assignment.pk:
        raise Invalid({"idempotency_key": ["This key was already used for another assignment."]})
    return first


@transaction.atomic
def keep_refused(*, assignment: Assignment, user: AbstractBaseUser, payload: Any, reason: str = "late") -> None:
    """A refused submit is kept in the assignment's draft (listed under refused_submits): a late one
    ("late") also expires the lease; a conflicting replay ("conflict") leaves the submitted
    assignment as it is."""
    locked = lock_assignment(assignment=assignment, user=user)
    draft = locked.draft if isinstance(locked.draft, dict) else ({"previous": locked.draft} if locked.draft else {})
    locked.draft = {
        **draft,
        "refused_submit": payload,
        "refused_at": timezone.now().isoformat(),
        "refused_reason": reason,
    }
    fields = ["draft", "updated_at"]
    if reason == "late":
        locked.status = AssignmentStatus.EXPIRED
        fields.append("status")
    locked.save(update_fields=fields)


def keeps_refused(assignment: Assignment) -> bool:
    return isinstance(assignment.draft, dict) and "refused_submit" in assignment.draft


def heartbeat(*, assignment: Assignment, user: AbstractBaseUser) -> Assignment:
    """Extend the lease. 409 when the assignment is finished or its expired place was taken."""
    with transaction.atomic():
        relaxed_commit()
        locked = lock_assignment(assignment=assignment, user=user)
        _refuse_unless_active(locked)
        renewed = renew_if_free(assignment=locked, user=user, now=timezone.now())
    if not renewed:  # committed as expired above; the draft stays on the assignment
        raise LeaseConflict("Your lease expired and another annotator took this solution. Your draft is kept.")
    return locked


@transaction.atomic
def skip(*, assignment: Assignment, user: AbstractBaseUser) -> Assignment:
    """Release without labels; the solution is never served to this annotator again."""
    locked = lock_assignment(assignment=assignment, user=user)
    if locked.status == AssignmentStatus.SKIPPED:
        return locked
    if locked.status == AssignmentStatus.SUBMITTED:
        raise AssignmentFinished("This assignment was already submitted.")
    if locked.solution.is_screening:
        raise LeaseConflict("Screening questions cannot be skipped; use Give up with a reason instead.")
    locked.status = AssignmentStatus.SKIPPED
    locked.lease_expires_at = min(locked.lease_expires_at, timezone.now())
    locked.save(update_fields=["status", "lease_expires_at", "updated_at"])
    return locked


@transaction.atomic
def save_draft(*, assignment: Assignment, user: AbstractBaseUser, draft: Any) -> Assignment:
    """Store the workspace's work in progress on the assignment (owner only, until submitted; over a
    kept refused submit only null, which dismisses it)."""
    relaxed_commit()
    locked = lock_assignment(assignment=assignment, user=user)
    # A submitted assignment takes one save: null over a kept conflicting submit, which dismisses it.
    if locked.status == AssignmentStatus.SUBMITTED and not (draft is None and keeps_refused(locked)):
        raise AssignmentFinished("This assignment was already submitted.")
    if draft is not None and keeps_refused(locked):
        # A refused late submit is kept here until the annotator dismisses it (null); a tab still
        # saving its work must not overwrite it.
        raise LeaseConflict("This assignment keeps a refused submit (see refused_submits); save null to dismiss it.")
    if len(json.dumps(draft)) > MAX_DRAFT_CHARS:
        raise Invalid({"draft": [f"The draft is larger than {MAX_DRAFT_CHARS} characters."]})
    locked.draft = draft
    locked.save(update_fields=["draft", "updated_at"])
    return locked
