"""The export page's TRL options in Chromium against the live server: neutral and alternatives are
shown for the TRL format only, start at the API's defaults, and reach the export a worker writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Export, Project, Role
from tests.celery_worker import celery_worker, purge_broker
from tests.e2e.helpers import STEPS, login, make_project, make_solution, make_user, store_label

pytestmark = pytest.mark.django_db(transaction=True)


def _trl_labeled_project() -> Project:
    """One label rated +1, 0, +1 with a rated alternative (-1) at the last step: TRL's defaults give
    the main row [T, T, T] and the alternative's [T, T, F]; neutral=drop ends the main row before
    the neutral step ([T]), alternatives=drop leaves the alternative out."""
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    ann = make_user("ann", project)
    solution = make_solution(project, STEPS)
    steps = [
        {"completions": [{"text": text, "rating": rating, "flagged": False}], "human_completion": None}
        | {"chosen_completion": 0}
        for text, rating in zip(STEPS, [1, 0, 1], strict=True)
    ]
    steps[2]["completions"].append({"text": "So the answer is 11.", "rating": -1, "flagged": False})
    store_label(solution, ann, steps, labeler_uuid="7b4f3a52-0000-4000-8000-000000000002")
    return project


def _export_rows(page) -> list[dict]:
    """Start an export on the page, wait for it and return the downloaded file's rows."""
    status = page.locator("[data-export-status]")
    page.get_by_role("button", name="Start export").click()
    expect(status).to_contain_text("Export ready", timeout=60_000)
    with page.expect_download() as info:
        status.get_by_role("link", name="Download").click()
    return [json.loads(line) for line in Path(info.value.path()).read_text().splitlines()]


def test_export_page_offers_trls_neutral_and_alternatives_options(pages, screenshot):
    _trl_labeled_project()
    page = pages.page()
    login(page, "lena", "/projects/algebra/export/")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    neutral, alternatives = page.get_by_label("Neutral (0) steps"), page.get_by_label("Rated alternatives")
    expect(neutral).to_be_hidden()  # PRM800K records, the first format, have no such options
    # the format's help names every format the select offers, PRM800K first
    expect(page.get_by_text("PRM800K: one record per labeled solution")).to_be_visible()
    page.get_by_label("Format").select_option("trl")
    expect(neutral).to_be_visible()
    expect(neutral).to_have_value("positive")  # the export API's defaults
    expect(alternatives).to_have_value("branch")
    purge_broker()
    with celery_worker(queues="default"):
        rows = _export_rows(page)
        assert [row["labels"] for row in rows] == [[True, True, True], [True, True, False]]
        neutral.select_option("drop")
        alternatives.select_option("drop")
        screenshot(page, "self-service-export-trl", full_page=True)
        rows = _export_rows(page)
        assert rows == [{"prompt": rows[0]["prompt"], "completions": [STEPS[0]], "labels": [True]}]
        neutral.select_option("negative")
        alternatives.select_option("branch")
        page.get_by_label("Solution", exact=True).check()  # finish reason
        rows = _export_rows(page)
        assert [row["labels"] for row in rows] == [[True, False, True], [True, False, False]]
        latest = Export.objects.order_by("-id").first()
        assert (latest.filters["neutral"], latest.filters["alternatives"]) == ("negative", "branch")

        # "Export what is newer" reopens the form with that export's settings, from its cursor on
        page.reload()
        page.locator("[data-exports] tbody tr").first.get_by_role("link", name="Export what is newer").click()
        expect(page.get_by_label("Format")).to_have_value("trl")
        expect(neutral).to_have_value("negative")
        expect(page.get_by_label("Solution", exact=True)).to_be_checked()
        expect(page.get_by_label("Since (cursor)")).to_have_value(latest.filters["cursor"])
        assert _export_rows(page) == []  # nothing newer
        # each past export's Download is on screen at a laptop's width: the long cursor wraps
        page.set_viewport_size({"width": 1280, "height": 800})
        page.reload()
        for link in page.locator("[data-exports] tbody tr").get_by_role("link", name="Download").all():
            box = link.bounding_box()
            assert box is not None and box["x"] + box["width"] <= 1280, box
        screenshot(page, "self-service-export-past-1280", full_page=True)
        newer = Export.objects.order_by("-id").first()
        assert newer.pk != latest.pk and newer.filters["since"] > 0
        same = ("format", "neutral", "alternatives", "finish_reason", "qc", "screening", "generation", "split")
        assert {k: newer.filters[k] for k in same} == {k: latest.filters[k] for k in same}
    page.get_by_label("Format").select_option("prm800k")
    expect(neutral).to_be_hidden()
    expect(alternatives).to_be_hidden()


