"""Reading an export: the plan fixed at its start, keyset-paginated records by export sequence (the
steps of a chunk's solutions in one query, so memory depends on the chunk, not the project), and
the lines and byte chunks of the stream."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from django.db.models import Exists, OuterRef, Q, QuerySet

from annotate.models import Annotation, AnnotationRevision, AnnotationSource, Preference, Project, Step
from annotate.services import auto_labels
from annotate.services.exports.options import ExportOptions, encode_cursor
from annotate.services.exports.sequence import stamp_export_sequence
from prm800k import math_shepherd
from prm800k.agreement import pairwise_agreement
from prm800k.kinds import critique_row
from prm800k.labels import main_line_ratings, walked_completion, walks_own_line
from prm800k.records import EXPORT_END_KEY as END_KEY
from prm800k.records import HISTORY_KEY, RecordParts, build_record, dumps_record
from prm800k.schema import format_timestamp
from prm800k.trl import trl_rows

CHUNK_SIZE = 1000

_FIELDS = (
    "id",
    "export_seq",
    "labeler_uuid",
    "source",
    "submitted_at",
    "timestamp_text",
    "generation",
    "is_quality_control",
    "is_gold",
    "is_screening",
    "verifier_score",
    "finish_reason",
    "total_time_ms",
    "label_steps",
    "shape",
    "solution_id",
    "solution__annotation_count",
    "solution__final_answer",
    "solution__is_pregenerated",
    "solution__problem__text",
    "solution__problem__ground_truth_answer",
    "solution__problem__ground_truth_solution",
    "solution__problem__kind",
    "solution__problem__language",
    "solution__problem__tests",
)


def annotations_for_export(*, project: Project, options: ExportOptions | None = None) -> QuerySet[Annotation]:
    options = options or ExportOptions()
    queryset = Annotation.objects.filter(project=project)
    if options.generation:
        queryset = queryset.filter(generation__in=options.generation)
    if options.labeler:
        queryset = queryset.filter(labeler_uuid=options.labeler)
    if options.finish_reason:
        queryset = queryset.filter(finish_reason__in=options.finish_reason)
    # A gold question's reference label (is_gold) belongs to a quality-control question as much as
    # the answers checked against it: both are is_quality_control_question in the export.
    for name, flagged in (("qc", Q(is_quality_control=True) | Q(is_gold=True)), ("screening", Q(is_screening=True))):
        mode = getattr(options, name)
        if mode == "exclude":
            queryset = queryset.exclude(flagged)
        elif mode == "only":
            queryset = queryset.filter(flagged)
    if options.split == "test":
        queryset = queryset.filter(solution__problem__is_math500=True)
    elif options.split == "train":
        queryset = queryset.filter(solution__problem__is_math500=False)
    return queryset


@dataclass(slots=True)
class ExportPlan:
    """An export fixed at its start: what to read, up to which position, and the next cursor."""

    project: Project
    options: ExportOptions
    queryset: QuerySet[Annotation] | QuerySet[Preference]
    until: int
    cursor: str


def plan_export(*, project: Project, options: ExportOptions) -> ExportPlan:
    if options.format == "preference":  # a compare project's preferences, numbered apart
        from annotate.services.compare.export import preferences_for_export

        until = stamp_export_sequence(project=project, model=Preference)
        chosen = preferences_for_export(
            project=project, ties=options.ties, qc=options.qc, labeler=options.labeler, split=options.split
        )
    else:
        until = stamp_export_sequence(project=project)
        chosen = annotations_for_export(project=project, options=options)
    queryset = chosen.filter(export_seq__gt=options.since, export_seq__lte=until)
    return ExportPlan(
        project=project,
        options=options,
        queryset=queryset,
        until=until,
        # automatic labels export whole: no cursor, so nobody appends them again as if they were new
        cursor=""
        if options.labels == "auto"
        else encode_cursor(project=project, seq=until, preferences=options.format == "preference"),
    )


def corrections_in(*, plan: ExportPlan) -> int:
    """How many labels of an incremental pull (`since`) are corrections of a version that an earlier
    pull, up to that cursor, may have delivered: a correction moves a label to a new position, so
    the pull brings it again while the earlier pull's record or rows stay where they were appended.
    A PRM800K record keeps its key (replace it); TRL and other rows have none (rebuild). A revision
    made before revisions kept the label's position counts too (it cannot be told). Preferences
    are never corrected: 0 for them, and without `since` (a full pull has nothing to replace)."""
    since = plan.options.since
    if not since or plan.options.format == "preference":
        return 0
    from annotate.services.audit import REVISION_EXPORT_SEQ  # audit imports this package

    key = f"fields__{REVISION_EXPORT_SEQ}"
    # positions start at 1; a JSON null (a label corrected before any export numbered it) is neither
    # (PostgreSQL orders jsonb null below every number, so `<= since` alone would take it)
    numbered_by_then = Q(**{f"{key}__gte": 1, f"{key}__lte": since})
    delivered = AnnotationRevision.objects.filter(annotation=OuterRef("pk")).filter(
        numbered_by_then | ~Q(fields__has_key=REVISION_EXPORT_SEQ)
    )
    return plan.queryset.filter(Exists(delivered)).count()


def iter_records(
    *,
    queryset: QuerySet[Annotation],
    chunk_size: int = CHUNK_SIZE,
    min_agreement: float | None = None,
    with_history: bool = False,
) -> Iterator[dict]:
    """Yield PRM800K records in export order; the queryset comes from a plan.

    with_history adds a top-level "history" key (annotate.services.audit), fetched per chunk: the
    query count depends on the number of chunks, not of records.
    """
    if with_history:
        from annotate.services.audit import history_by_annotation  # audit imports this module
    last_seq = 0
    size = min(64, chunk_size)  # a small first chunk: the first byte goes out at once
    while True:
        rows = list(queryset.filter(export_seq__gt=last_seq).order_by("export_seq").values(*_FIELDS)[:size])
        size = chunk_size
        if not rows:
            return
        steps, types = _steps_by_solution({row["solution_id"] for row in rows})
        agreement = _agreement_by_solution(rows) if min_agreement is not None else {}
        if min_agreement is not None:
            rows_out = [row for row in rows if agreement.get(row["solution_id"], 1.0) >= min_agreement]
        else:
            rows_out = rows
        history = history_by_annotation([row["id"] for row in rows_out]) if with_history else {}
        for row in rows_out:
            record = build_record(_parts(row, steps.get(row["solution_id"], []), types.get(row["solution_id"])))
            if with_history:
                record[HISTORY_KEY] = history.get(row["id"], [])
            yield record
        last_seq = rows[-1]["export_seq"]


def iter_lines(*, plan: ExportPlan, chunk_size: int = CHUNK_SIZE) -> Iterator[str]:
    """JSONL lines ending in a newline: PRM800K's own encoding, or TRL rows."""
    options = plan.options
    records = iter_records(
        queryset=plan.queryset,
        chunk_size=chunk_size,
        min_agreement=options.min_agreement,
        # Only on request, so the default export stays byte-exact PRM800K.
        with_history=options.include_history,
    )
    if options.format == "preference":  # a compare project's pairs, not step annotations
        from annotate.services.compare.export import preference_lines

        yield from preference_lines(queryset=plan.queryset)
    elif options.format == "math_shepherd":
        if options.labels == "auto":  # automatic labels live in their own app (annotate.services.auto_labels)
            yield from auto_labels.store().math_shepherd_lines(project=plan.project, chunk_size=chunk_size)
        else:
            yield from math_shepherd.human_lines(records, neutral=options.neutral)
    elif options.format == "trl" and options.labels == "auto":
        yield from auto_labels.store().trl_rows(project=plan.project, chunk_size=chunk_size)
    elif options.format == "critique":
        for record in records:
            yield json.dumps(critique_row_of(record), ensure_ascii=False) + "\n"
    elif options.format == "trl":
        for record in records:
            for row in trl_rows(record, neutral=options.neutral, alternatives=options.alternatives):
                yield json.dumps(row, ensure_ascii=False) + "\n"
    else:
        for record in records:
            yield dumps_record(record) + "\n"


