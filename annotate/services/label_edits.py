"""What a lead's correction of a submitted label (the admin's annotation form) must keep: the
PRM800K shape of `label.steps` (prm800k.schema), the solution's own step texts, and the submit
rules (annotate.services.submit_rules). An edit may change ratings, flags, critiques and the
finish reason; one that breaks these would export a record that PRM800K's readers, our own
importer or the TRL converter refuse or silently drop.

Only errors the edit introduces are refused: an imported label that already broke a submit rule
(real PRM800K records do, now and then) can still have a rating corrected."""

from __future__ import annotations

import json
from typing import Any

from annotate.models import Annotation, Step
from annotate.services.submission import CleanCompletion, CleanStep, CleanSubmission
from annotate.services.submit_rules import mode_errors, rated_errors
from prm800k.kinds import is_rated
from prm800k.schema import RecordError, validate_label_steps


def field_of(message: str) -> str:
    """The annotation field a message of `edit_errors` is about: the reason's, else the label's."""
    return "finish_note" if message.startswith("reason") else "label_steps"


def edit_errors(*, annotation: Annotation, steps: Any, finish_reason: str, reason: str) -> list[str]:
    """Messages (field path first) for what the edited `steps` (parsed label.steps) break."""
    try:
        validate_label_steps(steps, path="steps")
    except RecordError as exc:
        return [f"{exc.path}: {exc.message}"]
    rows = list(
        Step.objects.filter(solution_id=annotation.solution_id).order_by("index").values_list("text", "step_type")
    )
    previous = _parse(annotation.label_steps)
    # (a phase-1 label walks its own trajectory, which may be longer than the stored steps)
    if len(steps) > max(len(rows), len(previous)):
        return [f"steps: {len(steps)} steps, but the solution has {len(rows)}"]
    errors = _text_errors(previous=previous, steps=steps, solution_texts=[t for t, _ in rows])
    if errors:
        return errors
    project = annotation.project
    rated = [is_rated(step_type, rate_observations=project.rate_observations) for _, step_type in rows]
    rated += [True] * (max(len(steps), len(previous)) - len(rated))  # the rules index it by step
    n_steps = len(rows)
    before = set(_rule_errors(previous, annotation.finish_reason, annotation.finish_note, project, rated, n_steps))
    after = _rule_errors(steps, finish_reason, reason, project, rated, n_steps)
    return [message for message in after if message not in before]


def _parse(label_steps: Any) -> list:
    if isinstance(label_steps, str):
        try:
            label_steps = json.loads(label_steps)
        except ValueError:
            return []
    return label_steps if isinstance(label_steps, list) else []


def _text_errors(*, previous: list, steps: list, solution_texts: list[str]) -> list[str]:
    """Texts stay as annotators saw and wrote them; a step added to the label is the solution's own."""
    errors = []
    for i, step in enumerate(steps):
        completions = step["completions"] or []
        old = (previous[i].get("completions") or []) if i < len(previous) and isinstance(previous[i], dict) else None
        for j, completion in enumerate(completions):
            if old is not None and j < len(old):
                expected = old[j].get("text") if isinstance(old[j], dict) else None
            elif j == 0 and old is None:
                expected = solution_texts[i]
            else:
                continue  # a new alternative: its own text
            if completion["text"] != expected:
                errors.append(f"steps[{i}].completions[{j}].text: a correction changes ratings, not step texts")
    return errors


def _rule_errors(steps: Any, finish_reason: str, reason: str, project, rated: list[bool], n_steps: int) -> list[str]:
    steps = _parse(steps)
    clean = []
    for i, step in enumerate(steps):
        completions = step.get("completions") or [{}]
        main = completions[0]
        human = step.get("human_completion")
        clean.append(
            CleanStep(
                index=i,
                rating=main.get("rating"),
                flagged=bool(main.get("flagged")),
                alternatives=[
                    CleanCompletion(text=c.get("text", ""), rating=c.get("rating"), flagged=bool(c.get("flagged")))
                    for c in completions[1:]
                ],
                human_completion=human.get("text") if isinstance(human, dict) else None,
                critique=main.get("critique"),
            )
        )
    sub = CleanSubmission(idempotency_key="", finish_reason=finish_reason, total_time_ms=0, reason=reason, steps=clean)
    found = {
        **rated_errors(sub, rated=rated, critique_required=project.critique_required),
        **mode_errors(sub, mode=project.labeling_mode, n_steps=n_steps, rated=rated),
    }
    return [f"{path}: {message}" for path, messages in found.items() for message in messages]
