"""The submit payload of a step task: its one parser (DRF serializers) and the submit entry that
parses, replays a retry and stores (annotate.services.submit).

Payload (DESIGN.md, HTTP API): {idempotency_key, finish_reason, total_time_ms, reason?,
steps: [{index, rating, flagged, alternatives: [{text, rating, flagged}], human_completion, critique?}]}.
`human_completion` is null, a string, or an object with a `text`.

Values are taken as JSON sends them, never coerced: "1" is not 1 and true is not 1. Absent and null
read the same (rating null, flagged false, no alternatives, no steps). The serializer context
`"solution"` (annotate.services.submission.SubmissionContext, from submission_context) carries what
the rules need: the step count, which steps are rated, the labeling mode and critique_required.

The rules that need the solution (annotate.services.submit_rules) run in SubmitInSerializer.validate.

Errors: one 400 keyed by field path ({"steps[2].rating": ["..."]}); `flat_errors` turns the nested
serializer errors into paths, in the order the fields are declared. A body that is not an object,
or a bad idempotency key, is the only error reported: a retry is looked up by its key.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import empty
from rest_framework.settings import api_settings

from annotate.models import Assignment, FinishReason
from annotate.services import submit
from annotate.services.compare.marks import MARK_KEY_PREFIX
from annotate.services.submission import (
    MAX_ALTERNATIVES,
    MAX_KEY,
    MAX_REASON,
    MAX_TEXT,
    MAX_TIME_MS,
    RATINGS,
    CleanCompletion,
    CleanStep,
    CleanSubmission,
    SubmissionContext,
    submission_context,
)
from annotate.services.submit_rules import mode_errors, rated_errors
from core.errors import Invalid
from prm800k.schema import MAX_CRITIQUE

NON_FIELD = api_settings.NON_FIELD_ERRORS_KEY


def json_object(data: Any) -> dict:
    """A submit body as a dict: a form body's last value per key (as a dict lookup reads it); any
    other non-object is refused before a field is read."""
    if hasattr(data, "getlist"):
        data = dict(data.items())
    if not isinstance(data, dict):
        raise ValidationError({NON_FIELD: ["Expected a JSON object."]})
    return data


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any, *, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("Must be non-empty text.")
    if len(value) > limit:
        raise ValidationError(f"Must be at most {limit} characters.")
    return value


# --- fields: the JSON value as sent ------------------------------------------------------------


class AsSent:
    """A field that reads the JSON value as it was sent: absent is null, no coercion, no DRF defaults
    or messages (to_internal_value decides). The DRF base class only describes it in the schema."""

    def run_validation(self, data: Any = empty) -> Any:
        return self.to_internal_value(None if data is empty else data)


class KeyField(AsSent, serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or not data.strip() or len(data) > MAX_KEY:
            raise ValidationError(f"Required: non-empty text of at most {MAX_KEY}.")
        if data.startswith(MARK_KEY_PREFIX):  # the server's keys for a pair's first-wrong-step marks
            raise ValidationError(f"Keys starting with {MARK_KEY_PREFIX!r} are reserved; send another key.")
        return data


class FinishReasonField(AsSent, serializers.ChoiceField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or data not in FinishReason.values:
            raise ValidationError(f"Must be one of {', '.join(FinishReason.values)}.")
        return data


class TimeField(AsSent, serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if not is_int(data) or not 0 <= data < MAX_TIME_MS:
            raise ValidationError("Must be a non-negative integer (milliseconds).")
        return data


class ReasonField(AsSent, serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        if data is None:
            return ""
        if not isinstance(data, str) or len(data) > MAX_REASON:
            raise ValidationError(f"Must be text of at most {MAX_REASON} characters.")
        return data.strip()


class IndexField(AsSent, serializers.IntegerField):
    """Checked against its position by StepInSerializer.validate_index."""

    def to_internal_value(self, data: Any) -> Any:
        return data


class RatingField(AsSent, serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int | None:
        if data is None or (is_int(data) and data in RATINGS):
            return data
        raise ValidationError("Must be -1, 0, 1 or null.")


class FlagField(AsSent, serializers.BooleanField):
    def to_internal_value(self, data: Any) -> bool:
        if data is None:
            return False
        if not isinstance(data, bool):
            raise ValidationError("Must be true or false.")
        return data


class TextField(AsSent, serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        return _text(data)


class HumanCompletionField(AsSent, serializers.CharField):
    def to_internal_value(self, data: Any) -> str | None:
        if isinstance(data, dict):
            try:
                return _text(data.get("text"))
            except ValidationError as exc:
                raise ValidationError({"text": exc.detail}) from None
        return None if data is None else _text(data)


class CritiqueField(AsSent, serializers.CharField):
    """Plain text of bounded length; absent, null or blank is no critique."""

    def to_internal_value(self, data: Any) -> str | None:
        if data is None:
            return None
        if not isinstance(data, str):
            raise ValidationError("Must be text.")
        if len(data) > MAX_CRITIQUE:
            raise ValidationError(f"Must be at most {MAX_CRITIQUE} characters.")
        return data.strip() or None


# --- objects and lists ------------------------------------------------------------------------


def _index(index: Any, *, position: int, n_steps: int) -> int:
    if not is_int(index) or index != position:
        raise ValidationError(f"Must be {position}: steps are the labeled prefix, in order from 0.")
    if index >= n_steps:
        raise ValidationError(f"Out of range: the solution has {n_steps} steps.")
    return index


class _Object(serializers.Serializer):
    """A nested object: anything else is refused at its own path."""

    def run_validation(self, data: Any = empty) -> Any:
        if not isinstance(data, dict):
            raise ValidationError("Must be an object.")
        return super().run_validation(data)


class _List(serializers.ListSerializer):
    """A list of objects as sent (absent or null: empty); item errors keyed by position."""

    def run_validation(self, data: Any = empty) -> list:
        return self.to_internal_value([] if data is empty or data is None else data)

    def check(self, data: Any, errors: dict) -> list:
        """The list-level rule: raise, or note an error in `errors` and return the items to check."""
        return data

    def to_internal_value(self, data: Any) -> list:
        errors: dict[Any, Any] = {}
        items = []
        for i, item in enumerate(self.check(data, errors)):
            self.child.position = i  # the step's index is checked against it
            try:
                items.append(self.child.run_validation(item))
            except ValidationError as exc:
                errors[i] = exc.detail
        if errors:
            raise ValidationError(errors)
        return items


class _AlternativeList(_List):
    def check(self, data: Any, errors: dict) -> list:
        if not isinstance(data, list) or len(data) > MAX_ALTERNATIVES:
            raise ValidationError(f"Must be a list of at most {MAX_ALTERNATIVES}.")
        return data


class _StepList(_List):
    def check(self, data: Any, errors: dict) -> list:
        if not isinstance(data, list):
            raise ValidationError("Must be a list.")
        n_steps = self.context["solution"].n_steps
        if len(data) > n_steps:
            errors[None] = [f"The solution has {n_steps} steps; {len(data)} were sent."]  # at "steps" itself
            return data[: n_steps + 1]
        return data


class CompletionInSerializer(_Object):
    """An alternative to a step, written and rated by the annotator."""

    text = TextField(help_text="Non-empty.")
    rating = RatingField(allow_null=True, help_text="-1, 0 or 1.")
    flagged = FlagField(default=False)

    def validate(self, attrs: dict) -> CleanCompletion:
        return CleanCompletion(**attrs)


class StepInSerializer(_Object):
    """One step of the labeled prefix, in order from 0."""

    position = 0  # set by the list before each step

    index = IndexField(help_text="Position in the solution; steps are sent in order from 0.")
    rating = RatingField(allow_null=True, help_text="-1, 0 or 1; null only on the last step of give_up / bad_problem.")
    flagged = FlagField(default=False)
    alternatives = _AlternativeList(child=CompletionInSerializer(), required=False)
    human_completion = HumanCompletionField(
        allow_null=True, required=False, help_text="A written step (text, or an object with `text`)."
    )
    critique = CritiqueField(
        required=False,
        allow_blank=True,
        help_text=f"Why the step is rated so, in plain text (at most {MAX_CRITIQUE} characters; rated steps only). "
        "Required on every -1 step where the project's critique_required is set.",
    )

    def validate_index(self, index: Any) -> int:
        return _index(index, position=self.position, n_steps=self.context["solution"].n_steps)

    def validate(self, attrs: dict) -> CleanStep:
        return CleanStep(**attrs)


class SubmitInSerializer(serializers.Serializer):
    """A step task's submit body, checked against the solution's steps and the project's labeling mode:
    errors by field path, e.g. `steps[2].rating`."""

    # context: {"solution": SubmissionContext}

    idempotency_key = KeyField(max_length=MAX_KEY, help_text="A repeat with the same key returns the first result.")
    finish_reason = FinishReasonField(choices=FinishReason.choices)
    total_time_ms = TimeField(min_value=0)
    reason = ReasonField(required=False, allow_blank=True, help_text="Required for give_up and bad_problem.")
    steps = _StepList(child=StepInSerializer())

    valid_key: str | None = None  # the idempotency key once it has passed

    def run_validation(self, data: Any = empty) -> CleanSubmission:
        data = json_object(data)
        key = self.fields["idempotency_key"]
        try:
            self.valid_key = key.run_validation(key.get_value(data))
        except ValidationError as exc:
            raise ValidationError({"idempotency_key": exc.detail}) from None
        return super().run_validation(data)

    def validate(self, attrs: dict) -> CleanSubmission:
        sub = CleanSubmission(**attrs, sent=getattr(self, "initial_data", None))
        solution = self.context["solution"]
        _raise(rated_errors(sub, rated=solution.rated, critique_required=solution.critique_required))
        _raise(mode_errors(sub, mode=solution.mode, n_steps=solution.n_steps, rated=solution.rated))
        return sub


def _raise(errors: dict[str, list[str]]) -> None:
    if errors:
        raise ValidationError(errors)


# --- errors and the entry ----------------------------------------------------------------------


def flat_errors(detail: Any, path: str | None = None) -> dict[str, list[str]]:
    """Nested serializer errors as messages by field path, in their order: {"steps": {2: {"rating":
    [...]}}} -> {"steps[2].rating": [...]}. Key None holds a list's own errors (at its path); a later
    path equal to an earlier one replaces its messages in place, as a dict assignment does."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key is None:
                sub = path
            elif isinstance(key, int):
                sub = f"{path}[{key}]"
            else:
                sub = key if path is None else f"{path}.{key}"
            out.update(flat_errors(value, sub))
    else:
        out[NON_FIELD if path is None else path] = [str(message) for message in detail]
    return out