def critique_row_of(record: dict[str, Any]) -> dict[str, Any]:
    """A `format=critique` line from a PRM800K record as export builds it (prm800k.kinds.critique_row)."""
    question = record["question"]
    steps = question.get("pre_generated_steps")
    phase1 = walks_own_line(record)
    if phase1:  # the trajectory the labeler walked, a text per step
        walked = (walked_completion(step) for step in record["label"]["steps"])
        steps = [completion["text"] if completion else "" for completion in walked]
    return critique_row(
        prompt=question["problem"],
        kind=question.get("kind", "math"),
        language=question.get("language", ""),
        steps=steps,
        step_types=question.get("step_types"),
        label_steps=record["label"]["steps"],
        phase1=phase1,
    )


def iter_chunks(*, plan: ExportPlan, chunk_bytes: int = 1 << 16) -> Iterator[bytes]:
    """The lines of iter_lines, encoded and gathered into ~64 KB blocks for the socket."""
    buffer: list[str] = []
    size = 0
    first = True
    for line in iter_lines(plan=plan):
        buffer.append(line)
        size += len(line)
        if size >= chunk_bytes or first:
            first = False
            yield "".join(buffer).encode()
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer).encode()


def with_end_line(chunks: Iterator[bytes], *, plan: ExportPlan) -> Iterator[bytes]:
    """The chunks, then one last line `{"steplabel_export_end": {"lines": N, ...}}` (opt-in, `trailer=true`).

    A client that finds no such line, or a count that differs from the lines it read, knows the
    stream was cut; without the option the output stays byte-exact PRM800K.
    """
    lines = 0
    for chunk in chunks:
        lines += chunk.count(b"\n")
        yield chunk
    end = {"lines": lines, "format": plan.options.format, "cursor": plan.cursor}
    yield (json.dumps({END_KEY: end}) + "\n").encode()


