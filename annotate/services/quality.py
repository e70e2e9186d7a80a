"""Quality control: agreement of an annotator's labels with gold labels, and screening decisions.

Gold labels are the annotations of a solution marked `is_gold` (imported trusted labels, or one a
lead marked in the admin). Agreement compares the main line of each step (the chosen completion,
else the first: PRM800K's own reading, see prm800k.main_line_completion):

- step accuracy: among step indexes both the annotator and the gold rated, the share with equal
  ratings (pooled over every compared solution, so long solutions weigh more, as in PRM800K's
  screening);
- first-error match: whether both put the first Negative step at the same index (both finding no
  error counts as a match).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotate.models import Annotation, AnnotatorStatus, Project, ScreeningStatus
from annotate.services.prm800k import main_line_completion


def main_line_ratings(steps: list[dict]) -> list[int | None]:
    """Main-line rating per step index (None where the step is unrated or has no completions)."""
    ratings: list[int | None] = []
    for step in steps:
        main = main_line_completion(step)
        ratings.append(main.get("rating") if main else None)
    return ratings


def first_error_index(ratings: list[int | None]) -> int | None:
    return next((i for i, rating in enumerate(ratings) if rating == -1), None)


@dataclass(frozen=True, slots=True)
class GoldComparison:
    steps_compared: int
    steps_matched: int
    first_error_match: bool

    @property
    def accuracy(self) -> float | None:
        return self.steps_matched / self.steps_compared if self.steps_compared else None


def compare_with_gold(*, steps: list[dict], gold_steps: list[dict]) -> GoldComparison:
    """Compare one annotation's `label.steps` with one gold annotation's `label.steps`."""
    mine = main_line_ratings(steps)
    gold = main_line_ratings(gold_steps)
    compared = matched = 0
    for rating, gold_rating in zip(mine, gold, strict=False):
        if rating is None or gold_rating is None:
            continue
        compared += 1
        matched += rating == gold_rating
    return GoldComparison(
        steps_compared=compared,
        steps_matched=matched,
        first_error_match=first_error_index(mine) == first_error_index(gold),
    )


@dataclass(frozen=True, slots=True)
class AgreementSummary:
    solutions_compared: int
    steps_compared: int
    steps_matched: int
    first_error_matches: int

    @property
    def accuracy(self) -> float | None:
        return self.steps_matched / self.steps_compared if self.steps_compared else None

    @property
    def first_error_rate(self) -> float | None:
        return self.first_error_matches / self.solutions_compared if self.solutions_compared else None


def summarize(comparisons: Iterable[GoldComparison]) -> AgreementSummary:
    solutions = steps = matched = first = 0
    for comparison in comparisons:
        solutions += 1
        steps += comparison.steps_compared
        matched += comparison.steps_matched
        first += comparison.first_error_match
    return AgreementSummary(solutions, steps, matched, first)


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


# ---------------------------------------------------------------------------------------------
# Inter-annotator agreement where overlap > 1 (for the dashboard's /stats/)
# ---------------------------------------------------------------------------------------------

ORDINAL_VALUES = (-1, 0, 1)


def krippendorff_alpha_ordinal(units: Iterable[list[int]]) -> float | None:
    """Krippendorff's alpha with the ordinal metric over rating values -1 < 0 < 1.

    `units`: for each rated item (one step of one solution) the ratings its annotators gave.
    Units with fewer than two ratings are not pairable and are ignored. None when no pairable
    unit exists or every rating has the same value (expected disagreement 0).
    Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", coincidence-matrix form.
    """
    index = {value: i for i, value in enumerate(ORDINAL_VALUES)}
    k = len(ORDINAL_VALUES)
    coincidences = [[0.0] * k for _ in range(k)]
    for ratings in units:
        values = [index[r] for r in ratings if r in index]
        m = len(values)
        if m < 2:
            continue
        for a in range(m):
            for b in range(m):
                if a != b:
                    coincidences[values[a]][values[b]] += 1 / (m - 1)
    totals = [sum(row) for row in coincidences]
    n = sum(totals)
    if n <= 1:
        return None

    def delta2(c: int, d: int) -> float:
        low, high = min(c, d), max(c, d)
        return (sum(totals[low : high + 1]) - (totals[low] + totals[high]) / 2) ** 2

    observed = sum(coincidences[c][d] * delta2(c, d) for c in range(k) for d in range(k)) / n
    expected = sum(totals[c] * totals[d] * delta2(c, d) for c in range(k) for d in range(k)) / (n * (n - 1))
    if expected == 0:
        return None
    return 1 - observed / expected


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
