"""The lead's Data page in Chromium, for a screen reader: a job's progress bar has a name."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Role
from tests.autolabel.test_autolabel_flow import _project
from tests.celery_worker import purge_broker
from tests.e2e.helpers import login, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_job_progress_bar_has_a_name(pages, tmp_path: Path) -> None:
    project = _project(tmp_path)
    make_user("lena", project, role=Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/auto/data/")
    # every bar on the page (import and autolabel) is named by the message beside it
    for bar in page.locator("progress").all():
        labelled = bar.get_attribute("aria-labelledby")
        assert labelled and page.locator(f"[id='{labelled}']").count() == 1
    purge_broker()
    try:
        # no worker runs: the import waits for one, its bar showing with the message as its name
        page.locator("input[type=file]").set_input_files(str(tmp_path / "auto.jsonl"))
        page.get_by_role("button", name="Import").click()
        expect(page.get_by_role("progressbar", name="Waiting for a worker…")).to_be_visible(timeout=15_000)
    finally:
        purge_broker()
