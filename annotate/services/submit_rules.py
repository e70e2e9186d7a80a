"""The submit rules that need the solution, on a parsed submission (labeling_api.serializers_submit
runs them in SubmitInSerializer.validate; a lead's correction in the admin must keep them too,
annotate.services.label_edits): messages by field path.

The payload's rules (PRM800K, openai/prm800k README; types, lengths and the step count are the
serializer's fields, the rest is here):
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
"""

from __future__ import annotations

from annotate.models import FinishReason, LabelingMode
from annotate.services.submission import CleanSubmission


def rated_errors(sub: CleanSubmission, *, rated: list[bool], critique_required: bool) -> dict[str, list[str]]:
    """Unrated steps carry nothing; a critique goes with a rating (and on -1 where required)."""
    errors: dict[str, list[str]] = {}
    for step in sub.steps:
        path = f"steps[{step.index}]"
        if not rated[step.index]:
            if step.rating is not None or step.alternatives or step.human_completion:
                errors[f"{path}.rating"] = ["This step is shown but not rated in this project: send null."]
            if step.critique:
                errors[f"{path}.critique"] = ["This step is not rated, so it takes no critique."]
        elif step.critique and step.rating is None:
            errors[f"{path}.critique"] = ["A critique goes with a rating: rate this step or drop the critique."]
        elif critique_required and step.rating == -1 and not step.critique:
            errors[f"{path}.critique"] = ["This project needs a written critique on every step rated -1."]
    return errors


def mode_errors(sub: CleanSubmission, *, mode: str, n_steps: int, rated: list[bool]) -> dict[str, list[str]]:
    """The labeling mode's rules; drops the unrated entries after the step a pass ended at."""
    errors: dict[str, list[str]] = {}

    def add(path: str, message: str) -> None:
        errors.setdefault(path, []).append(message)

    steps, reason_kind = sub.steps, sub.finish_reason
    phase2 = mode != LabelingMode.PHASE1
    first_neg = next((s.index for s in steps if s.rating == -1), None)

    if reason_kind in (FinishReason.GIVE_UP, FinishReason.BAD_PROBLEM) and not sub.reason:
        add("reason", f"Say why ({reason_kind} needs a short reason).")

    # Where the pass ends: at the first Negative step in phase 2 and for found_error.
    stop = first_neg if first_neg is not None and (phase2 or reason_kind == FinishReason.FOUND_ERROR) else None
    if reason_kind == FinishReason.FOUND_ERROR and first_neg is None:
        add("steps", "found_error needs a step rated Negative (-1).")
    if stop is not None:
        for step in steps[stop + 1 :]:
            if step.rating is not None or step.alternatives or step.human_completion:
                add(
                    f"steps[{step.index}].rating",
                    f"Nothing may be labeled after the first Negative step (steps[{stop}]).",
                )
        if not errors:
            steps = steps[: stop + 1]  # unrated trailing entries carry nothing

    # Null ratings: only on the step a give_up / bad_problem stopped at.
    nullable_last = reason_kind in (FinishReason.GIVE_UP, FinishReason.BAD_PROBLEM)
    for step in steps:
        last = step.index == len(steps) - 1
        if step.rating is None and not (nullable_last and last) and rated[step.index]:
            add(f"steps[{step.index}].rating", "Rate this step: -1, 0 or 1.")
        for j, alt in enumerate(step.alternatives):
            if alt.rating is None and not (nullable_last and last):
                add(f"steps[{step.index}].alternatives[{j}].rating", "Rate this alternative: -1, 0 or 1.")
        if phase2 and step.index != first_neg:
            if step.alternatives:
                add(f"steps[{step.index}].alternatives", "Phase 2 rates alternatives only at the first Negative step.")
            if step.human_completion:
                add(
                    f"steps[{step.index}].human_completion",
                    "Phase 2 takes a written step only at the first Negative step.",
                )

    if reason_kind == FinishReason.SOLUTION:
        if len(steps) != n_steps:
            add("steps", f"solution needs all {n_steps} steps rated; {len(steps)} were sent.")
        for step in steps:
            if step.rating != -1:
                continue
            repaired = step.human_completion or any(alt.rating == 1 for alt in step.alternatives)
            if phase2:
                add(f"steps[{step.index}].rating", "A Negative step ends the solution: use found_error.")
            elif not repaired:
                add(
                    f"steps[{step.index}].rating",
                    "A Negative step needs a Positive alternative or a written step to go on.",
                )
    sub.steps = steps
    return errors
