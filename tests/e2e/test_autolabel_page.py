"""The Data page's "Label automatically" form in Chromium: a lead starts a Monte Carlo job against
an OpenAI-compatible stand-in server (the one external service a test may stand in for), a real
Celery worker runs it, and the page follows it to the end; bad options come back named."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Role
from autolabel.models import AutolabelJob
from core.models import JobStatus
from tests.autolabel.stand_in_server import stand_in_server
from tests.autolabel.test_autolabel_flow import EXPECTED, _behaviour, _labels, _project
from tests.celery_worker import celery_worker, purge_broker
from tests.e2e.helpers import login, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lead_labels_automatically_from_the_data_page(pages, screenshot, tmp_path: Path) -> None:
    project = _project(tmp_path)
    make_user("lena", project, role=Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/auto/data/")
    form = page.get_by_role("region", name="Label automatically")
    status = page.locator("[data-autolabel-status]")
    expect(form.get_by_label("Rollouts per step")).to_have_value("8")  # the API's defaults

    form.get_by_label("Model server").fill("ftp://gpu-box/v1")
    form.get_by_label("Model", exact=True).fill("stand-in")
    form.get_by_role("button", name="Start labeling").click()
    expect(status).to_contain_text("The job was not started (HTTP 400).")
    expect(status).to_contain_text("base_url: must start with http")
    assert not AutolabelJob.objects.exists()

    purge_broker()
    with stand_in_server(_behaviour()) as url, celery_worker(queues="default"):
        form.get_by_label("Model server").fill(url)
        form.get_by_label("Rollouts per step").fill("4")
        form.get_by_label("Requests at once").fill("4")
        form.get_by_role("button", name="Start labeling").click()
        expect(status).to_contain_text("labeled 3 solutions", timeout=60_000)
        screenshot(page, "data-autolabel", full_page=True)
    job = AutolabelJob.objects.get()
    assert job.status == JobStatus.SUCCEEDED and (job.rollouts, job.concurrency, job.model) == (4, 4, "stand-in")
    assert _labels() == EXPECTED
    # nothing left to label: refused before anything is queued, with the API's reason
    form.get_by_role("button", name="Start labeling").click()
    expect(status).to_contain_text("solutions: nothing to label")
    assert AutolabelJob.objects.count() == 1
