"""First-wrong-step marks of a comparison become step labels (issue 16: "a comparison can also yield
step labels").

A mark on a side says where that solution first goes wrong, so it reads as a PRM800K phase-2 label
that stopped at the first error: the steps before the mark +1, the marked step -1, nothing after
it, `finish_reason` found_error, and `total_time` the pair's time split between its marks (a
PRM800K reader expects a number there). Each marked side becomes one Annotation of that solution, by the
same annotator, stored in the same transaction as the preference; the project's PRM800K export
(`format=prm800k`) and its step statistics include it like any other label. A side without a mark
yields nothing: an unmarked solution was compared, not checked step by step. The label carries the
generation the pair was served in, and an annotator gets one label per solution: marking the same
solution again in another pair adds none (the first mark stands).

The annotation's `idempotency_key` is `compare:<preference id>:<A|B>` (pair terms: A = solution_a),
and its `preference` the preference itself. Keys share one space per annotator with the keys clients
send, so the API refuses a client key with this prefix (labeling_api.serializers_submit.KeyField).

A mark's label goes with its preference (Annotation.preference cascades): deleted in the admin, or
with its pair, the label leaves a tombstone as any deleted label does (exports.deletions) and its
solution counts it no more (below). A later mark of the same solution by the same annotator is not
made a label then: a deletion takes labels away, it never adds a record a consumer must pull.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import timedelta
from typing import Any

from django.db.models import F, Model, QuerySet
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from annotate.models import Annotation, AnnotationSource, FinishReason, Preference, Problem, Project, Solution, Step
from annotate.services.audit import release_label_counts
from prm800k.kinds import is_rated
from prm800k.labels import label_counters
from prm800k.records import dumps_label_steps

MARK_KEY_PREFIX = "compare:"


def marked_label_steps(
    step_texts: list[str], first_wrong: int, rated: list[bool] | None = None
) -> list[dict[str, Any]]:
    """PRM800K `label.steps` of a solution whose first wrong step is `first_wrong`. A step shown but
    not rated (`rated` False: a trace's observation where the project does not rate them) keeps
    rating null, as a step label submitted in the workspace stores it; the mark is never on one."""
    steps = []
    for index, text in enumerate(step_texts[: first_wrong + 1]):
        wrong = index == first_wrong
        shown_only = rated is not None and not rated[index] and not wrong
        steps.append(
            {
                "completions": [{"text": text, "rating": None if shown_only else -1 if wrong else 1, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if wrong else 0,  # phase 2: the pass ended at the error
            }
        )
    return steps


def record_marks(*, preference: Preference) -> list[Annotation]:
    """The step labels of a just-stored preference's marks (inside its transaction)."""
    comparison = preference.comparison
    marks = {
        side: (solution_id, index)
        for side, solution_id, index in (
            ("A", comparison.solution_a_id, preference.first_wrong_a),
            ("B", comparison.solution_b_id, preference.first_wrong_b),
        )
        if index is not None
    }
    if not marks:
        return []
    marked = [solution_id for solution_id, _ in marks.values()]
    texts: dict[int, list[str]] = defaultdict(list)
    rated: dict[int, list[bool]] = defaultdict(list)
    rate_observations = preference.project.rate_observations
    rows = Step.objects.filter(solution_id__in=marked).order_by("solution_id", "index")
    for solution_id, text, step_type in rows.values_list("solution_id", "text", "step_type"):
        texts[solution_id].append(text)
        rated[solution_id].append(is_rated(step_type, rate_observations=rate_observations))
    # One step label per solution and annotator, as a step project allows: a solution this annotator
    # already marked in another pair keeps its first mark (the later one stays on its preference).
    # The solution rows are locked first (in id order), so two of their pairs submitted at once by
    # the same annotator cannot both see "not yet marked".
    list(Solution.objects.select_for_update().filter(pk__in=marked).order_by("pk"))
    already = set(
        Annotation.objects.filter(solution_id__in=marked, annotator=preference.annotator).values_list(
            "solution_id", flat=True
        )
    )
    marks = {side: mark for side, mark in marks.items() if mark[0] not in already}
    # the round the pair was served in
    generation = preference.assignment.generation if preference.assignment is not None else None
    created = []
    times = _split(preference.total_time_ms, len(marks))
    for order, (side, (solution_id, index)) in enumerate(marks.items()):
        label_steps = marked_label_steps(texts[solution_id], index, rated[solution_id])
        created.append(
            Annotation.objects.create(
                project=preference.project,
                solution_id=solution_id,
                annotator=preference.annotator,
                labeler_uuid=preference.labeler_uuid,
                source=AnnotationSource.APP,
                # PRM800K records are keyed by (labeler, timestamp): the second mark of one answer is
                # a microsecond later, so the two labels never share a key
                submitted_at=preference.submitted_at + timedelta(microseconds=order),
                generation=generation,
                is_gold=False,
                finish_reason=FinishReason.FOUND_ERROR,
                total_time_ms=times[order],
                label_steps=dumps_label_steps(label_steps),
                idempotency_key=f"{MARK_KEY_PREFIX}{preference.pk}:{side}",
                preference=preference,
                **label_counters(label_steps),
            )
        )
    # a marked solution is labeled, as an imported or submitted label counts it (the dashboard's
    # "solutions labeled" and wrong-answer share read this count); pairs are queued by their own
    Solution.objects.filter(pk__in=[s for s, _ in marks.values()]).update(annotation_count=F("annotation_count") + 1)
    return created


def _split(total: int, parts: int) -> list[int]:
    """`total` in `parts` whole shares that add up to it (the first ones a unit larger)."""
    share, rest = divmod(total, parts) if parts else (0, 0)
    return [share + (i < rest) for i in range(parts)]


@receiver(pre_delete, sender=Annotation, dispatch_uid="annotate.mark_label_released")
def _mark_label_deleted(sender: type[Model], instance: Annotation, origin: Any = None, **kwargs: Any) -> None:
    # A mark's label going with its preference (that preference, its pair, or the pair's other
    # solution deleted): its solution counts it no more, as record_marks counted it. One deleted on
    # its own is released by its admin (AuditedDeletesMixin.releases); with its problem or project
    # there is no solution left to count it.
    going = origin.model if isinstance(origin, QuerySet) else type(origin)
    if instance.preference_id is not None and going not in (Annotation, Problem, Project):
        release_label_counts(solutions=Counter({instance.solution_id: 1}))
