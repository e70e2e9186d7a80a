"""Progress of the queue and the ETA, and the label breakdown per rating and per annotator."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from annotate.models import (
    Annotation,
    FinishReason,
    Project,
)
from annotate.selectors.stats.common import PACE_DAYS, _gen_key, _ratio, labeling_time, pace_and_eta
from annotate.selectors.stats.snapshot import _COUNTERS


def _pace_labels(*, project: Project, since: datetime, now: datetime) -> tuple[int, float]:
    """Queue labels in (since, now] and their labeling time (labeling_time): a range of
    annotation_stats_idx, which includes total_time_ms."""
    return labeling_time(
        Annotation.objects.filter(
            project=project,
            is_gold=False,
            is_quality_control=False,
            is_screening=False,
            submitted_at__gt=since,
            submitted_at__lte=now,
        )
    )


def _progress(*, project: Project, rollup: list[dict], groups: list[dict], now: datetime) -> dict:
    """Solutions labeled / total by generation, steps labeled, and the ETA at the current pace."""
    by_gen: dict[int | None, dict] = {}

    def generation(number: int | None) -> dict:
        empty = {"solutions": 0, "labeled": 0, "open": 0, "labels": 0, "imported_labels": 0, "steps_labeled": 0}
        return by_gen.setdefault(number, {"generation": number, **empty})

    by_strategy: dict[str, int] = defaultdict(int)
    totals = defaultdict(int)
    for row in groups:
        gen = generation(row["generation"])
        for key in ("solutions", "labeled", "open"):
            gen[key] += row["total" if key == "solutions" else key]
        for key in ("total", "steps", "steps_open", "labeled", "open", "remaining", "wrong", "correct"):
            totals[key] += row[key] or 0
        if row["open"]:
            by_strategy[row["strategy"] or "unscored"] += row["open"]
    labels_total = steps_labeled = week = imported = 0
    for row in rollup:
        gen = generation(row["generation"])
        gen["labels"] += row["n"]
        if row["annotator_id"] is None:  # a label that came in an import file, not from the queue
            gen["imported_labels"] += row["n"]
            imported += row["n"]
        gen["steps_labeled"] += row["steps"] or 0
        labels_total += row["n"]
        steps_labeled += row["steps"] or 0
        week += row["queue_week"]

    # Pace: queue labels of the last 7 days per hour of labeling time, so a team that labeled 6 in
    # its first 4 minutes reads its pace of those minutes, neither 6 spread over the whole day nor
    # 6 per (rounded-up) clock hour.
    since = now - timedelta(days=PACE_DAYS)
    week, active = _pace_labels(project=project, since=since, now=now) if week else (0, 0.0)
    remaining = totals["remaining"]
    return {
        "solutions_total": totals["total"],
        "solutions_labeled": totals["labeled"],
        "solutions_open": totals["open"],
        "solutions_complete": totals["total"] - totals["open"],
        "labels_remaining": remaining,
        "steps_total": totals["steps"],
        "steps_open": totals["steps_open"],
        "steps_labeled": steps_labeled,
        "labels": labels_total,
        "labels_imported": imported,
        "by_generation": sorted(by_gen.values(), key=lambda g: _gen_key(g["generation"])),
        **pace_and_eta(labels=week, active_seconds=active, remaining=remaining, now=now),
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
