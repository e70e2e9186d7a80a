"""A submit's shapes and the PRM800K `label.steps` it becomes: the checked payload
(CleanSubmission, from labeling_api.serializers_submit, which parses and checks it with the rules
in its doc), the solution it is checked against (SubmissionContext, from submission_context) and
build_label_steps. annotate.services.submit stores it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from annotate import queue_sql
from annotate.models import Assignment, FinishReason, LabelingMode
from core.errors import NotFound
from prm800k.kinds import is_rated

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
    sent: Any = None  # the body as it was sent: kept when a late submit is refused


@dataclass(frozen=True, slots=True)
class SubmissionContext:
    """What checking and storing a submit needs from the solution and its project."""

    mode: str
    critique_required: bool
    step_texts: list[str]
    rated: list[bool]  # per step: whether the annotator rates it
    labeler_uuid: str | None = None  # the annotator's pseudonym, read with the steps (None: not yet made)

    @property
    def n_steps(self) -> int:
        return len(self.step_texts)


def submission_context(*, assignment: Assignment, user: AbstractBaseUser) -> SubmissionContext:
    """The solution's steps and the annotator's labeler pseudonym (one query), and the project's rules
    for `assignment`; 404 to anyone but its annotator."""
    if assignment.annotator_id != user.pk:
        raise NotFound()
    project = assignment.project
    rows, labeler_uuid = queue_sql.submit_context(solution_id=assignment.solution_id, user_id=user.pk)
    return SubmissionContext(
        mode=project.labeling_mode,
        critique_required=project.critique_required,
        step_texts=[text for text, _ in rows],
        rated=[is_rated(step_type, rate_observations=project.rate_observations) for _, step_type in rows],
        labeler_uuid=labeler_uuid,
    )


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
