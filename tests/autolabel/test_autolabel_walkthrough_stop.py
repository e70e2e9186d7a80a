"""A lead stops a running job, walked through on PostgreSQL with the stand-in completions server:
the requests in flight at the stop were paid for (their completions are taken from the budget),
so what they return is stored and counted in the job, and the job's completions agree with the
budget's."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import connection

from annotate.models import Role
from autolabel import services
from autolabel.models import AutolabelSettings, AutolabelStatus, AutoStepLabel
from tests.api_clients import member_client
from tests.autolabel.stand_in_server import stand_in_server
from tests.autolabel.test_autolabel_flow import _behaviour, _project
from tests.celery_worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stopped_job_keeps_and_counts_what_its_requests_in_flight_return(tmp_path: Path) -> None:
    steps = ["Start {i}.", "Go on {i}.", "{i}+1 = 0, WRONG.", "Recheck.", "# Answer\n\n0"]
    solutions = [(f"What is {i}+1?", str(i + 1), [step.format(i=i) for step in steps]) for i in range(6)]
    project = _project(tmp_path, solutions=solutions)
    lead = member_client(project, "lead", Role.LEAD)
    behaviour = _behaviour(solutions, delay_s=1.0)
    with stand_in_server(behaviour) as url:
        job = services.create_job(
            project=project, user=None, options={"base_url": url, "model": "stand-in", "rollouts": 2, "concurrency": 2}
        )

        def run() -> None:
            services.run_job(job_id=job.pk)
            connection.close()

        thread = threading.Thread(target=run)
        thread.start()
        # two requests answered and stored, two more asked for: the server holds them while it is stopped
        wait_for(lambda: len(behaviour.requests) >= 4, timeout=60, message="requests in flight")
        assert lead.post(f"/api/v1/autolabel-jobs/{job.pk}/cancel/").status_code == 200
        thread.join(timeout=60)
    assert not thread.is_alive()
    job.refresh_from_db()
    budget = AutolabelSettings.objects.get(project=project)
    asked = len(behaviour.requests)
    assert job.status == AutolabelStatus.CANCELLED
    # every request the server answered is in the job: its probe stored, its completions counted
    assert AutoStepLabel.objects.filter(inferred=False).count() == asked
    assert (job.requests_done, job.completions_used) == (asked, 2 * asked)
    assert budget.completions_used == job.completions_used
