"""The PRM800K record format: validation of incoming lines and serialization of annotations.

One record = one labeled solution (openai/prm800k README). Import validates every field and
reports errors by dotted path; export rebuilds the record from the database in the canonical key
order (or the order recorded at import), so imported records export back equal as JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

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


class RecordError(ValueError):
    """A field of a record is wrong; `path` names it (e.g. label.steps[3].completions[0].rating)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


# ---------------------------------------------------------------------------------------------
# Counters over label steps (shared by import and by submits from the app)
# ---------------------------------------------------------------------------------------------


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


def dumps_label_steps(steps: list[dict[str, Any]]) -> str:
    """The stored form of `label.steps`: compact JSON text, key order kept."""
    return orjson.dumps(steps).decode()


def final_answer_from_text(text: str | None) -> str | None:
    """PRM800K marks the final answer with a '# Answer' heading in the last step."""
    if not text:
        return None
    marker = text.rfind("# Answer")
    if marker < 0:
        return None
    answer = text[marker + len("# Answer") :].strip()
    return answer or None


def sha256_json(value: Any) -> str:
    """A stable identity for a JSON value (orjson keeps key order and is deterministic)."""
    return hashlib.sha256(orjson.dumps(value)).hexdigest()


def format_timestamp(moment: datetime) -> str:
    """ISO-8601 without zone, in UTC, as PRM800K writes it."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat()


def parse_timestamp(text: str) -> datetime:
    """PRM800K timestamps are UTC without a zone; one with a zone is converted to UTC."""
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# ---------------------------------------------------------------------------------------------
# Validation of incoming lines
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class ParsedSolution:
    """What one import line holds, normalized into the domain's terms."""

    problem_text: str
    ground_truth_answer: str | None
    ground_truth_solution: str | None
    steps: list[str]
    final_answer: str | None
    is_pregenerated: bool
    subject: str = ""
    level: str = ""
    source_id: str = ""
    is_quality_control: bool = False
    is_screening: bool = False
    # Only PRM800K records carry a label; plain lines are unlabeled solutions for the queue.
    annotation: ParsedAnnotation | None = None

    @property
    def problem_hash(self) -> str:
        return sha256_json([self.problem_text, self.ground_truth_answer, self.ground_truth_solution])

    @property
    def solution_hash(self) -> str:
        return sha256_json([self.problem_hash, self.steps, self.final_answer, self.is_pregenerated])


@dataclass(slots=True)
class ParsedAnnotation:
    labeler: str
    timestamp_text: str
    submitted_at: datetime
    generation: int | None
    verifier_score: float | None
    finish_reason: str
    total_time_ms: int | None
    label_steps: list[dict[str, Any]]
    shape: dict[str, Any] | None
    source_hash: str
    counters: dict[str, Any] = field(default_factory=dict)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _require_keys(obj: Any, path: str, required: tuple[str, ...], allowed: tuple[str, ...] | None) -> None:
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


def _check_str(value: Any, path: str, *, nullable: bool = False, non_empty: bool = False) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, str):
        raise RecordError(path, f"must be a string{' or null' if nullable else ''}, got {_type_name(value)}")
    if non_empty and not value.strip():
        raise RecordError(path, "must not be empty")


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check_rating(value: Any, path: str) -> None:
    if value is not None and (not _is_int(value) or value not in RATINGS):
        raise RecordError(path, f"must be -1, 0, 1 or null, got {json.dumps(value)}")


def _check_flag(value: Any, path: str) -> None:
    if value is not None and not isinstance(value, bool):
        raise RecordError(path, f"must be true, false or null, got {json.dumps(value)}")