def _steps_by_solution(solution_ids: set[int]) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """Step texts by solution, and step types for the solutions that have them (traces)."""
    steps: dict[int, list[str]] = defaultdict(list)
    types: dict[int, list[str]] = defaultdict(list)
    rows = Step.objects.filter(solution_id__in=solution_ids).order_by("solution_id", "index")
    for solution_id, text, step_type in rows.values_list("solution_id", "text", "step_type"):
        steps[solution_id].append(text)
        if step_type:
            types[solution_id].append(step_type)
    return steps, types


def _parts(row: dict[str, Any], steps: list[str], step_types: list[str] | None) -> RecordParts:
    imported = row["source"] == AnnotationSource.IMPORT
    kind = row["solution__problem__kind"]
    return RecordParts(
        labeler=row["labeler_uuid"],
        timestamp=row["timestamp_text"] or format_timestamp(row["submitted_at"]),
        generation=row["generation"],
        is_quality_control=row["is_quality_control"] or row["is_gold"],
        is_screening=row["is_screening"],
        problem_text=row["solution__problem__text"],
        ground_truth_answer=row["solution__problem__ground_truth_answer"],
        ground_truth_solution=row["solution__problem__ground_truth_solution"],
        steps=steps,
        final_answer=row["solution__final_answer"],
        verifier_score=row["verifier_score"],
        label_steps=orjson.loads(row["label_steps"]),
        total_time_ms=row["total_time_ms"],
        finish_reason=row["finish_reason"],
        # Records labeled in the app always take the phase-2 shape (DESIGN.md).
        phase2_shape=row["solution__is_pregenerated"] or not imported,
        shape=orjson.loads(row["shape"]) if imported and row["shape"] else None,
        kind=kind,
        language=row["solution__problem__language"],
        tests=row["solution__problem__tests"],
        step_types=step_types if kind == "trace" else None,
    )


def _agreement_by_solution(rows: list[dict[str, Any]]) -> dict[int, float]:
    shared = {row["solution_id"] for row in rows if row["solution__annotation_count"] > 1}
    if not shared:
        return {}
    ratings: dict[int, list[list[int | None]]] = defaultdict(list)
    siblings = Annotation.objects.filter(solution_id__in=shared).values_list("solution_id", "label_steps")
    for solution_id, label_steps in siblings:
        ratings[solution_id].append(main_line_ratings(json.loads(label_steps)))
    result: dict[int, float] = {}
    for solution_id, lists in ratings.items():
        value = pairwise_agreement(lists)
        if value is not None:
            result[solution_id] = value
    return result
