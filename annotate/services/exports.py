"""Exporting annotations as PRM800K records or TRL stepwise-supervision rows, streamed.

Order and cursors: every annotation gets an `export_seq` the first time an export runs after it
committed (one serialized UPDATE per project). Rows committed later get larger numbers, so an
export that returns "everything up to seq N" plus a cursor for N never skips a label that was
still in flight, and never repeats one. Reading is keyset-paginated by that sequence, and the
steps of a chunk's solutions come in one query, so memory depends on the chunk, not the project.
"""

from __future__ import annotations

import gzip
import json
import os
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core import signing
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotate.models import Annotation, AnnotationSource, Export, Project, Step
from annotate.tasks import run_export
from core import jobs
from core.models import JobStatus
from prm800k.agreement import pairwise_agreement
from prm800k.labels import main_line_ratings
from prm800k.records import RecordParts, build_record, dumps_record
from prm800k.schema import FINISH_REASONS, format_timestamp
from prm800k.trl import trl_rows

CHUNK_SIZE = 1000
FORMATS = ("prm800k", "trl", "math_shepherd")
LABEL_SOURCES = ("human", "auto")  # math_shepherd: human annotations, or automatic labels (autolabel app)
TRISTATE = ("include", "exclude", "only")
_CURSOR_SALT = "steplabel.export.cursor"

_FIELDS = (
    "id",
    "export_seq",
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
    "solution__annotation_count",
    "solution__final_answer",
    "solution__is_pregenerated",
    "solution__problem__text",
    "solution__problem__ground_truth_answer",
    "solution__problem__ground_truth_solution",
)


class ExportOptionError(ValueError):
    """A bad export option; `field` names it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass(slots=True)
class ExportOptions:
    format: str = "prm800k"
    generation: list[int] = field(default_factory=list)
    since: int = 0  # decoded cursor: export_seq already delivered
    labeler: str | None = None
    qc: str = "include"
    screening: str = "include"
    finish_reason: list[str] = field(default_factory=list)
    split: str | None = None
    min_agreement: float | None = None
    neutral: str = "positive"  # trl: how a neutral (0) rating maps
    alternatives: str = "branch"  # trl: rated alternatives as their own rows, or dropped
    include_history: bool = False  # prm800k: a top-level "history" key (annotate.services.audit)
    labels: str = "human"  # math_shepherd: human labels, or automatic ones (`auto`: imported lines byte for byte)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExportOptions:
        return cls(**data)


# ---------------------------------------------------------------------------------------------
# Options and cursors
# ---------------------------------------------------------------------------------------------


def encode_cursor(*, project: Project, seq: int) -> str:
    """Opaque and tamper-evident: a signed (project, position) pair."""
    return signing.dumps([project.pk, seq], salt=_CURSOR_SALT, compress=True)


def decode_cursor(*, project: Project, cursor: str) -> int:
    try:
        project_id, seq = signing.loads(cursor, salt=_CURSOR_SALT)
    except (signing.BadSignature, ValueError, TypeError):
        raise ExportOptionError("since", "not a cursor returned by an earlier export") from None
    if project_id != project.pk or not isinstance(seq, int) or seq < 0:
        raise ExportOptionError("since", "this cursor belongs to another project")
    return seq


def parse_options(*, project: Project, params: dict[str, Any]) -> ExportOptions:
    """Validate export options from a query string or JSON body; raise ExportOptionError."""

    def one(name: str) -> str | None:
        value = params.get(name)
        if isinstance(value, list):
            value = value[-1] if value else None
        if value is None or value == "":
            return None
        return str(value)

    def many(name: str) -> list[str]:
        value = params.get(name)
        items = value if isinstance(value, list) else [value] if value not in (None, "") else []
        return [part.strip() for item in items for part in str(item).split(",") if part.strip()]

    def choice(name: str, allowed: tuple[str, ...], default: str) -> str:
        value = one(name) or default
        if value not in allowed:
            raise ExportOptionError(name, f"must be one of {', '.join(allowed)}, got {value!r}")
        return value

    options = ExportOptions(
        format=choice("format", FORMATS, "prm800k"),
        qc=choice("qc", TRISTATE, "include"),
        screening=choice("screening", TRISTATE, "include"),
        neutral=choice("neutral", ("positive", "negative", "drop"), "positive"),
        alternatives=choice("alternatives", ("branch", "drop"), "branch"),
        labels=choice("labels", LABEL_SOURCES, "human"),
    )
    if options.labels == "auto" and options.format != "math_shepherd":
        raise ExportOptionError("labels", "automatic labels export only with format=math_shepherd")
    for item in many("generation"):
        try:
            options.generation.append(int(item))
        except ValueError:
            raise ExportOptionError("generation", f"must be integers, got {item!r}") from None
    for item in many("finish_reason"):
        if item not in FINISH_REASONS:
            raise ExportOptionError("finish_reason", f"must be among {', '.join(FINISH_REASONS)}, got {item!r}")
        options.finish_reason.append(item)
    history = (one("include_history") or "false").lower()
    if history not in ("true", "false", "1", "0"):
        raise ExportOptionError("include_history", f"must be true or false, got {history!r}")
    options.include_history = history in ("true", "1")
    if options.include_history and options.format != "prm800k":
        raise ExportOptionError("include_history", "only the prm800k format carries the history")
    split = one("split")
    if split is not None and split not in ("train", "test"):
        raise ExportOptionError("split", f"must be train or test, got {split!r}")
    options.split = split
    labeler = one("labeler")
    if labeler is not None and len(labeler) > 64:
        raise ExportOptionError("labeler", "must be a labeler UUID")
    options.labeler = labeler
    since = one("since")
    if since is not None:
        options.since = decode_cursor(project=project, cursor=since)
    min_agreement = one("min_agreement")
    if min_agreement is not None:
        try:
            options.min_agreement = float(min_agreement)
        except ValueError:
            raise ExportOptionError("min_agreement", f"must be a number in [0, 1], got {min_agreement!r}") from None
        if not 0.0 <= options.min_agreement <= 1.0:
            raise ExportOptionError("min_agreement", f"must be a number in [0, 1], got {min_agreement!r}")
    return options


# ---------------------------------------------------------------------------------------------
# Export sequence
# ---------------------------------------------------------------------------------------------


def lock_export_sequence(*, project: Project) -> int:
    """Take the project's export-numbering lock until the transaction ends; return the highest number.

    Whoever hands out export numbers holds it: exports stamping new labels, and imports, which
    number their labels as they insert them (so a big import needs no UPDATE pass afterwards).
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [72_001, project.pk])
        table = Annotation._meta.db_table
        cursor.execute(f"SELECT COALESCE(MAX(export_seq), 0) FROM {table} WHERE project_id = %s", [project.pk])
        return cursor.fetchone()[0]


