"""The first pass of an import: parse, validate and grade every line, collecting errors by line and
field; nothing is written. Streams the file (plain or gzip), so memory stays flat."""

from __future__ import annotations

import gzip
import json
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson
from django.conf import settings

from prm800k import grading
from prm800k.parse import (
    IMPORT_FORMATS,
    MATH_SHEPHERD,
    ParsedSolution,
    line_format,
    parse_line,
    parse_math_shepherd_line,
    validate_line,
)
from prm800k.records import EXPORT_END_KEY
from prm800k.schema import RecordError

MAX_REPORTED_ERRORS = 20
IMPORT_GRADING_BUDGET_S = 120  # sympy time one import may spend before the rest is graded by rules alone
T = TypeVar("T")
BATCH_SIZE = 1000
BATCH_BYTES = 64 * 1024**2  # a write batch ends at BATCH_SIZE solutions or this many bytes of their lines

ProgressCallback = Callable[[int], None]  # called with the number of bytes just consumed


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


class ImportValidationError(Exception):
    """The file has bad lines; nothing was written."""

    def __init__(self, errors: list[LineError], bad_lines: int) -> None:
        self.errors = errors  # the first MAX_REPORTED_ERRORS
        self.bad_lines = bad_lines
        more = f" (showing the first {len(errors)})" if bad_lines > len(errors) else ""
        super().__init__(f"{bad_lines} bad line(s){more}; nothing was imported")


class EmptyFileError(ImportValidationError):
    """The file has no lines to import (empty, or only blank lines); nothing was written."""

    def __init__(self) -> None:
        super().__init__([LineError(0, "(file)", "the file is empty: it has no JSON lines")], 1)


class WholeFileError(ImportValidationError):
    """Something about the file as a whole, said once (line 0, field "(file)"); nothing was written."""

    def __init__(self, message: str) -> None:
        super().__init__([LineError(0, "(file)", message)], 1)


class NotJsonLinesError(WholeFileError):
    """The file is one JSON array (pretty-printed or on one line) or a pretty-printed object, not JSON
    lines; nothing was written. One error says so (json_array_problem)."""


class UnpacksTooLargeError(WholeFileError):
    """A gzip file unpacking past IMPORT_MAX_UNPACKED_BYTES; reading stops there, nothing was written."""


class DamagedGzipError(WholeFileError):
    """A gzip file cut short or corrupt inside; nothing was written."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(
            f"the gzip file is damaged or cut short ({exc}): nothing was imported; upload it again, "
            "or check it with gzip -t"
        )


GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)  # what reading a damaged gzip stream raises

UTF8_BOM = b"\xef\xbb\xbf"  # read past at the start of a file
ARRAY_PEEK_BYTES = 1 << 20  # holds the first element of a ProcessBench file, to name what the file is
PROCESSBENCH_KEYS = {"problem", "steps", "label"}


def json_array_problem(path: Path | str) -> str | None:
    """What is wrong with a file that is one JSON document, not JSON lines (a JSON array, or an
    object pretty-printed over many lines), else None. Read line by line, every line of such a file
    is bad and none says why."""
    with open_jsonl(path) as probe:
        head = probe.read(ARRAY_PEEK_BYTES).removeprefix(UTF8_BOM).lstrip()
    reads = f"the importer reads one JSON object per line (JSONL, optionally gzip-compressed): {IMPORT_FORMATS}"
    if head.split(b"\n", 1)[0].strip() == b"{":  # a JSON lines record never ends its line at its opening brace
        if b'"Question_UUID"' in head:
            return (
                "the file is an MR-Ben file (one JSON object of solutions keyed by question), not JSON lines: "
                "MR-Ben is read by manage.py simulate_active_learning and rerank_eval and by the benches (bench/), "
                f"not imported as a project; {reads}"
            )
        return (
            f"the file is one JSON object written over many lines, not JSON lines: {reads}; put each record "
            "on a line of its own (jq -c '.[]' file.json > file.jsonl for an object of records keyed by id)"
        )
    if not head.startswith(b"["):
        return None
    try:
        first, _ = json.JSONDecoder().raw_decode(head[1:].decode("utf-8", "ignore").lstrip())
    except ValueError:  # an empty array, or a first element longer than the peek
        first = None
    if isinstance(first, dict) and PROCESSBENCH_KEYS <= first.keys():
        return (
            "the file is a JSON array of ProcessBench solutions (problem, steps, label), not JSON lines: "
            "ProcessBench files are read by manage.py simulate_active_learning, train_base_prm and rerank_eval "
            "and by the benches (bench/), not imported as a project; to label its solutions in a project, write each "
            "as a plain line (problem, ground_truth_answer, steps) with a ground truth of your own: ProcessBench has "
            f"none; {reads}"
        )
    return (
        f"the file is one JSON array, not JSON lines: {reads}; put each element of the array on a line "
        "of its own (jq -c '.[]' file.json > file.jsonl)"
    )


AnswerPair = tuple[str | None, str | None]  # (ground truth, final answer)


def _iter_parsed(
    stream: IO[bytes], progress: ProgressCallback | None, *, validate_only: bool = False
) -> Iterator[tuple[int, ParsedSolution | LineError | AnswerPair]]:
    """Yield (line number, parsed line or its error) for every non-blank line.

    validate_only checks lines without building them (yielding the answers to grade for a good
    line); the write pass then builds them without checking again.
    """
    for number, raw in _lines(stream, progress):
        if raw is None:
            limit = settings.IMPORT_MAX_LINE_BYTES
            yield number, LineError(number, "(line)", f"longer than {limit:,} bytes (IMPORT_MAX_LINE_BYTES)")
            continue
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            yield number, LineError(number, "(json)", _json_problem(raw, exc))
            continue
        if isinstance(obj, dict) and EXPORT_END_KEY in obj:
            why = "is the end line of a Steplabel export (trailer=true), not a record: leave it out (head -n -1)"
            yield number, LineError(number, "(line)", why)
            continue
        if b"\\u0000" in raw and (where := nul_path(obj)) is not None:
            yield number, LineError(number, where, "contains a NUL character (\\u0000), which cannot be stored")
            continue
        try:
            if line_format(obj) == MATH_SHEPHERD:  # whole or missing a key: its parser names what is wrong
                parsed = parse_math_shepherd_line(obj, raw=raw)
                yield number, (parsed.ground_truth_answer, parsed.final_answer) if validate_only else parsed
                continue
            yield number, validate_line(obj) if validate_only else parse_line(obj, validate=False)
        except RecordError as exc:
            yield number, LineError(number, exc.path, exc.message)
        except Exception as exc:  # a line nothing above foresaw: still an error with its number, never a 500
            yield number, LineError(number, "(line)", f"could not be read: {type(exc).__name__}: {exc}"[:500])


def _lines(stream: IO[bytes], progress: ProgressCallback | None) -> Iterator[tuple[int, bytes | None]]:
    """(number, line) for every line; None in place of a line longer than IMPORT_MAX_LINE_BYTES,
    which is read past without being held. Raises UnpacksTooLargeError past IMPORT_MAX_UNPACKED_BYTES
    (a plain file is capped at upload; a gzip one only here)."""
    limit, cap = settings.IMPORT_MAX_LINE_BYTES, settings.IMPORT_MAX_UNPACKED_BYTES
    total = 0

    def read(size: int) -> bytes:
        nonlocal total
        chunk = stream.readline(size)
        total += len(chunk)
        if progress:
            progress(len(chunk))
        if total > cap:
            raise UnpacksTooLargeError(
                f"the file unpacks to more than {cap:,} bytes (IMPORT_MAX_UNPACKED_BYTES); split it into smaller files"
            )
        return chunk

    number = 0
    while raw := read(limit + 1):
        number += 1
        if number == 1:
            raw = raw.removeprefix(UTF8_BOM)  # what Windows editors put first: not part of the JSON
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield number, raw
            continue
        while raw and not raw.endswith(b"\n"):  # the rest of the long line, a chunk at a time
            raw = read(1 << 20)
        yield number, None


NOT_TEXT = "not UTF-8 text"


def _json_problem(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """orjson's reason without its "line 2 column 1" (it counts within this one line, so it
    contradicted the file's line number), or what a binary file is."""
    if exc.msg.startswith("str is not valid UTF-8"):
        return f"{NOT_TEXT} (a binary file?); import JSONL text, or JSONL compressed with gzip"
    where = "at the end of the line" if exc.pos >= len(raw.rstrip()) else f"at column {exc.pos + 1}"
    return f"not valid JSON: {exc.msg} {where}"


