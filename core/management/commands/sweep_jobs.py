"""One job sweep now (core.jobs.sweep_all), as beat runs every minute; with --lost, after a crash.

A worker killed mid-job (SIGKILL, a lost host, a restore from a backup taken while jobs ran)
leaves its job `running` until the sweep's deadline: hours for an import. When the operator knows
no worker runs it, `--lost` treats every `running` job as lost and sends it again at once. It
asks the workers first and refuses while any of them reports a task in hand, since a job that
is still running would then run twice.
"""

from __future__ import annotations

from datetime import timedelta

from celery import current_app
from django.core.management.base import BaseCommand, CommandError

from core import jobs

SWEEP_TASK = "core.tasks.sweep_jobs"


def busy_workers(timeout: float) -> dict[str, list[str]]:
    """Workers that answer with tasks in hand (the sweep itself aside): hostname -> 'task(args)'."""
    replies = current_app.control.inspect(timeout=timeout).active() or {}
    busy: dict[str, list[str]] = {}
    for hostname, tasks in replies.items():
        held = [f"{t.get('name')}({', '.join(map(str, t.get('args') or []))})" for t in tasks or []]
        held = [t for t in held if not t.startswith(SWEEP_TASK)]
        if held:
            busy[hostname] = held
    return busy


class Command(BaseCommand):
    help = (
        "Run the job sweep now. With --lost: every `running` import, export, training run and autolabel "
        "job is taken as lost (its worker died) and sent again at once, unless a worker reports a task in hand."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--lost",
            action="store_true",
            help="treat every running job as lost, now (not after its deadline); refused while a worker is busy",
        )
        parser.add_argument(
            "--timeout", type=float, default=2.0, help="seconds to wait for the workers' answers (default 2)"
        )

    def handle(self, *args, lost: bool, timeout: float, **options):
        stale_after = None
        if lost:
            busy = busy_workers(timeout)
            if busy:
                held = "; ".join(f"{host}: {', '.join(tasks)}" for host, tasks in sorted(busy.items()))
                raise CommandError(
                    f"workers are running tasks ({held}): a job they hold would run twice. Wait for them to "
                    "finish, or stop those workers, then run this again."
                )
            stale_after = timedelta(0)
        done = jobs.sweep_all(stale_after=stale_after)
        for path, count in done.items():
            what = "the sweeper failed (see the log)" if count < 0 else f"{count} job(s) sent again or failed"
            self.stdout.write(f"{path}: {what}")
