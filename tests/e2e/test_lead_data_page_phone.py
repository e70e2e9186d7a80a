"""The data page's past imports on a phone (lead walkthrough): at 390 px the table scrolled sideways
inside its card, and a failed import's row, many lines tall, showed its date, who and a cut file
name while its status and what was wrong sat past the right edge. Each import is now a block of
lines (.sl-stack, pages.css), every cell after its column's name; at desktop size it is a table."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate.models import ImportJob, Role
from tests.e2e.helpers import PAGE_WIDTHS, cell_tops, login, make_project, make_user, stacked_labels

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def test_a_failed_import_says_its_status_and_error_on_a_390px_screen(pages, screenshot):
    project = make_project("algebra")
    lead = make_user("lena", project, Role.LEAD)
    ImportJob.objects.create(
        project=project, requested_by=lead, filename="gsm8k_slice30.jsonl", status="failed",
        counters={"bad_lines": 30}, errors=[{"line": 1, "field": "ground_truth_answer", "message": "missing"}],
    )  # fmt: skip
    ImportJob.objects.create(
        project=project, requested_by=lead, filename="phase2_test.reconstructed.jsonl", status="succeeded",
        counters={"solutions_created": 9, "annotations_created": 9, "duplicates": 0},
    )  # fmt: skip
    page = pages.page()
    page.set_viewport_size(PHONE)
    login(page, "lena", "/projects/algebra/data/")
    table = page.locator("[data-imports]")
    failed = table.locator("tbody tr").filter(has_text="gsm8k_slice30.jsonl")
    for target in (failed.get_by_text("Failed"), failed.get_by_text("field ground_truth_answer: missing")):
        expect(target).to_be_visible()
        box = target.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    wrap = page.locator("[data-imports-section] .sl-table-wrap").evaluate("w => [w.scrollWidth, w.clientWidth]")
    assert wrap[0] <= wrap[1], wrap
    scroll_width, client_width = page.evaluate(PAGE_WIDTHS)
    assert scroll_width <= client_width
    # each value says which column it is; a failed import's empty counts are left out
    assert stacked_labels(failed) == ['"When (UTC): "', '"Who: "', '"File: "', '"Status: "', '"Errors: "']
    succeeded = table.locator("tbody tr").filter(has_text="phase2_test")
    assert '"Solutions: "' in stacked_labels(succeeded)
    page.locator("[data-imports-section]").scroll_into_view_if_needed()
    screenshot(page, "data-past-imports-390", full_page=True)

    # at desktop size it is the table it was
    page.set_viewport_size({"width": 1440, "height": 900})
    expect(table.locator("thead")).to_be_visible()
    cells = failed.locator("td")
    tops = cell_tops(cells)
    assert len(tops) == 1, tops
