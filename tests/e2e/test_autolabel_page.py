"""The Data page's "Label automatically" form in Chromium: a lead starts a Monte Carlo job against
an OpenAI-compatible stand-in server (the one external service a test may stand in for), a real
Celery worker runs it, and the page follows it to the end; bad options come back named."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Project, Role
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
    expect(status).to_contain_text("The job was not started: correct the field marked above.")
    expect(status).to_contain_text("Model server: must start with http")
    assert not AutolabelJob.objects.exists()

    purge_broker()
    with stand_in_server(_behaviour()) as url, celery_worker(queues="default,autolabel"):
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
    expect(status).to_contain_text("Nothing to label")
    assert AutolabelJob.objects.count() == 1


def test_a_reloaded_data_page_follows_the_running_job_and_stops_it(pages, screenshot, tmp_path: Path) -> None:
    steps = ["Start {i}.", "Go on {i}.", "{i}+1 = 0, WRONG.", "Recheck.", "# Answer\n\n0"]
    solutions = [(f"What is {i}+1?", str(i + 1), [step.format(i=i) for step in steps]) for i in range(8)]
    _project(tmp_path, solutions=solutions)
    make_user("lena", Project.objects.get(slug="auto"), role=Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/auto/data/")
    form = page.get_by_role("region", name="Label automatically")
    status = page.locator("[data-autolabel-status]")
    stop = form.get_by_role("button", name="Stop the job")
    expect(stop).to_be_hidden()
    purge_broker()
    with stand_in_server(_behaviour(solutions, delay_s=0.5)) as url, celery_worker(queues="default,autolabel"):
        form.get_by_label("Model server").fill(url)
        form.get_by_label("Model", exact=True).fill("stand-in")
        form.get_by_label("Rollouts per step").fill("2")
        form.get_by_label("Requests at once").fill("1")
        form.get_by_role("button", name="Start labeling").click()
        expect(status).to_contain_text("Labeling…", timeout=30_000)
        page.reload()  # the job goes on; the page finds it again
        expect(status).to_contain_text("Labeling…", timeout=30_000)
        expect(form.get_by_role("button", name="Start labeling")).to_be_disabled()
        screenshot(page, "data-autolabel-running", full_page=True)
        stop.click()
        expect(status).to_contain_text("stopped after", timeout=30_000)
        expect(status).to_contain_text("Start labeling resumes where it stopped")
        expect(stop).to_be_hidden()
        expect(form.get_by_role("button", name="Start labeling")).to_be_enabled()
        screenshot(page, "data-autolabel-stopped", full_page=True)
    assert AutolabelJob.objects.get().status == "cancelled"
    page.reload()  # how the last job ended stays in view after a reload
    expect(status).to_contain_text("Latest job: Job", timeout=15_000)
    expect(status).to_contain_text("stopped after")
    expect(stop).to_be_hidden()
