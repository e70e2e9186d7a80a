"""Quality control: agreement of an annotator's labels with gold labels, and screening decisions.

Gold labels are the annotations of a solution marked `is_gold` (imported trusted labels, or one a
lead marked in the admin). Agreement compares the main line of each step (the chosen completion,
else the first: PRM800K's own reading, see prm800k.labels.main_line_completion):

- step accuracy: among step indexes both the annotator and the gold rated, the share with equal
  ratings (pooled over every compared solution, so long solutions weigh more, as in PRM800K's
  screening);
- first-error match: whether both put the first Negative step at the same index (both finding no
  error counts as a match).
"""

from __future__ import annotations

import json
from collections import defaultdict

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotate.models import Annotation, AnnotatorStatus, Project, ScreeningStatus
from prm800k.agreement import AgreementSummary, compare_with_gold, krippendorff_alpha_ordinal, summarize
from prm800k.labels import main_line_ratings


def gold_agreement(*, project: Project, user: AbstractBaseUser, screening: bool | None = None) -> AgreementSummary:
    """Agreement of `user` with gold over their quality-control and/or screening annotations.

    screening=True: screening answers only; False: gold (QC) answers only; None: both. A solution
    with several gold annotations is compared with each of them.
    """
    kinds = Q(is_screening=True) if screening else Q(is_quality_control=True)
    if screening is None:
        kinds = Q(is_screening=True) | Q(is_quality_control=True)
    answers = list(
        Annotation.objects.filter(kinds, project=project, annotator=user, is_gold=False).values_list(
            "solution_id", "label_steps"
        )
    )
    if not answers:
        return summarize([])
    gold_by_solution: dict[int, list[list[dict]]] = {}
    for solution_id, label_steps in Annotation.objects.filter(
        project=project, is_gold=True, solution_id__in={solution_id for solution_id, _ in answers}
    ).values_list("solution_id", "label_steps"):
        gold_by_solution.setdefault(solution_id, []).append(json.loads(label_steps))
    comparisons = []
    for solution_id, label_steps in answers:
        steps = json.loads(label_steps)
        for gold_steps in gold_by_solution.get(solution_id, []):
            comparisons.append(compare_with_gold(steps=steps, gold_steps=gold_steps))
    return summarize(comparisons)


def decide_screening(*, project: Project, user: AbstractBaseUser, status: AnnotatorStatus) -> AnnotatorStatus:
    """Pass or fail `user` once they have submitted the project's required screening answers.

    The caller holds `status` locked. With no gold to compare against (a lead flagged screening
    solutions but marked no gold labels) nobody can be judged, so the annotator passes.
    """
    if status.screening_status != ScreeningStatus.PENDING or status.screening_submitted < project.screening_required:
        return status
    summary = gold_agreement(project=project, user=user, screening=True)
    accuracy = summary.accuracy
    passed = accuracy is None or accuracy >= project.screening_threshold
    status.screening_status = ScreeningStatus.PASSED if passed else ScreeningStatus.FAILED
    status.screening_agreement = accuracy
    status.screening_decided_at = timezone.now()
    status.save(update_fields=["screening_status", "screening_agreement", "screening_decided_at", "updated_at"])
    return status


def project_agreement(*, project: Project) -> dict:
    """Agreement among annotators of the same solutions, and each annotator's rates.

    - alpha: Krippendorff's alpha (ordinal) over main-line step ratings of solutions labeled by
      two or more annotators (non-gold annotations);
    - first_error_agreement: among pairs of annotations of one solution, the share that put the
      first Negative step at the same index (both none counts as agreeing);
    - annotators: per labeler, labels, neutral rate (of rated steps), flag rate (of labeled
      steps) and accuracy against gold where they answered gold or screening questions.
    """
    annotations = Annotation.objects.filter(project=project, is_gold=False)
    per_annotator = (
        annotations.values("labeler_uuid", "annotator_id")
        .annotate(
            labels=Count("id"),
            steps=Sum("n_label_steps"),
            neutral=Sum("n_neutral"),
            positive=Sum("n_positive"),
            negative=Sum("n_negative"),
            flagged=Sum("n_flagged"),
        )
        .order_by("labeler_uuid")
    )
    shared = annotations.filter(solution__annotation_count__gte=2).values_list(
        "solution_id", "label_steps", "first_error_index"
    )
    by_solution: dict[int, list[tuple[list[int | None], int | None]]] = defaultdict(list)
    for solution_id, label_steps, first_error in shared.iterator():
        by_solution[solution_id].append((main_line_ratings(json.loads(label_steps)), first_error))
    units: list[list[int]] = []
    pairs = agreeing_pairs = 0
    for labels in by_solution.values():
        if len(labels) < 2:
            continue
        longest = max(len(ratings) for ratings, _ in labels)
        for i in range(longest):
            units.append([ratings[i] for ratings, _ in labels if i < len(ratings) and ratings[i] is not None])
        for a in range(len(labels)):
            for b in range(a + 1, len(labels)):
                pairs += 1
                agreeing_pairs += labels[a][1] == labels[b][1]
    users = get_user_model().objects.in_bulk([row["annotator_id"] for row in per_annotator if row["annotator_id"]])
    rows = []
    for row in per_annotator:
        rated = (row["positive"] or 0) + (row["neutral"] or 0) + (row["negative"] or 0)
        user = users.get(row["annotator_id"])
        gold = gold_agreement(project=project, user=user) if user is not None else summarize([])
        rows.append(
            {
                "labeler": row["labeler_uuid"],
                "labels": row["labels"],
                "neutral_rate": (row["neutral"] or 0) / rated if rated else None,
                "flag_rate": (row["flagged"] or 0) / row["steps"] if row["steps"] else None,
                "gold_accuracy": gold.accuracy,
                "gold_first_error_rate": gold.first_error_rate,
                "gold_solutions": gold.solutions_compared,
            }
        )
    return {
        "solutions_with_overlap": sum(1 for labels in by_solution.values() if len(labels) >= 2),
        "alpha": krippendorff_alpha_ordinal(units),
        "first_error_agreement": agreeing_pairs / pairs if pairs else None,
        "annotators": rows,
    }
