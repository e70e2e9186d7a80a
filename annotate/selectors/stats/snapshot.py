"""Label aggregates in one scan, cached as a snapshot up to an id watermark and merged with the
labels added since; a stale snapshot is served while a worker rebuilds it."""

from __future__ import annotations

from datetime import UTC, datetime

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, F, IntegerField, Max, Q, Sum, Value
from django.db.models.functions import Greatest, TruncDay, TruncHour
from django.utils import timezone

from annotate.models import (
    Annotation,
    Project,
    Solution,
)
from annotate.selectors.stats.common import _is_postgres, _Windows, logger
from annotate.selectors.stats.throughput import _medians
from annotate.tasks import refresh_stats_snapshot
from core import jobs

_SUMS = (
    ("steps", "n_label_steps"),
    ("positive", "n_positive"),
    ("neutral", "n_neutral"),
    ("negative", "n_negative"),
    ("unrated", "n_unrated"),
    ("flagged", "n_flagged"),
    ("alternatives", "n_alternatives"),
)


_COUNTERS = tuple(name for name, _ in _SUMS)


def _bucket_row(row: dict, bucket: datetime) -> dict:
    return {
        "bucket": bucket.replace(tzinfo=UTC),
        "annotator_id": row["annotator_id"],
        "n": row["n"],
        "steps": row["steps"],
    }


def _scan(
    *, project: Project, labels, windows: _Windows, after: int | None = None, upto: int | None = None
) -> dict[str, list[dict]]:
    """Every label aggregate the dashboard needs, by grouping:

    - rollup: counters per (annotator, generation, finish reason), the last label, and the recent
      queue labels of the last 7 days that set the pace (gold and screening answers do not move the queue);
    - daily / hourly: labels and steps per (bucket, annotator) within the 30-day / 48-hour windows.

    On PostgreSQL one pass with GROUPING SETS over annotation_stats_idx (index-only: the counters
    are included columns, the wide label JSON rows are never read); elsewhere three queries.
    """
    w = windows
    if _is_postgres():
        sums = ", ".join(f"SUM({column}) AS {name}" for name, column in _SUMS)
        sql = f"""
            SELECT GROUPING(annotator_id, generation, finish_reason, day, hour) AS grouping,
                annotator_id, generation, finish_reason, day, hour, COUNT(*) AS n, {sums},
                MAX(submitted_at) AS last,
                COUNT(*) FILTER (WHERE queue AND submitted_at > %(week_ago)s) AS queue_week
            FROM (
                SELECT annotator_id, generation, finish_reason, submitted_at,
                    {", ".join(column for _, column in _SUMS)},
                    (NOT is_quality_control AND NOT is_screening AND submitted_at <= %(now)s) AS queue,
                    CASE WHEN submitted_at >= %(day0)s AND submitted_at < %(day_end)s
                        THEN date_trunc('day', submitted_at AT TIME ZONE 'UTC') END AS day,
                    CASE WHEN submitted_at >= %(hour0)s AND submitted_at < %(hour_end)s
                        THEN date_trunc('hour', submitted_at AT TIME ZONE 'UTC') END AS hour
                FROM {Annotation._meta.db_table}
                WHERE project_id = %(project)s AND NOT is_gold AND id > %(after)s AND id <= %(upto)s
            ) AS labels
            GROUP BY GROUPING SETS (
                (annotator_id, generation, finish_reason), (day, annotator_id), (hour, annotator_id)
            )
        """
        params = {
            "project": project.pk,
            "after": -1 if after is None else after,
            "upto": 2**62 if upto is None else upto,
            "now": w.now,
            "week_ago": w.week_ago,
            "day0": w.day0,
            "day_end": w.day_end,
            "hour0": w.hour0,
            "hour_end": w.hour_end,
        }
        out: dict[str, list[dict]] = {"rollup": [], "daily": [], "hourly": []}
        with transaction.atomic(), connection.cursor() as cursor:
            # Room to hash all three groupings in memory (a few MB) instead of sorting on disk.
            cursor.execute("SET LOCAL work_mem = '32MB'")
            cursor.execute(sql, params)
            columns = [c.name for c in cursor.description]
            for values in cursor.fetchall():
                row = dict(zip(columns, values, strict=True))
                # GROUPING bits (annotator, generation, finish, day, hour): 1 = not in this grouping.
                if row["grouping"] == 0b00011:
                    del row["grouping"], row["day"], row["hour"]
                    out["rollup"].append(row)
                elif row["grouping"] == 0b01101 and row["day"] is not None:
                    out["daily"].append(_bucket_row(row, row["day"]))
                elif row["grouping"] == 0b01110 and row["hour"] is not None:
                    out["hourly"].append(_bucket_row(row, row["hour"]))
        return out
    if after is not None:
        labels = labels.filter(id__gt=after)
    if upto is not None:
        labels = labels.filter(id__lte=upto)
    queue = Q(is_quality_control=False, is_screening=False, submitted_at__lte=w.now)
    rollup = (
        labels.values("annotator_id", "generation", "finish_reason")
        .annotate(
            n=Count("id"),
            **{name: Sum(column) for name, column in _SUMS},
            last=Max("submitted_at"),
            queue_week=Count("id", filter=queue & Q(submitted_at__gt=w.week_ago)),
        )
        .order_by()
    )

    def series(trunc, start: datetime, end: datetime) -> list[dict]:
        return list(
            labels.filter(submitted_at__gte=start, submitted_at__lt=end)
            .annotate(bucket=trunc("submitted_at", tzinfo=UTC))
            .values("bucket", "annotator_id")
            .annotate(n=Count("id"), steps=Sum("n_label_steps"))
            .order_by()
        )

    return {
        "rollup": list(rollup),
        "daily": series(TruncDay, w.day0, w.day_end),
        "hourly": series(TruncHour, w.hour0, w.hour_end),
    }


