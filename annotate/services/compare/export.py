"""`export/?format=preference`: TRL preference rows from a project's preferences, streamed in
keyset pages by export sequence (the steps of a page's solutions in one query)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator

from django.db.models import QuerySet

from annotate.models import Preference, Project, Step
from prm800k.preference import preference_row

CHUNK_SIZE = 500


def preferences_for_export(
    *,
    project: Project,
    ties: str = "exclude",
    qc: str = "include",
    labeler: str | None = None,
    split: str | None = None,
) -> QuerySet[Preference]:
    queryset = Preference.objects.filter(project=project)
    if ties == "exclude":
        queryset = queryset.exclude(preferred="tie")
    if qc == "exclude":
        queryset = queryset.filter(is_gold=False)
    elif qc == "only":
        queryset = queryset.filter(is_gold=True)
    if labeler:
        queryset = queryset.filter(labeler_uuid=labeler)
    if split == "test":
        queryset = queryset.filter(comparison__problem__is_math500=True)
    elif split == "train":
        queryset = queryset.filter(comparison__problem__is_math500=False)
    return queryset


def preference_lines(*, queryset: QuerySet[Preference], chunk_size=CHUNK_SIZE) -> Iterator[str]:
    """TRL rows of `queryset` (numbered preferences, from an export plan) in export order."""
    fields = ("export_seq", "preferred", "strength", "comparison__solution_a_id", "comparison__solution_b_id")
    last = 0
    while True:
        rows = list(
            queryset.filter(export_seq__gt=last)
            .order_by("export_seq")
            .values(*fields, "comparison__problem__text")[:chunk_size]
        )
        if not rows:
            return
        ids = {r["comparison__solution_a_id"] for r in rows} | {r["comparison__solution_b_id"] for r in rows}
        steps: dict[int, list[str]] = defaultdict(list)
        for solution_id, text in (
            Step.objects.filter(solution_id__in=ids).order_by("solution_id", "index").values_list("solution_id", "text")
        ):
            steps[solution_id].append(text)
        for row in rows:
            line = preference_row(
                prompt=row["comparison__problem__text"],
                steps_a=steps[row["comparison__solution_a_id"]],
                steps_b=steps[row["comparison__solution_b_id"]],
                preferred=row["preferred"],
                strength=row["strength"],
            )
            yield json.dumps(line, ensure_ascii=False) + "\n"
        last = rows[-1]["export_seq"]
