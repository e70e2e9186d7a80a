"""Submitting a pair: {idempotency_key, preference: A|B|tie, strength: 1|2|3, total_time_ms, note?,
first_wrong?: {A: index|null, B: index|null}}; A and B as the annotator saw them (the served
candidate order). Stored as a Preference in terms of the pair (A = solution_a).

Idempotency, leases and late submits follow annotate.services.submit: the assignment row lock
serializes duplicates, the unique (annotator, key) constraint backs it, a late submit is accepted
while the pair still has room, otherwise refused (409) and kept in the draft.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, F, Value, When

from annotate.models import Assignment, AssignmentStatus, Comparison, Preference, Step
from annotate.services.compare.marks import record_marks
from annotate.services.leases import LateRefused, LeaseConflict, find_replay, keep_refused, lock_for_submit
from annotate.services.members import labeler_uuid_for
from annotate.services.submission import MAX_KEY, MAX_REASON, MAX_TIME_MS
from core.errors import Invalid, NotFound

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


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_preference(*, payload: Any, n_steps: dict[str, int]) -> CleanPreference:
    """Check the payload; errors by field path (core.errors.Invalid). n_steps: steps per shown side."""
    if not isinstance(payload, dict):
        raise Invalid({"non_field_errors": ["Expected a JSON object."]})
    errors: dict[str, list[str]] = {}
    key = payload.get("idempotency_key")
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY:
        errors["idempotency_key"] = [f"Required: non-empty text of at most {MAX_KEY}."]
    preference = payload.get("preference")
    if preference not in PREFERENCES:
        errors["preference"] = ["Required: one of A, B, tie."]
    strength = payload.get("strength", 1 if preference == "tie" else None)
    if not _int(strength) or strength not in STRENGTHS:
        errors["strength"] = ["Required: 1 (slightly), 2 (clearly) or 3 (much better)."]
    total = payload.get("total_time_ms")
    if not _int(total) or not 0 <= total <= MAX_TIME_MS:
        errors["total_time_ms"] = [f"Required: an integer from 0 to {MAX_TIME_MS}."]
    note = payload.get("note") or ""
    if not isinstance(note, str) or len(note) > MAX_REASON:
        errors["note"] = [f"Must be text of at most {MAX_REASON} characters."]
        note = ""
    first_wrong: dict[str, int | None] = {"A": None, "B": None}
    marks = payload.get("first_wrong") or {}
    if not isinstance(marks, dict):
        errors["first_wrong"] = ["Must be an object {A: step index or null, B: ...}."]
    else:
        for side, value in marks.items():
            if side not in ("A", "B"):
                errors[f"first_wrong.{side}"] = ["Unknown side: use A or B."]
            elif value is not None and (not _int(value) or not 0 <= value < n_steps[side]):
                errors[f"first_wrong.{side}"] = [f"Must be a step index from 0 to {n_steps[side] - 1}, or null."]
            else:
                first_wrong[side] = value
    unknown = set(payload) - {"idempotency_key", "preference", "strength", "total_time_ms", "note", "first_wrong"}
    for name in sorted(unknown):
        errors[name] = ["Unknown field in a compare submit."]
    if errors:
        raise Invalid(errors)
    return CleanPreference(key, preference, strength, total, note.strip(), first_wrong)


def _replay(*, user: AbstractBaseUser, key: Any, assignment: Assignment) -> Preference | None:
    return find_replay(results=Preference, user=user, key=key, assignment=assignment)


def submit_preference(*, assignment: Assignment, user: AbstractBaseUser, payload: Any) -> tuple[Preference, bool]:
    """Store the preference; returns (preference, created). See the module doc."""
    if assignment.annotator_id != user.pk:
        raise NotFound()
    comparison = assignment.comparison
    counts = dict(
        Step.objects.filter(solution_id__in=[comparison.solution_a_id, comparison.solution_b_id])
        .values_list("solution_id")
        .annotate(n=Count("id"))
    )
    left, right = comparison.solution_a_id, comparison.solution_b_id
    if assignment.swapped:
        left, right = right, left
    try:
        clean = validate_preference(payload=payload, n_steps={"A": counts.get(left, 0), "B": counts.get(right, 0)})
    except Invalid:
        key = payload.get("idempotency_key") if isinstance(payload, dict) else None
        first = _replay(user=user, key=key, assignment=assignment)
        if first is not None:
            return first, False
        raise
    labeler = labeler_uuid_for(user=user)
    try:
        return _store(assignment=assignment, user=user, clean=clean, labeler=labeler)
    except LateRefused:
        keep_refused(assignment=assignment, user=user, payload=payload)
        raise LeaseConflict(
            "Your lease expired and another annotator took this pair, so this submit was not recorded. "
            "Your answer is kept under refused_submits in your progress."
        ) from None
    except IntegrityError:
        first = _replay(user=user, key=clean.idempotency_key, assignment=assignment)
        if first is None:
            raise
        return first, False


@transaction.atomic
def _store(*, assignment: Assignment, user: AbstractBaseUser, clean: CleanPreference, labeler: str):
    held = lock_for_submit(assignment=assignment, user=user, idempotency_key=clean.idempotency_key, results=Preference)
    if held.first is not None:
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
