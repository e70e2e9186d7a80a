"""The Math-Shepherd line format: `{"input", "label", "task"}`, steps tagged `ки`, labels `+`/`-`.

Pure Python (no Django): parsing an import line into a question, steps and per-step labels,
writing lines back, and lines from human PRM800K labels (`human_lines`, the export's labels=human).
`input` is the question, then the steps ("Step 1: ... ки\\nStep 2: ... ки");
`label` is the same text with each tag replaced by `+` (the step can still reach the answer) or
`-`. A line that our canonical writer reproduces exactly needs nothing stored beyond its parts;
any other (odd spacing, key order, encoding) keeps a `shape` with what the rebuild would miss, so
imported lines always export back byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from prm800k.labels import labeled_line_completion, walks_own_line

TAG = "ки"
KEYS = ("input", "label", "task")
_STEP_ONE = re.compile(r"(?:^|\s)(Step 1:)")
_STEP_PREFIX = re.compile(r"^Step (\d+):\s?")
_ANSWER = re.compile(r"The answer is:?\s*(.+?)\s*$", re.DOTALL)


class MathShepherdError(ValueError):
    """A field of a Math-Shepherd line is wrong; `path` names it."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(slots=True)
class MathShepherdLine:
    question: str
    steps: list[str]
    labels: list[int]  # +1 / -1 per step
    task: str
    # What the canonical rebuild would not reproduce (None for canonical lines).
    shape: dict[str, Any] | None = None

    @property
    def final_answer(self) -> str | None:
        match = _ANSWER.search(self.steps[-1]) if self.steps else None
        return match.group(1).strip() or None if match else None


def is_math_shepherd(obj: Any) -> bool:
    """Told apart from PRM800K and plain lines by its keys: `input` and `label`, where a PRM800K
    record has `question` and `label`. Some copies of Math-Shepherd carry the question apart too
    (`question` beside `input`); their `label` is text, a PRM800K record's an object."""
    if not isinstance(obj, dict) or "input" not in obj or "label" not in obj:
        return False
    return "question" not in obj or isinstance(obj["label"], str)


def parse(obj: Any, *, raw: str | None = None) -> MathShepherdLine:
    """Validate one decoded line; `raw` (the line's text without its newline) enables the byte check."""
    if not isinstance(obj, dict):
        raise MathShepherdError("(line)", "must be a JSON object")
    for key in ("input", "label"):
        if key not in obj:
            raise MathShepherdError(key, "missing")
        if not isinstance(obj[key], str):
            raise MathShepherdError(key, f"must be a string, got {type(obj[key]).__name__}")
    task = obj.get("task", "")
    if not isinstance(task, str):
        raise MathShepherdError("task", f"must be a string, got {type(task).__name__}")
    text, label = obj["input"], obj["label"]
    segments = text.split(TAG)
    if len(segments) < 2:
        raise MathShepherdError("input", f"has no step tag {TAG!r}: each step must end with it")
    labels = _labels(segments, label)
    # The last "Step 1:" before the first tag starts the steps.
    match = next(reversed(list(_STEP_ONE.finditer(segments[0]))), None)
    if match is None:
        raise MathShepherdError(
            "input", "no 'Step 1:' before the first step tag: cannot tell the question from the steps"
        )
    question = segments[0][: match.start(1)].strip()
    if not question:
        raise MathShepherdError("input", "the question before 'Step 1:' is empty")
    bodies = [segments[0][match.start(1) :], *segments[1:-1]]
    steps = [_step_text(body) for body in bodies]
    for i, step in enumerate(steps):
        if not step:
            raise MathShepherdError("input", f"step {i + 1} is empty")
    line = MathShepherdLine(question=question, steps=steps, labels=labels, task=task)
    line.shape = _shape(line, obj, raw)
    return line


def _labels(segments: list[str], label: str) -> list[int]:
    """Walk `label` along the input's segments: each tag must have become `+` or `-`."""
    labels: list[int] = []
    position = 0
    for i, segment in enumerate(segments):
        if not label.startswith(segment, position):
            raise MathShepherdError("label", f"differs from input before tag {i + 1} (at character {position})")
        position += len(segment)
        if i == len(segments) - 1:
            break
        mark = label[position : position + 1]
        if mark not in ("+", "-"):
            raise MathShepherdError("label", f"tag {i + 1} must be '+' or '-', got {mark!r}")
        labels.append(1 if mark == "+" else -1)
        position += 1
    if position != len(label):
        raise MathShepherdError("label", "has text after the last step")
    return labels


def _step_text(body: str) -> str:
    return _STEP_PREFIX.sub("", body.strip(), count=1).strip()


def build_input(question: str, steps: list[str], marks: list[str]) -> str:
    """The canonical `input`/`label` text: 'question Step 1: s1 M\\nStep 2: s2 M'."""
    return (
        question
        + " "
        + "\n".join(f"Step {i + 1}: {step} {mark}" for i, (step, mark) in enumerate(zip(steps, marks, strict=True)))
    )


