"""Shared pieces of the dashboard statistics: windows, user names, small helpers."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import QuerySet

HOURLY_BUCKETS = 48
DAILY_BUCKETS = 30
# Agreement and gold accuracy parse label JSON: bound how many labels they read.
AGREEMENT_SAMPLE_SOLUTIONS = 500
GOLD_SAMPLE_ANSWERS = 20_000
# Median times are taken over the most recent labels (the current pace, and a bounded sort).
MEDIAN_SAMPLE = 20_000
# The ETA's pace: queue labels of the last PACE_DAYS per hour of active labeling time.
PACE_DAYS = 7
# Fewer timed labels than this in the window give no ETA: one or two labels would be extrapolated
# to the whole queue.
MIN_PACE_LABELS = 3
IMPORTED = "(imported)"

logger = logging.getLogger("annotate.selectors.stats")


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def labeling_time(rows: QuerySet) -> tuple[int, float]:
    """(count, seconds of active labeling) of the timed rows (labels or preferences). Each row spans
    its total_time_ms (the workspace's active timer: idle and hidden time excluded) up to its
    submit; the spans are merged, so time in which several people labeled at once counts once and
    breaks not at all: the team's pace while it labels."""
    timed = rows.filter(total_time_ms__isnull=False).values_list("submitted_at", "total_time_ms")
    if _is_postgres():  # merged in the database: range_agg (PostgreSQL 14+) over tstzrange spans
        sql, params = timed.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT n, (SELECT COALESCE(SUM(EXTRACT(EPOCH FROM upper(s) - lower(s))), 0) FROM unnest(spans) AS s)
                    FROM (SELECT COUNT(*) AS n, range_agg(tstzrange(
                            submitted_at - total_time_ms * interval '1 millisecond', submitted_at)) AS spans
                        FROM ({sql}) AS timed) AS merged""",
                params,
            )
            n, seconds = cursor.fetchone()
        return n, float(seconds)
    spans = sorted((at - timedelta(milliseconds=ms), at) for at, ms in timed)
    seconds, covered = 0.0, None  # covered: the end of the merged spans so far
    for start, end in spans:
        start = max(start, covered or start)
        if end > start:
            seconds += (end - start).total_seconds()
            covered = end
    return len(spans), seconds


def pace_and_eta(*, labels: int, active_seconds: float, remaining: int, now: datetime) -> dict:
    """The queue's pace (timed labels of the last PACE_DAYS per hour of active labeling time, see
    labeling_time) and the ETA of the `remaining` labels at that pace; 0 h when nothing remains,
    None with too few labels (under MIN_PACE_LABELS) or no time recorded."""
    active_hours = active_seconds / 3600
    per_hour = labels / active_hours if active_hours else 0.0
    known = labels >= MIN_PACE_LABELS and per_hour > 0
    eta_hours = 0.0 if remaining == 0 else (remaining / per_hour if known else None)
    return {
        "pace": {
            "window_hours": PACE_DAYS * 24,
            "active_hours": active_hours,
            "labels": labels,
            "labels_per_hour": per_hour,
            "min_labels": MIN_PACE_LABELS,
        },
        "eta_hours": eta_hours,
        "eta_at": _iso(now + timedelta(hours=eta_hours)) if eta_hours is not None else None,
    }


def _gen_key(generation: int | None) -> tuple[int, int]:
    return (0, 0) if generation is None else (1, generation)


class _Names:
    """Usernames of annotators, fetched once for every user id any section mentions."""

    def __init__(self) -> None:
        self._cache: dict[int, str] = {}

    def load(self, ids) -> None:
        missing = {i for i in ids if i is not None and i not in self._cache}
        if missing:
            users = get_user_model().objects.filter(pk__in=missing).values_list("pk", "username")
            self._cache.update(dict(users))

    def __call__(self, user_id: int | None) -> str:
        return IMPORTED if user_id is None else self._cache.get(user_id, f"user {user_id}")


class _Windows:
    """The time windows of one stats call: pace (7 days), 48 hourly and 30 daily buckets (UTC)."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.week_ago = now - timedelta(days=7)
        self.hour0 = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=HOURLY_BUCKETS - 1)
        self.hour_end = self.hour0 + timedelta(hours=HOURLY_BUCKETS)
        self.day0 = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=DAILY_BUCKETS - 1)
        self.day_end = self.day0 + timedelta(days=DAILY_BUCKETS)
