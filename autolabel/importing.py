"""Math-Shepherd lines in `import_prm800k`: a solution plus automatic labels (source math_shepherd).

annotate.services.imports reads such lines with prm800k.parse.parse_math_shepherd_line and, after
it has ensured the batch's problems and solutions, calls `write_batch` through
annotate.services.auto_labels (registered by autolabel.apps). The labels go to
AutoStepLabel, never to Annotation: they are not human labels and the queue, statistics,
agreement and the PRM800K export never see them.
"""

from __future__ import annotations

import json
from typing import Any

from annotate.models import Project
from autolabel.models import AutoSource, AutoStepLabel, MathShepherdRecord
from core.bulk_insert import insert_rows
from prm800k.parse import ParsedSolution


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
