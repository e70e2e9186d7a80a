"""The submit payload: validation against the project's labeling mode (messages by field path)
and the PRM800K `label.steps` it becomes. annotate.services.submit stores it.

Payload (DESIGN.md, HTTP API): {idempotency_key, finish_reason, total_time_ms, reason?,
steps: [{index, rating, flagged, alternatives: [{text, rating, flagged}], human_completion}]}.
`human_completion` is null, a string, or an object with a `text`.

Rules (PRM800K, openai/prm800k README):
- steps are the labeled prefix of the solution: index i at position i, within the solution;
- ratings are -1, 0, +1; null only on the last submitted step of give_up / bad_problem (the step
  the annotator was on) and never elsewhere;
- solution: every step rated; no Negative main-line step (phase 1: a Negative step must be
  replaced by a Positive alternative or a human step, which is how phase 1 went on);
- found_error: a Negative step and nothing rated after it (entries after it must be unrated and
  are dropped); phase 2 stops there;
- give_up / bad_problem: a non-empty reason; phase 2 still stops at the first Negative step;
- phase 2 offers alternatives and a human step only at the first Negative step; phase 1 at any;
- alternatives and human steps have non-empty text;
- a step the annotator does not rate (a trace's observation, unless the project rates them) is
  sent with rating null;
- a rated step may carry a `critique` (plain text, at most MAX_CRITIQUE characters; blank means
  none); where the project sets critique_required, every -1 step needs one.
Errors are core.errors.Invalid keyed by field path, e.g. {"steps[2].rating": ["..."]}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotate.models import (
    FinishReason,
    LabelingMode,
)
from core.errors import Invalid
from prm800k.schema import MAX_CRITIQUE

RATINGS = (-1, 0, 1)
MAX_TEXT = 20_000
MAX_REASON = 5_000
MAX_KEY = 100
MAX_ALTERNATIVES = 50
MAX_TIME_MS = 10**12


@dataclass(slots=True)
class CleanCompletion:
    text: str
    rating: int | None
    flagged: bool


@dataclass(slots=True)
class CleanStep:
    index: int
    rating: int | None
    flagged: bool
    alternatives: list[CleanCompletion] = field(default_factory=list)
    human_completion: str | None = None
    critique: str | None = None


@dataclass(slots=True)
class CleanSubmission:
    idempotency_key: str
    finish_reason: str
    total_time_ms: int
    reason: str
    steps: list[CleanStep]


class _Errors:
    """Collects messages by field path and raises them together."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.by_path.setdefault(path, []).append(message)

    def raise_if_any(self) -> None:
        if self.by_path:
            raise Invalid(self.by_path)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _rating(value: Any, path: str, errors: _Errors) -> int | None:
    if value is None or (_is_int(value) and value in RATINGS):
        return value
    errors.add(path, "Must be -1, 0, 1 or null.")
    return None


def _flag(value: Any, path: str, errors: _Errors) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        errors.add(path, "Must be true or false.")
        return False
    return value


