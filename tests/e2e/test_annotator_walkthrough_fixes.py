"""Step workspace defects an annotator's walkthrough in Chromium found: a held key rated (or undid)
step after step; an old copy of a submitted solution (Back / Forward) was a dead end; a submit
after the session ended showed DRF's "Authentication credentials were not provided."; a refused
submit's error was drawn behind the sticky bar while the bar said "Saved in this browser"; the
shortcuts dialog opened scrolled down; Esc dropped a half-written critique; and a critique saved
just before the tab was hidden while offline left the bar at "Saving…".
Screenshots: test-results/screenshots/walkthrough-*.png."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotate.models import Assignment, AssignmentStatus
from tests.e2e.helpers import (
    PASSWORD,
    STEPS,
    annotation_for,
    current_step,
    expect_rated,
    main_ratings,
    make_project,
    make_solution,
    make_user,
    open_workspace,
    wait_ready,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

STATUS = ".sl-bar .sl-save"


def _two_solutions():
    project = make_project()
    user = make_user("ann", project)
    first = make_solution(project, STEPS, problem="Alpha problem", priority=2)
    second = make_solution(project, STEPS, problem="Beta problem", priority=1)
    return user, first, second


def test_a_held_rating_or_undo_key_acts_once(pages):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")

    # keyboard.down on a key already down sends the auto-repeat keydowns of a held key
    for _ in range(4):
        page.keyboard.down("3")
    page.keyboard.up("3")
    expect_rated(page, 1)
    page.keyboard.press("3")
    expect_rated(page, 2)
    for _ in range(3):
        page.keyboard.down("Backspace")
    page.keyboard.up("Backspace")
    expect_rated(page, 1)
    expect(current_step(page)).to_have_attribute("aria-label", "Step 2")


def test_an_old_copy_of_a_submitted_solution_moves_on_to_the_next(pages, screenshot):
    """Back / Forward may show the page with the tasks/next answer of a solution already
    submitted (served from the browser's cache here): the first save there is refused (409),
    and the page moves on to the next solution with a word why (naming the rating not recorded)
    instead of a dead end."""
    user, first, _second = _two_solutions()
    page = pages.page()
    open_workspace(page, "ann")
    expect(page.locator(".sl-problem-text")).to_have_text("Alpha problem")
    client = Client()
    client.force_login(user)
    old_copy = client.get("/api/v1/projects/algebra/tasks/next/").json()  # Alpha, as served
    for _ in STEPS:
        page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.locator(".sl-problem-text")).to_have_text("Beta problem")

    page.route("**/tasks/next/", lambda route: route.fulfill(json=old_copy), times=1)
    page.reload()
    expect(page.locator(".sl-problem-text")).to_have_text("Alpha problem")  # the old copy
    page.keyboard.press("3")
    expect(page.locator(".sl-problem-text")).to_have_text("Beta problem")
    # the rating pressed on the old copy never reached the server: the alert names it
    expect(page.locator(".sl-alert")).to_have_text(
        "This assignment was already submitted. Not recorded from this tab: Step 1 Positive. Here is the next solution."
    )
    screenshot(page, "walkthrough-old-copy-moved-on")
    assert main_ratings(annotation_for(first)) == [1, 1, 1]  # the first submit stands


def test_a_submit_of_a_solution_finished_elsewhere_shows_the_next_one(pages):
    user, first, _second = _two_solutions()
    page = pages.page()
    open_workspace(page, "ann")
    expect(page.locator(".sl-problem-text")).to_have_text("Alpha problem")
    # submitted meanwhile (another tab, or before this copy of the page was shown)
    Assignment.objects.filter(annotator=user, solution=first).update(status=AssignmentStatus.SUBMITTED)
    for _ in STEPS:
        page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.locator(".sl-problem-text")).to_have_text("Beta problem")
    expect(page.locator(".sl-alert")).to_have_text(
        re.compile(r"^Not submitted: This assignment was already submitted.* Here is the next solution\.$")
    )
    expect_rated(page, 0)


def test_a_submit_after_the_session_ended_asks_to_log_in_and_goes_through_after(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    ctx = pages.context()
    page = pages.page(ctx)
    open_workspace(page, "ann")
    for _ in STEPS:
        page.keyboard.press("3")
    ctx.clear_cookies()  # the session ended (timed out, or logged out in another tab)
    page.keyboard.press("Enter")

    alert = page.locator(".sl-alert")
    expect(alert).to_contain_text("Not submitted. You are logged out — log in again.")
    expect(alert).not_to_contain_text("credentials")
    link = alert.get_by_role("link", name="log in again")
    expect(link).to_have_attribute("href", "/accounts/login/?next=%2Fannotate%2Falgebra%2F")
    expect(page.locator(STATUS)).to_have_text(re.compile(r"^Not submitted · Saved in this browser"))
    screenshot(page, "walkthrough-logged-out-submit")

    link.click()
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url("**/annotate/algebra/")
    wait_ready(page)
    expect_rated(page, 3)  # the work kept in this browser is back
    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator(".sl-notice")).to_contain_text("Submitted.")
    assert main_ratings(annotation_for(solution)) == [1, 1, 1]


def test_a_refused_submit_is_shown_below_the_sticky_bar_and_the_bar_says_so(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    make_solution(project, [f"Step {i + 1}: $x_{{{i}}} = {i}$." for i in range(25)])
    page = pages.page()
    refusal = {"steps[24].rating": ["Refused for this test."]}
    page.route("**/submit/", lambda route: route.fulfill(status=400, json=refusal))  # routed before the page loads
    open_workspace(page, "ann")
    for _ in range(25):
        page.keyboard.press("3")
    assert page.evaluate("window.scrollY") > 500  # at the last step, far below the top
    page.keyboard.press("Enter")

    alert = page.locator(".sl-alert")
    expect(alert).to_contain_text("Not submitted: steps[24].rating")
    box, bar = alert.bounding_box(), page.locator(".sl-bar").bounding_box()
    assert box["y"] >= bar["y"] + bar["height"], (box, bar)  # not behind the sticky bar
    assert box["y"] + box["height"] <= page.viewport_size["height"], box
    expect(page.locator(STATUS)).to_have_text("Not submitted · Saved")
    screenshot(page, "walkthrough-refused-submit-in-view")

    page.keyboard.press("Backspace")  # a change after the refusal: the bar describes it
    expect(page.locator(STATUS)).to_have_text("Saved")


def test_the_shortcuts_dialog_opens_at_its_top(pages):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page(pages.context(viewport={"width": 1280, "height": 600}))
    open_workspace(page, "ann")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Close")).to_be_focused()
    scroll = dialog.evaluate("(d) => [d.scrollTop, d.scrollHeight - d.clientHeight]")
    assert scroll[1] > 0 and scroll[0] == 0, scroll  # a list taller than the screen, shown from its top
    expect(dialog.get_by_role("heading", name="Keyboard shortcuts")).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_esc_keeps_a_half_written_critique(pages):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("1")
    page.keyboard.press("e")
    box = current_step(page).locator("textarea[id^=sl-critique-]")
    expect(box).to_be_focused()
    page.keyboard.type("The square of 3 is")
    page.keyboard.press("Escape")
    expect(box).to_be_hidden()
    expect(current_step(page).locator(".sl-critique-open")).to_have_text("Finish critique (not saved) (e)")

    page.keyboard.press("e")
    expect(box).to_be_focused()
    expect(box).to_have_value("The square of 3 is")
    page.keyboard.type(" 9, not 6.")
    page.keyboard.press("Enter")
    expect(current_step(page).locator(".sl-critique-text")).to_have_text("The square of 3 is 9, not 6.")
    expect(current_step(page).locator(".sl-critique-open")).to_have_text("Critique (e)")
    # math in a critique renders as in the steps and a corrected step (it showed the raw $...$)
    page.keyboard.press("e")
    box.fill("So $3^2 = 9$.")
    page.keyboard.press("Enter")
    expect(current_step(page).locator(".sl-critique-text .katex")).to_have_count(1)
    expect(current_step(page).locator(".sl-critique-text")).not_to_contain_text("$")


def test_a_critique_saved_as_the_tab_is_hidden_offline_says_offline(pages):
    """The tab hidden (or closed) sends the draft at once with keepalive, cancelling the debounced
    save; that save's answer is what the bar reports, as for a rating's save."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    ctx = pages.context()
    page = pages.page(ctx)
    open_workspace(page, "ann")
    page.keyboard.press("3")
    expect(page.locator(STATUS)).to_have_text("Saved")
    page.keyboard.press("e")
    page.keyboard.type("Right: 3 squared is 9.")
    page.keyboard.press("Enter")
    expect(page.locator(STATUS)).to_have_text("Saving…")
    ctx.set_offline(True)
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))")
    expect(page.locator(STATUS)).to_have_text("Offline: saved in this browser, will retry")
    ctx.set_offline(False)