def is_gzip(path: Path | str) -> bool:
    """By the file's magic bytes, not its name."""
    with open(path, "rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


def open_jsonl(path: Path | str) -> IO[bytes]:
    """The file's lines as bytes, gunzipped on the fly when it is gzip."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def nul_path(obj: Any) -> str | None:
    """The path of the first string (value or key) holding a NUL character, else None."""
    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return path or "(line)"
        elif isinstance(value, dict):
            for key, item in value.items():
                if "\x00" in key:
                    return f"{path}.{key!r}" if path else repr(key)
                stack.append((f"{path}.{key}" if path else key, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(value))
    return None


@dataclass(slots=True)
class Validated:
    """What the first pass learned: the number of records and the verdict of every answer."""

    records: int
    verdicts: dict[AnswerPair, bool | None]


def validate_file(*, path: Path, progress: ProgressCallback | None = None) -> Validated:
    """First pass: raise ImportValidationError listing bad lines; grade every distinct answer.

    Grading happens here, before the write pass takes the project's export lock, so a slow
    answer never holds up that project's exports; sympy runs in a child process with a time limit
    (prm800k.grading), and past IMPORT_GRADING_BUDGET_S of grading the rest is graded by the rules
    alone (answers that need sympy stay ungraded).
    """
    errors: list[LineError] = []
    bad_lines = records = 0
    verdicts: dict[AnswerPair, bool | None] = {}
    deadline = time.monotonic() + IMPORT_GRADING_BUDGET_S
    try:
        if (problem := json_array_problem(path)) is not None:
            raise NotJsonLinesError(problem)
        with open_jsonl(path) as stream:
            for _, item in _iter_parsed(stream, progress, validate_only=True):
                if isinstance(item, LineError):
                    bad_lines += 1
                    if len(errors) < MAX_REPORTED_ERRORS:
                        errors.append(item)
                    if bad_lines == 1 and not records and item.message.startswith(NOT_TEXT):
                        break  # a binary file from its first line: one error says it, not 20 of the same
                    continue
                records += 1
                if not bad_lines and item not in verdicts:  # a refused file is not worth grading
                    verdicts[item] = grading.grade_answer(*item, symbolic=time.monotonic() < deadline)
    except GZIP_ERRORS as exc:
        raise DamagedGzipError(exc) from exc
    if bad_lines:
        raise ImportValidationError(errors, bad_lines)
    if not records:
        raise EmptyFileError()
    return Validated(records=records, verdicts=verdicts)
