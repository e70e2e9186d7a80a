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

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Q
from django.utils import timezone

from annotate.models import Annotation, AnnotatorStatus, Project, ScreeningStatus
from prm800k.agreement import AgreementSummary, compare_with_gold, summarize


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


def decide_waiting_screenings(*, project: Project) -> int:
    """After a lead changes the screening rule: decide every pending annotator who has now answered
    enough (a lowered requirement), as their next screening submit would have. Without this one who
    had answered every screening question the project has stayed pending, served nothing, for good.
    Returns how many were decided."""
    if project.screening_required <= 0:
        return 0  # no screening: nobody is gated (annotate.services.queue), pending or not
    waiting = (
        AnnotatorStatus.objects.select_for_update()
        .filter(
            project=project,
            screening_status=ScreeningStatus.PENDING,
            screening_submitted__gte=project.screening_required,
        )
        .select_related("user")
        .order_by("pk")
    )
    decided = 0
    for status in waiting:
        decided += decide_screening(project=project, user=status.user, status=status).screening_status != (
            ScreeningStatus.PENDING
        )
    return decided