SNAPSHOT_SECONDS = 300  # older than this: served, and refreshed in the background
SNAPSHOT_MAX_AGE = 1800  # older than this (no worker refreshed it): rebuilt within the request
# Up to this many solutions their counts are taken afresh on every call (an index-only scan: ~45 ms
# at 20,000 on the shared 2-core machine under load), so they agree with the labels submitted since
# the snapshot; larger projects use the snapshot's.
FRESH_SOLUTIONS_MAX = 20_000


def _snapshot_key(project: Project) -> str:
    return f"stats-snapshot:v2:{project.pk}:{project.created_at.timestamp()}"


def build_snapshot(*, project: Project) -> dict:
    """Aggregate every label up to the current id watermark and cache it (also run by a task)."""
    labels = Annotation.objects.filter(project=project, is_gold=False)
    windows = _Windows(timezone.now())
    watermark = Annotation.objects.filter(project=project).aggregate(m=Max("id"))["m"] or 0
    snapshot = _scan(project=project, labels=labels, windows=windows, upto=watermark)
    snapshot["medians"] = _medians(labels=labels.filter(id__lte=watermark))
    snapshot["solutions"] = _solution_groups(project=project)
    snapshot["at"] = windows.now
    snapshot["watermark"] = watermark
    try:
        cache.set(_snapshot_key(project), snapshot, SNAPSHOT_MAX_AGE)
    except Exception:  # the cache (Redis) is down: the answer is still right, only slower
        logger.warning("stats snapshot of project %s not cached", project.pk, exc_info=True)
    return snapshot


def _cached_snapshot(project: Project) -> dict | None:
    try:
        return cache.get(_snapshot_key(project))
    except Exception:
        logger.warning("stats cache unreachable", exc_info=True)
        return None


def _refresh_in_background(project: Project) -> None:
    """Ask a worker to rebuild the snapshot, once per period (the `add` is the lock)."""

    try:
        if not cache.add(f"{_snapshot_key(project)}:refreshing", 1, SNAPSHOT_SECONDS):
            return
    except Exception:
        return
    jobs.send_task(refresh_stats_snapshot, project.pk)


