"""Solutions beyond math: code, agent traces, and written critiques of steps (issue 18).

A solution's kind decides how its steps read: `math` (Markdown + LaTeX, PRM800K), `code` (each
step a block of source lines in `language`, with optional `tests` shown as the specification's
examples) or `trace` (each step an agent event: thought, tool_call, observation or answer).
Observations are shown but not rated unless the project says so. A rated step may carry a
critique (schema.MAX_CRITIQUE characters at most). Pure Python: import lines,
exports and the submit rules all read these names.
"""

from __future__ import annotations

import re
from typing import Any

from prm800k.labels import labeled_line_completion
from prm800k.schema import RecordError, check_str, type_name

KINDS = ("math", "code", "trace")
DEFAULT_KIND = "math"
STEP_TYPES = ("thought", "tool_call", "observation", "answer")
UNRATED_STEP_TYPES = ("observation",)  # rated only where the project rates observations
MAX_LANGUAGE = 32
MAX_TESTS = 20_000
# A language name as highlighters spell it: python, c++, c#, objective-c, ...
_LANGUAGE = re.compile(r"^[a-z0-9][a-z0-9+#._-]*$")


def check_kind(value: Any, path: str) -> str:
    if value is None:
        return DEFAULT_KIND
    if value not in KINDS:
        shown = repr(value) if isinstance(value, str) else type_name(value)
        raise RecordError(path, f"must be one of {', '.join(KINDS)}, got {shown}")
    return value


def check_language(value: Any, path: str, *, kind: str) -> str:
    """Code needs its language (lower case, e.g. python); other kinds take none."""
    if kind != "code":
        if value is not None:
            raise RecordError(path, f"only code solutions have a language (this line is {kind})")
        return ""
    if value is None:
        raise RecordError(path, 'missing: a code solution names its language, e.g. "python"')
    check_str(value, path, non_empty=True)
    if len(value) > MAX_LANGUAGE or not _LANGUAGE.match(value):
        raise RecordError(path, f"must be a lower-case language name like python (at most {MAX_LANGUAGE} characters)")
    return value


def check_tests(value: Any, path: str, *, kind: str) -> str | None:
    if value is None:
        return None
    if kind != "code":
        raise RecordError(path, f"only code solutions have tests (this line is {kind})")
    check_str(value, path)
    if len(value) > MAX_TESTS:
        raise RecordError(path, f"longer than {MAX_TESTS} characters")
    return value


def check_trace_steps(steps: Any, path: str) -> tuple[list[str], list[str]]:
    """A trace's steps `[{"type", "text"}, ...]` -> (texts, types)."""
    if not isinstance(steps, list) or not steps:
        raise RecordError(path, 'must be a non-empty list of {"type", "text"} objects')
    texts: list[str] = []
    types: list[str] = []
    for i, step in enumerate(steps):
        step_path = f"{path}[{i}]"
        if not isinstance(step, dict):
            raise RecordError(step_path, f'must be an object {{"type", "text"}} in a trace, got {type_name(step)}')
        for key in step:
            if key not in ("type", "text"):
                raise RecordError(f"{step_path}.{key}", "unknown field (allowed: type, text)")
        if "type" not in step:
            raise RecordError(f"{step_path}.type", "missing")
        if step["type"] not in STEP_TYPES:
            raise RecordError(f"{step_path}.type", f"must be one of {', '.join(STEP_TYPES)}, got {step['type']!r}")
        if "text" not in step:
            raise RecordError(f"{step_path}.text", "missing")
        check_str(step["text"], f"{step_path}.text", non_empty=True)
        texts.append(step["text"])
        types.append(step["type"])
    return texts, types


def check_step_types(value: Any, path: str, *, kind: str, n_steps: int) -> list[str] | None:
    """`question.step_types` of an exported trace record: one type per pre-generated step."""
    if kind != "trace":
        if value is not None:
            raise RecordError(path, f"only traces have step types (this record is {kind})")
        return None
    if not isinstance(value, list) or len(value) != n_steps:
        raise RecordError(path, f"must list one type per step ({n_steps})")
    for i, item in enumerate(value):
        if item not in STEP_TYPES:
            raise RecordError(f"{path}[{i}]", f"must be one of {', '.join(STEP_TYPES)}, got {item!r}")
    return list(value)


def trace_answer(texts: list[str], types: list[str]) -> str | None:
    """A trace's final answer: the text of its last answer step."""
    for text, step_type in zip(reversed(texts), reversed(types), strict=True):
        if step_type == "answer":
            return text.strip() or None
    return None


def is_rated(step_type: str, *, rate_observations: bool) -> bool:
    """Whether an annotator rates a step of this type (math and code steps have type "")."""
    return rate_observations or step_type not in UNRATED_STEP_TYPES


def validate_record_kind(obj: dict[str, Any]) -> None:
    """The kind fields an exported non-math PRM800K record carries in `question` (a validated record)."""
    question = obj["question"]
    kind = check_kind(question.get("kind"), "question.kind")
    check_language(question.get("language"), "question.language", kind=kind)
    check_tests(question.get("tests"), "question.tests", kind=kind)
    pre_steps = question.get("pre_generated_steps")
    if kind == "trace" and not isinstance(pre_steps, list):
        raise RecordError("question.pre_generated_steps", "a trace record lists its steps")
    n_steps = len(pre_steps) if isinstance(pre_steps, list) else 0
    check_step_types(question.get("step_types"), "question.step_types", kind=kind, n_steps=n_steps)


def line_ranges(steps: list[str]) -> list[list[int]]:
    """[first, last] line of each code step, numbered from 1 over the steps one after another."""
    ranges = []
    first = 1
    for text in steps:
        n = len(text.removesuffix("\n").split("\n"))
        ranges.append([first, first + n - 1])
        first += n
    return ranges


def critique_row(
    *,
    prompt: str,
    kind: str,
    language: str,
    steps: list[str],
    step_types: list[str] | None,
    label_steps: list[dict[str, Any]],
    phase1: bool = False,
) -> dict[str, Any]:
    """One `format=critique` line: the prompt, the steps, and a verdict per rated main-line step
    (the rating, and the critique in the annotator's words or null). A code verdict also names the
    step's `lines` [first, last], numbered from 1 over the steps joined, as the workspace shows them."""
    lines = line_ranges(steps) if kind == "code" else None
    verdicts = []
    for index, step in enumerate(label_steps):
        main = labeled_line_completion(step, phase1=phase1)
        if main is None or main.get("human") or main.get("rating") is None:
            continue  # unrated, or a phase-1 step the labeler wrote themselves (theirs, not rated)
        verdict: dict[str, Any] = {"index": index, "rating": main["rating"], "critique": main.get("critique")}
        if lines is not None and index < len(lines):
            verdict["lines"] = lines[index]
        verdicts.append(verdict)
    shown: list[Any] = list(steps)
    if kind == "trace" and step_types:
        shown = [{"type": t, "text": text} for t, text in zip(step_types, steps, strict=True)]
    row: dict[str, Any] = {"prompt": prompt, "steps": shown, "verdicts": verdicts}
    if kind != DEFAULT_KIND:
        row["kind"] = kind
    if language:
        row["language"] = language
    return row
