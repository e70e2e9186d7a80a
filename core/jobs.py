"""The job pattern shared by exports, imports and training runs.

1. A service writes the job's row (status `created`) and sends the Celery message after commit
   (`enqueue_on_commit`). A broker outage leaves the row `created`; nothing fails.
2. The task (acks_late, so a killed worker's message is delivered again) claims the row with a
   conditional update created -> running (`claim`): a redelivered or duplicate message finds
   nothing to claim and returns quietly.
3. One periodic sweep (`core.tasks.sweep_jobs`, run by beat on the default queue) calls every
   sweeper named in settings.JOB_SWEEPERS: each re-sends its rows still `created` (lost
   messages) and deals with rows stuck in `running` past their deadline (a killed worker):
   `requeue_stale` puts them back to `created` and sends them again; training runs are failed
   and requested afresh (ml.services.runs). A job given `max_restarts` is failed instead once
   its worker has been lost that many times: an input that kills its worker (out of memory, say)
   would otherwise take one worker down every deadline, for ever.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Model, Q
from django.utils import timezone
from django.utils.module_loading import import_string

from core.models import JobStatus

logger = logging.getLogger(__name__)

# Restarts after a lost worker before a job is failed (so it runs at most three times).
MAX_RESTARTS = 2


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


def claim(model: type[Model], pk: int, **fields: Any) -> bool:
    """created -> running with started_at now (plus `fields`, which may replace started_at, e.g. a
    resumable job keeps its first start); False when gone or already taken."""
    return bool(
        model.objects.filter(pk=pk, status=JobStatus.CREATED).update(
            **{"status": JobStatus.RUNNING, "started_at": timezone.now(), **fields}
        )
    )


def requeue_stale(
    *,
    model: type[Model],
    task,
    created_after: timedelta,
    running_after: timedelta,
    started_field: str = "started_at",
    on_reset: Callable[[Model], None] | None = None,
    max_restarts: int | None = None,
    failed_fields: Callable[[str], dict[str, Any]] = lambda message: {"error": message},
    on_give_up: Callable[[Model], None] | None = None,
) -> int:
    """Re-send jobs still `created` after `created_after`; reset `running` ones older than `running_after`.

    Returns how many jobs it sent again (reset or waiting) or failed, each once.

    With `max_restarts` (the model then has a `restarts` field), a stale job already restarted that
    many times is failed instead, with `failed_fields(message)` and then `on_give_up(row)`.
    """
    now = timezone.now()
    stale_running = model.objects.filter(status=JobStatus.RUNNING).filter(
        Q(**{f"{started_field}__lt": now - running_after}) | Q(**{f"{started_field}__isnull": True})
    )
    reset: list[int] = []
    failed = 0
    for row in stale_running:
        still_running = model.objects.filter(pk=row.pk, status=JobStatus.RUNNING)
        if max_restarts is None:
            counted = {}
        elif row.restarts >= max_restarts:
            tries = row.restarts + 1
            message = (
                f"the job stopped: its worker was lost {tries} times while running it (killed, or out of "
                "memory?), so it is not tried again; a smaller file or a worker with more memory may do"
            )
            if still_running.update(status=JobStatus.FAILED, finished_at=now, **failed_fields(message)):
                failed += 1
                logger.warning("%s %s failed after %s lost workers", model.__name__, row.pk, tries)
                if on_give_up:
                    on_give_up(row)
            continue
        else:
            counted = {"restarts": F("restarts") + 1}
        if still_running.update(status=JobStatus.CREATED, **counted):
            reset.append(row.pk)
            if on_reset:
                on_reset(row)
    waiting = model.objects.filter(status=JobStatus.CREATED, created_at__lt=now - created_after).values_list(
        "pk", flat=True
    )
    # Reset jobs are sent now too (their created_at may be recent), each job once; a send the
    # broker refuses is retried by the next sweep. Each job counts once: a reset one was counted
    # twice (reset, then sent).
    to_send = dict.fromkeys([*reset, *waiting])
    for pk in to_send:
        send_task(task, pk)
    return len(to_send) + failed


def sweep_all(*, stale_after: timedelta | None = None) -> dict[str, int]:
    """Run every sweeper of settings.JOB_SWEEPERS; `stale_after` overrides their running deadlines.

    Each sweeper is `fn(*, stale_after: timedelta | None) -> int` (jobs re-sent or failed). One
    failing sweeper is logged and does not stop the others.
    """
    done: dict[str, int] = {}
    for path in settings.JOB_SWEEPERS:
        try:
            done[path] = import_string(path)(stale_after=stale_after)
        except Exception:
            logger.exception("job sweeper %s failed", path)
            done[path] = -1
    return done
