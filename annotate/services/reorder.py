"""A strategy or control-share change before any model has ordered the queue: the open solutions
are queued again as an import queues them (annotate.queue_order.cold_start_queue) under the new
settings. Where a model ordered them, the model loop reorders them itself (ml.services_auto)."""

from __future__ import annotations

import random

from annotate.models import Project, Solution, TaskKind
from annotate.queue_order import cold_start_queue
from annotate.queue_positions import write_positions


def reorder_before_any_model(*, project_id: int, rng: random.Random | None = None) -> int:
    """Rows reordered; 0 for a compare project, a queue a model ordered, or nothing open."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None or project.task_kind == TaskKind.COMPARE:
        return 0
    queued = Solution.objects.filter(project=project, is_open=True, is_gold=False, is_screening=False)
    if queued.filter(model_run_id__isnull=False).exists():
        return 0
    rows = list(queued.order_by("id").values_list("id", "answer_correct", "n_steps"))
    if not rows:
        return 0
    ids, answers, lengths = (list(c) for c in zip(*rows, strict=True))
    queue = cold_start_queue(
        answers,
        strategy=project.selection_strategy,
        control_share=project.control_share,
        lengths=lengths,
        rng=rng,
    )
    return write_positions(ids=ids, priority=[p for p, _ in queue], origin=[o for _, o in queue])
