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
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Q
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
