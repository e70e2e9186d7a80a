"""The accessibility audit's workspace and guidelines-preview findings, checked in real Chromium:
single-key shortcuts that can be turned off and act only with focus in the workspace (WCAG 2.1.4),
one scroll box less at 200% zoom, quiet save status, named scroll boxes, heading order, a visible
focus ring and the reason dialog's hint read with its box."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, Role
from tests.e2e.helpers import (
    STEPS,
    current_step,
    expect_rated,
    login,
    make_project,
    make_solution,
    make_user,
    open_workspace,
    wait_ready,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Text of every live region on the page (what a screen reader would be told as it changes).
LIVE_TEXT = """() => [...document.querySelectorAll('[aria-live], [role=status], [role=alert]')]
    .map(e => e.textContent.trim()).filter(Boolean)"""


def _workspace(pages, steps=STEPS):
    project = make_project()
    make_user("ann", project)
    make_solution(project, steps)
    page = pages.page()
    open_workspace(page, "ann")
    return page


def test_shortcuts_act_only_with_focus_in_the_workspace(pages, screenshot):
    page = _workspace(pages)
    header_link = page.get_by_role("navigation", name="Account").get_by_role("link", name="Projects")

    # A header link keeps its keys: 3 rates nothing there.
    header_link.focus()
    page.keyboard.press("3")
    page.wait_for_timeout(200)
    expect_rated(page, 0)

    # In the workspace the fast keyboard flow is as it was.
    current_step(page).get_by_role("button", name="Positive").focus()
    for _ in STEPS:
        page.keyboard.press("3")
    expect_rated(page, 3)

    # Backspace on the header link undoes nothing.
    header_link.focus()
    page.keyboard.press("Backspace")
    page.wait_for_timeout(200)
    expect_rated(page, 3)

    # Enter with focus on the page body (nothing focused) submits nothing.
    page.evaluate("document.activeElement.blur()")
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)
    expect_rated(page, 3)
    assert Annotation.objects.count() == 0

    # Back in the workspace, Enter submits.
    page.get_by_role("button", name="Submit").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="No more solutions to label right now")).to_be_visible()
    assert Annotation.objects.count() == 1


def test_single_key_shortcuts_can_be_turned_off_and_stay_off(pages, screenshot):
    page = _workspace(pages)
    switch = page.get_by_role("checkbox", name="Single-key shortcuts")
    expect(switch).to_be_checked()  # on by default
    switch.uncheck()
    expect(page.locator(".sl-keyhint")).to_be_hidden()  # the key list says nothing that does not work
    screenshot(page, "a11y-shortcuts-off")

    current_step(page).focus()
    for key in ("3", "1", "Enter", "?"):
        page.keyboard.press(key)
    page.wait_for_timeout(300)
    expect_rated(page, 0)
    expect(page.get_by_role("dialog")).to_have_count(0)

    # Remembered in this browser.
    page.reload()
    wait_ready(page)
    expect(page.get_by_role("checkbox", name="Single-key shortcuts")).not_to_be_checked()
    page.keyboard.press("3")
    page.wait_for_timeout(300)
    expect_rated(page, 0)
    # The buttons still work, the keyboard reaching them.
    current_step(page).get_by_role("button", name="Positive").focus()
    page.keyboard.press("Space")
    expect_rated(page, 1)

    # Turned on again, keys rate.
    page.get_by_role("checkbox", name="Single-key shortcuts").check()
    current_step(page).get_by_role("button", name="Positive").focus()
    page.keyboard.press("3")
    expect_rated(page, 2)


def test_narrow_screen_has_no_nested_scroll_boxes_for_the_guidelines(pages, screenshot):
    page = pages.page()
    page.set_viewport_size({"width": 720, "height": 450})  # a 1440x900 screen at 200% zoom
    project = make_project(guidelines="# Rules\n\n" + "\n\n".join(f"Rule {i}: rate carefully." for i in range(40)))
    make_user("ann", project)
    make_solution(project, STEPS)
    open_workspace(page, "ann")
    side = page.locator(".sl-side")
    guidelines = page.locator(".sl-guidelines")
    assert side.evaluate("e => getComputedStyle(e).position") == "static"
    assert side.evaluate("e => [getComputedStyle(e).overflowY, getComputedStyle(e).maxHeight]") == ["visible", "none"]
    assert guidelines.evaluate("e => getComputedStyle(e).overflowY") == "visible"
    assert guidelines.evaluate("e => e.scrollHeight <= e.clientHeight + 1")  # all of it in the page
    expect(guidelines).to_contain_text("Rule 39")
    page.get_by_text("Rule 39").scroll_into_view_if_needed()
    screenshot(page, "a11y-narrow-guidelines")

    # Wide, the panel keeps its own scroll.
    page.set_viewport_size({"width": 1440, "height": 900})
    assert side.evaluate("e => getComputedStyle(e).position") == "sticky"


def test_saves_are_not_read_out_but_failures_are(pages):
    page = _workspace(pages)
    expect(page.locator(".sl-save")).not_to_have_attribute("aria-live", "polite")
    assert page.locator(".sl-footer").evaluate("e => !e.closest('[aria-live], [role=status], [role=alert]')")
    page.keyboard.press("3")
    expect(page.locator(".sl-save")).to_have_text("Saved")  # shown in the bar
    live = page.evaluate(LIVE_TEXT)
    assert not any("Sav" in t for t in live), live  # not "Saving…", "Saved"

    page.context.route("**/api/v1/assignments/*/draft/", lambda route: route.abort())
    page.keyboard.press("2")
    expect(page.get_by_role("status").filter(has_text="Offline: saved in this browser")).to_have_count(1)


def test_scroll_boxes_are_named_and_reachable_with_headings_in_order(pages, screenshot):
    page = _workspace(pages)
    box = page.get_by_role("region", name="Guidelines")
    expect(box).to_have_attribute("tabindex", "0")
    expect(box).to_have_class("sl-md sl-guidelines")
    # The guidelines' "# How to rate" sits under the panel's "Guidelines" h2.
    expect(box.get_by_role("heading", level=3, name="How to rate")).to_be_visible()
    expect(page.locator(".sl-guidelines h1, .sl-guidelines h2")).to_have_count(0)
    expect(page.locator("h1")).to_have_count(1)
    box.focus()
    assert box.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"


def test_keyboard_focus_on_a_step_is_clearly_visible(pages, screenshot):
    page = _workspace(pages)
    page.keyboard.press("3")  # focus follows to step 2, moved there by a key: :focus-visible
    step = current_step(page)
    expect(step).to_be_focused()
    style = "e => [e.matches(':focus-visible'), getComputedStyle(e).outlineStyle, getComputedStyle(e).outlineWidth]"
    assert step.evaluate(style) == [True, "solid", "3px"]
    screenshot(page, "a11y-step-focus")
    # The current step without focus has no ring: focus is told apart from "current".
    page.evaluate("document.activeElement.blur()")
    assert step.evaluate(style)[1] == "none"


def test_reason_dialog_hint_is_read_with_its_box(pages):
    page = _workspace(pages)
    page.get_by_role("button", name="Give up").click()
    box = page.get_by_role("dialog").get_by_label("Reason (required)")
    expect(box).to_be_focused()
    expect(box).to_have_accessible_description("Enter confirms, Shift+Enter adds a line, Esc cancels.")


def test_settings_preview_is_a_named_quiet_scroll_box_with_headings_in_order(pages, screenshot):
    project = make_project("algebra")
    make_user("lena", project, Role.LEAD)
    page = pages.page()
    login(page, "lena", "/projects/algebra/settings/")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    region = page.get_by_role("region", name="Preview, as annotators see it")
    expect(region).to_have_attribute("tabindex", "0")
    expect(page.locator("[aria-live]").filter(has=page.locator("[data-markdown-preview]"))).to_have_count(0)
    expect(page.locator("[data-markdown-preview]")).not_to_have_attribute("aria-live", "polite")
    page.get_by_label("Guidelines").fill("# Rules\n\n## Signs\n\nThe answer is $\\sqrt{2}$.")
    expect(region.get_by_role("heading", level=3, name="Rules")).to_be_visible()
    expect(region.get_by_role("heading", level=4, name="Signs")).to_be_visible()
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    expect(page.get_by_role("heading", level=2, name="Preview, as annotators see it")).to_be_visible()
    region.focus()
    screenshot(page, "a11y-settings-preview", full_page=True)


# WCAG's contrast ratio of an element's text colour on the background it is drawn over.
CONTRAST = """(el) => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 4).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let bg = el;
  while (bg && (rgb(getComputedStyle(bg).backgroundColor)[3] ?? 1) === 0) bg = bg.parentElement;
  const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(getComputedStyle(bg).backgroundColor))];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


