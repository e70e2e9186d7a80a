"""The numbers behind the lead's dashboard (`GET /api/v1/projects/{slug}/stats/`).

Everything is aggregated in the database over indexed columns and the per-annotation counters
(n_label_steps, n_positive, ...), in a fixed, small number of queries whatever the project's
size. Only inter-annotator agreement and gold accuracy read label JSON, and they read a bounded
sample of the most recent overlapping / gold-question labels, reported as such.

"Labels" are annotations that are not gold references (`is_gold=False`): the work annotators
did, including their answers to quality-control and screening questions. The queue counts only
ordinary solutions (not gold, not screening).
"""

from __future__ import annotations

import itertools
import json
import logging
import statistics
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, F, IntegerField, Max, Q, Sum, Value
from django.db.models.functions import Greatest, TruncDay, TruncHour
from django.utils import timezone

from annotate.models import (
    Annotation,
    AnnotatorStatus,
    FinishReason,
    Project,
    ScreeningStatus,
    Solution,
)
from annotate.tasks import refresh_stats_snapshot
from core import jobs
from prm800k.agreement import compare_with_gold, krippendorff_alpha_ordinal, summarize
from prm800k.labels import main_line_ratings

HOURLY_BUCKETS = 48
DAILY_BUCKETS = 30
# Agreement and gold accuracy parse label JSON: bound how many labels they read.
AGREEMENT_SAMPLE_SOLUTIONS = 500
GOLD_SAMPLE_ANSWERS = 20_000
# Median times are taken over the most recent labels (the current pace, and a bounded sort).
MEDIAN_SAMPLE = 20_000
# The ETA's pace: queue labels of the last PACE_DAYS per active hour.
PACE_DAYS = 7
IMPORTED = "(imported)"

logger = logging.getLogger(__name__)


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _gen_key(generation: int | None) -> tuple[int, int]:
    return (0, 0) if generation is None else (1, generation)


def project_stats(*, project: Project, now: datetime | None = None) -> dict:
    """The dashboard's numbers. With `now` omitted (the API), label aggregates come from a cached
    snapshot plus the labels submitted since (see _label_aggregates); with `now` given, everything
    is computed afresh as of that moment."""
    use_snapshot = now is None
    now = now or timezone.now()
    labels = Annotation.objects.filter(project=project, is_gold=False)
    names = _Names()
    windows = _Windows(now)
    scan = _label_aggregates(project=project, labels=labels, windows=windows, use_snapshot=use_snapshot)
    progress = _progress(project=project, rollup=scan["rollup"], groups=scan["solutions"], now=now)
    label_summary, per_annotator = _label_breakdown(rollup=scan["rollup"], progress=progress)
    throughput = _throughput(scan=scan, windows=windows, labels=labels, names=names, per_annotator=per_annotator)
    quality = _quality(project=project, labels=labels, per_annotator=per_annotator, names=names)
    return {
        "project": {
            "slug": project.slug,
            "name": project.name or project.slug,
            "overlap": project.overlap,
            "labeling_mode": project.labeling_mode,
            "selection_strategy": project.selection_strategy,
            "screening_threshold": project.screening_threshold,
            "current_generation": project.current_generation,
            "retrain_every": project.retrain_every,
        },
        "generated_at": now.isoformat(),
        "snapshot_at": _iso(scan.get("at")) or now.isoformat(),
        "progress": {k: v for k, v in progress.items() if not k.startswith("_")},
        "throughput": throughput,
        "labels": label_summary,
        "quality": quality,
        "queue": {
            "selection_strategy": project.selection_strategy,
            "open_by_strategy": progress["_open_by_strategy"],
        },
    }


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


