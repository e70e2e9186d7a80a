"""Labeling a solution in the annotator workspace in real Chromium, with the keyboard only, checked
in the database: ratings and flags, a negative step with an alternative and a correction, undo,
phase 1's written steps, giving up and reporting a bad problem, the shortcut list.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from annotate.models import Assignment, AssignmentStatus, LabelingMode
from tests.e2e.helpers import (
    STEPS,
    annotation_for,
    annotator_on,
    current_step,
    expect_empty_queue,
    expect_rated,
    label_steps,
    main_ratings,
    make_project,
    make_solution,
    make_user,
    open_workspace,
    visible_steps,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_label_a_solution_to_the_end(pages, screenshot):
    page, solution = annotator_on(pages, STEPS)

    # Only the first step is shown and highlighted; the problem, ground truth and guidelines render.
    expect(visible_steps(page)).to_have_count(1)
    expect(current_step(page)).to_contain_text("Step 1")
    expect(page.locator(".sl-problem .katex").first).to_be_visible()
    expect(page.locator(".sl-gt")).to_contain_text("Ground-truth answer: 10")
    expect(page.locator(".sl-guidelines strong").first).to_have_text("Positive")
    group = current_step(page).get_by_role("group", name="Rate step 1")
    expect(group.get_by_role("button")).to_have_text(["−Negative1", "○Neutral2", "+Positive3", "⚑Flagf"])
    for name in ("Negative", "Neutral", "Positive"):
        expect(group.get_by_role("button", name=name, exact=True)).to_be_enabled()
    expect(page.get_by_role("button", name="Submit")).to_be_disabled()

    page.keyboard.press("3")
    expect(visible_steps(page)).to_have_count(2)
    expect(current_step(page)).to_contain_text("Step 2")
    # f flags the rating just given (step 1), not the step that came into focus; its Flag button
    # wears the f badge so the annotator sees where the key acts.
    step1_flag = page.locator(".sl-step").nth(0).get_by_role("button", name="Flag")
    expect(step1_flag.locator("kbd")).to_be_visible()
    expect(current_step(page).get_by_role("button", name="Flag").locator("kbd")).to_be_hidden()
    page.keyboard.press("f")
    expect(step1_flag).to_have_attribute("aria-pressed", "true")
    expect(current_step(page).get_by_role("button", name="Flag")).to_have_attribute("aria-pressed", "false")
    screenshot(page, "workspace-flag-after-rating")
    page.keyboard.press("2")
    expect(visible_steps(page)).to_have_count(3)
    screenshot(page, "workspace-rating-step-3")
    page.keyboard.press("3")
    expect_rated(page, 3)
    expect(page.get_by_role("button", name="Submit")).to_be_enabled()
    expect(page.locator(".sl-footer")).to_contain_text("finish: solution")
    screenshot(page, "workspace-complete-solution")
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    screenshot(page, "workspace-empty-queue")

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "solution"
    assert main_ratings(annotation) == [1, 0, 1]
    assert [s["completions"][0]["flagged"] for s in label_steps(annotation)] == [True, False, False]
    assert annotation.total_time_ms is not None and annotation.total_time_ms > 0
    assert Assignment.objects.get(solution=solution).status == AssignmentStatus.SUBMITTED
    # The progress panel counts it.
    expect(page.locator(".sl-progress")).to_contain_text("Solutions today1")


def test_enter_on_a_focused_link_follows_it_and_submits_nothing(pages):
    """A keyboard user leaving by the header's links must not submit the finished labeling."""
    page, solution = annotator_on(pages, STEPS)
    for key in ("3", "2", "3"):
        page.keyboard.press(key)
    expect_rated(page, 3)
    page.get_by_role("link", name="Projects").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: urlparse(url).path == "/")
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    assert not solution.annotations.exists()
    assert Assignment.objects.get(solution=solution).status != AssignmentStatus.SUBMITTED


