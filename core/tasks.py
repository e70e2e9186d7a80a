"""The one periodic job sweep (beat, default queue): see core.jobs."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task


@shared_task
def sweep_jobs(stale_after_seconds: float | None = None) -> dict[str, int]:
    """Re-send lost job messages and recover jobs whose worker died (exports, imports, training runs)."""
    from core import jobs

    stale_after = None if stale_after_seconds is None else timedelta(seconds=stale_after_seconds)
    return jobs.sweep_all(stale_after=stale_after)
