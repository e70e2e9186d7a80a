"""Quality: accuracy against gold, inter-annotator agreement, and the per-annotator table."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict

from django.db.models import Count, Q

from annotate.models import (
    Annotation,
    AnnotatorStatus,
    Preference,
    Project,
    ScreeningStatus,
    Solution,
    TaskKind,
)
from annotate.selectors.stats.common import AGREEMENT_SAMPLE_SOLUTIONS, GOLD_SAMPLE_ANSWERS, _iso, _Names, _ratio
from prm800k.agreement import compare_with_gold, krippendorff_alpha_ordinal, summarize
from prm800k.labels import main_line_ratings

# Gold answers an annotator has given before gold accuracy alone turns the row red.
MIN_GOLD_FOR_FLAG = 5


def _gold_accuracy(*, project: Project) -> dict[int, dict]:
    """Per annotator, agreement with gold over their most recent gold-question answers (batched)."""
    answers = list(
        Annotation.objects.filter(
            Q(is_quality_control=True) | Q(is_screening=True), project=project, is_gold=False, annotator__isnull=False
        )
        .order_by("-id")
        .values_list("annotator_id", "solution_id", "label_steps")[:GOLD_SAMPLE_ANSWERS]
    )
    if not answers:
        return {}
    gold: dict[int, list[list[dict]]] = defaultdict(list)
    for solution_id, label_steps in Annotation.objects.filter(
        project=project, is_gold=True, solution_id__in={sid for _, sid, _ in answers}
    ).values_list("solution_id", "label_steps"):
        gold[solution_id].append(json.loads(label_steps))
    comparisons = defaultdict(list)
    for uid, solution_id, label_steps in answers:
        if solution_id not in gold:
            continue
        steps = json.loads(label_steps)
        comparisons[uid].extend(compare_with_gold(steps=steps, gold_steps=g) for g in gold[solution_id])
    result = {}
    for uid, items in comparisons.items():
        summary = summarize(items)
        result[uid] = {
            "accuracy": summary.accuracy,
            "first_error_rate": summary.first_error_rate,
            "solutions": summary.solutions_compared,
        }
    return result


def _agreement(*, project: Project, labels) -> dict:
    """Krippendorff's alpha (ordinal) and first-error agreement over recent overlapping solutions.
    Screening questions stay out: everyone who applies answers them, those who fail included, and
    they are scored against their gold label on their own (the screening column)."""
    sample = list(
        Solution.objects.filter(project=project, annotation_count__gte=2, is_screening=False)
        .order_by("-id")
        .values_list("id", flat=True)[:AGREEMENT_SAMPLE_SOLUTIONS]
    )
    by_solution: dict[int, list[tuple[list[int | None], int | None]]] = defaultdict(list)
    if sample:
        rows = labels.filter(solution_id__in=sample).values_list("solution_id", "label_steps", "first_error_index")
        for solution_id, label_steps, first_error in rows:
            by_solution[solution_id].append((main_line_ratings(json.loads(label_steps)), first_error))
    units: list[list[int]] = []
    pairs = agreeing = compared = 0
    for items in by_solution.values():
        if len(items) < 2:
            continue
        compared += 1
        # One unit per step index: the ratings the solution's annotators gave it.
        for column in itertools.zip_longest(*(ratings for ratings, _ in items)):
            units.append([r for r in column if r is not None])
        for a in range(len(items)):
            for b in range(a + 1, len(items)):
                pairs += 1
                agreeing += items[a][1] == items[b][1]
    return {
        "overlap": project.overlap,
        "solutions_compared": compared,
        "sample_limit": AGREEMENT_SAMPLE_SOLUTIONS,
        "sampled": len(sample) >= AGREEMENT_SAMPLE_SOLUTIONS,
        "alpha": krippendorff_alpha_ordinal(units),
        "pairs": pairs,
        "first_error_agreement": _ratio(agreeing, pairs),
    }


# The screening status of an annotator in a project that asks for no screening.
NOT_REQUIRED = "not_required"


def _annotator_table(*, project: Project, per_annotator: dict[int | None, dict], names: _Names) -> list[dict]:
    statuses = {
        s["user_id"]: s
        for s in AnnotatorStatus.objects.filter(project=project).values(
            "user_id", "screening_status", "screening_agreement", "screening_submitted"
        )
    }
    gold = _gold_accuracy(project=project)
    # A compare project's work is its preferences: counted per annotator beside the step labels
    # (imported ones and first-wrong marks); None in a step project.
    preferences = (
        dict(
            Preference.objects.filter(project=project, annotator__isnull=False)
            .values("annotator")
            .annotate(n=Count("id"))
            .values_list("annotator", "n")
        )
        if project.task_kind == TaskKind.COMPARE
        else None
    )
    ids = set(per_annotator) | set(statuses) | set(preferences or ())
    names.load(ids)
    threshold = project.screening_threshold
    rows = []
    for uid in ids:
        mine = per_annotator.get(uid) or {"labels": 0, "steps": 0, "positive": 0, "neutral": 0, "negative": 0}
        rated = mine.get("positive", 0) + mine.get("neutral", 0) + mine.get("negative", 0)
        status = statuses.get(uid, {})
        acc = gold.get(uid, {})
        accuracy = acc.get("accuracy")
        screening = status.get("screening_status")
        if project.screening_required <= 0 and screening in (None, ScreeningStatus.PENDING):
            # Without screening nobody waits for it: "pending" would never resolve. A decided
            # outcome (screening was required once) stays.
            screening = NOT_REQUIRED
        # 1 of 2 gold answers wrong is no verdict on an annotator: the red row waits for a few
        judged = accuracy is not None and acc.get("solutions", 0) >= MIN_GOLD_FOR_FLAG
        below = (judged and accuracy < threshold) or screening == ScreeningStatus.FAILED
        rows.append(
            {
                "annotator": names(uid),
                "preferences": None if preferences is None else preferences.get(uid, 0),
                "labels": mine["labels"],
                "steps": mine.get("steps", 0),
                "positive_rate": _ratio(mine.get("positive", 0), rated),
                "neutral_rate": _ratio(mine.get("neutral", 0), rated),
                "negative_rate": _ratio(mine.get("negative", 0), rated),
                "flag_rate": _ratio(mine.get("flagged", 0), mine.get("steps", 0)),
                "median_seconds_per_solution": mine.get("median_seconds_per_solution"),
                "median_seconds_per_step": mine.get("median_seconds_per_step"),
                "last_label_at": _iso(mine.get("last")),
                "gold_accuracy": accuracy,
                "gold_first_error_rate": acc.get("first_error_rate"),
                "gold_solutions": acc.get("solutions", 0),
                "screening_status": screening,
                "screening_agreement": status.get("screening_agreement"),
                "below_threshold": below,
            }
        )
    rows.sort(key=lambda r: (-r["labels"], r["annotator"]))
    return rows


def _quality(*, project: Project, labels, per_annotator: dict[int | None, dict], names: _Names) -> dict:
    return {
        "threshold": project.screening_threshold,
        "flag_min_gold": MIN_GOLD_FOR_FLAG,
        # fewer screening questions than required: annotators who have not passed get nothing to label
        "screening_required": project.screening_required,
        "screening_questions": (
            Solution.objects.filter(project=project, is_screening=True).count() if project.screening_required else 0
        ),
        "annotators": _annotator_table(project=project, per_annotator=per_annotator, names=names),
        "agreement": _agreement(project=project, labels=labels),
    }
