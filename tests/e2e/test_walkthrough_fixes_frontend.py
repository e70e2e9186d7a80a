"""Frontend defects a walkthrough of the demo found, in Chromium: a repeated Enter just after a
compare submit is taken as a repeat (as in the step workspace), `e` after rating an alternative
says whose critique it opens, and the dashboard's annotators table stays inside its card or
scrolls with a visible scrollbar at 1280, 1024 and phone widths, in step and compare projects.
Screenshots: test-results/screenshots/walkthrough-*.png."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotate.models import AnnotatorStatus, Preference, ScreeningStatus
from annotate.services.imports import import_file
from tests.e2e.helpers import SHOTS, STEPS, current_step, login, make_project, make_solution, make_user, open_workspace
from tests.e2e.test_dashboard import build_campaign
from tests.e2e.test_dashboard_compare import _build as build_compare_campaign

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _pairs(path: Path, n: int) -> Path:
    """n pairs: a right and a wrong solution of one problem each."""
    lines = [
        {"problem": f"Solve $2x = {2 * k}$.", "ground_truth_answer": str(k), "steps": [f"$x = {x}$."], "answer": str(x)}
        for k in range(5, 5 + n)
        for x in (k, 0)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_repeated_enter_right_after_a_compare_submit_is_ignored(pages, screenshot, tmp_path: Path):
    project = make_project("duel", name="Which is better", task_kind="compare")
    user = make_user("ann", project)
    import_file(project=project, path=_pairs(tmp_path / "pairs.jsonl", 2))
    page = pages.page()
    open_workspace(page, "ann", slug="duel")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    first = page.locator(".sl-problem-text").inner_text()

    page.keyboard.press("a")
    page.keyboard.press("1")  # by how much: never preselected
    page.keyboard.press("Enter")
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")
    expect(page.locator(".sl-problem-text")).not_to_have_text(first)
    page.keyboard.press("Enter")  # the same key again, a moment after the new pair appeared
    page.wait_for_timeout(200)
    expect(page.locator(".sl-alert")).to_be_hidden()
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")
    screenshot(page, "walkthrough-compare-repeated-enter")
    assert Preference.objects.filter(annotator=user).count() == 1

    # a deliberate Enter on the untouched pair, later, still says what is missing
    page.wait_for_timeout(1_100)
    page.keyboard.press("Enter")
    expect(page.locator(".sl-alert")).to_contain_text("Choose A, B or tie first")


def test_e_after_rating_an_alternative_says_it_opens_the_steps_own_critique(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")

    page.keyboard.press("1")
    page.keyboard.press("a")
    page.keyboard.type("Substitute first: $3^2 = 9$.")
    page.keyboard.press("Enter")
    page.keyboard.press("2")
    expect(current_step(page).locator(".sl-alt .sl-rate[aria-pressed=true]")).to_have_text("○Neutral2")
    page.keyboard.press("e")
    # alternatives carry no critique of their own: the box that opens says it is step 1's
    box = current_step(page).locator("textarea[id^=sl-critique-]")
    expect(box).to_be_focused()
    expect(current_step(page).locator(".sl-critique-for")).to_have_text(
        "Alternatives take no critique: this is the critique of step 1 itself."
    )
    screenshot(page, "walkthrough-critique-after-alternative", full_page=True)
    page.keyboard.press("Escape")

    # with the main line rated last (the alternative's rating undone), the same box has no such note
    page.keyboard.press("Backspace")
    expect(current_step(page).locator(".sl-alt .sl-rate[aria-pressed=true]")).to_have_count(0)
    page.keyboard.press("e")
    expect(box).to_be_focused()
    expect(current_step(page).locator(".sl-critique-for")).to_be_hidden()


DESKTOP_WIDTHS = [1280, 1024]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
# the charts redraw at the new width a moment after a resize: until then the page may be wider
PAGE_FITS = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
TABLE = """(table) => {
  const wrap = table.parentElement, box = wrap.getBoundingClientRect();
  const card = wrap.closest(".sl-card").getBoundingClientRect();
  const last = table.querySelector("thead th:last-child").getBoundingClientRect();
  return {
    widths: [table.scrollWidth, wrap.clientWidth],
    lastHeaderShown: last.right <= box.right + 0.5,
    inCard: box.right <= card.right + 0.5,
    scrolls: ["auto", "scroll"].includes(getComputedStyle(wrap).overflowX),
    scrollbar: wrap.offsetHeight - wrap.clientHeight,  // a drawn scrollbar takes height, an overlay none
  };
}"""


@pytest.fixture
def phone_pages(pages, live_server):
    """Pages in a Chromium that draws scrollbars as a browser on a screen does (Playwright's
    headless default hides them all, so a missing one would not show in a test)."""
    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, PageFactory

    browser = pages.browser.browser_type.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS, ignore_default_args=["--hide-scrollbars"]
    )
    factory = PageFactory(browser, live_server.url)
    yield factory
    factory.close()
    browser.close()
    assert factory.errors == [], factory.errors


def _open(factory, path: str, **context):
    page = factory.page(factory.context(**context))
    login(page, "lena", path)
    page.locator("#sl-dashboard[data-loaded=true]").wait_for()
    return page, page.locator('[data-slot="annotators"]')


def _check_table(pages, phone_pages, path: str, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, table = _open(pages, path)
    for width in DESKTOP_WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(PAGE_FITS)
        m = table.evaluate(TABLE)
        # the whole table is read without scrolling, "Last label" included
        assert m["widths"][0] <= m["widths"][1] and m["lastHeaderShown"] and m["inCard"], (width, m)
        page.locator("#quality").screenshot(path=str(SHOTS / f"walkthrough-{name}-annotators-{width}.png"))
    # on a phone it scrolls sideways inside its card, and a scrollbar says so (a phone's own
    # scrollbars are overlays that show only while scrolling)
    page, table = _open(phone_pages, path, **PHONE)
    page.wait_for_function(PAGE_FITS)
    m = table.evaluate(TABLE)
    assert m["inCard"] and m["scrolls"] and m["widths"][0] > m["widths"][1], m
    assert m["scrollbar"] > 0, m
    page.locator("#quality").screenshot(path=str(SHOTS / f"walkthrough-{name}-annotators-phone.png"))


def test_the_annotators_table_fits_its_card_in_a_compare_project(pages, phone_pages, tmp_path):
    project = build_compare_campaign(tmp_path).memberships.get().project
    # the demo's longer names and a screening result in every row, as the tester saw it
    for i, user in enumerate(get_user_model().objects.filter(username__in=["ann", "bo", "cy"]).order_by("username")):
        user.username = f"annotator{i + 1}"
        user.save(update_fields=["username"])
        AnnotatorStatus.objects.create(
            project=project, user=user, screening_status=ScreeningStatus.PASSED, screening_agreement=0.875
        )
    _check_table(pages, phone_pages, "/dashboard/duel/", "compare")


def test_the_annotators_table_fits_its_card_in_a_step_project(pages, phone_pages):
    build_campaign()
    _check_table(pages, phone_pages, "/dashboard/algebra/", "steps")
