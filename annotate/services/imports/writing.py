"""The second pass of an import, only for a clean file: write problems, solutions, steps and labels
in batches inside one transaction (COPY on PostgreSQL), numbering labels for export as they go."""

from __future__ import annotations

import json
import queue
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import F

from annotate.models import Annotation, AnnotationSource, Problem, Project, Solution, Step, TaskKind
from annotate.queue_order import cold_start_queue
from annotate.services import auto_labels
from annotate.services.compare.pairs import build_pairs
from annotate.services.exports.sequence import lock_export_sequence
from annotate.services.imports.reading import (
    BATCH_BYTES,
    BATCH_SIZE,
    AnswerPair,
    ImportValidationError,
    LineError,
    ProgressCallback,
    T,
    _iter_parsed,
    open_jsonl,
    validate_file,
)
from core.bulk_insert import analyze, insert_rows
from core.signals import steps_imported
from prm800k.parse import ParsedSolution
from prm800k.records import dumps_label_steps
from prm800k.splits import math500_flag, text_sha256


@dataclass(slots=True)
class ImportResult:
    lines: int = 0
    records: int = 0
    problems_created: int = 0
    solutions_created: int = 0
    steps_created: int = 0
    annotations_created: int = 0
    duplicates: int = 0
    graded_correct: int = 0
    graded_wrong: int = 0
    ungradable: int = 0
    auto_labels_created: int = 0  # Math-Shepherd tags: automatic labels, never counted as annotations
    pairs_created: int | None = None  # compare projects only: new pairs of solutions of one problem

    @property
    def created_anything(self) -> bool:
        return bool(
            self.problems_created or self.solutions_created or self.annotations_created or self.auto_labels_created
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "lines": self.lines,
            "records": self.records,
            "problems_created": self.problems_created,
            "solutions_created": self.solutions_created,
            "steps_created": self.steps_created,
            "annotations_created": self.annotations_created,
            "duplicates": self.duplicates,
            "graded_correct": self.graded_correct,
            "graded_wrong": self.graded_wrong,
            "ungradable": self.ungradable,
            **({} if self.pairs_created is None else {"pairs_created": self.pairs_created}),
            "auto_labels_created": self.auto_labels_created,
        }


def import_file(
    *,
    project: Project,
    path: Path | str,
    validate_progress: ProgressCallback | None = None,
    write_progress: ProgressCallback | None = None,
    pairs_per_problem: int | None = None,
) -> ImportResult:
    """Validate and grade the whole file, then import it atomically. Raises ImportValidationError.
    In a compare project the same transaction pairs the solutions of each problem, up to
    `pairs_per_problem` pairs each (default: the project's bound, which every import keeps)."""
    path = Path(path)
    validated = validate_file(path=path, progress=validate_progress)
    result = ImportResult()
    with transaction.atomic():
        # Parsing runs in a thread while this one waits on the database, so the two overlap.
        # Labels are numbered for export as they are inserted. The numbering lock is held until
        # commit, so exports of this project wait for the import instead of numbering around it.
        numbers = count(lock_export_sequence(project=project) + 1)
        for batch in prefetch(_parsed_batches(path, write_progress), depth=2):
            _write_batch(project=project, batch=batch, result=result, numbers=numbers, verdicts=validated.verdicts)
        if project.task_kind == TaskKind.COMPARE:
            bound = project.pairs_per_problem if pairs_per_problem is None else pairs_per_problem
            result.pairs_created = build_pairs(project=project, per_problem=bound)
    if result.created_anything:
        analyze(Problem, Solution, Step, Annotation)
    if result.steps_created:
        steps_imported.send(sender=Project, project_id=project.pk)
    return result


def _parsed_batches(path: Path, progress: ProgressCallback | None) -> Iterator[list[ParsedSolution]]:
    """Batches of BATCH_SIZE solutions, or fewer when their lines pass BATCH_BYTES: 1,000 lines
    near the line limit would otherwise be gigabytes in memory (and prefetch holds two batches)."""
    read = 0

    def counted(n: int) -> None:
        nonlocal read
        read += n
        if progress:
            progress(n)

    with open_jsonl(path) as stream:
        batch: list[ParsedSolution] = []
        for number, item in _iter_parsed(stream, counted):
            if not isinstance(item, ParsedSolution):
                raise ImportValidationError([LineError(number, "(file)", "changed while importing")], 1)
            batch.append(item)
            if len(batch) >= BATCH_SIZE or read >= BATCH_BYTES:
                yield batch
                batch, read = [], 0
        if batch:
            yield batch


