"""The step page's accessibility fixes on the compare page, checked in real Chromium: keys act only
with focus in the page and honour the one "Single-key shortcuts" switch (shared with the step page,
remembered), texts name no key that does nothing while it is off (on both pages), a pressed button
keeps focus, guidelines and problem headings start at h3 under a named, focusable guidelines box,
and the save status is not read out on every choice (failures are)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Membership, Preference, Role
from annotate.services.imports import import_file
from tests.e2e.helpers import STEPS, make_project, make_solution, make_user, open_workspace, wait_ready
from tests.e2e.test_compare import LINES

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LIVE_TEXT = """() => [...document.querySelectorAll('[aria-live], [role=status], [role=alert]')]
    .map(e => e.textContent.trim()).filter(Boolean)"""


def _compare(pages, tmp_path: Path, guidelines: str = "# How to compare\n\nPrefer the later **first error**."):
    project = make_project("duel", name="Which is better", task_kind="compare", guidelines=guidelines)
    user = make_user("ann", project)
    path = tmp_path / "pairs.jsonl"
    lines = [{**line, "problem": "# Task\n\n" + line["problem"]} for line in LINES[:4]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_file(project=project, path=path)
    page = pages.page()
    open_workspace(page, "ann", slug="duel")
    expect(page.locator(".sl-candidate")).to_have_count(2)
    return user, page


def test_keys_act_only_with_focus_in_the_page(pages, tmp_path: Path):
    user, page = _compare(pages, tmp_path)
    verdict = page.locator(".sl-compare-verdict")
    # The pair shown, focus is in the page (its Problem heading): keys act at once.
    expect(page.get_by_role("heading", level=2, name="Problem")).to_be_focused()

    header_link = page.get_by_role("navigation", name="Account").get_by_role("link", name="Projects")
    header_link.focus()
    page.keyboard.press("a")
    page.wait_for_timeout(200)
    expect(verdict).to_have_text(re.compile("^Which is better"))

    # A pressed button keeps focus (it is drawn anew), so the keyboard goes on from there.
    page.get_by_role("button", name="B is better").click()
    expect(page.get_by_role("button", name="B is better")).to_be_focused()
    page.keyboard.press("2")
    expect(verdict).to_have_text("B is clearly better")

    # Enter on the header link or the page body submits nothing.
    header_link.focus()
    page.keyboard.press("Backspace")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("Enter")
    page.wait_for_timeout(400)
    expect(verdict).to_have_text("B is clearly better")
    assert not Preference.objects.exists()

    page.get_by_role("button", name="Submit (Enter)").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")
    assert Preference.objects.get(annotator=user).strength == 2


def test_the_shortcuts_switch_is_shared_with_the_step_page_and_names_no_dead_key(pages, screenshot, tmp_path: Path):
    user, page = _compare(pages, tmp_path)
    switch = page.get_by_role("checkbox", name="Single-key shortcuts")
    expect(switch).to_be_checked()
    expect(page.locator(".sl-compare-choices kbd").first).to_be_visible()
    switch.uncheck()

    expect(page.locator(".sl-keyhint")).to_be_hidden()
    expect(page.locator(".sl-compare-choices kbd").first).to_be_hidden()
    expect(page.get_by_role("button", name="A is better")).not_to_have_attribute("aria-keyshortcuts", re.compile("."))
    verdict = page.locator(".sl-compare-verdict")
    expect(verdict).to_have_text("Which is better? A, B or a tie")
    submit = page.get_by_role("button", name="Submit", exact=True)
    submit.click()
    expect(page.locator(".sl-alert")).to_have_text("Choose A, B or tie first.")
    screenshot(page, "compare-shortcuts-off", full_page=True)

    page.locator(".sl-compare-page").click(position={"x": 5, "y": 5})
    for key in ("a", "ArrowRight", "t", "3", "?"):
        page.keyboard.press(key)
    page.wait_for_timeout(300)
    expect(verdict).to_have_text("Which is better? A, B or a tie")
    expect(page.get_by_role("dialog")).to_have_count(0)

    # The buttons do it all, by mouse or keyboard; the prompts name none of the keys.
    page.get_by_role("button", name="A is better").focus()
    page.keyboard.press("Space")
    expect(verdict).to_have_text("A is better: by how much? slightly, clearly or much")
    submit.click()
    expect(page.locator(".sl-alert")).to_have_text("Choose by how much A is better: slightly, clearly or much.")
    page.get_by_role("button", name="Much").click()
    submit.click()
    expect(page.locator(".sl-save")).to_have_text("Submitted (1 this session)")

    # Remembered, and the same switch on the step page: its footer names buttons, not keys.
    page.reload()
    expect(page.get_by_role("checkbox", name="Single-key shortcuts")).not_to_be_checked()
    algebra = make_project("algebra")
    Membership.objects.create(project=algebra, user=user, role=Role.ANNOTATOR)
    make_solution(algebra, STEPS)
    page.goto("/annotate/algebra/")
    wait_ready(page)
    expect(page.get_by_role("checkbox", name="Single-key shortcuts")).not_to_be_checked()
    footer = page.locator(".sl-footer")
    expect(footer).to_have_text("Rate the highlighted step: Negative, Neutral or Positive.")
    screenshot(page, "workspace-shortcuts-off-footer")
    page.get_by_role("checkbox", name="Single-key shortcuts").check()
    expect(footer).to_have_text("Rate the highlighted step: 1 Negative · 2 Neutral · 3 Positive.")

    # On again here: on again on the compare page.
    page.goto("/annotate/duel/")
    expect(page.get_by_role("checkbox", name="Single-key shortcuts")).to_be_checked()
    expect(page.get_by_role("button", name="Submit (Enter)")).to_be_visible()


def test_guidelines_are_a_named_focusable_region_with_headings_in_order(pages, screenshot, tmp_path: Path):
    _, page = _compare(pages, tmp_path)
    page.get_by_role("heading", level=2, name="Guidelines").click()  # the summary opens the box
    box = page.get_by_role("region", name="Guidelines")
    expect(box).to_have_attribute("tabindex", "0")
    expect(box.get_by_role("heading", level=3, name="How to compare")).to_be_visible()
    expect(page.locator(".sl-problem-text").get_by_role("heading", level=3, name="Task")).to_be_visible()
    rendered = ".sl-guidelines :is(h1, h2), .sl-problem-text :is(h1, h2)"
    expect(page.locator(rendered)).to_have_count(0)
    expect(page.locator("h1")).to_have_count(1)
    box.focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")  # reached by the keyboard: the ring shows
    expect(box).to_be_focused()
    assert box.evaluate("e => [e.matches(':focus-visible'), getComputedStyle(e).outlineStyle]") == [True, "solid"]


def test_saves_are_not_read_out_but_failures_are(pages, tmp_path: Path):
    _, page = _compare(pages, tmp_path)
    status = page.locator(".sl-bar .sl-save")
    expect(status).not_to_have_attribute("aria-live", "polite")
    page.keyboard.press("a")
    expect(status).to_have_text("Saved")
    live = page.evaluate(LIVE_TEXT)
    assert not any("Sav" in t for t in live), live

    page.context.route("**/api/v1/assignments/*/draft/", lambda route: route.abort())
    page.keyboard.press("3")
    expect(page.get_by_role("status").filter(has_text="Offline")).to_have_count(1)


def test_a_marked_steps_button_is_named_with_the_word_it_shows(pages, tmp_path: Path):
    """Marked, a step's button shows "Unmark" but was named "A: step 1 is the first wrong step": a
    speech-input user saying "click Unmark" reached nothing (WCAG 2.5.3, axe's
    label-content-name-mismatch). The name now holds the word shown, and the pressed state stays."""
    _user, page = _compare(pages, tmp_path)
    page.keyboard.press("q")
    marked = page.locator('[data-side="A"] .sl-first-wrong .sl-mark-wrong')
    expect(marked).to_have_text("Unmark")
    expect(marked).to_have_attribute("aria-pressed", "true")
    expect(marked).to_have_accessible_name("Unmark A: step 1 as the first wrong step")
    marked.click()  # the button unmarks
    expect(page.locator('[data-side="A"] .sl-first-wrong')).to_have_count(0)
    expect(page.get_by_role("button", name="A: step 1 is the first wrong step")).to_have_attribute(
        "aria-pressed", "false"
    )