def _text(value: Any, path: str, errors: _Errors, *, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or not value.strip():
        errors.add(path, "Must be non-empty text.")
        return ""
    if len(value) > limit:
        errors.add(path, f"Must be at most {limit} characters.")
    return value


def _critique(value: Any, path: str, errors: _Errors) -> str | None:
    """Plain text of bounded length; absent, null or blank is no critique."""
    if value is None:
        return None
    if not isinstance(value, str):
        errors.add(path, "Must be text.")
        return None
    if len(value) > MAX_CRITIQUE:
        errors.add(path, f"Must be at most {MAX_CRITIQUE} characters.")
        return None
    return value.strip() or None


def idempotency_key_of(payload: Any) -> str:
    if not isinstance(payload, dict):
        raise Invalid({"non_field_errors": ["Expected a JSON object."]})
    key = payload.get("idempotency_key")
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY:
        raise Invalid({"idempotency_key": [f"Required: non-empty text of at most {MAX_KEY}."]})
    return key


def _parse(payload: Any, *, n_steps: int) -> CleanSubmission:
    if not isinstance(payload, dict):
        raise Invalid({"non_field_errors": ["Expected a JSON object."]})
    errors = _Errors()
    key = idempotency_key_of(payload)
    finish_reason = payload.get("finish_reason")
    if finish_reason not in FinishReason.values:
        errors.add("finish_reason", f"Must be one of {', '.join(FinishReason.values)}.")
    total_time_ms = payload.get("total_time_ms")
    if not _is_int(total_time_ms) or not 0 <= total_time_ms < MAX_TIME_MS:
        errors.add("total_time_ms", "Must be a non-negative integer (milliseconds).")
    reason = payload.get("reason")
    if reason is None:
        reason = ""
    elif not isinstance(reason, str) or len(reason) > MAX_REASON:
        errors.add("reason", f"Must be text of at most {MAX_REASON} characters.")
        reason = ""
    raw_steps = payload.get("steps")
    if raw_steps is None:
        raw_steps = []
    if not isinstance(raw_steps, list):
        errors.add("steps", "Must be a list.")
        raw_steps = []
    if len(raw_steps) > n_steps:
        errors.add("steps", f"The solution has {n_steps} steps; {len(raw_steps)} were sent.")
        raw_steps = raw_steps[: n_steps + 1]
    steps: list[CleanStep] = []
    for i, raw in enumerate(raw_steps):
        path = f"steps[{i}]"
        if not isinstance(raw, dict):
            errors.add(path, "Must be an object.")
            continue
        index = raw.get("index")
        if not _is_int(index) or index != i:
            errors.add(f"{path}.index", f"Must be {i}: steps are the labeled prefix, in order from 0.")
        elif index >= n_steps:
            errors.add(f"{path}.index", f"Out of range: the solution has {n_steps} steps.")
        step = CleanStep(
            index=i,
            rating=_rating(raw.get("rating"), f"{path}.rating", errors),
            flagged=_flag(raw.get("flagged"), f"{path}.flagged", errors),
        )
        alternatives = raw.get("alternatives")
        if alternatives is None:
            alternatives = []
        if not isinstance(alternatives, list) or len(alternatives) > MAX_ALTERNATIVES:
            errors.add(f"{path}.alternatives", f"Must be a list of at most {MAX_ALTERNATIVES}.")
            alternatives = []
        for j, alt in enumerate(alternatives):
            alt_path = f"{path}.alternatives[{j}]"
            if not isinstance(alt, dict):
                errors.add(alt_path, "Must be an object.")
                continue
            step.alternatives.append(
                CleanCompletion(
                    text=_text(alt.get("text"), f"{alt_path}.text", errors),
                    rating=_rating(alt.get("rating"), f"{alt_path}.rating", errors),
                    flagged=_flag(alt.get("flagged"), f"{alt_path}.flagged", errors),
                )
            )
        human = raw.get("human_completion")
        if isinstance(human, dict):
            step.human_completion = _text(human.get("text"), f"{path}.human_completion.text", errors)
        elif human is not None:
            step.human_completion = _text(human, f"{path}.human_completion", errors)
        step.critique = _critique(raw.get("critique"), f"{path}.critique", errors)
        steps.append(step)
    errors.raise_if_any()
    return CleanSubmission(key, finish_reason, total_time_ms, reason.strip(), steps)


def validate_submission(
    *,
    payload: Any,
    mode: str,
    n_steps: int,
    rated: list[bool] | None = None,
    critique_required: bool = False,
) -> CleanSubmission:
    """Check a submit payload against the labeling mode; returns it cleaned (see module doc).

    rated: per step, whether the annotator rates it (default: every step)."""
    sub = _parse(payload, n_steps=n_steps)
    rated = rated if rated is not None else [True] * n_steps
    errors = _Errors()
    for step in sub.steps:
        path = f"steps[{step.index}]"
        if not rated[step.index]:
            if step.rating is not None or step.alternatives or step.human_completion:
                errors.add(f"{path}.rating", "This step is shown but not rated in this project: send null.")
            if step.critique:
                errors.add(f"{path}.critique", "This step is not rated, so it takes no critique.")
        elif step.critique and step.rating is None:
            errors.add(f"{path}.critique", "A critique goes with a rating: rate this step or drop the critique.")
        elif critique_required and step.rating == -1 and not step.critique:
            errors.add(f"{path}.critique", "This project needs a written critique on every step rated -1.")
    errors.raise_if_any()
    steps, reason_kind = sub.steps, sub.finish_reason
    phase2 = mode != LabelingMode.PHASE1
    first_neg = next((s.index for s in steps if s.rating == -1), None)

    if reason_kind in (FinishReason.GIVE_UP, FinishReason.BAD_PROBLEM) and not sub.reason:
        errors.add("reason", f"Say why ({reason_kind} needs a short reason).")

    # Where the pass ends: at the first Negative step in phase 2 and for found_error.
    stop = first_neg if first_neg is not None and (phase2 or reason_kind == FinishReason.FOUND_ERROR) else None
    if reason_kind == FinishReason.FOUND_ERROR and first_neg is None:
        errors.add("steps", "found_error needs a step rated Negative (-1).")
    if stop is not None:
        for step in steps[stop + 1 :]:
            if step.rating is not None or step.alternatives or step.human_completion:
                errors.add(
                    f"steps[{step.index}].rating",
                    f"Nothing may be labeled after the first Negative step (steps[{stop}]).",
                )
        if not errors.by_path:
            steps = steps[: stop + 1]  # unrated trailing entries carry nothing

    # Null ratings: only on the step a give_up / bad_problem stopped at.
    nullable_last = reason_kind in (FinishReason.GIVE_UP, FinishReason.BAD_PROBLEM)
    for step in steps:
        last = step.index == len(steps) - 1
        if step.rating is None and not (nullable_last and last) and rated[step.index]:
            errors.add(f"steps[{step.index}].rating", "Rate this step: -1, 0 or 1.")
        for j, alt in enumerate(step.alternatives):
            if alt.rating is None and not (nullable_last and last):
                errors.add(f"steps[{step.index}].alternatives[{j}].rating", "Rate this alternative: -1, 0 or 1.")
        if phase2 and step.index != first_neg:
            if step.alternatives:
                errors.add(
                    f"steps[{step.index}].alternatives", "Phase 2 rates alternatives only at the first Negative step."
                )
            if step.human_completion:
                errors.add(
                    f"steps[{step.index}].human_completion",
                    "Phase 2 takes a written step only at the first Negative step.",
                )

    if reason_kind == FinishReason.SOLUTION:
        if len(steps) != n_steps:
            errors.add("steps", f"solution needs all {n_steps} steps rated; {len(steps)} were sent.")
        for step in steps:
            if step.rating != -1:
                continue
            repaired = step.human_completion or any(alt.rating == 1 for alt in step.alternatives)
            if phase2:
                errors.add(f"steps[{step.index}].rating", "A Negative step ends the solution: use found_error.")
            elif not repaired:
                errors.add(
                    f"steps[{step.index}].rating",
                    "A Negative step needs a Positive alternative or a written step to go on.",
                )
    errors.raise_if_any()
    sub.steps = steps
    return sub


def build_label_steps(
    *, sub: CleanSubmission, mode: str, step_texts: list[str], rated: list[bool] | None = None
) -> list[dict[str, Any]]:
    """PRM800K `label.steps` for a cleaned submission (the solution's step first, then alternatives).

    A critique sits on the step's own completion, and only when one was written, so labels without
    critiques keep PRM800K's exact shape."""
    phase1 = mode == LabelingMode.PHASE1
    label_steps = []
    for step in sub.steps:
        main: dict[str, Any] = {"text": step_texts[step.index], "rating": step.rating, "flagged": step.flagged}
        if step.critique:
            main["critique"] = step.critique
        completions = [main]
        completions += [{"text": a.text, "rating": a.rating, "flagged": a.flagged} for a in step.alternatives]
        human = None
        if step.human_completion:
            human = {"text": step.human_completion, "rating": None, "source": "human", "flagged": False}
        positive_alt = next((j + 1 for j, a in enumerate(step.alternatives) if a.rating == 1), None)
        if human is not None:
            chosen = None
        elif sub.finish_reason == FinishReason.FOUND_ERROR and step.rating == -1:
            chosen = None  # PRM800K phase 2: the pass ended here
        elif phase1 and step.rating != 1 and positive_alt is not None:
            chosen = positive_alt
        elif rated is not None and not rated[step.index]:
            chosen = 0  # shown, not rated (a trace's observation): still the solution's own step
        elif step.rating is None:
            chosen = None  # the step a give_up / bad_problem stopped at
        else:
            chosen = 0
        label_steps.append({"completions": completions, "human_completion": human, "chosen_completion": chosen})
    return label_steps