_DONE = object()


def prefetch(items: Iterator[T], *, depth: int) -> Iterator[T]:
    """Iterate `items` in a background thread, at most `depth` ahead; re-raise its errors here."""
    buffer: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        buffer.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            buffer.put(_DONE)
        except BaseException as exc:  # handed to the consumer, which raises it
            buffer.put(exc)

    thread = threading.Thread(target=produce, name="import-parser", daemon=True)
    thread.start()
    try:
        while True:
            item = buffer.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join(timeout=5)


def _write_batch(
    *,
    project: Project,
    batch: list[ParsedSolution],
    result: ImportResult,
    numbers: Iterator[int],
    verdicts: dict[AnswerPair, bool | None],
) -> None:
    result.lines += len(batch)
    result.records += sum(1 for p in batch if p.annotation is not None)
    problem_ids = _ensure_problems(project=project, batch=batch, result=result)
    solution_ids, created = _ensure_solutions(
        project=project, batch=batch, problem_ids=problem_ids, result=result, verdicts=verdicts
    )
    # A plain line only adds a solution: it is a duplicate when that solution was there already.
    for parsed in batch:
        if parsed.annotation is None:
            if parsed.solution_hash in created:
                created.discard(parsed.solution_hash)
            else:
                result.duplicates += 1
    _create_annotations(project=project, batch=batch, solution_ids=solution_ids, result=result, numbers=numbers)
    written = auto_labels.write_math_shepherd(project=project, batch=batch, solution_ids=solution_ids)
    result.auto_labels_created += written


def _ensure_problems(*, project: Project, batch: list[ParsedSolution], result: ImportResult) -> dict[str, int]:
    wanted: dict[str, ParsedSolution] = {}
    for parsed in batch:
        wanted.setdefault(parsed.problem_hash, parsed)  # the first line names the problem's source
    ids = dict(Problem.objects.filter(project=project, content_hash__in=list(wanted)).values_list("content_hash", "id"))
    new = [
        {
            "project_id": project.pk,
            "text": p.problem_text,
            "ground_truth_answer": p.ground_truth_answer,
            "ground_truth_solution": p.ground_truth_solution,
            "subject": p.subject,
            "level": p.level,
            "source_id": p.source_id,
            "content_hash": key,
            "text_hash": (text_hash := text_sha256(p.problem_text)),
            "is_math500": math500_flag(text_hash),
            "kind": p.kind,
            "language": p.language,
            "tests": p.tests,
        }
        for key, p in wanted.items()
        if key not in ids
    ]
    for row, pk in zip(new, insert_rows(Problem, new), strict=True):
        ids[row["content_hash"]] = pk
    result.problems_created += len(new)
    return ids


def _ensure_solutions(
    *,
    project: Project,
    batch: list[ParsedSolution],
    problem_ids: dict[str, int],
    result: ImportResult,
    verdicts: dict[AnswerPair, bool | None],
) -> tuple[dict[str, int], set[str]]:
    """Return the id of every solution in the batch, and the hashes created now."""
    wanted: dict[str, ParsedSolution] = {}
    for parsed in batch:
        wanted.setdefault(parsed.solution_hash, parsed)
    ids = dict(
        Solution.objects.filter(project=project, content_hash__in=list(wanted)).values_list("content_hash", "id")
    )
    new: list[dict[str, Any]] = []
    for key, parsed in wanted.items():
        if key in ids:
            continue
        verdict = verdicts.get((parsed.ground_truth_answer, parsed.final_answer))  # graded in the first pass
        if verdict is True:
            result.graded_correct += 1
        elif verdict is False:
            result.graded_wrong += 1
        else:
            result.ungradable += 1
        new.append(
            {
                "project_id": project.pk,
                "problem_id": problem_ids[parsed.problem_hash],
                "final_answer": parsed.final_answer,
                "answer_correct": verdict,
                "is_pregenerated": parsed.is_pregenerated,
                "is_quality_control": parsed.is_quality_control,
                "is_screening": parsed.is_screening,
                "content_hash": key,
                "n_steps": len(parsed.steps),
                "generation": parsed.annotation.generation if parsed.annotation else None,
                "verifier_score": parsed.annotation.verifier_score if parsed.annotation else None,
            }
        )
    # before any model the queue uses the graded answers (see annotate.queue_order) and routes a control share
    queue = cold_start_queue(
        [row["answer_correct"] for row in new],
        strategy=project.selection_strategy,
        control_share=project.control_share,
        lengths=[row["n_steps"] for row in new],
    )
    for row, (priority, origin) in zip(new, queue, strict=True):
        row["priority"] = priority
        row["strategy"] = origin
    steps: list[dict[str, Any]] = []
    for row, pk in zip(new, insert_rows(Solution, new), strict=True):
        ids[row["content_hash"]] = pk
        parsed = wanted[row["content_hash"]]
        types = parsed.step_types or [""] * len(parsed.steps)
        steps.extend(
            {"solution_id": pk, "index": i, "text": text, "step_type": step_type}
            for i, (text, step_type) in enumerate(zip(parsed.steps, types, strict=True))
        )
    insert_rows(Step, steps)
    created = {row["content_hash"] for row in new}
    result.solutions_created += len(created)
    result.steps_created += len(steps)
    return ids, created