def validate_label_steps(steps: Any, path: str = "label.steps") -> None:
    if not isinstance(steps, list):
        raise RecordError(path, f"must be a list, got {_type_name(steps)}")
    for i, step in enumerate(steps):
        step_path = f"{path}[{i}]"
        _require_keys(step, step_path, STEP_KEYS, None)
        completions = step["completions"]
        if completions is not None and not isinstance(completions, list):
            raise RecordError(f"{step_path}.completions", f"must be a list or null, got {_type_name(completions)}")
        for j, completion in enumerate(completions or []):
            c_path = f"{step_path}.completions[{j}]"
            _require_keys(completion, c_path, ("text",), None)
            _check_str(completion["text"], f"{c_path}.text")
            _check_rating(completion.get("rating"), f"{c_path}.rating")
            _check_flag(completion.get("flagged"), f"{c_path}.flagged")
        human = step["human_completion"]
        if human is not None:
            h_path = f"{step_path}.human_completion"
            if not isinstance(human, dict):
                raise RecordError(h_path, f"must be an object or null, got {_type_name(human)}")
            if "text" not in human:
                raise RecordError(f"{h_path}.text", "missing")
            _check_str(human["text"], f"{h_path}.text")
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


def parse_prm800k_record(obj: Any, *, validate: bool = True) -> ParsedSolution:
    """Validate and normalize one PRM800K record. validate=False is for lines already validated."""
    if validate:
        validate_prm800k_record(obj)
    return _normalize_prm800k_record(obj)


def validate_prm800k_record(obj: Any) -> None:
    """Raise RecordError naming the first wrong field of a PRM800K record."""
    # Unknown keys are kept (see _shape_overrides) so a newer PRM800K variant still round-trips.
    _require_keys(obj, "", RECORD_KEYS, None)
    _check_str(obj["labeler"], "labeler", non_empty=True)
    if len(obj["labeler"]) > 64:
        raise RecordError("labeler", "longer than 64 characters")
    timestamp = obj["timestamp"]
    _check_str(timestamp, "timestamp")
    try:
        parse_timestamp(timestamp)
    except ValueError:
        raise RecordError("timestamp", f"must be ISO-8601 like 2022-11-06T03:24:46.649379, got {timestamp!r}") from None
    generation = obj["generation"]
    if generation is not None and not _is_int(generation):
        raise RecordError("generation", f"must be an integer or null, got {generation!r}")
    for key in ("is_quality_control_question", "is_initial_screening_question"):
        if not isinstance(obj[key], bool):
            raise RecordError(key, f"must be true or false, got {json.dumps(obj[key])}")

    question = obj["question"]
    _require_keys(question, "question", ("problem", "ground_truth_answer"), None)
    _check_str(question["problem"], "question.problem", non_empty=True)
    _check_str(question["ground_truth_answer"], "question.ground_truth_answer", nullable=True)
    _check_str(question.get("ground_truth_solution"), "question.ground_truth_solution", nullable=True)
    _check_str(question.get("pre_generated_answer"), "question.pre_generated_answer", nullable=True)
    pre_steps = question.get("pre_generated_steps")
    if pre_steps is not None:
        if not isinstance(pre_steps, list):
            raise RecordError("question.pre_generated_steps", f"must be a list or null, got {_type_name(pre_steps)}")
        for i, text in enumerate(pre_steps):
            _check_str(text, f"question.pre_generated_steps[{i}]")
    score = question.get("pre_generated_verifier_score")
    if score is not None and not _is_number(score):
        raise RecordError("question.pre_generated_verifier_score", f"must be a number or null, got {score!r}")

    label = obj["label"]
    _require_keys(label, "label", LABEL_KEYS, None)
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


