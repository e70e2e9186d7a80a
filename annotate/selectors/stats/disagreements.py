"""Where annotators disagree: the solutions behind the dashboard's first-error agreement figure.

The agreement figure says how often two labels of one solution put the first error at the same
step; a lead acting on it needs the solutions where they did not, to read them and settle them
(mark the right label gold, or reopen the solution for another label). Same sample as the figure:
the most recent AGREEMENT_SAMPLE_SOLUTIONS solutions with two labels or more, screening questions
and gold labels left out.
"""

from __future__ import annotations

from collections import defaultdict

from django.utils.text import Truncator

from annotate.models import Annotation, Project, Solution
from annotate.selectors.stats.common import AGREEMENT_SAMPLE_SOLUTIONS, _iso, _Names

DISAGREEMENTS_SHOWN = 50


def disagreements(*, project: Project, limit: int = DISAGREEMENTS_SHOWN) -> dict:
    """The sampled solutions whose labels differ on the first error, most recently labeled first:
    each with its labels (annotator, first error as a 1-based step or None, finish reason, when)."""
    sample = list(
        Solution.objects.filter(project=project, annotation_count__gte=2, is_screening=False)
        .order_by("-id")
        .values_list("id", flat=True)[:AGREEMENT_SAMPLE_SOLUTIONS]
    )
    labels: dict[int, list[dict]] = defaultdict(list)
    rows = (
        Annotation.objects.filter(project=project, is_gold=False, solution_id__in=sample)
        .order_by("solution_id", "submitted_at", "id")
        .values_list("solution_id", "annotator_id", "first_error_index", "finish_reason", "submitted_at")
    )
    for solution_id, annotator_id, first_error, finish_reason, submitted_at in rows:
        labels[solution_id].append(
            {
                "annotator_id": annotator_id,
                "first_error_step": None if first_error is None else first_error + 1,
                "finish_reason": finish_reason,
                "submitted_at": submitted_at,
            }
        )
    split = {sid: items for sid, items in labels.items() if len({i["first_error_step"] for i in items}) > 1}
    newest = sorted(split, key=lambda sid: max(i["submitted_at"] for i in split[sid]), reverse=True)[:limit]
    solutions = {
        s["id"]: s
        for s in Solution.objects.filter(pk__in=newest).values("id", "problem__text", "n_steps", "answer_correct")
    }
    names = _Names()
    names.load(i["annotator_id"] for sid in newest for i in split[sid])
    return {
        "solutions_compared": sum(1 for items in labels.values() if len(items) > 1),
        "disagreeing": len(split),
        "sample_limit": AGREEMENT_SAMPLE_SOLUTIONS,
        "shown": [
            {
                "solution": sid,
                "problem": Truncator(solutions[sid]["problem__text"]).chars(140),
                "n_steps": solutions[sid]["n_steps"],
                "answer_correct": solutions[sid]["answer_correct"],
                "labels": [
                    {
                        "annotator": names(i["annotator_id"]),
                        "first_error_step": i["first_error_step"],
                        "finish_reason": i["finish_reason"],
                        "submitted_at": _iso(i["submitted_at"]),
                    }
                    for i in split[sid]
                ],
            }
            for sid in newest
        ],
    }
