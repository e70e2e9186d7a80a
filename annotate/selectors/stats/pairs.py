"""Progress of a compare project's queue: pairs (comparisons) and preferences, not solutions.

A compare project serves pairs of solutions; its solutions are never served alone, so their counts
say nothing about how far the labeling has come. These figures count what the queue serves: pairs
answered / total, pairs open and the preferences they still need (overlap minus answers so far,
at least one for an open pair, as for solutions), and the ETA at the team's pace in preferences.
Gold pairs are quality control, not queue: they count in `preferences`, not in the pairs or the pace.
Computed afresh on every call (two aggregates over the project's comparisons and preferences).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db.models import Count, F, IntegerField, Q, Sum, Value
from django.db.models.functions import Greatest, TruncHour

from annotate.models import Comparison, Preference, Project, TaskKind
from annotate.selectors.stats.common import PACE_DAYS, _iso


def _pace(*, project: Project, now: datetime) -> dict:
    """Queue preferences of the last PACE_DAYS per active hour (an hour with any), as for labels."""
    window = Preference.objects.filter(
        project=project, is_gold=False, submitted_at__gt=now - timedelta(days=PACE_DAYS), submitted_at__lte=now
    )
    n = window.count()
    active = window.annotate(hour=TruncHour("submitted_at", tzinfo=UTC)).values("hour").distinct().count() if n else 0
    return {
        "window_hours": PACE_DAYS * 24,
        "active_hours": active,
        "labels": n,
        "labels_per_hour": n / active if active else 0.0,
    }


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
    pace = _pace(project=project, now=now)
    remaining = pairs["remaining"] or 0
    per_hour = pace["labels_per_hour"]
    eta_hours = remaining / per_hour if per_hour else (0.0 if remaining == 0 else None)
    return {
        "pairs_total": pairs["total"],
        "pairs_answered": pairs["answered"],
        "pairs_open": pairs["open"],
        "pairs_complete": pairs["total"] - pairs["open"],
        "preferences": Preference.objects.filter(project=project).count(),
        "preferences_remaining": remaining,
        "pace": pace,
        "eta_hours": eta_hours,
        "eta_at": _iso(now + timedelta(hours=eta_hours)) if eta_hours is not None else None,
    }
