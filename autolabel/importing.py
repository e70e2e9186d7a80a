"""Math-Shepherd lines in `import_prm800k`: a solution plus automatic labels (source math_shepherd).

annotate.services.imports calls `parse_line` for lines with `input`/`label` keys and
`write_batch` after it has ensured the batch's problems and solutions. The labels go to
AutoStepLabel, never to Annotation: they are not human labels and the queue, statistics,
agreement and the PRM800K export never see them.
"""

from __future__ import annotations

import json
from typing import Any

from annotate.models import Project
from autolabel.models import AutoSource, AutoStepLabel, MathShepherdRecord
from core.bulk_insert import insert_rows
from prm800k import math_shepherd
from prm800k.parse import ParsedSolution
from prm800k.schema import RecordError

is_math_shepherd = math_shepherd.is_math_shepherd


def parse_line(obj: Any, *, raw: bytes) -> ParsedSolution:
    """Raise RecordError (path, message) for a bad line; `raw` is the line as read."""
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


def write_batch(*, project: Project, batch: list[ParsedSolution], solution_ids: dict[str, int]) -> int:
    """Store the Math-Shepherd lines of a batch whose solutions have no line yet; return labels created."""
    lines = {parsed.solution_hash: parsed.auto for parsed in batch if parsed.auto is not None}
    if not lines:
        return 0
    ids = {key: solution_ids[key] for key in lines}
    existing = set(
        MathShepherdRecord.objects.filter(solution_id__in=list(ids.values())).values_list("solution_id", flat=True)
    )
    records: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    for key, line in lines.items():
        solution_id = ids[key]
        if solution_id in existing:
            continue  # the same line again (or the same solution twice in this file): kept once
        existing.add(solution_id)
        records.append(
            {
                "solution_id": solution_id,
                "task": line.task[:100],
                "shape": json.dumps(line.shape) if line.shape else None,
            }
        )
        labels.extend(
            {"solution_id": solution_id, "index": i, "source": AutoSource.MATH_SHEPHERD.value, "label": value}
            for i, value in enumerate(line.labels)
        )
    insert_rows(MathShepherdRecord, records)
    insert_rows(AutoStepLabel, labels)
    return len(labels)
