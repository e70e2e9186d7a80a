"""Progress of a compare project's queue: pairs (comparisons) and preferences, not solutions.

A compare project serves pairs of solutions; its solutions are never served alone, so their counts
say nothing about how far the labeling has come. These figures count what the queue serves: pairs
answered / total, pairs open and the preferences they still need (overlap minus answers so far,
at least one for an open pair, as for solutions), and the ETA at the team's pace in preferences.
Gold pairs are quality control, not queue: they count in `preferences`, not in the pairs or the pace.
Computed afresh on every call (two aggregates over the project's comparisons and preferences).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, F, IntegerField, Q, Sum, Value
from django.db.models.functions import Greatest

from annotate.models import Comparison, Preference, Project, TaskKind
from annotate.selectors.stats.common import PACE_DAYS, labeling_time, pace_and_eta


def _pace_counts(*, project: Project, now: datetime) -> tuple[int, float]:
    """Queue preferences of the last PACE_DAYS and their labeling time, as for labels."""
    return labeling_time(
        Preference.objects.filter(
            project=project, is_gold=False, submitted_at__gt=now - timedelta(days=PACE_DAYS), submitted_at__lte=now
        )
    )


def pair_progress(*, project: Project, now: datetime) -> dict | None:
    """The pair counts of a compare project's progress; None for a steps project."""
    if project.task_kind != TaskKind.COMPARE:
        return None
    pairs = Comparison.objects.filter(project=project, is_gold=False).aggregate(
        total=Count("id"),
        answered=Count("id", filter=Q(annotation_count__gt=0)),
        open=Count("id", filter=Q(is_open=True)),
        remaining=Sum(
            Greatest(Value(project.overlap) - F("annotation_count"), Value(1), output_field=IntegerField()),
            filter=Q(is_open=True),
        ),
    )
    labels, active = _pace_counts(project=project, now=now)
    remaining = pairs["remaining"] or 0
    return {
        "pairs_total": pairs["total"],
        "pairs_answered": pairs["answered"],
        "pairs_open": pairs["open"],
        "pairs_complete": pairs["total"] - pairs["open"],
        "preferences": Preference.objects.filter(project=project).count(),
        "preferences_remaining": remaining,
        **pace_and_eta(labels=labels, active_seconds=active, remaining=remaining, now=now),
    }