def test_stop_at_a_negative_step_and_rate_an_alternative(pages, screenshot):
    page, solution = annotator_on(pages, ["Substitute: $x^2 = 3^2$.", "So $x^2 = 6$.", "The answer is $7$."])

    page.keyboard.press("3")
    page.keyboard.press("1")  # step 2 is wrong: the pass ends there
    expect(visible_steps(page)).to_have_count(2)
    expect(page.locator(".sl-step").nth(2)).to_be_hidden()
    expect(page.locator(".sl-footer")).to_contain_text("found error")

    page.keyboard.press("a")
    alt_box = page.get_by_role("textbox", name="New alternative step")
    expect(alt_box).to_be_focused()
    page.keyboard.type("So $x^2 = 9$.")
    page.keyboard.press("Enter")
    alternative = page.get_by_role("listitem", name="Alternative 1 (yours)")
    expect(alternative).to_be_focused()
    expect(alternative.locator(".katex")).to_be_visible()
    page.keyboard.press("3")
    expect(alternative.get_by_role("button", name="Positive")).to_have_attribute("aria-pressed", "true")

    page.keyboard.press("c")
    expect(page.get_by_role("textbox", name="Corrected step")).to_be_focused()
    page.keyboard.type("Since $3^2 = 9$, $x^2 = 9$.")
    page.keyboard.press("Enter")
    expect(page.locator(".sl-human-shown:visible")).to_contain_text("Corrected step:")
    screenshot(page, "workspace-found-error-alternative")
    page.keyboard.press("Enter")
    expect_empty_queue(page)

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "found_error"
    steps = label_steps(annotation)
    assert len(steps) == 2
    assert steps[1]["completions"] == [
        {"text": "So $x^2 = 6$.", "rating": -1, "flagged": False},
        {"text": "So $x^2 = 9$.", "rating": 1, "flagged": False},
    ]
    assert steps[1]["human_completion"]["text"] == "Since $3^2 = 9$, $x^2 = 9$."
    assert annotation.first_error_index == 1


def test_undo_a_rating(pages):
    page, solution = annotator_on(pages, STEPS)

    page.keyboard.press("1")  # a Negative at step 1 ends the pass ...
    expect(page.locator(".sl-footer")).to_contain_text("found error")
    expect(visible_steps(page)).to_have_count(1)
    page.keyboard.press("Backspace")  # ... undone: step 1 is to rate again
    expect_rated(page, 0)
    expect(current_step(page)).to_contain_text("Step 1")
    page.keyboard.press("3")
    page.keyboard.press("3")
    expect_rated(page, 2)
    page.keyboard.press("Backspace")
    expect_rated(page, 1)
    expect(visible_steps(page)).to_have_count(2)
    page.keyboard.press("2")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    annotation = annotation_for(solution)
    assert annotation.finish_reason == "solution"
    assert main_ratings(annotation) == [1, 0, 1]


def test_phase1_writes_a_human_step_when_nothing_is_positive(pages, screenshot):
    page, solution = annotator_on(
        pages, ["Let $y = x + 1$.", "Then $y = 5$.", "So the answer is $5$."], labeling_mode=LabelingMode.PHASE1
    )

    page.keyboard.press("3")
    page.keyboard.press("1")  # Negative: phase 1 goes on, but only after a written step
    expect(page.locator(".sl-footer")).to_contain_text("write your own step (c) or another alternative (a)")
    box = page.get_by_role("textbox", name="Your own step (none here is Positive)")
    expect(box).to_be_hidden()  # the listed keys stay keys: f flags the Negative just given
    page.keyboard.press("f")
    expect(current_step(page)).to_have_class(re.compile(r"\bsl-flagged\b"))
    page.keyboard.press("c")
    expect(box).to_be_focused()
    # keys type into the box now: the hint names no shortcut but Esc
    expect(page.locator(".sl-footer")).to_contain_text("type your own step in the box, then Enter to save it")
    expect(visible_steps(page)).to_have_count(2)
    page.keyboard.type("Then $y = 4$.")
    screenshot(page, "workspace-phase1-human-step")
    page.keyboard.press("Enter")
    expect(visible_steps(page)).to_have_count(3)
    page.keyboard.press("2")  # not Positive either
    page.keyboard.press("c")
    expect(page.get_by_role("textbox", name="Your own step (none here is Positive)")).to_be_focused()
    page.keyboard.type("So the answer is $4$.")
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Submit")).to_be_enabled()
    page.keyboard.press("Enter")
    expect_empty_queue(page)

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "solution"
    steps = label_steps(annotation)
    assert main_ratings(annotation) == [1, -1, 0]
    assert [s["completions"][0]["flagged"] for s in steps] == [False, True, False]
    assert [s["human_completion"]["text"] if s["human_completion"] else None for s in steps] == [
        None,
        "Then $y = 4$.",
        "So the answer is $4$.",
    ]