def _label_aggregates(*, project: Project, labels, windows: _Windows, use_snapshot: bool) -> dict:
    """Label aggregates as a cached snapshot (all labels up to an id watermark) merged with a scan
    of the labels added since, which an index range on (project, id) finds at once. A snapshot
    older than SNAPSHOT_SECONDS is still served while a worker rebuilds it, so requests do not pay
    for the rebuild; only a missing one (or one past SNAPSHOT_MAX_AGE) is built in the request.
    New labels show immediately; a change to an older label shows once the snapshot is rebuilt
    (a lead's edit, gold marking or reopening asks a worker for that at once; a deletion waits),
    as does a label whose transaction committed after the snapshot under a lower id. Median times
    are those of the snapshot (`snapshot_at` in the answer), and so are the solution counts
    (progress by generation, queue composition) of a project with more than FRESH_SOLUTIONS_MAX
    solutions (`solutions_at`)."""
    if not use_snapshot:
        return {
            **_scan(project=project, labels=labels, windows=windows),
            "solutions": _solution_groups(project=project),
        }
    snapshot = _cached_snapshot(project)
    age = (windows.now - snapshot["at"]).total_seconds() if snapshot else None
    if snapshot is None or age > SNAPSHOT_MAX_AGE:
        snapshot = build_snapshot(project=project)
    elif age > SNAPSHOT_SECONDS:
        _refresh_in_background(project)
    delta = _scan(project=project, labels=labels, windows=windows, after=snapshot["watermark"])
    merged = {name: _merge(snapshot[name], delta[name], keys) for name, keys in _MERGE_KEYS.items()}
    solutions, solutions_at = snapshot["solutions"], snapshot["at"]
    if sum(row["total"] for row in solutions) <= FRESH_SOLUTIONS_MAX:
        solutions, solutions_at = _solution_groups(project=project), windows.now
    return {
        **merged,
        "medians": snapshot["medians"],
        "solutions": solutions,
        "at": snapshot["at"],
        "solutions_at": solutions_at,
    }


_MERGE_KEYS = {
    "rollup": ("annotator_id", "generation", "finish_reason"),
    "daily": ("bucket", "annotator_id"),
    "hourly": ("bucket", "annotator_id"),
}


def _merge(base: list[dict], extra: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """Add grouped rows of the same grouping: counts and sums add up, `last` is the latest."""
    if not extra:
        return base
    rows = {tuple(row[k] for k in keys): dict(row) for row in base}
    for row in extra:
        key = tuple(row[k] for k in keys)
        if key not in rows:
            rows[key] = dict(row)
            continue
        mine = rows[key]
        for name, value in row.items():
            if name in keys or value is None:
                continue
            if name == "last":
                mine["last"] = max(filter(None, (mine.get("last"), value)))
            elif isinstance(value, int):
                mine[name] = (mine.get(name) or 0) + value
    return list(rows.values())


def _solution_groups(*, project: Project) -> list[dict]:
    """Queue solutions (not gold, not screening) per (generation, strategy): an index-only scan of
    solution_stats_idx."""
    labeled = Q(annotation_count__gt=0)
    return list(
        Solution.objects.filter(project=project, is_gold=False, is_screening=False)
        .values("generation", "strategy")
        .annotate(
            total=Count("id"),
            steps=Sum("n_steps"),
            steps_open=Sum("n_steps", filter=Q(is_open=True)),
            labeled=Count("id", filter=labeled),
            open=Count("id", filter=Q(is_open=True)),
            # An open solution is served again, so it needs at least one more label even at or past
            # the overlap (a lead reopened it, or lowered the overlap).
            remaining=Sum(
                Greatest(Value(project.overlap) - F("annotation_count"), Value(1), output_field=IntegerField()),
                filter=Q(is_open=True),
            ),
            wrong=Count("id", filter=labeled & Q(answer_correct=False)),
            correct=Count("id", filter=labeled & Q(answer_correct=True)),
        )
        .order_by()
    )
