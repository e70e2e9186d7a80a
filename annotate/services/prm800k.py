"""The PRM800K record format: validation of incoming lines and serialization of annotations.

One record = one labeled solution (openai/prm800k README). Import validates every field and
reports errors by dotted path; export rebuilds the record from the database in the canonical key
order (or the order recorded at import), so imported records export back equal as JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from dataclasses import dataclass, field
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

_TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?$")


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
    return json.dumps(steps, ensure_ascii=False, separators=(",", ":"))


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
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def format_timestamp(moment: datetime) -> str:
    """ISO-8601 without zone, in UTC, as PRM800K writes it."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat()


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


__all__ = [
    "RecordError",
    "label_counters",
    "dumps_label_steps",
    "main_line_completion",
    "final_answer_from_text",
    "sha256_json",
    "format_timestamp",
    "parse_timestamp",
    "math",
    "uuid",
    "field",
    "dataclass",
]
