"""Submitting a pair: the payload arrives parsed (labeling_api.serializers_preference: {idempotency_key,
preference: A|B|tie, strength: 1|2|3, total_time_ms, note?, first_wrong?: {A: index|null, B:
index|null}}; A and B as the annotator saw them, the served candidate order), checked against
preference_context. Stored as a Preference in terms of the pair (A = solution_a).

Idempotency, leases and late submits follow annotate.services.submit: the assignment row lock
serializes duplicates, the unique (annotator, key) constraint backs it, a late submit is accepted
while the pair still has room, otherwise refused (409) and kept in the draft; a repeat of the key
with another answer (another tab submitted first) is refused and kept the same way.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Case, F, Value, When

from annotate.models import Assignment, AssignmentStatus, Comparison, Preference, Step
from annotate.services.compare.marks import record_marks
from annotate.services.leases import (
    ConflictingReplay,
    LateRefused,
    LeaseConflict,
    find_replay,
    keep_refused,
    lock_for_submit,
)
from annotate.services.members import labeler_uuid_for
from core.errors import NotFound
from prm800k.kinds import is_rated

PREFERENCES = ("A", "B", "tie")
STRENGTHS = (1, 2, 3)
SWAP = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True, slots=True)
class CleanPreference:
    idempotency_key: str
    preference: str
    strength: int
    total_time_ms: int
    note: str
    first_wrong: dict[str, int | None]
    sent: Any = None  # the body as it was sent: kept when a late submit is refused


def _replay(*, user: AbstractBaseUser, key: Any, assignment: Assignment) -> Preference | None:
    return find_replay(results=Preference, user=user, key=key, assignment=assignment)


def preference_context(*, assignment: Assignment, user: AbstractBaseUser) -> dict[str, dict[str, Any]]:
    """Each side as shown (A, B): its step count (`n_steps`), which first_wrong marks are checked
    against, and the indices of its steps shown but not rated (`unrated`: a trace's observations
    where the project does not rate them), which cannot be the first wrong step; 404 to anyone but
    the assignment's annotator."""
    if assignment.annotator_id != user.pk:
        raise NotFound()
    comparison = assignment.comparison
    left, right = comparison.solution_a_id, comparison.solution_b_id
    if assignment.swapped:
        left, right = right, left
    rate_observations = assignment.project.rate_observations
    counts: dict[int, int] = defaultdict(int)
    unrated: dict[int, list[int]] = defaultdict(list)
    rows = Step.objects.filter(solution_id__in=[left, right]).order_by("index")
    for solution_id, index, step_type in rows.values_list("solution_id", "index", "step_type"):
        counts[solution_id] += 1
        if not is_rated(step_type, rate_observations=rate_observations):
            unrated[solution_id].append(index)
    return {
        "n_steps": {"A": counts[left], "B": counts[right]},
        "unrated": {"A": unrated[left], "B": unrated[right]},
    }


def replayed(*, assignment: Assignment, user: AbstractBaseUser, key: str) -> Preference | None:
    """The first result of a retried submit (same key), also when the retry no longer validates;
    the key used on another assignment is Invalid."""
    return _replay(user=user, key=key, assignment=assignment)


def submit_preference(
    *, assignment: Assignment, user: AbstractBaseUser, clean: CleanPreference
) -> tuple[Preference, bool]:
    """Store the checked preference; returns (preference, created). See the module doc."""
    if assignment.annotator_id != user.pk:
        raise NotFound()
    labeler = labeler_uuid_for(user=user)
    try:
        return _store(assignment=assignment, user=user, clean=clean, labeler=labeler)
    except LateRefused:
        keep_refused(assignment=assignment, user=user, payload=clean.sent)
        raise LeaseConflict(
            "Your lease expired and another annotator took this pair, so this answer was not recorded. "
            f"{_kept_for(assignment)}"
        ) from None
    except ConflictingReplay:
        keep_refused(assignment=assignment, user=user, payload=clean.sent, reason="conflict")
        raise LeaseConflict(_conflict_message(assignment)) from None
    except IntegrityError:
        first = _replay(user=user, key=clean.idempotency_key, assignment=assignment)
        if first is None:
            raise
        if not _same_answer(first, clean):
            keep_refused(assignment=assignment, user=user, payload=clean.sent, reason="conflict")
            raise LeaseConflict(_conflict_message(assignment)) from None
        return first, False


# The compare page has no Not recorded list (the step workspace's): the first sentence says why, for
# the page to show; the rest tells API clients where the refused answer is kept.
def _kept_for(assignment: Assignment) -> str:
    me = f"GET /api/v1/projects/{assignment.project.slug}/me/"
    return f"The answer is kept for API clients as a refused submit in your progress (refused_submits, {me})."


def _conflict_message(assignment: Assignment) -> str:
    return (
        "This pair was already answered from another tab or device with another choice, which is the one "
        f"recorded; this answer was not. {_kept_for(assignment)}"
    )


def _same_answer(first: Preference, clean: CleanPreference) -> bool:
    """Is a repeat of `first`'s key a retry rather than another tab's answer? Compared as shown."""
    marks = (first.first_wrong_b, first.first_wrong_a) if first.swapped else (first.first_wrong_a, first.first_wrong_b)
    return (
        first.shown == clean.preference
        and first.strength == clean.strength
        and (first.note or "") == (clean.note or "")
        and marks == (clean.first_wrong.get("A"), clean.first_wrong.get("B"))
    )


@transaction.atomic
def _store(*, assignment: Assignment, user: AbstractBaseUser, clean: CleanPreference, labeler: str):
    held = lock_for_submit(assignment=assignment, user=user, idempotency_key=clean.idempotency_key, results=Preference)
    if held.first is not None:
        if not _same_answer(held.first, clean):
            raise ConflictingReplay()
        return held.first, False
    locked, now = held.assignment, held.now
    project = locked.project
    comparison = Comparison.objects.select_for_update().get(pk=locked.comparison_id)
    Comparison.objects.filter(pk=comparison.pk).update(
        annotation_count=F("annotation_count") + 1,
        is_open=Case(
            When(is_gold=False, annotation_count__gte=project.overlap - 1, then=Value(False)),
            default=F("is_open"),
        ),
    )
    # Shown sides back to the pair's: when swapped, the left candidate (A) was solution_b.
    marks = clean.first_wrong
    if locked.swapped:
        preferred, wrong_a, wrong_b = SWAP[clean.preference], marks["B"], marks["A"]
    else:
        preferred, wrong_a, wrong_b = clean.preference, marks["A"], marks["B"]
    preference = Preference.objects.create(
        project=project,
        comparison=comparison,
        assignment=locked,
        annotator=user,
        labeler_uuid=labeler,
        preferred=preferred,
        shown=clean.preference,
        swapped=locked.swapped,
        strength=clean.strength,
        note=clean.note,
        first_wrong_a=wrong_a,
        first_wrong_b=wrong_b,
        total_time_ms=clean.total_time_ms,
        is_gold=comparison.is_gold,
        idempotency_key=clean.idempotency_key,
        submitted_at=now,
    )
    record_marks(preference=preference)  # first-wrong marks become step labels
    locked.status = AssignmentStatus.SUBMITTED
    locked.save(update_fields=["status", "updated_at"])
    return preference, True