def test_give_up_with_a_reason(pages, screenshot):
    page, solution = annotator_on(pages, STEPS)

    page.keyboard.press("3")
    expect(visible_steps(page)).to_have_count(2)
    page.keyboard.press("g")
    dialog = page.get_by_role("dialog", name="Give up on this solution")
    expect(dialog).to_be_visible()
    reason = dialog.get_by_label("Reason (required)")
    expect(reason).to_be_focused()
    page.keyboard.press("Enter")  # empty: refused, the dialog stays
    expect(dialog).to_be_visible()
    page.keyboard.type("Step 2 uses a notation")
    page.keyboard.press("Escape")  # closed mid-sentence: reopening brings the text back
    expect(dialog).to_be_hidden()
    page.keyboard.press("g")
    expect(reason).to_have_value("Step 2 uses a notation")
    page.keyboard.press("End")
    page.keyboard.type(" I do not know.")
    screenshot(page, "workspace-give-up-dialog")
    page.keyboard.press("Enter")
    expect_empty_queue(page)

    annotation = annotation_for(solution)
    assert annotation.finish_reason == "give_up"
    assert annotation.finish_note == "Step 2 uses a notation I do not know."
    assert main_ratings(annotation) == [1]


def test_bad_problem_dialog_cancels_with_escape(pages):
    page, solution = annotator_on(pages, STEPS)

    page.keyboard.press("b")
    dialog = page.get_by_role("dialog", name="Report a bad problem")
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.keyboard.press("b")
    page.keyboard.type("The problem has no unique answer.")
    page.keyboard.press("Enter")
    expect_empty_queue(page)
    annotation = annotation_for(solution)
    assert (annotation.finish_reason, annotation.finish_note) == ("bad_problem", "The problem has no unique answer.")
    assert label_steps(annotation) == []


def test_shortcuts_overlay_lists_every_key(pages, screenshot):
    project = make_project()
    make_user("ann", project)
    make_solution(project, STEPS)
    page = pages.page()
    open_workspace(page, "ann")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    keys = dialog.locator("kbd").all_inner_texts()
    for key in ("1", "2", "3", "f", "Backspace", "Enter", "?", "a", "c", "g", "b"):
        assert key in keys, key
    assert "n" not in keys  # phase 1's key: this project is in phase 2
    screenshot(page, "workspace-shortcuts")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_a_and_c_before_a_negative_say_why_they_open_nothing(pages):
    """Phase 2 writes alternatives and the corrected step at a Negative step: before one, `a` and
    `c` did nothing without a word (every other dead key says why), and a fast labeler could not
    tell a dead key from a lost one."""
    page, _ = annotator_on(pages)
    notice = page.locator(".sl-notice")
    not_yet = "at a step you rate Negative (1): step 1 is not rated yet."
    page.keyboard.press("a")
    expect(notice).to_have_text(f"a writes an alternative step {not_yet}")
    page.keyboard.press("c")
    expect(notice).to_have_text(f"c writes the corrected step {not_yet}")
    expect(page.locator("textarea:visible")).to_have_count(0)
    expect(current_step(page)).to_be_focused()
    for key in ("3", "3", "3"):
        page.keyboard.press(key)
    page.keyboard.press("a")
    expect(notice).to_have_text("Nothing is left to rate, so a has no step to write at: press Enter to submit.")
    page.keyboard.press("Backspace")
    page.keyboard.press("1")  # now it opens the box
    page.keyboard.press("a")
    expect(page.locator("#sl-newalt-2")).to_be_focused()


def test_a_in_phase_1_before_a_rating_says_rate_first(pages):
    page, _ = annotator_on(pages, labeling_mode=LabelingMode.PHASE1)
    page.keyboard.press("c")
    expect(page.locator(".sl-notice")).to_have_text("Rate step 1 first; then c writes your own step there.")