def stamp_export_sequence(*, project: Project) -> int:
    """Number the committed, not-yet-numbered annotations in id order; return the highest number.

    Serialized per project (an advisory lock on PostgreSQL; SQLite serializes writers itself), so
    numbers are handed out in the order rows become visible.
    """
    with transaction.atomic():
        base = lock_export_sequence(project=project)
        table = Annotation._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {table} SET export_seq = numbered.seq
                FROM (
                    SELECT id, %s + ROW_NUMBER() OVER (ORDER BY id) AS seq
                    FROM {table} WHERE project_id = %s AND export_seq IS NULL
                ) AS numbered
                WHERE {table}.id = numbered.id
                """,
                [base, project.pk],
            )
            if cursor.rowcount:
                cursor.execute(f"SELECT MAX(export_seq) FROM {table} WHERE project_id = %s", [project.pk])
                return cursor.fetchone()[0]
            return base


# ---------------------------------------------------------------------------------------------
# Selecting and serializing
# ---------------------------------------------------------------------------------------------


def annotations_for_export(*, project: Project, options: ExportOptions | None = None) -> QuerySet[Annotation]:
    options = options or ExportOptions()
    queryset = Annotation.objects.filter(project=project)
    if options.generation:
        queryset = queryset.filter(generation__in=options.generation)
    if options.labeler:
        queryset = queryset.filter(labeler_uuid=options.labeler)
    if options.finish_reason:
        queryset = queryset.filter(finish_reason__in=options.finish_reason)
    for name, column in (("qc", "is_quality_control"), ("screening", "is_screening")):
        mode = getattr(options, name)
        if mode == "exclude":
            queryset = queryset.filter(**{column: False})
        elif mode == "only":
            queryset = queryset.filter(**{column: True})
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
    queryset: QuerySet[Annotation]
    until: int
    cursor: str


def plan_export(*, project: Project, options: ExportOptions) -> ExportPlan:
    until = stamp_export_sequence(project=project)
    queryset = annotations_for_export(project=project, options=options).filter(
        export_seq__gt=options.since, export_seq__lte=until
    )
    return ExportPlan(
        project=project,
        options=options,
        queryset=queryset,
        until=until,
        cursor=encode_cursor(project=project, seq=until),
    )


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
        steps = _steps_by_solution({row["solution_id"] for row in rows})
        agreement = _agreement_by_solution(rows) if min_agreement is not None else {}
        if min_agreement is not None:
            rows_out = [row for row in rows if agreement.get(row["solution_id"], 1.0) >= min_agreement]
        else:
            rows_out = rows
        history = history_by_annotation([row["id"] for row in rows_out]) if with_history else {}
        for row in rows_out:
            record = build_record(_parts(row, steps.get(row["solution_id"], [])))
            if with_history:
                record["history"] = history.get(row["id"], [])
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
    if options.format == "math_shepherd":
        from autolabel import exporting  # automatic labels live in their own app

        if options.labels == "auto":
            yield from exporting.auto_lines(project=plan.project, chunk_size=chunk_size)
        else:
            yield from exporting.human_lines(records, neutral=options.neutral)
    elif options.format == "trl":
        for record in records:
            for row in trl_rows(record, neutral=options.neutral, alternatives=options.alternatives):
                yield json.dumps(row, ensure_ascii=False) + "\n"
    else:
        for record in records:
            yield dumps_record(record) + "\n"


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


END_KEY = "steplabel_export_end"


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
        label_steps=orjson.loads(row["label_steps"]),
        total_time_ms=row["total_time_ms"],
        finish_reason=row["finish_reason"],
        # Records labeled in the app always take the phase-2 shape (DESIGN.md).
        phase2_shape=row["solution__is_pregenerated"] or not imported,
        shape=orjson.loads(row["shape"]) if imported and row["shape"] else None,
    )


# ---------------------------------------------------------------------------------------------
# Agreement between annotators of one solution (overlap > 1)
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Export jobs
# ---------------------------------------------------------------------------------------------


EXPORT_RUNNING_DEADLINE = timedelta(hours=2)


def sweep_stale_exports(*, stale_after: timedelta | None = None) -> int:
    """Re-send exports that never reached a worker; retry ones whose worker died (core.jobs)."""
    return jobs.requeue_stale(
        model=Export,
        task=run_export,
        created_after=timedelta(minutes=1),
        running_after=EXPORT_RUNNING_DEADLINE if stale_after is None else stale_after,
    )


def export_dir() -> Path:
    path = Path(settings.MEDIA_ROOT) / "exports"
    path.mkdir(parents=True, exist_ok=True)
    return path


@transaction.atomic
def create_export_job(*, project: Project, user, options: ExportOptions, gzip_output: bool) -> Export:
    export = Export.objects.create(
        project=project,
        requested_by=user,
        format=options.format,
        filters={**options.as_dict(), "gzip": gzip_output},
    )
    jobs.enqueue_on_commit(run_export, export.pk)  # a broker outage leaves it `created` for the sweep
    return export


def run_export_job(*, export_id: int) -> None:
    """Write the export's file beside its final name, then rename: never a half file marked done."""
    # Only a `created` row is claimed: a redelivered message for a running job returns quietly,
    # and the sweep puts a job whose worker died back to `created` after its deadline.
    if not jobs.claim(Export, export_id, error=""):
        return  # gone, or already finished: tasks are idempotent
    export = Export.objects.select_related("project").get(pk=export_id)
    filters = dict(export.filters)
    gzip_output = bool(filters.pop("gzip", False))
    options = ExportOptions.from_dict(filters)
    suffix = ".jsonl.gz" if gzip_output else ".jsonl"
    # A random part keeps names unguessable and unique even if ids repeat (a recreated database).
    final = export_dir() / f"export-{export.pk}-{export.project.slug}-{options.format}-{uuid.uuid4().hex[:12]}{suffix}"
    partial = final.with_name(final.name + ".partial")
    try:
        plan = plan_export(project=export.project, options=options)
        count = 0
        opener = gzip.open if gzip_output else open
        with opener(partial, "wt", encoding="utf-8") as handle:
            for line in iter_lines(plan=plan):
                handle.write(line)
                count += 1
                if count % 10_000 == 0:
                    Export.objects.filter(pk=export.pk).update(record_count=count)
        os.replace(partial, final)
        Export.objects.filter(pk=export.pk).update(
            status=JobStatus.SUCCEEDED,
            file_path=str(final),
            record_count=count,
            byte_size=final.stat().st_size,
            finished_at=timezone.now(),
            filters={**export.filters, "cursor": plan.cursor},
        )
    except Exception as exc:
        partial.unlink(missing_ok=True)
        Export.objects.filter(pk=export.pk).update(
            status=JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        raise