def test_on_a_phone_an_undo_button_mends_a_mistaken_tap(pages, screenshot):
    """A rated step's buttons are disabled and Backspace needs a keyboard: on a phone a wrong tap
    could only be mended by skipping the whole solution."""
    project = make_project()
    make_user("ann", project)
    solution = make_solution(project, STEPS)
    page = pages.page(pages.context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True))
    open_workspace(page, "ann")
    undo = page.get_by_role("button", name="Undo")
    expect(undo).to_be_disabled()  # nothing to undo yet
    current_step(page).get_by_role("button", name="Negative").tap()  # meant Positive
    expect_rated(page, 1)
    undo.tap()
    expect_rated(page, 0)
    expect(undo).to_be_disabled()
    for _ in STEPS:
        current_step(page).get_by_role("button", name="Positive").tap()
    screenshot(page, "workspace-phone-undo")
    page.get_by_role("button", name="Submit").tap()
    expect(page.get_by_role("heading", name="No more solutions to label right now")).to_be_visible()
    assert main_ratings(annotation_for(solution)) == [1, 1, 1]


def test_an_annotator_who_failed_screening_is_told_so_and_nothing_more(pages):
    """A reload after a failed screening: the refusal stood beside "Loading the next solution…" for
    good. (Right after the last screening submit the empty-queue box says the same, with no Check
    again: guidance.emptyQueueText, app.refreshProgress.)"""
    from annotate.models import AnnotatorStatus, ScreeningStatus
    from tests.e2e.helpers import login

    project = make_project(screening_required=1)
    user = make_user("ann", project)
    make_solution(project, STEPS)
    AnnotatorStatus.objects.create(
        project=project, user=user, screening_status=ScreeningStatus.FAILED, screening_submitted=1
    )
    page = pages.page()
    login(page, "ann", "/annotate/algebra/")
    expect(page.get_by_text("You did not pass screening for this project")).to_be_visible()
    expect(page.get_by_text("Loading the next solution")).to_have_count(0)
    expect(page.get_by_role("button", name="Check again")).to_be_hidden()