def test_a_neutral_rating_on_the_current_step_is_readable(pages):
    """Phase 1 keeps a step rated Neutral current (nothing there is Positive yet): its "Neutral"
    status, grey on the current step's blue, had a contrast of 3.99 (axe color-contrast; 4.5 is
    WCAG AA's minimum for text this size)."""
    from annotate.models import LabelingMode

    project = make_project(labeling_mode=LabelingMode.PHASE1)
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("2")
    status = current_step(page).locator('.sl-step-status[data-rating="0"]')
    expect(status).to_have_text("Neutral")
    assert status.evaluate(CONTRAST) >= 4.5
    page.keyboard.press("a")  # a neutral alternative's symbol, on the same background
    page.keyboard.type("Another way: x = 3.")
    page.keyboard.press("Enter")
    page.keyboard.press("2")
    symbol = current_step(page).locator(".sl-alt .sl-neu[aria-pressed=true] .sl-sym")
    assert symbol.evaluate(CONTRAST) >= 3  # a graphical object's minimum (WCAG 1.4.11)


def _told(page) -> str:
    """What the workspace's live regions say now, in one string."""
    return " | ".join(page.evaluate(LIVE_TEXT))


def test_what_a_key_did_is_announced_even_where_focus_stays(pages):
    """A screen reader hears a change of focus, not a change of the focused step's text: the flag
    (`f`), a Negative that ends the pass, a rated alternative and an undo left focus where it was
    and were told nowhere, so a blind labeler could not tell whether the key had acted."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("3")
    expect(page.locator(".sl-keynews")).to_have_text("Step 1 rated Positive.")
    page.keyboard.press("f")  # flags step 1; focus stays on step 2
    expect(page.locator(".sl-keynews")).to_have_text("Step 1 flagged as unsure.")
    page.keyboard.press("f")
    expect(page.locator(".sl-keynews")).to_have_text("Flag removed from step 1.")
    page.keyboard.press("1")  # ends the pass on step 2: focus stays there
    expect(current_step(page)).to_be_focused()
    told = page.locator(".sl-keynews")
    expect(told).to_contain_text("Step 2 rated Negative.")
    expect(told).to_contain_text("submit")  # and what comes next, from the footer's line
    assert "Step 2 rated Negative." in _told(page)
    page.keyboard.press("a")
    page.keyboard.type("Instead: $3^2 = 9$.")
    page.keyboard.press("Enter")
    expect(told).to_have_text("Alternative 1 written at step 2.")
    page.keyboard.press("3")  # complete again (the written alternative waited for its rating)
    expect(told).to_have_text(re.compile(r"^Alternative 1 at step 2 rated Positive\. You found the error: press Enter"))
    page.keyboard.press("Backspace")
    expect(told).to_have_text("Undone: your rating of alternative 1 at step 2.")
    # The region is polite and not the visible notice: nothing is shown twice.
    expect(told).to_have_attribute("aria-live", "polite")
    expect(page.locator(".sl-notice")).to_have_text("")
    page.keyboard.press("Backspace")
    page.keyboard.press("Backspace")
    expect(told).to_have_text("Undone: your rating of step 2.")
    page.keyboard.press("3")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    # The next solution starts with nothing stale read out about the last one.
    expect(page.locator(".sl-notice")).to_have_text("Submitted. Here is the next solution.")
    expect(told).to_have_text("")


def test_dismissing_a_refused_submit_keeps_focus_in_the_workspace(pages):
    """Dismiss disabled its own button (focus fell to the page's body) and then removed it: a
    keyboard or screen-reader user was thrown to the top of the page with nothing said. Focus now
    goes to the next Dismiss, or after the last one to the step being rated."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.models import Assignment
    from annotate.services import queue

    project = make_project(overlap=1)
    make_user("ann", project)
    bob = make_user("bob", project)
    make_solution(project, STEPS)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("3")
    mine = Assignment.objects.get(annotator__username="ann")
    Assignment.objects.filter(pk=mine.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert queue.claim_next(project=project, user=bob).solution_id == mine.solution_id
    page.keyboard.press("3")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    notice = page.get_by_role("region", name="Submits that were not recorded")
    expect(notice).to_contain_text("Step 1 Positive")
    page.reload()  # the refused submit listed, and the next solution to rate
    wait_ready(page)
    dismiss = notice.get_by_role("button", name="Dismiss")
    dismiss.focus()
    page.keyboard.press("Enter")
    expect(notice).to_be_hidden()
    expect(current_step(page)).to_be_focused()
    page.keyboard.press("3")  # the keys act at once
    expect(page.locator(".sl-keynews")).to_have_text("Step 1 rated Positive.")
