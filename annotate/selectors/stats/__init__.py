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

from datetime import datetime

from django.utils import timezone

from annotate.models import Annotation, Project
from annotate.selectors.stats.common import _iso, _Names, _Windows
from annotate.selectors.stats.disagreements import disagreements as disagreements  # the API reads it here
from annotate.selectors.stats.pairs import pair_progress
from annotate.selectors.stats.progress import _label_breakdown, _progress
from annotate.selectors.stats.quality import _annotator_table, _quality
from annotate.selectors.stats.snapshot import _label_aggregates
from annotate.selectors.stats.throughput import _throughput
from annotate.services.savings import label_savings


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
    shown_progress = {k: v for k, v in progress.items() if not k.startswith("_")}
    pairs = pair_progress(project=project, now=now)
    if pairs is not None:  # a compare project: its queue serves pairs (annotate.selectors.stats.pairs)
        shown_progress["pairs"] = pairs
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
        "solutions_at": _iso(scan.get("solutions_at") or scan.get("at")) or now.isoformat(),
        "progress": shown_progress,
        "throughput": throughput,
        "labels": label_summary,
        "quality": quality,
        "queue": {
            "selection_strategy": project.selection_strategy,
            "open_by_strategy": progress["_open_by_strategy"],
            "savings": label_savings(project=project, labels_remaining=progress["labels_remaining"]),
        },
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
    "preferences",  # compare projects (empty in a step project); last, so earlier columns keep their places
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
