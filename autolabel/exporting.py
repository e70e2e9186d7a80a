"""`export/?format=math_shepherd&labels=auto|human`: Math-Shepherd lines from the database.

labels=auto: first every imported Math-Shepherd line, in import order, rebuilt from the problem,
its steps, the stored tags and the line's shape (byte for byte); then every solution fully labeled
by rollouts (hard labels) that has no imported line, in solution order.
labels=human needs no database of this app: prm800k.math_shepherd.human_lines turns the exported
PRM800K records into lines.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator

from django.db.models import Count, F, Q

from annotate.models import Project, Solution, Step
from autolabel.models import AutoSource, AutoStepLabel, MathShepherdRecord
from prm800k import math_shepherd
from prm800k.kinds import UNRATED_STEP_TYPES


def _steps(solution_ids: list[int]) -> dict[int, list[str]]:
    steps: dict[int, list[str]] = defaultdict(list)
    rows = Step.objects.filter(solution_id__in=solution_ids).order_by("solution_id", "index")
    for solution_id, text in rows.values_list("solution_id", "text"):
        steps[solution_id].append(text)
    return steps


def observation_indexes(solution_ids: list[int]) -> dict[int, set[int]]:
    """Per solution, the indexes of its trace observations (none for math and code)."""
    found: dict[int, set[int]] = defaultdict(set)
    rows = Step.objects.filter(solution_id__in=solution_ids, step_type__in=UNRATED_STEP_TYPES)
    for solution_id, index in rows.values_list("solution_id", "index"):
        found[solution_id].add(index)
    return found


def fold_unrated(steps: list[str], labels: list[int], unrated: set[int]) -> tuple[list[str], list[int]]:
    """A trace's observations shown but not rated open the next step's text, their own labels left
    out, as the human rows have them (prm800k.trl, prm800k.math_shepherd.human_ratings): rollouts
    label every step, and auto rows with observations of their own were not the human rows' steps."""
    texts: list[str] = []
    kept: list[int] = []
    context = ""
    for index, (text, label) in enumerate(zip(steps, labels, strict=True)):
        if index in unrated:
            context += text + "\n\n"
            continue
        texts.append(context + text)
        kept.append(label)
        context = ""
    return texts, kept


def _labels(solution_ids: list[int], source: str) -> dict[int, list[int]]:
    labels: dict[int, list[int]] = defaultdict(list)
    rows = AutoStepLabel.objects.filter(solution_id__in=solution_ids, source=source).order_by("solution_id", "index")
    for solution_id, value in rows.values_list("solution_id", "label"):
        labels[solution_id].append(value)
    return labels


def auto_lines(*, project: Project, chunk_size: int = 1000) -> Iterator[str]:
    for line in iter_auto(project=project, chunk_size=chunk_size):
        yield math_shepherd.dumps(line) + "\n"


def auto_trl_rows(*, project: Project, chunk_size: int = 1000) -> Iterator[str]:
    """TRL stepwise-supervision rows from automatic labels: every step with its label (as TRL's
    own Math-Shepherd conversion does), in the order of `auto_lines`."""
    for line in iter_auto(project=project, chunk_size=chunk_size):
        row = {"prompt": line.question, "completions": line.steps, "labels": [value > 0 for value in line.labels]}
        yield json.dumps(row, ensure_ascii=False) + "\n"


def iter_auto(*, project: Project, chunk_size: int = 1000) -> Iterator[math_shepherd.MathShepherdLine]:
    last = 0
    while True:
        rows = list(
            MathShepherdRecord.objects.filter(solution__project=project, id__gt=last)
            .order_by("id")
            .values("id", "solution_id", "task", "shape", "solution__problem__text")[:chunk_size]
        )
        if not rows:
            break
        ids = [row["solution_id"] for row in rows]
        steps, labels = _steps(ids), _labels(ids, AutoSource.MATH_SHEPHERD)
        for row in rows:
            line = math_shepherd.MathShepherdLine(
                question=row["solution__problem__text"],
                steps=steps[row["solution_id"]],
                labels=labels[row["solution_id"]],
                task=row["task"],
                shape=json.loads(row["shape"]) if row["shape"] else None,
            )
            yield line
        last = rows[-1]["id"]
    yield from _rollout_lines(project=project, chunk_size=chunk_size)


def complete_rollout_solutions(*, project: Project):
    """Solutions whose every step has a rollout label, and no imported line: what `labels=auto`
    exports besides the imported lines (a job that stopped leaves others partly labeled)."""
    return (
        Solution.objects.filter(project=project, math_shepherd__isnull=True)
        .annotate(n_auto=Count("auto_labels", filter=Q(auto_labels__source=AutoSource.ROLLOUT)))
        .filter(n_auto=F("n_steps"), n_steps__gt=0)
    )


def complete_solutions(*, project: Project) -> int:
    """Solutions `labels=auto` exports: imported Math-Shepherd lines and completely rolled-out ones."""
    imported = MathShepherdRecord.objects.filter(solution__project=project).count()
    return imported + complete_rollout_solutions(project=project).count()


def _rollout_lines(*, project: Project, chunk_size: int) -> Iterator[math_shepherd.MathShepherdLine]:
    """Solutions whose every step has a rollout label, and no imported line."""
    complete = complete_rollout_solutions(project=project)
    last = 0
    while True:
        rows = list(
            complete.filter(id__gt=last).order_by("id").values("id", "problem__text", "problem__subject")[:chunk_size]
        )
        if not rows:
            return
        ids = [row["id"] for row in rows]
        steps, labels = _steps(ids), _labels(ids, AutoSource.ROLLOUT)
        unrated = {} if project.rate_observations else observation_indexes(ids)
        for row in rows:
            texts, values = fold_unrated(steps[row["id"]], labels[row["id"]], unrated.get(row["id"], set()))
            if not texts:
                continue  # observations alone: no step a person would rate
            yield math_shepherd.MathShepherdLine(
                question=row["problem__text"], steps=texts, labels=values, task=row["problem__subject"]
            )
        last = ids[-1]
