"""Enqueueing background jobs so that a broker outage degrades the service instead of failing it.

Every job has a status row first. The Celery message is sent after commit; if the broker is down
the row simply stays `created`, and the periodic sweep (`annotate.tasks.sweep_jobs`, run by beat)
sends it again later. Rows stuck in `running` past their deadline (a killed worker) are put back
to `created` so they run again; tasks are idempotent and claim their row with a conditional update.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.db import transaction
from django.db.models import Model, Q
from django.utils import timezone

logger = logging.getLogger(__name__)


def send_task(task, pk: int) -> bool:
    """task.delay(pk), logging instead of raising when the broker cannot be reached."""
    try:
        task.apply_async(args=[pk], retry=False)
        return True
    except Exception as exc:  # kombu/redis raise many types; any of them means "try again later"
        logger.warning("Could not enqueue %s(%s), the sweep will retry: %s", task.name, pk, exc)
        return False


def enqueue_on_commit(task, pk: int) -> None:
    transaction.on_commit(lambda: send_task(task, pk))


def requeue_stale(
    *,
    model: type[Model],
    task,
    created_after: timedelta,
    running_after: timedelta,
    started_field: str = "started_at",
    on_reset: Callable[[Model], None] | None = None,
) -> int:
    """Re-send jobs still `created` after `created_after`; reset `running` ones older than `running_after`."""
    now = timezone.now()
    stale_running = model.objects.filter(status="running").filter(
        Q(**{f"{started_field}__lt": now - running_after}) | Q(**{f"{started_field}__isnull": True})
    )
    reset: list[int] = []
    for row in stale_running:
        if model.objects.filter(pk=row.pk, status="running").update(status="created"):
            reset.append(row.pk)
            if on_reset:
                on_reset(row)
    waiting = model.objects.filter(status="created", created_at__lt=now - created_after).values_list("pk", flat=True)
    # Reset jobs are sent now too (their created_at may be recent), each job once.
    sent = sum(send_task(task, pk) for pk in dict.fromkeys([*reset, *waiting]))
    return len(reset) + sent
