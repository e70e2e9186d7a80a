"""What the workspace shows, beyond the labeling flow: PRM800K's answer line, key badges on every
rating button, the "Resumed" notice only for restored work, and the favicon."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Assignment
from tests.e2e.helpers import (
    STEPS,
    current_step,
    make_project,
    make_solution,
    make_user,
    open_workspace,
    wait_ready,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_answer_step_is_an_answer_line_not_a_heading(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    make_solution(project, ["So $x^2 + 1 = 10$.", "# Answer\n\n10"])
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("3")
    answer = current_step(page).locator(".sl-step-text")
    expect(answer.locator("h1")).to_have_count(0)
    expect(answer.locator(".sl-answer")).to_have_text("Answer: 10")
    # The answer line is body-sized, not a page title.
    font_size = "e => parseFloat(getComputedStyle(e).fontSize)"
    size = answer.locator(".sl-answer").evaluate(font_size)
    body = current_step(page).evaluate(font_size)
    assert size <= body * 1.05, (size, body)
    screenshot(page, "workspace-answer-line")


def test_bare_latex_answers_are_typeset(pages, screenshot):
    # PRM800K stores answers as bare LaTeX (no $ around them): they are typeset, not shown as source.
    project = make_project()
    make_user("ann", project)
    make_solution(project, ["So it is one sixth.", "# Answer\n\n\\frac{1}{6}"], answer="\\frac{1}{6}")
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("3")
    answer = current_step(page).locator(".sl-answer")
    expect(answer.locator(".katex .mfrac")).to_have_count(1)
    expect(answer.locator(".katex-html")).not_to_contain_text("frac")
    expect(page.locator(".sl-gt .katex .mfrac")).to_have_count(1)  # the ground truth, shown by default
    screenshot(page, "workspace-answer-latex")


def test_alternative_rating_buttons_show_their_keys(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    make_solution(project, ["Substitute: $x^2 = 3^2$.", "So $x^2 = 6$."])
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("3")
    page.keyboard.press("1")
    page.keyboard.press("a")
    page.keyboard.type("So $x^2 = 9$.")
    page.keyboard.press("Enter")
    alternative = page.get_by_role("listitem", name="Alternative 1 (yours)")
    group = alternative.get_by_role("group", name="Rate alternative 1")
    expect(group.get_by_role("button")).to_have_text(["−Negative1", "○Neutral2", "+Positive3", "⚑Flagf"])
    for key, name in (("1", "Negative"), ("2", "Neutral"), ("3", "Positive")):
        button = group.get_by_role("button", name=name, exact=True)
        expect(button.locator("kbd")).to_be_visible()
        expect(button).to_have_attribute("aria-keyshortcuts", key)
    page.keyboard.press("3")
    # The alternative was rated last: f now acts on it, and its Flag button shows the key.
    expect(group.get_by_role("button", name="Flag").locator("kbd")).to_be_visible()
    page.keyboard.press("f")
    expect(group.get_by_role("button", name="Flag")).to_have_attribute("aria-pressed", "true")
    screenshot(page, "workspace-alternative-key-badges")


def test_resumed_only_when_saved_work_was_restored(pages):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    # The untouched task's draft (its key) is stored on the server, but the bar does not report a
    # save before any rating: "Saved" there reads as if work had been kept.
    assignment = Assignment.objects.get(solution__project=project)
    for _ in range(50):
        assignment.refresh_from_db()
        if (assignment.draft or {}).get("key"):
            break
        page.wait_for_timeout(100)
    assert assignment.draft["key"], assignment.draft
    expect(page.locator(".sl-save")).to_have_text("")
    page.reload()
    wait_ready(page)
    expect(current_step(page)).to_contain_text("Step 1")
    expect(page.locator(".sl-notice")).not_to_contain_text("Resumed")

    page.keyboard.press("3")
    expect(page.locator(".sl-save")).to_have_text("Saved")
    page.reload()
    wait_ready(page)
    expect(page.locator(".sl-notice")).to_contain_text("Resumed your saved work")


def test_pages_have_a_favicon(pages):
    project = make_project()
    make_user("ann", project)
    page = pages.page()
    open_workspace(page, "ann")
    href = page.locator("link[rel=icon]").get_attribute("href")
    assert href and href.endswith("favicon.svg")
    icon = page.request.get(href)
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    # Pages without the link (the admin's) get it where browsers look by default.
    fallback = page.request.get("/favicon.ico")
    assert fallback.status == 200 and fallback.url.endswith("favicon.svg")


def test_a_refused_late_submit_is_shown_with_its_labels_until_dismissed(pages, screenshot):
    """The lease ran out and another annotator took the solution before the submit arrived: the
    server refuses it (409) and keeps it; the workspace shows it back, and Dismiss clears it."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.models import Annotation, Assignment
    from annotate.services import queue

    project = make_project(overlap=1)
    make_user("ann", project)
    bob = make_user("bob", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    for key in ("3", "2", "f", "1"):
        page.keyboard.press(key)
    expect(page.locator(".sl-footer")).to_contain_text("found error")
    mine = Assignment.objects.get(annotator__username="ann")
    Assignment.objects.filter(pk=mine.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert queue.claim_next(project=project, user=bob).solution_id == mine.solution_id

    page.keyboard.press("Enter")
    # one message: the Not recorded box, with a word beside it, not the API's text in an alert too
    expect(page.locator(".sl-notice")).to_have_text("Not submitted: your ratings are shown under Not recorded above.")
    expect(page.get_by_role("region", name="Submits that were not recorded")).to_contain_text("Step 3 Negative")
    expect(page.locator(".sl-alert")).to_be_hidden()
    assert not Annotation.objects.exists()
    page.reload()
    wait_ready(page)
    notice = page.get_by_role("region", name="Submits that were not recorded")
    expect(notice).to_contain_text("Not recorded:")
    expect(notice).to_contain_text("Step 1 Positive · Step 2 Neutral (flagged) · Step 3 Negative · finish: found error")
    expect(notice.locator(".katex").first).to_be_visible()  # the problem, math rendered
    screenshot(page, "workspace-refused-submit")

    notice.get_by_role("button", name="Dismiss").click()
    expect(notice).to_be_hidden()
    assert Assignment.objects.get(pk=mine.pk).draft is None
    page.reload()
    wait_ready(page)
    expect(page.locator(".sl-refused-item")).to_have_count(0)


def test_a_focused_step_is_described_by_its_text_and_rating_and_a_dead_key_says_why(pages):
    """A screen reader heard only "Step 2" as focus moved on; a rating key on a rated phase-1 step
    did nothing without a word."""
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    first = page.locator(".sl-step").nth(0)
    expect(first).to_have_accessible_description(re.compile(r"^rate this step Substitute x ?= ?3"))
    page.keyboard.press("3")
    expect(first).to_have_accessible_description(re.compile(r"^Positive Substitute"))
    page.keyboard.press("1")  # the current step is now step 2: rated on
    page.keyboard.press("1")  # step 2 Negative ends the pass: a third key changes nothing
    expect(page.locator(".sl-notice")).to_have_text("Step 2 is rated already: Backspace undoes that rating.")