def _snapshot_key(project: Project) -> str:
    return f"stats-snapshot:v1:{project.pk}:{project.created_at.timestamp()}"


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
    New labels show immediately; a change to an older label (a lead's edit, a deletion) shows once
    the snapshot is rebuilt, as does a label whose transaction committed after the snapshot under
    a lower id. Median times and the solution counts (progress by generation, queue composition)
    are those of the snapshot (`snapshot_at` in the answer)."""
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
    return {**merged, "medians": snapshot["medians"], "solutions": snapshot["solutions"], "at": snapshot["at"]}


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
            labeled=Count("id", filter=labeled),
            open=Count("id", filter=Q(is_open=True)),
            remaining=Sum(
                Greatest(Value(project.overlap) - F("annotation_count"), Value(0), output_field=IntegerField()),
                filter=Q(is_open=True),
            ),
            wrong=Count("id", filter=labeled & Q(answer_correct=False)),
            correct=Count("id", filter=labeled & Q(answer_correct=True)),
        )
        .order_by()
    )


def _active_hours(*, project: Project, since: datetime, now: datetime) -> int:
    """Distinct UTC hours in (since, now] with a queue label: a range of annotation_stats_idx,
    at most PACE_DAYS * 24 groups."""
    return (
        Annotation.objects.filter(
            project=project,
            is_gold=False,
            is_quality_control=False,
            is_screening=False,
            submitted_at__gt=since,
            submitted_at__lte=now,
        )
        .annotate(hour=TruncHour("submitted_at", tzinfo=UTC))
        .values("hour")
        .distinct()
        .count()
    )


def _progress(*, project: Project, rollup: list[dict], groups: list[dict], now: datetime) -> dict:
    """Solutions labeled / total by generation, steps labeled, and the ETA at the current pace."""
    by_gen: dict[int | None, dict] = {}
    by_strategy: dict[str, int] = defaultdict(int)
    totals = defaultdict(int)
    for row in groups:
        gen = by_gen.setdefault(
            row["generation"],
            {"generation": row["generation"], "solutions": 0, "labeled": 0, "open": 0, "labels": 0, "steps_labeled": 0},
        )
        for key in ("solutions", "labeled", "open"):
            gen[key] += row["total" if key == "solutions" else key]
        for key in ("total", "steps", "labeled", "open", "remaining", "wrong", "correct"):
            totals[key] += row[key] or 0
        if row["open"]:
            by_strategy[row["strategy"] or "unscored"] += row["open"]
    labels_total = steps_labeled = week = 0
    for row in rollup:
        gen = by_gen.setdefault(
            row["generation"],
            {"generation": row["generation"], "solutions": 0, "labeled": 0, "open": 0, "labels": 0, "steps_labeled": 0},
        )
        gen["labels"] += row["n"]
        gen["steps_labeled"] += row["steps"] or 0
        labels_total += row["n"]
        steps_labeled += row["steps"] or 0
        week += row["queue_week"]

    # Pace: queue labels of the last 7 days per *active* hour (an hour in which any was submitted),
    # so a team that labeled 6 in its first 4 minutes reads 6/h, not 6 spread over the whole day.
    active = _active_hours(project=project, since=now - timedelta(days=PACE_DAYS), now=now) if week else 0
    per_hour = week / active if active else 0.0
    remaining = totals["remaining"]
    eta_hours = remaining / per_hour if per_hour else (0.0 if remaining == 0 else None)
    return {
        "solutions_total": totals["total"],
        "solutions_labeled": totals["labeled"],
        "solutions_open": totals["open"],
        "solutions_complete": totals["total"] - totals["open"],
        "labels_remaining": remaining,
        "steps_total": totals["steps"],
        "steps_labeled": steps_labeled,
        "labels": labels_total,
        "by_generation": sorted(by_gen.values(), key=lambda g: _gen_key(g["generation"])),
        "pace": {
            "window_hours": PACE_DAYS * 24,
            "active_hours": active,
            "labels": week,
            "labels_per_hour": per_hour,
        },
        "eta_hours": eta_hours,
        "eta_at": _iso(now + timedelta(hours=eta_hours)) if eta_hours is not None else None,
        "_open_by_strategy": [
            {"strategy": s, "open": n} for s, n in sorted(by_strategy.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "_wrong": totals["wrong"],
        "_correct": totals["correct"],
    }


def _label_breakdown(*, rollup: list[dict], progress: dict) -> tuple[dict, dict[int | None, dict]]:
    """Rating distribution, finish reasons, flags and per-annotator totals from the rollup."""
    total = dict.fromkeys(_COUNTERS, 0)
    finish = dict.fromkeys(FinishReason.values, 0)
    per_annotator: dict[int | None, dict] = {}
    for row in rollup:
        mine = per_annotator.setdefault(row["annotator_id"], {"labels": 0, "last": None, **dict.fromkeys(_COUNTERS, 0)})
        mine["labels"] += row["n"]
        mine["last"] = max(filter(None, (mine["last"], row["last"])), default=None)
        for key in _COUNTERS:
            total[key] += row[key] or 0
            mine[key] += row[key] or 0
        finish[row["finish_reason"]] = finish.get(row["finish_reason"], 0) + row["n"]
    labeled = progress["solutions_labeled"]
    wrong, correct = progress["_wrong"], progress["_correct"]
    summary = {
        "ratings": {k: total[k] for k in ("positive", "neutral", "negative", "unrated")},
        "steps": total["steps"],
        "flagged": total["flagged"],
        "flag_rate": _ratio(total["flagged"], total["steps"]),
        "alternatives": total["alternatives"],
        "finish_reasons": finish,
        "wrong_answer": {
            "labeled_solutions": labeled,
            "wrong": wrong,
            "correct": correct,
            "ungraded": labeled - wrong - correct,
            "share": _ratio(wrong, labeled),
        },
    }
    return summary, per_annotator


def _series(*, rows: list[dict], start: datetime, n: int, step: timedelta, names: _Names) -> dict:
    buckets = [start + step * i for i in range(n)]
    index = {b: i for i, b in enumerate(buckets)}
    overall = [0] * n
    steps = [0] * n
    per_user: dict[int | None, list[int]] = {}
    for row in rows:
        i = index.get(row["bucket"])
        if i is None:
            continue
        overall[i] += row["n"]
        steps[i] += row["steps"] or 0
        per_user.setdefault(row["annotator_id"], [0] * n)[i] += row["n"]
    names.load(per_user)
    return {
        "buckets": [b.isoformat() for b in buckets],
        "labels": overall,
        "steps": steps,
        "by_annotator": sorted(
            ({"annotator": names(uid), "labels": counts} for uid, counts in per_user.items()),
            key=lambda r: (-sum(r["labels"]), r["annotator"]),
        ),
    }


def _medians(*, labels) -> tuple[dict[str, float | None], dict[int | None, dict[str, float | None]]]:
    """Median seconds per solution and per step over the latest MEDIAN_SAMPLE labels, overall and
    per annotator (an annotator with no label among them has none)."""
    recent = (
        labels.filter(total_time_ms__isnull=False, n_label_steps__gt=0)
        .order_by("-submitted_at")
        .values_list("annotator_id", "total_time_ms", "n_label_steps")[:MEDIAN_SAMPLE]
    )
    if _is_postgres():
        # One pass over the sample, both groupings: per annotator, and () for everyone.
        sql, params = recent.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT annotator_id, GROUPING(annotator_id) = 1,
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY total_time_ms),
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY total_time_ms::float8 / n_label_steps)
                    FROM ({sql}) AS timed GROUP BY GROUPING SETS ((annotator_id), ())""",
                params,
            )
            rows = cursor.fetchall()
        overall = {"solution": None, "step": None}
        per_user = {}
        for uid, is_total, solution, step in rows:
            if is_total:
                overall = {"solution": solution, "step": step}
            else:
                per_user[uid] = {"solution": solution, "step": step}
    else:
        by_user: dict[int | None, list[tuple[int, int]]] = defaultdict(list)
        for uid, ms, n in recent:
            by_user[uid].append((ms, n))

        def med(pairs: list[tuple[int, int]]) -> dict[str, float | None]:
            if not pairs:
                return {"solution": None, "step": None}
            return {
                "solution": statistics.median(ms for ms, _ in pairs),
                "step": statistics.median(ms / n for ms, n in pairs),
            }

        overall = med([p for pairs in by_user.values() for p in pairs])
        per_user = {uid: med(pairs) for uid, pairs in by_user.items()}

    def seconds(ms: float | None) -> float | None:
        return round(ms / 1000, 3) if ms is not None else None

    convert = lambda m: {"solution": seconds(m["solution"]), "step": seconds(m["step"])}  # noqa: E731
    return convert(overall), {uid: convert(m) for uid, m in per_user.items()}


