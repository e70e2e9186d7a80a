"""Parsing one import line (a PRM800K record, a plain unlabeled solution, or a Math-Shepherd line)
into domain terms."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from prm800k import kinds, math_shepherd
from prm800k.labels import final_answer_from_text, label_counters, stated_answer, trajectory_steps
from prm800k.records import RecordParts, sha256_json, shape_overrides
from prm800k.schema import (
    RECORD_KEYS,
    RecordError,
    check_str,
    parse_timestamp,
    require_keys,
    type_name,
    validate_prm800k_record,
)


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
    # A Math-Shepherd line (prm800k.math_shepherd.MathShepherdLine): automatic labels, not human ones.
    auto: Any = None
    # Beyond math (prm800k.kinds): code in `language` with optional `tests`, or a trace whose steps have types.
    kind: str = kinds.DEFAULT_KIND
    language: str = ""
    tests: str | None = None
    step_types: list[str] | None = None

    @property
    def problem_hash(self) -> str:
        identity: list[Any] = [self.problem_text, self.ground_truth_answer, self.ground_truth_solution]
        if self.kind != kinds.DEFAULT_KIND:  # math keeps the hashes it always had
            identity += [self.kind, self.language, self.tests]
        return sha256_json(identity)

    @property
    def solution_hash(self) -> str:
        identity: list[Any] = [self.problem_hash, self.steps, self.final_answer, self.is_pregenerated]
        if self.step_types is not None:
            identity.append(self.step_types)
        return sha256_json(identity)


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


def parse_prm800k_record(obj: Any, *, validate: bool = True) -> ParsedSolution:
    """Validate and normalize one PRM800K record. validate=False is for lines already validated."""
    if validate:
        validate_prm800k_record(obj)
        kinds.validate_record_kind(obj)
    return _normalize_prm800k_record(obj)


def _normalize_prm800k_record(obj: dict[str, Any]) -> ParsedSolution:
    question, label = obj["question"], obj["label"]
    pre_steps = question.get("pre_generated_steps")
    score = question.get("pre_generated_verifier_score")
    is_pregenerated = isinstance(pre_steps, list)
    steps = list(pre_steps) if is_pregenerated else trajectory_steps(label["steps"])
    final_answer = _record_final_answer(question, steps, is_pregenerated=is_pregenerated)
    kind = question.get("kind") or kinds.DEFAULT_KIND
    parsed = ParsedSolution(
        problem_text=question["problem"],
        ground_truth_answer=question["ground_truth_answer"],
        ground_truth_solution=question.get("ground_truth_solution"),
        steps=steps,
        final_answer=final_answer,
        is_pregenerated=is_pregenerated,
        is_quality_control=obj["is_quality_control_question"],
        is_screening=obj["is_initial_screening_question"],
        kind=kind,
        language=question.get("language") or "",
        tests=question.get("tests"),
        step_types=question.get("step_types"),
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
    parsed.annotation.shape = shape_overrides(obj, _parts_of(parsed))
    return parsed


def _record_final_answer(question: dict[str, Any], steps: list[str], *, is_pregenerated: bool) -> str | None:
    """A phase-2 record names its answer; a phase-1 trajectory states it in its last step."""
    if is_pregenerated:
        return question.get("pre_generated_answer")
    return final_answer_from_text(steps[-1]) if steps else None


def _parts_of(parsed: ParsedSolution) -> RecordParts:
    annotation = parsed.annotation
    assert annotation is not None
    return RecordParts(
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
        kind=parsed.kind,
        language=parsed.language,
        tests=parsed.tests,
        step_types=parsed.step_types,
    )


PLAIN_KEYS = (
    "problem",
    "ground_truth_answer",
    "steps",
    "ground_truth_solution",
    "answer",
    "source_id",
    "subject",
    "level",
    "kind",
    "language",
    "tests",
)


PLAIN_TEXT_LIMITS = {"source_id": 200, "subject": 100, "level": 20}  # the database columns' sizes


def parse_plain_record(obj: Any) -> ParsedSolution:
    """A plain line: `{"problem", "ground_truth_answer", "steps": [...]}` plus optional fields.

    `kind` (math, code, trace; default math) changes the rest: code takes `language` and optional
    `tests`; a trace's steps are `{"type", "text"}` objects. Code and traces may omit the ground truth.
    """
    kind = kinds.check_kind(obj.get("kind") if isinstance(obj, dict) else None, "kind")
    if isinstance(obj, dict) and "problem" in obj and "steps" not in obj:
        # a problems file (MATH-500's problem, solution, answer): "ground_truth_answer: missing"
        # sent people renaming fields into the next error, not to what is missing
        raise RecordError(
            "steps",
            "missing: this line is a problem with no model solution to label (a problems file such as MATH-500?); "
            "give each solution as steps, a list of its step texts, with the problem's ground_truth_answer",
        )
    required = ("problem", "ground_truth_answer", "steps") if kind == kinds.DEFAULT_KIND else ("problem", "steps")
    require_keys(obj, "", required, PLAIN_KEYS)
    check_str(obj["problem"], "problem", non_empty=True)
    check_str(obj.get("ground_truth_answer"), "ground_truth_answer", nullable=kind != kinds.DEFAULT_KIND)
    language = kinds.check_language(obj.get("language"), "language", kind=kind)
    tests = kinds.check_tests(obj.get("tests"), "tests", kind=kind)
    steps = obj["steps"]
    step_types: list[str] | None = None
    if kind == "trace":
        steps, step_types = kinds.check_trace_steps(steps, "steps")
    else:
        if not isinstance(steps, list) or not steps:
            raise RecordError("steps", "must be a non-empty list of strings")
        for i, text in enumerate(steps):
            check_str(text, f"steps[{i}]", non_empty=True)
    for key in ("ground_truth_solution", "answer"):
        check_str(obj.get(key), key, nullable=True)
    for key, longest in PLAIN_TEXT_LIMITS.items():
        value = obj.get(key)
        if value is not None and not isinstance(value, str | int):
            raise RecordError(key, f"must be a string, got {type_name(value)}")
        if value is not None and len(str(value)) > longest:
            raise RecordError(key, f"longer than {longest} characters")
    answer = obj.get("answer")
    if answer is None:
        if kind == "trace":
            answer = kinds.trace_answer(steps, step_types or [])
        elif kind == kinds.DEFAULT_KIND:
            answer = stated_answer(steps[-1])
    return ParsedSolution(
        problem_text=obj["problem"],
        ground_truth_answer=obj.get("ground_truth_answer"),
        ground_truth_solution=obj.get("ground_truth_solution"),
        steps=list(steps),
        final_answer=answer,
        is_pregenerated=True,
        subject=str(obj.get("subject") or ""),
        level=str(obj.get("level") or ""),
        source_id=str(obj.get("source_id") or ""),
        kind=kind,
        language=language,
        tests=tests,
        step_types=step_types,
    )


PRM800K, PLAIN, MATH_SHEPHERD = "prm800k", "plain", "math_shepherd"
FORMAT_KEYS = {PRM800K: RECORD_KEYS, PLAIN: PLAIN_KEYS, MATH_SHEPHERD: math_shepherd.KEYS}


# What an import line may be, as its errors name the formats (also the error for a JSON array file).
IMPORT_FORMATS = (
    "a PRM800K record (labeler, timestamp, question, label, ...), a plain line (problem, ground_truth_answer, "
    "steps) or a Math-Shepherd line (input, label)"
)


def line_format(obj: Any) -> str | None:
    """Which format a line is meant to be, by its keys; None when it has none of theirs.

    A line with all of a format's identifying keys is that format. Any other line is checked as
    the format it shares the most keys with (ties: PRM800K, then plain), so its error names the
    field it lacks ("problem: missing") instead of listing every format.
    """
    if not isinstance(obj, dict):
        return None
    if math_shepherd.is_math_shepherd(obj):
        return MATH_SHEPHERD
    if "label" in obj and "question" in obj:
        return PRM800K
    if "problem" in obj and "steps" in obj:
        return PLAIN
    shared = {name: sum(key in obj for key in keys) for name, keys in FORMAT_KEYS.items()}
    closest = max(shared, key=lambda name: shared[name])  # max keeps the first of equals
    return closest if shared[closest] else None


def validate_line(obj: Any) -> tuple[str | None, str | None]:
    """Raise RecordError for a bad PRM800K or plain line; return its (ground truth, final answer).

    A PRM800K record is checked without being built; the answers are what grading needs.
    """
    if line_format(obj) == PRM800K:
        validate_prm800k_record(obj)
        kinds.validate_record_kind(obj)
        question = obj["question"]
        pre_steps = question.get("pre_generated_steps")
        if isinstance(pre_steps, list):
            return question["ground_truth_answer"], _record_final_answer(question, pre_steps, is_pregenerated=True)
        steps = trajectory_steps(obj["label"]["steps"])
        return question["ground_truth_answer"], _record_final_answer(question, steps, is_pregenerated=False)
    parsed = parse_line(obj)
    return parsed.ground_truth_answer, parsed.final_answer


def parse_line(obj: Any, *, validate: bool = True) -> ParsedSolution:
    """A PRM800K record or a plain line, told apart by line_format (Math-Shepherd lines are read
    by parse_math_shepherd_line, which needs the raw bytes)."""
    meant = line_format(obj)
    if meant == PRM800K:
        return parse_prm800k_record(obj, validate=validate)
    if meant == PLAIN:
        return parse_plain_record(obj)
    if meant == MATH_SHEPHERD:
        raise ValueError("a Math-Shepherd line: read it with parse_math_shepherd_line")
    raise RecordError("(line)", f"not a line of any import format: {IMPORT_FORMATS}")


def parse_math_shepherd_line(obj: Any, *, raw: bytes) -> ParsedSolution:
    """A Math-Shepherd line (`{"input", "label", "task"}`) as a solution whose tags ride along in
    `auto` (automatic labels, never an annotation). Raise RecordError (path, message) for a bad
    line; `raw` is the line as read, so an odd one keeps its shape and exports back exactly."""
    try:
        line = math_shepherd.parse(obj, raw=raw.rstrip(b"\n").decode("utf-8"))
    except math_shepherd.MathShepherdError as exc:
        raise RecordError(exc.path, exc.message) from None
    parsed = ParsedSolution(
        problem_text=line.question,
        ground_truth_answer=None,  # Math-Shepherd lines carry no ground truth
        ground_truth_solution=None,
        steps=line.steps,
        final_answer=line.final_answer,
        is_pregenerated=True,
        subject=line.task[:100],
    )
    parsed.auto = line
    return parsed