def build(line: MathShepherdLine) -> dict[str, Any]:
    shape = line.shape or {}
    marks = ["+" if value > 0 else "-" for value in line.labels]
    text = shape.get("input") or build_input(line.question, line.steps, [TAG] * len(line.steps))
    if "input" in shape:
        pieces = text.split(TAG)
        label = "".join(piece + mark for piece, mark in zip(pieces, [*marks, ""], strict=True))
    else:
        label = build_input(line.question, line.steps, marks)
    record = {"input": text, "label": label, "task": line.task}
    if "keys" in shape:
        extra = shape.get("extra", {})
        record = {key: record[key] if key in record else extra[key] for key in shape["keys"]}
    return record


def dumps(line: MathShepherdLine) -> str:
    """One line without its newline: the stored raw text when the encoding was unusual, else json.dumps."""
    shape = line.shape or {}
    if "raw" in shape:
        return shape["raw"]
    return json.dumps(build(line))


def _shape(line: MathShepherdLine, obj: dict[str, Any], raw: str | None) -> dict[str, Any] | None:
    shape: dict[str, Any] = {}
    canonical = build_input(line.question, line.steps, [TAG] * len(line.steps))
    if canonical != obj["input"]:
        shape["input"] = obj["input"]
    if "task" not in obj or list(obj) != list(KEYS):
        shape["keys"] = list(obj)
        extra = {key: value for key, value in obj.items() if key not in KEYS}
        if extra:
            shape["extra"] = extra
    line.shape = shape or None
    if raw is not None and dumps(line) != raw:
        # Another encoder (ensure_ascii=False, other separators): keep the text itself.
        shape["raw"] = raw
    return shape or None


def human_line(
    *, question: str, steps: list[str], ratings: list[int | None], neutral: str = "positive", task: str = ""
) -> dict[str, Any] | None:
    """A Math-Shepherd line from one human labeling: before the first -1 `+`, it and later steps `-`.

    `ratings` are the main-line ratings of the labeled steps (PRM800K phase 2 stops at the first
    -1, so steps after it are unrated and become `-`). A neutral step maps as TRL's `neutral=`
    (positive: `+`; negative: `-`, which makes it the first error; drop: the line ends before it);
    an unrated step before any error ends the line. None when no step is left.
    """
    marks: list[str] = []
    for index, rating in enumerate(ratings):
        if rating == 0:
            if neutral == "drop":
                break
            rating = 1 if neutral == "positive" else -1
        if rating == 1:
            marks.append("+")
        elif rating == -1:
            marks.extend("-" * (len(steps) - index))
            break
        else:
            break
    if not marks:
        return None
    kept = steps[: len(marks)]
    return {
        "input": build_input(question, kept, [TAG] * len(kept)),
        "label": build_input(question, kept, marks),
        "task": task,
    }


def human_ratings(record: dict[str, Any]) -> tuple[list[str], list[int | None]]:
    """The line a PRM800K record's labeler walked: step texts and ratings, then the unrated
    pre-generated rest after a first error. A trace's observation shown but not rated
    (`question.step_types`) opens the next step's text, as in the TRL rows: it ended the line, and
    the labeler's ratings after it (their first error too) were lost."""
    texts: list[str] = []
    ratings: list[int | None] = []
    phase1 = walks_own_line(record)
    step_types = record["question"].get("step_types") or []
    context = ""  # unrated observations waiting for the next step
    position = 0  # the record's steps walked
    for position, step in enumerate(record["label"]["steps"], start=1):
        main = labeled_line_completion(step, phase1=phase1)
        human = step.get("human_completion")
        if main is None and isinstance(human, dict):  # no completion at all: the labeler's own step stands
            main = {**human, "human": True}
        if main is None:
            break
        rating = 1 if main.get("human") else main.get("rating")  # a step the labeler wrote is right (as in TRL)
        if rating is None and position <= len(step_types) and step_types[position - 1] == "observation":
            context += main["text"] + "\n\n"
            continue
        texts.append(context + main["text"])
        ratings.append(rating)
        context = ""
        if rating == -1:
            break
    pre_generated = record["question"].get("pre_generated_steps") or []
    if ratings and ratings[-1] == -1 and len(pre_generated) > position:
        texts.extend(pre_generated[position:])  # after the first error: `-` (human_line fills them)
    return texts, ratings


def human_lines(records: Iterable[dict[str, Any]], *, neutral: str) -> Iterator[str]:
    for record in records:
        texts, ratings = human_ratings(record)
        line = human_line(question=record["question"]["problem"], steps=texts, ratings=ratings, neutral=neutral)
        if line is not None:
            yield json.dumps(line) + "\n"