def _throughput(
    *, scan: dict[str, list[dict]], windows: _Windows, labels, names: _Names, per_annotator: dict[int | None, dict]
) -> dict:
    hourly = _series(rows=scan["hourly"], start=windows.hour0, n=HOURLY_BUCKETS, step=timedelta(hours=1), names=names)
    daily = _series(rows=scan["daily"], start=windows.day0, n=DAILY_BUCKETS, step=timedelta(days=1), names=names)
    overall, per_user = scan.get("medians") or _medians(labels=labels)
    for uid, row in per_annotator.items():
        row["median_seconds_per_solution"] = per_user.get(uid, {}).get("solution")
        row["median_seconds_per_step"] = per_user.get(uid, {}).get("step")
    last_24h = sum(hourly["labels"][-24:])
    return {
        "hourly": hourly,
        "daily": daily,
        "labels_last_24h": last_24h,
        "median_seconds_per_solution": overall["solution"],
        "median_seconds_per_step": overall["step"],
    }


def _gold_accuracy(*, project: Project) -> dict[int, dict]:
    """Per annotator, agreement with gold over their most recent gold-question answers (batched)."""
    answers = list(
        Annotation.objects.filter(
            Q(is_quality_control=True) | Q(is_screening=True), project=project, is_gold=False, annotator__isnull=False
        )
        .order_by("-id")
        .values_list("annotator_id", "solution_id", "label_steps")[:GOLD_SAMPLE_ANSWERS]
    )
    if not answers:
        return {}
    gold: dict[int, list[list[dict]]] = defaultdict(list)
    for solution_id, label_steps in Annotation.objects.filter(
        project=project, is_gold=True, solution_id__in={sid for _, sid, _ in answers}
    ).values_list("solution_id", "label_steps"):
        gold[solution_id].append(json.loads(label_steps))
    comparisons = defaultdict(list)
    for uid, solution_id, label_steps in answers:
        if solution_id not in gold:
            continue
        steps = json.loads(label_steps)
        comparisons[uid].extend(compare_with_gold(steps=steps, gold_steps=g) for g in gold[solution_id])
    result = {}
    for uid, items in comparisons.items():
        summary = summarize(items)
        result[uid] = {
            "accuracy": summary.accuracy,
            "first_error_rate": summary.first_error_rate,
            "solutions": summary.solutions_compared,
        }
    return result


