"""Reading labels: the main line of a labeled solution, its ratings, and per-annotation counters.

PRM800K's reading of a step: the chosen completion is the solution's own step; where the labeler
stopped (found_error, give_up) the chosen index is null and the first completion is the rated
step, the rest are alternatives. Every place that walks a label (statistics, agreement, TRL rows,
the model's examples) uses these helpers.
"""

from __future__ import annotations

import re
from typing import Any


def main_line_completion(step: dict[str, Any]) -> dict[str, Any] | None:
    """The completion that stands for the solution's own step: the chosen one, else the first.

    In phase 2 the first completion is the pre-generated step; at a found error the chosen index
    is null and the first completion is the rated -1 step, the rest are alternatives.
    """
    completions = step.get("completions") or []
    chosen = step.get("chosen_completion")
    if isinstance(chosen, int) and 0 <= chosen < len(completions):
        return completions[chosen]
    return completions[0] if completions else None


def walked_completion(step: dict[str, Any]) -> dict[str, Any] | None:
    """The step a labeled solution goes on with, as its exports read it: the chosen completion; else
    the labeler's own step (phase 1's `human_completion`, returned with "human": True: the labeler
    wrote it as the right next step and did not rate it); else the first completion (phase 2's
    pre-generated step, or the rated step where the labeler stopped). TRL's rows read steps so too.

    Unlike main_line_completion, a phase-1 step the labeler rewrote is their step, not the first of
    the completions they turned down.
    """
    walked = walked_step(step)
    return walked[1] if walked else None


def walked_step(step: dict[str, Any]) -> tuple[int | None, dict[str, Any]] | None:
    """walked_completion with its index among the step's completions (None for the labeler's own
    step), so a reader can tell the walked completion from the alternatives beside it."""
    completions = step.get("completions") or []
    chosen = step.get("chosen_completion")
    if isinstance(chosen, int) and 0 <= chosen < len(completions):
        return chosen, completions[chosen]
    human = step.get("human_completion")
    if isinstance(human, dict) and isinstance(human.get("text"), str):
        return None, {**human, "human": True}
    return (0, completions[0]) if completions else None


def is_phase1(question: dict[str, Any]) -> bool:
    """A phase-1 record: no pre-generated solution, the labeler's trajectory is the solution."""
    return not isinstance(question.get("pre_generated_steps"), list)


def walks_own_line(record: dict[str, Any]) -> bool:
    """Whether a record's step exports read the line its labeler walked (walked_completion) instead
    of the pre-generated one: a phase-1 record, or a label made in the app in phase-1 mode. That one
    keeps its solution's pre-generated steps, so is_phase1 read it as phase 2 and the critique and
    Math-Shepherd lines showed a step the labeler rated -1 and turned down, with the rating of the
    alternative they went on with. Phase 2 never goes on past a step with anything but its first
    completion (chosen 0), and writes its own step only at the first error, the last step."""
    if is_phase1(record["question"]):
        return True
    steps = record["label"]["steps"]
    for position, step in enumerate(steps):
        chosen = step.get("chosen_completion")
        if isinstance(chosen, int) and chosen > 0:
            return True
        if position < len(steps) - 1 and isinstance(step.get("human_completion"), dict):
            return True
    return False


def labeled_line_completion(step: dict[str, Any], *, phase1: bool) -> dict[str, Any] | None:
    """The step a step export reads: in phase 1 the one the labeler went on with (walked_completion);
    in phase 2 the pre-generated step (main_line_completion: a correction written at the first
    error is not the step the rating is on)."""
    return walked_completion(step) if phase1 else main_line_completion(step)


def main_line_ratings(steps: list[dict[str, Any]]) -> list[int | None]:
    """Main-line rating per step index (None where the step is unrated or has no completions)."""
    ratings: list[int | None] = []
    for step in steps:
        main = main_line_completion(step)
        ratings.append(main.get("rating") if main else None)
    return ratings


def first_error_index(ratings: list[int | None]) -> int | None:
    return next((i for i, rating in enumerate(ratings) if rating == -1), None)


def label_counters(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-annotation counters kept beside the label JSON so statistics never parse it.

    Keys match Annotation fields: n_label_steps, n_positive, n_neutral, n_negative, n_unrated,
    n_flagged, n_alternatives, first_error_index (index of the first main-line -1, or None).
    """
    counts = {"n_positive": 0, "n_neutral": 0, "n_negative": 0, "n_unrated": 0, "n_flagged": 0, "n_alternatives": 0}
    first_error: int | None = None
    for index, step in enumerate(steps):
        main = main_line_completion(step)
        completions = step.get("completions") or []
        counts["n_alternatives"] += max(0, len(completions) - 1)
        if main is None:
            counts["n_unrated"] += 1
            continue
        rating = main.get("rating")
        if rating == 1:
            counts["n_positive"] += 1
        elif rating == 0:
            counts["n_neutral"] += 1
        elif rating == -1:
            counts["n_negative"] += 1
            if first_error is None:
                first_error = index
        else:
            counts["n_unrated"] += 1
        if main.get("flagged"):
            counts["n_flagged"] += 1
    return {"n_label_steps": len(steps), **counts, "first_error_index": first_error}


def trajectory_steps(label_steps: list[dict[str, Any]]) -> list[str]:
    """The solution a phase-1 labeler walked: the chosen completion, else the human step."""
    walked = (walked_completion(step) for step in label_steps)
    return [completion["text"] for completion in walked if completion is not None]


_BOXED = re.compile(r"\\boxed\s*\{")


def boxed_answer(text: str) -> str | None:
    """The content of the last \\boxed{...} (braces inside it balanced), else None."""
    last = None
    for match in _BOXED.finditer(text):
        depth, start = 1, match.end()
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                last = text[start:i]
                break
    return last


def stated_answer(text: str | None) -> str | None:
    """The answer a plain solution's last step states: PRM800K's '# Answer', else its last \\boxed{}
    (ProcessBench's and most math models' way)."""
    if not text:
        return None
    return final_answer_from_text(text) or (boxed_answer(text) or "").strip() or None


def final_answer_from_text(text: str | None) -> str | None:
    """PRM800K marks the final answer with a '# Answer' heading in the last step."""
    if not text:
        return None
    marker = text.rfind("# Answer")
    if marker < 0:
        return None
    answer = text[marker + len("# Answer") :].strip()
    return answer or None