def _normalize_prm800k_record(obj: dict[str, Any]) -> ParsedSolution:
    question, label = obj["question"], obj["label"]
    pre_steps = question.get("pre_generated_steps")
    score = question.get("pre_generated_verifier_score")
    is_pregenerated = isinstance(pre_steps, list)
    steps = list(pre_steps) if is_pregenerated else trajectory_steps(label["steps"])
    if is_pregenerated:
        final_answer = question.get("pre_generated_answer")
    else:
        final_answer = final_answer_from_text(steps[-1]) if steps else None
    parsed = ParsedSolution(
        problem_text=question["problem"],
        ground_truth_answer=question["ground_truth_answer"],
        ground_truth_solution=question.get("ground_truth_solution"),
        steps=steps,
        final_answer=final_answer,
        is_pregenerated=is_pregenerated,
        is_quality_control=obj["is_quality_control_question"],
        is_screening=obj["is_initial_screening_question"],
    )
    parsed.annotation = ParsedAnnotation(
        labeler=obj["labeler"],
        timestamp_text=obj["timestamp"],
        submitted_at=parse_timestamp(obj["timestamp"]),
        generation=obj["generation"],
        verifier_score=float(score) if score is not None else None,
        finish_reason=label["finish_reason"],
        total_time_ms=label["total_time"],
        label_steps=label["steps"],
        shape=None,
        source_hash=sha256_json(obj),
        counters=label_counters(label["steps"]),
    )
    parsed.annotation.shape = _shape_overrides(obj, parsed)
    return parsed


def trajectory_steps(label_steps: list[dict[str, Any]]) -> list[str]:
    """The solution a phase-1 labeler walked: the chosen completion, else the human step."""
    steps: list[str] = []
    for step in label_steps:
        completions = step.get("completions") or []
        chosen = step.get("chosen_completion")
        human = step.get("human_completion")
        if chosen is not None and chosen < len(completions):
            steps.append(completions[chosen]["text"])
        elif isinstance(human, dict):
            steps.append(human["text"])
        elif completions:
            steps.append(completions[0]["text"])
    return steps


PLAIN_KEYS = (
    "problem",
    "ground_truth_answer",
    "steps",
    "ground_truth_solution",
    "answer",
    "source_id",
    "subject",
    "level",
)


def parse_plain_record(obj: Any) -> ParsedSolution:
    """A plain line: `{"problem", "ground_truth_answer", "steps": [...]}` plus optional fields."""
    _require_keys(obj, "", ("problem", "ground_truth_answer", "steps"), PLAIN_KEYS)
    _check_str(obj["problem"], "problem", non_empty=True)
    _check_str(obj["ground_truth_answer"], "ground_truth_answer")
    steps = obj["steps"]
    if not isinstance(steps, list) or not steps:
        raise RecordError("steps", "must be a non-empty list of strings")
    for i, text in enumerate(steps):
        _check_str(text, f"steps[{i}]", non_empty=True)
    for key in ("ground_truth_solution", "answer"):
        _check_str(obj.get(key), key, nullable=True)
    for key in ("source_id", "subject", "level"):
        value = obj.get(key)
        if value is not None and not isinstance(value, str | int):
            raise RecordError(key, f"must be a string, got {_type_name(value)}")
    answer = obj.get("answer")
    return ParsedSolution(
        problem_text=obj["problem"],
        ground_truth_answer=obj["ground_truth_answer"],
        ground_truth_solution=obj.get("ground_truth_solution"),
        steps=list(steps),
        final_answer=answer if answer is not None else final_answer_from_text(steps[-1]),
        is_pregenerated=True,
        subject=str(obj.get("subject") or ""),
        level=str(obj.get("level") or ""),
        source_id=str(obj.get("source_id") or ""),
    )


def validate_line(obj: Any) -> None:
    """Raise RecordError for a bad line of either format (without building anything)."""
    if isinstance(obj, dict) and "label" in obj and "question" in obj:
        validate_prm800k_record(obj)
    else:
        parse_line(obj)


def parse_line(obj: Any, *, validate: bool = True) -> ParsedSolution:
    """Either format, told apart by its keys."""
    if isinstance(obj, dict) and "label" in obj and "question" in obj:
        return parse_prm800k_record(obj, validate=validate)
    if isinstance(obj, dict) and "problem" in obj and "steps" in obj:
        return parse_plain_record(obj)
    if isinstance(obj, dict) and ("label" in obj or "question" in obj or "labeler" in obj):
        return parse_prm800k_record(obj)  # a broken PRM800K record: report its first missing field
    raise RecordError(
        "(line)",
        "neither a PRM800K record (labeler, timestamp, question, label, ...) nor a plain line (problem, "
        "ground_truth_answer, steps)",
    )