def _agreement(*, project: Project, labels) -> dict:
    """Krippendorff's alpha (ordinal) and first-error agreement over recent overlapping solutions."""
    sample = list(
        Solution.objects.filter(project=project, annotation_count__gte=2)
        .order_by("-id")
        .values_list("id", flat=True)[:AGREEMENT_SAMPLE_SOLUTIONS]
    )
    by_solution: dict[int, list[tuple[list[int | None], int | None]]] = defaultdict(list)
    if sample:
        rows = labels.filter(solution_id__in=sample).values_list("solution_id", "label_steps", "first_error_index")
        for solution_id, label_steps, first_error in rows:
            by_solution[solution_id].append((main_line_ratings(json.loads(label_steps)), first_error))
    units: list[list[int]] = []
    pairs = agreeing = compared = 0
    for items in by_solution.values():
        if len(items) < 2:
            continue
        compared += 1
        # One unit per step index: the ratings the solution's annotators gave it.
        for column in itertools.zip_longest(*(ratings for ratings, _ in items)):
            units.append([r for r in column if r is not None])
        for a in range(len(items)):
            for b in range(a + 1, len(items)):
                pairs += 1
                agreeing += items[a][1] == items[b][1]
    return {
        "overlap": project.overlap,
        "solutions_compared": compared,
        "sample_limit": AGREEMENT_SAMPLE_SOLUTIONS,
        "sampled": len(sample) >= AGREEMENT_SAMPLE_SOLUTIONS,
        "alpha": krippendorff_alpha_ordinal(units),
        "pairs": pairs,
        "first_error_agreement": _ratio(agreeing, pairs),
    }


