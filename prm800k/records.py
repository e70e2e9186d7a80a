"""Building PRM800K records for export, and the encodings that keep a round trip byte-exact.

Export rebuilds a record in the canonical key order; an imported record whose layout differs
(other key order, extra keys, a question that does not match the solution) carries `shape`
overrides recorded at import, so it exports back equal as JSON.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import orjson

from prm800k.schema import LABEL_KEYS, RECORD_KEYS


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
    # Beyond math (prm800k.kinds): written into `question` only for code and traces.
    kind: str = "math"
    language: str = ""
    tests: str | None = None
    step_types: list[str] | None = None


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
    if "question" not in shape and parts.kind != "math":
        question["kind"] = parts.kind
        if parts.language:
            question["language"] = parts.language
        if parts.tests is not None:
            question["tests"] = parts.tests
        if parts.step_types is not None:
            question["step_types"] = parts.step_types
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


HISTORY_KEY = "history"  # the last key of an export with include_history=true
EXPORT_END_KEY = "steplabel_export_end"  # the key of an export's last line with trailer=true


def shape_overrides(obj: dict[str, Any], parts: RecordParts) -> dict[str, Any] | None:
    """Record what the canonical rebuild from `parts` would not reproduce, so export gives `obj` back."""
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
    # Steplabel's own `history` (include_history=true) tells of edits in the project it came from,
    # by that project's pseudonyms: not part of the record, so a re-import leaves it out
    keys = [key for key in obj if key != HISTORY_KEY]
    if keys != list(RECORD_KEYS):
        shape["record_keys"] = keys
        extra = {key: obj[key] for key in keys if key not in RECORD_KEYS}
        if extra:
            shape["record_extra"] = extra
    return shape or None


def dumps_record(record: dict[str, Any]) -> str:
    """PRM800K's own encoding: Python's json.dumps defaults (ASCII escapes, ', ' and ': ')."""
    return json.dumps(record)


def dumps_label_steps(steps: list[dict[str, Any]]) -> str:
    """The stored form of `label.steps`: compact JSON text, key order kept."""
    return orjson.dumps(steps).decode()


def sha256_json(value: Any) -> str:
    """A stable identity for a JSON value (orjson keeps key order and is deterministic)."""
    return hashlib.sha256(orjson.dumps(value)).hexdigest()
