"""Exporting annotations as PRM800K records, streamed in id order with flat memory.

Keyset pagination (id > last id, LIMIT n) reads the annotations in chunks on any database, and
the steps of a chunk's solutions come in one query, so memory depends on the chunk, not the
project. The same iterator feeds the management command and the streaming API.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from annotate.models import Annotation, AnnotationSource, Project, Step
from annotate.services.prm800k import RecordParts, build_record, dumps_record, format_timestamp

CHUNK_SIZE = 1000

_FIELDS = (
    "id",
    "labeler_uuid",
    "source",
    "submitted_at",
    "timestamp_text",
    "generation",
    "is_quality_control",
    "is_screening",
    "verifier_score",
    "finish_reason",
    "total_time_ms",
    "label_steps",
    "shape",
    "solution_id",
    "solution__final_answer",
    "solution__is_pregenerated",
    "solution__problem__text",
    "solution__problem__ground_truth_answer",
    "solution__problem__ground_truth_solution",
)


def annotations_for_export(*, project: Project) -> QuerySet[Annotation]:
    return Annotation.objects.filter(project=project)


def iter_records(*, queryset: QuerySet[Annotation], chunk_size: int = CHUNK_SIZE) -> Iterator[tuple[int, dict]]:
    """Yield (annotation id, PRM800K record) in id order."""
    last_id = 0
    while True:
        rows = list(queryset.filter(id__gt=last_id).order_by("id").values(*_FIELDS)[:chunk_size])
        if not rows:
            return
        steps = _steps_by_solution({row["solution_id"] for row in rows})
        for row in rows:
            yield row["id"], build_record(_parts(row, steps.get(row["solution_id"], [])))
        last_id = rows[-1]["id"]


def iter_lines(*, queryset: QuerySet[Annotation], chunk_size: int = CHUNK_SIZE) -> Iterator[str]:
    """JSONL lines, each ending in a newline, in PRM800K's own encoding."""
    for _, record in iter_records(queryset=queryset, chunk_size=chunk_size):
        yield dumps_record(record) + "\n"


def _steps_by_solution(solution_ids: set[int]) -> dict[int, list[str]]:
    steps: dict[int, list[str]] = defaultdict(list)
    rows = Step.objects.filter(solution_id__in=solution_ids).order_by("solution_id", "index")
    for solution_id, text in rows.values_list("solution_id", "text"):
        steps[solution_id].append(text)
    return steps


def _parts(row: dict[str, Any], steps: list[str]) -> RecordParts:
    imported = row["source"] == AnnotationSource.IMPORT
    return RecordParts(
        labeler=row["labeler_uuid"],
        timestamp=row["timestamp_text"] or format_timestamp(row["submitted_at"]),
        generation=row["generation"],
        is_quality_control=row["is_quality_control"],
        is_screening=row["is_screening"],
        problem_text=row["solution__problem__text"],
        ground_truth_answer=row["solution__problem__ground_truth_answer"],
        ground_truth_solution=row["solution__problem__ground_truth_solution"],
        steps=steps,
        final_answer=row["solution__final_answer"],
        verifier_score=row["verifier_score"],
        label_steps=json.loads(row["label_steps"]),
        total_time_ms=row["total_time_ms"],
        finish_reason=row["finish_reason"],
        # Records labeled in the app always take the phase-2 shape (DESIGN.md).
        phase2_shape=row["solution__is_pregenerated"] or not imported,
        shape=json.loads(row["shape"]) if imported and row["shape"] else None,
    )