def _create_annotations(
    *,
    project: Project,
    batch: list[ParsedSolution],
    solution_ids: dict[str, int],
    result: ImportResult,
    numbers: Iterator[int],
) -> None:
    labeled = [p for p in batch if p.annotation is not None]
    if not labeled:
        return
    hashes = [p.annotation.source_hash for p in labeled if p.annotation]
    existing = set(
        Annotation.objects.filter(project=project, source_hash__in=hashes).values_list("source_hash", flat=True)
    )
    new: list[dict[str, Any]] = []
    added: Counter[int] = Counter()
    for parsed in labeled:
        annotation = parsed.annotation
        assert annotation is not None
        if annotation.source_hash in existing:
            result.duplicates += 1
            continue
        existing.add(annotation.source_hash)  # the same record twice in one file counts once
        solution_id = solution_ids[parsed.solution_hash]
        added[solution_id] += 1
        new.append(
            {
                "project_id": project.pk,
                "solution_id": solution_id,
                "labeler_uuid": annotation.labeler,
                "source": AnnotationSource.IMPORT.value,
                "submitted_at": annotation.submitted_at,
                "timestamp_text": annotation.timestamp_text,
                "generation": annotation.generation,
                "is_quality_control": parsed.is_quality_control,
                "is_screening": parsed.is_screening,
                "verifier_score": annotation.verifier_score,
                "finish_reason": annotation.finish_reason,
                "total_time_ms": annotation.total_time_ms,
                "label_steps": dumps_label_steps(annotation.label_steps),
                "shape": json.dumps(annotation.shape) if annotation.shape else None,
                "source_hash": annotation.source_hash,
                "export_seq": next(numbers),
                **annotation.counters,
            }
        )
    insert_rows(Annotation, new)
    result.annotations_created += len(new)
    step_labels = sum(row["n_label_steps"] + row["n_alternatives"] for row in new)
    Project.objects.filter(pk=project.pk).update(step_labels_since_run=F("step_labels_since_run") + step_labels)
    # The team's rounds go on after the file's (as PRM800K's own rounds follow one another): a
    # project at round 0 importing OpenAI's round 6 labels next in round 7, so neither the
    # dashboard's rounds nor a `generation=6` export mixes our labels with theirs.
    top = max((row["generation"] for row in new if row["generation"] is not None), default=-1)
    if top >= 0:
        Project.objects.filter(pk=project.pk, current_generation__lte=top).update(current_generation=top + 1)
    if added:
        _add_annotation_counts(project=project, added=added)


def _add_annotation_counts(*, project: Project, added: Counter[int]) -> None:
    """Imported labels count toward overlap: a solution labeled `overlap` times leaves the queue."""
    by_increment: dict[int, list[int]] = defaultdict(list)
    for solution_id, n in added.items():
        by_increment[n].append(solution_id)
    for n, ids in by_increment.items():
        Solution.objects.filter(pk__in=ids).update(annotation_count=F("annotation_count") + n)
    Solution.objects.filter(pk__in=list(added), annotation_count__gte=F("extra_labels") + project.overlap).update(
        is_open=False
    )
