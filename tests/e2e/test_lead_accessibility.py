"""The lead's Data page and dashboard in Chromium, for a screen reader and low vision (audit items 3,
10, 12, 13): a refused autolabel job is announced, names the form's fields by their labels and marks
them invalid with focus on the first; a job's progress bar has a name; the dashboard's "updated"
time is legible; a flagged annotator's row says so in words, not only in red."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Role
from autolabel.models import AutolabelJob
from tests.autolabel.test_autolabel_flow import _project
from tests.celery_worker import purge_broker
from tests.e2e.helpers import login, make_user
from tests.e2e.test_dashboard import build_campaign

pytestmark = pytest.mark.django_db(transaction=True)

# WCAG 2 contrast of an element's text colour against the first opaque background behind it
CONTRAST = """(el) => {
  const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let bg = null;
  for (let n = el; n && !bg; n = n.parentElement) {
    const c = rgb(getComputedStyle(n).backgroundColor);
    if (c.length < 4 || c[3] === 1) { if (!(c.length === 4 && c[3] === 0)) bg = c; }
  }
  const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(bg || [255, 255, 255])].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def test_a_refused_autolabel_job_is_announced_and_marks_its_fields(pages, screenshot, tmp_path: Path) -> None:
    project = _project(tmp_path)
    make_user("lena", project, role=Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/auto/data/")
    form = page.get_by_role("region", name="Label automatically")
    server, model = form.get_by_label("Model server"), form.get_by_label("Model", exact=True)

    # the form empty, Enter on Start labeling
    form.get_by_role("button", name="Start labeling").focus()
    page.keyboard.press("Enter")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("The job was not started: correct the 2 fields marked above.")
    expect(alert).to_contain_text("Model server: This field is required.")
    expect(alert).to_contain_text("Model: This field is required.")
    expect(alert).not_to_contain_text("base_url")
    expect(alert).not_to_contain_text("HTTP 400")
    expect(page.locator("main")).not_to_contain_text("{#")  # the status box's template comment stays out
    for field in (server, model):
        expect(field).to_have_attribute("aria-invalid", "true")
        # its reason is read out with it (after the field's help, where it has one)
        expect(field).to_have_accessible_description(re.compile(r"This field is required\.$"))
    expect(server).to_be_focused()  # the first refused field, in the form's order
    expect(form.get_by_label("Rollouts per step")).not_to_have_attribute("aria-invalid", "true")
    screenshot(page, "lead-a11y-autolabel-refused", full_page=True)

    # a second refusal names only what is still wrong; the first one's marks go
    server.fill("ftp://gpu-box/v1")
    model.fill("stand-in")
    page.keyboard.press("Enter")  # from the Model field: submits the form
    expect(alert).to_contain_text("Model server: must start with http")
    expect(alert).to_contain_text("The job was not started: correct the field marked above.")
    expect(server).to_have_attribute("aria-invalid", "true")
    expect(server).to_be_focused()
    expect(model).not_to_have_attribute("aria-invalid", "true")
    expect(form.locator("[data-field-error]")).to_have_count(1)
    assert not AutolabelJob.objects.exists()


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


def test_dashboard_updated_time_is_legible_and_a_flagged_row_says_why(pages, screenshot) -> None:
    build_campaign()
    page = pages.page()
    login(page, "lena", "/dashboard/algebra/")
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    updated = page.locator('[data-slot="updated"]')
    expect(updated).to_contain_text("updated")
    assert updated.evaluate(CONTRAST) >= 4.5

    table = page.locator('[data-slot="annotators"]')
    flagged = table.locator("tr.sl-below")
    expect(flagged).to_have_count(1)
    note = flagged.locator("th [data-flag-note]")
    expect(note).to_be_visible()
    expect(note).to_have_text("flagged: failed screening")  # eli failed screening (build_campaign)
    assert note.evaluate(CONTRAST) >= 4.5
    expect(table.locator("[data-flag-note]")).to_have_count(1)  # the others are not flagged
    expect(table.get_by_role("rowheader", name="eli flagged: failed screening")).to_have_count(1)
    page.locator("#quality").scroll_into_view_if_needed()
    screenshot(page, "lead-a11y-dashboard-quality")
