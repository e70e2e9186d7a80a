"""What a job says it labeled, walked through on PostgreSQL with the stand-in completions server: a
job that ends early (a spent budget, a lead's stop) counts every label it stored, as one that
finishes does, so the jobs' `steps_labeled` add up to the labels stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError

from autolabel.models import AutolabelJob, AutolabelSettings, AutoStepLabel
from core.models import JobStatus
from tests.autolabel.stand_in_server import stand_in_server
from tests.autolabel.test_autolabel_flow import EXPECTED, _autolabel, _behaviour, _labels, _project

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_job_stopped_by_the_budget_counts_the_steps_it_stored(tmp_path: Path) -> None:
    _project(tmp_path)
    with stand_in_server(_behaviour()) as url:
        with pytest.raises(CommandError, match="budget is spent"):
            _autolabel(url, here=True, wait=True, budget=6, concurrency=1)
        first = AutolabelJob.objects.get()
        assert first.status == JobStatus.FAILED
        stored = AutoStepLabel.objects.filter(job=first).count()
        # one probe, the graded answers' last steps, and the right-answer solution's every step:
        # it said 2 (only the solutions it finished)
        assert stored == 5 and first.steps_labeled == stored

        AutolabelSettings.objects.update(completions_budget=10_000)
        output = _autolabel(url, here=True, wait=True)
    second = AutolabelJob.objects.latest("pk")
    # said once, not "Autolabel job 2 succeeded: job 2 succeeded: ..."
    assert output.splitlines()[-1] == (
        f"Autolabel job {second.pk} succeeded: 2/2 solutions, 4 steps labeled, 12 completions in 3 requests."
    )
    assert second.status == JobStatus.SUCCEEDED and _labels() == EXPECTED
    assert second.steps_labeled == AutoStepLabel.objects.filter(job=second).count()
    assert first.steps_labeled + second.steps_labeled == AutoStepLabel.objects.count() == 9
