"""The PRM800K record format: field names, allowed values and validation by dotted path.

One record = one labeled solution (openai/prm800k README). Validation reports the first wrong
field (e.g. label.steps[3].completions[0].rating) and builds nothing; parse.py normalizes.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

RECORD_KEYS = (
    "labeler",
    "timestamp",
    "generation",
    "is_quality_control_question",
    "is_initial_screening_question",
    "question",
    "label",
)
QUESTION_KEYS_PHASE2 = (
    "problem",
    "ground_truth_solution",
    "ground_truth_answer",
    "pre_generated_steps",
    "pre_generated_answer",
    "pre_generated_verifier_score",
)
QUESTION_KEYS_PHASE1 = ("problem", "ground_truth_answer")
LABEL_KEYS = ("steps", "total_time", "finish_reason")
STEP_KEYS = ("completions", "human_completion", "chosen_completion")
COMPLETION_KEYS = ("text", "rating", "flagged")
FINISH_REASONS = ("solution", "found_error", "give_up", "bad_problem")
RATINGS = (-1, 0, 1)
MAX_CRITIQUE = 4_000  # a written critique of a step (prm800k.kinds): plain text
MAX_GENERATION = 2**31 - 1  # the round column is a 32-bit integer; -1 is a screening round


class RecordError(ValueError):
    """A field of a record is wrong; `path` names it (e.g. label.steps[3].completions[0].rating)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def format_timestamp(moment: datetime) -> str:
    """ISO-8601 without zone, in UTC, as PRM800K writes it."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat()


def parse_timestamp(text: str) -> datetime:
    """PRM800K timestamps are UTC without a zone; one with a zone is converted to UTC."""
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def require_keys(obj: Any, path: str, required: tuple[str, ...], allowed: tuple[str, ...] | None) -> None:
    """Required keys must be there; with `allowed`, no others. allowed=None keeps unknown keys."""
    if not isinstance(obj, dict):
        raise RecordError(path or "(line)", f"must be a JSON object, got {type(obj).__name__}")
    for key in required:
        if key not in obj:
            raise RecordError(_join(path, key), "missing")
    for key in obj if allowed is not None else ():
        if key not in allowed:
            raise RecordError(_join(path, key), f"unknown field (allowed: {', '.join(allowed)})")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def check_str(value: Any, path: str, *, nullable: bool = False, non_empty: bool = False) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, str):
        raise RecordError(path, f"must be a string{' or null' if nullable else ''}, got {type_name(value)}")
    if non_empty and not value.strip():
        raise RecordError(path, "must not be empty")


def type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check_rating(value: Any, path: str) -> None:
    if value is not None and (not _is_int(value) or value not in RATINGS):
        raise RecordError(path, f"must be -1, 0, 1 or null, got {json.dumps(value)}")


def _check_flag(value: Any, path: str) -> None:
    if value is not None and not isinstance(value, bool):
        raise RecordError(path, f"must be true, false or null, got {json.dumps(value)}")


def validate_label_steps(steps: Any, path: str = "label.steps") -> None:
    if not isinstance(steps, list):
        raise RecordError(path, f"must be a list, got {type_name(steps)}")
    for i, step in enumerate(steps):
        step_path = f"{path}[{i}]"
        require_keys(step, step_path, STEP_KEYS, None)
        completions = step["completions"]
        if completions is not None and not isinstance(completions, list):
            raise RecordError(f"{step_path}.completions", f"must be a list or null, got {type_name(completions)}")
        for j, completion in enumerate(completions or []):
            c_path = f"{step_path}.completions[{j}]"
            require_keys(completion, c_path, ("text",), None)
            check_str(completion["text"], f"{c_path}.text")
            _check_rating(completion.get("rating"), f"{c_path}.rating")
            _check_flag(completion.get("flagged"), f"{c_path}.flagged")
            if "critique" in completion:
                check_str(completion["critique"], f"{c_path}.critique")
                if len(completion["critique"]) > MAX_CRITIQUE:
                    raise RecordError(f"{c_path}.critique", f"longer than {MAX_CRITIQUE} characters")
        human = step["human_completion"]
        if human is not None:
            h_path = f"{step_path}.human_completion"
            if not isinstance(human, dict):
                raise RecordError(h_path, f"must be an object or null, got {type_name(human)}")
            if "text" not in human:
                raise RecordError(f"{h_path}.text", "missing")
            check_str(human["text"], f"{h_path}.text")
            _check_rating(human.get("rating"), f"{h_path}.rating")
            _check_flag(human.get("flagged"), f"{h_path}.flagged")
        chosen = step["chosen_completion"]
        if chosen is not None:
            if not _is_int(chosen):
                raise RecordError(f"{step_path}.chosen_completion", f"must be an integer or null, got {chosen!r}")
            if not 0 <= chosen < len(completions or []):
                raise RecordError(
                    f"{step_path}.chosen_completion",
                    f"{chosen} is out of range: the step has {len(completions or [])} completion(s)",
                )


def validate_prm800k_record(obj: Any) -> None:
    """Raise RecordError naming the first wrong field of a PRM800K record."""
    # Unknown keys are kept (see _shape_overrides) so a newer PRM800K variant still round-trips.
    require_keys(obj, "", RECORD_KEYS, None)
    check_str(obj["labeler"], "labeler", non_empty=True)
    if len(obj["labeler"]) > 64:
        raise RecordError("labeler", "longer than 64 characters")
    timestamp = obj["timestamp"]
    check_str(timestamp, "timestamp")
    try:
        parse_timestamp(timestamp)
    except ValueError:
        raise RecordError("timestamp", f"must be ISO-8601 like 2022-11-06T03:24:46.649379, got {timestamp!r}") from None
    generation = obj["generation"]
    if generation is not None and not _is_int(generation):
        raise RecordError("generation", f"must be an integer or null, got {generation!r}")
    if generation is not None and not -1 <= generation <= MAX_GENERATION:
        # a round no export filter can select (-5), or past the database column (32 bits)
        rounds = f"-1 (screening) and {MAX_GENERATION}"
        raise RecordError("generation", f"must be a round between {rounds}, got {generation}")
    for key in ("is_quality_control_question", "is_initial_screening_question"):
        if not isinstance(obj[key], bool):
            raise RecordError(key, f"must be true or false, got {json.dumps(obj[key])}")

    question = obj["question"]
    require_keys(question, "question", ("problem", "ground_truth_answer"), None)
    check_str(question["problem"], "question.problem", non_empty=True)
    check_str(question["ground_truth_answer"], "question.ground_truth_answer", nullable=True)
    check_str(question.get("ground_truth_solution"), "question.ground_truth_solution", nullable=True)
    check_str(question.get("pre_generated_answer"), "question.pre_generated_answer", nullable=True)
    pre_steps = question.get("pre_generated_steps")
    if pre_steps is not None:
        if not isinstance(pre_steps, list):
            raise RecordError("question.pre_generated_steps", f"must be a list or null, got {type_name(pre_steps)}")
        for i, text in enumerate(pre_steps):
            check_str(text, f"question.pre_generated_steps[{i}]")
    score = question.get("pre_generated_verifier_score")
    if score is not None and not _is_number(score):
        raise RecordError("question.pre_generated_verifier_score", f"must be a number or null, got {score!r}")

    label = obj["label"]
    require_keys(label, "label", LABEL_KEYS, None)
    validate_label_steps(label["steps"])
    total_time = label["total_time"]
    if total_time is not None and (not _is_int(total_time) or total_time < 0):
        raise RecordError(
            "label.total_time", f"must be a non-negative integer (milliseconds) or null, got {total_time!r}"
        )
    if label["finish_reason"] not in FINISH_REASONS:
        raise RecordError(
            "label.finish_reason",
            f"must be one of {', '.join(FINISH_REASONS)}, got {json.dumps(label['finish_reason'])}",
        )