def test_automatic_labels_hide_the_options_of_peoples_labels(pages):
    """Automatic labels export whole, + or -: the API refuses every filter and row shape of people's
    labels with them, so the form hides those fields instead of failing with HTTP 400."""
    _trl_labeled_project()
    page = pages.page()
    login(page, "lena", "/projects/algebra/export/")
    page.get_by_label("Format").select_option("trl")
    human_only = [
        page.get_by_label("Since (cursor)"),
        page.get_by_label("Generations"),
        page.get_by_label("Split"),
        page.get_by_label("Gold / QC questions"),
        page.get_by_label("Neutral (0) steps"),
        page.get_by_label("Rated alternatives"),
        page.get_by_label("Solution", exact=True),  # a finish reason
    ]
    for field in human_only:
        expect(field).to_be_visible()
    page.get_by_label("Labels").select_option("auto")
    for field in human_only:
        expect(field).to_be_hidden()
    expect(page.get_by_label("Format")).to_be_visible()
    expect(page.get_by_text("TRL rows", exact=True)).to_be_hidden()  # no heading over nothing
    page.get_by_label("Labels").select_option("human")
    for field in human_only:
        expect(field).to_be_visible()
    page.get_by_label("Labels").select_option("auto")
    page.get_by_label("Format").select_option("prm800k")  # no automatic labels there: every filter is back
    expect(page.get_by_label("Generations")).to_be_visible()


def test_a_past_export_says_how_many_of_its_labels_were_deleted_since(pages, screenshot):
    """A label deleted after an export (a superuser in the admin) is counted on that export's row, and
    the link lists its record key; an export made after the deletion shows nothing."""
    from annotate.models import Annotation
    from annotate.services import exports

    project = _trl_labeled_project()
    lena = project.memberships.get(role=Role.LEAD).user

    def finished_export() -> Export:
        options = exports.parse_options(project=project, params={})
        cursor = exports.plan_export(project=project, options=options).cursor
        filters = {**options.as_dict(), "cursor": cursor}
        return Export.objects.create(project=project, requested_by=lena, status="succeeded", filters=filters)

    before = finished_export()
    label = Annotation.objects.get(project=project)
    label.delete()  # as the admin's delete does, through the ORM
    after = finished_export()
    page = pages.page()
    login(page, "lena", "/projects/algebra/export/")
    rows = page.locator("[data-exports] tbody tr")
    expect(rows).to_have_count(2)
    newest, oldest = rows.nth(0), rows.nth(1)  # newest first
    expect(newest.locator("[data-export-deleted]")).to_have_count(0)
    notice = oldest.locator("[data-export-deleted]")
    expect(notice).to_have_text("1 label deleted since this export: their keys")
    notice.scroll_into_view_if_needed()
    screenshot(page, "export-page-deleted-since")
    notice.get_by_role("link", name="their keys").click()
    page.wait_for_url("**/export/deletions/?since=*")
    expect(page.get_by_text(label.labeler_uuid)).to_be_visible()  # DRF's page of the JSON answer
    listed = page.request.get(page.url, headers={"Accept": "application/json"}).json()
    assert [d["labeler"] for d in listed["deletions"]] == [label.labeler_uuid]
    assert before.pk < after.pk


def test_on_a_phone_each_past_export_shows_its_download_cursor_and_deletions_on_screen(pages, screenshot):
    """At 390 px the past-exports table scrolled sideways inside its card: the status, the cursor with
    "Export what is newer", the "N labels deleted since this export" notice and Download sat past the
    screen's right edge. On a phone each export is a block of lines, every cell named, all on screen;
    at desktop width the table is as before."""
    from annotate.models import Annotation
    from annotate.services import exports

    project = _trl_labeled_project()
    lena = project.memberships.get(role=Role.LEAD).user
    options = exports.parse_options(project=project, params={"format": "trl"})
    filters = {**options.as_dict(), "gzip": True}
    filters["cursor"] = exports.plan_export(project=project, options=options).cursor
    Export.objects.create(
        project=project,
        requested_by=lena,
        format="trl",
        status="succeeded",
        filters=filters,
        record_count=2,
        byte_size=300,
    )
    Annotation.objects.get(project=project).delete()

    page = pages.page(pages.context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True))
    login(page, "lena", "/projects/algebra/export/")
    table = page.locator("[data-exports]")
    row = table.locator("tbody tr").first
    wanted = [
        row.get_by_role("link", name="Download"),
        row.get_by_role("link", name="Export what is newer"),
        row.locator("[data-export-deleted]"),
        row.get_by_text("Succeeded"),
    ]
    row.scroll_into_view_if_needed()
    screenshot(page, "export-page-phone-past-exports", full_page=True)
    for element in wanted:
        expect(element).to_be_visible()
        box = element.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (element, box)
    wrap = page.locator(".sl-table-wrap").filter(has=table)
    assert wrap.evaluate("(e) => e.scrollWidth <= e.clientWidth"), "the past-exports table scrolls sideways"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # the hidden column heads name the cells that do not say what they are
    expect(row.locator("td[data-label='Records']")).to_have_text("2")
    expect(table.locator("thead")).to_be_hidden()

    desktop = pages.page()
    login(desktop, "lena", "/projects/algebra/export/")
    expect(desktop.locator("[data-exports] thead")).to_be_visible()
    expect(desktop.locator("[data-exports] thead th").first).to_have_text("When (UTC)")
