"""Throughput: labels per hour and per day, and the median time per solution and per step."""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import datetime, timedelta

from django.db import connection

from annotate.selectors.stats.common import DAILY_BUCKETS, HOURLY_BUCKETS, MEDIAN_SAMPLE, _is_postgres, _Names, _Windows


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
    per annotator (an annotator with no label among them has none). Imported labels (annotator
    None) have their own row but stay out of the overall figure: the headline is the team's pace,
    and a file's times (PRM800K's minutes per solution) made it read as if the team were slow."""
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
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY total_time_ms::float8 / n_label_steps),
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY total_time_ms)
                            FILTER (WHERE annotator_id IS NOT NULL),
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY total_time_ms::float8 / n_label_steps)
                            FILTER (WHERE annotator_id IS NOT NULL)
                    FROM ({sql}) AS timed GROUP BY GROUPING SETS ((annotator_id), ())""",
                params,
            )
            rows = cursor.fetchall()
        overall = {"solution": None, "step": None}
        per_user = {}
        for uid, is_total, solution, step, team_solution, team_step in rows:
            if is_total:
                overall = {"solution": team_solution, "step": team_step}
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

        overall = med([p for uid, pairs in by_user.items() if uid is not None for p in pairs])
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
