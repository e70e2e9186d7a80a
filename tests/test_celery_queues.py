"""Every queue the code routes tasks to is consumed where workers run: docker compose, `make run`'s
worker and the tests' real worker. A route to a queue nobody reads leaves its jobs `created` for
ever (autolabel jobs moved to a queue of their own: each compose worker's -Q is read here)."""

from __future__ import annotations

from pathlib import Path

import yaml
from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]


def _routed() -> set[str]:
    return {settings.CELERY_TASK_DEFAULT_QUEUE} | {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}


def _queues_of(command: list[str]) -> set[str]:
    return set(command[command.index("-Q") + 1].split(",")) if "-Q" in command else set()


def test_every_routed_queue_has_a_compose_worker_and_autolabel_jobs_leave_default():
    assert settings.CELERY_TASK_ROUTES["autolabel.tasks.*"] == {"queue": "autolabel"}
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    consumed: set[str] = set()
    for name, service in compose["services"].items():
        command = service.get("command") or []
        if "worker" in command:
            consumed |= _queues_of(command)
            assert service.get("healthcheck"), name
    assert _routed() <= consumed, _routed() - consumed
    # a long autolabel job never holds a slot of the worker that runs imports and exports
    default_workers = [s for s in compose["services"].values() if "default" in _queues_of(s.get("command") or [])]
    assert default_workers and all("autolabel" not in _queues_of(s["command"]) for s in default_workers)


def test_make_run_and_the_tests_real_worker_consume_every_routed_queue():
    import inspect

    from annotate.management.commands import run_dev
    from tests import celery_worker

    source = inspect.getsource(run_dev.Command.handle)
    dev_queues = set(source.split('"-Q", "', 1)[1].split('"', 1)[0].split(","))
    assert _routed() <= dev_queues
    default = inspect.signature(celery_worker.celery_worker).parameters["queues"].default
    assert _routed() <= set(default.split(","))


def test_the_readme_stack_without_docker_consumes_every_routed_queue_with_one_name_per_worker():
    """README's "Real stack" lists the processes to run without Docker: its workers must consume
    every routed queue, and each needs its own node name on one host (Docker gives each container
    its own host name; Celery asks for a name per worker on one machine, or remote control and
    `inspect ping` see one node where there are three)."""
    import re
    import shlex

    section = (ROOT / "README.md").read_text().split("\n## Real stack\n", 1)[1].split("\n## ", 1)[0]
    workers = [
        shlex.split(line)
        for line in re.findall(r"^\.venv/bin/celery -A config worker .*$", section, flags=re.MULTILINE)
    ]
    assert workers, "no worker lines under Real stack"
    consumed = set().union(*(_queues_of(argv) for argv in workers))
    assert _routed() <= consumed, _routed() - consumed
    names = [argv[argv.index("-n") + 1] for argv in workers if "-n" in argv]
    assert len(names) == len(workers) == len(set(names)), names
    assert re.search(r"^\.venv/bin/celery -A config beat ", section, flags=re.MULTILINE), "no beat: no job sweep"