# ---------------------------------------------------------------------------------------------
# Building records for export
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class RecordParts:
    """Everything a PRM800K record is made of, as the database holds it."""

    labeler: str
    timestamp: str
    generation: int | None
    is_quality_control: bool
    is_screening: bool
    problem_text: str
    ground_truth_answer: str | None
    ground_truth_solution: str | None
    steps: list[str]
    final_answer: str | None
    verifier_score: float | None
    label_steps: list[dict[str, Any]]
    total_time_ms: int | None
    finish_reason: str
    phase2_shape: bool
    shape: dict[str, Any] | None = None


def build_record(parts: RecordParts) -> dict[str, Any]:
    """The PRM800K record, canonical key order unless `shape` recorded another."""
    shape = parts.shape or {}
    if "question" in shape:
        question = shape["question"]
    elif parts.phase2_shape:
        question = {
            "problem": parts.problem_text,
            "ground_truth_solution": parts.ground_truth_solution,
            "ground_truth_answer": parts.ground_truth_answer,
            "pre_generated_steps": parts.steps,
            "pre_generated_answer": parts.final_answer,
            "pre_generated_verifier_score": parts.verifier_score,
        }
    else:
        question = {"problem": parts.problem_text, "ground_truth_answer": parts.ground_truth_answer}
    label = {"steps": parts.label_steps, "total_time": parts.total_time_ms, "finish_reason": parts.finish_reason}
    if "label_keys" in shape:
        extra = shape.get("label_extra", {})
        label = {key: label[key] if key in label else extra[key] for key in shape["label_keys"]}
    record = {
        "labeler": parts.labeler,
        "timestamp": parts.timestamp,
        "generation": parts.generation,
        "is_quality_control_question": parts.is_quality_control,
        "is_initial_screening_question": parts.is_screening,
        "question": question,
        "label": label,
    }
    if "record_keys" in shape:
        extra = shape.get("record_extra", {})
        record = {key: record[key] if key in record else extra[key] for key in shape["record_keys"]}
    return record


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values with the same types (1 is not 1.0) and the same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _shape_overrides(obj: dict[str, Any], parsed: ParsedSolution) -> dict[str, Any] | None:
    """Record what the canonical rebuild would not reproduce, so export gives the line back."""
    annotation = parsed.annotation
    assert annotation is not None
    parts = RecordParts(
        labeler=annotation.labeler,
        timestamp=annotation.timestamp_text,
        generation=annotation.generation,
        is_quality_control=parsed.is_quality_control,
        is_screening=parsed.is_screening,
        problem_text=parsed.problem_text,
        ground_truth_answer=parsed.ground_truth_answer,
        ground_truth_solution=parsed.ground_truth_solution,
        steps=parsed.steps,
        final_answer=parsed.final_answer,
        verifier_score=annotation.verifier_score,
        label_steps=annotation.label_steps,
        total_time_ms=annotation.total_time_ms,
        finish_reason=annotation.finish_reason,
        phase2_shape=parsed.is_pregenerated,
    )
    shape: dict[str, Any] = {}
    rebuilt = build_record(parts)
    # orjson keeps key order and writes 1 and 1.0 differently: equal bytes mean the same JSON.
    if orjson.dumps(rebuilt["question"]) != orjson.dumps(obj["question"]):
        shape["question"] = obj["question"]
    if list(obj["label"]) != list(LABEL_KEYS):
        shape["label_keys"] = list(obj["label"])
        extra = {key: value for key, value in obj["label"].items() if key not in LABEL_KEYS}
        if extra:
            shape["label_extra"] = extra
    if list(obj) != list(RECORD_KEYS):
        shape["record_keys"] = list(obj)
        extra = {key: value for key, value in obj.items() if key not in RECORD_KEYS}
        if extra:
            shape["record_extra"] = extra
    return shape or None


def dumps_record(record: dict[str, Any]) -> str:
    """PRM800K's own encoding: Python's json.dumps defaults (ASCII escapes, ', ' and ': ')."""
    return json.dumps(record)