# --- the hot path: a body the serializer accepts, parsed without its per-field machinery ----------

_KEY, _TIME, _REASON, _TEXT = KeyField(), TimeField(), ReasonField(), TextField()
_FINISH = FinishReasonField(choices=FinishReason.choices)
_RATING, _FLAG, _HUMAN, _CRITIQUE = RatingField(), FlagField(), HumanCompletionField(), CritiqueField()


def _listed(data: Any, limit: int) -> list:
    data = [] if data is None else data
    if not isinstance(data, list) or len(data) > limit or not all(isinstance(item, dict) for item in data):
        raise ValidationError("not a list of at most `limit` objects")
    return data


def parsed_directly(payload: Any, solution: SubmissionContext) -> CleanSubmission | None:
    """What SubmitInSerializer(data=payload, context={"solution": solution}).validated_data is when
    the serializer accepts the body, else None (the caller then runs the serializer for its errors
    by path). The same field parsers and rules, called directly: DRF's machinery per field (copies
    of the field tree, get_value, validators) was the largest CPU cost of a submit once its SQL
    was raw. tests/labeling_api/test_submit_direct.py checks both agree."""
    try:
        data = json_object(payload)
        steps = []
        for i, item in enumerate(_listed(data.get("steps"), solution.n_steps)):
            alternatives = [
                CleanCompletion(
                    _TEXT.to_internal_value(alt.get("text")),
                    _RATING.to_internal_value(alt.get("rating")),
                    _FLAG.to_internal_value(alt.get("flagged")),
                )
                for alt in _listed(item.get("alternatives"), MAX_ALTERNATIVES)
            ]
            steps.append(
                CleanStep(
                    index=_index(item.get("index"), position=i, n_steps=solution.n_steps),
                    rating=_RATING.to_internal_value(item.get("rating")),
                    flagged=_FLAG.to_internal_value(item.get("flagged")),
                    alternatives=alternatives,
                    human_completion=_HUMAN.to_internal_value(item.get("human_completion")),
                    critique=_CRITIQUE.to_internal_value(item.get("critique")),
                )
            )
        sub = CleanSubmission(
            idempotency_key=_KEY.to_internal_value(data.get("idempotency_key")),
            finish_reason=_FINISH.to_internal_value(data.get("finish_reason")),
            total_time_ms=_TIME.to_internal_value(data.get("total_time_ms")),
            reason=_REASON.to_internal_value(data.get("reason")),
            steps=steps,
            sent=payload,
        )
    except ValidationError:
        return None
    if rated_errors(sub, rated=solution.rated, critique_required=solution.critique_required):
        return None
    if mode_errors(sub, mode=solution.mode, n_steps=solution.n_steps, rated=solution.rated):
        return None
    return sub


def submit_payload(*, assignment: Assignment, user: AbstractBaseUser, payload: Any) -> submit.SubmitResult:
    """Parse a submit body against the assignment's solution and store it (the API's submit; scripts
    use it too). A retry of a submit that went through returns the first result even if its body no
    longer validates; otherwise a bad body is core.errors.Invalid by field path."""
    context = submission_context(assignment=assignment, user=user)
    direct = parsed_directly(payload, context)
    if direct is not None:
        return submit.submit(assignment=assignment, user=user, submission=direct, context=context)
    serializer = SubmitInSerializer(data=payload, context={"solution": context})
    if serializer.is_valid():
        return submit.submit(assignment=assignment, user=user, submission=serializer.validated_data, context=context)
    if serializer.valid_key is not None:
        first = submit.replayed(assignment=assignment, user=user, key=serializer.valid_key)
        if first is not None:
            return first
    raise Invalid(flat_errors(serializer.errors))