def _annotator_table(*, project: Project, per_annotator: dict[int | None, dict], names: _Names) -> list[dict]:
    statuses = {
        s["user_id"]: s
        for s in AnnotatorStatus.objects.filter(project=project).values(
            "user_id", "screening_status", "screening_agreement", "screening_submitted"
        )
    }
    gold = _gold_accuracy(project=project)
    ids = set(per_annotator) | set(statuses)
    names.load(ids)
    threshold = project.screening_threshold
    rows = []
    for uid in ids:
        mine = per_annotator.get(uid) or {"labels": 0, "steps": 0, "positive": 0, "neutral": 0, "negative": 0}
        rated = mine.get("positive", 0) + mine.get("neutral", 0) + mine.get("negative", 0)
        status = statuses.get(uid, {})
        acc = gold.get(uid, {})
        accuracy = acc.get("accuracy")
        screening = status.get("screening_status")
        below = (accuracy is not None and accuracy < threshold) or screening == ScreeningStatus.FAILED
        rows.append(
            {
                "annotator": names(uid),
                "labels": mine["labels"],
                "steps": mine.get("steps", 0),
                "positive_rate": _ratio(mine.get("positive", 0), rated),
                "neutral_rate": _ratio(mine.get("neutral", 0), rated),
                "negative_rate": _ratio(mine.get("negative", 0), rated),
                "flag_rate": _ratio(mine.get("flagged", 0), mine.get("steps", 0)),
                "median_seconds_per_solution": mine.get("median_seconds_per_solution"),
                "median_seconds_per_step": mine.get("median_seconds_per_step"),
                "last_label_at": _iso(mine.get("last")),
                "gold_accuracy": accuracy,
                "gold_first_error_rate": acc.get("first_error_rate"),
                "gold_solutions": acc.get("solutions", 0),
                "screening_status": screening,
                "screening_agreement": status.get("screening_agreement"),
                "below_threshold": below,
            }
        )
    rows.sort(key=lambda r: (-r["labels"], r["annotator"]))
    return rows


def _quality(*, project: Project, labels, per_annotator: dict[int | None, dict], names: _Names) -> dict:
    return {
        "threshold": project.screening_threshold,
        "annotators": _annotator_table(project=project, per_annotator=per_annotator, names=names),
        "agreement": _agreement(project=project, labels=labels),
    }


ANNOTATOR_CSV_COLUMNS = (
    "annotator",
    "labels",
    "steps",
    "positive_rate",
    "neutral_rate",
    "negative_rate",
    "flag_rate",
    "median_seconds_per_solution",
    "median_seconds_per_step",
    "last_label_at",
    "gold_accuracy",
    "gold_first_error_rate",
    "gold_solutions",
    "screening_status",
    "screening_agreement",
    "below_threshold",
)


def annotator_rows(*, project: Project) -> list[dict]:
    """The per-annotator table (for the CSV download), from the same snapshot as the API."""
    labels = Annotation.objects.filter(project=project, is_gold=False)
    scan = _label_aggregates(project=project, labels=labels, windows=_Windows(timezone.now()), use_snapshot=True)
    _, per_annotator = _label_breakdown(
        rollup=scan["rollup"], progress={"solutions_labeled": 0, "_wrong": 0, "_correct": 0}
    )
    _, per_user = scan["medians"]
    for uid, row in per_annotator.items():
        row["median_seconds_per_solution"] = per_user.get(uid, {}).get("solution")
        row["median_seconds_per_step"] = per_user.get(uid, {}).get("step")
    return _annotator_table(project=project, per_annotator=per_annotator, names=_Names())
