"""Reading automatic labels: beside human ones per solution (leads), and their agreement with people.

Agreement compares, for each human annotation of a solution that also has automatic labels, the
automatic labels (rollouts when the solution has them, else imported Math-Shepherd tags) with the
human main line up to the human's first error (steps after it were not rated: PRM800K phase 2):
- precision / recall of `-`: a true positive is an automatic `-` on the human's first-error step,
  a false positive an automatic `-` on a step the human rated +1, a false negative an automatic
  `+` on the human's first-error step (neutral and unrated human steps are left out);
- first-error agreement: the share of annotations whose first `-` step is the automatic first `-`
  step (both "no error" counts as agreeing).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from django.db.models import Count, Q, Sum

from annotate.models import Annotation, Project, Solution
from autolabel.agreement import compare
from autolabel.exporting import complete_solutions, observation_indexes
from autolabel.models import AutolabelJob, AutolabelSettings, AutoSource, AutoStepLabel
from prm800k.labels import main_line_ratings

AGREEMENT_SAMPLE = 5000  # latest human annotations compared


def auto_labels_by_solution(solution_ids: list[int]) -> dict[int, dict[str, list[int]]]:
    """solution id -> source -> labels in step order (complete sources only)."""
    found: dict[int, dict[str, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
    rows = AutoStepLabel.objects.filter(solution_id__in=solution_ids).values_list(
        "solution_id", "source", "index", "label"
    )
    for solution_id, source, index, label in rows:
        found[solution_id][source][index] = label
    n_steps = dict(Solution.objects.filter(pk__in=list(found)).values_list("id", "n_steps"))
    result: dict[int, dict[str, list[int]]] = {}
    for solution_id, sources in found.items():
        complete = {
            source: [labels[i] for i in range(n_steps[solution_id])]
            for source, labels in sources.items()
            if len(labels) == n_steps[solution_id]
        }
        if complete:
            result[solution_id] = complete
    return result


def preferred(sources: dict[str, list[int]]) -> list[int]:
    return sources.get(AutoSource.ROLLOUT) or sources[AutoSource.MATH_SHEPHERD]


def agreement(*, project: Project) -> dict[str, Any]:
    """The dashboard's automatic-label panel: coverage, jobs, budget and agreement with people."""
    labeled = AutoStepLabel.objects.filter(solution__project=project)
    by_source = dict(labeled.values("source").annotate(n=Count("solution", distinct=True)).values_list("source", "n"))
    counts = {"tp": 0, "fp": 0, "fn": 0, "first_error_agree": 0, "pairs": 0}
    annotations = list(
        Annotation.objects.filter(project=project, solution__auto_labels__isnull=False)
        .distinct()
        .order_by("-id")
        .values_list("solution_id", "label_steps")[:AGREEMENT_SAMPLE]
    )
    solution_ids = sorted({solution_id for solution_id, _ in annotations})
    autos = auto_labels_by_solution(solution_ids)
    # A trace's observations are shown, not rated: rollouts label them too, and an automatic first
    # `-` on one was a disagreement with the person's first -1 on the step after it. Both sides are
    # read without them, as labels=auto exports fold them into the next step (exporting.fold_unrated).
    unrated = {} if project.rate_observations else observation_indexes(solution_ids)
    for solution_id, label_steps in annotations:
        if solution_id not in autos:
            continue
        skip = unrated.get(solution_id, set())
        auto = [v for i, v in enumerate(preferred(autos[solution_id])) if i not in skip]
        human = [r for i, r in enumerate(main_line_ratings(json.loads(label_steps))) if i not in skip]
        pair = compare(auto, human)
        counts["pairs"] += 1
        for key in ("tp", "fp", "fn", "first_error_agree"):
            counts[key] += pair[key]
    tp, fp, fn, pairs = counts["tp"], counts["fp"], counts["fn"], counts["pairs"]
    budget = AutolabelSettings.objects.filter(project=project).first()
    latest = AutolabelJob.objects.filter(project=project).order_by("-id").first()
    totals = AutolabelJob.objects.filter(project=project).aggregate(completions=Sum("completions_used"))
    return {
        # each solution once: one rolled out after its Math-Shepherd line was imported has both sources
        "solutions_with_auto_labels": labeled.values("solution_id").distinct().count() if by_source else 0,
        # every step labeled: what labels=auto exports (a stopped job leaves others with a few labels)
        "solutions_complete": complete_solutions(project=project) if by_source else 0,
        "by_source": by_source,
        "negative_share": _negative_share(labeled),
        "pairs_compared": pairs,
        "precision_negative": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall_negative": round(tp / (tp + fn), 4) if tp + fn else None,
        "first_error_agreement": round(counts["first_error_agree"] / pairs, 4) if pairs else None,
        "counts": {"tp": tp, "fp": fp, "fn": fn},
        "budget": (
            {
                "completions_budget": budget.completions_budget,
                "completions_used": budget.completions_used,
                "disagreement_first": budget.disagreement_first,
            }
            if budget
            else None
        ),
        "completions_used": totals["completions"] or 0,
        "latest_job": job_summary(latest) if latest else None,
    }


def _negative_share(labeled) -> float | None:
    row = labeled.aggregate(n=Count("id"), neg=Count("id", filter=Q(label=-1)))
    return round(row["neg"] / row["n"], 4) if row["n"] else None


def jobs_of(*, project: Project, limit: int = 100) -> list[AutolabelJob]:
    """The project's autolabel jobs, newest first."""
    return list(AutolabelJob.objects.filter(project=project).order_by("-id")[:limit])


def job_by_id(*, job_id: int) -> AutolabelJob | None:
    return AutolabelJob.objects.select_related("project").filter(pk=job_id).first()


def solution_of(*, project: Project, solution_id: int) -> Solution | None:
    return Solution.objects.select_related("problem").filter(pk=solution_id, project=project).first()


def job_summary(job: AutolabelJob) -> dict[str, Any]:
    return {
        "id": job.pk,
        "status": job.status,
        "model": job.model,
        "solutions_done": job.solutions_done,
        "solutions_total": job.solutions_total,
        "completions_used": job.completions_used,
        "error": job.error,
    }


def solution_labels(*, solution: Solution) -> dict[str, Any]:
    """Each step's text, its human ratings (one per annotation) and its automatic labels by source;
    a trace's steps also their `type` (an observation is shown to annotators, rated only where the
    project says so: without it, its empty rating read as a step someone left unrated)."""
    steps = list(solution.steps.order_by("index").values_list("index", "text", "step_type"))
    humans = [
        {
            "annotation_id": a.pk,
            "labeler_uuid": a.labeler_uuid,
            "finish_reason": a.finish_reason,
            "ratings": main_line_ratings(json.loads(a.label_steps)),
        }
        for a in solution.annotations.order_by("id")
    ]
    auto: dict[int, dict[str, Any]] = defaultdict(dict)
    for label in solution.auto_labels.all():
        auto[label.index][label.source] = {
            "label": label.label,
            "estimate": label.estimate,
            "n_completions": label.n_completions,
            "n_correct": label.n_correct,
            "inferred": label.inferred,
        }
    return {
        "solution_id": solution.pk,
        "problem": solution.problem.text,
        "ground_truth_answer": solution.problem.ground_truth_answer,
        "final_answer": solution.final_answer,
        "answer_correct": solution.answer_correct,
        "human": humans,
        "steps": [
            {
                "index": index,
                **({"type": step_type} if step_type else {}),
                "text": text,
                "human": [h["ratings"][index] if index < len(h["ratings"]) else None for h in humans],
                "auto": auto.get(index, {}),
            }
            for index, text, step_type in steps
        ],
    }
