"""Live estimate of the step labels the selection strategy has saved against random selection.

Nobody knows random's learning curve in production, so a random control share of the queue is
labeled too (`annotate.queue_order`). What both groups' labels can be compared on, live,
is what a label pass is for: finding where a solution's first error is. Yield = first errors found
per step label. If the strategy's labels found first errors at rate r_s and the control's at r_c,
random selection would have needed labels_s * r_s / r_c step labels to find as many:

    saved = labels_s * (r_s / r_c - 1)

with a 95% bootstrap interval (annotations resampled within each group). This is a proxy: the
offline simulation (bench/results/simulation.md) measures what that buys in held-out first-error
F1. Below MIN_CONTROL control labelings, MIN_STRATEGY strategy labelings, or with no first error
in the control yet, there is not enough data and the estimate says so.

Only labels the project's current strategy served count as the strategy's: after a change of
strategy the earlier one's labels (and a model-driven strategy's cold start) say nothing of the
new one, so they are counted apart (`n_other`). Control labels are random picks under any
strategy and all count. `control_capacity` is how many control labelings the project can give at
all: those done, and the control share of the labels still to go (`labels_remaining`, the
dashboard's figure; every reorder draws its controls afresh, so the ones marked now are one draw of
a handful in a small queue, not what the queue will give), so a small project is told when an
estimate can never come rather than to wait.
"""

from __future__ import annotations

import numpy as np

from annotate.models import MAX_CONTROL_SHARE, Annotation, AnnotationSource, Project, QueueOrigin

MIN_CONTROL = 20
MIN_STRATEGY = 20
N_BOOT = 1000


def _saved(labels_s, found_s, labels_c, found_c) -> tuple[float, float] | None:
    """(labels saved, yield ratio) or None when the control found nothing."""
    ls, lc = float(np.sum(labels_s)), float(np.sum(labels_c))
    rs = float(np.sum(found_s)) / ls if ls else 0.0
    rc = float(np.sum(found_c)) / lc if lc else 0.0
    if rc <= 0:
        return None
    return ls * (rs / rc - 1.0), rs / rc


def label_savings(*, project: Project, labels_remaining: int, seed: int = 0) -> dict:
    rows = list(
        Annotation.objects.filter(
            project=project,
            source=AnnotationSource.APP,
            is_gold=False,
            is_screening=False,
            assignment__isnull=False,
        ).values_list("assignment__strategy", "n_label_steps", "first_error_index")
    )
    strategy = project.selection_strategy
    control = [(n, fe is not None) for s, n, fe in rows if s == QueueOrigin.CONTROL]
    chosen = [(n, fe is not None) for s, n, fe in rows if s == strategy]
    out = {
        "measure": "first errors found per step label",
        "strategy": strategy,
        "control_share": project.control_share,
        "max_control_share": MAX_CONTROL_SHARE,
        "n_control": len(control),
        "n_strategy": len(chosen),
        "n_other": len(rows) - len(control) - len(chosen),
        "control_capacity": len(control) + round(project.control_share * labels_remaining),
        "labels_control": int(sum(n for n, _ in control)),
        "labels_strategy": int(sum(n for n, _ in chosen)),
        "errors_control": int(sum(f for _, f in control)),
        "errors_strategy": int(sum(f for _, f in chosen)),
        "min_control": MIN_CONTROL,
        "min_strategy": MIN_STRATEGY,
        "labels_saved": None,
        "labels_saved_ci": None,
        "yield_ratio": None,
        "yield_ratio_ci": None,
    }
    point = None
    if len(control) >= MIN_CONTROL and len(chosen) >= MIN_STRATEGY:
        c, s = np.asarray(control, dtype=np.float64), np.asarray(chosen, dtype=np.float64)
        point = _saved(s[:, 0], s[:, 1], c[:, 0], c[:, 1])
    if point is None:
        out["status"] = "not_enough_data"
        return out
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(N_BOOT):
        bs = s[rng.integers(0, len(s), len(s))]
        bc = c[rng.integers(0, len(c), len(c))]
        r = _saved(bs[:, 0], bs[:, 1], bc[:, 0], bc[:, 1])
        if r is not None:
            boots.append(r)
    b = np.asarray(boots) if boots else np.asarray([point])
    out.update(
        status="ok",
        labels_saved=round(point[0], 1),
        labels_saved_ci=[round(float(np.percentile(b[:, 0], 2.5)), 1), round(float(np.percentile(b[:, 0], 97.5)), 1)],
        yield_ratio=round(point[1], 3),
        yield_ratio_ci=[round(float(np.percentile(b[:, 1], 2.5)), 3), round(float(np.percentile(b[:, 1], 97.5)), 3)],
    )
    return out
