"""The submit payload of a compare task (a pair): its one parser and the submit entry that parses,
replays a retry and stores (annotate.services.compare.submit).

Payload: {idempotency_key, preference: A|B|tie, strength: 1|2|3, total_time_ms, note?,
first_wrong?: {A: index|null, B: index|null}}, A and B as the annotator saw them. Values are taken
as JSON sends them, never coerced; a tie's strength is always stored as 1 (a tie has none, whatever
a page still held); a falsy note or first_wrong is
none; any other key is refused. The context (annotate.services.compare.submit.preference_context)
gives each shown side's step count ("n_steps") and its steps shown but not rated ("unrated": a
trace's observations), which a mark may not name. Every error is reported at once, keyed by
field path (`first_wrong.A`), through labeling_api.serializers_submit.flat_errors.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import empty

from annotate.models import Assignment, Preference
from annotate.services.compare import submit as compare_submit
from annotate.services.compare.submit import PREFERENCES, STRENGTHS, CleanPreference
from annotate.services.submission import MAX_KEY, MAX_REASON, MAX_TIME_MS
from core.errors import Invalid
from labeling_api.serializers_submit import AsSent, KeyField, flat_errors, is_int, json_object

SIDES = ("A", "B")


class PreferenceField(AsSent, serializers.ChoiceField):
    def to_internal_value(self, data: Any) -> str:
        if data not in PREFERENCES:
            raise ValidationError("Required: one of A, B, tie.")
        return data


class StrengthField(AsSent, serializers.ChoiceField):
    def to_internal_value(self, data: Any) -> int:
        if not is_int(data) or data not in STRENGTHS:
            raise ValidationError("Required: 1 (slightly), 2 (clearly) or 3 (much better).")
        return data


class PairTimeField(AsSent, serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if not is_int(data) or not 0 <= data <= MAX_TIME_MS:
            raise ValidationError(f"Required: an integer from 0 to {MAX_TIME_MS}.")
        return data


class NoteField(AsSent, serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        if not data:
            return ""
        if not isinstance(data, str) or len(data) > MAX_REASON:
            raise ValidationError(f"Must be text of at most {MAX_REASON} characters.")
        return data.strip()


class FirstWrongField(AsSent, serializers.DictField):
    def to_internal_value(self, data: Any) -> dict[str, int | None]:
        marks = data or {}
        if not isinstance(marks, dict):
            raise ValidationError("Must be an object {A: step index or null, B: ...}.")
        n_steps = self.context["n_steps"]
        unrated = self.context.get("unrated") or {}
        first_wrong: dict[str, int | None] = dict.fromkeys(SIDES)
        errors: dict[str, list[str]] = {}
        for side, value in marks.items():
            if side not in SIDES:
                errors[side] = ["Unknown side: use A or B."]
            elif value is not None and (not is_int(value) or not 0 <= value < n_steps[side]):
                errors[side] = [f"Must be a step index from 0 to {n_steps[side] - 1}, or null."]
            elif value is not None and value in unrated.get(side, ()):
                errors[side] = [f"Step {value} is shown but not rated here (an observation): mark a rated step."]
            else:
                first_wrong[side] = value
        if errors:
            raise ValidationError(errors)
        return first_wrong


class PreferenceInSerializer(serializers.Serializer):
    """A compare task's submit body: which of the pair is better, A and B as served."""

    # context: {"n_steps": {"A": int, "B": int}, "unrated"?: {"A": [index, ...], "B": [...]}}

    idempotency_key = KeyField(max_length=MAX_KEY, help_text="A repeat with the same key returns the first result.")
    preference = PreferenceField(choices=PREFERENCES)
    strength = StrengthField(
        choices=STRENGTHS,
        required=False,
        help_text="1 slightly, 2 clearly, 3 much better; required for A or B; a tie is stored as 1 whatever is sent.",
    )
    total_time_ms = PairTimeField(min_value=0, max_value=MAX_TIME_MS)
    note = NoteField(required=False, allow_blank=True, max_length=MAX_REASON)
    first_wrong = FirstWrongField(
        child=serializers.IntegerField(allow_null=True),
        required=False,
        help_text="The first wrong step of each shown side: {A: index or null, B: index or null}.",
    )

    valid_key: str | None = None  # the idempotency key once it has passed

    def run_validation(self, data: Any = empty) -> CleanPreference:
        return super().run_validation(json_object(data))

    def to_internal_value(self, data: dict) -> dict:
        errors: dict[str, Any] = {}
        attrs: dict = {}
        held = data.get("strength")
        if data.get("preference") == "tie" and (held is None or (type(held) is int and held in STRENGTHS)):
            # a tie has no strength: a strength the page still held from an earlier choice is not stored
            data = {**data, "strength": 1}
        elif "strength" not in data:
            data = {**data, "strength": None}
        try:
            attrs = super().to_internal_value(data)
        except ValidationError as exc:
            errors = dict(exc.detail)
        for name in sorted(set(data) - set(self.fields)):
            errors[name] = ["Unknown field in a compare submit."]
        if errors:
            raise ValidationError(errors)
        return attrs

    def validate_idempotency_key(self, key: str) -> str:
        self.valid_key = key
        return key

    def validate(self, attrs: dict) -> CleanPreference:
        return CleanPreference(**attrs, sent=getattr(self, "initial_data", None))


def submit_preference_payload(
    *, assignment: Assignment, user: AbstractBaseUser, payload: Any
) -> tuple[Preference, bool]:
    """Parse a pair's submit body and store it: (preference, created). A retry of a submit that went
    through returns the first result even if its body no longer validates."""
    shown = compare_submit.preference_context(assignment=assignment, user=user)
    serializer = PreferenceInSerializer(data=payload, context=shown)
    if serializer.is_valid():
        return compare_submit.submit_preference(assignment=assignment, user=user, clean=serializer.validated_data)
    if serializer.valid_key is not None:
        first = compare_submit.replayed(assignment=assignment, user=user, key=serializer.valid_key)
        if first is not None:
            return first, False
    raise Invalid(flat_errors(serializer.errors))
